//! # tack-core
//!
//! The traits and types a tack plugin author needs, and nothing else: no
//! policy, no I/O.
//!
//! * [`hook`]: typed hook points ([`Waterfall`](hook::Waterfall),
//!   [`Observer`](hook::Observer)), listener registration, scopes, ordering
//!   and disposal.
//! * [`tool`]: the tool model: names, model-visible schemas with exporters,
//!   host-side definitions, the typed [`Tool`](tool::Tool) trait, content
//!   blocks, calls, outcomes and error codes.
//! * [`policy`]: pre-execute decisions, guards, the approval service.
//! * [`capability`]: the `fs` and `shell` traits tools do their I/O through
//!   (implemented by the sandbox plugin), and the nested dispatcher.
//! * [`context`]: the [`ToolRunContext`](context::ToolRunContext) a tool body runs with.
//! * [`hooks`]: the six named tool hook points with their typed inputs and outputs.
//! * [`plugin`]: the [`Plugin`](plugin::Plugin) trait, its install context and
//!   static registration through `inventory`.
//!
//! Those modules are the plugin author's surface. The host's side lives apart,
//! in `tack_core::host`, which only the `host` cargo feature compiles (a
//! host's `Cargo.toml` says `tack-core = { features = ["host"] }`; a plugin
//! crate does not): installing plugins (`PluginHost`), capability slots, the
//! effects of a run, what a registry keeps per tool, and the constructors of the
//! values only the pipeline builds (executions, tokens, run contexts,
//! outcomes). A tool body gets a
//! [`ToolRunContext`](context::ToolRunContext) and returns a value or a
//! [`ToolError`](tool::ToolError); it cannot reach the pipeline's side.
//!
//! It re-exports what plugin code needs from other crates — [`schemars`],
//! [`serde`], [`serde_json`], [`async_trait`](macro@async_trait),
//! [`CancellationToken`] and [`inventory`] — so a plugin can depend on `tack-core` alone.
#![forbid(unsafe_code)]
// Without the `host` feature nothing outside calls the constructors and
// effects only hosts use, so the code behind them is unused in that build;
// the workspace (which builds hosts) lints it in full.
#![cfg_attr(not(feature = "host"), allow(dead_code, unused_imports))]
#![warn(missing_docs)]

mod approval;
pub mod capability;
pub mod context;
mod error;
pub mod hook;
pub mod hooks;
#[cfg(feature = "host")]
pub mod host;
mod model;
pub mod plugin;
pub mod policy;
pub mod prelude;
pub mod tool;

// What a plugin's code needs from other crates, so `tack-core` is its only
// dependency.

/// The attribute the object-safe async traits (the capabilities,
/// [`ApprovalService`](policy::ApprovalService)) are implemented with.
pub use async_trait::async_trait;
/// Static registration: `tack_core::inventory::submit! { PluginFactory::new(..) }`.
pub use inventory;
/// The JSON Schema crate typed tools derive their schemas with. Derive through
/// it with `#[derive(tack_core::schemars::JsonSchema)]` and
/// `#[schemars(crate = "tack_core::schemars")]`.
pub use schemars;
/// The serialization crate tool arguments and outputs use. Derive through it
/// with `#[serde(crate = "tack_core::serde")]`.
pub use serde;
/// JSON values: tool arguments, outputs and schemas.
pub use serde_json;
/// The cancellation signal every tool body and approval request gets.
#[doc(no_inline)]
pub use tokio_util::sync::CancellationToken;

// The README's code blocks compile and run as doctests (the plugin guide's
// run as doctests of tack-test, which can drive the pipeline).
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;
