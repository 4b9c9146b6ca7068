//! Integration tests of the builtin tools on real temporary directories,
//! through the real sandbox capabilities (`tack-sandbox`).
#![allow(clippy::unwrap_used)]

mod bash;
mod docs;
mod edit_file;
mod fixtures;
mod glob;
mod grep;
mod harness;
mod list_dir;
mod read_file;
mod registry;
mod write_file;
