//! Counts, not times, what one call through the pipeline does (the tests
//! of this package: `cargo test -p tack-hot-path`): how many times it reads
//! a per-thread copy (listener snapshots, capabilities, the registry's
//! catalogue; each read takes one lock, the thread's own) and how many
//! copies it makes (none once the thread has made its copies, until a
//! change), pinned per call. The library is empty.
