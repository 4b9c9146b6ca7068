//! The command line.

use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgAction, Args, Parser, Subcommand, ValueEnum};

use crate::model_spec::ModelSpec;
use crate::sandbox_layer::SandboxLayer;

/// tack: an LLM agent loop over a workspace, with confined tools, permission
/// modes and a session log.
#[derive(Debug, Parser)]
#[command(name = "tack", version, about)]
pub struct Cli {
    /// More diagnostics on stderr: -v (info), -vv (debug), -vvv (trace).
    /// RUST_LOG (e.g. `RUST_LOG=tack_mcp=debug`) overrides it.
    #[arg(short = 'v', long = "verbose", action = ArgAction::Count, global = true)]
    pub verbose: u8,
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
    Tools(ToolsCli),
    /// Re-render a session log exactly as the live run printed it.
    Replay(ReplayArgs),
    /// List the session logs of the workspace (or of every workspace with --all).
    Sessions(SessionsArgs),
    /// List the plugins installable by name.
    Plugins,
    /// Print the effective settings and where each value came from.
    Config(ConfigCli),
    /// The Model Context Protocol: serve tack's tools to MCP clients.
    #[command(subcommand)]
    Mcp(McpCommand),
    /// Trust the workspace's files that define hooks or MCP servers (they
    /// start programs outside the sandbox), after reviewing them.
    Trust(TrustArgs),
    /// Serve tack's sessions as a durable Restate endpoint (`--restate ADDR`).
    Serve(DurableServeArgs),
    /// Answer the approval a durable session waits for.
    Approve(ApproveArgs),
}

/// `tack serve --restate ADDR`.
#[derive(Debug, Args)]
pub struct DurableServeArgs {
    /// Serve the `TackSession` virtual object to a Restate server at this
    /// address (e.g. 127.0.0.1:9080).
    #[arg(long, value_name = "ADDR", required = true)]
    pub restate: std::net::SocketAddr,
    /// Register the endpoint with the Restate server whose admin API is at
    /// this URL (e.g. http://127.0.0.1:9070) once it listens.
    #[arg(long, value_name = "ADMIN_URL")]
    pub register: Option<String>,
    /// Serve only requests signed by the Restate server whose
    /// request-identity public key this is (`publickeyv1_…`; repeatable).
    #[arg(long, value_name = "KEY")]
    pub identity_key: Vec<String>,
    /// The policy the sessions' calls go through.
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// The model (a script serves every session from its own place in it)
    /// and the loop.
    #[command(flatten)]
    pub agent: AgentArgs,
}

impl DurableServeArgs {
    /// The session options these set.
    pub fn session(&self) -> SessionArgs {
        SessionArgs {
            policy: PolicyArgs {
                workspace: self.policy.workspace.clone(),
                settings: self.policy.settings.clone(),
                permissions: self.policy.permissions.clone(),
                mode: self.policy.mode,
                sandbox: self.policy.sandbox,
                sandbox_layer: self.policy.sandbox_layer,
                tool_timeout: self.policy.tool_timeout,
                mcp_config: None,
            },
            agent: AgentArgs {
                model: self.agent.model.clone(),
                system_prompt: self.agent.system_prompt.clone(),
                max_steps: self.agent.max_steps,
                model_timeout: self.agent.model_timeout,
            },
            ..SessionArgs::default()
        }
    }
}

/// `tack approve`.
#[derive(Debug, Args)]
pub struct ApproveArgs {
    /// The Restate ingress URL (e.g. http://127.0.0.1:8080).
    #[arg(long, value_name = "URL", value_parser = parse_restate_url)]
    pub durable: String,
    /// The session waiting.
    #[arg(long, value_name = "ID")]
    pub session: String,
    /// `yes` (the call runs) or `no` (it is refused).
    #[arg(value_enum)]
    pub answer: AnswerFlag,
    /// Why (the model reads it when the call is refused).
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
}

/// `tack approve`'s answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum AnswerFlag {
    /// The call runs.
    #[value(alias = "y", alias = "allow")]
    Yes,
    /// The call is refused.
    #[value(alias = "n", alias = "deny")]
    No,
}

