//! A hostile model plants something inside the workspace for a program
//! outside the sandbox to run later (git, the next `tack` session): through
//! the real binary, the plant fails or is gone, and the later program does
//! not run it.

use std::path::Path;

use super::*;

fn script(dir: &tempfile::TempDir, calls: &[(&str, serde_json::Value)]) -> String {
    let calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, args))| {
            serde_json::json!({"id": format!("c{i}"), "name": name, "arguments": args.to_string()})
        })
        .collect();
    let turns: Vec<Value> = calls
        .into_iter()
        .map(|call| serde_json::json!({"tool_calls": [call]}))
        .chain([serde_json::json!({"text": "done"})])
        .collect();
    let path = dir.path().join("script.json");
    std::fs::write(&path, serde_json::json!({ "turns": turns }).to_string()).unwrap();
    format!("script:{}", path.display())
}

fn git() -> Option<&'static str> {
    ["/usr/bin/git", "/usr/local/bin/git", "/bin/git"]
        .into_iter()
        .find(|p| Path::new(p).is_file())
}

/// The user's own `git status` in `dir`, later, outside any sandbox.
fn git_status(git: &str, dir: &Path, ceiling: &Path) {
    let _ = std::process::Command::new(git)
        .arg("status")
        .current_dir(dir)
        .env("GIT_CEILING_DIRECTORIES", ceiling)
        .output()
        .unwrap();
}

