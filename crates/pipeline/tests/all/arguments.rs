//! Parsing and validating arguments (ARG-*, SCH-*, and issue 3's bad-input list).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::json;
use tack_core::policy::PreDecision;
use tack_core::tool::ErrorCode;
use tack_pipeline::PipelineConfig;

use crate::harness::*;
use crate::listeners::*;
use crate::stage_paths::*;

/// A harness with `echo` and a pre-execute listener that records every call it sees.
fn gated() -> (Harness, Log, Arc<std::sync::atomic::AtomicUsize>) {
    let (h, runs) = Harness::with_counted_echo("echo");
    let log = Log::default();
    log_and_delegate(h.hooks().pre_execute(), "policy", &log, |exec| {
        exec.call_id().as_str().to_owned()
    });
    (h, log, runs)
}

async fn invalid(args: &str) -> (Arc<tack_core::tool::Outcome>, Vec<&'static str>) {
    let (h, log, runs) = gated();
    let out = h.call("c", "echo", args).await;
    assert_eq!(
        out.error_code(),
        Some(ErrorCode::InvalidArguments),
        "{out:?}"
    );
    assert!(
        log.entries().is_empty(),
        "no policy runs on invalid arguments"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0, "the body never runs");
    assert_eq!(h.observed("c").len(), 1);
    (out, h.stages("c"))
}

