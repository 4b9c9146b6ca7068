//! `tack chat` on a real terminal (a pseudo-terminal that `setsid -c` makes
//! its controlling terminal): line editing and history.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::*;

/// The `user` texts and the number of `turn/end` records in `log`.
fn turns(log: &Path) -> (Vec<String>, usize) {
    let Ok(text) = std::fs::read_to_string(log) else {
        return (Vec::new(), 0);
    };
    let records: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let users = records
        .iter()
        .filter(|r| r["type"] == "user")
        .map(|r| r["text"].as_str().unwrap().to_owned())
        .collect();
    let ends = records.iter().filter(|r| r["type"] == "turn/end").count();
    (users, ends)
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn prompts(screen: &Arc<Mutex<Vec<u8>>>) -> usize {
    String::from_utf8_lossy(&screen.lock().unwrap())
        .matches("> ")
        .count()
}

/// `tack chat` whose controlling terminal is a new pseudo-terminal.
struct Terminal {
    child: std::process::Child,
    master: std::fs::File,
    /// Everything `tack` drew on the terminal.
    screen: Arc<Mutex<Vec<u8>>>,
    /// The terminal's side `tack` uses (to read its mode).
    slave: std::os::fd::OwnedFd,
}

fn on_a_terminal(dir: &tempfile::TempDir, log: &Path) -> Terminal {
    let ws = workspace(dir);
    let pty = nix::pty::openpty(None, None).unwrap();
    let child = Command::new("setsid")
        .arg("--ctty")
        .arg(assert_cmd::cargo::cargo_bin("tack"))
        .args(["chat", "--log"])
        .arg(log)
        .current_dir(&ws)
        .env("XDG_STATE_HOME", test_state_home())
        .env("XDG_CONFIG_HOME", test_state_home().join("config"))
        .env("HOME", test_state_home().join("home"))
        .env("TERM", "xterm")
        .stdin(Stdio::from(pty.slave.try_clone().unwrap()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let master = std::fs::File::from(pty.master);
    let screen = Arc::new(Mutex::new(Vec::new()));
    let sink = screen.clone();
    let mut reader = master.try_clone().unwrap();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    });
    Terminal {
        child,
        master,
        screen,
        slave: pty.slave,
    }
}

#[test]
fn sigterm_at_the_prompt_gives_the_terminal_its_mode_back() {
    use nix::sys::termios::{LocalFlags, tcgetattr};
    let dir = tempfile::tempdir().unwrap();
    let log = log_in(&dir, "term");
    let terminal = on_a_terminal(&dir, &log);
    wait_for("the prompt", || prompts(&terminal.screen) >= 1);
    // The editor holds the terminal raw while it waits.
    let raw = tcgetattr(&terminal.slave).unwrap().local_flags;
    assert!(!raw.contains(LocalFlags::ICANON), "{raw:?}");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(terminal.child.id()).unwrap()),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let out = terminal.child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(143), "{out:?}");
    let mode = tcgetattr(&terminal.slave).unwrap().local_flags;
    assert!(
        mode.contains(LocalFlags::ICANON | LocalFlags::ECHO),
        "the terminal was left raw: {mode:?}"
    );
    drop(terminal.master);
}

#[test]
fn chat_edits_lines_and_recalls_history_on_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let log = log_in(&dir, "tty");
    let Terminal {
        child,
        mut master,
        screen,
        slave: _slave,
    } = on_a_terminal(&dir, &log);
    wait_for("the first prompt", || prompts(&screen) >= 1);
    // Typed with a mistake, fixed with Backspace and cursor moves.
    master.write_all(b"hellp\x7fo wrld").unwrap();
    master.write_all(b"\x1b[D\x1b[D\x1b[Do\r").unwrap();
    wait_for("the first turn", || turns(&log).1 >= 1);
    wait_for("the second prompt", || prompts(&screen) >= 2);
    // Up arrow recalls it.
    master.write_all(b"\x1b[A\r").unwrap();
    wait_for("the second turn", || turns(&log).1 >= 2);
    // Ctrl-D on an empty line ends the chat.
    wait_for("the third prompt", || prompts(&screen) >= 3);
    master.write_all(b"\x04").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(turns(&log).0, ["hello world", "hello world"]);
    // The editing happened on the terminal, not in stdout.
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(!stdout.contains("> "), "{stdout}");
    assert!(stdout.contains("[user] hello world"), "{stdout}");
}
