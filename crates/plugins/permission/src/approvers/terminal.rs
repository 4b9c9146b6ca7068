//! An approver that prompts on a terminal.

use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;

use async_trait::async_trait;
use parking_lot::Mutex;
use tack_core::policy::{ApprovalOutcome, ApprovalRequest, ApprovalService};
use tokio_util::sync::CancellationToken;

use super::{Answer, settle, shown_arguments, shown_programs};
use crate::SessionRules;

/// How many unreadable answers before the prompt gives up (and denies).
const ATTEMPTS: usize = 3;

/// Prompts on a terminal:
///
/// ```text
/// tack: tool `bash` (executes) asks to run — call c1
///   call: bash: ls -la
///   arguments: {"command":"ls -la"}
///   runs: ls
///   why: permission mode `ask` requires approval for executes tools like `bash`
/// Allow? [y] yes, once  [n] no  [a] always for this session: _
/// ```
///
/// The summary and the arguments (compact JSON; longer than 2000 characters,
/// its first and last 1000 with the number left out between them, so nothing
/// can hide past a cut) are shown with every control character escaped, so
/// text the model chose cannot drive the terminal or fake other lines. For a
/// shell command (an argument named `command`, `cmd` or `script`) the
/// `runs:` line lists the programs it runs, as the permission rules read
/// them, and names a part that cannot be read.
///
/// `y` allows this call (`allowed_once`), `a` allows it and records a session
/// rule for the tool (and agent) (`allowed_always`), anything starting with
/// `n` or an empty line denies; after three unreadable answers it denies. When stdin is not a terminal nothing is
/// read and the outcome is `unavailable`; end of input or an I/O error is
/// `unavailable` too; cancellation is `cancelled`.
///
/// Prompts are serialized (one at a time). A cancelled prompt on the real
/// stdin cannot take back the blocking read: the next line typed answers that
/// withdrawn prompt and is discarded.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use std::io::Cursor;
/// use tack_core::policy::{ApprovalOutcome, ApprovalRequest, ApprovalService};
/// use tack_core::tool::{CallId, Tier};
/// use tack_permission::{SessionRules, TerminalApprover};
///
/// let session = SessionRules::new();
/// // An injected reader that declares itself a terminal (tests, embedding).
/// let approver = TerminalApprover::with_io(Cursor::new("a\n"), std::io::sink(), true, session.clone());
/// let req = ApprovalRequest::new(
///     CallId::from("c1"), "bash", Tier::Executes, None,
///     serde_json::json!({"command": "ls -la"}), "runs a command",
/// );
/// assert_eq!(approver.request(req, Default::default()).await, ApprovalOutcome::AllowedAlways);
/// assert_eq!(session.snapshot().len(), 1); // "always" recorded a session rule
/// # }
/// ```
#[derive(Clone)]
pub struct TerminalApprover {
    io: Arc<Mutex<Io>>,
    session: SessionRules,
}

impl std::fmt::Debug for TerminalApprover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TerminalApprover").finish_non_exhaustive()
    }
}

enum Io {
    /// stdin for answers, stderr for prompts.
    Stdio,
    Injected {
        reader: Box<dyn BufRead + Send>,
        writer: Box<dyn Write + Send>,
        is_terminal: bool,
    },
}

/// Why no answer could be read.
#[derive(Debug, thiserror::Error)]
enum PromptError {
    #[error("the approval prompt needs a terminal, and stdin is not one")]
    NotATerminal,
    #[error("the terminal closed before an answer was given")]
    Eof,
    #[error("the terminal failed: {0}")]
    Io(#[from] std::io::Error),
}

impl TerminalApprover {
    /// Prompts on stderr and reads stdin; records "always" answers in `session`.
    pub fn stdio(session: SessionRules) -> Self {
        Self {
            io: Arc::new(Mutex::new(Io::Stdio)),
            session,
        }
    }

    /// Reads answers from `reader` and writes prompts to `writer`;
    /// `is_terminal` says whether the reader counts as a terminal (when it
    /// does not, nothing is read and the outcome is `unavailable`).
    pub fn with_io(
        reader: impl BufRead + Send + 'static,
        writer: impl Write + Send + 'static,
        is_terminal: bool,
        session: SessionRules,
    ) -> Self {
        Self {
            io: Arc::new(Mutex::new(Io::Injected {
                reader: Box::new(reader),
                writer: Box::new(writer),
                is_terminal,
            })),
            session,
        }
    }
}

/// The prompt text (control characters escaped: the summary, the arguments
/// and the reason may quote model-chosen text, and must not drive the
/// terminal).
pub(crate) fn prompt_text(request: &ApprovalRequest) -> String {
    let agent = request
        .agent
        .as_ref()
        .map(|a| format!(" for agent {}", ApprovalRequest::escape_control(a.as_str())))
        .unwrap_or_default();
    // The pipeline always fills the summary; a request from elsewhere may not.
    let summary = if request.summary.is_empty() {
        ApprovalRequest::escape_control(&request.tool)
    } else {
        ApprovalRequest::escape_control(&request.summary)
    };
    let runs = shown_programs(request)
        .map(|runs| format!("\n  {runs}"))
        .unwrap_or_default();
    format!(
        "tack: tool `{}` ({}) asks to run{agent} — call {}\n  call: {summary}\n  arguments: {}{runs}\n  why: {}\nAllow? [y] yes, once  [n] no  [a] always for this session: ",
        ApprovalRequest::escape_control(&request.tool),
        request.tier,
        ApprovalRequest::escape_control(request.call_id.as_str()),
        shown_arguments(request),
        ApprovalRequest::escape_control(&request.reason),
    )
}

fn parse_answer(line: &str) -> Option<Answer> {
    match line.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => Some(Answer::Once),
        "a" | "always" => Some(Answer::AlwaysForSession),
        "" | "n" | "no" => Some(Answer::Deny { reason: None }),
        _ => None,
    }
}

