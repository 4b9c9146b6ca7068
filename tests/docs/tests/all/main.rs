//! Checks of the repository's shape: the docs name only what exists
//! (`names`), and no crate's modules depend on each other in a cycle
//! (`modules`).
#![allow(clippy::unwrap_used)]

mod modules;
mod names;
