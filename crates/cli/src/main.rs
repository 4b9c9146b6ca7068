//! `tack`: the reference host. An agent loop over a workspace, from the
//! command line: `tack run "读文件 README.md"`.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod args;
mod commands;
mod exit;
mod guard_plugins;
mod hook_transcript;
mod hooks;
mod interrupt;
mod mcp;
mod mcp_token;
mod output;
mod prompt;
mod prompter;
mod sandbox_layer;
mod sandbox_paths;
mod session;
mod settings;
mod settings_claude;
mod settings_codex;
mod spinner;
mod trust;

use std::process::ExitCode;

use clap::Parser;

use crate::args::{Cli, Command};

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(run) => commands::run::run(run).await,
        Command::Chat(chat) => commands::chat::chat(chat).await,
        Command::Tools(tools) => commands::tools::tools(&tools).await,
        Command::Replay(replay) => commands::replay::replay(&replay),
        Command::Plugins => commands::plugins::plugins(),
        Command::Config(config) => commands::config::config(&config),
        Command::Mcp(args::McpCommand::Serve(serve)) => commands::mcp::serve(serve).await,
        Command::Trust(trust) => commands::trust::trust(&trust),
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            // A model's or a tool's text can be in the message.
            eprintln!("tack: error: {}", tack_agent::escape_block(&message, "  "));
            ExitCode::from(exit::FAILURE)
        }
    }
}
