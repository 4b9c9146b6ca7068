//! Integration tests of tack-sandbox: real files, real processes.

// Tests may unwrap: a panic is the failure report.
#![allow(clippy::unwrap_used)]

mod command_escapes;
mod commands;
mod containment;
mod escapes;
mod fixture;
mod fs_ops;
mod hidden;
mod isolation;
mod plugin;
mod processes;
mod property;
mod protected;
mod protected_depth;
mod protected_floor;
mod unix_sockets;
mod warm;
mod warm_floor;
