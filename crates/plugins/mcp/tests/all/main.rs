//! tack-mcp against implementations nobody here wrote (the npm reference
//! servers and the TypeScript SDK), and against bad peers.

mod client_everything;
mod node;
