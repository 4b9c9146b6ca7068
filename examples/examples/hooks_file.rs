//! A Claude-Code-style hooks file: a `settings.json` whose `hooks` run two
//! shell scripts on tack's hook points, around an agent's `bash` calls.
//!
//! `cargo run -p tack-examples --features agent --example hooks_file`
//!
//! Needs `sh`, `sed` and `grep` (the scripts are POSIX shell). The scripts
//! follow Claude Code's hook protocol unchanged: the call arrives as JSON on
//! stdin, exit code 2 blocks it with stderr as the reason, and a JSON object
//! on stdout answers (here, context for the model). `tack-hooks` runs them:
//! `PreToolUse` on `tools/pre-execute`, `PostToolUse` on `tools/post-execute`.
//! The agent is tack's deterministic mock model (no key), which turns
//! `run COMMAND` into a `bash` call.

use std::fs;
use std::sync::Arc;

use tack_agent::{Agent, Message, MockModel, PluginSet};
use tack_hooks::{HookSession, Hooks, HooksConfig};
use tack_sandbox::{Sandbox, SandboxPolicy};

/// PreToolUse: refuse `rm` (exit 2: stderr is the reason the model reads).
const GUARD: &str = r#"#!/bin/sh
command=$(sed -n 's/.*"command" *: *"\([^"]*\)".*/\1/p')
case "$command" in
  rm\ *|*\ rm\ *) echo "rm is not allowed here; move files to trash/ instead" >&2; exit 2 ;;
esac
exit 0
"#;

/// PostToolUse: append the call to an audit file, answer with context (JSON).
const AUDIT: &str = r#"#!/bin/sh
grep -o '"command" *: *"[^"]*"' >> "$CLAUDE_PROJECT_DIR/../audit.log"
echo '{"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "audit: the command was recorded"}}'
"#;

/// The hooks file, in Claude Code's `settings.json` shape.
const SETTINGS: &str = r#"{"hooks": {
  "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "sh ../guard.sh"}]}],
  "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "sh ../audit.sh", "timeout": 10}]}]
}}"#;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?; // scripts and settings here, the workspace in work/
    let work = dir.path().join("work");
    fs::create_dir(&work)?;
    fs::write(work.join("notes.txt"), "keep me\n")?;
    fs::write(dir.path().join("guard.sh"), GUARD)?;
    fs::write(dir.path().join("audit.sh"), AUDIT)?;
    fs::write(dir.path().join("settings.json"), SETTINGS)?;

    let config = HooksConfig::from_file(&dir.path().join("settings.json"))?;
    let hooks = Hooks::new(config, HookSession::new("demo", &work)); // hooks run in the workspace
    let plugins = PluginSet::new()
        .with(Sandbox::new(SandboxPolicy::workspace_write(&work))?)
        .with_named("builtin-tools")
        .with(hooks)
        .build()?;
    let mut agent = Agent::builder(Arc::new(MockModel::new()), plugins.pipeline.clone()).build();
    for prompt in ["run echo hello", "run rm notes.txt"] {
        let seen = agent.history().len();
        println!("> {prompt}");
        agent.run(prompt).await?;
        for message in &agent.history()[seen..] {
            match message {
                Message::ToolResult {
                    content, is_error, ..
                } => println!(
                    "  result (error: {is_error}): {}",
                    content.trim().replace('\n', " ")
                ),
                Message::Context(context) => println!("  context: {}", context.text()),
                _ => {}
            }
        }
    }
    println!("notes.txt still there: {}", work.join("notes.txt").exists());
    print!(
        "audit.log:\n{}",
        fs::read_to_string(dir.path().join("audit.log"))?
    );
    Ok(())
}
