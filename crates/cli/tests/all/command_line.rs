//! The command line itself, through the real binary: enumerated flags
//! refused as usage errors (exit 2) with their possible values, `--help`
//! listing them, `--model PROVIDER:MODEL`, the options `mcp serve` takes,
//! and each file flag's own wording.

use predicates::str::contains;

use super::*;

/// A bad value of an enumerated flag is a usage error (exit 2) that names
/// the flag and lists what it takes.
#[test]
fn enumerated_flags_refuse_bad_values_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    for (args, flag, values) in [
        (
            &["run", "hi", "--mode", "yolo"][..],
            "--mode <MODE>",
            "read-only, ask, accept-edits, allow-all",
        ),
        (
            &["run", "hi", "--sandbox", "none"][..],
            "--sandbox <SANDBOX>",
            "read-only, workspace-write, full-access",
        ),
        (
            &["run", "hi", "--sandbox-layer", "bwrap"][..],
            "--sandbox-layer <SANDBOX_LAYER>",
            "auto, namespaces, floor",
        ),
        (
            &["run", "hi", "--presentation", "json"][..],
            "--presentation <PRESENTATION>",
            "native, code, both",
        ),
        (
            &["tools", "--format", "gemini"][..],
            "--format <FORMAT>",
            "openai, anthropic, mcp, neutral",
        ),
        (
            &["mcp", "serve", "--mode", "yolo"][..],
            "--mode <MODE>",
            "read-only, ask, accept-edits, allow-all",
        ),
    ] {
        tack(&ws)
            .args(args)
            .assert()
            .code(2)
            .stderr(contains(format!("for '{flag}'")))
            .stderr(contains(format!("[possible values: {values}]")));
    }
}

#[test]
fn help_lists_the_possible_values() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let help = stdout_of(tack(&ws).args(["run", "--help"]));
    for value in [
        "accept-edits:",
        "allow-all:",
        "workspace-write:",
        "full-access:",
        "namespaces:",
        "floor:",
        "code:",
        "both:",
    ] {
        assert!(help.contains(value), "{value} missing from:\n{help}");
    }
    assert!(help.contains("--model <PROVIDER:MODEL>"), "{help}");
    let help = stdout_of(tack(&ws).args(["tools", "--help"]));
    assert!(help.contains("[default: openai]"), "{help}");
    assert!(help.contains("neutral:"), "{help}");
}

#[test]
fn a_model_name_without_its_provider_is_a_usage_error_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    tack(&ws)
        .args(["run", "hi", "--model", "gpt4"])
        .assert()
        .code(2)
        .stderr(contains("a model name needs its provider: openai:gpt4"));
    tack(&ws)
        .args(["run", "hi", "-m", "claude-sonnet-4-5"])
        .assert()
        .code(2)
        .stderr(contains("anthropic:claude-sonnet-4-5"));
    tack(&ws)
        .args(["run", "hi", "--model", "groq:llama"])
        .assert()
        .code(2)
        .stderr(contains("unknown provider `groq`"));
    tack(&ws)
        .args(["run", "hi", "--model", "openai:"])
        .assert()
        .code(2)
        .stderr(contains("names no model after `openai:`"));
}

/// `openai:MODEL` carries the model name; only the key is then missing,
/// and every missing variable is named in one run.
#[test]
fn provider_model_needs_only_the_key_and_missing_ones_come_together() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let out = tack(&ws)
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_MODEL")
        .args(["run", "hi", "--model", "openai"])
        .assert()
        .code(1)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8(out).unwrap();
    assert!(err.contains("OPENAI_API_KEY is not set"), "{err}");
    assert!(err.contains("export OPENAI_MODEL"), "{err}");
    let out = tack(&ws)
        .env_remove("ANTHROPIC_API_KEY")
        .env("ANTHROPIC_MODEL", "from-env")
        .args(["run", "hi", "--model", "anthropic:claude-sonnet-4-5"])
        .assert()
        .code(1)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8(out).unwrap();
    assert!(err.contains("ANTHROPIC_API_KEY is not set"), "{err}");
    assert!(!err.contains("no model name"), "{err}");
}

#[test]
fn a_bad_model_in_a_settings_file_names_the_file_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let settings = dir.path().join("s.json");
    std::fs::write(&settings, r#"{"model": "gpt-4o"}"#).unwrap();
    tack(&ws)
        .args(["run", "hi", "--settings"])
        .arg(&settings)
        .assert()
        .code(1)
        .stderr(contains("s.json:1:"))
        .stderr(contains("openai:gpt-4o"));
}

