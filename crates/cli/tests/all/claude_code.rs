//! Claude Code projects as published (`tests/fixtures/claude-code/`),
//! copied unchanged into a workspace, trusted with `tack trust`, and run
//! through the real `tack` binary with a scripted model.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::*;

struct Project {
    dir: tempfile::TempDir,
    ws: PathBuf,
    log: PathBuf,
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/claude-code")
        .join(name)
}

fn copy_dir(from: &Path, to: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
            let mode = entry.metadata().unwrap().permissions().mode();
            std::fs::set_permissions(&target, std::fs::Permissions::from_mode(mode)).unwrap();
        }
    }
}

fn python() -> bool {
    std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

impl Project {
    /// A workspace holding the fixture `name`'s files, unchanged.
    fn new(name: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let ws = workspace(&dir);
        if !name.is_empty() {
            copy_dir(&fixture(name), &ws);
        }
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        let log = log_in(&dir, "session");
        Self { dir, ws, log }
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// `tack` with this project's own home and state directories.
    fn tack(&self) -> assert_cmd::Command {
        let mut cmd = tack(&self.ws);
        cmd.env("HOME", self.home())
            .env("XDG_STATE_HOME", self.dir.path().join("state"))
            .timeout(std::time::Duration::from_secs(60));
        cmd
    }

    fn trust(&self) {
        let out = stdout_of(self.tack().arg("trust"));
        assert!(out.contains(".claude/settings.json"), "{out}");
    }

    fn model(&self, turns: &Value) -> String {
        let path = self.dir.path().join("model.json");
        std::fs::write(&path, json!({ "turns": turns }).to_string()).unwrap();
        format!("script:{}", path.display())
    }

    fn run(&self, prompt: &str, turns: &Value, extra: &[&str]) -> assert_cmd::assert::Assert {
        let mut cmd = self.tack();
        cmd.args(["run", prompt, "--model", &self.model(turns), "--log"])
            .arg(&self.log)
            .args(extra);
        cmd.assert()
    }

    fn results(&self) -> Vec<Value> {
        of_type(&self.log, "tool/result")
    }

    fn result(&self, call_id: &str) -> Value {
        self.results()
            .into_iter()
            .find(|r| r["outcome"]["call_id"] == call_id || r["call_id"] == call_id)
            .unwrap_or_else(|| panic!("no result for {call_id}: {:?}", self.results()))
    }

    fn hook_log(&self) -> String {
        std::fs::read_to_string(self.ws.join(".claude/hook.log")).unwrap_or_default()
    }
}

fn call(id: &str, name: &str, args: Value) -> Value {
    json!({"tool_calls": [{"id": id, "name": name, "arguments": args.to_string()}]})
}

fn text(reply: &str) -> Value {
    json!({ "text": reply })
}

fn stderr(assert: &assert_cmd::assert::Assert) -> String {
    String::from_utf8(assert.get_output().stderr.clone()).unwrap()
}

fn stdout(assert: &assert_cmd::assert::Assert) -> String {
    String::from_utf8(assert.get_output().stdout.clone()).unwrap()
}

/// The status and message of a result record.
fn outcome(result: &Value) -> (String, String) {
    let status = result["status"].as_str().unwrap_or_default().to_owned();
    let code = result["error"]["code"].as_str().unwrap_or("ok").to_owned();
    let message = result["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    (if status == "ok" { status } else { code }, message)
}

#[test]
fn anthropics_bash_validator_blocks_grep_and_find_and_lets_the_rest_run() {
    if !python() {
        return;
    }
    let project = Project::new("bash-validator");
    project.trust();
    let run = project
        .run(
            "search",
            &json!([
                call("c1", "bash", json!({"command": "grep -r TODO ."})),
                call("c2", "bash", json!({"command": "find . -name '*.rs'"})),
                call("c3", "bash", json!({"command": "echo fine"})),
                text("done")
            ]),
            &["--mode", "allow-all"],
        )
        .success();
    let (code, message) = outcome(&project.result("c1"));
    assert_eq!(code, "DENIED");
    assert!(
        message.contains("Use 'rg' (ripgrep) instead of 'grep'"),
        "{message}"
    );
    let (code, message) = outcome(&project.result("c2"));
    assert_eq!(code, "DENIED");
    assert!(message.contains("instead of 'find -name'"), "{message}");
    assert_eq!(outcome(&project.result("c3")).0, "ok");
    // A trusted workspace's own hook scripts get no warning at every start.
    assert!(!stderr(&run).contains("WARNING"), "{}", stderr(&run));
}

#[test]
fn a_published_project_settings_file_is_used_as_it_is() {
    if !python() {
        return;
    }
    let project = Project::new("project");
    std::fs::write(project.ws.join(".env"), "SECRET=1\n").unwrap();
    project.trust();
    let run = project
        .run(
            "set up the build",
            &json!([
                call("c1", "bash", json!({"command": "mkdir -p build"})),
                call("c2", "bash", json!({"command": "sudo rm -rf build"})),
                call("c3", "bash", json!({"command": "ls && rm -rf build"})),
                call("c4", "bash", json!({"command": "git push origin main"})),
                call("c5", "read_file", json!({"path": ".env"})),
                call(
                    "c6",
                    "write_file",
                    json!({"path": "notes.md", "content": "x\n"})
                ),
                call(
                    "c7",
                    "write_file",
                    json!({"path": "config/.env", "content": "x\n"})
                ),
                call("c8", "read_file", json!({"path": "missing.txt"})),
                call("c9", "bash", json!({"command": "echo unlisted"})),
                text("done")
            ]),
            &[],
        )
        .success();
    let err = stderr(&run);
    // What tack has no equivalent for is named, once, and skipped.
    for named in [
        "`model`",
        "`env`",
        "`includeCoAuthoredBy`",
        "`statusLine`",
        "`hooks.PreCompact`: tack has no such moment",
        "`hooks.SubagentStop`: tack has no such moment",
        "`hooks.Stop[0].hooks[0]`: tack cannot run a `prompt` hook",
        "statusMessage",
        "no tool `WebFetch`",
    ] {
        assert!(err.contains(named), "{named}: {err}");
    }
    assert!(!err.contains("`$schema`"), "{err}");
    assert_eq!(err.matches("`statusLine`").count(), 1, "{err}");
    assert!(!err.contains("WARNING"), "{err}");

    // `defaultMode: acceptEdits`, the allow rule `Bash(mkdir:*)`.
    assert_eq!(outcome(&project.result("c1")).0, "ok");
    assert!(project.ws.join("build").is_dir());
    // `Bash(rm:*)` denies like `deny rm *`: through sudo and `&&`.
    for id in ["c2", "c3"] {
        let (code, message) = outcome(&project.result(id));
        assert_eq!(code, "DENIED", "{id}");
        assert!(
            message.contains("permissions.deny[0]: `Bash(rm:*)`"),
            "{id}: {message}"
        );
    }
    assert!(project.ws.join("build").is_dir(), "rm never ran");
    // The `if`-narrowed hook ran for `git push` only.
    let (code, message) = outcome(&project.result("c4"));
    assert_eq!(code, "DENIED");
    assert!(message.contains("open a pull request"), "{message}");
    let log = project.hook_log();
    assert_eq!(log.matches("no-push").count(), 1, "{log}");
    // `Read(./.env)`.
    let (code, message) = outcome(&project.result("c5"));
    assert_eq!(code, "DENIED");
    assert!(message.contains("Read(./.env)"), "{message}");
    // `Edit, Write` and `Edit|Write` matchers; PostToolUse ran after the write.
    assert_eq!(outcome(&project.result("c6")).0, "ok");
    let notes = project.ws.canonicalize().unwrap().join("notes.md");
    assert!(
        log.contains(&format!("protect Write {}", notes.display())),
        "{log}"
    );
    assert!(
        log.contains(&format!("format PostToolUse Write {}", notes.display())),
        "{log}"
    );
    let (code, message) = outcome(&project.result("c7"));
    assert_eq!(code, "DENIED");
    assert!(message.contains("is protected (.env)"), "{message}");
    assert!(!project.ws.join("config/.env").exists());
    // PostToolUseFailure for the failed read.
    assert_eq!(outcome(&project.result("c8")).0, "EXECUTION_FAILED");
    assert!(log.contains("failure PostToolUseFailure Read"), "{log}");
    // A command no rule allows asks, and no one is there to answer.
    assert_eq!(outcome(&project.result("c9")).0, "DENIED");
    // The prompt hook and SessionStart's plain stdout.
    assert!(
        log.contains("prompt UserPromptSubmit  set up the build"),
        "{log}"
    );
    let contexts = of_type(&project.log, "context/hook");
    assert!(
        contexts
            .iter()
            .any(|c| c.to_string().contains("Project conventions: tabs")),
        "{contexts:?}"
    );
    // Events tack does not have never ran.
    assert!(
        !log.contains("subagent") && !log.contains("compact"),
        "{log}"
    );
}

#[test]
fn a_command_rewriting_hook_rewrites_and_the_log_keeps_both() {
    if !python() {
        return;
    }
    let project = Project::new("rewrite");
    std::fs::write(project.ws.join("two.txt"), "first\nsecond\n").unwrap();
    project.trust();
    project
        .run(
            "show it",
            &json!([
                call("c1", "bash", json!({"command": "cat two.txt"})),
                text("ok")
            ]),
            &["--mode", "allow-all"],
        )
        .success();
    let result = project.result("c1");
    assert_eq!(outcome(&result).0, "ok", "{result}");
    assert!(result.to_string().contains("first"), "{result}");
    assert!(!result.to_string().contains("second"), "{result}");
    let rewrite = &result["rewrite"];
    assert_eq!(rewrite["original"]["command"], "cat two.txt", "{result}");
    assert_eq!(
        rewrite["rewritten"]["command"], "head -n 1 two.txt",
        "{result}"
    );
}

#[test]
fn the_hooks_reference_examples_answer_as_in_claude_code() {
    if !python() {
        return;
    }
    let project = Project::new("reference");
    std::fs::write(project.ws.join("README.md"), "# readme\n").unwrap();
    project.trust();
    let run = project
        .run(
            "tidy up",
            &json!([
                call("c1", "read_file", json!({"path": "README.md"})),
                call(
                    "c2",
                    "write_file",
                    json!({"path": "notes.txt", "content": "x \n"})
                ),
                call("c3", "bash", json!({"command": "echo hi"})),
                call("c4", "grep", json!({"pattern": "readme", "path": "."})),
                text("done"),
                text("I read the README and wrote notes.txt.")
            ]),
            &["--mode", "allow-all"],
        )
        .success();
    let out = stdout(&run);
    assert!(
        out.contains("I read the README and wrote notes.txt."),
        "{out}"
    );
    // UserPromptSubmit's additionalContext.
    let hook_contexts = of_type(&project.log, "context/hook").to_vec();
    assert!(
        hook_contexts.iter().any(|c| c
            .to_string()
            .contains("Current sprint: hooks compatibility.")),
        "{hook_contexts:?}"
    );
    // PreToolUse's additionalContext, and PostToolUse's block and context.
    let deferred = of_type(&project.log, "context/deferred")
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        deferred.contains("The docs may be stale; check the code too."),
        "{deferred}"
    );
    assert!(
        deferred.contains("lint: trailing whitespace in"),
        "{deferred}"
    );
    assert!(
        deferred.contains("Run the formatter before the next write."),
        "{deferred}"
    );
    assert_eq!(outcome(&project.result("c1")).0, "ok");
    assert_eq!(outcome(&project.result("c2")).0, "ok");
    // systemMessage reaches the user.
    let shown = format!("{out}{}", stderr(&run));
    assert!(shown.contains("bash ran: echo hi"), "{shown}");
    // The Stop hook read a Claude Code transcript: the tool uses in order,
    // Claude Code's names, absolute paths without `/.`, the last text.
    let stops: Vec<Value> = serde_json::from_str(
        &std::fs::read_to_string(project.ws.join(".claude/stop.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(stops.len(), 2, "{stops:?}");
    assert_eq!(stops[0]["active"], false);
    assert_eq!(stops[1]["active"], true);
    assert_eq!(stops[0]["tools"], json!(["Read", "Write", "Bash", "Grep"]));
    assert_eq!(stops[0]["last_text"], "done");
    let ws = project.ws.canonicalize().unwrap();
    assert_eq!(
        stops[0]["inputs"][0]["file_path"],
        ws.join("README.md").display().to_string()
    );
    assert_eq!(stops[0]["inputs"][3]["path"], ws.display().to_string());
    let transcript = PathBuf::from(stops[0]["transcript"].as_str().unwrap());
    assert!(!transcript.starts_with(&ws), "{}", transcript.display());
    assert_ne!(transcript, project.log);
}

#[test]
fn blocked_prompts_asks_without_a_terminal_stops_and_defers() {
    if !python() {
        return;
    }
    let project = Project::new("reference");
    project.trust();
    // A prompt with a secret never reaches the model.
    let blocked = project
        .run("my password is hunter2", &json!([text("never")]), &[])
        .code(1);
    let shown = format!("{}{}", stdout(&blocked), stderr(&blocked));
    assert!(shown.contains("Security policy violation"), "{shown}");
    assert!(!stdout(&blocked).contains("never"));

    // `ask` without a terminal: denied, and the model reads why.
    let _ = std::fs::remove_file(&project.log);
    project
        .run(
            "clean",
            &json!([
                call("c1", "bash", json!({"command": "rm -f x"})),
                text("ok"),
                text("summary")
            ]),
            &["--mode", "allow-all"],
        )
        .success();
    let (code, message) = outcome(&project.result("c1"));
    assert_eq!(code, "DENIED");
    assert!(message.contains("rm needs a human: rm -f x"), "{message}");

    // `continue: false`: the call is not run and the turn ends there.
    let _ = std::fs::remove_file(&project.log);
    let stopped = project
        .run(
            "ship it",
            &json!([
                call(
                    "c1",
                    "bash",
                    json!({"command": "touch deployed; ./deploy.sh"})
                ),
                text("never said")
            ]),
            &["--mode", "allow-all"],
        )
        .success();
    let (code, message) = outcome(&project.result("c1"));
    assert_eq!(code, "DENIED");
    assert!(
        message.contains("Deploys need a human at the keyboard."),
        "{message}"
    );
    assert!(!project.ws.join("deployed").exists());
    assert!(
        !stdout(&stopped).contains("never said"),
        "{}",
        stdout(&stopped)
    );
    let shown = format!("{}{}", stdout(&stopped), stderr(&stopped));
    assert!(
        shown.contains("deploy stopped by the PreToolUse hook"),
        "{shown}"
    );
    let end = of_type(&project.log, "turn/end");
    assert_eq!(end[0]["reason"], "concluded", "{end:?}");

    // `defer`: not run, the turn ends so it can be decided outside.
    let _ = std::fs::remove_file(&project.log);
    let deferred = project
        .run(
            "later",
            &json!([
                call("c1", "bash", json!({"command": "touch done-later"})),
                text("never said")
            ]),
            &["--mode", "allow-all"],
        )
        .success();
    let (code, message) = outcome(&project.result("c1"));
    assert_eq!(code, "DENIED");
    assert!(
        message.contains("deferred") && message.contains("decide this one later"),
        "{message}"
    );
    assert!(!project.ws.join("done-later").exists());
    assert!(!stdout(&deferred).contains("never said"));
}

#[test]
fn the_users_claude_settings_need_no_trust_and_the_workspaces_do() {
    let project = Project::new("");
    let claude = project.home().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    let marker = project.dir.path().join("user-hook-ran");
    std::fs::write(
        claude.join("settings.json"),
        json!({
            "permissions": {"deny": ["Bash(curl:*)"]},
            "hooks": {"UserPromptSubmit": [{"hooks": [
                {"type": "command", "command": format!("cat >/dev/null; touch {}", marker.display())}
            ]}]}
        })
        .to_string(),
    )
    .unwrap();
    project
        .run(
            "fetch",
            &json!([
                call("c1", "bash", json!({"command": "curl -s example.com"})),
                text("ok")
            ]),
            &["--mode", "allow-all"],
        )
        .success();
    assert!(marker.exists(), "the user's own hook ran without trust");
    let (code, message) = outcome(&project.result("c1"));
    assert_eq!(code, "DENIED");
    assert!(
        message.contains(".claude/settings.json key permissions.deny[0]"),
        "{message}"
    );

    // A workspace file with hooks is refused until trusted; the local
    // file is read too, after the shared one.
    let dot = project.ws.join(".claude");
    std::fs::create_dir_all(&dot).unwrap();
    let local_marker = project.dir.path().join("local-hook-ran");
    std::fs::write(
        dot.join("settings.local.json"),
        json!({"hooks": {"UserPromptSubmit": [{"hooks": [
            {"type": "command", "command": format!("cat >/dev/null; touch {}", local_marker.display())}
        ]}]}})
        .to_string(),
    )
    .unwrap();
    let _ = std::fs::remove_file(&project.log);
    let refused = project.run("x", &json!([text("never")]), &[]).code(2);
    let err = stderr(&refused);
    assert!(
        err.contains("settings.local.json") && err.contains("tack trust"),
        "{err}"
    );
    assert!(!local_marker.exists());
    let out = stdout_of(project.tack().arg("trust"));
    assert!(out.contains("settings.local.json"), "{out}");
    let _ = std::fs::remove_file(&project.log);
    project.run("x", &json!([text("ok")]), &[]).success();
    assert!(local_marker.exists());

    // The workspace's `disableAllHooks` turns off its own hooks only.
    std::fs::write(dot.join("settings.json"), r#"{"disableAllHooks": true}"#).unwrap();
    std::fs::remove_file(&marker).unwrap();
    std::fs::remove_file(&local_marker).unwrap();
    let _ = std::fs::remove_file(&project.log);
    let run = project.run("x", &json!([text("ok")]), &[]).success();
    assert!(
        stderr(&run).contains("`disableAllHooks` is true"),
        "{}",
        stderr(&run)
    );
    assert!(marker.exists(), "the user's hook still ran");
    assert!(!local_marker.exists(), "the workspace's hook did not");
}

#[test]
fn a_workspace_cannot_bypass_permissions_or_allow_everything() {
    let project = Project::new("");
    let dot = project.ws.join(".claude");
    std::fs::create_dir_all(&dot).unwrap();
    std::fs::write(
        dot.join("settings.json"),
        json!({"permissions": {
            "defaultMode": "bypassPermissions",
            "allow": ["Bash", "Bash(sh:*)", "Bash(touch ok)"]
        }})
        .to_string(),
    )
    .unwrap();
    let run = project
        .run(
            "x",
            &json!([
                call("c1", "bash", json!({"command": "touch nope"})),
                call("c2", "bash", json!({"command": "touch ok"})),
                text("ok")
            ]),
            &[],
        )
        .success();
    let err = stderr(&run);
    assert!(err.contains("cannot set `bypassPermissions`"), "{err}");
    assert!(
        err.contains("permissions.allow[0]") && err.contains("permissions.allow[1]"),
        "{err}"
    );
    assert_eq!(
        outcome(&project.result("c1")).0,
        "DENIED",
        "asked, no one to answer"
    );
    assert_eq!(
        outcome(&project.result("c2")).0,
        "ok",
        "the narrow allow applies"
    );
    assert!(project.ws.join("ok").exists() && !project.ws.join("nope").exists());
}

#[test]
fn an_exec_form_hook_script_is_trusted_and_checked_like_a_shell_ones() {
    let project = Project::new("");
    let hooks = project.ws.join(".claude/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let script = hooks.join("deny.sh");
    std::fs::write(&script, "cat >/dev/null\necho \"no: $1\" >&2\nexit 2\n").unwrap();
    std::fs::write(
        project.ws.join(".claude/settings.json"),
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{
            "type": "command",
            "command": "sh",
            "args": ["${CLAUDE_PROJECT_DIR}/.claude/hooks/deny.sh", "a b; c"]
        }]}]}})
        .to_string(),
    )
    .unwrap();
    let out = stdout_of(project.tack().arg("trust"));
    assert!(
        out.contains(&script.canonicalize().unwrap().display().to_string()),
        "{out}"
    );
    project
        .run(
            "x",
            &json!([call("c1", "bash", json!({"command": "true"})), text("ok")]),
            &["--mode", "allow-all"],
        )
        .success();
    let (code, message) = outcome(&project.result("c1"));
    assert_eq!(code, "DENIED");
    assert_eq!(message, "no: a b; c");
    // The model rewrites the script: refused until trusted again.
    std::fs::write(&script, "cat >/dev/null\nexit 0\n").unwrap();
    let _ = std::fs::remove_file(&project.log);
    let refused = project.run("x", &json!([text("never")]), &[]).code(2);
    assert!(
        stderr(&refused).contains("changed since it was trusted"),
        "{}",
        stderr(&refused)
    );
}

#[test]
fn a_permission_request_hook_answers_approvals_in_your_place() {
    if !python() {
        return;
    }
    let project = Project::new("");
    let dot = project.ws.join(".claude");
    std::fs::create_dir_all(dot.join("hooks")).unwrap();
    std::fs::write(
        dot.join("hooks/approve.py"),
        r#"import json, sys
data = json.load(sys.stdin)
command = data["tool_input"].get("command", "")
def decide(**decision):
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}))
if command.startswith("touch "):
    decide(behavior="allow")
