//! The nesting limit of tool schemas, checked without recursion.
//!
//! Compiling a JSON Schema, and even dropping, cloning or serializing a
//! `serde_json::Value`, recurses once per level of nesting. A schema that
//! comes from outside (an MCP server, a plugin) could nest deep enough to
//! overflow the stack and abort the process. Every tool definition is
//! therefore checked against [`MAX_SCHEMA_DEPTH`] by a walk that uses no
//! recursion, and a schema past the limit is taken apart level by level, never
//! dropped whole.

use serde_json::Value;

/// The deepest nesting a tool's input or output schema may have: the number
/// of JSON objects and arrays on the longest path from the schema's root (the
/// root object counts as 1).
///
/// Each schema level (`{"type": "object", "properties": {"a": {…}}}`) takes
/// two JSON levels, so this allows about 30 levels of nested properties; real
/// tool schemas use a handful. Recursive data is described with `$ref`, which
/// costs no depth.
///
/// ```
/// use serde_json::json;
/// use tack_core::tool::{MAX_SCHEMA_DEPTH, schema_depth};
/// assert_eq!(schema_depth(&json!({"type": "object"})), 1);
/// assert_eq!(schema_depth(&json!({"properties": {"a": {"type": "string"}}})), 3);
/// assert!(schema_depth(&json!({"type": "object"})) <= MAX_SCHEMA_DEPTH);
/// ```
pub const MAX_SCHEMA_DEPTH: usize = 64;

/// The nesting depth of `value`: 0 for a scalar, 1 for an object or array of
/// scalars, one more per level below. Iterative, so any depth is safe to
/// measure.
pub fn schema_depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack: Vec<(&Value, usize)> = vec![(value, 1)];
    while let Some((value, depth)) = stack.pop() {
        match value {
            Value::Array(items) => {
                deepest = deepest.max(depth);
                stack.extend(items.iter().map(|item| (item, depth + 1)));
            }
            Value::Object(map) => {
                deepest = deepest.max(depth);
                stack.extend(map.values().map(|item| (item, depth + 1)));
            }
            _ => {}
        }
    }
    deepest
}

/// Whether `value` nests deeper than `limit`; stops at the first path past it.
pub(crate) fn exceeds_depth(value: &Value, limit: usize) -> bool {
    let mut stack: Vec<(&Value, usize)> = vec![(value, 1)];
    while let Some((value, depth)) = stack.pop() {
        match value {
            Value::Array(_) | Value::Object(_) if depth > limit => return true,
            Value::Array(items) => stack.extend(items.iter().map(|item| (item, depth + 1))),
            Value::Object(map) => stack.extend(map.values().map(|item| (item, depth + 1))),
            _ => {}
        }
    }
    false
}

/// Drops `value` one level at a time, so a value of any depth is freed
/// without the recursion of `Value`'s own drop.
pub(crate) fn dismantle(value: Value) {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, item)| item)),
            _ => {}
        }
    }
}

/// Keeps `schema` if it is within [`MAX_SCHEMA_DEPTH`]; otherwise takes it
/// apart and returns `None`.
pub(crate) fn within_limit(schema: Value) -> Option<Value> {
    if exceeds_depth(&schema, MAX_SCHEMA_DEPTH) {
        dismantle(schema);
        None
    } else {
        Some(schema)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// `depth` levels of `{"a": …}` around `{}`, built without recursion.
    fn nested(depth: usize) -> Value {
        let mut value = json!({});
        for _ in 1..depth {
            value = json!({ "a": value });
        }
        value
    }

    #[test]
    fn depth_counts_objects_and_arrays() {
        assert_eq!(schema_depth(&json!(1)), 0);
        assert_eq!(schema_depth(&json!([])), 1);
        assert_eq!(schema_depth(&json!({"a": [1, {"b": {}}]})), 4);
        let deep = nested(10);
        assert_eq!(schema_depth(&deep), 10);
        assert!(!exceeds_depth(&deep, 10));
        assert!(exceeds_depth(&deep, 9));
    }

    #[test]
    fn any_depth_is_measured_and_freed_on_a_test_thread() {
        for depth in [600, 10_000, 100_000] {
            let deep = nested(depth);
            assert_eq!(schema_depth(&deep), depth);
            assert!(within_limit(deep).is_none());
        }
        let mut arrays = json!([]);
        for _ in 0..100_000 {
            arrays = Value::Array(vec![arrays, json!(1)]);
        }
        assert!(exceeds_depth(&arrays, MAX_SCHEMA_DEPTH));
        dismantle(arrays);
    }
}
