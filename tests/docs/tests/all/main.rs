//! Checks of the repository's shape: the docs name only what exists
//! (`names`), no crate's modules depend on each other in a cycle
//! (`modules`), and plugin crates depend on the contract alone
//! (`dependencies`).
#![allow(clippy::unwrap_used)]

mod dependencies;
mod modules;
mod names;
