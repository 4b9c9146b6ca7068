//! `bash`: runs a shell command through the `shell` capability.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tack_core::capability::CommandRequest;
use tack_core::context::ToolRunContext;
use tack_core::tool::{Content, ContentBlock, Outcome, Tier, Tool, ToolError};

use crate::text::clip_line;
use crate::truncate::cap_middle;

/// The longest deadline a call may ask for, in milliseconds (10 minutes).
pub(crate) const MAX_TIMEOUT_MS: u64 = 600_000;

/// The arguments of `bash`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashArgs {
    /// The command line to run with `bash -c` (`sh -c` where bash is missing)
    /// in the workspace root, e.g. `cargo test 2>&1 | tail -50`.
    pub command: String,
    /// A deadline in milliseconds after which the command is killed (default
    /// 120000, at most 600000).
    #[serde(default)]
    #[schemars(range(min = 1, max = 600_000))]
    pub timeout_ms: Option<u64>,
}

/// What `bash` returns. A command that runs and fails is a success of the
/// tool: its exit code says how it ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BashOutput {
    /// The exit code, when the command exited (absent when a signal ended it).
    pub exit_code: Option<i32>,
    /// The signal that ended the command, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// What the command wrote to stdout.
    pub stdout: String,
    /// What the command wrote to stderr.
    pub stderr: String,
    /// Whether the shell capability cut stdout or stderr at its output limit.
    pub truncated: bool,
    /// Whether the deadline killed the command.
    pub timed_out: bool,
    /// How long the command ran, in milliseconds.
    pub duration_ms: u64,
}

/// The `bash` tool: runs a command through the `shell` capability, which
/// confines it and kills its process group on timeout or cancellation. The
/// capability runs the command with `/bin/bash -c` when bash is present, and
/// `/bin/sh -c` otherwise; write commands in bash syntax (permission rules
/// read them as bash).
///
/// The value keeps the whole output (up to the shell's
/// [output limit](Self::with_output_limit)); what the model reads is capped by
/// `finalize_content` at [`content_cap`](Self::with_content_cap) characters,
/// head and tail kept.
#[derive(Clone, Debug)]
pub struct Bash {
    default_timeout: Duration,
    content_cap: usize,
    output_limit: usize,
}

impl Default for Bash {
    fn default() -> Self {
        Self {
            default_timeout: Duration::from_secs(120),
            content_cap: 30_000,
            output_limit: 4 * 1024 * 1024,
        }
    }
}

impl Bash {
    /// The tool with its defaults: 120 s deadline, 30,000 characters of
    /// content for the model, 4 MiB kept of stdout and of stderr each.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the deadline of calls that give no `timeout_ms` (at most 600 s).
    pub fn with_default_timeout(mut self, timeout: Duration) -> Self {
        self.default_timeout = timeout.clamp(
            Duration::from_millis(1),
            Duration::from_millis(MAX_TIMEOUT_MS),
        );
        self
    }

    /// Sets how many characters of output the model reads.
    pub fn with_content_cap(mut self, chars: usize) -> Self {
        self.content_cap = chars;
        self
    }

    /// Sets how many bytes of stdout and of stderr the shell keeps.
    pub fn with_output_limit(mut self, bytes: usize) -> Self {
        self.output_limit = bytes;
        self
    }
}

impl Tool for Bash {
    const NAME: &'static str = "bash";
    type Args = BashArgs;
    type Output = BashOutput;

    fn description(&self) -> &str {
        "Run a shell command with bash (`/bin/bash -c`; `/bin/sh -c` where bash is missing) in \
         the workspace and return its exit code, stdout \
         and stderr. Use it to build, test, run programs, use git, or anything the other \
         tools cannot do. Prefer read_file, list_dir, glob, grep, write_file and edit_file \
         for reading, finding and changing files. Commands run without a terminal and \
         without input: pass flags that avoid prompts and pagers. Long output is cut in \
         the middle: filter it (`| tail -50`, `| grep error`). Set `timeout_ms` for \
         commands that may take longer than 2 minutes."
    }

    fn tier(&self) -> Tier {
        Tier::Executes
    }

    /// The longest deadline a call may ask for, plus a grace period: the shell's
    /// own deadline fires first and returns the partial output; this one is the
    /// backstop. The body honours cancellation by passing the run context's
    /// signal to the shell, which kills the process group.
    fn timeout(&self) -> Option<Duration> {
        Some(Duration::from_millis(MAX_TIMEOUT_MS) + Duration::from_secs(10))
    }

    async fn execute(&self, args: BashArgs, cx: &ToolRunContext) -> Result<BashOutput, ToolError> {
        if args.command.trim().is_empty() {
            return Err(ToolError::invalid_arguments(
                "the command is empty: pass the command line to run in `command`, e.g. `ls -la`",
            )
            .with_kind("empty_command"));
        }
        let timeout = match args.timeout_ms {
            None => self.default_timeout,
            Some(ms) if (1..=MAX_TIMEOUT_MS).contains(&ms) => Duration::from_millis(ms),
            Some(ms) => {
                return Err(ToolError::invalid_arguments(format!(
                    "`timeout_ms` must be from 1 to {MAX_TIMEOUT_MS}, got {ms}"
                )));
            }
        };
        let request = CommandRequest::new(args.command)
            .with_timeout(timeout)
            .with_output_limit(self.output_limit);
        let out = cx.shell()?.run(request, cx.cancellation().clone()).await?;
        Ok(BashOutput {
            exit_code: out.exit_code,
            signal: out.signal,
            stdout: out.stdout,
            stderr: out.stderr,
            truncated: out.truncated,
            timed_out: out.timed_out,
            duration_ms: u64::try_from(out.duration.as_millis()).unwrap_or(u64::MAX),
        })
    }

