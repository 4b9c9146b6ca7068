//! The run context and its capabilities.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::json;
use tack_core::capability::{Access, CapabilityError, FileBytes, FileSystem, Metadata};
use tack_core::context::ToolRunContext;
use tack_core::host::{
    CapabilitySlots, NewExecutionToken, NewRunContext, NewToolExecution, RunEffects,
};
use tack_core::tool::{CallId, ExecutionToken, Tier, ToolError, ToolExecution, ToolName};
use tokio_util::sync::CancellationToken;

/// An in-memory file system with one file, enough to see the plumbing work.
struct OneFile;

#[async_trait]
impl FileSystem for OneFile {
    fn workspace_root(&self) -> &Path {
        Path::new("/ws")
    }
    fn resolve(&self, path: &Path, _access: Access) -> Result<PathBuf, CapabilityError> {
        Ok(Path::new("/ws").join(path))
    }
    async fn read(&self, path: &Path, _limit: Option<u64>) -> Result<FileBytes, CapabilityError> {
        match path.to_str() {
            Some("hello.txt") => Ok(FileBytes::new(b"hello".to_vec(), 5, false)),
            Some("binary.bin") => Ok(FileBytes::new(vec![0xff, 0xfe], 2, false)),
            _ => Err(CapabilityError::NotFound {
                path: path.display().to_string(),
            }),
        }
    }
    async fn write(&self, path: &Path, _contents: &[u8]) -> Result<bool, CapabilityError> {
        Err(CapabilityError::Refused {
            path: path.display().to_string(),
            reason: "read-only test fs".into(),
        })
    }
    async fn list(&self, _path: &Path) -> Result<Vec<Metadata>, CapabilityError> {
        Ok(vec![])
    }
    async fn metadata(&self, path: &Path) -> Result<Metadata, CapabilityError> {
        Err(CapabilityError::NotFound {
            path: path.display().to_string(),
        })
    }
    async fn create_dir_all(&self, _path: &Path) -> Result<(), CapabilityError> {
        Ok(())
    }
    async fn remove(&self, _path: &Path, _recursive: bool) -> Result<(), CapabilityError> {
        Ok(())
    }
}

fn context(slots: &CapabilitySlots, cancel: CancellationToken) -> ToolRunContext {
    let exec = Arc::new(
        ToolExecution::new(
            CallId::from("c1"),
            ToolName::new("read_file").unwrap(),
            Arc::new(json!({})),
            Tier::ReadOnly,
            ExecutionToken::issue(CallId::from("c1")),
        )
        .with_agent(Some("agent-a".into())),
    );
    ToolRunContext::new(exec, slots.snapshot(), cancel, RunEffects::new())
}

#[tokio::test]
async fn a_provided_capability_reaches_the_body_and_its_errors_convert() {
    let slots = CapabilitySlots::new();
    let provided = slots.provide_fs(Arc::new(OneFile));
    let cx = context(&slots, CancellationToken::new());
    let fs = cx.fs().unwrap();
    assert_eq!(
        fs.read_to_string(Path::new("hello.txt")).await.unwrap(),
        "hello"
    );

    let err = fs
        .read_to_string(Path::new("binary.bin"))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        CapabilityError::NotUtf8 {
            path: "binary.bin".into(),
            valid_up_to: 0
        }
    );
    let missing = fs.read(Path::new("README.md"), None).await.unwrap_err();
    let tool_error = ToolError::from(missing);
    assert_eq!(tool_error.kind(), Some("ENOENT"));
    assert_eq!(tool_error.message(), "no such file or directory: README.md");

    provided.dispose();
    assert!(context(&slots, CancellationToken::new()).fs().is_err());
}