/// An ingress or admin URL: `http://HOST:PORT`.
fn parse_restate_url(text: &str) -> Result<String, String> {
    tack_restate::IngressClient::new(text)
        .map(|_| text.to_owned())
        .map_err(|e| e.to_string())
}

/// `tack mcp`.
#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Serve the workspace's tools to an MCP client: on stdin/stdout, or over
    /// streamable HTTP with --http. Every call goes through the same policy
    /// as a model's (permission mode, sandbox, timeout) and the session log.
    Serve(ServeCli),
}

/// `tack mcp serve` as parsed: only the options that apply to serving
/// tools (no model, prompt, step limit or resumed conversation).
#[derive(Debug, Args)]
pub struct ServeCli {
    /// Serve streamable HTTP at this address (e.g. 127.0.0.1:8765; the
    /// endpoint is /mcp) instead of stdio.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<std::net::SocketAddr>,
    /// With --http: the token clients must send (`Authorization: Bearer
    /// TOKEN`) is the contents of this file, which must be readable by you
    /// alone (mode 0600). Without it: the TACK_MCP_TOKEN environment
    /// variable, else a new random token written to a 0600 file whose path
    /// is printed. (Never on the command line, where every local user can
    /// read it.)
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<std::path::PathBuf>,
    /// With --http on a loopback address (127.0.0.1, ::1) only: serve
    /// without a token, to any local process that connects.
    #[arg(long)]
    pub no_auth: bool,
    /// The policy the served calls go through.
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// The session log, a new file (default: as `tack run`'s).
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// How the tools are offered: `native` (each tool), `code` (the
    /// `run_code` tool, whose programs call the others) or `both`
    /// (default: native, or the settings' `presentation`).
    #[arg(long, value_enum)]
    pub presentation: Option<PresentationFlag>,
}

/// `tack mcp serve`, as the server reads it.
#[derive(Debug)]
pub struct ServeArgs {
    /// `--http ADDR`.
    pub http: Option<std::net::SocketAddr>,
    /// `--token-file FILE`.
    pub token_file: Option<std::path::PathBuf>,
    /// `--no-auth`.
    pub no_auth: bool,
    /// The session options that apply (the others are left unset).
    pub session: SessionArgs,
}

impl From<ServeCli> for ServeArgs {
    fn from(cli: ServeCli) -> Self {
        Self {
            http: cli.http,
            token_file: cli.token_file,
            no_auth: cli.no_auth,
            session: SessionArgs {
                policy: cli.policy,
                log: cli.log,
                presentation: cli.presentation,
                ..SessionArgs::default()
            },
        }
    }
}

/// `tack run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The prompt (words are joined with spaces), e.g. `读文件 README.md`.
    #[arg(required = true)]
    pub prompt: Vec<String>,
    /// Run the turn on Restate, through the ingress at this URL (e.g.
    /// http://127.0.0.1:8080), where `tack serve --restate` endpoints
    /// serve the sessions; follows it to its answer. The endpoints decide
    /// the model and the policy: a durable run takes no session options.
    #[arg(long, value_name = "URL", value_parser = parse_restate_url, conflicts_with_all = [
        "workspace", "settings", "permissions", "mode", "sandbox", "sandbox_layer", "tool_timeout",
        "mcp_config", "model", "system_prompt", "log", "resume", "continue_last", "json",
        "max_steps", "model_timeout", "presentation", "ui",
    ])]
    pub durable: Option<String>,
    /// With --durable: the session's id (default: a new one, printed).
    #[arg(long = "session", value_name = "ID", requires = "durable")]
    pub session_id: Option<String>,
    /// Session options.
    #[command(flatten)]
    pub session: SessionArgs,
}

