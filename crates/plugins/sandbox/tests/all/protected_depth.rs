//! Every protected name, at depth 0, 1 and 3, as a directory, as a file and
//! missing: the file tools cannot change or create it, commands cannot
//! change an existing one inside bubblewrap, and one a command creates is
//! gone when the command ends (both layers).

use std::path::Path;
use std::time::Duration;

use tack_core::capability::{CapabilityError, CommandRequest};
use tack_sandbox::{DEFAULT_PROTECTED, SandboxPolicy};
use tokio_util::sync::CancellationToken;

use crate::fixture::{
    Fixture, git_binary, in_bwrap, run_command as run, runs_commands, sandbox, snapshot,
};

const DEPTHS: [&str; 3] = ["", "a/", "a/b/c/"];

/// The protected names that apply at any depth (`**/name`).
fn names() -> Vec<&'static str> {
    let names: Vec<&str> = DEFAULT_PROTECTED
        .iter()
        .filter_map(|entry| entry.strip_prefix("**/"))
        .collect();
    assert!(names.contains(&".git") && names.contains(&".tack"));
    names
}

/// Every protected path of the matrix, relative to the workspace.
fn paths() -> Vec<String> {
    let mut all = Vec::new();
    for depth in DEPTHS {
        for name in names() {
            all.push(format!("{depth}{name}"));
        }
    }
    all
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    Dir,
    File,
    Missing,
}

/// A workspace with every protected path in `form` (parents always exist).
fn workspace(form: Form) -> Fixture {
    let fx = Fixture::new();
    let ws = fx.ws.path();
    std::fs::create_dir_all(ws.join("a/b/c")).unwrap();
    std::fs::create_dir_all(ws.join("planted")).unwrap();
    for path in paths() {
        let path = ws.join(path);
        match form {
            Form::Dir => {
                std::fs::create_dir(&path).unwrap();
                std::fs::write(path.join("inner"), "original\n").unwrap();
            }
            // A `.git` file redirects git elsewhere: the test's own target.
            Form::File if path.ends_with(".git") => {
                std::fs::write(&path, format!("gitdir: {}\n", ws.join("planted").display()))
                    .unwrap();
            }
            Form::File => std::fs::write(&path, "original\n").unwrap(),
            Form::Missing => {}
        }
    }
    fx
}

