//! The turn scheduler: batches, modes, cancellation, resources, host faults.

mod harness;

mod batch;
mod cancellation;
mod context;
mod host_fault;
mod lazy;
mod mode;
mod policy;
mod property;
mod resources;
mod schedule;
