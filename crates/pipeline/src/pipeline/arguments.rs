//! Step 2: parse the raw argument string once, losslessly, within limits.

use std::sync::Arc;

use serde_json::Value;
use tack_core::tool::{ErrorCode, Failure};

use crate::PipelineConfig;

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The deepest nesting of arrays and objects in `value` (a scalar is 0),
/// measured without recursion.
pub(crate) fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 0usize)];
    while let Some((value, level)) = stack.pop() {
        match value {
            Value::Array(items) => stack.extend(items.iter().map(|child| (child, level + 1))),
            Value::Object(map) => stack.extend(map.values().map(|child| (child, level + 1))),
            _ => continue,
        }
        deepest = deepest.max(level + 1);
    }
    deepest
}

fn invalid(message: String) -> Failure {
    Failure::new(ErrorCode::InvalidArguments, message)
}

/// Parses `raw` into a frozen JSON object: exact numbers and key order kept
/// (serde_json's `arbitrary_precision` and `preserve_order`), size and depth
/// bounded, an object required. Empty text is `{}`.
pub(crate) fn materialize(raw: &str, config: &PipelineConfig) -> Result<Arc<Value>, Failure> {
    if raw.len() > config.max_argument_bytes() {
        return Err(invalid(format!(
            "the arguments are {} bytes, over the limit of {} bytes: pass less data (a path instead of file contents, fewer items)",
            raw.len(),
            config.max_argument_bytes()
        )));
    }
    if raw.trim().is_empty() {
        return Ok(Arc::new(Value::Object(Default::default())));
    }
    let value: Value = serde_json::from_str(raw).map_err(|e| {
        if e.to_string().contains("recursion limit") {
            invalid(format!(
                "the arguments are nested more than {} levels deep: flatten them",
                config.max_depth()
            ))
        } else {
            invalid(format!(
                "the arguments are not valid JSON ({e}): send one JSON object, e.g. {{\"path\": \"src/main.rs\"}}"
            ))
        }
    })?;
    if !value.is_object() {
        return Err(invalid(format!(
            "the arguments must be a JSON object with named fields, got {}",
            kind_of(&value)
        ))
        .with_pointer(""));
    }
    let nesting = depth(&value);
    if nesting > config.max_depth() {
        return Err(invalid(format!(
            "the arguments are nested {nesting} levels deep, over the limit of {}: flatten them",
            config.max_depth()
        )));
    }
    Ok(Arc::new(value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn nested(levels: usize) -> String {
        let mut text = String::new();
        for _ in 0..levels - 1 {
            text.push_str("{\"a\":");
        }
        text.push_str("{}");
        for _ in 0..levels - 1 {
            text.push('}');
        }
        text
    }

    #[test]
    fn depth_counts_containers() {
        assert_eq!(depth(&serde_json::json!(1)), 0);
        assert_eq!(depth(&serde_json::json!({})), 1);
        assert_eq!(depth(&serde_json::json!({"a": [1, {"b": []}]})), 4);
    }

    #[test]
    fn nesting_at_the_limit_passes_and_beyond_fails() {
        let config = PipelineConfig::default();
        assert!(materialize(&nested(64), &config).is_ok());
        let err = materialize(&nested(65), &config).unwrap_err();
        assert!(err.message.contains("65 levels"), "{}", err.message);
        let err = materialize(&nested(1000), &config).unwrap_err();
        assert!(
            err.message.contains("nested more than 64"),
            "{}",
            err.message
        );
    }

    #[test]
    fn huge_integers_are_kept_exactly() {
        let value = materialize(
            r#"{"n": 123456789012345678901234567890}"#,
            &PipelineConfig::default(),
        )
        .unwrap();
        assert_eq!(value["n"].to_string(), "123456789012345678901234567890");
    }

    #[test]
    fn key_order_is_kept() {
        let value = materialize(r#"{"z": 1, "a": 2}"#, &PipelineConfig::default()).unwrap();
        let keys: Vec<&String> = value.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["z", "a"]);
    }

    proptest! {
        #[test]
        fn any_text_is_an_object_or_a_clear_error(raw in ".{0,64}") {
            match materialize(&raw, &PipelineConfig::default()) {
                Ok(value) => prop_assert!(value.is_object()),
                Err(failure) => {
                    prop_assert_eq!(failure.code, ErrorCode::InvalidArguments);
                    prop_assert!(failure.message.starts_with("the arguments"));
                }
            }
        }
    }
}
