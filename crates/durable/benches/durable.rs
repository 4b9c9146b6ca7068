//! What a durable step costs: one turn through a real Restate server and a
//! tack endpoint (in this process), against the same turn in memory
//! (`Agent::run`), in the same run.
//!
//! * `turn/in-memory/K` and `turn/durable/K`: a turn of K tool-call steps
//!   (one trivial `echo` call each) and a final answer, each turn in a new
//!   session. The cost per tool call is the slope in K; the cost per turn
//!   is the durable figure at K = 0 minus the in-memory one.
//! * `concurrent/durable/N`: N sessions each run a one-call turn at once
//!   (time for all N).
//!
//! Needs restate-server (`npm ci --prefix .ci/restate`, or
//! `$TACK_RESTATE_SERVER`); without it only the in-memory figures run.
//!
//! Run: `cargo bench -p tack-restate --bench durable`

// criterion's macros define undocumented functions.
#![allow(missing_docs)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use serde_json::json;
use tack_agent::{Agent, ChatModel, Message, ModelError, Reply};
use tack_core::host::ToolSchema;
use tack_core::tool::{OutputSpec, ToolCall, ToolDefinition};
use tack_pipeline::{Pipeline, ToolRegistry};
use tack_restate::{IngressClient, SessionHost};

#[allow(dead_code)]
#[path = "../tests/all/restate.rs"]
mod restate;

/// Calls `echo` until the turn (the messages after the last prompt) holds
/// `calls` batches, then answers.
struct Steps {
    calls: usize,
}

#[async_trait]
impl ChatModel for Steps {
    fn name(&self) -> String {
        "steps".into()
    }

    async fn complete(&self, messages: &[Message], _: &[ToolSchema]) -> Result<Reply, ModelError> {
        let start = messages
            .iter()
            .rposition(|m| matches!(m, Message::User(_)))
            .unwrap_or(0);
        let done = messages[start..]
            .iter()
            .filter(|m| matches!(m, Message::ToolCalls(_)))
            .count();
        if done < self.calls {
            let id = format!("c{done}");
            Ok(Reply::ToolCalls(vec![ToolCall::new(
                id.as_str(),
                "echo",
                r#"{"text": "hi"}"#,
            )]))
        } else {
            Ok(Reply::Text("done".into()))
        }
    }
}

fn pipeline() -> Pipeline {
    let registry = ToolRegistry::new();
    registry
        .register(
            ToolDefinition::builder("echo")
                .description("Repeat the text.")
                .input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}}))
                .output(OutputSpec::new(json!({"type": "string"})))
                .handler(|args, _cx| async move { Ok(args["text"].clone()) })
                .build()
                .expect("echo"),
        )
        .expect("register");
    Pipeline::new(registry)
}

/// The model's number of calls is the session key's prefix (`K-…`).
struct BenchHost {
    pipeline: Pipeline,
}

impl SessionHost for BenchHost {
    fn model(&self, session: &str) -> Arc<dyn ChatModel> {
        let calls = session
            .split('-')
            .next()
            .and_then(|k| k.parse().ok())
            .unwrap_or(0);
        Arc::new(Steps { calls })
    }

    fn pipeline(&self) -> &Pipeline {
        &self.pipeline
    }
}

const CALLS: [usize; 3] = [0, 1, 4];

fn benches(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");

    let mut group = c.benchmark_group("turn");
    group.sample_size(20);
    let memory = pipeline();
    for calls in CALLS {
        group.bench_with_input(BenchmarkId::new("in-memory", calls), &calls, |b, &calls| {
            b.to_async(&runtime).iter(|| async {
                let mut agent = Agent::builder(Arc::new(Steps { calls }), memory.clone()).build();
                agent.run("go").await.expect("turn")
            });
        });
    }

    let scratch = tempfile::tempdir().expect("scratch");
    let Some(server) = restate::Restate::start(scratch.path()) else {
        group.finish();
        return;
    };
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("bind");
    let port = listener.local_addr().expect("address").port();
    let host = Arc::new(BenchHost {
        pipeline: pipeline(),
    });
    let endpoint = tack_restate::endpoint(host, &[]).expect("endpoint");
    runtime.spawn(tack_restate::serve(listener, endpoint));
    runtime
        .block_on(tack_restate::register_deployment(
            &server.admin,
            &format!("http://127.0.0.1:{port}"),
        ))
        .expect("register");
    let client = IngressClient::new(&server.ingress).expect("client");
    let next = AtomicUsize::new(0);
    for calls in CALLS {
        group.bench_with_input(BenchmarkId::new("durable", calls), &calls, |b, &calls| {
            b.to_async(&runtime).iter(|| async {
                let session = format!("{calls}-{}", next.fetch_add(1, Ordering::Relaxed));
                client.turn(&session, "go").await.expect("turn")
            });
        });
    }
    group.finish();

    let mut group = c.benchmark_group("concurrent");
    group.sample_size(10);
    for sessions in [1, 10, 100] {
        group.bench_with_input(
            BenchmarkId::new("durable", sessions),
            &sessions,
            |b, &sessions| {
                b.to_async(&runtime).iter(|| async {
                    let turns: Vec<_> = (0..sessions)
                        .map(|_| {
                            let session = format!("1-{}", next.fetch_add(1, Ordering::Relaxed));
                            let client = client.clone();
                            tokio::spawn(async move { client.turn(&session, "go").await })
                        })
                        .collect();
                    for turn in turns {
                        turn.await.expect("join").expect("turn");
                    }
                });
            },
        );
    }
    group.finish();
    drop(server);
}

criterion_group!(durable, benches);
criterion_main!(durable);
