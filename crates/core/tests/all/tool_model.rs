//! The tool model: names, schemas and their exporters, definitions, outcomes.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use pretty_assertions::assert_eq;
use proptest::prelude::*;
use serde_json::{Value, json};
use tack_core::hook::Provenance;
use tack_core::host::ToolSchema;
use tack_core::host::{NewExecutionToken, NewOutcome, NewToolError, NewToolExecution};
use tack_core::host::{ToolFormat, export_tools};
use tack_core::plugin::PluginError;
use tack_core::policy::ApprovalOutcome;
use tack_core::tool::{
    CallId, Content, ContentBlock, ErrorCode, ExecutionToken, Outcome, OutputSpec, Tier,
    ToolDefinition, ToolError, ToolExecution, ToolName,
};

fn echo() -> ToolDefinition {
    ToolDefinition::builder("echo")
        .description("Repeat the given text back. Use to check that tools work.")
        .input_schema(json!({
            "type": "object",
            "properties": {"text": {"type": "string", "description": "What to repeat."}},
            "required": ["text"],
            "additionalProperties": false
        }))
        .output(OutputSpec::new(json!({"type": "string"})))
        .tier(Tier::ReadOnly)
        .timeout(Duration::from_secs(5))
        .concurrency_safe(|_| true)
        .present_call(|args| format!("echo {}", args["text"]))
        .finalize_content(|_| None::<Content>)
        .handler(|args, _cx| async move { Ok(args["text"].clone()) })
        .build()
        .unwrap()
}

fn mcp_style() -> ToolDefinition {
    // A raw, hand-written schema (as an MCP server would send it) is projected verbatim.
    ToolDefinition::builder("weird-name_2")
        .description("Look up a ticket by id.")
        .input_schema(json!({
            "type": "object",
            "properties": {"id": {"type": "integer", "minimum": 1}, "verbose": {"type": "boolean", "default": false}},
            "required": ["id"]
        }))
        .output(OutputSpec::new(json!({"type": "object"})))
        .handler(|_, _| async { Ok(json!({})) })
        .build()
        .unwrap()
}

#[test]
fn the_model_visible_schema_has_exactly_three_fields() {
    for def in [echo(), mcp_style()] {
        let value = serde_json::to_value(def.schema()).unwrap();
        let mut keys: Vec<&str> = value
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(keys, ["description", "name", "parameters"]);
        let text = value.to_string();
        for host_only in [
            "timeout",
            "tier",
            "concurrency",
            "handler",
            "finalize",
            "output",
            "present",
            "read_only",
        ] {
            assert!(
                !text.contains(host_only),
                "`{host_only}` leaked into {text}"
            );
        }
    }
}

#[test]
fn raw_schemas_are_projected_verbatim_and_shared_immutably() {
    let def = mcp_style();
    let schema = def.schema();
    assert_eq!(*schema.parameters, **def.input_schema());
    // Mutating a returned schema (a deep copy) never reaches the definition.
    let mut copy: Value = (*schema.parameters).clone();
    copy["properties"] = json!({});
    assert_ne!(copy, *def.schema().parameters);
}

fn golden_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name)
}

/// Compares with a golden file; `UPDATE_GOLDEN=1` rewrites it. Compared as
/// JSON values: key order is not part of an export (it follows serde_json's
/// map, which a host may build with `preserve_order`).
fn assert_golden(name: &str, actual: &Value) {
    let path = golden_path(name);
    let pretty = serde_json::to_string_pretty(actual).unwrap() + "\n";
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &pretty).unwrap();
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with UPDATE_GOLDEN=1 to create it)",
            path.display()
        )
    });
    let expected: Value = serde_json::from_str(&expected).unwrap();
    assert_eq!(&expected, actual, "golden file {name}");
}

