//! The public handles are `Send + Sync` and the public futures `Send`.

use std::sync::Arc;

use tack_core::context::ToolRunContext;
use tack_core::hook::{Disposer, Next, Observer, Waterfall};
use tack_core::hooks::{ExecuteOutput, ExecuteRequest, PostDecision, ToolHooks};
use tack_core::host::Capabilities;
use tack_core::host::Dispatch;
use tack_core::host::Disposables;
use tack_core::host::Guards;
use tack_core::host::{CapabilitySlots, RunEffects};
use tack_core::policy::PreDecision;
use tack_core::tool::{Outcome, ToolDefinition, ToolExecution};

fn send_sync<T: Send + Sync>() {}
fn send<T: Send>() {}

#[test]
fn handles_are_send_and_sync() {
    send_sync::<Disposer>();
    send_sync::<Disposables>();
    send_sync::<Waterfall<String, u32>>();
    send_sync::<Observer<String>>();
    send_sync::<Next<String, u32>>();
    send_sync::<ToolHooks>();
    send_sync::<Guards>();
    send_sync::<CapabilitySlots>();
    send_sync::<Capabilities>();
    send_sync::<ToolDefinition>();
    send_sync::<ToolRunContext>();
    send_sync::<RunEffects>();
    send_sync::<ToolExecution>();
    send_sync::<Outcome>();
    send_sync::<ExecuteRequest>();
    send_sync::<PreDecision>();
    send_sync::<PostDecision>();
}

#[test]
fn futures_are_send() {
    send::<Dispatch<String, u32>>();
    fn next_run_is_send(next: Next<String, u32>) -> impl std::future::Future + Send {
        next.run(String::new())
    }
    send::<Dispatch<Arc<ToolExecution>, PreDecision>>();
    send::<Dispatch<ExecuteRequest, ExecuteOutput>>();
    fn guards_run_is_send<'a>(
        g: &'a Guards,
        e: &'a Arc<ToolExecution>,
    ) -> impl std::future::Future + Send + 'a {
        g.run(None, e)
    }
    let _ = guards_run_is_send;
    let _ = next_run_is_send;
}
