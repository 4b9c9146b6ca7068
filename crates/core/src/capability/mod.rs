//! Capabilities: the only doors a tool body has to the outside world.
//!
//! Builtin tools never call `std::fs` or `std::process`; they go through
//! [`FileSystem`] and [`Shell`], which the sandbox plugin implements with
//! confinement. A host that installs no such plugin gets a clear
//! [`CapabilityError`] from every tool that needs one.

mod batch;
mod client;
mod dispatch;
mod error;
mod fs;
mod into_tool_error;
pub(crate) mod set;
mod shell;

pub use batch::{BatchEvent, DispatchBatch, SerialBatch};
pub use client::{
    ClientChannel, ClientLogLevel, ClientRequest, ClientRequestError, ClientRequestKind, Progress,
};
pub use dispatch::{OnAdmitted, ToolDispatcher};
pub use error::CapabilityError;
pub use fs::{Access, DirEntry, EntryKind, FileBytes, FileSystem, FsError, Metadata, WriteReport};
pub use set::{Capabilities, CapabilityKind};
pub use shell::{CommandOutput, CommandRequest, Shell, ShellError};
