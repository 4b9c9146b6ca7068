//! Settings files, permission files, the system prompt, NO_COLOR.

use super::*;

/// A user config home inside `dir` holding `settings` (if any).
fn config_home(dir: &tempfile::TempDir, settings: Option<&str>) -> PathBuf {
    let home = dir.path().join("config");
    std::fs::create_dir_all(home.join("tack")).unwrap();
    if let Some(text) = settings {
        std::fs::write(home.join("tack/settings.json"), text).unwrap();
    }
    home
}

fn dot_tack(ws: &Path, name: &str, text: &str) -> PathBuf {
    std::fs::create_dir_all(ws.join(".tack")).unwrap();
    let path = ws.join(".tack").join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn line_of<'a>(out: &'a str, key: &str) -> &'a str {
    out.lines()
        .find(|l| l.starts_with(&format!("{key} = ")))
        .unwrap_or_else(|| panic!("no {key} in {out}"))
}

#[test]
fn layers_apply_in_order_and_config_names_each_origin() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let home = config_home(
        &dir,
        Some(
            r#"{"mode": "read-only", "max_steps": 3, "model_timeout": 30, "presentation": "both"}"#,
        ),
    );
    let ws_file = dot_tack(
        &ws,
        "settings.json",
        r#"{"max_steps": 5, "model_timeout": 40}"#,
    );
    let extra = dir.path().join("extra.json");
    std::fs::write(&extra, r#"{"tool_timeout": 7, "model_timeout": 50}"#).unwrap();
    let out = stdout_of(
        tack(&ws)
            .env("XDG_CONFIG_HOME", &home)
            .args(["config", "--max-steps", "9", "--settings"])
            .arg(&extra),
    );
    let user = home.join("tack/settings.json");
    assert!(line_of(&out, "mode").contains("read-only"), "{out}");
    assert!(
        line_of(&out, "mode").ends_with(&format!("(user {})", user.display())),
        "{out}"
    );
    assert!(line_of(&out, "presentation").contains("(user "), "{out}");
    assert!(line_of(&out, "max_steps").contains("= 9"), "{out}");
    assert!(
        line_of(&out, "max_steps").ends_with("(flag --max-steps)"),
        "{out}"
    );
    let canonical_ws_file = ws.canonicalize().unwrap().join(".tack/settings.json");
    assert!(ws_file.exists());
    assert!(line_of(&out, "model_timeout").contains("= 50s"), "{out}");
    assert!(
        line_of(&out, "model_timeout").ends_with(&format!("(--settings {})", extra.display())),
        "{out}"
    );
    assert!(line_of(&out, "tool_timeout").contains("= 7s"), "{out}");
    assert!(line_of(&out, "model").ends_with("(default)"), "{out}");
    assert!(
        out.contains(&format!("  workspace {}", canonical_ws_file.display())),
        "{out}"
    );
}

