//! The deterministic built-in model: no key, no network.

use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use serde_json::json;
use tack_core::host::ToolSchema;
use tack_core::tool::ToolCall;

use super::{ChatModel, ModelError};
use crate::message::{Message, Reply};

/// How many characters of a tool result the mock repeats (as the seed's mock).
const SUMMARY_CHARS: usize = 60;

/// A deterministic model for demos and tests, the default of `tack run`.
///
/// It reads the last user message and understands:
///
/// | says | calls |
/// |---|---|
/// | `read file X` / `读文件 X` | `read_file {"path": X}` |
/// | `list dir X` / `列目录 X` | `list_dir {"path": X}` |
/// | `run X` / `运行 X` | `bash {"command": X}` |
/// | `write X: TEXT` / `写文件 X: TEXT` | `write_file {"path": X, "content": TEXT}` |
///
/// After a batch of tool results it answers `tool NAME returned: …` with
/// the first 60 characters of each result (an error's code and message
/// included). Anything else gets a text answer saying what it understands.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use tack_agent::{ChatModel, Message, MockModel, Reply};
/// let mock = MockModel::new();
/// let reply = mock.complete(&[Message::User("hello".into())], &[]).await.unwrap();
/// assert!(matches!(reply, Reply::Text(t) if t.contains("read file")));
/// # }
/// ```
#[derive(Debug, Default)]
pub struct MockModel {
    next_call: AtomicU64,
}

impl MockModel {
    /// A mock model.
    pub fn new() -> Self {
        Self::default()
    }

    fn call(&self, name: &str, arguments: serde_json::Value) -> ToolCall {
        let n = self.next_call.fetch_add(1, Ordering::Relaxed) + 1;
        ToolCall::new(format!("call_{n}"), name, arguments.to_string())
    }

    /// The tool call a prompt asks for, if the mock understands it.
    fn understand(&self, prompt: &str) -> Option<(&'static str, serde_json::Value)> {
        let prompt = prompt.trim();
        let after = |prefixes: &[&str]| {
            prefixes.iter().find_map(|p| {
                prompt
                    .strip_prefix(p)
                    .map(str::trim)
                    .filter(|rest| !rest.is_empty())
            })
        };
        if let Some(path) = after(&["read file ", "读文件 ", "读文件"]) {
            return Some(("read_file", json!({ "path": path })));
        }
        if let Some(path) = after(&["list dir ", "列目录 ", "列目录"]) {
            return Some(("list_dir", json!({ "path": path })));
        }
        if let Some(command) = after(&["run ", "运行 ", "运行"]) {
            return Some(("bash", json!({ "command": command })));
        }
        if let Some(rest) = after(&["write ", "写文件 ", "写文件"]) {
            let (path, content) = rest.split_once(':')?;
            let content = content.strip_prefix(' ').unwrap_or(content);
            return Some((
                "write_file",
                json!({ "path": path.trim(), "content": content }),
            ));
        }
        None
    }
}

const HELP: &str = "I am tack's mock model (no key, no network). I understand: \
`read file X` (读文件 X), `list dir X` (列目录 X), `run COMMAND` (运行 COMMAND), \
`write X: TEXT`. For a real model set OPENAI_API_KEY and use --model openai:MODEL (e.g. openai:gpt-4o-mini; or OPENAI_MODEL with --model openai).";

/// A line without a `cat -n` style number column (`   12\tcode`).
fn without_line_number(line: &str) -> &str {
    match line.split_once('\t') {
        Some((number, rest))
            if !number.trim().is_empty() && number.trim().bytes().all(|b| b.is_ascii_digit()) =>
        {
            rest
        }
        _ => line,
    }
}

/// `tool NAME returned: …` for one result, whitespace collapsed and line
/// numbers dropped, cut to [`SUMMARY_CHARS`].
fn summary(tool: &str, content: &str) -> String {
    let flat: String = content
        .lines()
        .map(without_line_number)
        .flat_map(str::split_whitespace)
        .collect::<Vec<_>>()
        .join(" ");
    let mut cut: String = flat.chars().take(SUMMARY_CHARS).collect();
    if flat.chars().count() > SUMMARY_CHARS {
        cut.push('…');
    }
    format!("tool {tool} returned: {cut}")
}

#[async_trait]
impl ChatModel for MockModel {
    fn name(&self) -> String {
        "mock".to_owned()
    }

    async fn complete(
        &self,
        messages: &[Message],
        tools: &[ToolSchema],
    ) -> Result<Reply, ModelError> {
        // After a batch: summarise its results (context lines may follow them).
        let mut results = Vec::new();
        for message in messages.iter().rev() {
            match message {
                Message::ToolResult { tool, content, .. } => results.push(summary(tool, content)),
                Message::Context(_) => {}
                _ => break,
            }
        }
        if !results.is_empty() {
            results.reverse();
            return Ok(Reply::Text(results.join("; ")));
        }
        let last_user = messages.iter().rev().find_map(|m| match m {
            Message::User(text) => Some(text.as_str()),
            _ => None,
        });
        let Some((tool, args)) = last_user.and_then(|p| self.understand(p)) else {
            return Ok(Reply::Text(HELP.to_owned()));
        };
        if !tools.iter().any(|t| t.name == tool) {
            return Ok(Reply::Text(format!(
                "I would call `{tool}`, but this host does not offer it."
            )));
        }
        Ok(Reply::ToolCalls(vec![self.call(tool, args)]))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn understands_the_seed_prompts() {
        let m = MockModel::new();
        assert_eq!(
            m.understand("读文件 README.md").unwrap().1["path"],
            "README.md"
        );
        assert_eq!(m.understand("list dir .").unwrap().0, "list_dir");
        assert_eq!(m.understand("运行 ls -la").unwrap().1["command"], "ls -la");
        let (tool, args) = m.understand("write a.txt: hi: there").unwrap();
        assert_eq!(
            (tool, args["path"].as_str(), args["content"].as_str()),
            ("write_file", Some("a.txt"), Some("hi: there"))
        );
        assert!(m.understand("what is the weather").is_none());
    }

    #[test]
    fn summary_cuts_at_sixty_chars() {
        let long = "x".repeat(100);
        let s = summary("read_file", &long);
        assert_eq!(s, format!("tool read_file returned: {}…", "x".repeat(60)));
        assert_eq!(summary("t", "a\n b"), "tool t returned: a b");
        assert_eq!(
            summary("read_file", "     1\t# tack\n     2\t\n     3\tx\t1"),
            "tool read_file returned: # tack x 1"
        );
    }
}
