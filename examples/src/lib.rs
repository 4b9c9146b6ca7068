//! The tack cookbook's programs.
//!
//! This package has no library of its own: every shape of extension is a
//! complete program under `examples/examples/`, run with
//! `cargo run -p tack-examples --example NAME`, and a test under
//! `examples/tests/all/` runs each one and checks what it prints or does.
//! The guide that explains them is `docs/cookbook/README.md`.