#[test]
fn the_settings_reach_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let home = config_home(&dir, Some(r#"{"mode": "read-only"}"#));
    let log = log_in(&dir, "s");
    let out = stdout_of(
        tack(&ws)
            .env("XDG_CONFIG_HOME", &home)
            .args(["run", "run touch pwned", "--log"])
            .arg(&log),
    );
    assert!(out.contains("[tool:bash] -> ERR DENIED:"), "{out}");
    assert!(!ws.join("pwned").exists());
    // The flag wins over the file.
    let log = log_in(&dir, "s2");
    let out = stdout_of(
        tack(&ws)
            .env("XDG_CONFIG_HOME", &home)
            .args(["run", "--mode", "allow-all", "run touch made", "--log"])
            .arg(&log),
    );
    assert!(!out.contains("DENIED"), "{out}");
    assert!(ws.join("made").exists());
}

#[test]
fn a_bad_value_names_the_file_the_line_and_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let bad = dot_tack(
        &ws,
        "settings.json",
        "{\n  \"max_steps\": 4,\n  \"sandbox\": \"wide-open\"\n}\n",
    );
    let assert = tack(&ws).args(["run", "hello"]).assert().code(1);
    let err = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
    let name = ws.canonicalize().unwrap().join(".tack/settings.json");
    assert!(bad.exists());
    assert!(err.contains(&format!("{}:3:", name.display())), "{err}");
    assert!(err.contains("key `sandbox`"), "{err}");
    assert!(err.contains("wide-open"), "{err}");

    std::fs::remove_file(&bad).unwrap();
    // Unknown keys and broken JSON, in a --settings file.
    let file = dir.path().join("s.json");
    // An unknown key is named in a warning, and the rest is used.
    std::fs::write(&file, "{\"modle\": \"x\", \"max_steps\": 7}").unwrap();
    let out = tack(&ws)
        .args(["config", "--settings"])
        .arg(&file)
        .assert()
        .success();
    let out = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        out.contains("s.json: not tack settings, ignored: `modle`")
            && out.contains("max_steps = 7"),
        "{out}"
    );
    std::fs::write(&file, "{\"model\": \"mock\"").unwrap();
    let err = tack(&ws)
        .args(["config", "--settings"])
        .arg(&file)
        .assert()
        .code(1);
    let err = String::from_utf8(err.get_output().stderr.clone()).unwrap();
    assert!(err.contains("s.json:1:"), "{err}");
    // A --settings file that does not exist is an error, not silence.
    let err = tack(&ws)
        .args(["config", "--settings", "/nonexistent/s.json"])
        .assert()
        .code(1);
    let err = String::from_utf8(err.get_output().stderr.clone()).unwrap();
    assert!(err.contains("/nonexistent/s.json"), "{err}");
}

#[test]
fn a_workspace_cannot_loosen_its_own_confinement() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let log = log_in(&dir, "loose");
    dot_tack(&ws, "settings.json", "{\n \"mode\": \"allow-all\"\n}");
    let err = tack(&ws)
        .args(["run", "run touch pwned", "--log"])
        .arg(&log)
        .assert()
        .code(1);
    let err = String::from_utf8(err.get_output().stderr.clone()).unwrap();
    assert!(err.contains("settings.json:2: key `mode`"), "{err}");
    assert!(!ws.join("pwned").exists());
    assert!(!log.exists(), "nothing ran");

    std::fs::remove_file(ws.join(".tack/settings.json")).unwrap();
    dot_tack(&ws, "settings.json", "{\"sandbox\": \"full-access\"}");
    tack(&ws).args(["config"]).assert().code(1);
    std::fs::remove_file(ws.join(".tack/settings.json")).unwrap();
    dot_tack(&ws, "permissions.toml", "# loosen\nmode = \"allow-all\"\n");
    let err = tack(&ws).args(["config"]).assert().code(1);
    let err = String::from_utf8(err.get_output().stderr.clone()).unwrap();
    assert!(err.contains("permissions.toml:2: key `mode`"), "{err}");
    // The user's own file may.
    std::fs::remove_file(ws.join(".tack/permissions.toml")).unwrap();
    let home = config_home(
        &dir,
        Some(r#"{"mode": "allow-all", "sandbox": "full-access"}"#),
    );
    let out = stdout_of(tack(&ws).env("XDG_CONFIG_HOME", &home).args(["config"]));
    assert!(line_of(&out, "mode").contains("allow-all"), "{out}");
}

