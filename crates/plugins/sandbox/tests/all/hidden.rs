//! Hidden paths: the user's credentials, unreadable and unlistable to
//! commands and refused by the file tools, on both layers; what the floor
//! leaves out is asserted as documented.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tack_core::capability::{CapabilityError, CommandOutput, CommandRequest};
use tack_sandbox::{Enforcement, Sandbox, SandboxPolicy};
use tokio_util::sync::CancellationToken;

use crate::fixture::{
    Fixture, SECRET, in_bwrap, runs_commands, sandbox, scratch_outside_tmp, snapshot,
};

async fn run(sb: &Sandbox, command: String) -> CommandOutput {
    sb.shell()
        .run(
            CommandRequest::new(command).with_timeout(Duration::from_secs(30)),
            CancellationToken::new(),
        )
        .await
        .unwrap()
}

fn status_of(out: &CommandOutput, name: &str) -> String {
    out.stdout
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name}=")))
        .unwrap_or_else(|| panic!("no {name}= line in {out:?}"))
        .to_owned()
}

/// A home directory with an ssh key, a `.netrc` and an ordinary file.
fn home() -> (tempfile::TempDir, PathBuf) {
    let home = scratch_outside_tmp();
    let path = home.path().canonicalize().unwrap();
    std::fs::create_dir(path.join(".ssh")).unwrap();
    std::fs::write(path.join(".ssh/id_rsa"), SECRET).unwrap();
    std::fs::write(path.join(".netrc"), SECRET).unwrap();
    std::fs::write(path.join("notes.txt"), "notes\n").unwrap();
    (home, path)
}

fn refused_as_hidden<T: std::fmt::Debug>(result: Result<T, CapabilityError>, entry: &str) {
    match result {
        Err(CapabilityError::Refused { reason, .. }) => {
            assert!(reason.contains(&format!("hidden (`{entry}`)")), "{reason}");
            assert!(
                reason.contains(&format!("without_hidden(\"{entry}\")")),
                "{reason}"
            );
        }
        other => panic!("expected {entry} to be refused as hidden, got {other:?}"),
    }
}

/// `cat ~/.ssh/id_rsa`, `ls ~/.ssh`, `cat ~/.netrc`: nothing of them
/// comes out, on either layer; an ordinary file next to them reads.
/// Lifting `~/.ssh` makes the key readable again.
#[tokio::test]
async fn hidden_credentials_are_out_of_reach_of_commands() {
    let (_keep, home) = home();
    let fx = Fixture::new();
    let policy = SandboxPolicy::workspace_write(fx.ws.path()).with_home_dir(&home);
    let sb = sandbox(policy.clone()).unwrap();
    if !runs_commands(&sb, "hidden_credentials_are_out_of_reach_of_commands") {
        return;
    }
    let before = snapshot(&home);
    let h = home.display();
    let command = format!(
        "cat '{h}/.ssh/id_rsa'; echo cat=$?; ls -a '{h}/.ssh'; echo ls=$?; \
         cat '{h}/.netrc'; echo netrc=$?; cat '{h}/notes.txt'; \
         ls '{h}' >/dev/null 2>&1; echo home=$?"
    );
    let out = run(&sb, command.clone()).await;
    assert!(!out.stdout.contains("top secret"), "{out:?}");
    assert!(!out.stdout.contains("id_rsa"), "{out:?}");
    assert_ne!(status_of(&out, "cat"), "0", "{out:?}");
    assert_ne!(status_of(&out, "ls"), "0", "{out:?}");
    assert_ne!(status_of(&out, "netrc"), "0", "{out:?}");
    assert!(out.stdout.contains("notes\n"), "{out:?}");
    let hidden = sb.status().policy.unwrap().hidden;
    if in_bwrap(&sb) {
        assert_eq!(hidden, Enforcement::Enforced);
        assert_eq!(status_of(&out, "home"), "0", "{out:?}");
    } else {
        assert_eq!(hidden, Enforcement::Partial);
        // Documented: a directory on the way to a hidden path cannot be
        // listed on the floor.
        assert_ne!(status_of(&out, "home"), "0", "{out:?}");
    }
    assert_eq!(snapshot(&home), before);

    let lifted = sandbox(policy.without_hidden("~/.ssh")).unwrap();
    let out = run(&lifted, command).await;
    assert!(out.stdout.contains(SECRET), "{out:?}");
    assert!(out.stdout.contains("id_rsa"), "{out:?}");
    assert!(
        !out.stdout.contains(&format!("{SECRET}{SECRET}")),
        "{out:?}"
    );
}

