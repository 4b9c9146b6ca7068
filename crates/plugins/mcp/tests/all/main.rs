//! tack-mcp against implementations nobody here wrote (the npm reference
//! servers and the TypeScript SDK), against itself, and against bad peers.
#![allow(clippy::unwrap_used)]

mod bad_peers;
mod bounds;

mod client_everything;
mod conformance;
mod fixture;
mod node;
mod oauth;
mod protocol;
mod roundtrip;
mod server_notifications;
