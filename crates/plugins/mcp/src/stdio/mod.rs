//! Newline-delimited JSON-RPC over a byte stream (stdio, an in-process
//! pipe) with a message-size limit, for both sides.

mod framing;
mod transport;

pub(crate) use transport::{CloseNote, LineTransport, TOO_LARGE, human_bytes};

/// The default message-size limit of both sides, 8 MiB: a client's
/// [`ClientOptions::max_message_bytes`](crate::ClientOptions::max_message_bytes)
/// and a served session's.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 8 * 1024 * 1024;
