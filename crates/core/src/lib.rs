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
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod capability;
pub mod context;
pub mod hook;
pub mod hooks;
pub mod plugin;
pub mod policy;
pub mod tool;

// The README's and the plugin guide's code blocks compile and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;

#[cfg(doctest)]
#[doc = include_str!("../../../docs/plugin-guide.md")]
struct PluginGuideDoctests;
