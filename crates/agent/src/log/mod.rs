//! The session log: append-only JSONL, one event per line, hash-chained.

pub(crate) mod location;
pub(crate) mod reader;
pub(crate) mod writer;
