//! The transcript hooks read: a JSONL file in Claude Code's transcript
//! shape, kept beside the session log (outside the workspace), so scripts
//! written for Claude Code's `transcript_path` can parse it.
//!
//! One line per message, as Claude Code writes them:
//!
//! ```json
//! {"type":"user","message":{"role":"user","content":"fix the test"},"uuid":"…","parentUuid":null,"sessionId":"…","timestamp":"2026-01-02T03:04:05.678Z","cwd":"/work/repo","isSidechain":false,"userType":"external","version":"tack"}
//! {"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"Bash","input":{"command":"cargo test"}}]},…}
//! {"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"…","is_error":false}]},…}
//! {"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Done."}]},…}
//! ```
//!
//! Tool names and inputs are the ones hooks see (Claude Code's by default).
//! The session log stays the record; this file is a view of it for hooks.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tack_agent::{Event, Record};
use tack_core::tool::ContentBlock;
use tack_hooks::ToolNames;

/// The transcript's path for the session log `log`:
/// `<log's name without .jsonl>.transcript.jsonl` beside it.
pub fn path_for(log: &Path) -> PathBuf {
    let stem = log
        .file_stem()
        .map_or_else(|| "session".into(), |s| s.to_string_lossy().into_owned());
    log.with_file_name(format!("{stem}.transcript.jsonl"))
}

/// Writes the transcript as the session's records come.
pub struct Transcript {
    path: PathBuf,
    session_id: String,
    cwd: PathBuf,
    names: ToolNames,
    state: Mutex<State>,
}

struct State {
    file: Option<std::fs::File>,
    parent: Option<String>,
    warned: bool,
}

impl Transcript {
    /// A transcript at `path` (appended to when it exists, as on
    /// `--resume`).
    pub fn new(path: PathBuf, session_id: String, cwd: PathBuf, names: ToolNames) -> Self {
        use std::os::unix::fs::OpenOptionsExt;
        // A link planted where the transcript goes is never followed.
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .custom_flags(nix::libc::O_NOFOLLOW)
            .open(&path);
        let warned = match &file {
            Ok(_) => false,
            Err(e) => {
                eprintln!(
                    "tack: warning: cannot write the hooks' transcript {}: {e} (a link there is never followed); hooks get its path, but it stays empty",
                    path.display()
                );
                true
            }
        };
        Self {
            path,
            session_id,
            cwd,
            names,
            state: Mutex::new(State {
                file: file.ok(),
                parent: None,
                warned,
            }),
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Adds what `record` says to the transcript, if it is a message.
    pub fn record(&self, record: &Record) {
        let Some((kind, message)) = self.message(&record.event) else {
            return;
        };
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let uuid = uuid_of(&self.session_id, record.seq);
        let line = json!({
            "type": kind,
            "message": message,
            "uuid": uuid,
            "parentUuid": state.parent,
            "sessionId": self.session_id,
            "timestamp": iso8601(record.ts),
            "cwd": self.cwd.to_string_lossy(),
            "isSidechain": false,
            "userType": "external",
            "version": concat!("tack ", env!("CARGO_PKG_VERSION")),
        });
        state.parent = Some(uuid);
        let written = match state.file.as_mut() {
            Some(file) => writeln!(file, "{line}").and_then(|()| file.flush()),
            None => Ok(()),
        };
        if let Err(e) = written
            && !state.warned
        {
            state.warned = true;
            eprintln!(
                "tack: warning: cannot write the hooks' transcript {}: {e}",
                self.path.display()
            );
        }
    }

    fn message(&self, event: &Event) -> Option<(&'static str, Value)> {
        match event {
            Event::User { text } => Some(("user", json!({"role": "user", "content": text}))),
            Event::Assistant { text } | Event::AssistantNote { text } => Some((
                "assistant",
                json!({"role": "assistant", "content": [{"type": "text", "text": text}]}),
            )),
            Event::ToolCall {
                call_id,
                tool,
                arguments,
                ..
            } => {
                let input: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
                let (name, input) = match self.names {
                    ToolNames::Tack => (tool.clone(), input),
                    _ => (
                        tack_hooks::claude_name(tool).to_owned(),
                        tack_hooks::names::to_claude_input(tool, &input, &self.cwd),
                    ),
                };
                Some((
                    "assistant",
                    json!({"role": "assistant", "content": [
                        {"type": "tool_use", "id": call_id, "name": name, "input": input}
                    ]}),
                ))
            }
            Event::ToolResult { outcome, .. } => {
                let text: Vec<String> = outcome
                    .content
                    .iter()
                    .filter_map(|block| match block {
                        ContentBlock::Text { text } => Some(text.clone()),
                        ContentBlock::Json { value } => Some(value.to_string()),
                        _ => None,
                    })
                    .collect();
                Some((
                    "user",
                    json!({"role": "user", "content": [{
                        "type": "tool_result",
                        "tool_use_id": outcome.call_id.to_string(),
                        "content": text.join("\n"),
                        "is_error": !outcome.is_success(),
                    }]}),
                ))
            }
            _ => None,
        }
    }
}

/// A UUID-shaped id for the record `seq` of `session`.
fn uuid_of(session: &str, seq: u64) -> String {
    let hash = Sha256::digest(format!("{session}/{seq}").as_bytes());
    let hex: String = hash.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// Milliseconds since the epoch as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
fn iso8601(ms: u64) -> String {
    let time = crate::utc_time::UtcTime::from_millis(ms);
    format!(
        "{}T{}.{:03}Z",
        time.date(),
        time.time_of_day(),
        time.millisecond
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_planted_link_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("bashrc");
        std::fs::write(&target, "kept\n").unwrap();
        let link = dir.path().join("s.transcript.jsonl");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let transcript =
            Transcript::new(link, "s".into(), dir.path().into(), ToolNames::ClaudeCode);
        transcript.record(&Record::new(1, 0, Event::User { text: "hi".into() }));
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "kept\n");
    }

    #[test]
    fn timestamps_and_ids_look_like_claude_codes() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(iso8601(1_767_225_599_999), "2025-12-31T23:59:59.999Z");
        let id = uuid_of("s", 1);
        assert_eq!(id.len(), 36);
        assert_ne!(id, uuid_of("s", 2));
        assert_eq!(
            path_for(Path::new("/state/ws/1-2.jsonl")),
            Path::new("/state/ws/1-2.transcript.jsonl")
        );
    }
}
