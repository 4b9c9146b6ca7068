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
mod mcp_sign_in;
mod mcp_token;
mod model_spec;
mod output;
mod page;
mod presentation;
mod prompt;
mod prompter;
mod sandbox_layer;
mod sandbox_paths;
mod session;
mod sessions;
mod settings;
mod spinner;
mod trust;
mod trust_gate;
mod utc_time;
mod verbosity;

use std::process::ExitCode;

use clap::Parser;

use crate::args::{Cli, Command, SessionArgs};

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    verbosity::init(cli.verbose);
    let result = match cli.command {
        Command::Run(run) if run.durable.is_some() => {
            let url = run.durable.clone().unwrap_or_default();
            commands::durable::run(&url, run.session_id.clone(), &run.prompt.join(" ")).await
        }
        Command::Run(mut run) => match continue_last(&mut run.session) {
            Ok(()) => commands::run::run(run).await,
            Err(e) => Err(e),
        },
        Command::Chat(mut chat) => match continue_last(&mut chat) {
            Ok(()) => commands::chat::chat(chat).await,
            Err(e) => Err(e),
        },
        Command::Tools(tools) => commands::tools::tools(&tools.into()).await,
        Command::Replay(replay) => commands::replay::replay(&replay).await,
        Command::Sessions(sessions) => commands::sessions::sessions(&sessions),
        Command::Plugins => commands::plugins::plugins(),
        Command::Config(config) => commands::config::config(&config.into()),
        Command::Mcp(args::McpCommand::Serve(serve)) => commands::mcp::serve(serve.into()).await,
        Command::Trust(trust) => commands::trust::trust(&trust),
        Command::Serve(serve) => commands::durable::serve(serve).await,
        Command::Approve(approve) => commands::durable::approve(approve).await,
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

/// `--continue`: resume the workspace's latest session.
fn continue_last(args: &mut SessionArgs) -> Result<(), String> {
    if args.continue_last {
        let root = session::workspace(args.workspace.as_deref())?;
        let last = sessions::latest(&root).map_err(|e| format!("--continue: {e}"))?;
        eprintln!("tack: continuing {}", last.display());
        args.resume = Some(last);
    }
    Ok(())
}
