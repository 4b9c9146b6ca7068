//! Integration tests of the tool registry and the per-call pipeline (issue 3).
#![allow(clippy::unwrap_used)]
#![allow(missing_docs)]

mod harness;
mod listeners;
#[path = "../support/recording.rs"]
mod recording;
mod stage_paths;

mod admitted;
mod approval;
mod arguments;
mod cancellation;
mod concurrency;
mod dry_run;
mod execute;
mod finalize;
mod guards;
mod output;
mod post_execute;
mod pre_execute;
mod registry;
mod replace;
mod result;
mod rewrite;
mod stages;
mod thread_copies;
mod transport;
mod visibility;
