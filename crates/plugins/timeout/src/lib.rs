//! # tack-timeout
//!
//! Per-tool deadlines for tack, as a `tools/execute` wrapper.
//!
//! * **Budget**: the tool's declared timeout
//!   ([`ExecuteRequest::timeout`](tack_core::hooks::ExecuteRequest::timeout));
//!   for tools that declare none, an optional policy default (off by default:
//!   an undeclared tool is left untouched); any budget is clamped by an
//!   optional ceiling. See [`Timeout::budget_for`].
//! * **Signal**: the body runs with a *child* of the caller's cancellation
//!   token, so the caller's cancellation still reaches it, while the deadline
//!   cancels only the child. The caller's token is what every other stage sees.
//! * **Deadline**: when the call's budget runs out the child is cancelled and the body
//!   gets a grace period (default 2 s) to reach quiescence; then its future is
//!   dropped (abandoned). The outcome is `TIMEOUT`, "tool `x` timed out after
//!   5000 ms", with provenance `tools/execute › listener timeout`. A hung tool
//!   never hangs the turn.
//! * **Caller first**: if the caller cancels before the deadline, the outcome is
//!   the body's own answer (normally `CANCELLED`), or `CANCELLED` from this
//!   wrapper when the body does not stop within the grace period.
//! * **Approval**: the clock starts when `tools/execute` runs, after
//!   pre-execute, approval and guards: waiting for a person never counts.
//!
//! ## Ordering
//!
//! By default the wrapper is *outside* the other `tools/execute` wrappers:
//! its budget covers them and the body together. To place it elsewhere,
//! name the listener it goes next to — no priority numbers to pick:
//! [`TimeoutConfig::after`], [`TimeoutConfig::before`], or, from the other
//! wrapper's side, `Order::before(tack_timeout::LISTENER_NAME)`
//! ([`Order`](tack_core::hook::Order)).
//!
//! ## One deadline per call
//!
//! The budget is the call's, not an attempt's: the wrapper takes its deadline
//! from [`ExecuteRequest::call_deadline`](tack_core::hooks::ExecuteRequest::call_deadline),
//! fixed the first time the call reaches it. A retry placed outside the
//! timeout that runs the rest of the chain again (through
//! [`Next::fork`](tack_core::hook::Next::fork)) gets only what the earlier
//! attempts left; an attempt that finds the budget spent answers `TIMEOUT`
//! without starting the body. A retry that wants a budget per attempt keeps
//! its own clock.
//!
//! ## Example
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! use std::time::Duration;
//! use tack_pipeline::PluginSet;
//! use tack_timeout::{TimeoutConfig, Timeout};
//!
//! let policy = Timeout::new(TimeoutConfig::default()
//!     .default_budget(Duration::from_secs(60)) // for tools that declare none
//!     .ceiling(Duration::from_secs(300))
//!     .grace(Duration::from_secs(2))
//!)
//!     .unwrap();
//! assert_eq!(policy.budget_for(None), Some(Duration::from_secs(60)));
//! assert_eq!(policy.budget_for(Some(Duration::from_secs(900))), Some(Duration::from_secs(300)));
//!
//! let plugins = PluginSet::new().with(policy).build().unwrap();
//! let hooks = plugins.pipeline.hooks();
//! assert_eq!(hooks.execute().listener_names(None), ["timeout".into()] as [std::sync::Arc<str>; 1]);
//! plugins.disposables.dispose(); // unload
//! assert_eq!(hooks.execute().listener_count(), 0);
//! # }
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod config;
mod error;
mod plugin;
mod policy;
mod wrapper;

pub use config::TimeoutConfig;
pub use error::TimeoutConfigError;
pub use plugin::PLUGIN_NAME;
pub use policy::{DEFAULT_GRACE, Timeout};
pub use wrapper::LISTENER_NAME;