#[test]
fn exporters_match_the_golden_files() {
    let schemas: Vec<ToolSchema> = vec![echo().schema(), mcp_style().schema()];
    assert_golden("neutral.json", &export_tools(&schemas, ToolFormat::Neutral));
    assert_golden("openai.json", &export_tools(&schemas, ToolFormat::OpenAi));
    assert_golden(
        "anthropic.json",
        &export_tools(&schemas, ToolFormat::Anthropic),
    );
    assert_golden("mcp.json", &export_tools(&schemas, ToolFormat::Mcp));
    // The neutral export is the serde form.
    assert_eq!(
        export_tools(&schemas, ToolFormat::Neutral),
        serde_json::to_value(&schemas).unwrap()
    );
}

#[test]
fn format_names_parse() {
    for (text, format) in [
        ("openai", ToolFormat::OpenAi),
        ("Anthropic", ToolFormat::Anthropic),
        ("mcp", ToolFormat::Mcp),
    ] {
        assert_eq!(text.parse::<ToolFormat>().unwrap(), format);
        assert_eq!(format.to_string().parse::<ToolFormat>().unwrap(), format);
    }
    let err = "yaml".parse::<ToolFormat>().unwrap_err();
    assert_eq!((err.kind, err.value.as_str()), ("tool format", "yaml"));
    for name in err.expected {
        assert_eq!(name.parse::<ToolFormat>().unwrap().to_string(), *name);
    }
}

#[test]
fn definition_errors_are_clear() {
    let base = || {
        ToolDefinition::builder("t")
            .description("d")
            .input_schema(json!({"type": "object"}))
            .output(OutputSpec::new(json!({})))
            .handler(|_, _| async { Ok(json!(null)) })
    };
    let err = ToolDefinition::builder("bad name").build().unwrap_err();
    assert!(
        matches!(
            err,
            PluginError::InvalidToolNameCharacter { position: 3, .. }
        ),
        "{err}"
    );

    let err = base().description("  ").build().unwrap_err();
    assert_eq!(
        err.to_string(),
        "tool `t` has no description: tell the model what it does and when to use it"
    );

    let err = base().input_schema(json!([1])).build().unwrap_err();
    assert_eq!(
        err.to_string(),
        "the input schema of tool `t` must be a JSON Schema object, found an array"
    );

    let err = base().input_schema(json!(true)).build().unwrap_err();
    assert!(matches!(
        err,
        PluginError::InputSchemaNotObject {
            found: "a boolean",
            ..
        }
    ));

    let err = base()
        .input_schema(json!({"type": "string"}))
        .build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the input schema of tool `t` must say `\"type\": \"object\"` (tool arguments are always a JSON object), found `\"type\": \"string\"`"
    );
    let err = base()
        .input_schema(json!({"properties": {}}))
        .build()
        .unwrap_err();
    assert!(err.to_string().ends_with("found no `type`"), "{err}");

    let err = base()
        .output(OutputSpec::new(json!(false)))
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("accepts no value"), "{err}");
    let err = base()
        .output(OutputSpec::new(json!("string")))
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("found a string"), "{err}");
    let ok = base().output(OutputSpec::new(json!(true))).build().unwrap();
    assert_eq!(*ok.output().schema(), json!({}));

    let err = base().timeout(Duration::ZERO).build().unwrap_err();
    assert!(matches!(err, PluginError::ZeroTimeout { .. }), "{err}");

    let err = ToolDefinition::builder("t")
        .description("d")
        .build()
        .unwrap_err();
    assert!(matches!(err, PluginError::MissingInputSchema { .. }));
    let err = ToolDefinition::builder("t")
        .description("d")
        .input_schema(json!({"type": "object"}))
        .build()
        .unwrap_err();
    assert!(matches!(err, PluginError::MissingOutput { .. }));
    let err = ToolDefinition::builder("t")
        .description("d")
        .input_schema(json!({"type": "object"}))
        .output(OutputSpec::new(json!({})))
        .build()
        .unwrap_err();
    assert!(matches!(err, PluginError::MissingHandler { .. }));
}

