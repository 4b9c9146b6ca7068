//! Integration tests of the turn scheduler (issue 4).
#![allow(clippy::unwrap_used)]
#![allow(missing_docs)]

mod harness;
#[path = "../support/recording.rs"]
mod recording;

mod cancellation;
mod context;
mod host_fault;
mod lazy;
mod mode;
mod policy;
mod property;
mod resources;
mod schedule;
