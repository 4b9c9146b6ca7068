//! Integration tests of tack-timeout, through the real pipeline, on tokio's
//! paused clock.
#![allow(clippy::unwrap_used)]

mod fixtures;
mod harness;
mod timeout;
