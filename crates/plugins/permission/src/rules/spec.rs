//! The compact rule syntax: `tool_glob` or `tool_glob(arg: "pattern", …)`.

use super::{COMMAND_ARGS, Rule, RuleError};
use crate::Action;

pub(super) fn parse(action: Action, text: &str) -> Result<Rule, RuleError> {
    let syntax = |message: &str| RuleError::Syntax {
        rule: text.to_owned(),
        message: message.to_owned(),
    };
    let text_trimmed = text.trim();
    let (tool, rest) = match text_trimmed.find('(') {
        Some(open) => (&text_trimmed[..open], Some(&text_trimmed[open + 1..])),
        None => (text_trimmed, None),
    };
    let tool = tool.trim();
    if tool.is_empty() {
        return Err(syntax("the tool name pattern is empty"));
    }
    let mut builder = Rule::builder(action, tool);
    if let Some(rest) = rest {
        let inner = rest
            .trim_end()
            .strip_suffix(')')
            .ok_or_else(|| syntax("missing `)` at the end"))?;
        let mut input = inner.trim();
        while !input.is_empty() {
            let colon = input
                .find(':')
                .ok_or_else(|| syntax("expected `arg: \"pattern\"`"))?;
            let arg = input[..colon].trim();
            if arg.is_empty()
                || !arg
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
            {
                return Err(syntax("expected an argument name before `:`"));
            }
            let after = input[colon + 1..].trim_start();
            let quoted = after
                .strip_prefix('"')
                .ok_or_else(|| syntax("the pattern must be a double-quoted string"))?;
            let (pattern, consumed) =
                read_quoted(quoted).ok_or_else(|| syntax("unterminated string"))?;
            builder = if COMMAND_ARGS.contains(&arg) {
                builder.command(arg, pattern)
            } else {
                builder.path(arg, pattern)
            };
            input = quoted[consumed..].trim_start();
            if let Some(next) = input.strip_prefix(',') {
                input = next.trim_start();
            } else if !input.is_empty() {
                return Err(syntax("expected `,` between argument patterns"));
            }
        }
    }
    builder.build()
}

/// Reads a string after its opening quote (`\"` and `\\` escapes); returns
/// the text and the bytes consumed including the closing quote.
fn read_quoted(s: &str) -> Option<(String, usize)> {
    let mut out = String::new();
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((out, i + 1)),
            '\\' => out.push(chars.next()?.1),
            c => out.push(c),
        }
    }
    None
}