elif command.startswith("rm "):
    decide(behavior="deny", message="rm is never approved here")
"#,
    )
    .unwrap();
    std::fs::write(
        dot.join("settings.json"),
        json!({"hooks": {"PermissionRequest": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "python3 \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/approve.py"}
        ]}]}})
        .to_string(),
    )
    .unwrap();
    project.trust();
    project
        .run(
            "x",
            &json!([
                call("c1", "bash", json!({"command": "touch made"})),
                call("c2", "bash", json!({"command": "rm -f made"})),
                call("c3", "bash", json!({"command": "echo asked"})),
                text("ok")
            ]),
            &[],
        )
        .success();
    assert_eq!(outcome(&project.result("c1")).0, "ok");
    assert!(project.ws.join("made").exists());
    let (code, message) = outcome(&project.result("c2"));
    assert_eq!(code, "DENIED");
    assert!(message.contains("rm is never approved here"), "{message}");
    let (code, message) = outcome(&project.result("c3"));
    assert_eq!(code, "DENIED");
    assert!(message.contains("stdin is not a terminal"), "{message}");
}

#[test]
fn claude_code_settings_turns_off_the_users_claude_files() {
    let project = Project::new("");
    let claude = project.home().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    let marker = project.dir.path().join("user-hook-ran");
    std::fs::write(
        claude.join("settings.json"),
        json!({
            "permissions": {"deny": ["Bash(touch:*)"]},
            "hooks": {"UserPromptSubmit": [{"hooks": [
                {"type": "command", "command": format!("cat >/dev/null; touch {}", marker.display())}
            ]}]}
        })
        .to_string(),
    )
    .unwrap();
    // The workspace's own Claude Code file (trusted below).
    let dot = project.ws.join(".claude");
    std::fs::create_dir_all(&dot).unwrap();
    let project_marker = project.dir.path().join("project-hook-ran");
    std::fs::write(
        dot.join("settings.json"),
        json!({"hooks": {"UserPromptSubmit": [{"hooks": [
            {"type": "command", "command": format!("cat >/dev/null; touch {}", project_marker.display())}
        ]}]}})
        .to_string(),
    )
    .unwrap();
    project.trust();
    let turns = json!([
        call("c1", "bash", json!({"command": "touch made"})),
        text("ok")
    ]);

    // Default: both files, as Claude Code.
    project.run("x", &turns, &["--mode", "allow-all"]).success();
    assert!(marker.exists() && project_marker.exists());
    assert_eq!(outcome(&project.result("c1")).0, "DENIED");
    let config = stdout_of(project.tack().arg("config"));
    assert!(
        config.contains("claude_code_settings = all") && config.contains("(default)"),
        "{config}"
    );

    // `project`: the user's ~/.claude/settings.json is not read (its hook
    // and its deny rule), the workspace's is.
    let choice = project.dir.path().join("choice.json");
    std::fs::write(&choice, r#"{"claude_code_settings": "project"}"#).unwrap();
    std::fs::remove_file(&marker).unwrap();
    std::fs::remove_file(&project_marker).unwrap();
    let _ = std::fs::remove_file(&project.log);
    let settings = choice.to_str().unwrap();
    project
        .run(
            "x",
            &turns,
            &["--mode", "allow-all", "--settings", settings],
        )
        .success();
    assert!(!marker.exists(), "the user's Claude Code hook did not run");
    assert!(project_marker.exists(), "the workspace's did");
    assert_eq!(outcome(&project.result("c1")).0, "ok");
    let config = stdout_of(project.tack().args(["config", "--settings", settings]));
    assert!(
        config.contains("claude_code_settings = project")
            && config.contains(&format!("(--settings {settings})")),
        "{config}"
    );
    assert!(
        !config.contains(&claude.join("settings.json").display().to_string()),
        "{config}"
    );

    // `none`, from the user's own tack settings: neither file.
    let xdg = project.dir.path().join("xdg");
    std::fs::create_dir_all(xdg.join("tack")).unwrap();
    std::fs::write(
        xdg.join("tack/settings.json"),
        r#"{"claude_code_settings": "none"}"#,
    )
    .unwrap();
    std::fs::remove_file(&project_marker).unwrap();
    let _ = std::fs::remove_file(&project.log);
    project
        .tack()
        .env("XDG_CONFIG_HOME", &xdg)
        .args([
            "run",
            "x",
            "--mode",
            "allow-all",
            "--model",
            &project.model(&turns),
            "--log",
        ])
        .arg(&project.log)
        .assert()
        .success();
    assert!(!marker.exists() && !project_marker.exists());
    let config = stdout_of(project.tack().env("XDG_CONFIG_HOME", &xdg).arg("config"));
    assert!(config.contains("claude_code_settings = none"), "{config}");

    // A workspace's own .tack/settings.json cannot choose: ignored, said so.
    std::fs::create_dir_all(project.ws.join(".tack")).unwrap();
    std::fs::write(
        project.ws.join(".tack/settings.json"),
        r#"{"claude_code_settings": "none"}"#,
    )
    .unwrap();
    let _ = std::fs::remove_file(&project.log);
    let run = project.run("x", &turns, &["--mode", "allow-all"]).success();
    assert!(
        stderr(&run).contains("cannot choose which of your own agents' files are read"),
        "{}",
        stderr(&run)
    );
    assert!(marker.exists(), "the user's hook still ran");
}

#[test]
fn the_users_disable_all_hooks_turns_off_every_hook() {
    let project = Project::new("");
    let dot = project.ws.join(".claude");
    std::fs::create_dir_all(&dot).unwrap();
    let project_marker = project.dir.path().join("project-hook-ran");
    std::fs::write(
        dot.join("settings.json"),
        json!({"hooks": {"UserPromptSubmit": [{"hooks": [
            {"type": "command", "command": format!("cat >/dev/null; touch {}", project_marker.display())}
        ]}]}})
        .to_string(),
    )
    .unwrap();
    project.trust();
    let claude = project.home().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    std::fs::write(claude.join("settings.json"), r#"{"disableAllHooks": true}"#).unwrap();
    let run = project.run("x", &json!([text("ok")]), &[]).success();
    assert!(
        stderr(&run).contains("`disableAllHooks` is true: all hooks are off"),
        "{}",
        stderr(&run)
    );
    assert!(!project_marker.exists());
    // The same key in tack's own --settings file.
    std::fs::remove_file(claude.join("settings.json")).unwrap();
    let off = project.dir.path().join("off.json");
    std::fs::write(&off, r#"{"disableAllHooks": true}"#).unwrap();
    let _ = std::fs::remove_file(&project.log);
    project
        .run(
            "x",
            &json!([text("ok")]),
            &["--settings", off.to_str().unwrap()],
        )
        .success();
    assert!(!project_marker.exists());
    let _ = std::fs::remove_file(&project.log);
    project.run("x", &json!([text("ok")]), &[]).success();
    assert!(project_marker.exists(), "on again without it");
}

#[test]
fn a_deferred_call_runs_once_when_the_session_is_resumed() {
    let project = Project::new("");
    let hooks = project.ws.join(".claude/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let approved = project.dir.path().join("approved");
    let seen = project.dir.path().join("seen");
    // Claude Code's protocol: the call on stdin, the decision on stdout.
    std::fs::write(
        hooks.join("gate.sh"),
        format!(
            r#"#!/bin/bash
input=$(cat)
echo "$input" | grep -o '"tool_use_id":"[^"]*"' >> {seen}
if [ -e {approved} ]; then
  echo '{{"hookSpecificOutput": {{"hookEventName": "PreToolUse", "permissionDecision": "allow"}}}}'
else
  echo '{{"hookSpecificOutput": {{"hookEventName": "PreToolUse", "permissionDecision": "defer", "permissionDecisionReason": "a human signs off deploys"}}}}'
fi
"#,
            seen = seen.display(),
            approved = approved.display()
        ),
    )
    .unwrap();
    std::fs::write(
        project.ws.join(".claude/settings.json"),
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "bash \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/gate.sh"}
        ]}]}})
        .to_string(),
    )
    .unwrap();
    project.trust();
    let counter = project.ws.join("deploys");
    let deploys = || std::fs::read_to_string(&counter).unwrap_or_default();
    let seen_count = || {
        std::fs::read_to_string(&seen)
            .unwrap_or_default()
            .lines()
            .count()
    };
    let resume = |prompt: &str, turns: &Value| {
        project
            .tack()
            .args([
                "run",
                prompt,
                "--mode",
                "allow-all",
                "--model",
                &project.model(turns),
                "--resume",
            ])
            .arg(&project.log)
            .assert()
    };

    // Deferred: not run, the turn ends.
    project
        .run(
            "deploy",
            &json!([
                call("c1", "bash", json!({"command": "echo deployed >> deploys"})),
                text("never said")
            ]),
            &["--mode", "allow-all"],
        )
        .success();
    assert_eq!(deploys(), "");
    assert_eq!(seen_count(), 1);

    // Resumed before the sign-off: the hook sees the call again and defers
    // it again; the prompt is not sent.
    let again = resume("go on", &json!([text("never said either")])).success();
    assert!(
        stderr(&again).contains("a human signs off deploys"),
        "{}",
        stderr(&again)
    );
    assert_eq!(deploys(), "");
    assert_eq!(seen_count(), 2);
    assert!(
        !of_type(&project.log, "user")
            .iter()
            .any(|u| u["text"] == "go on"),
        "the prompt was not sent"
    );

    // Signed off: resuming runs the call (through the hook, which allows
    // it now), then the prompt.
    std::fs::write(&approved, "").unwrap();
    let ran = resume("what happened?", &json!([text("it deployed")])).success();
    assert_eq!(deploys(), "deployed\n");
    assert_eq!(seen_count(), 3);
    assert!(stdout(&ran).contains("it deployed"), "{}", stdout(&ran));
    let results: Vec<Value> = project
        .results()
        .into_iter()
        .filter(|r| r["outcome"]["call_id"] == "c1" || r["call_id"] == "c1")
        .collect();
    assert_eq!(results.len(), 3, "{results:?}");
    assert_eq!(outcome(results.last().unwrap()).0, "ok", "{results:?}");

    // Resumed once more: nothing left to run.
    resume("and now?", &json!([text("nothing to do")])).success();
    assert_eq!(deploys(), "deployed\n", "the call ran exactly once");
    assert_eq!(seen_count(), 3);
}

