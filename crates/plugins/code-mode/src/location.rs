//! Where in the model's program an error is.
//!
//! The program runs wrapped as the body of an async function. The wrapper's
//! head sits on the program's first line (so line numbers are the program's)
//! and its tail on a line of its own after the program. Positions that the
//! parser or the engine report in the wrapped text are mapped back here:
//! columns on the first line lose the head's width, and a position in the
//! tail (an unclosed brace, bracket or string) becomes the end of the
//! program.

use std::fmt::Write as _;

/// The wrapper's head, on the program's first line.
pub(crate) const HEAD: &str = "(async () => {";
/// The wrapper's tail, on a line after the program.
pub(crate) const TAIL: &str = "\n})()";
/// The file name the engine reports positions under.
pub(crate) const FILE_NAME: &str = "program";

/// Longest stretch of a line quoted on each side of the column.
const QUOTE_SIDE: usize = 60;

/// `code` wrapped as the body of an async function.
pub(crate) fn wrap(code: &str) -> String {
    format!("{HEAD}{code}{TAIL}")
}

/// A position in the program: 1-based line and column (in characters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Position {
    pub(crate) line: usize,
    pub(crate) column: usize,
    /// The wrapped position was past the program's end (in the wrapper's
    /// tail): the program ended before something it opened was closed.
    pub(crate) at_end: bool,
}

/// The program a wrapped text was made from, to map positions back.
pub(crate) struct Program<'a> {
    code: &'a str,
}

impl<'a> Program<'a> {
    pub(crate) fn new(code: &'a str) -> Self {
        Self { code }
    }

    fn lines(&self) -> impl Iterator<Item = &'a str> {
        self.code.split('\n')
    }

    fn line_count(&self) -> usize {
        self.lines().count()
    }

    fn line_text(&self, line: usize) -> Option<&'a str> {
        let text = self.lines().nth(line.checked_sub(1)?)?;
        Some(text.strip_suffix('\r').unwrap_or(text))
    }

    /// The end of the program: after the last character of its last line.
    fn end(&self) -> Position {
        let line = self.line_count();
        let column = self.line_text(line).map_or(0, |t| t.chars().count()) + 1;
        Position {
            line,
            column,
            at_end: true,
        }
    }

    /// Maps a 1-based line and column (in characters) of the wrapped text.
    pub(crate) fn map(&self, line: usize, column: usize) -> Position {
        let line = line.max(1);
        let column = column.max(1);
        if line > self.line_count() {
            return self.end();
        }
        let column = if line == 1 {
            match column.checked_sub(HEAD.chars().count()) {
                Some(c) if c >= 1 => c,
                _ => 1, // in the head itself: the program's start
            }
        } else {
            column
        };
        Position {
            line,
            column,
            at_end: false,
        }
    }

    /// Maps a byte offset into the wrapped text (clamped to its length).
    #[cfg_attr(not(feature = "typescript"), allow(dead_code))]
    pub(crate) fn map_offset(&self, offset: usize) -> Position {
        let wrapped = wrap(self.code);
        let mut offset = offset.min(wrapped.len());
        while !wrapped.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &wrapped[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before[line_start..].chars().count() + 1;
        self.map(line, column)
    }

    /// `message`, located: `SyntaxError at line 3, column 7: …`, then the
    /// program's line with a caret under the column.
    pub(crate) fn describe(&self, kind: &str, message: &str, at: Position) -> String {
        let mut out = format!(
            "{kind} at line {}, column {}: {message}",
            at.line, at.column
        );
        if at.at_end {
            out.push_str(
                " (at the end of the program: is a brace, bracket, parenthesis or string left open?)",
            );
        }
        if let Some(text) = self.line_text(at.line) {
            let (quoted, caret) = quote(text, at.column);
            let gutter = at.line.to_string();
            let _ = write!(
                out,
                "\n {gutter} | {quoted}\n {} | {}^",
                " ".repeat(gutter.len()),
                " ".repeat(caret)
            );
        }
        out
    }

    /// Rewrites every `program:<line>:<column>` of an engine message (stack
    /// frames, syntax errors) to the program's own position, and drops the
    /// stack frames of the wrapper's tail (the call that starts the
    /// program), which are not the program's.
    pub(crate) fn rewrite_positions(&self, text: &str) -> String {
        let lines = self.line_count();
        let mut out = Vec::new();
        for line in text.split('\n') {
            let frame = line.trim_start().starts_with("at ");
            if frame && first_raw(line).is_some_and(|(at, _)| at > lines) {
                continue;
            }
            out.push(self.rewrite_line(line));
        }
        out.join("\n")
    }

    fn rewrite_line(&self, text: &str) -> String {
        let marker = format!("{FILE_NAME}:");
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(at) = rest.find(&marker) {
            let (before, after) = rest.split_at(at + marker.len());
            out.push_str(before);
            rest = after;
            if let Some((line, column, used)) = line_column(rest) {
                let mapped = self.map(line, column);
                let _ = write!(out, "{}:{}", mapped.line, mapped.column);
                rest = &rest[used..];
            }
        }
        out.push_str(rest);
        out
    }

    /// The first `program:<line>:<column>` of an engine message, mapped.
    pub(crate) fn first_position(&self, text: &str) -> Option<Position> {
        first_raw(text).map(|(line, column)| self.map(line, column))
    }
}

