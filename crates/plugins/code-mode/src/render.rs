//! How a `run_code` result reads to the model.

use std::io;

use serde::Serialize;
use serde_json::Value;
use serde_json::ser::{Formatter, Serializer};
use tack_core::tool::ContentBlock;

/// What a run with no printed line and no returned value renders as.
pub const NO_OUTPUT: &str = "(run_code completed with no output)";

/// The deepest indentation of a rendered result, in spaces: deeper levels
/// stay at this indentation, so a deeply nested value renders in linear
/// size.
pub const MAX_INDENT: usize = 10;

/// The model-visible rendering of a `run_code` value `{logs, result?}`: the
/// printed lines joined by newlines, then the returned value — a string raw,
/// any other JSON (`null` included) pretty-printed with two-space
/// indentation capped at [`MAX_INDENT`] spaces — or [`NO_OUTPUT`] when both
/// are empty.
///
/// ```
/// use serde_json::json;
/// use tack_code_mode::render_result;
///
/// let text = |v| render_result(&v)[0].as_text().unwrap().to_owned();
/// assert_eq!(text(json!({"logs": ["a", "b"], "result": "done"})), "a\nb\ndone");
/// assert_eq!(text(json!({"logs": [], "result": {"n": [1]}})), "{\n  \"n\": [\n    1\n  ]\n}");
/// assert_eq!(text(json!({"logs": [], "result": null})), "null");
/// assert_eq!(text(json!({"logs": []})), "(run_code completed with no output)");
/// ```
pub fn render_result(value: &Value) -> Vec<ContentBlock> {
    let mut parts: Vec<String> = Vec::new();
    if let Some(Value::Array(logs)) = value.get("logs") {
        parts.extend(logs.iter().map(|line| match line {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }));
    }
    match value.get("result") {
        None => {}
        Some(Value::String(s)) => parts.push(s.clone()),
        Some(other) => parts.push(pretty(other)),
    }
    let text = parts.join("\n");
    vec![ContentBlock::text(if text.is_empty() {
        NO_OUTPUT.to_owned()
    } else {
        text
    })]
}

/// `value` pretty-printed with capped indentation.
fn pretty(value: &Value) -> String {
    let mut out = Vec::new();
    let mut serializer = Serializer::with_formatter(&mut out, CappedPretty::default());
    match value.serialize(&mut serializer) {
        Ok(()) => String::from_utf8(out).unwrap_or_else(|_| value.to_string()),
        Err(_) => value.to_string(),
    }
}

/// serde_json's pretty layout with the indentation capped at [`MAX_INDENT`].
#[derive(Default)]
struct CappedPretty {
    depth: usize,
    has_value: bool,
}

impl CappedPretty {
    fn newline_indent<W: ?Sized + io::Write>(&self, writer: &mut W) -> io::Result<()> {
        writer.write_all(b"\n")?;
        let spaces = (self.depth * 2).min(MAX_INDENT);
        writer.write_all(&b"          "[..spaces])
    }

    fn open<W: ?Sized + io::Write>(&mut self, writer: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        writer.write_all(bracket)
    }

    fn close<W: ?Sized + io::Write>(&mut self, writer: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth -= 1;
        if self.has_value {
            self.newline_indent(writer)?;
        }
        writer.write_all(bracket)
    }

    fn item<W: ?Sized + io::Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        if !first {
            writer.write_all(b",")?;
        }
        self.newline_indent(writer)
    }
}

impl Formatter for CappedPretty {
    fn begin_array<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.open(writer, b"[")
    }

    fn end_array<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.close(writer, b"]")
    }

    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.item(writer, first)
    }

    fn end_array_value<W: ?Sized + io::Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.open(writer, b"{")
    }

    fn end_object<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.close(writer, b"}")
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.item(writer, first)
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        writer.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + io::Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn text(value: Value) -> String {
        render_result(&value)[0].as_text().unwrap().to_owned()
    }

    #[test]
    fn matches_serde_pretty_when_shallow() {
        for value in [
            json!({"a": 1, "b": [true, null, "x"], "c": {}}),
            json!([]),
            json!([[1, 2], {"k": {"j": []}}]),
            json!(3.5),
            json!(false),
        ] {
            assert_eq!(
                pretty(&value),
                serde_json::to_string_pretty(&value).unwrap()
            );
        }
    }

    #[test]
    fn indentation_is_capped_at_ten_spaces() {
        let mut value = json!(1);
        for _ in 0..50 {
            value = json!([value]);
        }
        let rendered = pretty(&value);
        let widest = rendered
            .lines()
            .map(|l| l.len() - l.trim_start().len())
            .max()
            .unwrap();
        assert_eq!(widest, MAX_INDENT);
        // Linear, not quadratic: ~ (indent + bracket + newline) per level, twice.
        assert!(
            rendered.len() < 50 * 2 * (MAX_INDENT + 3),
            "{}",
            rendered.len()
        );
        assert_eq!(serde_json::from_str::<Value>(&rendered).unwrap(), value);
    }

    #[test]
    fn logs_then_value_and_explicit_null() {
        assert_eq!(text(json!({"logs": ["x"], "result": null})), "x\nnull");
        assert_eq!(text(json!({"logs": ["x"]})), "x");
        assert_eq!(text(json!({"logs": [], "result": "  raw  "})), "  raw  ");
        assert_eq!(text(json!({"logs": [], "result": ""})), NO_OUTPUT);
        assert_eq!(text(json!({"logs": ["", ""]})), "\n");
    }
}
