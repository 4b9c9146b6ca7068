//! The nesting limit of tool schemas, checked without recursion.
//!
//! Compiling a JSON Schema and validating against it recurse once per level
//! of nesting — and once per link of a chain of `$ref`s, since a reference is
//! compiled into what it points to. Even dropping, cloning or serializing a
//! `serde_json::Value` recurses once per level. A schema that comes from
//! outside (an MCP server, a plugin) could go deep enough to overflow the
//! stack and abort the process. Every tool definition is therefore checked
//! against `MAX_SCHEMA_DEPTH` (`ToolDefinition::MAX_SCHEMA_DEPTH`) by a walk that uses no recursion, and a schema
//! past the limit is taken apart level by level, never dropped whole.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

/// The deepest a tool's input or output schema may go: the number of JSON
/// objects and arrays on the longest path from the schema's root, where a
/// local reference (`"$ref": "#/$defs/item"`, also `$dynamicRef` and
/// `$recursiveRef`) continues the path into what it points to. The root
/// object counts as 1.
///
/// Each schema level (`{"type": "object", "properties": {"a": {…}}}`) takes
/// two JSON levels, so this allows about 30 levels of nested properties; real
/// tool schemas use a handful. A recursive reference (a cycle, as in a tree
/// type) is followed once, so recursive data costs no more than one round.
/// References by anchor or URI are not followed.
///
/// ```
/// use serde_json::json;
/// use tack_core::host::schema_depth;
/// use tack_core::tool::ToolDefinition;
/// assert_eq!(schema_depth(&json!({"type": "object"})), 1);
/// assert_eq!(schema_depth(&json!({"properties": {"a": {"type": "string"}}})), 3);
/// // `a` leads to `$defs/b`, which nests one more object.
/// let referring = json!({
///     "properties": {"a": {"$ref": "#/$defs/b"}},
///     "$defs": {"b": {"properties": {"c": {}}}}
/// });
/// assert_eq!(schema_depth(&referring), 6);
/// assert!(schema_depth(&referring) <= ToolDefinition::MAX_SCHEMA_DEPTH);
/// ```
pub(crate) const MAX_SCHEMA_DEPTH: usize = 64;

/// The keywords whose string value is a reference to another schema.
const REFERENCE_KEYWORDS: [&str; 3] = ["$ref", "$dynamicRef", "$recursiveRef"];

/// The depth of `schema` as [`ToolDefinition::MAX_SCHEMA_DEPTH`](crate::tool::ToolDefinition::MAX_SCHEMA_DEPTH) measures it: 0 for a
/// scalar, 1 for an object or array of scalars, one more per level below, and
/// local references followed into their targets (each cycle once). Iterative,
/// so any depth is safe to measure.
pub fn schema_depth(schema: &Value) -> usize {
    enum Visit<'a> {
        Enter(&'a Value),
        Exit(&'a Value),
    }
    let key = |value: &Value| std::ptr::from_ref(value) as usize;
    // The depth below each finished node, and the nodes on the current path
    // (a reference back to one of them closes a cycle and adds nothing).
    let mut finished: HashMap<usize, usize> = HashMap::new();
    let mut on_path: HashSet<usize> = HashSet::new();
    let mut stack = vec![Visit::Enter(schema)];
    while let Some(visit) = stack.pop() {
        match visit {
            Visit::Enter(node) => {
                let id = key(node);
                if finished.contains_key(&id) || on_path.contains(&id) {
                    continue;
                }
                if !matches!(node, Value::Array(_) | Value::Object(_)) {
                    finished.insert(id, 0);
                    continue;
                }
                on_path.insert(id);
                stack.push(Visit::Exit(node));
                for next in successors(schema, node) {
                    let next_id = key(next);
                    if !finished.contains_key(&next_id) && !on_path.contains(&next_id) {
                        stack.push(Visit::Enter(next));
                    }
                }
            }
            Visit::Exit(node) => {
                let below = successors(schema, node)
                    .map(|next| finished.get(&key(next)).copied().unwrap_or(0))
                    .max()
                    .unwrap_or(0);
                let id = key(node);
                on_path.remove(&id);
                finished.insert(id, below + 1);
            }
        }
    }
    finished.get(&key(schema)).copied().unwrap_or(0)
}

/// The children of `node`, then the target of its local reference, if any.
fn successors<'a>(root: &'a Value, node: &'a Value) -> impl Iterator<Item = &'a Value> + 'a {
    let (items, map) = match node {
        Value::Array(items) => (Some(items.iter()), None),
        Value::Object(map) => (None, Some(map)),
        _ => (None, None),
    };
    let values = map.into_iter().flat_map(|map| map.values());
    let targets = map.into_iter().flat_map(move |map| {
        REFERENCE_KEYWORDS
            .iter()
            .filter_map(move |keyword| map.get(*keyword)?.as_str())
            .filter_map(move |reference| resolve_local(root, reference))
    });
    items.into_iter().flatten().chain(values).chain(targets)
}

