//! A `tools/post-execute` listener that replaces a result's content (a
//! redaction) keeps what it hid out of the session log: the log keeps what
//! the model saw, and a replay renders from it.

use std::sync::Arc;

use serde_json::{Value, json};
use tack_agent::{Agent, EventBus, Renderer, ScriptedModel, SessionLog, Style, read_log};
use tack_core::hooks::ExecutionRecord;
use tack_core::tool::{ContentBlock, OutputSpec, ToolDefinition};
use tack_pipeline::{Pipeline, ToolRegistry};

const SECRET: &str = "hunter2-0xC0FFEE";

/// `read_env`: returns the secret as its value, with a presenter that shows
/// it (what a UI would print, were the value there).
fn read_env() -> ToolDefinition {
    ToolDefinition::builder("read_env")
        .description("Read the environment file.")
        .input_schema(json!({"type": "object"}))
        .output(OutputSpec::new(json!({"type": "object"})))
        .present_result(|_args, outcome| {
            format!("read {}", outcome.value().unwrap_or(&Value::Null))
        })
        .handler(|_args: Arc<Value>, _cx| async move { Ok(json!({"API_KEY": SECRET})) })
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_replaced_content_keeps_the_secret_out_of_the_log_and_its_replay() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    let registry = ToolRegistry::new();
    let pipeline = Pipeline::new(registry.clone());
    registry.register(read_env()).unwrap();
    let _redact =
        pipeline
            .hooks()
            .post_execute()
            .tap("redact", |record: ExecutionRecord, next| async move {
                let decision = next.run(record).await;
                decision.replace_content(vec![ContentBlock::text("[redacted]")])
            });
    let script = json!({"turns": [
        {"tool_calls": [{"id": "c1", "name": "read_env", "arguments": "{}"}]},
        {"text": "done"}
    ]});
    let model = ScriptedModel::parse(&script.to_string()).unwrap();
    let bus = Arc::new(EventBus::new(Some(Arc::new(
        SessionLog::create(&path).unwrap(),
    ))));
    let mut agent = Agent::builder(Arc::new(model), pipeline)
        .events(bus)
        .build();
    agent.run("go").await.unwrap();
    drop(agent);

    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        !text.contains(SECRET),
        "the secret reached the log:\n{text}"
    );
    let result = text
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .find(|record| record["type"] == "tool/result")
        .unwrap();
    // What the model saw, and that it was replaced.
    assert_eq!(
        result["content"],
        json!([{"type": "text", "text": "[redacted]"}])
    );
    assert_eq!(result["content_replaced"], json!(true));
    assert_eq!(result["status"], json!("ok"));
    assert_eq!(result["value"], Value::Null);

    // The replay renders from what was logged, not from a value that is not there.
    let contents = read_log(&path).unwrap();
    let mut renderer = Renderer::new(registry, Style::Plain);
    let shown: String = contents
        .records
        .iter()
        .filter_map(|r| renderer.render(r))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(!shown.contains(SECRET), "{shown}");
    assert!(!shown.contains("read null"), "{shown}");
}

#[tokio::test]
async fn an_untouched_result_keeps_its_value_in_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    let registry = ToolRegistry::new();
    let pipeline = Pipeline::new(registry.clone());
    registry.register(read_env()).unwrap();
    let script = json!({"turns": [
        {"tool_calls": [{"id": "c1", "name": "read_env", "arguments": "{}"}]},
        {"text": "done"}
    ]});
    let model = ScriptedModel::parse(&script.to_string()).unwrap();
    let bus = Arc::new(EventBus::new(Some(Arc::new(
        SessionLog::create(&path).unwrap(),
    ))));
    let mut agent = Agent::builder(Arc::new(model), pipeline)
        .events(bus)
        .build();
    agent.run("go").await.unwrap();
    drop(agent);
    let text = std::fs::read_to_string(&path).unwrap();
    let result = text
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .find(|record| record["type"] == "tool/result")
        .unwrap();
    assert_eq!(result["value"], json!({"API_KEY": SECRET}));
    assert!(result.get("content_replaced").is_none());
}

/// In code mode the program is the model's: a sub-call whose content a
/// listener replaced gives the program the replacement, so neither the
/// `run_code` result nor the `tools/code-dispatch` records hold the secret.
#[tokio::test]
async fn a_redacted_sub_call_keeps_the_secret_from_the_program_and_the_log() {
    use tack_code_mode::{CodeModeConfig, run_code_definition};
    use tack_pipeline::Presentation;

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    let registry = ToolRegistry::new();
    let pipeline = Pipeline::new(registry.clone());
    registry.register(read_env()).unwrap();
    let definition =
        run_code_definition(CodeModeConfig::default(), pipeline.hooks().clone()).unwrap();
    registry.register_code_transport(definition).unwrap();
    registry.set_presentation(None, Presentation::Code);
    let _redact =
        pipeline
            .hooks()
            .post_execute()
            .tap("redact", |record: ExecutionRecord, next| async move {
                let redact = record
                    .execution
                    .as_ref()
                    .is_some_and(|e| e.name() == "read_env");
                let decision = next.run(record).await;
                if redact {
                    decision.replace_content(vec![ContentBlock::text("[redacted]")])
                } else {
                    decision
                }
            });
    let code =
        "const env = await tools.read_env({}); console.log(JSON.stringify(env)); return env;";
    let script = json!({"turns": [
        {"tool_calls": [{"id": "c1", "name": "run_code", "arguments": json!({"code": code}).to_string()}]},
        {"text": "done"}
    ]});
    let model = ScriptedModel::parse(&script.to_string()).unwrap();
    let bus = Arc::new(EventBus::new(Some(Arc::new(
        SessionLog::create(&path).unwrap(),
    ))));
    let mut agent = Agent::builder(Arc::new(model), pipeline)
        .events(bus)
        .build();
    agent.run("go").await.unwrap();
    drop(agent);

    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        !text.contains(SECRET),
        "the secret reached the log:\n{text}"
    );
    let records: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .collect();
    let dispatch = records
        .iter()
        .find(|r| r["type"] == "tool/code-dispatch")
        .unwrap();
    assert_eq!(
        dispatch["content"],
        json!([{"type": "text", "text": "[redacted]"}])
    );
    let result = records.iter().find(|r| r["type"] == "tool/result").unwrap();
    assert_eq!(result["value"]["result"], json!("[redacted]"), "{result}");
}