    fn render(&self, args: &BashArgs, out: &BashOutput) -> Content {
        let mut text = String::new();
        text.push_str(&out.stdout);
        if !out.stderr.is_empty() {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str("[stderr]\n");
            text.push_str(&out.stderr);
        }
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        if out.stdout.is_empty() && out.stderr.is_empty() {
            text.push_str("(no output)\n");
        }
        let status = if out.timed_out {
            let limit = args
                .timeout_ms
                .map_or_else(|| "its deadline".to_owned(), |ms| format!("{ms} ms"));
            format!("[timed out after {limit} and was killed]")
        } else {
            match (out.exit_code, out.signal) {
                (Some(code), _) => format!("[exit code {code}]"),
                (None, Some(signal)) => format!("[killed by signal {signal}]"),
                (None, None) => "[ended without an exit code]".to_owned(),
            }
        };
        text.push_str(&status);
        if out.truncated {
            text.push_str(
                "\n[the shell kept only the start of the output: it was over its output limit]",
            );
        }
        Content::text(text)
    }

    fn present_call(&self, args: &BashArgs) -> Option<String> {
        let first = args.command.lines().next().unwrap_or_default();
        let more = if args.command.lines().nth(1).is_some() {
            " …"
        } else {
            ""
        };
        Some(format!("$ {}{more}", clip_line(first, 120)))
    }

    /// Caps what the model reads at the content cap, keeping head and tail;
    /// the logged value stays whole.
    fn finalize_content(&self, outcome: &Outcome) -> Option<Content> {
        let total: usize = outcome
            .content
            .iter()
            .filter_map(ContentBlock::as_text)
            .map(|t| t.chars().count())
            .sum();
        if total <= self.content_cap {
            return None;
        }
        let text = outcome.content.joined_text();
        let mut content = Content::text(cap_middle(&text, self.content_cap));
        content.extend(
            outcome
                .content
                .iter()
                .filter(|b| b.as_text().is_none())
                .cloned(),
        );
        Some(content)
    }
}

#[cfg(test)]
mod tests {

    use pretty_assertions::assert_eq;
    use serde_json::json;
    use tack_core::host::NewOutcome;
    use tack_core::tool::{CallId, ToolDefinition};

    use super::*;
    use crate::mem_fs::{MemFs, call};

    fn out(stdout: &str, stderr: &str, exit_code: Option<i32>) -> BashOutput {
        BashOutput {
            exit_code,
            signal: None,
            stdout: stdout.into(),
            stderr: stderr.into(),
            truncated: false,
            timed_out: false,
            duration_ms: 5,
        }
    }

    fn args(command: &str) -> BashArgs {
        BashArgs {
            command: command.into(),
            timeout_ms: None,
        }
    }

    #[test]
    fn render_shows_stdout_stderr_and_how_it_ended() {
        let bash = Bash::new();
        let text = |o: &BashOutput| bash.render(&args("x"), o)[0].as_text().unwrap().to_owned();
        assert_eq!(text(&out("hi\n", "", Some(0))), "hi\n[exit code 0]");
        assert_eq!(
            text(&out("a", "oops\n", Some(2))),
            "a\n[stderr]\noops\n[exit code 2]"
        );
        assert_eq!(text(&out("", "", Some(0))), "(no output)\n[exit code 0]");
        let mut killed = out("", "", None);
        killed.signal = Some(9);
        assert_eq!(text(&killed), "(no output)\n[killed by signal 9]");
    }

    #[test]
    fn finalize_caps_long_content_only() {
        let bash = Bash::new().with_content_cap(10);
        let short = Outcome::success(
            CallId::from("c"),
            "bash",
            json!({}),
            vec![ContentBlock::text("0123456789")],
        );
        assert_eq!(bash.finalize_content(&short), None);
        let long = Outcome::success(
            CallId::from("c"),
            "bash",
            json!({}),
            vec![ContentBlock::text("x".repeat(100))],
        );
        let capped = bash.finalize_content(&long).unwrap();
        assert!(capped[0].as_text().unwrap().contains("90 characters cut"));
    }

    #[tokio::test]
    async fn empty_commands_and_bad_deadlines_are_refused_before_running() {
        let def = ToolDefinition::from_tool(Bash::new()).unwrap();
        // No shell is installed: these fail before the capability is asked for.
        let cx = MemFs::new().context();
        let err = call(&def, json!({"command": "  "}), &cx).await.unwrap_err();
        assert_eq!(err.kind(), Some("empty_command"));
        assert!(err.message().contains("the command is empty"), "{err}");
        let err = call(&def, json!({"command": "ls", "timeout_ms": 700000}), &cx)
            .await
            .unwrap_err();
        assert!(
            err.message()
                .contains("`timeout_ms` must be from 1 to 600000"),
            "{err}"
        );
        let err = call(&def, json!({"command": "ls"}), &cx).await.unwrap_err();
        assert_eq!(err.kind(), Some("capability_missing"));
    }

    #[test]
    fn present_call_shows_the_first_line() {
        assert_eq!(
            Bash::new().present_call(&args("ls -la\necho hi")).unwrap(),
            "$ ls -la …"
        );
    }
}