#[test]
fn permission_request_updated_input_and_permissions_apply_and_stay_checked() {
    let project = Project::new("");
    let hooks = project.ws.join(".claude/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let asked = project.dir.path().join("asked");
    // Claude Code's protocol: the request on stdin, the decision on stdout.
    std::fs::write(
        hooks.join("approve.sh"),
        format!(
            r#"#!/bin/bash
input=$(cat)
command=$(echo "$input" | sed -n 's/.*"command":"\([^"]*\)".*/\1/p')
echo "$command" >> {asked}
case "$command" in
  "touch bad")
    echo '{{"hookSpecificOutput": {{"hookEventName": "PermissionRequest", "decision": {{"behavior": "allow",
      "updatedInput": {{"command": "touch good"}},
      "updatedPermissions": [
        {{"type": "addRules", "behavior": "allow", "destination": "localSettings", "rules": [{{"toolName": "Bash", "ruleContent": "touch again"}}]}},
        {{"type": "addRules", "behavior": "allow", "destination": "session", "rules": [{{"toolName": "Bash"}}]}},
        {{"type": "setMode", "mode": "bypassPermissions", "destination": "session"}}
      ]}}}}}}'
    ;;
  "echo fine")
    echo '{{"hookSpecificOutput": {{"hookEventName": "PermissionRequest", "decision": {{"behavior": "allow", "updatedInput": {{"command": "rm -f keep"}}}}}}}}'
    ;;
  "echo shape")
    echo '{{"hookSpecificOutput": {{"hookEventName": "PermissionRequest", "decision": {{"behavior": "allow", "updatedInput": {{"cmd": "x"}}}}}}}}'
    ;;
