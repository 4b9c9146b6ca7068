//! What a person approving a call is shown: the arguments, head and tail
//! when long (nothing hides past a cut), and for a shell command the
//! programs it runs.

use tack_core::policy::ApprovalRequest;

use crate::command::PreparedCommand;
use crate::rules::COMMAND_ARGS;

/// The most characters of the arguments a prompt or a log line shows; of
/// longer arguments the first and last halves are shown, with the number of
/// characters left out between them.
pub(crate) const SHOWN_ARGUMENT_CHARS: usize = 2000;

/// The arguments as one escaped line of compact JSON; longer than
/// [`SHOWN_ARGUMENT_CHARS`] characters, its head and tail with the count of
/// the characters elided between them.
pub(crate) fn shown_arguments(request: &ApprovalRequest) -> String {
    let json = ApprovalRequest::escape_control(&request.arguments.to_string());
    head_and_tail(&json, SHOWN_ARGUMENT_CHARS)
}

/// `text` whole, or its first and last `max / 2` characters around
/// ` … (N characters not shown) … `.
fn head_and_tail(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text.to_owned();
    }
    let half = max / 2;
    let head: String = text.chars().take(half).collect();
    let tail: String = text.chars().skip(total - half).collect();
    format!(
        "{head} … ({} characters not shown) … {tail}",
        total - 2 * half
    )
}

/// For each shell command argument (`command`, `cmd`, `script`): the
/// programs its simple commands run, as the permission rules read them
/// (`runs: ls, rm`), wrappers included (`sudo, rm`); words built at run time
/// are shown as written, and a part that cannot be read is named. `None`
/// when the call has no such argument.
pub(crate) fn shown_programs(request: &ApprovalRequest) -> Option<String> {
    let mut lines = Vec::new();
    for arg in COMMAND_ARGS {
        let Some(command) = request.arguments.get(arg).and_then(|v| v.as_str()) else {
            continue;
        };
        let prepared = PreparedCommand::new(command);
        let mut programs: Vec<&str> = Vec::new();
        for sub in &prepared.commands {
            for view in &sub.views {
                if let Some(first) = view.words.first() {
                    if !programs.contains(&first.source()) {
                        programs.push(first.source());
                    }
                }
            }
        }
        let mut line = if programs.is_empty() {
            "nothing".to_owned()
        } else {
            programs.join(", ")
        };
        if let Some(why) = &prepared.unread {
            line.push_str(&format!(" (and a part that cannot be read: {why})"));
        }
        let label = if arg == "command" {
            String::new()
        } else {
            format!(" ({arg})")
        };
        lines.push(format!(
            "runs{label}: {}",
            ApprovalRequest::escape_control(&line)
        ));
    }
    (!lines.is_empty()).then(|| lines.join("\n  "))
}

/// A `bash` approval request with `arguments`, for the approvers' tests.
#[cfg(test)]
pub(super) fn test_request(arguments: serde_json::Value) -> ApprovalRequest {
    use tack_core::tool::{CallId, Tier};
    ApprovalRequest::new(
        CallId::from("c1"),
        "bash",
        Tier::Executes,
        None,
        arguments,
        "commands ask",
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    use super::test_request as request;

    #[test]
    fn short_text_is_whole_and_long_text_keeps_head_and_tail() {
        assert_eq!(head_and_tail("abcdef", 6), "abcdef");
        assert_eq!(
            head_and_tail("abcdefghij", 4),
            "ab … (6 characters not shown) … ij"
        );
        assert_eq!(
            head_and_tail("ééééé", 2),
            "é … (3 characters not shown) … é"
        );
    }

    #[test]
    fn what_hides_past_the_cut_is_shown_in_the_tail_and_the_programs() {
        let command = format!("ls{}; rm victim", " ".repeat(3000));
        let req = request(json!({ "command": command }));
        let shown = shown_arguments(&req);
        assert!(shown.starts_with(r#"{"command":"ls "#), "{shown}");
        assert!(shown.ends_with(r#"; rm victim"}"#), "{shown}");
        assert!(shown.contains("(1027 characters not shown)"), "{shown}");
        assert_eq!(shown_programs(&req).as_deref(), Some("runs: ls, rm"));
    }

    #[test]
    fn programs_name_wrappers_dynamic_words_and_unreadable_parts() {
        let runs = |c: &str| shown_programs(&request(json!({ "command": c }))).unwrap();
        assert_eq!(runs("sudo timeout 5 \\rm -rf x"), "runs: sudo, timeout, rm");
        assert_eq!(runs("bash -c 'git status && ls'"), "runs: git, ls, bash");
        assert_eq!(runs(""), "runs: nothing");
        let unread = runs("$(echo rm) x | sh");
        assert!(
            unread.starts_with("runs: echo, $(echo rm), sh (and a part"),
            "{unread}"
        );
        assert!(shown_programs(&request(json!({ "path": "x" }))).is_none());
        assert_eq!(
            shown_programs(&request(json!({ "cmd": "ls\u{1b}[2K" }))).unwrap(),
            "runs (cmd): ls\\u{1b}[2K"
        );
    }
}
