//! Stage 2, parse: the raw argument string parsed once, within limits,
//! keeping the text and refusing what the parsed value would not hold
//! exactly, then validated against the tool's input schema ([`Parsed`]).
//!
//! The scheduler plans a call (its execution mode, its resource claims) from
//! this same [`Parsed`] value, and the tool receives its arguments: nothing
//! parses them again.

use serde_json::Value;
use tack_core::host::NewToolError;
use tack_core::host::{Arguments, ArgumentsError};
use tack_core::tool::{ErrorCode, ToolError};

use super::resolve::Resolved;
use super::schema::check;
use super::{Executed, Pipeline, Stage};
use crate::PipelineConfig;

/// A resolved call whose arguments parsed and passed the input schema.
pub(crate) struct Parsed {
    pub(crate) resolved: Resolved,
    pub(crate) arguments: Arguments,
}

impl Pipeline {
    /// Parses and validates the arguments of `resolved`; a refusal is the
    /// call's outcome (`INVALID_ARGUMENTS`, with the pointer when known).
    ///
    /// The call's argument text moves into the [`Arguments`] (it is not
    /// copied); [`Prepared::into_call`](super::Prepared::into_call) gives it
    /// back.
    pub(crate) fn parse(&self, mut resolved: Resolved) -> Result<Parsed, Box<Executed>> {
        self.record(&resolved.call.call_id, Stage::Parse);
        let arguments = match materialize(&mut resolved.call.arguments, self.config()) {
            Ok(arguments) => arguments,
            Err(failure) => return Err(Executed::refused(resolved, failure, None, None)),
        };
        self.record(&resolved.call.call_id, Stage::Validate);
        if let Some(violations) = check(&resolved.tool.input, arguments.value()) {
            let failure = ToolError::from_code(
                ErrorCode::InvalidArguments,
                format!(
                    "invalid arguments for tool `{}`: {}",
                    resolved.tool.definition.name(),
                    violations.message
                ),
            )
            .with_pointer(violations.pointer);
            return Err(Executed::refused(resolved, failure, None, None));
        }
        Ok(Parsed {
            resolved,
            arguments,
        })
    }
}

/// The deepest nesting of arrays and objects in `value` (a scalar is 0).
/// Recursive without allocating: a parsed value nests at most 128 levels (the
/// JSON parser's own bound), so the stack stays small.
pub(crate) fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

fn invalid(message: String) -> ToolError {
    ToolError::from_code(ErrorCode::InvalidArguments, message)
}

/// Parses `raw` into the call's [`Arguments`]: the exact text kept beside a
/// frozen JSON object that holds every number of the text exactly (a number
/// an `i64`, `u64` or `f64` would round is refused, naming its pointer, as is
/// a repeated key), size and depth bounded, an object required. Blank text is
/// `{}`. On success the arguments hold the text, taken from `raw` (left
/// empty); on failure `raw` is unchanged.
pub(crate) fn materialize(
    raw: &mut String,
    config: &PipelineConfig,
) -> Result<Arguments, ToolError> {
    #[cfg(test)]
    tests::PARSES.with(|parses| parses.set(parses.get() + 1));
    if raw.len() > config.max_argument_bytes() {
        return Err(invalid(format!(
            "the arguments are {} bytes, over the limit of {} bytes: pass less data (a path instead of file contents, fewer items)",
            raw.len(),
            config.max_argument_bytes()
        )));
    }
    let arguments = Arguments::parse_from(raw).map_err(|e| match e {
        ArgumentsError::TooDeep { .. } => invalid(format!(
            "the arguments are nested more than {} levels deep: flatten them",
            config.max_depth()
        )),
        other => {
            let failure = invalid(other.to_string());
            match other.pointer() {
                Some(pointer) => failure.with_pointer(pointer),
                None => failure,
            }
        }
    })?;
    let nesting = depth(arguments.value());
    if nesting > config.max_depth() {
        *raw = arguments.into_text();
        return Err(invalid(format!(
            "the arguments are nested {nesting} levels deep, over the limit of {}: flatten them",
            config.max_depth()
        )));
    }
    Ok(arguments)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    thread_local! {
        /// How many times this thread parsed an argument text.
        pub(crate) static PARSES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

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
        assert!(materialize(&mut nested(64), &config).is_ok());
        let err = materialize(&mut nested(65), &config).unwrap_err();
        assert!(err.message().contains("65 levels"), "{}", err.message());
        let err = materialize(&mut nested(1000), &config).unwrap_err();
        assert!(
            err.message().contains("nested more than 64"),
            "{}",
            err.message()
        );
    }

    #[test]
    fn the_text_is_kept_and_a_number_an_f64_would_round_is_refused() {
        let raw = r#"{"z": 1.50, "n": 18446744073709551615}"#;
        let arguments = materialize(&mut raw.to_owned(), &PipelineConfig::default()).unwrap();
        assert_eq!(arguments.text(), raw);
        assert_eq!(arguments.value()["n"].as_u64(), Some(u64::MAX));
        let err = materialize(
            &mut r#"{"n": 123456789012345678901234567890}"#.to_owned(),
            &PipelineConfig::default(),
        )
        .unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArguments);
        assert_eq!(err.pointer(), Some("/n"));
        assert!(
            err.message().contains("cannot hold exactly"),
            "{}",
            err.message()
        );
    }

    #[test]
    fn a_repeated_key_is_refused() {
        let err = materialize(
            &mut r#"{"path": "a", "path": "b"}"#.to_owned(),
            &PipelineConfig::default(),
        )
        .unwrap_err();
        assert_eq!(err.pointer(), Some(""));
        assert!(
            err.message().contains("more than once"),
            "{}",
            err.message()
        );
    }

    proptest! {
        #[test]
        fn any_text_is_an_object_or_a_clear_error(raw in ".{0,64}") {
            match materialize(&mut raw.clone(), &PipelineConfig::default()) {
                Ok(arguments) => prop_assert!(arguments.value().is_object()),
                Err(failure) => {
                    prop_assert_eq!(failure.code(), ErrorCode::InvalidArguments);
                    prop_assert!(failure.message().starts_with("the arguments"));
                }
            }
        }
    }
}