/// The options that decide what a tool call may do, and where: those of
/// every command that runs tools (`run`, `chat`, `mcp serve`) or shows
/// their settings (`config`, `tools`).
#[derive(Debug, Default, Args)]
pub struct PolicyArgs {
    /// The workspace the tools are confined to (default: the current directory).
    #[arg(short = 'C', long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// A settings file (JSON) layered over the user's and the workspace's;
    /// may be given more than once (later files win; hooks add up).
    #[arg(long, value_name = "FILE")]
    pub settings: Vec<PathBuf>,
    /// A permission rules file (TOML: mode, allow, ask, deny, `[[rule]]`),
    /// added to the workspace's `.tack/permissions.toml`.
    #[arg(long, value_name = "FILE")]
    pub permissions: Option<PathBuf>,
    /// Permission mode (default: ask).
    #[arg(long, value_enum)]
    pub mode: Option<ModeFlag>,
    /// Sandbox (default: workspace-write).
    #[arg(long, value_enum)]
    pub sandbox: Option<SandboxFlag>,
    /// Which layer confines commands (default: auto).
    #[arg(long, value_enum)]
    pub sandbox_layer: Option<SandboxLayer>,
    /// Deadline for every tool call, in seconds (default: each tool's own).
    #[arg(long, value_name = "SECS", value_parser = parse_seconds, allow_negative_numbers = true)]
    pub tool_timeout: Option<Duration>,
    /// An MCP configuration (`.mcp.json`'s format) whose servers' tools are
    /// added, besides the workspace's `.mcp.json` and `mcpServers` settings.
    #[arg(long, value_name = "FILE")]
    pub mcp_config: Option<PathBuf>,
}

/// The model and the agent loop: options of `run`, `chat`, `config` and
/// `serve --restate`. Those left out come from the settings files.
#[derive(Debug, Default, Args)]
pub struct AgentArgs {
    /// The model, as PROVIDER:MODEL: `openai:gpt-4o-mini`,
    /// `anthropic:claude-sonnet-4-5`, `mock` (the default: no key, no
    /// network) or `script:FILE`. `openai` or `anthropic` alone take the
    /// model name from OPENAI_MODEL or ANTHROPIC_MODEL. The key comes from
    /// OPENAI_API_KEY or ANTHROPIC_API_KEY (or the variable the settings
    /// key `api_key_env` names), the endpoint from OPENAI_BASE_URL or
    /// ANTHROPIC_BASE_URL (or the settings key `base_url`).
    #[arg(short = 'm', long, value_name = "PROVIDER:MODEL")]
    pub model: Option<ModelSpec>,
    /// The system prompt, as text or `@FILE` (default: tack's own). The
    /// workspace's AGENTS.md is appended to it.
    #[arg(long, value_name = "TEXT|@FILE", allow_hyphen_values = true)]
    pub system_prompt: Option<String>,
    /// Model calls per turn before the loop stops (at least 1; default 16).
    #[arg(long, value_name = "N", value_parser = parse_max_steps, allow_negative_numbers = true)]
    pub max_steps: Option<usize>,
    /// Request timeout for the HTTP models, in seconds (default 120).
    #[arg(long, value_name = "SECS", value_parser = parse_seconds, allow_negative_numbers = true)]
    pub model_timeout: Option<Duration>,
}

/// Options of a session (`run`, `chat`, `config`). Those left out come from
/// the settings files (see `tack config`), then the defaults.
#[derive(Debug, Default, Args)]
pub struct SessionArgs {
    /// Workspace, settings and policy.
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// The model and the loop.
    #[command(flatten)]
    pub agent: AgentArgs,
    /// The session log, a new file (default: $XDG_STATE_HOME/tack/sessions/KEY/UNIX_MS-PID.jsonl,
    /// or ~/.local/state/… without XDG_STATE_HOME; KEY names the workspace).
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Continue the session of this log: it is verified, its conversation
    /// rebuilt, and the new turns are appended to it (same hash chain).
    #[arg(long, value_name = "LOG", conflicts_with = "log")]
    pub resume: Option<PathBuf>,
    /// Continue the workspace's latest session (as --resume with its log;
    /// `tack sessions` lists them).
    #[arg(long = "continue", conflicts_with_all = ["log", "resume"])]
    pub continue_last: bool,
    /// Print the events as JSONL on stdout instead of text.
    #[arg(long)]
    pub json: bool,
    /// How the model is shown the tools (default: native).
    #[arg(long, value_enum)]
    pub presentation: Option<PresentationFlag>,
    /// `run` and `chat`: serve the session's page (tool-call cards,
    /// approvals, timeline) on ADDR (default 127.0.0.1 on a free port) and
    /// print its URL, which carries a new random token; approvals are asked
    /// on the page instead of the terminal. Another address than loopback
    /// serves every host that can reach it.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, require_equals = true, default_missing_value = "127.0.0.1:0")]
    pub ui: Option<std::net::SocketAddr>,
}

