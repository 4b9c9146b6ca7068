//! The endpoint processes the tests start: this test binary run again with
//! `endpoint_process` and the `TACK_RESTATE_FIXTURE_*` variables set. Its
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
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tack_agent::{ChatModel, ScriptedModel};
use tack_core::context::ToolRunContext;
use tack_core::policy::PreDecision;
use tack_core::tool::{OutputSpec, ToolDefinition, ToolError, ToolErrorCode, ToolExecution};
use tack_pipeline::{Pipeline, ToolRegistry};
use tack_restate::SessionHost;

use crate::restate::{free_port, nix_kill, wait_until};

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
        .map_err(|e| ToolError::with_code(ToolErrorCode::ExecutionFailed, e.to_string()))?;
    writeln!(out, "{name}")
        .and_then(|()| out.sync_all())
        .map_err(|e| ToolError::with_code(ToolErrorCode::ExecutionFailed, e.to_string()))
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
                            return Err(ToolError::with_code(
                                ToolErrorCode::ExecutionFailed,
                                "the gate never opened",
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

/// The endpoint process [`EndpointProcess::spawn`] starts (ignored in an
/// ordinary test run).
#[test]
#[ignore = "the endpoint process the other tests start, with TACK_RESTATE_FIXTURE_* set"]
fn endpoint_process() {
    let var = |name: &str| {
        std::env::var(name).unwrap_or_else(|_| {
            panic!("{name} is not set: this is the endpoint process the other tests start")
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
            .expect("register")
            .forget();
    }
    let pipeline = Pipeline::new(registry);
    pipeline
        .hooks()
        .pre_execute()
        .tap("fixture-ask", |exec: Arc<ToolExecution>, next| async move {
            if exec.name() == "guarded" {
                PreDecision::ask("guarded calls need a person's approval")
            } else {
                next.run(exec).await
            }
        })
        .forget();
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

/// An endpoint process, stopped (by pid) when dropped.
pub struct EndpointProcess {
    child: Option<Child>,
    name: String,
    key: Option<String>,
    dir: PathBuf,
    /// Its port.
    pub port: u16,
}

impl EndpointProcess {
    /// Starts endpoint `name` serving sessions whose files are under `dir`.
    pub fn spawn(name: &str, dir: &Path) -> Self {
        Self::spawn_with_key(name, dir, None)
    }

    /// [`spawn`](Self::spawn), serving only requests signed by the server
    /// whose request-identity public key is `key`.
    pub fn spawn_with_key(name: &str, dir: &Path, key: Option<&str>) -> Self {
        let mut process = Self {
            child: None,
            name: name.to_owned(),
            key: key.map(str::to_owned),
            dir: dir.to_owned(),
            port: free_port(),
        };
        process.start();
        process
    }

    /// `http://127.0.0.1:PORT`.
    pub fn uri(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn start(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join(format!("endpoint-{}.log", self.name)))
            .expect("endpoint log");
        let mut command = Command::new(std::env::current_exe().expect("test binary"));
        if let Some(key) = &self.key {
            command.env("TACK_RESTATE_FIXTURE_KEY", key);
        }
        let child = command
            .args([
                "fixture::endpoint_process",
                "--exact",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("TACK_RESTATE_FIXTURE_DIR", &self.dir)
            .env("TACK_RESTATE_FIXTURE_NAME", &self.name)
            .env("TACK_RESTATE_FIXTURE_PORT", self.port.to_string())
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("start the endpoint");
        self.child = Some(child);
        let address = format!("127.0.0.1:{}", self.port);
        wait_until("the endpoint to listen", Duration::from_secs(60), || {
            std::net::TcpStream::connect(&address).is_ok()
        });
    }

    /// Kills the process with SIGKILL (nothing runs after it).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            nix_kill(&child, "KILL").expect("kill -KILL");
            let _ = child.wait();
        }
    }

    /// Stops the process with SIGTERM.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = nix_kill(&child, "TERM");
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port.
    pub fn restart(&mut self) {
        self.start();
    }
}

impl Drop for EndpointProcess {
    fn drop(&mut self) {
        self.kill();
    }
}
