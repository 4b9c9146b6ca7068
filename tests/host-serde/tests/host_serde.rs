//! A host's serde code keeps working next to tack, and a typed tool built on
//! it runs through the pipeline with the exact text the model sent.
//!
//! Each test fails if any tack crate switches on serde_json's
//! `arbitrary_precision` (numbers inside untagged enums and flattened structs
//! arrive as a private map: "data did not match any variant of untagged enum
//! Budget", "invalid type: map, expected u32") or `preserve_order` (a map
//! keeps insertion order instead of sorting). Try it:
//! `cargo test -p tack-host-serde --features serde_json/arbitrary_precision`.

use std::sync::{Arc, Mutex};

use serde::Deserialize as _;
use serde_json::{Value, json};
use tack_core::context::ToolRunContext;
use tack_core::tool::{ErrorCode, Tier, Tool, ToolCall, ToolDefinition, ToolError};
use tack_host_serde::{Budget, Request, Sampling};
use tack_pipeline::{Pipeline, ToolRegistry};
use tokio_util::sync::CancellationToken;

fn request() -> Request {
    Request {
        prompt: "hi".to_owned(),
        budget: Budget::Tokens(512),
        sampling: Sampling {
            temperature: 0.5,
            max_tokens: 64,
        },
    }
}

#[test]
fn an_untagged_enum_tells_numbers_apart() {
    let budgets: Vec<Budget> = serde_json::from_str(r#"[512, 0.25, "small"]"#).unwrap();
    assert_eq!(
        budgets,
        [
            Budget::Tokens(512),
            Budget::Share(0.25),
            Budget::Preset("small".to_owned())
        ]
    );
    // From a value too.
    let budget: Budget = serde_json::from_value(json!(7)).unwrap();
    assert_eq!(budget, Budget::Tokens(7));
}

#[test]
fn a_flattened_struct_reads_its_numbers() {
    let text = r#"{"prompt": "hi", "budget": 512, "temperature": 0.5, "max_tokens": 64}"#;
    assert_eq!(serde_json::from_str::<Request>(text).unwrap(), request());
    let value: Value = serde_json::from_str(text).unwrap();
    assert_eq!(serde_json::from_value::<Request>(value).unwrap(), request());
}

#[test]
fn maps_are_sorted_and_numbers_normalized_as_serde_json_does_by_default() {
    // `preserve_order` would keep the insertion order `b`, `a`.
    assert_eq!(json!({"b": 1, "a": 2}).to_string(), r#"{"a":2,"b":1}"#);
    // `arbitrary_precision` would keep the spelling `1.50`.
    let value: Value = serde_json::from_str("1.50").unwrap();
    assert_eq!(value.to_string(), "1.5");
}

/// A host's typed tool whose arguments are the host's own type.
struct Complete {
    seen: Arc<Mutex<Vec<(Request, String)>>>,
}

impl Tool for Complete {
    const NAME: &'static str = "complete";
    type Args = Request;
    type Output = Request;

    fn description(&self) -> &str {
        "Echo a completion request. Use to check a request."
    }

    fn tier(&self) -> Tier {
        Tier::ReadOnly
    }

    async fn execute(&self, args: Request, cx: &ToolRunContext) -> Result<Request, ToolError> {
        let text = cx.execution().arguments_text().to_owned();
        self.seen
            .lock()
            .map_err(|_| ToolError::new("poisoned"))?
            .push((args.clone(), text));
        Ok(args)
    }
}

#[tokio::test]
async fn a_typed_tool_with_the_hosts_types_runs_through_the_pipeline() {
    let seen = Arc::default();
    let registry = ToolRegistry::new();
    registry
        .register(
            ToolDefinition::from_tool(Complete {
                seen: Arc::clone(&seen),
            })
            .unwrap(),
        )
        .unwrap();
    let pipeline = Pipeline::new(registry);

    // The model's key order and spelling (`0.50`) reach the tool as written.
    let raw = r#"{"temperature": 0.50, "max_tokens": 64, "prompt": "hi", "budget": 512}"#;
    let outcome = pipeline
        .execute(
            ToolCall::new("c1", "complete", raw),
            CancellationToken::new(),
        )
        .await;
    assert!(outcome.is_success(), "{outcome:?}");
    assert_eq!(
        Request::deserialize(outcome.value().unwrap()).unwrap(),
        request()
    );
    assert_eq!(
        *seen.lock().unwrap(),
        [(request(), raw.to_owned())],
        "the body got the host's type and the exact text"
    );

    // A number a u64 cannot hold is refused before the tool, never rounded.
    let outcome = pipeline
        .execute(
            ToolCall::new(
                "c2",
                "complete",
                r#"{"prompt": "hi", "budget": 123456789012345678901234567890, "temperature": 0.5, "max_tokens": 64}"#,
            ),
            CancellationToken::new(),
        )
        .await;
    assert_eq!(outcome.error_code(), Some(ErrorCode::InvalidArguments));
    assert_eq!(outcome.failure_info().unwrap().pointer(), Some("/budget"));
    assert_eq!(seen.lock().unwrap().len(), 1, "the tool never ran");
}
