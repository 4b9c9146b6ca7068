//! Capabilities: the only doors a tool body has to the outside world.
//!
//! Builtin tools never call `std::fs` or `std::process`; they go through
//! [`FileSystem`] and [`Shell`], which the sandbox plugin implements with
//! confinement. A host that installs no such plugin gets a clear
//! [`CapabilityError::Missing`] from every tool that needs one.
//!
//! Every capability fails with the one [`CapabilityError`]: a filesystem
//! operation, a command, a question to the client, or a missing provider.
//! A tool body returns it with `?`, as a tool error whose `kind` says what
//! happened (`ENOENT`, `spawn_failed`, `no_client`, `capability_missing` …).

pub(crate) mod batch;
mod client;
mod dispatch;
mod error;
mod fs;
mod into_tool_error;
pub(crate) mod set;
mod shell;

pub use batch::{BatchEvent, DispatchBatch};
pub use client::{ClientChannel, ClientLogLevel, ClientRequest, ClientRequestKind};
pub use dispatch::ToolDispatcher;
pub use error::CapabilityError;
pub use fs::{Access, EntryKind, FileBytes, FileSystem, Metadata};
pub(crate) use set::Capabilities;
pub(crate) use set::CapabilityKind;
pub use shell::{CommandOutput, CommandRequest, Shell};