impl std::ops::Deref for SessionArgs {
    type Target = PolicyArgs;

    fn deref(&self) -> &PolicyArgs {
        &self.policy
    }
}

/// `--mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModeFlag {
    /// Deny everything but reading.
    ReadOnly,
    /// Reads run; everything else asks.
    Ask,
    /// File edits run too; commands and network ask.
    AcceptEdits,
    /// Everything runs unless a deny or ask rule matches.
    AllowAll,
}

impl From<ModeFlag> for tack_permission::Mode {
    fn from(flag: ModeFlag) -> Self {
        match flag {
            ModeFlag::ReadOnly => Self::ReadOnly,
            ModeFlag::Ask => Self::Ask,
            ModeFlag::AcceptEdits => Self::AcceptEdits,
            ModeFlag::AllowAll => Self::AllowAll,
        }
    }
}

/// `--sandbox`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SandboxFlag {
    /// Read inside the workspace; write nothing.
    ReadOnly,
    /// Read inside the workspace; write only under it.
    WorkspaceWrite,
    /// No filesystem confinement.
    FullAccess,
}

impl From<SandboxFlag> for tack_sandbox::SandboxMode {
    fn from(flag: SandboxFlag) -> Self {
        match flag {
            SandboxFlag::ReadOnly => Self::ReadOnly,
            SandboxFlag::WorkspaceWrite => Self::WorkspaceWrite,
            SandboxFlag::FullAccess => Self::FullAccess,
        }
    }
}

/// `--presentation`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PresentationFlag {
    /// Each tool a function.
    Native,
    /// Only `run_code`: a program calling the tools through an SDK.
    Code,
    /// Both.
    Both,
}

impl PresentationFlag {
    /// As written in settings files.
    pub fn as_str(self) -> &'static str {
        match self {
            PresentationFlag::Native => "native",
            PresentationFlag::Code => "code",
            PresentationFlag::Both => "both",
        }
    }
}

/// `tack tools --format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FormatFlag {
    /// OpenAI chat completions' `tools` entries.
    Openai,
    /// Anthropic messages' `tools` entries.
    Anthropic,
    /// MCP `tools/list` entries, as `tack mcp serve` lists them.
    Mcp,
    /// tack's own: name, description, parameters.
    Neutral,
}

impl From<FormatFlag> for tack_core::host::ToolFormat {
    fn from(flag: FormatFlag) -> Self {
        match flag {
            FormatFlag::Openai => Self::OpenAi,
            FormatFlag::Anthropic => Self::Anthropic,
            FormatFlag::Mcp => Self::Mcp,
            FormatFlag::Neutral => Self::Neutral,
        }
    }
}

/// `tack tools` as parsed: the format, and the options that decide which
/// tools there are and how they are shown (no model, prompt or log).
#[derive(Debug, Args)]
pub struct ToolsCli {
    /// Schema format.
    #[arg(long, value_enum, default_value_t = FormatFlag::Openai)]
    pub format: FormatFlag,
    /// The workspace and settings (whose MCP servers' tools are listed too).
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// How the tools are offered: `native` (each tool), `code` (the
    /// `run_code` tool, whose programs call the others) or `both`
    /// (default: native, or the settings' `presentation`).
    #[arg(long, value_enum)]
    pub presentation: Option<PresentationFlag>,
}

/// `tack tools`, as the command reads it.
#[derive(Debug)]
pub struct ToolsArgs {
    /// `--format`.
    pub format: FormatFlag,
    /// The session options that apply (the others are left unset).
    pub session: SessionArgs,
}

impl From<ToolsCli> for ToolsArgs {
    fn from(cli: ToolsCli) -> Self {
        Self {
            format: cli.format,
            session: SessionArgs {
                policy: cli.policy,
                presentation: cli.presentation,
                ..SessionArgs::default()
            },
        }
    }
}