fn ask(
    reader: &mut dyn BufRead,
    writer: &mut dyn Write,
    prompt: &str,
) -> Result<Answer, PromptError> {
    for _ in 0..ATTEMPTS {
        writer.write_all(prompt.as_bytes())?;
        writer.flush()?;
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Err(PromptError::Eof);
        }
        if let Some(answer) = parse_answer(&line) {
            return Ok(answer);
        }
        writer
            .write_all(b"please answer y (yes, once), n (no) or a (always for this session)\n")?;
    }
    Ok(Answer::Deny {
        reason: Some(format!("no valid answer after {ATTEMPTS} attempts")),
    })
}

fn prompt_blocking(io: &Mutex<Io>, prompt: &str) -> Result<Answer, PromptError> {
    let mut io = io.lock();
    match &mut *io {
        Io::Stdio => {
            let stdin = std::io::stdin();
            if !stdin.is_terminal() {
                return Err(PromptError::NotATerminal);
            }
            ask(&mut stdin.lock(), &mut std::io::stderr().lock(), prompt)
        }
        Io::Injected {
            reader,
            writer,
            is_terminal,
        } => {
            if !*is_terminal {
                return Err(PromptError::NotATerminal);
            }
            ask(reader.as_mut(), writer.as_mut(), prompt)
        }
    }
}

#[async_trait]
impl ApprovalService for TerminalApprover {
    async fn request(
        &self,
        request: ApprovalRequest,
        cancel: CancellationToken,
    ) -> ApprovalOutcome {
        if cancel.is_cancelled() {
            return ApprovalOutcome::Cancelled;
        }
        tracing::info!(
            call_id = %ApprovalRequest::escape_control(request.call_id.as_str()),
            tool = %request.tool,
            summary = %request.summary,
            arguments = %shown_arguments(&request),
            "asking on the terminal for approval"
        );
        let io = self.io.clone();
        let prompt = prompt_text(&request);
        let task = tokio::task::spawn_blocking(move || prompt_blocking(&io, &prompt));
        let answered = tokio::select! {
            biased;
            () = cancel.cancelled() => return ApprovalOutcome::Cancelled,
            answered = task => answered,
        };
        match answered {
            Ok(Ok(answer)) => settle(answer, &request, &self.session),
            Ok(Err(error)) => ApprovalOutcome::Unavailable {
                reason: Some(error.to_string()),
            },
            Err(join) => ApprovalOutcome::Unavailable {
                reason: Some(format!("the approval prompt failed: {join}")),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    use super::super::shown::test_request as request;

    #[test]
    fn the_prompt_shows_the_summary_and_the_arguments_escaped() {
        let prompt = prompt_text(&request(
            json!({"command": "ls\r\u{1b}[2K[tool:bash] -> ok"}),
        ));
        assert!(
            prompt.contains("\n  call: bash: ls\\r\\u{1b}[2K[tool:bash] -> ok\n"),
            "{prompt}"
        );
        assert!(
            prompt.contains(r#"  arguments: {"command":"ls\r\u001b[2K[tool:bash] -> ok"}"#),
            "{prompt}"
        );
        assert!(
            !prompt.contains('\u{1b}') && !prompt.contains('\r'),
            "{prompt}"
        );
        assert!(!prompt.contains("null"), "{prompt}");
    }

    #[test]
    fn long_arguments_show_head_and_tail_and_say_how_much_is_missing() {
        let shown = shown_arguments(&request(json!({"command": "x".repeat(5000)})));
        assert!(shown.starts_with(r#"{"command":"xxx"#), "{shown}");
        assert!(shown.ends_with(r#"xxx"}"#), "{shown}");
        assert!(
            shown.contains(" … (3014 characters not shown) … "),
            "{shown}"
        );
    }

    #[test]
    fn nothing_hides_past_the_cut_of_a_long_command() {
        let command = format!("ls{}; rm victim", " ".repeat(3000));
        let prompt = prompt_text(&request(json!({ "command": command })));
        assert!(prompt.contains(r#"; rm victim"}"#), "{prompt}");
        assert!(prompt.contains("\n  runs: ls, rm\n  why: "), "{prompt}");
    }

    #[test]
    fn a_bidi_override_in_the_arguments_is_escaped() {
        let shown = shown_arguments(&request(json!({"command": "echo \u{202e}hello"})));
        assert!(shown.contains(r"\u{202e}"), "{shown}");
        assert!(!shown.contains('\u{202e}'), "{shown}");
    }
}