/// The schema a local reference (`#` or `#/json/pointer`, percent-encoded
/// as a URI fragment) points to in `root`.
fn resolve_local<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let fragment = reference.strip_prefix('#')?;
    if fragment.is_empty() {
        return Some(root);
    }
    if !fragment.starts_with('/') {
        return None; // an anchor
    }
    if fragment.contains('%') {
        root.pointer(&percent_decode(fragment)?)
    } else {
        root.pointer(fragment)
    }
}

/// `%XX` escapes decoded; `None` if malformed or not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        if byte == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(byte);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
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

/// Whether `value`'s plain nesting (references not followed) goes past
/// `limit`; stops at the first path that does, without the bookkeeping of
/// [`schema_depth`].
fn nests_past(value: &Value, limit: usize) -> bool {
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

/// Keeps `schema` if it is within [`MAX_SCHEMA_DEPTH`]; otherwise takes it
/// apart and returns `None`.
pub(crate) fn within_limit(schema: Value) -> Option<Value> {
    if nests_past(&schema, MAX_SCHEMA_DEPTH) || schema_depth(&schema) > MAX_SCHEMA_DEPTH {
        dismantle(schema);
        None
    } else {
        Some(schema)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, json};

    use super::*;

    /// `depth` levels of `{"a": …}` around `{}`, built without recursion
    /// (not with `json!`, which would serialize the inner value: a copy made
    /// by recursion).
    fn nested(depth: usize) -> Value {
        let mut value = json!({});
        for _ in 1..depth {
            let mut map = Map::new();
            map.insert("a".to_owned(), value);
            value = Value::Object(map);
        }
        value
    }

    /// A schema whose property `a` starts a chain of `links` references.
    fn chain(links: usize) -> Value {
        let mut defs = Map::new();
        for i in 0..links {
            defs.insert(
                format!("d{i}"),
                json!({ "$ref": format!("#/$defs/d{}", i + 1) }),
            );
        }
        defs.insert(format!("d{links}"), json!({"type": "string"}));
        let mut schema = Map::new();
        schema.insert("$defs".to_owned(), Value::Object(defs));
        schema.insert(
            "properties".to_owned(),
            json!({"a": {"$ref": "#/$defs/d0"}}),
        );
        Value::Object(schema)
    }

    #[test]
    fn depth_counts_objects_and_arrays() {
        assert_eq!(schema_depth(&json!(1)), 0);
        assert_eq!(schema_depth(&json!([])), 1);
        assert_eq!(schema_depth(&json!({"a": [1, {"b": {}}]})), 4);
        assert_eq!(schema_depth(&nested(10)), 10);
        assert!(!nests_past(&nested(10), 10));
        assert!(nests_past(&nested(11), 10));
    }

    #[test]
    fn local_references_continue_the_path_and_cycles_count_once() {
        // root → properties → a → d0 → d1 → … → d{links}
        assert_eq!(schema_depth(&chain(0)), 4);
        assert_eq!(schema_depth(&chain(10)), 14);
        assert_eq!(schema_depth(&chain(10_000)), 10_004);
        let tree = json!({
            "type": "object",
            "properties": {"children": {"type": "array", "items": {"$ref": "#"}}}
        });
        assert_eq!(schema_depth(&tree), 4);
        let pair = json!({"$defs": {"x": {"$ref": "#/$defs/y"}, "y": {"$ref": "#/$defs/x"}}});
        assert!(schema_depth(&pair) <= 4);
        let escaped = json!({"a": {"$ref": "#/$defs/a%20b~1c"}, "$defs": {"a b/c": {"x": {}}}});
        assert_eq!(schema_depth(&escaped), 4);
        let elsewhere = json!({"a": {"$ref": "other.json#/x"}, "b": {"$ref": "#anchor"}});
        assert_eq!(schema_depth(&elsewhere), 2);
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
        assert!(within_limit(arrays).is_none());
        assert!(within_limit(chain(100_000)).is_none());
        assert!(within_limit(chain(MAX_SCHEMA_DEPTH - 4)).is_some());
    }
}