#[test]
fn mcp_serve_refuses_the_agent_loop_options() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    for args in [
        &["--model", "mock"][..],
        &["--max-steps", "3"][..],
        &["--system-prompt", "x"][..],
        &["--resume", "x.jsonl"][..],
        &["--continue"][..],
        &["--json"][..],
    ] {
        tack(&ws)
            .args(["mcp", "serve"])
            .args(args)
            .assert()
            .code(2)
            .stderr(contains(format!("unexpected argument '{}'", args[0])));
    }
    let help = stdout_of(tack(&ws).args(["mcp", "serve", "--help"]));
    for absent in ["--model", "--max-steps", "--system-prompt", "--resume"] {
        assert!(!help.contains(absent), "{absent} in:\n{help}");
    }
    // `--presentation code` serves `run_code`.
    for present in [
        "--mode",
        "--sandbox",
        "--workspace",
        "--log",
        "--http",
        "--presentation",
    ] {
        assert!(help.contains(present), "{present} not in:\n{help}");
    }
}

#[test]
fn tools_and_config_refuse_the_options_they_would_ignore() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let refused: [(&str, &[&[&str]]); 2] = [
        (
            "tools",
            &[
                &["--model", "mock"],
                &["--max-steps", "3"],
                &["--log", "x.jsonl"],
                &["--resume", "x.jsonl"],
                &["--continue"],
                &["--json"],
                &["--ui"],
            ],
        ),
        (
            "config",
            &[
                &["--log", "x.jsonl"],
                &["--resume", "x.jsonl"],
                &["--continue"],
                &["--json"],
                &["--ui"],
            ],
        ),
    ];
    for (command, options) in refused {
        for args in options {
            tack(&ws)
                .arg(command)
                .args(*args)
                .assert()
                .code(2)
                .stderr(contains(format!("unexpected argument '{}'", args[0])));
        }
    }
    // What they read still works.
    let config = stdout_of(tack(&ws).args([
        "config",
        "--max-steps",
        "9",
        "--model",
        "mock",
        "--presentation",
        "both",
        "--mode",
        "read-only",
    ]));
    assert!(config.contains("max_steps"), "{config}");
    assert!(config.contains('9'), "{config}");
    let tools =
        stdout_of(tack(&ws).args(["tools", "--presentation", "code", "--format", "neutral"]));
    assert!(tools.contains("run_code"), "{tools}");
}

#[test]
fn a_missing_permissions_file_is_called_a_permissions_file() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    tack(&ws)
        .args(["run", "hi", "--permissions", "missing.toml"])
        .assert()
        .code(1)
        .stderr(contains("cannot read the permissions file missing.toml"));
    tack(&ws)
        .args(["run", "hi", "--settings", "missing.json"])
        .assert()
        .code(1)
        .stderr(contains("cannot read the settings file missing.json"));
}

#[test]
fn old_spellings_still_work() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::write(ws.join("a.txt"), "alpha").unwrap();
    let out = stdout_of(tack(&ws).args([
        "run",
        "读文件 a.txt",
        "--model",
        "mock",
        "--mode",
        "read-only",
        "--sandbox",
        "read-only",
    ]));
    assert!(out.contains("alpha"), "{out}");
}

#[test]
fn verbose_turns_on_diagnostics_and_rust_log_picks_them() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let stderr = |args: &[&str], rust_log: Option<&str>| {
        let mut cmd = tack(&ws);
        match rust_log {
            Some(v) => cmd.env("RUST_LOG", v),
            None => cmd.env_remove("RUST_LOG"),
        };
        let out = cmd.args(args).assert().success();
        String::from_utf8(out.get_output().stderr.clone()).unwrap()
    };
    let quiet = stderr(&["run", "hi"], None);
    assert!(!quiet.contains("DEBUG"), "{quiet}");
    let loud = stderr(&["-vv", "run", "hi"], None);
    assert!(loud.contains("DEBUG tack_core"), "{loud}");
    let off = stderr(&["-vv", "run", "hi"], Some("off"));
    assert!(!off.contains("DEBUG"), "{off}");
    let picked = stderr(&["run", "hi"], Some("tack_pipeline=debug"));
    assert!(picked.contains("DEBUG tack_pipeline"), "{picked}");
    assert!(!picked.contains("tack_core"), "{picked}");
}
