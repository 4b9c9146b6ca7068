//! The session log: append-only JSONL, one event per line.

pub(crate) mod reader;
pub(crate) mod writer;