/// The file tools refuse to read or list a hidden path, in a readable root
/// and under full access, with the entry and how to lift it.
#[tokio::test]
async fn the_file_tools_refuse_hidden_paths() {
    let (_keep, home) = home();
    let fx = Fixture::new();
    let policy = SandboxPolicy::workspace_write(fx.ws.path())
        .with_readable_root(&home)
        .with_home_dir(&home);
    let sb = sandbox(policy.clone()).unwrap();
    let fs = sb.fs();
    refused_as_hidden(fs.read(&home.join(".ssh/id_rsa"), None).await, "~/.ssh");
    refused_as_hidden(fs.list(&home.join(".ssh")).await, "~/.ssh");
    refused_as_hidden(fs.metadata(&home.join(".netrc")).await, "~/.netrc");
    assert_eq!(
        fs.read_to_string(&home.join("notes.txt")).await.unwrap(),
        "notes\n"
    );
    let full = sandbox(SandboxPolicy::full_access(fx.ws.path()).with_home_dir(&home)).unwrap();
    refused_as_hidden(
        full.fs().read(&home.join(".ssh/id_rsa"), None).await,
        "~/.ssh",
    );
    let lifted = sandbox(policy.without_hidden("~/.ssh")).unwrap();
    assert_eq!(
        lifted
            .fs()
            .read_to_string(&home.join(".ssh/id_rsa"))
            .await
            .unwrap(),
        SECRET
    );
}

/// A directory and a file hidden inside the workspace: the file tools
/// refuse them (a recursive removal around them too); inside bubblewrap
/// commands can neither read nor write them; on the floor they stay
/// readable to commands, as documented.
#[tokio::test]
async fn hidden_paths_inside_the_workspace() {
    let fx = Fixture::new();
    let ws = fx.ws();
    std::fs::create_dir_all(ws.join("conf/private")).unwrap();
    std::fs::write(ws.join("conf/private/key.txt"), SECRET).unwrap();
    std::fs::write(ws.join("token.txt"), SECRET).unwrap();
    std::fs::write(ws.join("main.rs"), "fn main() {}\n").unwrap();
    let private = ws.join("conf/private");
    let token = ws.join("token.txt");
    let sb = sandbox(
        SandboxPolicy::workspace_write(&ws)
            .with_hidden(&private.to_string_lossy())
            .with_hidden(&token.to_string_lossy()),
    )
    .unwrap();
    let fs = sb.fs();
    let private_entry = private.to_string_lossy().into_owned();
    let token_entry = token.to_string_lossy().into_owned();
    refused_as_hidden(
        fs.read(Path::new("conf/private/key.txt"), None).await,
        &private_entry,
    );
    refused_as_hidden(fs.list(Path::new("conf/private")).await, &private_entry);
    refused_as_hidden(fs.read(Path::new("token.txt"), None).await, &token_entry);
    refused_as_hidden(fs.write(Path::new("token.txt"), b"x").await, &token_entry);
    let around = fs.remove(Path::new("conf"), true).await.unwrap_err();
    assert!(
        around.to_string().contains("would remove the hidden path"),
        "{around}"
    );
    assert!(fs.read(Path::new("main.rs"), None).await.is_ok());
    if !runs_commands(&sb, "hidden_paths_inside_the_workspace") {
        return;
    }
    let before = snapshot(&ws);
    let out = run(
        &sb,
        "cat conf/private/key.txt; ls conf/private; cat token.txt; \
         echo x > token.txt; echo write=$?; touch conf/private/new; echo create=$?; \
         cat main.rs"
            .to_owned(),
    )
    .await;
    assert!(out.stdout.contains("fn main"), "{out:?}");
    if in_bwrap(&sb) {
        assert!(!out.stdout.contains("top secret"), "{out:?}");
        assert!(!out.stdout.contains("key.txt"), "{out:?}");
        assert_ne!(status_of(&out, "write"), "0", "{out:?}");
        assert_ne!(status_of(&out, "create"), "0", "{out:?}");
        assert_eq!(snapshot(&ws), before, "{out:?}");
    } else {
        // Documented: Landlock cannot take read away inside a root.
        assert_eq!(sb.status().policy.unwrap().hidden, Enforcement::Partial);
        assert!(out.stdout.contains("top secret"), "{out:?}");
        println!("hidden_paths_inside_the_workspace: floor: readable to commands (documented)");
    }
}

/// A workspace inside a hidden directory (the user works on
/// `~/.codex/project`): that entry is not hidden, the rest still is.
#[tokio::test]
async fn a_workspace_inside_a_hidden_path_lifts_that_entry() {
    let (_keep, home) = home();
    let ws = home.join(".codex/project");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("config.toml"), "model = 1\n").unwrap();
    let sb = sandbox(SandboxPolicy::workspace_write(&ws).with_home_dir(&home)).unwrap();
    assert_eq!(
        sb.fs()
            .read_to_string(Path::new("config.toml"))
            .await
            .unwrap(),
        "model = 1\n"
    );
    if !runs_commands(&sb, "a_workspace_inside_a_hidden_path_lifts_that_entry") {
        return;
    }
    let out = run(
        &sb,
        format!(
            "cat config.toml && ls >/dev/null && echo listed; cat '{}/.ssh/id_rsa'",
            home.display()
        ),
    )
    .await;
    assert!(out.stdout.contains("model = 1\nlisted\n"), "{out:?}");
    assert!(!out.stdout.contains("top secret"), "{out:?}");
}
