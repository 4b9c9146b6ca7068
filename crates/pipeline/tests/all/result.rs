//! Result observers, tokens and root ids (RES-*).

use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::json;
use tack_core::hook::AgentId;
use tack_core::hooks::ExecutionRecord;
use tack_core::host::NewExecutionToken;
use tack_core::tool::{ContentBlock, ErrorCode, ExecutionToken, Outcome, ToolCall, ToolError};
use tokio_util::sync::CancellationToken;

use crate::harness::*;

// RES-001: observers see the exact Arc the caller gets, exactly once — for
// every exit, unknown tools included.
#[tokio::test]
async fn observers_see_the_exact_outcome_the_caller_gets_once() {
    let h = Harness::with_tool(echo("echo"));
    let cases = [
        ("ok", "echo", r#"{"text": "a"}"#),
        ("unknown", "nope", "{}"),
        ("invalid", "echo", "[]"),
    ];
    for (id, name, args) in cases {
        let out = h.call(id, name, args).await;
        let observed = h.observed(id);
        assert_eq!(observed.len(), 1, "{id}");
        assert!(Arc::ptr_eq(&observed[0], &out), "{id}: the same Arc");
    }
}

// RES-003: panicking observers are contained; the others still run.
#[tokio::test]
async fn panicking_observer_changes_nothing_and_others_still_run() {
    let h = Harness::with_tool(echo("echo"));
    let _bad = h
        .hooks()
        .result()
        .tap("bad-observer", |_record: &Arc<ExecutionRecord>| {
            panic!("observer broke")
        });
    let late: Arc<Mutex<Vec<Arc<Outcome>>>> = Arc::default();
    let keep = late.clone();
    let _late = h
        .hooks()
        .result()
        .tap("late", move |record: &Arc<ExecutionRecord>| {
            keep.lock().push(record.outcome.clone());
        });
    let out = h.call("c", "echo", r#"{"text": "a"}"#).await;
    assert!(out.is_success());
    assert_eq!(late.lock().len(), 1);
    assert_eq!(h.observed("c").len(), 1);
}

// Observers are scoped like listeners; the record names agent and execution.
#[tokio::test]
async fn scoped_observer_sees_only_its_agent_and_the_record_is_complete() {
    let h = Harness::with_tool(echo("echo"));
    let seen: Arc<Mutex<Vec<Arc<ExecutionRecord>>>> = Arc::default();
    let keep = seen.clone();
    let _obs = h
        .hooks()
        .result()
        .for_agent(AgentId::new("a"))
        .tap("a-observer", move |record: &Arc<ExecutionRecord>| {
            keep.lock().push(record.clone())
        });
    for agent in ["a", "b"] {
        h.call_as(agent, "echo", r#"{"text": "x"}"#, agent).await;
    }
    let seen = seen.lock();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].agent, Some(AgentId::new("a")));
    let execution = seen[0].execution.as_ref().unwrap();
    assert_eq!(execution.call_id().as_str(), "a");
    assert_eq!(execution.arguments().as_ref(), &json!({"text": "x"}));
}

// RES-005: one token per execution, shared by every stage; distinct across calls.
#[tokio::test]
async fn each_execution_has_one_token_shared_by_every_stage() {
    let tokens: Arc<Mutex<Vec<(String, ExecutionToken)>>> = Arc::default();
    let body = tokens.clone();
    let h = Harness::with_tool(open_tool("tok", move |_a, cx| {
        body.lock().push(("body".into(), cx.token().clone()));
        async move { Ok(json!(null)) }
    }));
    let pre = tokens.clone();
    let _pre = h.hooks().pre_execute().tap("pre", move |exec, next| {
        pre.lock().push(("pre".into(), exec.token().clone()));
        next.run(exec)
    });
    let post = tokens.clone();
    let _post = h.hooks().post_execute().tap("post", move |input, next| {
        post.lock().push((
            "post".into(),
            input.execution.as_ref().unwrap().token().clone(),
        ));
        next.run(input)
    });
    let result = tokens.clone();
    let _result = h
        .hooks()
        .result()
        .tap("result", move |record: &Arc<ExecutionRecord>| {
            result.lock().push((
                "result".into(),
                record.execution.as_ref().unwrap().token().clone(),
            ));
        });
    h.call("one", "tok", "{}").await;
    h.call("two", "tok", "{}").await;
    let tokens = tokens.lock();
    assert_eq!(tokens.len(), 8);
    let (first, second) = tokens.split_at(4);
    assert!(first.iter().all(|(_, t)| *t == first[0].1));
    assert!(second.iter().all(|(_, t)| *t == second[0].1));
    assert_ne!(first[0].1, second[0].1);
    let stages: Vec<&str> = first.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(stages, ["pre", "body", "post", "result"]);
}

// RES-009: the root call id defaults to the call's own id; nested calls carry the outer root.
#[tokio::test]
async fn root_call_id_defaults_to_the_call_and_nested_calls_inherit_it() {
    let h = Harness::new();
    let roots: Arc<Mutex<Vec<String>>> = Arc::default();
    let keep = roots.clone();
    let _pre = h.hooks().pre_execute().tap("roots", move |exec, next| {
        keep.lock().push(format!(
            "{}<{}",
            exec.call_id(),
            exec.token().root_call_id()
        ));
        next.run(exec)
    });
    h.add(echo("echo"));
    h.add(raw_tool(
        "outer",
        json!({"type": "object"}),
        json!({"type": "string"}),
        |_a, cx| async move {
            let dispatcher = cx.dispatcher().map_err(|e| ToolError::new(e.to_string()))?;
            let nested = cx.nested_call("inner-1", "echo", r#"{"text": "nested"}"#);
            let out = dispatcher.dispatch(nested, cx.cancellation().clone()).await;
            out.value()
                .cloned()
                .ok_or_else(|| ToolError::new("nested call failed"))
        },
    ));
    let out = h.call("call-1", "outer", "{}").await;
    assert_eq!(out.value().unwrap(), &json!("nested"));
    assert_eq!(*roots.lock(), ["call-1<call-1", "inner-1<call-1"]);
    // An explicit parent from another root.
    let parent = ExecutionToken::issue("root-9".into());
    let nested = h
        .pipeline
        .execute(
            ToolCall::new("n", "echo", r#"{"text": "x"}"#).with_parent(parent),
            CancellationToken::new(),
        )
        .await;
    assert!(nested.is_success());
    assert_eq!(roots.lock().last().unwrap(), "n<root-9");
}

// RES-007: a coded tool error keeps code and kind; a plain one only its message.
#[tokio::test]
async fn coded_tool_errors_keep_their_code_and_plain_ones_their_message() {
    let h = Harness::with_tool(failing("coded", ToolError::timeout("took too long")));
    h.add(open_tool("plain", |_a, _c| async move {
        Err(ToolError::new("plain failure"))
    }));
    let coded = h.call("c", "coded", "{}").await;
    assert_eq!(coded.error_code(), Some(ErrorCode::Timeout));
    assert_eq!(failure(&coded).message(), "took too long");
    let plain = h.call("p", "plain", "{}").await;
    let f = failure(&plain);
    assert_eq!(f.code(), ErrorCode::ExecutionFailed);
    assert_eq!((f.kind().as_ref(), f.data().as_ref()), (None, None));
    assert_eq!(text(&plain), "EXECUTION_FAILED: plain failure");
}

// RES-006 (tack: panic payloads become messages; a non-text payload a placeholder)
#[tokio::test]
async fn panic_payloads_become_messages() {
    let h = Harness::with_tool(open_tool("str", |_a, _c| async move {
        if true {
            std::panic::panic_any(String::from("kaboom"));
        }
        Ok(json!(null))
    }));
    h.add(open_tool("opaque", |_a, _c| async move {
        if true {
            std::panic::panic_any(42_u8);
        }
        Ok(json!(null))
    }));
    let s = h.call("s", "str", "{}").await;
    assert_eq!(failure(&s).message(), "tool `str` panicked: kaboom");
    let o = h.call("o", "opaque", "{}").await;
    let message = &failure(&o).message();
    assert!(message.starts_with("tool `opaque` panicked: "), "{message}");
    assert!(
        message.len() > "tool `opaque` panicked: ".len(),
        "{message}"
    );
}

// conclude_turn rides on the execution's own success.
#[tokio::test]
async fn conclude_turn_rides_only_on_success() {
    let h = Harness::with_tool(open_tool("finish", |args, cx| async move {
        cx.conclude_turn();
        if args.get("fail").is_some() {
            return Err(ToolError::new("failed"));
        }
        Ok(json!("done"))
    }));
    assert!(h.call("ok", "finish", "{}").await.concluded_turn);
    assert!(
        !h.call("bad", "finish", r#"{"fail": true}"#)
            .await
            .concluded_turn
    );
}

// One record type for both hook points: `tools/post-execute` listeners see
// the outcome so far, `tools/result` observers the final one, each with the
// calling agent.
#[tokio::test]
async fn post_execute_and_result_see_the_record_with_the_calling_agent() {
    let h = Harness::with_tool(echo("echo"));
    /// The hook point, the record's agent, the text of its outcome.
    type Seen = (&'static str, Option<AgentId>, String);
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let post = seen.clone();
    let _post = h
        .hooks()
        .post_execute()
        .tap("post", move |record: ExecutionRecord, next| {
            let text = record.outcome.content.joined_text();
            post.lock().push(("post", record.agent.clone(), text));
            async move {
                next.run(record)
                    .await
                    .replace_content(vec![ContentBlock::text("replaced")])
            }
        });
    let result = seen.clone();
    let _result = h
        .hooks()
        .result()
        .tap("result", move |record: &Arc<ExecutionRecord>| {
            let text = record.outcome.content.joined_text();
            result.lock().push(("result", record.agent.clone(), text));
        });
    h.call_as("c1", "echo", r#"{"text": "hi"}"#, "reviewer")
        .await;
    h.call("c2", "echo", r#"{"text": "hi"}"#).await;
    let reviewer = Some(AgentId::new("reviewer"));
    assert_eq!(
        *seen.lock(),
        [
            ("post", reviewer.clone(), "hi".to_owned()),
            ("result", reviewer, "replaced".to_owned()),
            ("post", None, "hi".to_owned()),
            ("result", None, "replaced".to_owned()),
        ]
    );
}
