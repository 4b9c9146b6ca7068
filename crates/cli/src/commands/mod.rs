//! One module per subcommand.

pub mod chat;
pub mod config;
pub mod durable;
pub mod mcp;
pub mod plugins;
pub mod replay;
pub mod run;
pub mod sessions;
pub mod tools;
pub mod trust;