// Bad input: malformed JSON. ARG-014 (tack differs, docs/design.md #1: not passed through raw; a
// helpful INVALID_ARGUMENTS before policy, and the loop still gets a result)
#[tokio::test]
async fn malformed_json_is_invalid_arguments_with_a_fix() {
    let (out, stages) = invalid(r#"{"text": "unterminated"#).await;
    let message = &failure(&out).message();
    assert!(message.contains("not valid JSON"), "{message}");
    assert!(message.contains("send one JSON object"), "{message}");
    assert_eq!(stages, UNPARSED);
}

// Bad input: a JSON array / string / number instead of an object.
#[tokio::test]
async fn non_object_arguments_are_invalid_and_name_what_was_sent() {
    for (args, kind) in [
        ("[1, 2]", "an array"),
        (r#""text""#, "a string"),
        ("42", "a number"),
        ("null", "null"),
    ] {
        let (out, stages) = invalid(args).await;
        let f = failure(&out);
        assert!(
            f.message().contains("must be a JSON object"),
            "{}",
            f.message()
        );
        assert!(f.message().ends_with(kind), "{}", f.message());
        assert_eq!(f.pointer(), Some(""));
        assert_eq!(stages, UNPARSED);
    }
}

// ARG-014: empty argument text is `{}`.
#[tokio::test]
async fn empty_argument_text_is_an_empty_object() {
    let h = Harness::with_tool(open_tool("noargs", |args, _c| async move {
        Ok((*args).clone())
    }));
    for (id, args) in [("a", ""), ("b", "  \n")] {
        let out = h.call(id, "noargs", args).await;
        assert_eq!(out.value().unwrap(), &json!({}), "{out:?}");
    }
}

// Bad input: missing required field. ARG-009
#[tokio::test]
async fn missing_required_field_names_the_field() {
    let (out, stages) = invalid(r#"{}"#).await;
    let f = failure(&out);
    assert!(
        f.message().starts_with("invalid arguments for tool `echo`"),
        "{}",
        f.message()
    );
    assert!(
        f.message().contains(r#""text" is a required property"#),
        "{}",
        f.message()
    );
    assert_eq!(f.pointer(), Some(""));
    assert_eq!(stages, BEFORE_POLICY);
}

// Bad input: wrong type. ARG-010
#[tokio::test]
async fn wrong_type_names_the_pointer_and_the_expected_type() {
    let (out, _) = invalid(r#"{"text": 5}"#).await;
    let f = failure(&out);
    assert_eq!(f.pointer(), Some("/text"));
    assert!(f.message().contains("at `/text`"), "{}", f.message());
    assert!(f.message().contains("\"string\""), "{}", f.message());
}

// ARG-010: nested objects and arrays get path-qualified pointers.
#[tokio::test]
async fn nested_violations_name_the_nested_pointer() {
    let h = Harness::with_tool(raw_tool(
        "deploy",
        json!({
            "type": "object",
            "properties": {
                "tags": {"type": "array", "items": {"type": "string"}},
                "servers": {"type": "array", "items": {
                    "type": "object", "properties": {"host": {"type": "string"}}, "required": ["host"]
                }},
                "bag": {"type": "object"}
            }
        }),
        json!({}),
        |_a, _c| async move { Ok(json!(null)) },
    ));
    let cases = [
        (r#"{"tags": ["a", 1]}"#, "/tags/1"),
        (r#"{"servers": [{"host": "a"}, {}]}"#, "/servers/1"),
        (r#"{"bag": 3}"#, "/bag"),
    ];
    for (i, (args, pointer)) in cases.into_iter().enumerate() {
        let out = h.call(&format!("c{i}"), "deploy", args).await;
        assert_eq!(
            out.error_code(),
            Some(ErrorCode::InvalidArguments),
            "{out:?}"
        );
        assert_eq!(failure(&out).pointer(), Some(pointer), "{out:?}");
    }
    // A container without declared members only gets a type check.
    assert!(
        h.call("ok", "deploy", r#"{"bag": {"anything": [1]}, "tags": []}"#)
            .await
            .is_success()
    );
}

// Bad input: enum violation. ARG-010
#[tokio::test]
async fn enum_violation_names_the_pointer_and_the_allowed_values() {
    let h = Harness::with_tool(raw_tool(
        "paint",
        json!({"type": "object", "properties": {"color": {"enum": ["red", "green"]}}}),
        json!({}),
        |_a, _c| async move { Ok(json!(null)) },
    ));
    let out = h.call("c", "paint", r#"{"color": "blue"}"#).await;
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::InvalidArguments);
    assert_eq!(f.pointer(), Some("/color"));
    assert!(f.message().contains("\"red\""), "{}", f.message());
    assert!(f.message().contains("\"green\""), "{}", f.message());
}

// Bad input: extra property on a closed schema.
#[tokio::test]
async fn extra_property_on_a_closed_schema_is_named() {
    let (out, _) = invalid(r#"{"text": "a", "extra": 1}"#).await;
    let f = failure(&out);
    assert!(f.message().contains("extra"), "{}", f.message());
    assert_eq!(f.pointer(), Some(""));
}

// ARG-009: an open schema accepts extra keys; defaults are not injected.
#[tokio::test]
async fn open_schema_accepts_extra_keys_and_defaults_are_not_injected() {
    let h = Harness::with_tool(raw_tool(
        "open",
        json!({"type": "object", "properties": {"n": {"type": "integer", "default": 7}}}),
        json!({}),
        |args, _c| async move { Ok((*args).clone()) },
    ));
    let out = h.call("c", "open", r#"{"extra": true}"#).await;
    assert_eq!(out.value().unwrap(), &json!({"extra": true}));
}

// ARG-006 / SCH-005: several violations are reported together.
#[tokio::test]
async fn several_violations_are_listed_in_one_message() {
    let h = Harness::with_tool(raw_tool(
        "multi",
        json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": ["c"]}),
        json!({}),
        |_a, _c| async move { Ok(json!(null)) },
    ));
    let out = h.call("c", "multi", r#"{"a": 1, "b": "x"}"#).await;
    let message = &failure(&out).message();
    assert!(message.contains("`/a`"), "{message}");
    assert!(message.contains("`/b`"), "{message}");
    assert!(
        message.contains("\"c\" is a required property"),
        "{message}"
    );
    assert_eq!(message.matches("; ").count(), 2, "{message}");
}

// Bad input: 100-level nesting.
#[tokio::test]
async fn hundred_level_nesting_is_refused() {
    let mut args = String::from(r#"{"text": "x", "deep": "#);
    args.push_str(&"[".repeat(99));
    args.push_str(&"]".repeat(99));
    args.push('}');
    let (out, stages) = invalid(&args).await;
    let message = &failure(&out).message();
    assert!(message.contains("nested 100 levels deep"), "{message}");
    assert!(message.contains("flatten"), "{message}");
    assert_eq!(stages, UNPARSED);
}

// Bad input: 2 MiB argument string.
#[tokio::test]
async fn two_mib_argument_string_is_refused_before_parsing() {
    let args = format!(r#"{{"text": "{}"}}"#, "a".repeat(2 * 1024 * 1024));
    let (out, stages) = invalid(&args).await;
    let message = &failure(&out).message();
    assert!(
        message.contains(&format!("{} bytes", args.len())),
        "{message}"
    );
    assert!(
        message.contains("over the limit of 1048576 bytes"),
        "{message}"
    );
    assert_eq!(stages, UNPARSED);
}

#[tokio::test]
async fn argument_limits_are_configurable() {
    let h = Harness::with_config(
        PipelineConfig::default()
            .with_max_argument_bytes(16)
            .with_max_depth(2),
    );
    h.add(echo("echo"));
    let big = h.call("big", "echo", r#"{"text": "0123456789"}"#).await;
    assert!(
        failure(&big).message().contains("limit of 16 bytes"),
        "{big:?}"
    );
    let deep = h.call("deep", "echo", r#"{"t":[[1]]}"#).await;
    assert!(
        failure(&deep).message().contains("nested 3 levels"),
        "{deep:?}"
    );
}

// Bad input: NaN-like numbers.
#[tokio::test]
async fn nan_and_infinity_are_not_json() {
    for args in [
        r#"{"text": NaN}"#,
        r#"{"text": Infinity}"#,
        r#"{"text": -Infinity}"#,
    ] {
        let (out, _) = invalid(args).await;
        assert!(
            failure(&out).message().contains("not valid JSON"),
            "{out:?}"
        );
    }
}

// Bad input: a number a 64-bit integer or float would round is refused, with
// its pointer and the fix, before any policy; the body never runs. ARG-001
#[tokio::test]
async fn a_number_that_would_be_rounded_is_refused_before_policy() {
    for (args, pointer) in [
        (
            r#"{"text": "x", "n": 123456789012345678901234567890}"#,
            "/n",
        ),
        (r#"{"text": "x", "f": [0.30000000000000000001]}"#, "/f/0"),
    ] {
        let (out, stages) = invalid(args).await;
        let failure = failure(&out);
        assert_eq!(failure.pointer(), Some(pointer), "{args}");
        assert!(
            failure.message().contains("cannot hold exactly")
                && failure.message().contains("as a string"),
            "{}",
            failure.message()
        );
        assert_eq!(stages, UNPARSED);
    }
}

// Bad input: a key given twice (the hooks would see the last, a tool reading
// the text might take the first) is refused.
#[tokio::test]
async fn a_repeated_key_is_refused_before_policy() {
    let (out, stages) = invalid(r#"{"text": "safe", "text": "rm -rf /"}"#).await;
    assert_eq!(failure(&out).pointer(), Some(""));
    assert!(
        failure(&out).message().contains("more than once"),
        "{}",
        failure(&out).message()
    );
    assert_eq!(stages, UNPARSED);
}

// The exact text rides beside the parsed value: the body (and every hook)
// can read what the model wrote, key order and number spelling included.
#[tokio::test]
async fn the_exact_text_reaches_the_body_beside_the_value() {
    let h = Harness::new();
    let seen = Log::default();
    let body_saw = seen.clone();
    h.add(raw_tool(
        "big",
        json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}),
        json!({"type": "object"}),
        move |args, cx| {
            body_saw.push(cx.execution().arguments_text().to_owned());
            async move { Ok((*args).clone()) }
        },
    ));
    let raw = r#"{"z": 1.50, "n": 18446744073709551615, "a": 1e300}"#;
    let out = h.call("c", "big", raw).await;
    assert!(out.is_success(), "{out:?}");
    let value = out.value().unwrap();
    assert_eq!(value["n"].as_u64(), Some(u64::MAX));
    assert_eq!(value["z"].as_f64(), Some(1.5));
    assert_eq!(value["a"].as_f64(), Some(1e300));
    assert_eq!(seen.entries(), [raw]);
}

#[tokio::test]
async fn an_integer_schema_refuses_a_huge_fraction() {
    let h = Harness::with_tool(raw_tool(
        "int",
        json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
        json!({}),
        |_a, _c| async move { Ok(json!(null)) },
    ));
    let out = h
        .call("c", "int", r#"{"n": 123456789012345678901234567890.5}"#)
        .await;
    assert_eq!(
        out.error_code(),
        Some(ErrorCode::InvalidArguments),
        "{out:?}"
    );
    assert_eq!(failure(&out).pointer(), Some("/n"));
}

// ARG-001 / PRE-011: one frozen argument value is shared by every stage and the body.
#[tokio::test]
async fn one_frozen_argument_value_is_shared_by_policy_and_body() {
    let pointers = Arc::new(parking_lot::Mutex::new(Vec::<usize>::new()));
    let body = pointers.clone();
    let h = Harness::with_tool(open_tool("same", move |args, _c| {
        body.lock().push(Arc::as_ptr(&args) as usize);
        async move { Ok(json!(null)) }
    }));
    let pre = pointers.clone();
    let _pre = h.hooks().pre_execute().tap("pre", move |exec, next| {
        pre.lock().push(Arc::as_ptr(exec.arguments()) as usize);
        next.run(exec)
    });
    let out = h.call("c", "same", r#"{"k": [1, 2]}"#).await;
    assert!(out.is_success());
    let seen = pointers.lock().clone();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0], seen[1], "the same Arc<Value>");
}

// ARG-004: argument failures win over a pre-cancelled signal.
#[tokio::test]
async fn invalid_arguments_win_over_a_pre_cancelled_signal() {
    let h = Harness::with_tool(echo("echo"));
    let cancel = cancelled();
    for (id, args) in [("json", "{"), ("schema", r#"{"text": 1}"#)] {
        let out = h.call_with(id, "echo", args, cancel.clone()).await;
        assert_eq!(
            out.error_code(),
            Some(ErrorCode::InvalidArguments),
            "{out:?}"
        );
        assert_eq!(h.observed(id).len(), 1);
    }
}

// docs/design.md #1: a human is never asked to approve a call that cannot run.
#[tokio::test]
async fn approval_is_never_asked_for_invalid_arguments() {
    let h = Harness::with_tool(echo("echo"));
    let approver = Approver::answering(tack_core::policy::ApprovalOutcome::AllowedOnce);
    h.provide_approval(approver.clone());
    let _ask = answer_pre(&h, "ask", PreDecision::ask("check"));
    let out = h.call("c", "echo", r#"{"text": []}"#).await;
    assert_eq!(out.error_code(), Some(ErrorCode::InvalidArguments));
    assert!(approver.requests.lock().is_empty());
}

// SCH-009 (tack validates full JSON Schema: oneOf means exactly one branch)
#[tokio::test]
async fn one_of_requires_exactly_one_matching_branch() {
    let h = Harness::with_tool(raw_tool(
        "one",
        json!({"type": "object", "properties": {"v": {"oneOf": [{"type": "integer"}, {"type": "number"}, {"type": "string"}]}}}),
        json!({}),
        |_a, _c| async move { Ok(json!(null)) },
    ));
    assert!(h.call("s", "one", r#"{"v": "x"}"#).await.is_success());
    assert!(h.call("f", "one", r#"{"v": 1.5}"#).await.is_success());
    for (id, args) in [("both", r#"{"v": 1}"#), ("none", r#"{"v": true}"#)] {
        let out = h.call(id, "one", args).await;
        assert_eq!(
            out.error_code(),
            Some(ErrorCode::InvalidArguments),
            "{id}: {out:?}"
        );
        assert_eq!(failure(&out).pointer(), Some("/v"));
    }
}
