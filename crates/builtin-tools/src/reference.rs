//! The tool reference (`docs/tools.md`), generated from the definitions.

use std::fmt::Write as _;

use serde_json::{Map, Value};
use tack_core::tool::ToolDefinition;

/// Renders a Markdown reference of `tools`: per tool its description, tier,
/// timeout, and input and output JSON Schemas (keys sorted, so the text is
/// the same whatever `serde_json` features a build enables).
///
/// `docs/tools.md` is this function's output for [`builtin_tools`](crate::builtin_tools);
/// a test keeps it in sync.
///
/// ```
/// let md = tack_tools::reference_markdown(&tack_tools::builtin_tools().unwrap());
/// assert!(md.contains("## `read_file`") && md.contains("**Tier:** `read_only`"));
/// ```
pub fn reference_markdown(tools: &[ToolDefinition]) -> String {
    let mut md = String::from(
        "# Builtin tools\n\n\
         <!-- Generated from the code by `crates/builtin-tools/tests/all/docs.rs`; \
         do not edit. Regenerate with `UPDATE_DOCS=1 cargo test -p tack-tools --test all docs`. -->\n\n\
         The tools of `tack-tools`. Each does all of its I/O through the run context's \
         `fs` and `shell` capabilities, so the host's sandbox applies to every call. \
         Read-only tools may run in parallel; the others run alone.\n\n",
    );
    for tool in tools {
        md.push_str(&format!("- [`{0}`](#{0})\n", tool.name()));
    }
    for tool in tools {
        let _ = write!(md, "\n## `{}`\n\n{}\n\n", tool.name(), tool.description());
        let _ = write!(md, "**Tier:** `{}`", tool.tier());
        match tool.timeout() {
            Some(t) => {
                let _ = write!(md, " · **Timeout:** {} s", t.as_secs());
            }
            None => md.push_str(" · **Timeout:** none"),
        }
        md.push_str("\n\n### Input\n\n```json\n");
        md.push_str(&pretty(tool.input_schema()));
        md.push_str("\n```\n\n### Output\n\n```json\n");
        md.push_str(&pretty(tool.output().schema()));
        md.push_str("\n```\n");
    }
    md
}

/// `value` as pretty JSON with every object's keys sorted.
fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(&sorted(value)).unwrap_or_else(|e| format!("(unprintable: {e})"))
}

fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let mut out = Map::new();
            for (key, value) in entries {
                out.insert(key.clone(), sorted(value));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}