fn refused<T: std::fmt::Debug>(result: Result<T, CapabilityError>, what: &str) {
    match result {
        Err(CapabilityError::Refused { reason, .. }) => {
            assert!(reason.contains("protected"), "{what}: {reason}");
        }
        other => panic!("{what}: expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn the_file_tools_cannot_change_or_create_any_protected_name_at_any_depth() {
    for form in [Form::Dir, Form::File, Form::Missing] {
        let fx = workspace(form);
        let sb = sandbox(SandboxPolicy::workspace_write(fx.ws.path())).unwrap();
        let fs = sb.fs();
        let before = snapshot(fx.ws.path());
        for path in paths() {
            let p = Path::new(&path);
            let what = format!("{form:?} {path}");
            match form {
                Form::Dir => {
                    refused(fs.write(&p.join("inner"), b"evil").await, &what);
                    refused(fs.write(&p.join("new"), b"evil").await, &what);
                    refused(fs.create_dir_all(&p.join("hooks")).await, &what);
                    refused(fs.remove(p, true).await, &what);
                    assert_eq!(
                        fs.read_to_string(&p.join("inner")).await.unwrap(),
                        "original\n",
                        "{what}: stays readable"
                    );
                }
                Form::File => {
                    refused(fs.write(p, b"gitdir: /elsewhere\n").await, &what);
                    refused(fs.remove(p, false).await, &what);
                }
                Form::Missing => {
                    refused(fs.write(p, b"gitdir: /elsewhere\n").await, &what);
                    refused(fs.create_dir_all(p).await, &what);
                    refused(fs.write(&p.join("config"), b"evil").await, &what);
                }
            }
        }
        if form != Form::Missing {
            // A directory holding a protected entry cannot go recursively.
            refused(fs.remove(Path::new("a"), true).await, "remove a/");
        }
        assert_eq!(
            snapshot(fx.ws.path()),
            before,
            "{form:?}: the workspace changed"
        );
    }
}

#[tokio::test]
async fn commands_cannot_change_existing_protected_names_inside_bubblewrap() {
    for form in [Form::Dir, Form::File] {
        let fx = workspace(form);
        let sb = sandbox(SandboxPolicy::workspace_write(fx.ws.path())).unwrap();
        if !runs_commands(&sb, "commands_cannot_change_existing_protected_names") {
            return;
        }
        if !in_bwrap(&sb) {
            println!(
                "commands_cannot_change_existing_protected_names: floor: existing entries are \
                 not read-only to commands, their changes are put back (protected_floor.rs)"
            );
            return;
        }
        let before = snapshot(fx.ws.path());
        let mut script = String::new();
        for path in paths() {
            match form {
                Form::Dir => script.push_str(&format!(
                    "echo evil >> '{path}/inner'; touch '{path}/new'; mv '{path}' '{path}.moved'; \
                     rm -rf '{path}';\n"
                )),
                Form::File => script.push_str(&format!(
                    "echo evil >> '{path}'; mv '{path}' '{path}.moved'; rm -f '{path}';\n"
                )),
                Form::Missing => unreachable!(),
            }
        }
        if form == Form::File {
            // The directory a `.git` file points to is protected with it.
            script.push_str("mkdir -p planted/hooks; echo evil > planted/config; ");
        }
        script.push_str("true");
        let out = run(&sb, &script).await;
        assert_eq!(out.exit_code, Some(0), "{out:?}");
        assert_eq!(
            snapshot(fx.ws.path()),
            before,
            "{form:?}: a protected path changed"
        );
    }
}

#[tokio::test]
async fn a_protected_name_a_command_creates_is_gone_when_it_ends() {
    for as_dir in [true, false] {
        let fx = workspace(Form::Missing);
        let sb = sandbox(SandboxPolicy::workspace_write(fx.ws.path())).unwrap();
        if !runs_commands(&sb, "a_protected_name_a_command_creates_is_gone") {
            return;
        }
        let outside = fx.outside_snapshot();
        let before = snapshot(fx.ws.path());
        let mut script = String::new();
        for path in paths() {
            if as_dir {
                script.push_str(&format!(
                    "mkdir '{path}' && printf '[core]\\n\\tfsmonitor = touch {}/pwned\\n' > '{path}/config';\n",
                    fx.outside().display()
                ));
            } else {
                script.push_str(&format!("echo 'gitdir: ../planted' > '{path}';\n"));
            }
        }
        script.push_str("echo made");
        let out = run(&sb, &script).await;
        assert!(out.stdout.contains("made"), "{out:?}");
        for path in paths() {
            assert!(
                std::fs::symlink_metadata(fx.ws.path().join(&path)).is_err(),
                "{path} survived the command: {out:?}"
            );
            assert!(
                out.stderr
                    .contains(&format!("tack: removed {path}, which this command created")),
                "{path} not reported: {}",
                out.stderr
            );
        }
        assert_eq!(snapshot(fx.ws.path()), before, "the workspace changed");
        assert_eq!(fx.outside_snapshot(), outside, "the world outside changed");
    }
}

#[tokio::test]
async fn a_background_process_cannot_plant_a_repository_after_its_command_ends() {
    let fx = Fixture::new();
    let sb = sandbox(SandboxPolicy::workspace_write(fx.ws.path())).unwrap();
    if !runs_commands(&sb, "a_background_process_cannot_plant_a_repository") {
        return;
    }
    std::fs::create_dir(fx.ws.path().join("sub")).unwrap();
    // Loops that keep making `sub/.git` while the command is torn down,
    // with their output closed so that nothing waits for them to end.
    let out = run(
        &sb,
        "for i in 1 2 3 4; do (exec >/dev/null 2>&1 </dev/null; \
         while :; do mkdir -p sub/.git/hooks; done) & done; \
         sleep 0.2; echo started",
    )
    .await;
    assert!(out.stdout.contains("started"), "{out:?}");
    // Nothing of the command runs any more, so nothing can make it again.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        std::fs::symlink_metadata(fx.ws.path().join("sub/.git")).is_err(),
        "sub/.git survived: {out:?}"
    );
}

/// Plants repositories with an fsmonitor through a command, then runs the
/// user's `git status` in each folder outside any sandbox; whether the
/// planted fsmonitor ran.
async fn plant_and_run_git(fx: &Fixture, git: &Path, policy: SandboxPolicy) -> Option<bool> {
    let ws = fx.ws();
    let pwned = fx.outside().join("pwned");
    let _ = std::fs::remove_file(&pwned);
    let sb = sandbox(policy).unwrap();
    if !runs_commands(&sb, "git_does_not_run_a_planted_fsmonitor") {
        return None;
    }
    for dir in ["vendor/lib", "evil", "sub"] {
        let _ = std::fs::remove_dir_all(ws.join(dir));
        std::fs::create_dir_all(ws.join(dir)).unwrap();
    }
    let monitor = format!("touch {}; false", pwned.display());
    let out = run(
        &sb,
        &format!(
            "git init -q vendor/lib && git -C vendor/lib config core.fsmonitor '{monitor}'; \
             git init -q evil && git -C evil config core.fsmonitor '{monitor}'; \
             echo 'gitdir: ../evil/.git' > sub/.git; echo done"
        ),
    )
    .await;
    assert!(out.stdout.contains("done"), "{out:?}");
    for dir in ["vendor/lib", "evil", "sub"] {
        let _ = std::process::Command::new(git)
            .arg("status")
            .current_dir(ws.join(dir))
            .env("GIT_CEILING_DIRECTORIES", ws.parent().unwrap_or(&ws))
            .output()
            .unwrap();
    }
    Some(pwned.exists())
}

#[tokio::test]
async fn git_does_not_run_a_planted_fsmonitor_after_a_command() {
    let Some(git) = git_binary() else {
        println!("git_does_not_run_a_planted_fsmonitor_after_a_command: skipped, no git");
        return;
    };
    let fx = Fixture::new();
    let policy = SandboxPolicy::workspace_write(fx.ws.path());
    // The control: with `.git` unprotected the plant works.
    let Some(ran) = plant_and_run_git(&fx, &git, policy.clone().without_protected("**/.git")).await
    else {
        return;
    };
    assert!(
        ran,
        "the control plant did not run: the test proves nothing"
    );
    let ran = plant_and_run_git(&fx, &git, policy).await;
    assert_eq!(ran, Some(false), "the planted fsmonitor ran");
    for planted in ["vendor/lib/.git", "evil/.git", "sub/.git"] {
        assert!(
            std::fs::symlink_metadata(fx.ws().join(planted)).is_err(),
            "{planted} survived"
        );
    }
    assert!(fx.outside().join("secret.txt").is_file());
}

#[tokio::test]
async fn the_users_own_repository_is_never_swept() {
    let fx = Fixture::new();
    let ws = fx.ws.path();
    std::fs::create_dir_all(ws.join("lib/.git/objects")).unwrap();
    std::fs::write(ws.join("lib/.git/config"), "[core]\n").unwrap();
    let sb = sandbox(SandboxPolicy::workspace_write(ws)).unwrap();
    if !runs_commands(&sb, "the_users_own_repository_is_never_swept") {
        return;
    }
    // Writes inside it (refused in bubblewrap, allowed on the floor) and a
    // change of its mode leave it the same entry.
    let out = run(
        &sb,
        "touch lib/.git/objects/new; chmod 700 lib/.git; echo x >> lib/.git/config; echo done",
    )
    .await;
    assert!(out.stdout.contains("done"), "{out:?}");
    assert!(!out.stderr.contains("tack: removed"), "{out:?}");
    assert!(ws.join("lib/.git/config").is_file());
}

/// Renaming a directory that holds a nested repository moves the
/// repository; it is not taken for one the command created.
#[tokio::test]
async fn a_nested_repository_moves_with_its_directory() {
    let fx = Fixture::new();
    let ws = fx.ws.path();
    std::fs::create_dir_all(ws.join("vendor/lib/.git/objects")).unwrap();
    std::fs::write(ws.join("vendor/lib/.git/objects/history"), "commits\n").unwrap();
    let sb = sandbox(SandboxPolicy::workspace_write(ws)).unwrap();
    if !runs_commands(&sb, "a_nested_repository_moves_with_its_directory") {
        return;
    }
    if std::fs::metadata(ws).and_then(|m| m.created()).is_err() {
        println!("a_nested_repository_moves_with_its_directory: skipped, no birth times here");
        return;
    }
    let out = run(&sb, "mv vendor/lib vendor/lib2 && echo done").await;
    assert!(out.stdout.contains("done"), "{out:?}");
    assert!(!out.stderr.contains("tack: removed"), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(ws.join("vendor/lib2/.git/objects/history")).unwrap(),
        "commits\n"
    );
}

#[tokio::test]
async fn a_workspace_that_is_the_home_directory_keeps_the_start_up_files() {
    let fx = Fixture::new();
    let home = fx.ws();
    std::fs::write(home.join(".bashrc"), "# mine\n").unwrap();
    std::fs::create_dir_all(home.join(".config/tack")).unwrap();
    std::fs::create_dir_all(home.join("project")).unwrap();
    let sb = sandbox(SandboxPolicy::workspace_write(&home).with_home_dir(&home)).unwrap();
    let fs = sb.fs();
    for path in [
        ".bashrc",
        ".profile",
        ".config/tack/settings.json",
        ".local/state/tack/trust.json",
        ".ssh/authorized_keys",
    ] {
        refused(fs.write(Path::new(path), b"evil").await, path);
    }
    fs.write(Path::new("project/main.rs"), b"fn main() {}")
        .await
        .unwrap();
    if !runs_commands(&sb, "a_workspace_that_is_the_home_directory") {
        return;
    }
    let before = snapshot(&home);
    let out = run(
        &sb,
        "echo 'rm -rf ~' >> .bashrc; echo '{\"mode\":\"allow-all\"}' > .config/tack/settings.json; \
         echo evil > .profile; mkdir -p .local/state/tack && echo forged > .local/state/tack/trust.json; \
         echo done",
    )
    .await;
    assert!(out.stdout.contains("done"), "{out:?}");
    // Inside bubblewrap the existing files are read-only; on the floor the
    // command's changes to them are put back when it ends.
    let mut after = snapshot(&home);
    // `mkdir -p` made the parents; only the protected entry went.
    after.remove(&home.join(".local"));
    after.remove(&home.join(".local/state"));
    let mut expected = before;
    expected.remove(&home.join(".bashrc"));
    after.remove(&home.join(".bashrc"));
    assert_eq!(after, expected, "{out:?}");
    assert_eq!(
        std::fs::read_to_string(home.join(".bashrc")).unwrap(),
        "# mine\n"
    );
    for created in [".profile", ".local/state/tack"] {
        assert!(
            out.stderr.contains(&format!("tack: removed {created}")),
            "{created}: {}",
            out.stderr
        );
    }
}

/// The walk reuses the listing of a directory left unchanged for a while:
/// a command that creates a repository in such a directory and sets the
/// directory's modification time back still has it removed (the change
/// time, which no command can set, moved).
#[tokio::test]
async fn a_repository_hidden_behind_a_reset_modification_time_is_still_removed() {
    let fx = Fixture::new();
    let deep = fx.ws().join("a/b/c");
    std::fs::create_dir_all(&deep).unwrap();
    let sandbox = fx.workspace_write();
    if !runs_commands(
        &sandbox,
        "a_repository_hidden_behind_a_reset_modification_time_is_still_removed",
    ) {
        return;
    }
    // Let every directory settle, and have a walk keep their listings.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let shell = sandbox.shell();
    let quiet = shell
        .run(CommandRequest::new("true"), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(quiet.exit_code, Some(0));
    let out = shell
        .run(
            CommandRequest::new(
                "old=$(stat -c %y a/b/c); mkdir -p a/b/c/.git/hooks && \
                 printf '#!/bin/sh\\necho pwned\\n' > a/b/c/.git/hooks/post-checkout && \
                 touch -d \"$old\" a/b/c && \
                 [ \"$(stat -c %y a/b/c)\" = \"$old\" ] && echo made",
            ),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert!(out.stdout.contains("made"), "{out:?}");
    assert!(
        !deep.join(".git").exists(),
        "the repository survived the command: {out:?}"
    );
}
