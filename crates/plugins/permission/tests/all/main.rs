//! Integration tests of tack-permission.
#![allow(clippy::unwrap_used)]

mod approvers;
mod bypass;
mod disguise;
mod evaluated;
mod executed;
mod harness;
mod modes;
mod paths;
mod pipeline;
mod rules;
mod toml_file;
