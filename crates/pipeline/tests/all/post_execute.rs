//! `tools/post-execute` (POST-*, docs/design.md #4).

use serde_json::json;
use tack_core::hooks::{PostDecision, ToolHooks};
use tack_core::tool::{ContentBlock, ErrorCode, OutputSpec, ToolDefinition, ToolError};

use crate::harness::*;
use crate::listeners::*;

fn rendered(name: &str) -> ToolDefinition {
    ToolDefinition::builder(name)
        .description("Echo with a renderer.")
        .input_schema(echo_schema())
        .output(
            OutputSpec::new(json!({"type": "string"}))
                .render(|_args, value| {
                    vec![ContentBlock::text(format!(
                        "render:{}",
                        value.as_str().unwrap_or("?")
                    ))]
                })
                .presentation_meta(|_args, value| Ok(Some(json!({"projected": value})))),
        )
        .handler(|args, _cx| async move { Ok(args["text"].clone()) })
        .build()
        .unwrap()
}

// POST-002 / POST-009
#[tokio::test]
async fn replaced_value_is_revalidated_and_re_rendered_and_context_appended() {
    let h = Harness::with_tool(rendered("echo"));
    let _post = answer_post(
        &h,
        "policy",
        PostDecision::accept()
            .replace_value(json!("policy value"))
            .add_context("from policy"),
    );
    let out = h.call("c", "echo", r#"{"text": "original"}"#).await;
    assert_eq!(out.value().unwrap(), &json!("policy value"));
    assert_eq!(text(&out), "render:policy value");
    assert_eq!(out.presentation, Some(json!({"projected": "policy value"})));
    assert_eq!(out.deferred_context, ["from policy"]);
    assert_eq!(
        out.provenance.as_ref().unwrap().hook,
        ToolHooks::POST_EXECUTE
    );
}

// POST-002: a replacement value that violates the output schema fails.
#[tokio::test]
async fn replaced_value_violating_the_output_schema_is_output_invalid() {
    let h = Harness::with_tool(rendered("echo"));
    let _post = answer_post(
        &h,
        "policy",
        PostDecision::accept().replace_value(json!(42)),
    );
    let out = h.call("c", "echo", r#"{"text": "x"}"#).await;
    assert_eq!(out.error_code(), Some(ErrorCode::OutputInvalid));
}

// POST-009: a value replacement without contexts creates none; existing body
// contexts come first.
#[tokio::test]
async fn contexts_are_appended_after_the_body_contexts() {
    let h = Harness::with_tool(open_tool("ctx", |_a, cx| async move {
        cx.defer_context("from body");
        Ok(json!(1))
    }));
    let _post = answer_post(&h, "more", PostDecision::accept().add_context("from post"));
    let out = h.call("c", "ctx", "{}").await;
    assert_eq!(out.deferred_context, ["from body", "from post"]);

    let h = Harness::with_tool(rendered("echo"));
    let _post = answer_post(
        &h,
        "value",
        PostDecision::accept().replace_value(json!("v")),
    );
    let out = h.call("c", "echo", r#"{"text": "x"}"#).await;
    assert!(out.deferred_context.is_empty());
}

// POST-004: replacing both value and content fails.
#[tokio::test]
async fn replacing_both_value_and_content_fails() {
    let h = Harness::with_tool(rendered("echo"));
    let _post = answer_post(
        &h,
        "greedy",
        PostDecision::accept()
            .replace_value(json!("v"))
            .replace_content(vec![ContentBlock::text("c")]),
    );
    let out = h.call("c", "echo", r#"{"text": "x"}"#).await;
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::Internal);
    assert!(
        f.message().contains("both the value and the content"),
        "{}",
        f.message()
    );
    assert_eq!(decided_by(&out), Some("greedy"));
}

// POST-004 / docs/design.md #4: no listener turns a failure into a success; content may be replaced.
#[tokio::test]
async fn a_failure_cannot_become_a_success() {
    let h = Harness::with_tool(failing("fails", ToolError::new("it broke")));
    let _post = answer_post(
        &h,
        "rescuer",
        PostDecision::accept()
            .replace_value(json!("all good"))
            .block("blocked"),
    );
    let out = h.call("c", "fails", "{}").await;
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::ExecutionFailed);
    assert_eq!(f.message(), "it broke");
    assert!(
        out.notes
            .iter()
            .any(|n| n.contains("a failure cannot become a success")),
        "{out:?}"
    );

    let h = Harness::with_tool(failing("fails", ToolError::new("secret token abc")));
    let _redact = h
        .hooks()
        .post_execute()
        .tap("redact", |input, _next| async move {
            let redacted = input.outcome.content.joined_text().replace("abc", "***");
            PostDecision::accept().replace_content(vec![ContentBlock::text(redacted)])
        });
    let out = h.call("c", "fails", "{}").await;
    assert_eq!(out.error_code(), Some(ErrorCode::ExecutionFailed));
    assert_eq!(text(&out), "EXECUTION_FAILED: secret token ***");
}

// docs/design.md #4: post-execute sees every outcome of a known tool, including invalid arguments.
#[tokio::test]
async fn post_execute_sees_invalid_arguments_but_not_unknown_tools() {
    let h = Harness::with_tool(echo("echo"));
    let log = Log::default();
    let _post = log_and_delegate(h.hooks().post_execute(), "audit", &log, |input| {
        format!(
            "{}:{:?}:{}",
            input.outcome.call_id,
            input.outcome.error_code(),
            input.execution.is_some()
        )
    });
    h.call("bad", "echo", "{").await;
    h.call("schema", "echo", r#"{"text": 1}"#).await;
    h.call("unknown", "nope", "{}").await;
    h.call("ok", "echo", r#"{"text": "a"}"#).await;
    assert_eq!(
        log.entries(),
        [
            "bad:Some(InvalidArguments):false",
            "schema:Some(InvalidArguments):false",
            "ok:None:true"
        ]
    );
}

// POST-005 (tack: the replacement is checked and rendered against the
// snapshot the call resolved to, even when the tool was unregistered meanwhile)
#[tokio::test]
async fn value_replacement_after_the_tool_was_unregistered_uses_the_snapshot() {
    let h = Harness::new();
    let disposer = h.add_disposable(rendered("echo"));
    let _post = h.hooks().post_execute().tap("late", move |_input, _next| {
        disposer.dispose();
        async move { PostDecision::accept().replace_value(json!("v")) }
    });
    let out = h.call("c", "echo", r#"{"text": "x"}"#).await;
    assert!(out.is_success(), "{out:?}");
    assert_eq!(out.value(), Some(&json!("v")));
    assert_eq!(out.presentation, Some(json!({"projected": "v"})));
}

// POST-006 (tack differs, docs/design.md #2: a block is DENIED with the listener's provenance)
#[tokio::test]
async fn block_turns_a_success_into_a_valueless_failure_with_the_feedback_verbatim() {
    let h = Harness::with_tool(echo("echo"));
    let _post = answer_post(
        &h,
        "review",
        PostDecision::accept().block("blocked by policy"),
    );
    let out = h.call("c", "echo", r#"{"text": "x"}"#).await;
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::Denied);
    assert_eq!(f.message(), "blocked by policy");
    assert!(f.dispatched());
    assert!(out.value().is_none());
    assert_eq!(text(&out), "blocked by policy");
    assert_eq!(decided_by(&out), Some("review"));
}

// An empty block never hands the model an empty message.
#[tokio::test]
async fn an_empty_block_gets_a_message_naming_the_listener() {
    let h = Harness::with_tool(echo("echo"));
    let _post = answer_post(&h, "review", PostDecision::accept().block(""));
    let out = h.call("c", "echo", r#"{"text": "x"}"#).await;
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::Denied);
    assert!(f.message().contains("review"), "{}", f.message());
    assert!(
        f.message().contains("blocked the result of tool `echo`"),
        "{}",
        f.message()
    );
    assert!(f.message().contains("withheld"), "{}", f.message());
    assert_eq!(text(&out), f.message());
    assert_eq!(decided_by(&out), Some("review"));
}

// Bad input: a hook that panics (post-execute): fail closed, the result is withheld.
#[tokio::test]
async fn panicking_post_listener_withholds_the_result() {
    let h = Harness::with_tool(echo("echo"));
    let _post = h
        .hooks()
        .post_execute()
        .tap("redactor", |input, next| async move {
            if input.outcome.is_success() {
                panic!("redactor broke");
            }
            next.run(input).await
        });
    let out = h.call("c", "echo", r#"{"text": "secret"}"#).await;
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::Internal);
    assert!(f.message().contains("redactor"), "{}", f.message());
    assert!(f.message().contains("withheld"), "{}", f.message());
    assert!(f.dispatched());
    assert!(!text(&out).contains("secret"));
    assert_eq!(h.observed("c").len(), 1);
}

// docs/design.md #2 / provenance: a listener that only adds context to a success did not
// decide or replace it; the wrapper that produced the value stays the decider.
#[tokio::test]
async fn context_only_decision_keeps_the_provenance_of_a_success() {
    let h = Harness::with_tool(echo("echo"));
    let _cache = answer_execute(&h, "cache", json!("cached"));
    let _audit = answer_post(&h, "audit", PostDecision::accept().add_context("audited"));
    let out = h.call("c", "echo", r#"{"text": "a"}"#).await;
    assert!(out.is_success());
    assert_eq!(out.deferred_context, ["audited"]);
    assert_eq!(decided_by(&out), Some("cache"));
}

/// A block keeps only the contexts the blocking listener gives: the tool's
/// own deferred context may hold what the block hides.
#[tokio::test]
async fn a_block_keeps_only_the_blocking_listeners_contexts() {
    let h = Harness::with_tool(open_tool("ctx", |_a, cx| async move {
        cx.defer_context("secret from body");
        Ok(json!(1))
    }));
    let _post = answer_post(
        &h,
        "redact",
        PostDecision::accept()
            .block("withheld")
            .add_context("a result was withheld"),
    );
    let out = h.call("c", "ctx", "{}").await;
    assert_eq!(failure(&out).code(), ErrorCode::Denied);
    assert_eq!(out.deferred_context, ["a result was withheld"]);

    // A block that gives no context leaves none.
    let h = Harness::with_tool(open_tool("ctx", |_a, cx| async move {
        cx.defer_context("secret from body");
        Ok(json!(1))
    }));
    let _post = answer_post(&h, "redact", PostDecision::accept().block("withheld"));
    let out = h.call("c", "ctx", "{}").await;
    assert!(
        out.deferred_context.is_empty(),
        "{:?}",
        out.deferred_context
    );
}
