//! One module per subcommand.

pub mod chat;
pub mod plugins;
pub mod replay;
pub mod run;
pub mod tools;