#[test]
fn the_workspace_permission_file_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::write(ws.join("secret.txt"), "TOKEN=hunter2").unwrap();
    dot_tack(
        &ws,
        "permissions.toml",
        "mode = \"accept-edits\"\ndeny = ['read_file(path: \"secret.txt\")']\n",
    );
    let log = log_in(&dir, "perm");
    let out = stdout_of(
        tack(&ws)
            .args([
                "run",
                "--mode",
                "allow-all",
                "read file secret.txt",
                "--log",
            ])
            .arg(&log),
    );
    assert!(out.contains("ERR DENIED"), "{out}");
    assert!(!out.contains("hunter2"), "{out}");
    let result = &of_type(&log, "tool/result")[0];
    assert_eq!(result["error"]["code"], "DENIED");
    assert!(
        result["error"]["message"]
            .as_str()
            .unwrap()
            .contains("permissions.toml line 2"),
        "{result}"
    );
    let out = stdout_of(tack(&ws).args(["config"]));
    assert!(line_of(&out, "mode").contains("accept-edits"), "{out}");
    assert!(
        out.contains("deny read_file(path: \"secret.txt\")"),
        "{out}"
    );
}

#[test]
fn the_permissions_flag_and_settings_rules_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::write(ws.join("a.txt"), "alpha").unwrap();
    std::fs::write(ws.join("b.txt"), "bravo").unwrap();
    let perms = dir.path().join("perm.toml");
    std::fs::write(&perms, "deny = ['read_file(path: \"a.txt\")']\n").unwrap();
    let settings = dir.path().join("s.json");
    std::fs::write(
        &settings,
        r#"{"permissions": {"deny": ["read_file(path: \"b.txt\")"]}}"#,
    )
    .unwrap();
    for (file, secret) in [("a.txt", "alpha"), ("b.txt", "bravo")] {
        let log = log_in(&dir, file);
        let out = stdout_of(
            tack(&ws)
                .args(["run", "--mode", "allow-all", &format!("read file {file}")])
                .arg("--permissions")
                .arg(&perms)
                .arg("--settings")
                .arg(&settings)
                .arg("--log")
                .arg(&log),
        );
        assert!(out.contains("ERR DENIED"), "{file}: {out}");
        assert!(!out.contains(secret), "{out}");
    }
    // A bad permission file is refused with its line and key.
    std::fs::write(&perms, "[[rule]]\naction = \"alow\"\n").unwrap();
    let err = tack(&ws)
        .arg("config")
        .arg("--permissions")
        .arg(&perms)
        .assert()
        .code(1);
    let err = String::from_utf8(err.get_output().stderr.clone()).unwrap();
    assert!(err.contains("perm.toml:2:10: key `action`"), "{err}");
}

#[test]
fn agents_md_and_the_system_prompt_are_logged() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::write(ws.join("AGENTS.md"), "Always run the tests.\n").unwrap();
    let prompt = dir.path().join("prompt.md");
    std::fs::write(&prompt, "You are terse.").unwrap();
    let log = log_in(&dir, "prompt");
    tack(&ws)
        .args(["run", "-m", "mock", "hello", "--system-prompt"])
        .arg(format!("@{}", prompt.display()))
        .arg("--log")
        .arg(&log)
        .assert()
        .success();
    let start = &of_type(&log, "session/start")[0];
    let text = start["system_prompt"].as_str().unwrap();
    assert!(text.starts_with("You are terse."), "{text}");
    assert!(text.contains("Always run the tests."), "{text}");
    let sources = start["sources"].as_array().unwrap();
    assert_eq!(sources[0], format!("--system-prompt @{}", prompt.display()));
    assert!(
        sources[1].as_str().unwrap().starts_with("AGENTS.md "),
        "{start}"
    );
    assert_eq!(start["model"], "mock");
    assert_eq!(records(&log)[0]["type"], "session/start");
    let out = stdout_of(tack(&ws).arg("config"));
    let line = out
        .lines()
        .find(|l| l.starts_with("system prompt: "))
        .unwrap();
    assert!(
        line.starts_with("system prompt: default + AGENTS.md "),
        "{line}"
    );
}