#[test]
fn a_missing_capability_says_which_and_how_to_get_it() {
    let slots = CapabilitySlots::new();
    let cx = context(&slots, CancellationToken::new());
    let err = cx.shell().unwrap_err();
    assert!(
        err.to_string().contains("`shell`") && err.to_string().contains("tack-sandbox"),
        "{err}"
    );
    assert!(cx.approval().is_err() && cx.dispatcher().is_err());
    let as_tool_error = ToolError::from(cx.fs().unwrap_err());
    assert_eq!(as_tool_error.kind(), Some("capability_missing"));
}

/// Every capability's failure becomes a tool error with its own `kind` and
/// message: the strings the model reads.
#[test]
fn every_capability_error_keeps_its_kind_and_message() {
    use tack_core::capability::{CapabilityError, ClientRequestKind};
    use tack_core::tool::ErrorCode;
    let path = || "src/a.rs".to_owned();
    let cases = [
        (
            CapabilityError::Missing {
                capability: "shell",
            },
            "capability_missing",
            "no `shell` capability is installed in this host: install a plugin that provides it (the sandbox plugin, tack-sandbox, provides `fs` and `shell`)",
        ),
        (
            CapabilityError::not_found(Path::new("src/a.rs")),
            "ENOENT",
            "no such file or directory: src/a.rs",
        ),
        (
            CapabilityError::refused(Path::new("src/a.rs"), "denied"),
            "EACCES",
            "access to src/a.rs refused: denied",
        ),
        (
            CapabilityError::is_a_directory(Path::new("src/a.rs")),
            "EISDIR",
            "src/a.rs is a directory, not a file: list it instead",
        ),
        (
            CapabilityError::not_a_directory(Path::new("src/a.rs")),
            "ENOTDIR",
            "src/a.rs is not a directory",
        ),
        (
            CapabilityError::AlreadyExists { path: path() },
            "EEXIST",
            "src/a.rs already exists",
        ),
        (
            CapabilityError::TooLarge {
                path: path(),
                size: 10,
                limit: 5,
            },
            "EFBIG",
            "src/a.rs is 10 bytes, over the limit of 5 bytes: read it in pages",
        ),
        (
            CapabilityError::NotUtf8 {
                path: path(),
                valid_up_to: 3,
            },
            "EILSEQ",
            "src/a.rs is not UTF-8 text (invalid byte at offset 3); it may be binary",
        ),
        (
            CapabilityError::Io {
                path: path(),
                message: "disk".into(),
            },
            "EIO",
            "I/O error on src/a.rs: disk",
        ),
        (
            CapabilityError::CommandRefused {
                reason: "no isolation".into(),
            },
            "refused",
            "command refused: no isolation",
        ),
        (
            CapabilityError::EmptyCommand,
            "empty_command",
            "the command is empty: pass the command line to run",
        ),
        (
            CapabilityError::Spawn {
                message: "no shell".into(),
            },
            "spawn_failed",
            "could not start the command: no shell",
        ),
        (
            CapabilityError::Cancelled,
            "cancelled",
            "the command was cancelled and its processes were killed",
        ),
        (
            CapabilityError::CommandIo {
                message: "pipe".into(),
            },
            "io",
            "I/O error while running the command: pipe",
        ),
        (
            CapabilityError::NoClient,
            "no_client",
            "no client can be asked during this call: only a tool served to a client (tack mcp serve) can ask it for sampling, elicitation or roots",
        ),
        (
            CapabilityError::Unsupported {
                kind: ClientRequestKind::Sampling,
            },
            "client_unsupported",
            "the client did not declare the `sampling` capability, so it cannot be asked for sampling",
        ),
        (
            CapabilityError::InputRequired,
            "input_required",
            "the client's answers are needed: the call is sent back to the client, which calls again with them",
        ),
        (
            CapabilityError::ClientFailed {
                message: "timeout".into(),
            },
            "client_failed",
            "the client did not answer: timeout",
        ),
    ];
    for (err, kind, message) in cases {
        assert_eq!(err.kind_name(), kind, "{err}");
        assert_eq!(err.to_string(), message);
        let cancelled = err == CapabilityError::Cancelled;
        let tool_error = ToolError::from(err);
        assert_eq!(tool_error.kind(), Some(kind));
        assert_eq!(tool_error.message(), message);
        let code = if cancelled {
            ErrorCode::Cancelled
        } else {
            ErrorCode::ExecutionFailed
        };
        assert_eq!(tool_error.code(), code, "{kind}");
    }
}

