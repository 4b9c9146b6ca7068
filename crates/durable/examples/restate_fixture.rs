//! The endpoint process tack-restate's tests start (`tests/all/fixture.rs`),
//! with the `TACK_RESTATE_FIXTURE_*` variables set: `DIR`, `NAME`, `PORT`
//! and, optionally, `KEY` (the Restate server's request-identity key). Its
//! sessions ask a scripted model (`DIR/scripts/{session}.json`, positioned
//! by the history) and call four tools, each appending the endpoint's name
//! as a line to `DIR/files/{file}`:
//!
//! * `append`: appends, defers a context (`note: appended FILE`) and returns.
//! * `hold`: appends, then waits until `DIR/gate` exists (so a test can
//!   stop the process while the call is in flight).
//! * `hold_idempotent`: `hold`, declared idempotent.
//! * `guarded`: `append`, but the pipeline asks for approval first.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tack_agent::{ChatModel, ScriptedModel};
use tack_core::context::ToolRunContext;
use tack_core::policy::PreDecision;
use tack_core::tool::{OutputSpec, ToolDefinition, ToolError, ToolExecution};
use tack_pipeline::{Pipeline, ToolRegistry};
use tack_restate::SessionHost;

struct FixtureHost {
    dir: PathBuf,
    pipeline: Pipeline,
}

impl SessionHost for FixtureHost {
    fn model(&self, session: &str) -> Arc<dyn ChatModel> {
        let path = self.dir.join("scripts").join(format!("{session}.json"));
        let model = ScriptedModel::from_file(&path).expect("the session's script");
        Arc::new(model.positioned_by_history())
    }

    fn pipeline(&self) -> &Pipeline {
        &self.pipeline
    }
}

fn append(dir: &Path, name: &str, args: &Value) -> Result<(), ToolError> {
    let file = args["file"].as_str().unwrap_or("unnamed");
    let mut out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("files").join(file))
        .map_err(|e| ToolError::new(e.to_string()))?;
    writeln!(out, "{name}")
        .and_then(|()| out.sync_all())
        .map_err(|e| ToolError::new(e.to_string()))
}

fn tool(name: &str, dir: &Path, endpoint: &str, hold: bool, idempotent: bool) -> ToolDefinition {
    let (dir, endpoint) = (dir.to_owned(), endpoint.to_owned());
    ToolDefinition::builder(name)
        .description("Append a line to a file (test fixture).")
        .input_schema(json!({"type": "object", "properties": {"file": {"type": "string"}}, "required": ["file"]}))
        .output(OutputSpec::new(json!({"type": "string"})))
        .idempotent(idempotent)
        .handler(move |args: Arc<Value>, cx: ToolRunContext| {
            let (dir, endpoint) = (dir.clone(), endpoint.clone());
            async move {
                append(&dir, &endpoint, &args)?;
                if !hold {
                    cx.defer_context(format!("note: appended {}", args["file"].as_str().unwrap_or("")));
                }
                if hold {
                    let gate = dir.join("gate");
                    let mut waited = 0;
                    while !gate.exists() {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        waited += 1;
                        if waited > 60_000 {
                            return Err(ToolError::new("the gate never opened",
                            ));
                        }
                    }
                }
                Ok(json!(format!("appended by {endpoint}")))
            }
        })
        .build()
        .expect("fixture tool")
}

fn main() {
    let var = |name: &str| {
        std::env::var(name).unwrap_or_else(|_| {
            panic!("{name} is not set: this is the endpoint process tack-restate's tests start")
        })
    };
    let (dir, name, port) = (
        var("TACK_RESTATE_FIXTURE_DIR"),
        var("TACK_RESTATE_FIXTURE_NAME"),
        var("TACK_RESTATE_FIXTURE_PORT"),
    );
    let dir = PathBuf::from(dir);
    let registry = ToolRegistry::new();
    for (tool_name, hold, idempotent) in [
        ("append", false, false),
        ("hold", true, false),
        ("hold_idempotent", true, true),
        ("guarded", false, false),
    ] {
        registry
            .register(tool(tool_name, &dir, &name, hold, idempotent))
            .expect("register");
    }
    let pipeline = Pipeline::new(registry);
    pipeline.hooks().pre_execute().tap(
        "fixture-ask",
        |exec: Arc<ToolExecution>, next| async move {
            if exec.name() == "guarded" {
                PreDecision::ask("guarded calls need a person's approval")
            } else {
                next.run(exec).await
            }
        },
    );
    let host = Arc::new(FixtureHost { dir, pipeline });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        let listener =
            tokio::net::TcpListener::bind(("127.0.0.1", port.parse::<u16>().expect("port")))
                .await
                .expect("bind the endpoint's port");
        let keys: Vec<String> = std::env::var("TACK_RESTATE_FIXTURE_KEY")
            .into_iter()
            .collect();
        let endpoint = tack_restate::endpoint(host, &keys).expect("the endpoint");
        tack_restate::serve(listener, endpoint).await;
    });
}