#[test]
fn short_flags_name_the_workspace_and_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::write(ws.join("README.md"), "# short").unwrap();
    let log = log_in(&dir, "short");
    let out = stdout_of(
        tack(dir.path())
            .args(["run", "-C"])
            .arg(&ws)
            .args(["-m", "mock", "read file README.md", "--log"])
            .arg(&log),
    );
    assert!(out.contains("# short"), "{out}");
    let err = tack(&ws).args(["config", "-m", "gpt"]).assert().code(2);
    let err = String::from_utf8(err.get_output().stderr.clone()).unwrap();
    assert!(
        err.contains("'--model <PROVIDER:MODEL>': unknown model `gpt`"),
        "{err}"
    );
}

#[test]
fn no_color_turns_colour_off() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::write(ws.join("README.md"), "# c").unwrap();
    let run = |no_color: Option<&str>, name: &str| {
        let mut cmd = tack(&ws);
        cmd.env("CLICOLOR_FORCE", "1");
        if let Some(v) = no_color {
            cmd.env("NO_COLOR", v);
        }
        stdout_of(
            cmd.args(["run", "read file README.md", "--log"])
                .arg(log_in(&dir, name)),
        )
    };
    assert!(run(None, "c1").contains("\x1b["), "colour is forced on");
    let plain = run(Some("1"), "c2");
    assert!(!plain.contains('\x1b'), "{plain:?}");
    assert!(plain.contains("[user]"), "{plain}");
    // An empty NO_COLOR does not count (no-color.org).
    assert!(run(Some(""), "c3").contains("\x1b["));
}

#[test]
fn a_workspace_allow_that_acts_as_allow_all_is_refused_and_narrow_ones_load() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let log = log_in(&dir, "wide");
    dot_tack(&ws, "permissions.toml", "# widen\nallow = [\"*\"]\n");
    let err = tack(&ws)
        .args(["run", "run touch pwned", "--log"])
        .arg(&log)
        .assert()
        .code(1);
    let err = String::from_utf8(err.get_output().stderr.clone()).unwrap();
    assert!(err.contains("permissions.toml:2: key `allow`"), "{err}");
    assert!(err.contains("acts like mode `allow-all`"), "{err}");
    assert!(err.contains("user settings"), "{err}");
    assert!(!ws.join("pwned").exists());
    assert!(!log.exists(), "nothing ran");
    for wide in [
        "allow = ['bash']",
        "allow = ['bash(command: \"*\")']",
        "[[rule]]\naction = \"allow\"\ntool = \"*\"\n",
    ] {
        std::fs::write(ws.join(".tack/permissions.toml"), wide).unwrap();
        let err = tack(&ws).args(["config"]).assert().code(1);
        let err = String::from_utf8(err.get_output().stderr.clone()).unwrap();
        assert!(err.contains("acts like mode `allow-all`"), "{wide}: {err}");
    }
    std::fs::remove_file(ws.join(".tack/permissions.toml")).unwrap();
    dot_tack(
        &ws,
        "settings.json",
        "{\n \"permissions\": {\n  \"allow\": [\"read_file\", \"bash\"]\n }\n}",
    );
    let err = tack(&ws).args(["config"]).assert().code(1);
    let err = String::from_utf8(err.get_output().stderr.clone()).unwrap();
    assert!(
        err.contains("settings.json:3: key `permissions.allow[1]`"),
        "{err}"
    );
    // Narrow allows load.
    std::fs::remove_file(ws.join(".tack/settings.json")).unwrap();
    dot_tack(
        &ws,
        "permissions.toml",
        "allow = ['bash(command: \"git status*\")', 'write_file(path: \"src/**\")']\n",
    );
    let out = stdout_of(tack(&ws).args(["config"]));
    assert!(
        out.contains("allow bash(command: \"git status*\")"),
        "{out}"
    );
    // The user's own file may allow everything.
    std::fs::remove_file(ws.join(".tack/permissions.toml")).unwrap();
    let home = config_home(&dir, Some(r#"{"permissions": {"allow": ["*"]}}"#));
    tack(&ws)
        .env("XDG_CONFIG_HOME", &home)
        .args(["config"])
        .assert()
        .success();
}
