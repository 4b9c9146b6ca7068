//! Schema checks, for the parse stage (input) and the output check: validate
//! a value against a compiled schema, with messages that name the failing
//! JSON pointer and what was expected.

use jsonschema::Validator;
use serde_json::Value;

/// The most violations one message lists (the rest are counted).
const MAX_LISTED: usize = 5;

/// One schema violation: where, and what was expected.
pub(crate) struct Violations {
    /// The JSON pointer of the first violation (`""` is the root).
    pub(crate) pointer: String,
    /// Every violation, `at /pointer: message`, joined with `; `.
    pub(crate) message: String,
}

fn place(pointer: &str) -> String {
    if pointer.is_empty() {
        "at the top level".to_owned()
    } else {
        format!("at `{pointer}`")
    }
}

/// `None` when `value` is valid; otherwise the violations.
pub(crate) fn check(validator: &Validator, value: &Value) -> Option<Violations> {
    if validator.is_valid(value) {
        return None;
    }
    let mut pointer = None;
    let mut listed = Vec::new();
    let mut total = 0usize;
    for error in validator.iter_errors(value) {
        let at = error.instance_path().to_string();
        if pointer.is_none() {
            pointer = Some(at.clone());
        }
        total += 1;
        if listed.len() < MAX_LISTED {
            listed.push(format!("{} {}", place(&at), error));
        }
    }
    let mut message = listed.join("; ");
    if total > listed.len() {
        message.push_str(&format!("; and {} more", total - listed.len()));
    }
    Some(Violations {
        pointer: pointer.unwrap_or_default(),
        message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_name_the_pointer_and_the_expectation() {
        let validator = jsonschema::validator_for(&json!({
            "type": "object",
            "properties": {"n": {"type": "integer"}, "s": {"enum": ["a", "b"]}},
            "required": ["path"]
        }))
        .unwrap();
        let v = check(&validator, &json!({"n": "x", "s": "c"})).unwrap();
        assert!(v.message.contains("at `/n`"), "{}", v.message);
        assert!(v.message.contains("\"integer\""), "{}", v.message);
        assert!(v.message.contains("at the top level"), "{}", v.message);
        assert!(
            v.message.contains("\"path\" is a required property"),
            "{}",
            v.message
        );
        assert!(check(&validator, &json!({"path": 1})).is_none());
    }
}
