//! Integration tests of the tool registry, the per-call pipeline and the
//! turn scheduler (one test binary, so the crate links its tests once).
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
mod scheduler;
mod stages;
mod thread_copies;
mod transport;
mod visibility;
