//! Newline-delimited JSON-RPC over a byte stream (stdio, an in-process
//! pipe) with a message-size limit, for both sides.

mod framing;
mod transport;

pub(crate) use transport::{CloseNote, LineTransport, TOO_LARGE, human_bytes};