#[test]
fn host_fields_are_reachable_on_the_definition() {
    let def = echo();
    assert_eq!(def.timeout(), Some(Duration::from_secs(5)));
    assert_eq!(def.tier(), Tier::ReadOnly);
    assert!(def.is_concurrency_safe(&json!({"text": "x"})));
    assert!(def.has_concurrency_classifier());
    assert!(def.has_finalize_content());
    assert_eq!(def.present_call(&json!({"text": "hi"})), "echo \"hi\"");
    assert_eq!(
        def.output().render_value(&json!({}), &json!("hi")).unwrap(),
        vec![ContentBlock::text("hi")]
    );
}

#[test]
fn concurrency_is_exclusive_unless_the_classifier_says_exactly_true() {
    let build = |f: Option<fn(&Value) -> bool>| {
        let mut b = ToolDefinition::builder("c")
            .description("d")
            .input_schema(json!({"type": "object"}))
            .output(OutputSpec::new(json!({})))
            .handler(|_, _| async { Ok(json!(null)) });
        if let Some(f) = f {
            b = b.concurrency_safe(f);
        }
        b.build().unwrap()
    };
    assert!(!build(None).is_concurrency_safe(&json!({})));
    assert!(!build(Some(|_| false)).is_concurrency_safe(&json!({})));
    assert!(!build(Some(|_| panic!("classifier bug"))).is_concurrency_safe(&json!({})));
    assert!(build(Some(|_| true)).is_concurrency_safe(&json!({})));
}

#[test]
fn a_panicking_finalizer_or_presenter_keeps_the_original() {
    let def = ToolDefinition::builder("f")
        .description("d")
        .input_schema(json!({"type": "object"}))
        .output(OutputSpec::new(json!({})).render(|_, _| -> Content { panic!("render bug") }))
        .finalize_content(|_| -> Option<Content> { panic!("finalize bug") })
        .present_call(|_| panic!("present bug"))
        .handler(|_, _| async { Ok(json!(null)) })
        .build()
        .unwrap();
    let outcome = Outcome::success(
        CallId::from("c"),
        "f",
        json!(1),
        vec![ContentBlock::text("1")],
    );
    assert_eq!(def.finalize_content(&outcome), None);
    assert_eq!(def.present_call(&json!({})), "f({})");
    assert_eq!(def.present_result(&json!({}), &outcome), "ok");
    let err = def
        .output()
        .render_value(&json!({}), &json!(1))
        .unwrap_err();
    assert_eq!(err.to_string(), "output.render panicked: render bug");
    assert_eq!(err.code(), ErrorCode::OutputInvalid);
    assert_eq!(err.kind(), Some("render_panicked"));
}

#[test]
fn outcomes_serialize_for_the_log_and_round_trip() {
    let ok = Outcome::success(
        CallId::from("c1"),
        "echo",
        json!("hi"),
        vec![ContentBlock::text("hi")],
    );
    assert_eq!(
        serde_json::to_value(&ok).unwrap(),
        json!({"call_id": "c1", "tool": "echo", "status": "ok", "value": "hi",
               "content": [{"type": "text", "text": "hi"}], "concluded_turn": false})
    );
    let err = Outcome::failure(
        CallId::from("c2"),
        "read_file",
        ToolError::from_code(ErrorCode::InvalidArguments, "`/path` must be a string")
            .with_pointer("/path"),
    );
    let value = serde_json::to_value(&err).unwrap();
    assert_eq!(value["status"], "error");
    assert_eq!(value["error"]["code"], "INVALID_ARGUMENTS");
    assert_eq!(value["error"]["pointer"], "/path");
    assert_eq!(
        value["content"][0]["text"],
        "INVALID_ARGUMENTS: `/path` must be a string"
    );
    for outcome in [ok, err] {
        let back: Outcome =
            serde_json::from_value(serde_json::to_value(&outcome).unwrap()).unwrap();
        assert_eq!(back, outcome);
    }
}