esac
"#,
            asked = asked.display()
        ),
    )
    .unwrap();
    std::fs::write(
        project.ws.join(".claude/settings.json"),
        json!({
            "permissions": {"deny": ["Bash(rm:*)"]},
            "hooks": {"PermissionRequest": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": "bash \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/approve.sh"}
            ]}]}
        })
        .to_string(),
    )
    .unwrap();
    std::fs::write(project.ws.join("keep"), "").unwrap();
    project.trust();
    let run = project
        .run(
            "x",
            &json!([
                call("c1", "bash", json!({"command": "touch bad"})),
                call("c2", "bash", json!({"command": "touch again"})),
                call("c3", "bash", json!({"command": "echo fine"})),
                call("c4", "bash", json!({"command": "echo shape"})),
                call("c5", "bash", json!({"command": "touch other"})),
                text("ok")
            ]),
            &[],
        )
        .success();
    let err = format!("{}{}", stdout(&run), stderr(&run));

    // updatedInput: the call ran with the hook's arguments, recorded.
    assert!(project.ws.join("good").exists() && !project.ws.join("bad").exists());
    let c1 = project.result("c1");
    assert_eq!(outcome(&c1).0, "ok", "{c1}");
    assert!(
        c1.to_string().contains("touch good") && c1.to_string().contains("touch bad"),
        "{c1}"
    );
    // updatedPermissions: the narrow allow holds for the session (c2 was
    // not asked), the allow of every command and setMode were not applied.
    assert_eq!(outcome(&project.result("c2")).0, "ok");
    assert!(project.ws.join("again").exists());
    assert!(
        err.contains("added `allow bash(command: \"touch again\")` for this session"),
        "{err}"
    );
    assert!(err.contains("acts like mode `allow-all`; skipped"), "{err}");
    assert!(err.contains("`setMode` is not applied"), "{err}");
    assert!(err.contains("destination `localSettings`"), "{err}");
    // A rewrite still meets the deny rules.
    let (code, message) = outcome(&project.result("c3"));
    assert_eq!(code, "DENIED", "{message}");
    assert!(message.contains("permissions.deny[0]"), "{message}");
    assert!(project.ws.join("keep").exists());
    // An invalid rewrite never runs.
    let c4 = project.result("c4");
    assert_eq!(outcome(&c4).0, "INTERNAL", "{c4}");
    assert!(c4.to_string().contains("INVALID_REWRITE"), "{c4}");
    // No answer: asked as usual (no terminal: denied).
    assert_eq!(outcome(&project.result("c5")).0, "DENIED");
    let asked = std::fs::read_to_string(&asked).unwrap();
    assert_eq!(
        asked.lines().collect::<Vec<_>>(),
        ["touch bad", "echo fine", "echo shape", "touch other"]
    );
}

