//! `--ui`: the session's page, through the real `tack` binary. The HTTP
//! checks use plain sockets; the page itself is driven in a real Chromium
//! by Playwright (`tests/browser/page.js`; the system's `chromium`, and
//! `playwright-core` from `.ci/browser`, which `.ci/run` installs). Without
//! them the browser tests are skipped, except under CI (`CI=true`), where
//! they fail.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::{log_in, of_type, test_state_home, workspace};

/// A `tack` serving a page; killed if the test ends first.
struct Served {
    child: Child,
    url: String,
    stderr: Arc<Mutex<String>>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Served {
    /// Starts `tack ARGS` in `ws` and waits for its page's URL.
    fn start(ws: &Path, args: &[&str]) -> Served {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("tack"))
            .current_dir(ws)
            .env("XDG_STATE_HOME", test_state_home())
            .env("HOME", test_state_home().join("home"))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = Arc::new(Mutex::new(String::new()));
        let (found, url) = std::sync::mpsc::channel();
        let lines = BufReader::new(child.stderr.take().unwrap());
        let kept = Arc::clone(&stderr);
        std::thread::spawn(move || {
            for line in lines.lines() {
                let Ok(line) = line else { break };
                if let Some(url) = line.strip_prefix("tack: the session's page: ") {
                    let _ = found.send(url.to_owned());
                }
                kept.lock().unwrap().push_str(&format!("{line}\n"));
            }
        });
        let Ok(url) = url.recv() else {
            let _ = child.wait();
            panic!("tack printed no page URL: {}", stderr.lock().unwrap());
        };
        Served { child, url, stderr }
    }

    /// Waits for `tack` to end; its exit code.
    fn wait(mut self) -> i32 {
        let status = self.child.wait().unwrap();
        status.code().unwrap_or(-1)
    }

    fn host(&self) -> String {
        let rest = self.url.strip_prefix("http://").unwrap();
        rest.split_once('/').unwrap().0.to_owned()
    }

    fn token(&self) -> String {
        let rest = self.url.strip_prefix("http://").unwrap();
        rest.split_once('/')
            .unwrap()
            .1
            .trim_end_matches('/')
            .to_owned()
    }
}

/// Playwright's driver, Chromium and Node, or `None` (skipped) outside CI.
struct Browser {
    node: PathBuf,
    playwright: PathBuf,
    chromium: PathBuf,
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(name))
            .find(|path| path.is_file())
    })
}

fn browser() -> Option<Browser> {
    let root = repo_root();
    let playwright = root.join(".ci/browser/node_modules/playwright-core");
    let bundled_node = root.join(".ci/node/node_modules/.bin/node");
    let node = if bundled_node.is_file() {
        Some(bundled_node)
    } else {
        on_path("node")
    };
    let chromium = std::env::var_os("TACK_CHROMIUM")
        .map(PathBuf::from)
        .filter(|path| path.is_file())
        .or_else(|| on_path("chromium"))
        .or_else(|| on_path("chromium-browser"));
    let mut missing = Vec::new();
    if !playwright.join("package.json").is_file() {
        missing.push("playwright-core (npm ci --prefix .ci/browser)");
    }
    if node.is_none() {
        missing.push("node");
    }
    if chromium.is_none() {
        missing.push("chromium (apt-get install chromium, or TACK_CHROMIUM=PATH)");
    }
    if missing.is_empty() {
        return Some(Browser {
            node: node.unwrap(),
            playwright,
            chromium: chromium.unwrap(),
        });
    }
    let message = format!(
        "the browser tests need {} (.ci/run installs them)",
        missing.join(", ")
    );
    if std::env::var("CI").is_ok_and(|ci| ci == "true") {
        panic!("{message}");
    }
    eprintln!("skipped: {message}");
    None
}

impl Browser {
    /// Runs a scenario of `tests/browser/page.js` against `url`; its result.
    fn run(&self, scenario: &str, url: &str, out: &Path) -> Value {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser/page.js");
        let output = Command::new(&self.node)
            .arg(script)
            .args([scenario, url])
            .arg(out)
            .env("TACK_PLAYWRIGHT", &self.playwright)
            .env("TACK_CHROMIUM", &self.chromium)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "the {scenario} scenario failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice(&output.stdout).unwrap()
    }
}