/// The first `program:<line>:<column>` of `text`, as the engine wrote it.
fn first_raw(text: &str) -> Option<(usize, usize)> {
    let marker = format!("{FILE_NAME}:");
    let mut rest = text;
    while let Some(at) = rest.find(&marker) {
        rest = &rest[at + marker.len()..];
        if let Some((line, column, _)) = line_column(rest) {
            return Some((line, column));
        }
    }
    None
}

/// `<line>:<column>` at the start of `text`, and the bytes it took.
fn line_column(text: &str) -> Option<(usize, usize, usize)> {
    let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
    let line_len = digits(text);
    let line = text.get(..line_len)?.parse().ok()?;
    let rest = text.get(line_len..)?.strip_prefix(':')?;
    let column_len = digits(rest);
    let column = rest.get(..column_len)?.parse().ok()?;
    Some((line, column, line_len + 1 + column_len))
}

/// The part of `text` around `column` (1-based) shown in a message, and the
/// caret's offset in it.
fn quote(text: &str, column: usize) -> (String, usize) {
    let chars: Vec<char> = text.chars().collect();
    let at = column.saturating_sub(1).min(chars.len());
    let start = at.saturating_sub(QUOTE_SIDE);
    let end = (at + QUOTE_SIDE).min(chars.len());
    let mut quoted = String::new();
    let mut caret = at - start;
    if start > 0 {
        quoted.push('…');
        caret += 1;
    }
    // A tab is shown as a space so the caret lines up.
    quoted.extend(
        chars[start..end]
            .iter()
            .map(|&c| if c == '\t' { ' ' } else { c }),
    );
    if end < chars.len() {
        quoted.push('…');
    }
    (quoted, caret)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_after_the_first_keep_their_position() {
        let p = Program::new("const a = 1;\nconst b = 2;\nconst = 3;");
        assert_eq!(
            p.map(3, 7),
            Position {
                line: 3,
                column: 7,
                at_end: false
            }
        );
    }

    #[test]
    fn the_first_line_loses_the_head() {
        let p = Program::new("const = 1;");
        let head = HEAD.chars().count();
        assert_eq!(p.map(1, head + 7).column, 7);
        assert_eq!(p.map(1, 3).column, 1, "inside the head: the start");
    }

    #[test]
    fn the_tail_is_the_end_of_the_program() {
        let p = Program::new("if (x) {\n  f(");
        let end = p.map(3, 2);
        assert_eq!((end.line, end.column, end.at_end), (2, 5, true));
    }

    #[test]
    fn offsets_map_like_lines_and_columns() {
        let code = "let a = 1;\nlet é = ;";
        let p = Program::new(code);
        let wrapped = wrap(code);
        let offset = wrapped.find(" ;").unwrap() + 1;
        assert_eq!(p.map_offset(offset).line, 2);
        assert_eq!(p.map_offset(offset).column, 9, "columns count characters");
        assert!(p.map_offset(wrapped.len()).at_end);
        assert!(p.map_offset(usize::MAX).at_end);
    }

    #[test]
    fn describe_quotes_the_program_line_with_a_caret() {
        let p = Program::new("const a = 1;\nconst = 2;");
        let text = p.describe("SyntaxError", "Expected ident", p.map(2, 7));
        assert_eq!(
            text,
            "SyntaxError at line 2, column 7: Expected ident\n 2 | const = 2;\n   |       ^"
        );
        assert!(!text.contains("async"), "no wrapper text: {text}");
    }

    #[test]
    fn long_lines_are_quoted_around_the_column() {
        let line = format!("{}BAD{}", "x".repeat(500), "y".repeat(500));
        let (quoted, caret) = quote(&line, 501);
        assert!(quoted.len() < 200, "{quoted}");
        assert_eq!(quoted.chars().nth(caret), Some('B'));
    }

    #[test]
    fn engine_positions_are_rewritten() {
        let p = Program::new("throw new Error('x');\nf();");
        let head = HEAD.chars().count();
        let text = format!(
            "Error: x at {FILE_NAME}:9:1\n    at <anonymous> ({FILE_NAME}:1:{})\n    at f ({FILE_NAME}:2:1) and {FILE_NAME}:oops\n    at <eval> ({FILE_NAME}:3:5)",
            head + 1
        );
        assert_eq!(
            p.rewrite_positions(&text),
            format!(
                "Error: x at {FILE_NAME}:2:5\n    at <anonymous> ({FILE_NAME}:1:1)\n    at f ({FILE_NAME}:2:1) and {FILE_NAME}:oops"
            ),
            "the wrapper's own frame is dropped"
        );
        assert!(p.first_position(&text).is_some_and(|at| at.at_end));
    }
}
