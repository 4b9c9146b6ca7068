//! The command line.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// tack: an LLM agent loop over a workspace, with confined tools, permission
/// modes and a session log.
#[derive(Debug, Parser)]
#[command(name = "tack", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one prompt to its answer (the default model is a deterministic mock).
    Run(RunArgs),
    /// An interactive session: one prompt per line, approvals asked on the terminal.
    Chat(SessionArgs),
    /// Print the tool schemas a model sees.
    Tools(ToolsArgs),
    /// Re-render a session log exactly as the live run printed it.
    Replay(ReplayArgs),
    /// List the plugins installable by name.
    Plugins,
}

/// `tack run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The prompt (words are joined with spaces), e.g. `读文件 README.md`.
    #[arg(required = true)]
    pub prompt: Vec<String>,
    /// Session options.
    #[command(flatten)]
    pub session: SessionArgs,
}

/// Options of a session (`run`, `chat`).
#[derive(Debug, Args)]
pub struct SessionArgs {
    /// The workspace the tools are confined to (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// The model: `mock`, `openai` (OPENAI_BASE_URL, OPENAI_API_KEY, OPENAI_MODEL) or `script:FILE`.
    #[arg(long, default_value = "mock")]
    pub model: String,
    /// Permission mode: read-only, ask, accept-edits, allow-all.
    #[arg(long, default_value = "ask")]
    pub mode: String,
    /// Sandbox: read-only, workspace-write, full-access.
    #[arg(long, default_value = "workspace-write")]
    pub sandbox: String,
    /// The session log (default: WORKSPACE/.tack/sessions/UNIX_MS.jsonl).
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Print the events as JSONL on stdout instead of text.
    #[arg(long)]
    pub json: bool,
    /// Model calls per turn before the loop stops.
    #[arg(long, default_value_t = tack_agent::DEFAULT_MAX_STEPS)]
    pub max_steps: usize,
    /// Deadline for every tool call, in seconds (default: each tool's own).
    #[arg(long, value_name = "SECS")]
    pub tool_timeout: Option<f64>,
    /// Request timeout for the openai model, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 120.0)]
    pub model_timeout: f64,
    /// How the model is shown the tools: native (each tool a function), code
    /// (only `run_code`, a program calling the tools through an SDK) or both.
    #[arg(long, default_value = "native", value_parser = ["native", "code", "both"])]
    pub presentation: String,
}

/// `tack tools`.
#[derive(Debug, Args)]
pub struct ToolsArgs {
    /// Schema format: openai, anthropic, mcp (or neutral).
    #[arg(long, default_value = "openai")]
    pub format: String,
}

/// `tack replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The session log to re-render.
    pub log: PathBuf,
    /// Print the events as JSONL instead of text.
    #[arg(long)]
    pub json: bool,
}