#[test]
fn a_replaced_provider_is_not_removed_by_the_old_disposer() {
    let slots = CapabilitySlots::new();
    let first = slots.provide_fs(Arc::new(OneFile));
    let _second = slots.provide_fs(Arc::new(OneFile));
    first.dispose();
    assert!(slots.snapshot().fs.is_some(), "the second provider stays");
}

/// Snapshots taken on other threads (each thread keeps its own copy) do not
/// keep a removed provider alive, and a snapshot shows the providers of its
/// moment.
#[test]
fn a_removed_provider_is_freed_though_threads_took_snapshots() {
    let slots = CapabilitySlots::new();
    let fs: Arc<dyn FileSystem> = Arc::new(OneFile);
    let disposer = slots.provide_fs(fs.clone());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| assert!(slots.snapshot().fs.is_some()));
        }
    });
    let before = slots.snapshot();
    assert!(
        Arc::strong_count(&fs) > 2,
        "held by the slots and the snapshots"
    );
    disposer.dispose();
    assert!(slots.snapshot().fs.is_none());
    assert!(before.fs.is_some(), "a snapshot does not change");
    drop(before);
    assert_eq!(Arc::strong_count(&fs), 1, "no thread's copy keeps it");
}

#[test]
fn a_child_cancellation_still_hears_the_caller() {
    let caller = CancellationToken::new();
    let slots = CapabilitySlots::new();
    let cx = context(&slots, caller.clone());
    let child = cx.cancellation().child_token();
    let body_cx = cx.with_cancellation(child.clone());
    child.cancel();
    assert!(
        body_cx.is_cancelled() && !cx.is_cancelled(),
        "the wrapper's own signal does not reach the caller"
    );

    let caller2 = CancellationToken::new();
    let cx2 = context(&slots, caller2.clone());
    let body2 = cx2.with_cancellation(cx2.cancellation().child_token());
    caller2.cancel();
    assert!(
        body2.is_cancelled(),
        "the caller's cancellation reaches the body"
    );
}

#[test]
fn effects_and_nested_calls() {
    let slots = CapabilitySlots::new();
    let cx = context(&slots, CancellationToken::new());
    cx.conclude_turn();
    let nested = cx.nested_call("c1:code:1", "list_dir", "{}");
    assert_eq!(nested.parent.as_ref(), Some(cx.token()));
    assert_eq!(nested.agent.as_ref().map(|a| a.as_str()), Some("agent-a"));
    assert_eq!(cx.token().root_call_id().as_str(), "c1");
}

/// The first context made for an execution keeps its signal in the execution
/// (where the host reads it after the body); a later context of the same
/// execution keeps its own, and neither hears the other's.
#[test]
fn each_context_of_an_execution_hears_its_own_signal() {
    let execution = Arc::new(ToolExecution::new(
        CallId::from("c1"),
        ToolName::new("demo").unwrap(),
        json!({}),
        Tier::ReadOnly,
        ExecutionToken::issue(CallId::from("c1")),
    ));
    let slots = CapabilitySlots::new();
    let (first, second) = (CancellationToken::new(), CancellationToken::new());
    let (first_cx, _) =
        ToolRunContext::with_fresh_effects(execution.clone(), slots.snapshot(), first.clone());
    let (second_cx, _) =
        ToolRunContext::with_fresh_effects(execution.clone(), slots.snapshot(), second.clone());
    second.cancel();
    assert!(second_cx.is_cancelled() && second_cx.clone().is_cancelled());
    assert!(!first_cx.is_cancelled() && !first_cx.clone().is_cancelled());
    assert!(
        !execution.run_cancellation().unwrap().is_cancelled(),
        "the execution keeps the first context's signal"
    );
    first.cancel();
    assert!(first_cx.is_cancelled());
    assert!(execution.run_cancellation().unwrap().is_cancelled());
}