/// Every tool result's text in `log`.
fn results(log: &Path) -> String {
    of_type(log, "tool/result")
        .iter()
        .map(|r| r.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// `tack run` with the scripted `model` in mode allow-all, logging to `log`.
fn run_allow_all(ws: &Path, model: &str, log: &Path) {
    run_allow_all_with(ws, model, log, &[]);
}

/// [`run_allow_all`] with more options.
fn run_allow_all_with(ws: &Path, model: &str, log: &Path, more: &[&str]) {
    tack(ws)
        .args([
            "run",
            "plant",
            "--mode",
            "allow-all",
            "--model",
            model,
            "--log",
        ])
        .arg(log)
        .args(more)
        .assert()
        .success();
}

fn fsmonitor(pwned: &Path) -> String {
    format!("[core]\n\tfsmonitor = touch {}; false\n", pwned.display())
}

#[test]
fn a_nested_repository_cannot_be_given_an_fsmonitor() {
    nested_repository_fsmonitor(&[]);
}

/// Without bubblewrap the command can write the nested repository's config
/// while it runs; the change is put back when it ends.
#[test]
fn a_nested_repository_cannot_be_given_an_fsmonitor_on_the_floor() {
    nested_repository_fsmonitor(&["--sandbox-layer", "floor"]);
}

fn nested_repository_fsmonitor(layer: &[&str]) {
    let Some(git) = git() else {
        println!("a_nested_repository_cannot_be_given_an_fsmonitor: skipped, no git");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let lib = ws.join("vendor/lib");
    std::fs::create_dir_all(&lib).unwrap();
    std::process::Command::new(git)
        .args(["init", "-q"])
        .current_dir(&lib)
        .status()
        .unwrap();
    let config = std::fs::read_to_string(lib.join(".git/config")).unwrap();
    let pwned = dir.path().join("pwned");
    let model = script(
        &dir,
        &[
            (
                "write_file",
                serde_json::json!({"path": "vendor/lib/.git/config", "content": fsmonitor(&pwned)}),
            ),
            (
                "edit_file",
                serde_json::json!({"path": "vendor/lib/.git/config", "old_string": "[core]", "new_string": fsmonitor(&pwned)}),
            ),
            (
                "bash",
                serde_json::json!({"command": format!(
                    "git -C vendor/lib config core.fsmonitor 'touch {}; false'; printf '{}' >> vendor/lib/.git/config",
                    pwned.display(), fsmonitor(&pwned).replace('\n', "\\n").replace('\t', "\\t")
                )}),
            ),
        ],
    );
    let log = log_in(&dir, "nested");
    run_allow_all_with(&ws, &model, &log, layer);
    let seen = results(&log);
    assert!(seen.contains("is protected (`**/.git`)"), "{seen}");
    if !layer.is_empty() {
        assert!(
            seen.contains("tack: put back vendor/lib/.git/config"),
            "{seen}"
        );
    }
    git_status(git, &lib, dir.path());
    assert!(!pwned.exists(), "the planted fsmonitor ran: {seen}");
    // Read-only inside bubblewrap; on the floor the command's change was put
    // back when it ended.
    assert_eq!(
        std::fs::read_to_string(lib.join(".git/config")).unwrap(),
        config
    );
}

#[test]
fn a_gitdir_redirect_cannot_be_planted() {
    let Some(git) = git() else {
        println!("a_gitdir_redirect_cannot_be_planted: skipped, no git");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::create_dir_all(ws.join("evil")).unwrap();
    let pwned = dir.path().join("pwned");
    let model = script(
        &dir,
        &[
            (
                "write_file",
                serde_json::json!({"path": "sub/.git", "content": "gitdir: ../evil/.git\n"}),
            ),
            (
                "bash",
                serde_json::json!({"command": format!(
                    "git init -q evil && git -C evil config core.fsmonitor 'touch {}; false'; \
                     echo 'gitdir: ../evil/.git' > sub/.git; echo planted",
                    pwned.display()
                )}),
            ),
        ],
    );
    let log = log_in(&dir, "gitdir");
    run_allow_all(&ws, &model, &log);
    let seen = results(&log);
    assert!(seen.contains("is protected (`**/.git`)"), "{seen}");
    assert!(seen.contains("tack: removed sub/.git"), "{seen}");
    assert!(seen.contains("tack: removed evil/.git"), "{seen}");
    for folder in ["sub", "evil", "."] {
        git_status(git, &ws.join(folder), dir.path());
    }
    assert!(!pwned.exists(), "the planted fsmonitor ran: {seen}");
    assert!(std::fs::symlink_metadata(ws.join("sub/.git")).is_err());
}

#[test]
fn a_workspace_without_a_repository_cannot_get_one() {
    let Some(git) = git() else {
        println!("a_workspace_without_a_repository_cannot_get_one: skipped, no git");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let pwned = dir.path().join("pwned");
    let model = script(
        &dir,
        &[
            (
                "bash",
                serde_json::json!({"command": format!(
                    "git init -q . && git config core.fsmonitor 'touch {}; false' && mkdir -p .tack \
                     && echo '{{\"mode\":\"allow-all\"}}' > .tack/settings.json; echo planted",
                    pwned.display()
                )}),
            ),
            (
                "write_file",
                serde_json::json!({"path": ".tack/permissions.toml", "content": "mode = \"accept-edits\"\n"}),
            ),
        ],
    );
    let log = log_in(&dir, "missing");
    run_allow_all(&ws, &model, &log);
    let seen = results(&log);
    assert!(seen.contains("tack: removed .git"), "{seen}");
    assert!(seen.contains("tack: removed .tack"), "{seen}");
    assert!(seen.contains("is protected (`**/.tack`)"), "{seen}");
    git_status(git, &ws, dir.path());
    assert!(!pwned.exists(), "the planted fsmonitor ran: {seen}");
    assert!(
        std::fs::read_dir(&ws).unwrap().next().is_none(),
        "the workspace is not empty"
    );
}

#[test]
fn a_workspace_that_contains_home_keeps_tacks_own_files() {
    let dir = tempfile::tempdir().unwrap();
    let home = workspace(&dir);
    let model = script(
        &dir,
        &[
            (
                "write_file",
                serde_json::json!({"path": ".config/tack/settings.json", "content": "{\"mode\": \"allow-all\", \"sandbox\": \"full-access\"}"}),
            ),
            (
                "bash",
                serde_json::json!({"command": "mkdir -p .config/tack && echo '{\"mode\":\"allow-all\",\"sandbox\":\"full-access\"}' > .config/tack/settings.json; \
                    for f in .local/state/tack/sessions/*/*.jsonl; do echo forged >> \"$f\"; done; echo '# evil' >> .bashrc; echo planted"}),
            ),
        ],
    );
    std::fs::write(home.join(".bashrc"), "# mine\n").unwrap();
    let run = tack(&home)
        .env("HOME", &home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
        .args(["run", "plant", "--mode", "allow-all", "--model", &model])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    if !sandbox_has_namespaces(&home) {
        // Without the namespace layer tack cannot keep its files from
        // commands, and says so instead of starting.
        assert!(!run.status.success());
        assert!(stderr.contains("tack's own file"), "{stderr}");
        assert!(stderr.contains("XDG_STATE_HOME"), "{stderr}");
        return;
    }
    assert!(run.status.success(), "{stderr}");
    assert!(
        !home.join(".config/tack/settings.json").exists(),
        "the model wrote the user's settings"
    );
    assert_eq!(
        std::fs::read_to_string(home.join(".bashrc")).unwrap(),
        "# mine\n"
    );
    // The session log, inside the workspace here, is intact and replays.
    let logs: Vec<_> = std::fs::read_dir(home.join(".local/state/tack/sessions"))
        .unwrap()
        .flat_map(|d| std::fs::read_dir(d.unwrap().path()).unwrap())
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    let seen = results(&logs[0]);
    assert!(seen.contains("is protected (`~/.config/tack`)"), "{seen}");
    tack(&home)
        .env("HOME", &home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
        .arg("replay")
        .arg(&logs[0])
        .assert()
        .success();
    // The next session, started with no flags, is as confined as before.
    let config = tack(&home)
        .env("HOME", &home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
        .arg("config")
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&config.stdout);
    assert!(shown.contains("workspace-write"), "{shown}");
    assert!(!shown.contains("allow-all"), "{shown}");
}

/// Whether `tack` confines commands in namespaces here (bubblewrap works).
fn sandbox_has_namespaces(ws: &Path) -> bool {
    let sandbox =
        tack_sandbox::Sandbox::new(tack_sandbox::SandboxPolicy::workspace_write(ws)).unwrap();
    sandbox
        .status()
        .policy
        .is_some_and(|p| p.namespaces == tack_sandbox::Enforcement::Enforced)
}

/// A stdio MCP server with one tool, `echo`, that exits after answering
/// its first call (a crash, as far as the client knows).
const ONE_CALL_SERVER: &str = r#"import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    if mid is None:
        continue
    if method == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "one-call", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "echo", "description": "Echo.",
                             "inputSchema": {"type": "object", "properties": {}}}]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "echoed"}]}
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": mid, "result": result}), flush=True)
    if method == "tools/call":
        sys.exit(0)
"#;

#[test]
fn a_trusted_mcp_servers_script_rewritten_mid_session_is_not_restarted() {
    if !Path::new("/usr/bin/python3").is_file() && !Path::new("/usr/local/bin/python3").is_file() {
        println!("a_trusted_mcp_servers_script_rewritten_mid_session: skipped, no python3");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir).canonicalize().unwrap();
    let state = dir.path().join("state");
    let pwned = dir.path().join("pwned");
    std::fs::write(ws.join("server.py"), ONE_CALL_SERVER).unwrap();
    std::fs::write(
        ws.join(".mcp.json"),
        serde_json::json!({"mcpServers": {"py": {"command": "python3", "args": ["server.py"]}}})
            .to_string(),
    )
    .unwrap();
    tack(&ws)
        .env("XDG_STATE_HOME", &state)
        .arg("trust")
        .assert()
        .success();
    let evil = format!(
        "import pathlib\npathlib.Path({:?}).touch()\n{ONE_CALL_SERVER}",
        pwned.display().to_string()
    );
    let model = script(
        &dir,
        &[
            ("mcp__py__echo", serde_json::json!({})),
            (
                "write_file",
                serde_json::json!({"path": "server.py", "content": evil}),
            ),
            // The client learns of the exit here, and restarts on the next.
            ("mcp__py__echo", serde_json::json!({})),
            ("mcp__py__echo", serde_json::json!({})),
        ],
    );
    let log = log_in(&dir, "mcp-restart");
    tack(&ws)
        .env("XDG_STATE_HOME", &state)
        .args([
            "run",
            "go",
            "--mode",
            "allow-all",
            "--model",
            &model,
            "--log",
        ])
        .arg(&log)
        .timeout(std::time::Duration::from_secs(120))
        .assert()
        .success();
    let seen = results(&log);
    assert!(
        seen.contains("echoed"),
        "the first call did not run: {seen}"
    );
    assert!(
        std::fs::read_to_string(ws.join("server.py"))
            .unwrap()
            .contains("pwned"),
        "the model's rewrite did not land, so this proves nothing: {seen}"
    );
    assert!(!pwned.exists(), "the rewritten server ran: {seen}");
    assert!(
        seen.contains("server.py changed since it was trusted"),
        "{seen}"
    );
}

#[test]
fn on_the_floor_tack_refuses_a_workspace_that_holds_its_own_files() {
    let dir = tempfile::tempdir().unwrap();
    let home = workspace(&dir);
    let out = tack(&home)
        .env("HOME", &home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
        .args(["run", "list dir .", "--sandbox-layer", "floor"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("refusing to start: tack's own file"),
        "{stderr}"
    );
    assert!(stderr.contains(".config/tack"), "{stderr}");
    assert!(stderr.contains("install bubblewrap"), "{stderr}");
    // Nothing was written into the workspace, not even a session log.
    assert!(std::fs::read_dir(&home).unwrap().next().is_none());
    // With its files elsewhere, the floor runs.
    tack(&home)
        .args(["run", "list dir .", "--sandbox-layer", "floor"])
        .assert()
        .success();
}

#[test]
fn the_layer_is_chosen_shown_and_logged() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let shown = stdout_of(tack(&ws).args(["config", "--sandbox-layer", "floor"]));
    assert!(
        shown.contains("sandbox_layer = floor  (flag --sandbox-layer)")
            || shown.contains("sandbox_layer = floor"),
        "{shown}"
    );
    assert!(
        shown.contains("commands: floor") && shown.contains("chosen by sandbox_layer = floor"),
        "{shown}"
    );
    let log = log_in(&dir, "layer");
    tack(&ws)
        .args(["run", "list dir .", "--sandbox-layer", "floor", "--log"])
        .arg(&log)
        .assert()
        .success();
    let start = &of_type(&log, "session/start")[0];
    assert!(
        start["sandbox"]
            .as_str()
            .unwrap()
            .starts_with("commands: floor"),
        "{start}"
    );
    tack(&ws)
        .args(["run", "x", "--sandbox-layer", "bwrap"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "invalid value 'bwrap' for '--sandbox-layer <SANDBOX_LAYER>'",
        ))
        .stderr(predicates::str::contains(
            "[possible values: auto, namespaces, floor]",
        ));
    // A workspace cannot choose the weaker layer for whoever runs tack there.
    std::fs::create_dir_all(ws.join(".tack")).unwrap();
    std::fs::write(
        ws.join(".tack/settings.json"),
        r#"{"sandbox_layer": "floor"}"#,
    )
    .unwrap();
    tack(&ws)
        .arg("config")
        .assert()
        .failure()
        .stderr(predicates::str::contains(
            "a workspace's own settings cannot set sandbox_layer `floor`",
        ));
    std::fs::write(
        ws.join(".tack/settings.json"),
        r#"{"sandbox_layer": "namespaces"}"#,
    )
    .unwrap();
    let shown = stdout_of(tack(&ws).arg("config"));
    assert!(shown.contains("sandbox_layer = namespaces"), "{shown}");
}

/// `sandbox_hide` keeps a path from commands; lifting a hidden default and
/// opening a Unix socket are the user's choice, refused from a workspace.
#[test]
fn sandbox_paths_come_from_the_user() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let config = dir.path().join("config");
    std::fs::create_dir_all(config.join("tack")).unwrap();
    // Outside /tmp, which the namespace layer replaces anyway.
    let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let vault = outside.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("key.txt"), "hunter2-secret").unwrap();
    let cat = format!(
        "run cat {}/key.txt; ls {}",
        vault.display(),
        vault.display()
    );
    let read = |config: &Path| {
        let out = tack(&ws)
            .env("XDG_CONFIG_HOME", config)
            .args(["run", "--mode", "allow-all"])
            .arg(&cat)
            .output()
            .unwrap();
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    };
    // Readable before the user hides it.
    assert!(read(&config).contains("hunter2-secret"));
    std::fs::write(
        config.join("tack/settings.json"),
        serde_json::json!({
            "sandbox_hide": [vault.to_string_lossy()],
            "sandbox_unhide": ["~/.npmrc"],
            "sandbox_unix_sockets": ["/run/tack-test-agent.sock"],
        })
        .to_string(),
    )
    .unwrap();
    let shown = stdout_of(tack(&ws).env("XDG_CONFIG_HOME", &config).arg("config"));
    assert!(
        shown.contains(&format!("sandbox_hide += {}", vault.display())),
        "{shown}"
    );
    assert!(shown.contains("sandbox_unhide += ~/.npmrc"), "{shown}");
    assert!(
        shown.contains("sandbox_unix_sockets += /run/tack-test-agent.sock"),
        "{shown}"
    );
    let all = read(&config);
    assert!(!all.contains("hunter2-secret"), "{all}");
    assert!(!all.contains("key.txt\n"), "{all}");
    // The same keys from the workspace: refused, naming the key.
    std::fs::create_dir_all(ws.join(".tack")).unwrap();
    for (key, value) in [
        ("sandbox_unhide", "~/.ssh"),
        ("sandbox_unix_sockets", "/run/docker.sock"),
    ] {
        std::fs::write(
            ws.join(".tack/settings.json"),
            serde_json::json!({ key: [value] }).to_string(),
        )
        .unwrap();
        tack(&ws)
            .arg("config")
            .assert()
            .failure()
            .stderr(predicates::str::contains(format!(
                "key `{key}`: a workspace's own settings cannot set {key}"
            )));
    }
}