/// A failure's wire shape is the one session logs were written with: the
/// same keys in the same order, the optional ones left out when absent,
/// `dispatched` false when missing. Old records read back and write out
/// byte for byte.
#[test]
fn failures_keep_the_wire_shape_of_written_logs() {
    let records = [
        r#"{"call_id":"c1","tool":"read_file","status":"error","error":{"code":"INVALID_ARGUMENTS","message":"`/path` must be a string","pointer":"/path","dispatched":false},"content":[{"type":"text","text":"INVALID_ARGUMENTS: `/path` must be a string"}],"concluded_turn":false}"#,
        r#"{"call_id":"c2","tool":"read_file","status":"error","error":{"code":"EXECUTION_FAILED","message":"no such file","kind":"ENOENT","data":{"path":"a"},"dispatched":true},"content":[{"type":"text","text":"EXECUTION_FAILED: no such file"}],"concluded_turn":false}"#,
    ];
    for record in records {
        let outcome: Outcome = serde_json::from_str(record).unwrap();
        assert_eq!(serde_json::to_string(&outcome).unwrap(), record);
    }
    let read: Outcome = serde_json::from_str(records[1]).unwrap();
    let error = read.failure_info().unwrap();
    assert_eq!(
        (error.code(), error.message(), error.kind(), error.pointer()),
        (
            ErrorCode::ExecutionFailed,
            "no such file",
            Some("ENOENT"),
            None
        )
    );
    assert_eq!(error.data(), Some(&json!({"path": "a"})));
    assert!(error.dispatched());

    // A record without `dispatched` (nor any optional key) reads as not
    // dispatched.
    let bare: ToolError =
        serde_json::from_value(json!({"code": "DENIED", "message": "no"})).unwrap();
    assert_eq!(bare, ToolError::from_code(ErrorCode::Denied, "no"));
    assert_eq!(
        serde_json::to_value(&bare).unwrap(),
        json!({"code": "DENIED", "message": "no", "dispatched": false})
    );
}

/// The record of rewritten arguments keeps the wire shape session logs were
/// written with (`"rewrite": {"original", "rewritten", "by"}`): an old record
/// reads back and writes out byte for byte, a plugin reads it through the
/// outcome's getters, and the host records it from the execution.
#[test]
fn a_rewrite_record_keeps_the_wire_shape_of_written_logs() {
    let record = r#"{"call_id":"c1","tool":"bash","status":"ok","value":"done","content":[{"type":"text","text":"done"}],"concluded_turn":false,"rewrite":{"original":{"command":"ls"},"rewritten":{"command":"ls -la"},"by":{"hook":"tools/pre-execute","listener":"hooks"}}}"#;
    let outcome: Outcome = serde_json::from_str(record).unwrap();
    assert_eq!(serde_json::to_string(&outcome).unwrap(), record);
    assert_eq!(
        **outcome.original_arguments().unwrap(),
        json!({"command": "ls"})
    );
    assert_eq!(
        **outcome.rewritten_arguments().unwrap(),
        json!({"command": "ls -la"})
    );
    let by = Provenance::listener("tools/pre-execute", "hooks");
    assert_eq!(outcome.rewritten_by(), Some(&by));

    // Built by the host: the execution's record, then the outcome's.
    let original = Arc::new(json!({"command": "ls"}));
    let rewritten = Arc::new(json!({"command": "ls -la"}));
    let execution = ToolExecution::new(
        CallId::from("c1"),
        ToolName::new("bash").unwrap(),
        rewritten.clone(),
        Tier::Executes,
        ExecutionToken::issue(CallId::from("c1")),
    )
    .with_rewrite(original, rewritten, Some(by));
    let mut built = Outcome::success(
        CallId::from("c1"),
        "bash",
        json!("done"),
        vec![ContentBlock::text("done")],
    );
    built.record_rewrite(&execution);
    assert_eq!(serde_json::to_string(&built).unwrap(), record);

    // Without a rewrite there is no key, and nothing to read.
    let plain: Outcome = serde_json::from_str(
        r#"{"call_id":"c2","tool":"bash","status":"ok","value":"done","content":[],"concluded_turn":false}"#,
    )
    .unwrap();
    assert!(plain.original_arguments().is_none() && plain.rewritten_by().is_none());
    assert!(!serde_json::to_string(&plain).unwrap().contains("rewrite"));
}