#[test]
fn async_hooks_reach_the_model_at_its_next_batch() {
    let project = Project::new("");
    let hooks = project.ws.join(".claude/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    // Markers the hooks leave as they finish, where the tools can read.
    let pids = project.ws.join("done");
    std::fs::create_dir_all(&pids).unwrap();
    // Two background hooks after `make`: one answers with context and a
    // message, one (asyncRewake) fails with exit 2.
    std::fs::write(
        hooks.join("report.sh"),
        format!(
            r#"#!/bin/bash
cat > /dev/null
echo '{{"systemMessage": "build report ready", "hookSpecificOutput": {{"hookEventName": "PostToolUse", "additionalContext": "the build took 3 warnings"}}}}'
touch {pids}/report
"#,
            pids = pids.display()
        ),
    )
    .unwrap();
    std::fs::write(
        hooks.join("lint.sh"),
        format!(
            r#"#!/bin/bash
cat > /dev/null
echo "lint: unused variable in main.c" >&2
touch {pids}/lint
exit 2
"#,
            pids = pids.display()
        ),
    )
    .unwrap();
    std::fs::write(
        project.ws.join(".claude/settings.json"),
        json!({"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "if": "Bash(make *)", "command": "bash \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/report.sh", "async": true},
            {"type": "command", "if": "Bash(make *)", "command": "bash \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/lint.sh", "asyncRewake": true}
        ]}]}})
        .to_string(),
    )
    .unwrap();
    project.trust();
    // The next call waits until both hooks are at their end (two more
    // batches follow, for the moment between their last line and their
    // exit).
    let wait = "while [ ! -e done/report ] || [ ! -e done/lint ]; do sleep 0.05; done; sleep 0.2";
    let run = project
        .run(
            "build",
            &json!([
                call("c1", "bash", json!({"command": "make all || true"})),
                call("c2", "bash", json!({"command": wait})),
                call("c3", "bash", json!({"command": "true"})),
                call("c4", "bash", json!({"command": "true"})),
                text("done")
            ]),
            &["--mode", "allow-all"],
        )
        .success();
    let err = stderr(&run);
    assert!(
        err.contains(".asyncRewake`: runs in the background")
            && err.contains("does not wake an idle session"),
        "{err}"
    );
    assert!(!err.contains("not a key of a command hook"), "{err}");
    let contexts: Vec<Value> = of_type(&project.log, "context/deferred");
    let text = |call: &str| {
        contexts
            .iter()
            .filter(|c| c["call_id"] == call)
            .map(|c| c.to_string())
            .collect::<String>()
    };
    assert!(
        text("c1").is_empty(),
        "nothing of theirs rides on the call that started them"
    );
    let later: String = ["c2", "c3", "c4"].iter().map(|c| text(c)).collect();
    assert!(later.contains("the build took 3 warnings"), "{contexts:?}");
    assert!(later.contains("build report ready"), "{contexts:?}");
    assert!(
        later.contains("lint: unused variable in main.c"),
        "{contexts:?}"
    );
    assert_eq!(
        later.matches("the build took 3 warnings").count(),
        1,
        "{contexts:?}"
    );
}