/// A session of one turn whose scripted model answers `answer`, logged in
/// `log_in(dir, name)`.
fn recorded(dir: &tempfile::TempDir, ws: &Path, name: &str, answer: &str) -> PathBuf {
    let model = script(dir, &json!([{ "text": answer }]));
    let log = log_in(dir, name);
    super::tack(ws)
        .args(["run", "--model", &model, "--log"])
        .arg(&log)
        .arg("go")
        .assert()
        .success();
    log
}

fn script(dir: &tempfile::TempDir, turns: &Value) -> String {
    let path = dir.path().join("script.json");
    std::fs::write(&path, json!({ "turns": turns }).to_string()).unwrap();
    format!("script:{}", path.display())
}

fn calls(calls: &[(&str, &str, Value)]) -> Value {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, args)| json!({"id": id, "name": name, "arguments": args.to_string()}))
        .collect();
    json!({ "tool_calls": calls })
}

/// What a model wrote into a file name, run as markup if it were not escaped.
const EVIL_NAME: &str = "<img src=x onerror=window.pwned=1>.txt";

/// The session the live test runs: a parallel batch of reads, then a
/// command asked and allowed, one denied by a rule, one asked and denied,
/// an edit allowed for the session, another edit the session rule allows,
/// and a new file allowed once.
fn session_script(dir: &tempfile::TempDir) -> String {
    script(
        dir,
        &json!([
            calls(&[
                ("c1", "read_file", json!({"path": EVIL_NAME})),
                ("c2", "read_file", json!({"path": "notes.txt"})),
            ]),
            calls(&[("c3", "bash", json!({"command": "echo '<script>window.pwned=1</script>'"}))]),
            calls(&[("c4", "bash", json!({"command": "rm -f notes.txt"}))]),
            calls(&[("c5", "bash", json!({"command": "touch made-by-c5"}))]),
            calls(&[("c6", "edit_file", json!({"path": "notes.txt", "old_string": "hello", "new_string": "bye"}))]),
            calls(&[("c7", "edit_file", json!({"path": "notes.txt", "old_string": "bye", "new_string": "ciao"}))]),
            calls(&[("c8", "write_file", json!({"path": "new.txt", "content": "one\ntwo\n"}))]),
            {"text": "done"},
        ]),
    )
}

fn session_workspace(dir: &tempfile::TempDir) -> PathBuf {
    let ws = workspace(dir);
    std::fs::write(ws.join("notes.txt"), "hello\n").unwrap();
    std::fs::write(ws.join(EVIL_NAME), "<script>window.pwned=1</script>\n").unwrap();
    std::fs::create_dir_all(ws.join(".tack")).unwrap();
    std::fs::write(
        ws.join(".tack/permissions.toml"),
        "deny = ['bash(command: \"rm *\")']\n",
    )
    .unwrap();
    ws
}

/// The screenshots go to the scratch directory, and to the directory
/// TACK_UI_SCREENSHOTS names when it is set (the docs' images).
fn keep_screenshots(out: &Path) {
    if let Some(dir) = std::env::var_os("TACK_UI_SCREENSHOTS") {
        for name in ["ui-live.png", "ui-timeline.png", "ui-approval.png"] {
            std::fs::copy(out.join(name), Path::new(&dir).join(name)).unwrap();
        }
    }
}