/// What a body returns is a dispatched error; the host's verdicts are not
/// until it says so.
#[test]
fn body_errors_are_dispatched_and_host_verdicts_are_not() {
    for err in [
        ToolError::new("boom"),
        ToolError::invalid_arguments("bad"),
        ToolError::cancelled("stopped"),
        ToolError::timeout("late"),
        ToolError::code_run_failed("threw"),
    ] {
        assert!(err.dispatched(), "{err:?}");
        assert_eq!(err.pointer(), None);
    }
    let denied = ToolError::from_code(ErrorCode::Denied, "no");
    assert!(!denied.dispatched());
    assert!(denied.with_dispatched(true).dispatched());
    assert!(!tack_core::host::cancelled_before_start("bash").dispatched());
}

#[test]
fn error_codes_have_stable_wire_names() {
    let wire: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(
        wire,
        [
            "UNKNOWN_TOOL",
            "INVALID_ARGUMENTS",
            "DENIED",
            "CANCELLED",
            "TIMEOUT",
            "EXECUTION_FAILED",
            "OUTPUT_INVALID",
            "INTERNAL",
            "CODE_RUN_FAILED"
        ]
    );
    for code in ErrorCode::ALL {
        assert_eq!(serde_json::to_value(code).unwrap(), json!(code.as_str()));
        assert_eq!(code.as_str().parse::<ErrorCode>().unwrap(), code);
    }
    let err = "NOPE".parse::<ErrorCode>().unwrap_err();
    assert_eq!((err.kind, err.value.as_str()), ("error code", "NOPE"));
    assert_eq!(err.expected, ErrorCode::ALL.map(ErrorCode::as_str));
    assert_eq!(
        err.to_string(),
        "unknown error code `NOPE`: expected `UNKNOWN_TOOL`, `INVALID_ARGUMENTS`, `DENIED`, \
         `CANCELLED`, `TIMEOUT`, `EXECUTION_FAILED`, `OUTPUT_INVALID`, `INTERNAL` or \
         `CODE_RUN_FAILED`"
    );
}

#[test]
fn approval_outcomes_have_distinct_messages() {
    let outcomes = [
        ApprovalOutcome::Denied { reason: None },
        ApprovalOutcome::Denied {
            reason: Some("not now".into()),
        },
        ApprovalOutcome::Unavailable { reason: None },
        ApprovalOutcome::Cancelled,
    ];
    let messages: Vec<String> = outcomes.iter().map(|o| o.denial_message("echo")).collect();
    let mut unique = messages.clone();
    unique.dedup();
    assert_eq!(unique.len(), messages.len());
    assert!(outcomes.iter().all(|o| !o.is_allowed()));
    assert_eq!(
        serde_json::to_value(&outcomes[3]).unwrap(),
        json!({"outcome": "cancelled"})
    );
}

fn reference_valid(name: &str) -> bool {
    regex::Regex::new("^[A-Za-z0-9_-]{1,64}$")
        .unwrap()
        .is_match(name)
}

proptest! {
    #[test]
    fn tool_names_are_valid_exactly_when_they_match_the_pattern(name in "\\PC{0,70}") {
        prop_assert_eq!(ToolName::new(&name).is_ok(), reference_valid(&name));
    }

    #[test]
    fn near_valid_names_are_judged_like_the_pattern(name in "[A-Za-z0-9_ .-]{0,70}") {
        let result = ToolName::new(&name);
        prop_assert_eq!(result.is_ok(), reference_valid(&name));
        if let Ok(valid) = result {
            prop_assert_eq!(valid.as_str(), name.as_str());
        }
    }
}