#[test]
fn codex_hooks_files_are_read_as_codex_reads_them() {
    let project = Project::new("");
    let dot = project.ws.join(".codex");
    std::fs::create_dir_all(dot.join("hooks")).unwrap();
    // codex's hook protocol is Claude Code's: the call on stdin, exit 2 or
    // a JSON decision.
    std::fs::write(
        dot.join("hooks/no-rm.sh"),
        "#!/bin/bash\ngrep -q '\"command\":\"rm ' && { echo 'no rm here' >&2; exit 2; }\nexit 0\n",
    )
    .unwrap();
    std::fs::write(
        dot.join("hooks/no-curl.sh"),
        "#!/bin/bash\nif grep -q curl; then echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", \"permissionDecision\": \"deny\", \"permissionDecisionReason\": \"no network\"}}'; fi\n",
    )
    .unwrap();
    std::fs::write(
        dot.join("hooks.json"),
        json!({"description": "guards", "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "bash .codex/hooks/no-rm.sh", "timeout": 10, "if": "Bash(rm *)"},
            {"type": "command", "command": "touch async-ran", "async": true}
        ]}]}})
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        dot.join("config.toml"),
        "model = \"o4-mini\"\n\n[[hooks.PreToolUse]]\nmatcher = \"Bash\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"bash .codex/hooks/no-curl.sh\"\ntimeout_sec = 10\n",
    )
    .unwrap();
    let turns = json!([
        call("c1", "bash", json!({"command": "rm -f keep"})),
        call("c2", "bash", json!({"command": "curl -s example.com"})),
        call("c3", "bash", json!({"command": "touch ok"})),
        text("done")
    ]);
    std::fs::write(project.ws.join("keep"), "").unwrap();

    // The workspace's codex files start programs: refused until trusted.
    let refused = project.run("x", &turns, &["--mode", "allow-all"]).code(2);
    let err = stderr(&refused);
    assert!(
        err.contains(".codex/hooks.json") && err.contains("tack trust"),
        "{err}"
    );
    let out = stdout_of(project.tack().arg("trust"));
    assert!(
        out.contains(".codex/hooks.json") && out.contains(".codex/config.toml"),
        "{out}"
    );

    let _ = std::fs::remove_file(&project.log);
    let run = project.run("x", &turns, &["--mode", "allow-all"]).success();
    let err = stderr(&run);
    let (code, message) = outcome(&project.result("c1"));
    assert_eq!(code, "DENIED");
    assert!(message.contains("no rm here"), "{message}");
    assert!(project.ws.join("keep").exists());
    let (code, message) = outcome(&project.result("c2"));
    assert_eq!(code, "DENIED");
    assert!(message.contains("no network"), "{message}");
    assert_eq!(outcome(&project.result("c3")).0, "ok");
    // codex's own rules: `if` is not a codex key, async hooks are skipped,
    // hooks in both files of a layer are both used with a warning.
    assert!(
        err.contains("hooks[0].if`: codex does not read this key"),
        "{err}"
    );
    assert!(err.contains("codex skips async hooks"), "{err}");
    assert!(!project.ws.join("async-ran").exists());
    assert!(err.contains("hooks are in both"), "{err}");
    assert!(
        !err.contains("`model`"),
        "codex's other settings are not named: {err}"
    );

    // The user's ~/.codex hooks are read only with codex_hooks = all.
    let home = project.home().join(".codex");
    std::fs::create_dir_all(&home).unwrap();
    let marker = project.dir.path().join("user-codex-hook-ran");
    std::fs::write(
        home.join("hooks.json"),
        json!({"hooks": {"UserPromptSubmit": [{"hooks": [
            {"type": "command", "command": format!("cat >/dev/null; touch {}", marker.display())}
        ]}]}})
        .to_string(),
    )
    .unwrap();
    let config = stdout_of(project.tack().arg("config"));
    assert!(
        config.contains("codex_hooks = project") && config.contains("(default)"),
        "{config}"
    );
    let _ = std::fs::remove_file(&project.log);
    project.run("x", &json!([text("ok")]), &[]).success();
    assert!(!marker.exists(), "not read by default");
    let all = project.dir.path().join("all.json");
    std::fs::write(&all, r#"{"codex_hooks": "all"}"#).unwrap();
    let all = all.to_str().unwrap();
    let _ = std::fs::remove_file(&project.log);
    project
        .run("x", &json!([text("ok")]), &["--settings", all])
        .success();
    assert!(
        marker.exists(),
        "read with codex_hooks = all, no trust needed"
    );

    // [features] hooks = false in the user's config.toml: codex's hooks off.
    std::fs::remove_file(&marker).unwrap();
    std::fs::write(home.join("config.toml"), "[features]\nhooks = false\n").unwrap();
    let _ = std::fs::remove_file(&project.log);
    let run = project
        .run("x", &turns, &["--settings", all, "--mode", "allow-all"])
        .success();
    assert!(
        stderr(&run).contains("codex's hooks are off"),
        "{}",
        stderr(&run)
    );
    assert!(!marker.exists());
    assert_eq!(
        outcome(&project.result("c1")).0,
        "ok",
        "the workspace's too"
    );

    // codex_hooks = none: not even the workspace's.
    std::fs::remove_file(home.join("config.toml")).unwrap();
    std::fs::write(project.ws.join("keep"), "").unwrap();
    let none = project.dir.path().join("none.json");
    std::fs::write(&none, r#"{"codex_hooks": "none"}"#).unwrap();
    let _ = std::fs::remove_file(&project.log);
    project
        .run(
            "x",
            &turns,
            &["--settings", none.to_str().unwrap(), "--mode", "allow-all"],
        )
        .success();
    assert_eq!(outcome(&project.result("c1")).0, "ok");
}

#[test]
fn an_async_hooks_context_reaches_the_model_with_the_next_prompt() {
    let project = Project::new("");
    let hooks = project.ws.join(".claude/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    std::fs::write(
        hooks.join("report.sh"),
        "#!/bin/bash\ncat > /dev/null\necho '{\"hookSpecificOutput\": {\"hookEventName\": \"PostToolUse\", \"additionalContext\": \"coverage fell to 71%\"}}'\ntouch reported\n",
    )
    .unwrap();
    // Before the second prompt, waits for the async hook to be at its end.
    std::fs::write(
        hooks.join("settle.sh"),
        "#!/bin/bash\ncat > /dev/null\nif [ -e started ]; then while [ ! -e reported ]; do sleep 0.05; done; sleep 0.2; fi\n",
    )
    .unwrap();
    std::fs::write(
        project.ws.join(".claude/settings.json"),
        json!({"hooks": {
            "PostToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": "bash \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/report.sh", "async": true}
            ]}],
            "UserPromptSubmit": [{"hooks": [
                {"type": "command", "command": "bash \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/settle.sh"}
            ]}]
        }})
        .to_string(),
    )
    .unwrap();
    project.trust();
    let turns = json!([
        call("c1", "bash", json!({"command": "touch started"})),
        text("tested"),
        text("noted")
    ]);
    project
        .tack()
        .args([
            "chat",
            "--mode",
            "allow-all",
            "--model",
            &project.model(&turns),
            "--log",
        ])
        .arg(&project.log)
        .write_stdin("run the tests\nhow did it go?\nexit\n")
        .assert()
        .success();
    assert!(of_type(&project.log, "context/deferred").is_empty());
    let records = records(&project.log);
    let second = records
        .iter()
        .position(|r| r["type"] == "user" && r["text"] == "how did it go?")
        .unwrap();
    let context: Vec<&Value> = records[second..]
        .iter()
        .filter(|r| r["type"] == "context/hook")
        .collect();
    assert_eq!(context.len(), 1, "{context:?}");
    assert!(
        context[0].to_string().contains("coverage fell to 71%"),
        "{context:?}"
    );
}