#[test]
fn the_live_page_shows_cards_asks_on_them_and_a_replay_renders_the_same() {
    let Some(browser) = browser() else { return };
    let dir = tempfile::tempdir().unwrap();
    let ws = session_workspace(&dir);
    let model = session_script(&dir);
    let log = log_in(&dir, "ui");
    let log_arg = log.display().to_string();
    let out = dir.path().join("shots");
    std::fs::create_dir_all(&out).unwrap();

    let tack = Served::start(
        &ws,
        &[
            "run", "--ui", "--mode", "ask", "--model", &model, "--log", &log_arg, "go",
        ],
    );
    let stderr = Arc::clone(&tack.stderr);
    let live = browser.run("live", &tack.url, &out);
    // Closing the page after the session ended lets `tack` exit.
    assert_eq!(tack.wait(), 0, "{}", stderr.lock().unwrap());

    // Live: the parallel batch was on the page while c3 waited for its answer.
    assert_eq!(live["status"], "live session", "{live}");
    assert_eq!(live["parallel"], json!(["c1", "c2"]), "{live}");
    assert!(
        live["c3WhileAsked"]
            .as_str()
            .unwrap()
            .contains("state-wait"),
        "{live}"
    );
    check_cards(&live);

    // The log agrees with the page: allowed once, denied by the rule (not
    // asked), denied on the page, allowed for the session, then not asked.
    let outcomes: Vec<(String, String)> = of_type(&log, "approval/outcome")
        .iter()
        .map(|o| {
            (
                o["call_id"].as_str().unwrap().to_owned(),
                o["outcome"]["outcome"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expected = [
        ("c3", "allowed_once"),
        ("c5", "denied"),
        ("c6", "allowed_always"),
        ("c8", "allowed_once"),
    ];
    assert_eq!(
        outcomes,
        expected.map(|(c, o)| (c.to_owned(), o.to_owned())),
        "{outcomes:?}"
    );
    assert!(!ws.join("made-by-c5").exists());
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.txt")).unwrap(),
        "ciao\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("new.txt")).unwrap(),
        "one\ntwo\n"
    );

    // Replay: the log alone renders the same cards.
    let replayed = Served::start(&ws, &["replay", "--ui", &log_arg]);
    let replay = browser.run("replay", &replayed.url, &out);
    assert_eq!(replayed.wait(), 0);
    assert!(
        replay["status"]
            .as_str()
            .unwrap()
            .contains("hash chain verified"),
        "{replay}"
    );
    check_cards(&replay);
    assert_eq!(replay["cards"], live["cards"]);
    assert!(
        live["timeline"].as_str().unwrap().starts_with("<svg"),
        "{live}"
    );
    assert_eq!(replay["timeline"], live["timeline"]);
    keep_screenshots(&out);
}

/// What both the live page and its replay show.
fn check_cards(page: &Value) {
    assert_eq!(page["errors"], json!([]), "{page}");
    // What the model wrote is text: no markup of it ran or was made.
    assert_eq!(page["pwned"], false, "{page}");
    assert_eq!(page["scripts"], 0, "{page}");
    assert_eq!(page["c1Title"], format!("Read {EVIL_NAME}"));
    assert_eq!(page["c3Out"], "<script>window.pwned=1</script>\n");
    assert_eq!(page["c3Exit"], "exit code 0");
    // Denied by the rule, with who decided.
    assert_eq!(page["c4Status"], "DENIED");
    let error = page["c4Error"].as_str().unwrap();
    assert!(error.contains("denied by permission rule"), "{error}");
    assert!(error.contains("rm *"), "{error}");
    assert!(
        page["c4Provenance"]
            .as_str()
            .unwrap()
            .starts_with("decided by "),
        "{page}"
    );
    assert_eq!(page["c5Status"], "DENIED");
    assert!(
        page["c5Approval"]
            .as_str()
            .unwrap()
            .contains("denied on the session's page")
    );
    assert_eq!(
        page["c6Diff"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| l.as_str().unwrap().starts_with("add:")
                || l.as_str().unwrap().starts_with("del:"))
            .collect::<Vec<_>>(),
        [&json!("del:-hello"), &json!("add:+bye")],
        "{page}"
    );
    assert!(
        page["c6Approval"]
            .as_str()
            .unwrap()
            .starts_with("approved for this session")
    );
    assert_eq!(page["c7Approval"], 0, "the session rule allowed c7 unasked");
    // The timeline: every call, the four waits for approval, the model steps.
    assert_eq!(page["calls"], 8, "{page}");
    assert_eq!(page["waits"], 4, "{page}");
    assert_eq!(page["steps"], 8, "{page}");
}

#[test]
fn closing_the_page_denies_the_call_it_was_asked_about() {
    let Some(browser) = browser() else { return };
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let model = script(
        &dir,
        &json!([
            calls(&[("c1", "bash", json!({"command": "touch made"}))]),
            {"text": "done"},
        ]),
    );
    let log = log_in(&dir, "closed");
    let log_arg = log.display().to_string();
    let tack = Served::start(
        &ws,
        &[
            "run", "--ui", "--mode", "ask", "--model", &model, "--log", &log_arg, "go",
        ],
    );
    let asked = browser.run("close", &tack.url, dir.path());
    assert!(
        asked["asked"].as_str().unwrap().contains("state-wait"),
        "{asked}"
    );
    let stderr = Arc::clone(&tack.stderr);
    assert_eq!(tack.wait(), 0, "{}", stderr.lock().unwrap());
    let result = &of_type(&log, "tool/result")[0];
    assert_eq!(result["error"]["code"], "DENIED", "{result}");
    let outcome = &of_type(&log, "approval/outcome")[0];
    assert_eq!(outcome["outcome"]["outcome"], "denied", "{outcome}");
    assert!(
        outcome["outcome"]["reason"]
            .as_str()
            .unwrap()
            .contains("page was closed"),
        "{outcome}"
    );
    assert!(!ws.join("made").exists());
}

/// One raw HTTP/1.1 request; the status code and the whole response.
fn request(host: &str, head: &str, body: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(host).unwrap();
    write!(
        stream,
        "{head}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    (status, response)
}

#[test]
fn the_page_refuses_requests_without_its_token_host_or_origin() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let log = recorded(&dir, &ws, "plain", "<b>hi</b>");
    let served = Served::start(&ws, &["replay", "--ui", &log.display().to_string()]);
    let (host, token) = (served.host(), served.token());
    assert!(
        host.starts_with("127.0.0.1:"),
        "loopback by default: {host}"
    );
    assert!(!served.url.contains(&log.display().to_string()));

    // The page, with its security headers.
    let (status, page) = request(
        &host,
        &format!("GET /{token}/ HTTP/1.1\r\nHost: {host}"),
        "",
    );
    assert_eq!(status, 200, "{page}");
    assert!(
        page.contains("content-security-policy: default-src 'none'; script-src 'self'"),
        "{page}"
    );
    assert!(page.contains("x-content-type-options: nosniff"), "{page}");
    // No token, or another one.
    for path in [
        "/".to_owned(),
        "/events".to_owned(),
        format!("/{}/", "0".repeat(64)),
    ] {
        let (status, text) = request(&host, &format!("GET {path} HTTP/1.1\r\nHost: {host}"), "");
        assert_eq!(status, 403, "{path}: {text}");
        assert!(text.contains("needs the session's token"), "{text}");
        assert!(!text.contains(&token));
    }
    // Another Host (DNS rebinding), another Origin.
    let (status, _) = request(
        &host,
        &format!("GET /{token}/ HTTP/1.1\r\nHost: evil.example:80"),
        "",
    );
    assert_eq!(status, 421);
    let (status, text) = request(
        &host,
        &format!("GET /{token}/events HTTP/1.1\r\nHost: {host}\r\nOrigin: http://evil.example"),
        "",
    );
    assert_eq!(status, 403, "{text}");
    let answer = r#"{"pending": 0, "answer": "once"}"#;
    let (status, text) = request(
        &host,
        &format!(
            "POST /{token}/answer HTTP/1.1\r\nHost: {host}\r\nOrigin: http://evil.example\r\nContent-Type: application/json"
        ),
        answer,
    );
    assert_eq!(status, 403, "{text}");
    // Another session's page (another server, its own token) cannot answer
    // this one's requests: its origin is refused, and so is its token.
    let other = Served::start(&ws, &["replay", "--ui", &log.display().to_string()]);
    assert_ne!(other.token(), token);
    let (status, text) = request(
        &host,
        &format!(
            "POST /{token}/answer HTTP/1.1\r\nHost: {host}\r\nOrigin: http://{}\r\nContent-Type: application/json",
            other.host()
        ),
        answer,
    );
    assert_eq!(status, 403, "{text}");
    let (status, text) = request(
        &host,
        &format!(
            "POST /{}/answer HTTP/1.1\r\nHost: {host}\r\nOrigin: http://{host}\r\nContent-Type: application/json",
            other.token()
        ),
        answer,
    );
    assert_eq!(status, 403, "{text}");
    // An answer needs an Origin, the page's own.
    let (status, text) = request(
        &host,
        &format!("POST /{token}/answer HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json"),
        answer,
    );
    assert_eq!(status, 403, "{text}");
    // From the page's origin, an answer to nothing pending is refused too.
    let (status, text) = request(
        &host,
        &format!(
            "POST /{token}/answer HTTP/1.1\r\nHost: {host}\r\nOrigin: http://{host}\r\nContent-Type: application/json"
        ),
        answer,
    );
    assert_eq!(status, 409, "{text}");
    // What the model wrote reaches the page escaped.
    let events = first_events(&host, &token);
    assert!(events.starts_with("HTTP/1.1 200"), "{events}");
    assert!(events.contains("&lt;b&gt;hi&lt;/b&gt;"), "{events}");
    assert!(!events.contains("<b>hi</b>"), "{events}");
}

/// The events stream's first frames: up to the status frame, which ends
/// what a new page is sent.
fn first_events(host: &str, token: &str) -> String {
    let mut stream = TcpStream::connect(host).unwrap();
    write!(
        stream,
        "GET /{token}/events HTTP/1.1\r\nHost: {host}\r\n\r\n"
    )
    .unwrap();
    let mut seen = Vec::new();
    let mut buffer = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains("\"op\":\"status\"") {
        let n = stream.read(&mut buffer).unwrap();
        assert!(
            n > 0,
            "the stream ended: {}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buffer[..n]);
    }
    String::from_utf8_lossy(&seen).into_owned()
}

#[test]
fn a_log_whose_chain_is_broken_is_not_served() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let log = recorded(&dir, &ws, "tampered", "the answer");
    let text = std::fs::read_to_string(&log).unwrap();
    std::fs::write(&log, text.replace("the answer", "another answer")).unwrap();
    let out = super::tack(&ws)
        .args(["replay", "--ui"])
        .arg(&log)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("hash"), "{stderr}");
    assert!(!stderr.contains("the session's page"), "{stderr}");
}

#[test]
fn a_run_code_programs_call_is_asked_about_on_its_own_card() {
    let Some(browser) = browser() else { return };
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let program = "const r = await tools.bash({command: 'echo nested'}); return r.stdout;";
    let model = script(
        &dir,
        &json!([calls(&[("c1", "run_code", json!({ "code": program }))]), {"text": "done"}]),
    );
    let log = log_in(&dir, "nested");
    let log_arg = log.display().to_string();
    let tack = Served::start(
        &ws,
        &[
            "run",
            "--ui",
            "--mode",
            "ask",
            "--presentation",
            "code",
            "--model",
            &model,
            "--log",
            &log_arg,
            "go",
        ],
    );
    let page = browser.run("nested", &tack.url, dir.path());
    let stderr = Arc::clone(&tack.stderr);
    assert_eq!(tack.wait(), 0, "{}", stderr.lock().unwrap());
    let ids: Vec<&str> = page["cards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|id| id.as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 2, "{page}");
    assert_eq!(ids[0], "c1");
    assert!(ids[1].starts_with("c1:code:"), "{page}");
    assert!(
        page["subApproval"]
            .as_str()
            .unwrap()
            .starts_with("approved once"),
        "{page}"
    );
    assert!(
        page["subContent"].as_str().unwrap().contains("nested"),
        "{page}"
    );
    assert!(
        page["parentNested"].as_str().unwrap().contains("bash"),
        "{page}"
    );
    let outcomes = of_type(&log, "approval/outcome");
    let answered: Vec<(&str, &str)> = outcomes
        .iter()
        .map(|o| {
            (
                o["tool"].as_str().unwrap(),
                o["outcome"]["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        answered,
        [("run_code", "allowed_once"), ("bash", "allowed_once")]
    );
}

#[test]
fn a_resumed_sessions_page_starts_with_its_earlier_turns() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let first = script(&dir, &json!([{"text": "the first answer"}]));
    let log = log_in(&dir, "resumed");
    super::tack(&ws)
        .args(["run", "--model", &first, "--log"])
        .arg(&log)
        .arg("first prompt")
        .assert()
        .success();
    let second = script(
        &dir,
        &json!([calls(&[("k1", "bash", json!({"command": "touch k1"}))]), {"text": "done"}]),
    );
    let log_arg = log.display().to_string();
    let tack = Served::start(
        &ws,
        &[
            "run",
            "--ui",
            "--mode",
            "ask",
            "--model",
            &second,
            "--resume",
            &log_arg,
            "second prompt",
        ],
    );
    // The page, opened while k1 waits for its answer, shows both turns.
    let (host, token) = (tack.host(), tack.token());
    let mut stream = TcpStream::connect(&host).unwrap();
    write!(
        stream,
        "GET /{token}/events HTTP/1.1\r\nHost: {host}\r\n\r\n"
    )
    .unwrap();
    let mut seen = Vec::new();
    let mut buffer = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains("\"op\":\"prompt\"") {
        let n = stream.read(&mut buffer).unwrap();
        assert!(n > 0, "{}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buffer[..n]);
    }
    let seen = String::from_utf8_lossy(&seen).into_owned();
    let first_at = seen.find("the first answer").unwrap();
    let second_at = seen.find("second prompt").unwrap();
    assert!(first_at < second_at, "{seen}");
    // Closing it denies k1, and the session ends.
    drop(stream);
    let stderr = Arc::clone(&tack.stderr);
    assert_eq!(tack.wait(), 0, "{}", stderr.lock().unwrap());
    let results = of_type(&log, "tool/result");
    assert_eq!(results.last().unwrap()["error"]["code"], "DENIED");
    assert!(!ws.join("k1").exists());
}
