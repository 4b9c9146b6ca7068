//! # tack-tools
//!
//! tack's builtin tools, each a typed [`Tool`](tack_core::tool::Tool):
//!
//! | tool | tier | what it does |
//! |---|---|---|
//! | [`read_file`](ReadFile) | read-only | a page of a text file, with line numbers |
//! | [`list_dir`](ListDir) | read-only | a directory's entries with kind and size |
//! | [`glob`](Glob) | read-only | file paths matching a glob, `.gitignore` respected |
//! | [`grep`](Grep) | read-only | lines matching a regex, `.gitignore` respected |
//! | [`write_file`](WriteFile) | writes | creates or replaces a file |
//! | [`edit_file`](EditFile) | writes | replaces an exact string in a file |
//! | [`bash`](Bash) | executes | runs a shell command |
//!
//! Every tool does all of its I/O through the run context's capabilities
//! ([`ToolRunContext::fs`](tack_core::context::ToolRunContext::fs) and
//! [`shell`](tack_core::context::ToolRunContext::shell)), never through
//! `std::fs` or `std::process`, so whatever confinement the host installs
//! (the sandbox plugin) applies to every call.
//!
//! Hosts take them all with [`builtin_tools`], register them with
//! [`register_builtin_tools`], or install the [`BuiltinTools`] plugin (also
//! submitted through `inventory` as `builtin-tools`).
//!
//! ```
//! let tools = tack_tools::builtin_tools().unwrap();
//! let names: Vec<&str> = tools.iter().map(|t| t.name().as_str()).collect();
//! assert_eq!(names, ["read_file", "list_dir", "glob", "grep", "write_file", "edit_file", "bash"]);
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod bash;
mod edit_file;
mod glob;
mod glob_pattern;
mod grep;
mod line_scan;
mod list_dir;
mod read_file;
mod reference;
mod registry;
mod text;
mod truncate;
mod walk;
mod write_file;

#[cfg(test)]
mod mem_fs;

pub use bash::{Bash, BashArgs, BashOutput};
pub use edit_file::{EditFile, EditFileArgs, EditFileOutput};
pub use glob::{Glob, GlobArgs, GlobOutput};
pub use grep::{Grep, GrepArgs, GrepMatch, GrepOutput};
pub use list_dir::{EntryType, ListDir, ListDirArgs, ListDirEntry, ListDirOutput};
pub use read_file::{ReadFile, ReadFileArgs, ReadFileOutput};
pub use reference::reference_markdown;
pub use registry::{BuiltinTools, RegisterError, builtin_tools, register_builtin_tools};
pub use truncate::cap_middle;
pub use walk::SkippedPath;
pub use write_file::{WriteFile, WriteFileArgs, WriteFileOutput};
