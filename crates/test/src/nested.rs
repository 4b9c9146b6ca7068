//! The harness's nested dispatcher: the calls a composite tool (code mode, a
//! tool that calls other tools) dispatches from inside a call go through the
//! same pipeline, and each one's outcome is kept for the report of the
//! top-level call it was made in.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Weak};

use parking_lot::Mutex;
use tack_core::CancellationToken;
use tack_core::capability::{OnAdmitted, ToolDispatcher};
use tack_core::host::{NewFailure, NewOutcome};
use tack_core::tool::{CallId, ErrorCode, Failure, Outcome, ToolCall};

use crate::driver::Driver;

type OutcomeFuture = Pin<Box<dyn Future<Output = Arc<Outcome>> + Send + 'static>>;

/// The outcomes of nested calls, by the id of the top-level call they were
/// made in (the root of their parent token), in the order they ended.
#[derive(Default)]
pub(crate) struct NestedCalls(Mutex<HashMap<CallId, Vec<Arc<Outcome>>>>);

impl NestedCalls {
    fn push(&self, root: CallId, outcome: Arc<Outcome>) {
        self.0.lock().entry(root).or_default().push(outcome);
    }

    /// The nested calls made in `root` that have ended, taken out.
    pub(crate) fn take(&self, root: &CallId) -> Vec<Arc<Outcome>> {
        self.0.lock().remove(root).unwrap_or_default()
    }
}

/// Runs nested calls through the harness's pipeline, exactly as the
/// pipeline's own nested dispatcher does, and notes each outcome under the
/// root of the call's parent token. Holds the driver weakly: it lives in the
/// driver's own capability slots.
pub(crate) struct NestedDispatcher(Weak<Driver>);

impl NestedDispatcher {
    pub(crate) fn new(driver: Weak<Driver>) -> Self {
        Self(driver)
    }
}

impl ToolDispatcher for NestedDispatcher {
    fn dispatch(&self, call: ToolCall, cancel: CancellationToken) -> OutcomeFuture {
        self.dispatch_admitted(call, cancel, Box::new(|| {}))
    }

    fn dispatch_admitted(
        &self,
        call: ToolCall,
        cancel: CancellationToken,
        admitted: OnAdmitted,
    ) -> OutcomeFuture {
        let driver = self.0.upgrade();
        Box::pin(async move {
            let Some(driver) = driver else {
                admitted();
                return Arc::new(Outcome::failure(
                    call.call_id,
                    call.name,
                    Failure::new(
                        ErrorCode::Internal,
                        "the harness was dropped before this nested call ran",
                    ),
                ));
            };
            let root = call.parent.as_ref().map(|p| p.root_call_id().clone());
            let outcome = driver.execute_admitted(call, cancel, admitted).await;
            // A call made without a parent token belongs to no top-level
            // call: it is not kept (its record stays with the harness).
            if let Some(root) = root {
                driver.nested().push(root, outcome.clone());
            }
            outcome
        })
    }
}