/// `tack config` as parsed: the options that decide the effective
/// settings (no log, resumed conversation, output format or page).
#[derive(Debug, Args)]
pub struct ConfigCli {
    /// Workspace, settings and policy.
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// The model and the loop.
    #[command(flatten)]
    pub agent: AgentArgs,
    /// How the model is shown the tools (default: native).
    #[arg(long, value_enum)]
    pub presentation: Option<PresentationFlag>,
}

impl From<ConfigCli> for SessionArgs {
    fn from(cli: ConfigCli) -> Self {
        Self {
            policy: cli.policy,
            agent: cli.agent,
            presentation: cli.presentation,
            ..SessionArgs::default()
        }
    }
}

/// `tack trust`.
#[derive(Debug, Args)]
pub struct TrustArgs {
    /// The files to trust (default: the workspace's `.tack/settings.json`
    /// and `.mcp.json`, and your user settings if they are inside the
    /// workspace, those that define hooks or MCP servers).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// The workspace (default: the current directory).
    #[arg(short = 'C', long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// List the trusted files and whether they changed since.
    #[arg(long, conflicts_with_all = ["paths", "revoke"])]
    pub list: bool,
    /// Forget the trust of the PATHs.
    #[arg(long, requires = "paths")]
    pub revoke: bool,
}

/// `tack replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The session log to re-render.
    #[arg(required_unless_present = "last", conflicts_with = "last")]
    pub log: Option<PathBuf>,
    /// Replay the workspace's latest session log.
    #[arg(long)]
    pub last: bool,
    /// With --last: the workspace (default: the current directory).
    #[arg(short = 'C', long, value_name = "DIR", requires = "last")]
    pub workspace: Option<PathBuf>,
    /// Print the events as JSONL instead of text.
    #[arg(long)]
    pub json: bool,
    /// Show the verified log on a local page (the live page's cards and
    /// timeline) on ADDR (default 127.0.0.1 on a free port), and print its
    /// URL, which carries a new random token.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, require_equals = true, default_missing_value = "127.0.0.1:0", conflicts_with = "json")]
    pub ui: Option<std::net::SocketAddr>,
}

/// `tack sessions`.
#[derive(Debug, Args)]
pub struct SessionsArgs {
    /// The workspace whose sessions are listed (default: the current directory).
    #[arg(short = 'C', long, value_name = "DIR", conflicts_with = "all")]
    pub workspace: Option<PathBuf>,
    /// List the sessions of every workspace.
    #[arg(long)]
    pub all: bool,
}

/// `--max-steps`: a whole number of model calls, at least 1.
pub fn parse_max_steps(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(0) => Err(
            "must be at least 1: it is how many times the model may be asked in one turn"
                .to_owned(),
        ),
        Ok(n) => Ok(n),
        Err(_) => Err(format!(
            "`{text}` is not a whole number of model calls; give one of at least 1, e.g. 16"
        )),
    }
}

/// A number of seconds: finite and greater than zero (`30`, `0.5`).
pub fn parse_seconds(text: &str) -> Result<Duration, String> {
    let help = "give a number of seconds greater than zero, e.g. 30 or 0.5";
    let secs: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number of seconds; {help}"))?;
    if !secs.is_finite() || secs <= 0.0 {
        return Err(format!("`{text}` is not a usable duration; {help}"));
    }
    Duration::try_from_secs_f64(secs).map_err(|_| format!("`{text}` seconds is too long; {help}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_negative_and_nan_durations_are_refused() {
        for bad in ["0", "0.0", "-1", "NaN", "inf", "-inf", "1e300", "x", ""] {
            let err = parse_seconds(bad).unwrap_err();
            assert!(
                err.contains("number of seconds greater than zero"),
                "{bad}: {err}"
            );
        }
        assert_eq!(parse_seconds("0.5"), Ok(Duration::from_millis(500)));
    }

    #[test]
    fn zero_steps_are_refused() {
        assert!(parse_max_steps("0").unwrap_err().contains("at least 1"));
        assert!(parse_max_steps("-3").unwrap_err().contains("at least 1"));
        assert_eq!(parse_max_steps("7"), Ok(7));
    }
}
