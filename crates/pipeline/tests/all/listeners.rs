//! Listener doubles: fixed answers, logging pass-throughs, and a wrapper that
//! cancels the caller once the call is done.

use serde_json::Value;
use std::sync::Arc;

use tack_core::hook::{Disposer, Order, Waterfall};
use tack_core::hooks::{ExecuteOutput, PostDecision};
use tack_core::policy::PreDecision;
use tokio_util::sync::CancellationToken;

use crate::harness::{Harness, Log};

/// A pre-execute listener that answers every call with `decision`.
pub fn answer_pre(h: &Harness, name: impl Into<Arc<str>>, decision: PreDecision) -> Disposer {
    answer_pre_at(h, name, Order::NORMAL, decision)
}

/// [`answer_pre`] placed by `order`.
pub fn answer_pre_at(
    h: &Harness,
    name: impl Into<Arc<str>>,
    order: Order,
    decision: PreDecision,
) -> Disposer {
    h.hooks()
        .pre_execute()
        .tap_with(name, order, move |_exec, _next| {
            std::future::ready(decision.clone())
        })
        .unwrap()
}

/// A `tools/execute` wrapper that short-circuits every call with `value`.
pub fn answer_execute(h: &Harness, name: impl Into<Arc<str>>, value: Value) -> Disposer {
    h.hooks().execute().tap(name, move |_req, _next| {
        std::future::ready(ExecuteOutput::ok(value.clone()))
    })
}

/// A post-execute listener that answers every outcome with `decision`.
pub fn answer_post(h: &Harness, name: impl Into<Arc<str>>, decision: PostDecision) -> Disposer {
    h.hooks().post_execute().tap(name, move |_input, _next| {
        std::future::ready(decision.clone())
    })
}

/// A listener on `hook` that logs `entry(input)` and delegates.
pub fn log_and_delegate<In: Send + 'static, Out: Send + 'static>(
    hook: &Waterfall<In, Out>,
    name: impl Into<Arc<str>>,
    log: &Log,
    entry: impl Fn(&In) -> String + Send + Sync + 'static,
) -> Disposer {
    let log = log.clone();
    hook.tap(name, move |input, next| {
        log.push(entry(&input));
        next.run(input)
    })
}

/// A post-execute listener `audit` that logs each outcome's error code (`{:?}`).
pub fn audit_codes(h: &Harness, log: &Log) -> Disposer {
    log_and_delegate(h.hooks().post_execute(), "audit", log, |input| {
        format!("{:?}", input.outcome.error_code())
    })
}

/// An execute wrapper that lets the call finish, cancels `caller`, and answers `answer(out)`.
pub fn cancel_after_call(
    h: &Harness,
    name: impl Into<Arc<str>>,
    caller: CancellationToken,
    answer: fn(ExecuteOutput) -> ExecuteOutput,
) -> Disposer {
    cancel_after_call_at(h, name, Order::NORMAL, caller, answer)
}

/// [`cancel_after_call`] placed by `order`.
pub fn cancel_after_call_at(
    h: &Harness,
    name: impl Into<Arc<str>>,
    order: Order,
    caller: CancellationToken,
    answer: fn(ExecuteOutput) -> ExecuteOutput,
) -> Disposer {
    h.hooks()
        .execute()
        .tap_with(name, order, move |req, next| {
            let caller = caller.clone();
            async move {
                let out = next.run(req).await;
                caller.cancel();
                answer(out)
            }
        })
        .unwrap()
}
