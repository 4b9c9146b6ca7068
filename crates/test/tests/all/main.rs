//! tack-test's own tests: the harness drives the real pipeline for one
//! plugin (`harness`), and composite tools run their nested calls through it
//! (`composite`). One test binary, so the crate links its tests once.

mod composite;
mod harness;