/// A client channel that records what reaches it and answers every question
/// with its key.
#[derive(Default)]
struct Recording(std::sync::Mutex<Vec<String>>);

impl tack_core::capability::ClientChannel for Recording {
    fn progress(
        &self,
        call: &CallId,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> futures::future::BoxFuture<'static, ()> {
        self.0
            .lock()
            .unwrap()
            .push(format!("{call}: progress {progress}/{total:?} {message:?}"));
        Box::pin(async {})
    }
    fn log(
        &self,
        call: &CallId,
        level: tack_core::capability::ClientLogLevel,
        data: serde_json::Value,
    ) -> futures::future::BoxFuture<'static, ()> {
        self.0
            .lock()
            .unwrap()
            .push(format!("{call}: log {level:?} {data}"));
        Box::pin(async {})
    }
    fn can_ask(&self, _call: &CallId, kind: tack_core::capability::ClientRequestKind) -> bool {
        kind == tack_core::capability::ClientRequestKind::Elicitation
    }
    fn ask(
        &self,
        _call: &CallId,
        requests: Vec<tack_core::capability::ClientRequest>,
    ) -> futures::future::BoxFuture<
        'static,
        Result<Vec<serde_json::Value>, tack_core::capability::CapabilityError>,
    > {
        let answers = requests.iter().map(|r| json!(r.key)).collect();
        Box::pin(async move { Ok(answers) })
    }
}

#[tokio::test]
async fn a_body_reaches_the_client_of_its_call_and_without_one_nothing_is_sent() {
    use tack_core::capability::{
        CapabilityError, ClientLogLevel, ClientRequest, ClientRequestKind,
    };
    let question = || {
        vec![ClientRequest::new(
            "name",
            ClientRequestKind::Elicitation,
            json!({"message": "?"}),
        )]
    };
    // No client: progress and logs go nowhere, a question is an error.
    let slots = CapabilitySlots::new();
    let cx = context(&slots, CancellationToken::new());
    cx.report_progress(1.0, Some(2.0), None).await;
    cx.log_to_client(ClientLogLevel::Info, json!("hi")).await;
    assert!(!cx.client_can_ask(ClientRequestKind::Elicitation));
    let err = cx.ask_client(question()).await.unwrap_err();
    assert_eq!(err, CapabilityError::NoClient);
    assert!(ToolError::from(err).to_string().contains("tack mcp serve"));

    // A client: everything reaches it, named by the call.
    let client = Arc::new(Recording::default());
    let provided = slots.provide_client(client.clone());
    assert_eq!(
        format!("{:?}", slots.snapshot()),
        "Capabilities { fs: false, shell: false, approval: false, dispatcher: false, client: true }"
    );
    let cx = context(&slots, CancellationToken::new());
    cx.report_progress(1.0, Some(2.0), Some("half way".to_owned()))
        .await;
    cx.log_to_client(ClientLogLevel::Warning, json!("careful"))
        .await;
    assert!(cx.client_can_ask(ClientRequestKind::Elicitation));
    assert!(!cx.client_can_ask(ClientRequestKind::Sampling));
    assert_eq!(cx.ask_client(question()).await.unwrap(), [json!("name")]);
    let id = cx.call_id().to_string();
    assert_eq!(
        *client.0.lock().unwrap(),
        [
            format!("{id}: progress 1/Some(2.0) Some(\"half way\")"),
            format!("{id}: log Warning \"careful\""),
        ]
    );
    // Disposing the provider empties the slot.
    provided.dispose();
    assert!(slots.snapshot().client.is_none());
}
