//! Setting up a session: workspace, model, plugins, log, events.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tack_agent::{
    Agent, AgentHooks, ChatModel, Event, EventBus, InstalledPlugins, LoggedApprover, ModelObserver,
    PluginSet, Retry, SessionLog, UnattendedApprover, escape_block, history_from_records,
    state_home_from_env,
};
use tack_code_mode::prompt_section;
use tack_core::policy::ApprovalService;
use tack_core::tool::{ToolCall, ToolDefinition};
use tack_hooks::{HookSession, ToolNames};
use tack_permission::{Permission, SessionRules, TerminalApprover};
use tack_pipeline::{Presentation, ToolRegistry};
use tack_tools::BuiltinTools;

use crate::args::SessionArgs;
use crate::guard_plugins;
use crate::output::{EventPrinter, stdout_style};
use crate::prompt::SystemPrompt;
use crate::settings::Settings;
use crate::spinner::Spinning;

/// A ready session: the agent, and the plugins that must outlive it.
pub struct Session {
    /// The loop.
    pub agent: Agent,
    /// Keeps the plugins installed.
    pub _plugins: InstalledPlugins,
    /// The log file.
    pub log_path: PathBuf,
    /// Whether the session continues an earlier one (`--resume`).
    pub resumed: bool,
    /// The calls a `PreToolUse` hook deferred in the resumed session's last
    /// turn, to run again before anything else.
    pub deferred: Vec<ToolCall>,
    /// The session's page (`--ui`).
    pub ui: Option<tack_ui::UiServer>,
}

impl Session {
    /// Tells the `SessionStart` hooks (`startup` or `resume`).
    ///
    /// # Errors
    ///
    /// The log cannot be written.
    pub async fn start(&mut self) -> Result<(), String> {
        let source = if self.resumed { "resume" } else { "startup" };
        self.agent
            .start_session(source)
            .await
            .map_err(|e| e.to_string())
    }

    /// Runs the calls a `PreToolUse` hook deferred (`defer`) when the
    /// resumed session stopped, through the whole pipeline again, hooks
    /// included, as Claude Code does on `--resume`. Returns the reason when
    /// a hook deferred one again (or otherwise ended the turn): the prompt
    /// is then not sent.
    ///
    /// # Errors
    ///
    /// The log cannot be written.
    pub async fn run_deferred(&mut self) -> Result<Option<String>, String> {
        let calls = std::mem::take(&mut self.deferred);
        if calls.is_empty() {
            return Ok(None);
        }
        let names: Vec<String> = calls.iter().map(|c| format!("`{}`", c.name)).collect();
        let (ran, stopped) = self.agent.rerun(calls).await.map_err(|e| e.to_string())?;
        if ran > 0 {
            eprintln!(
                "tack: ran the call{} a hook deferred: {}",
                if ran == 1 { "" } else { "s" },
                names.join(", ")
            );
        }
        Ok(stopped)
    }

    /// Tells the `SessionEnd` hooks; with `--ui`, then says on the page
    /// that the session ended and serves it until it is closed.
    pub async fn end(&self, reason: &str) {
        self.agent.end_session(reason).await;
        if let Some(ui) = &self.ui {
            ui.finish();
            crate::page::until_closed(ui).await;
        }
    }
}

/// The workspace: given or current, an existing readable directory.
pub fn workspace(dir: Option<&Path>) -> Result<PathBuf, String> {
    let dir = match dir {
        Some(d) => d.to_owned(),
        None => std::env::current_dir()
            .map_err(|e| format!("no current directory to use as the workspace: {e}"))?,
    };
    let canonical = dir.canonicalize().map_err(|e| {
        format!("the workspace {} does not exist or cannot be reached: {e}; pass an existing directory with --workspace DIR", dir.display())
    })?;
    if !canonical.is_dir() {
        return Err(format!(
            "the workspace {} is not a directory; pass a directory with --workspace DIR",
            dir.display()
        ));
    }
    std::fs::read_dir(&canonical).map_err(|e| {
        format!(
            "the workspace {} cannot be read: {e}; check its permissions",
            dir.display()
        )
    })?;
    Ok(canonical)
}

/// The session log: `--log FILE`, or a new file in the per-user state
/// directory, outside the workspace the tools can write.
fn session_log(log: Option<&Path>, workspace: &Path) -> Result<SessionLog, String> {
    let created = match log {
        Some(path) => SessionLog::create(path),
        None => {
            let state = state_home_from_env().ok_or_else(|| {
                "cannot place the session log: neither XDG_STATE_HOME nor HOME is set to an absolute path; set one, or pass --log FILE".to_owned()
            })?;
            SessionLog::create_for_workspace(&state, workspace)
        }
    };
    created.map_err(|e| format!("{e}; refusing to start: nothing would be recorded"))
}

/// Builds a session from the options. `interactive` asks approvals on the
/// terminal when stdin is one.
pub async fn open(args: &SessionArgs) -> Result<Session, String> {
    let root = workspace(args.workspace.as_deref())?;
    let settings = Settings::load(&root, args)?;
    for warning in &settings.warnings {
        eprintln!("tack: warning: {}", escape_block(warning, "  "));
    }
    let mode = settings.mode.value;
    let sandbox_mode = settings.sandbox.value;
    let endpoint = crate::model_spec::Endpoint {
        base_url: settings.base_url.value.clone(),
        api_key_env: settings.api_key_env.value.clone(),
    };
    let model = crate::model_spec::build(
        &settings.model.value,
        &endpoint,
        settings.model_timeout.value,
    )?;
    let timeout = guard_plugins::timeout(&settings)?;
    let sandbox = guard_plugins::sandbox(&settings, &root, args)?;
    let layer = crate::sandbox_layer::describe(&sandbox, settings.sandbox_layer.value);
    // Hooks and MCP servers run outside the sandbox: the workspace's files
    // that define them are used only as trusted (`tack trust`).
    crate::trust::Judge::new(&root).enforce(&settings.defining)?;
    let (hook_config, hook_warnings) = crate::hooks::checked(&settings.hooks, &root, sandbox_mode)?;
    for warning in &hook_warnings {
        if warning.starts_with("WARNING") {
            eprintln!("tack: {}", escape_block(warning, "  "));
        } else {
            eprintln!("tack: warning: {}", escape_block(warning, "  "));
        }
    }

    // MCP servers start (and may take long) before the log exists: a
    // session stopped while they start leaves no empty log behind.
    let registry = ToolRegistry::new();
    let mcp = crate::spinner::waiting(
        "starting MCP servers",
        crate::mcp::client(&root, args, &settings, &registry),
    )
    .await?;

    // `--ui`: the page shows every record and answers the approvals (started
    // before the log, so an address that cannot be served leaves no log).
    let session_rules = SessionRules::new();
    let ui = match args.ui {
        Some(addr) => Some(crate::page::live(addr, &registry, &session_rules).await?),
        None => None,
    };

    // Refuse to start when nothing would be recorded.
    let mut deferred = Vec::new();
    let (log, resumed) = match &args.resume {
        Some(path) => {
            let (log, contents) = SessionLog::resume(path).map_err(|e| format!("--resume: {e}"))?;
            for warning in &contents.warnings {
                eprintln!("tack: warning: {}", escape_block(warning, "  "));
            }
            // The page shows the session from its start.
            if let Some((page, _)) = &ui {
                for record in &contents.records {
                    page.record(record);
                }
            }
            let history = history_from_records(&contents.records);
            for note in &history.notes {
                eprintln!("tack: warning: {note}");
            }
            let last = contents.records.last().cloned();
            deferred = deferred_calls(&contents.records);
            (log, last.map(|last| (history, last)))
        }
        None => (session_log(args.log.as_deref(), &root)?, None),
    };
    let log_path = log.path().to_owned();

    let crate::presentation::Offered {
        presentation,
        pipeline,
        code_mode,
    } = crate::presentation::offer(&settings, &registry);
    let printer = Arc::new(EventPrinter::new(
        registry.clone(),
        stdout_style(),
        args.json,
    ));
    let records = Arc::clone(&printer);
    let bus = match &resumed {
        Some((_, last)) => EventBus::resuming(Arc::new(log), last),
        None => EventBus::new(Some(Arc::new(log))),
    };
    // While tools run, a status line where someone watches (as the spinner).
    let status = (crate::spinner::drawn() && !args.json)
        .then(|| Arc::new(crate::spinner::ToolStatus::default()));
    let mut bus = bus.with_observer(move |record| match &status {
        Some(status) => {
            status.suspend(|| records.print(record));
            status.record(record);
        }
        None => records.print(record),
    });
    let session_id = log_path
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let hook_names = if settings.hook_names.value == "tack" {
        ToolNames::Tack
    } else {
        ToolNames::ClaudeCode
    };
    // Hooks read a transcript in Claude Code's shape, beside the log.
    let transcript = (!hook_config.is_empty()).then(|| {
        Arc::new(crate::hook_transcript::Transcript::new(
            crate::hook_transcript::path_for(&log_path),
            session_id.clone(),
            root.clone(),
            hook_names,
        ))
    });
    if let Some(transcript) = &transcript {
        let transcript = Arc::clone(transcript);
        bus = bus.with_observer(move |record| transcript.record(record));
    }
    if let Some((page, _)) = &ui {
        let page = page.clone();
        bus = bus.with_observer(move |record| page.record(record));
    }
    let bus = Arc::new(bus);
    let agent_hooks = AgentHooks::new();
    let hooks = transcript.map(|transcript| {
        let session = HookSession::new(session_id, &root)
            .with_transcript(transcript.path())
            .with_permission_mode(hook_permission_mode(mode))
            .with_names(hook_names);
        let hooks = crate::hooks::session_hooks(hook_config, session, bus.clone());
        crate::hooks::attach(&hooks, &agent_hooks);
        hooks
    });

    let (ui, page_approver) = ui.unzip();
    let mut inner: Arc<dyn ApprovalService> = if let Some(approver) = page_approver {
        approver
    } else if std::io::stdin().is_terminal() {
        Arc::new(TerminalApprover::stdio(session_rules.clone()))
    } else {
        Arc::new(UnattendedApprover::new(unattended_reason(mode)))
    };
    // `PermissionRequest` hooks answer before anyone is asked.
    if let Some(hooks) = &hooks
        && hooks.handles(tack_hooks::HookEvent::PermissionRequest)
    {
        inner = Arc::new(
            crate::hooks::HookApprover::new(hooks.clone(), inner)
                .with_session_rules(session_rules.clone(), bus.clone()),
        );
    }
    let permission = Permission::new(
        guard_plugins::permission(&settings, &root)
            .session_rules(session_rules)
            .approver(Arc::new(
                LoggedApprover::new(inner, bus.clone()).with_notifications(agent_hooks.clone()),
            )),
    );

    let mut plugins = PluginSet::over(pipeline.clone())
        .with(timeout)
        .with(permission)
        .with(sandbox)
        .with(BuiltinTools)
        .with(code_mode);
    if let Some(hooks) = hooks {
        plugins = plugins.with(hooks);
    }
    if let Some(mcp) = mcp {
        plugins = plugins.with(mcp);
    }
    let plugins = plugins
        .build()
        .map_err(|e| format!("cannot install the plugins: {e}"))?;
    let prompt = SystemPrompt::build(args.agent.system_prompt.as_deref(), &root)?;
    let mut system_prompt = prompt.text.clone();
    let mut sources = prompt.sources.clone();
    // Under code presentation the model learns the tools from the SDK text.
    if presentation != Presentation::Native {
        let natives: Vec<ToolDefinition> = registry
            .native_tools(None)
            .iter()
            .map(|t| t.definition().clone())
            .collect();
        let code_only = presentation == Presentation::Code;
        system_prompt = format!("{system_prompt}\n\n{}", prompt_section(&natives, code_only));
        sources.push("code-mode SDK".to_owned());
    }
    bus.emit(Event::SessionStart {
        model: model.name(),
        sources,
        system_prompt: system_prompt.clone(),
        resumed: resumed.is_some(),
        sandbox: Some(layer),
    })
    .map_err(|e| format!("{e}; refusing to start: nothing would be recorded"))?;
    // A spinner only where someone watches: stderr a terminal, text output.
    let model: Arc<dyn ChatModel> = if std::io::stderr().is_terminal() && !args.json {
        Arc::new(Spinning::new(model))
    } else {
        model
    };
    let mut builder = Agent::builder(model, pipeline);
    if let Some((history, _)) = resumed {
        builder = builder.resume(history.messages, history.usage);
    }
    let agent = builder
        .system_prompt(system_prompt)
        .events(bus)
        .max_steps(settings.max_steps.value)
        .model_observer(Arc::new(TerminalObserver {
            printer,
            last_retry: std::sync::Mutex::default(),
        }))
        .hooks(agent_hooks)
        .build();
    Ok(Session {
        agent,
        _plugins: plugins,
        log_path,
        resumed: args.resume.is_some(),
        deferred,
        ui,
    })
}

/// The calls a `PreToolUse` hook deferred in the last turn of `records`
/// (after the last prompt) and that have not run since, in order.
fn deferred_calls(records: &[tack_agent::Record]) -> Vec<ToolCall> {
    let start = records
        .iter()
        .rposition(|r| matches!(r.event, Event::User { .. }))
        .unwrap_or(0);
    let mut calls: Vec<ToolCall> = Vec::new();
    let mut deferred: Vec<String> = Vec::new();
    for record in &records[start..] {
        match &record.event {
            Event::ToolCall {
                call_id,
                tool,
                arguments,
                ..
            } => calls.push(ToolCall::new(
                call_id.clone(),
                tool.clone(),
                arguments.clone(),
            )),
            Event::ToolResult { outcome, .. } => {
                let id = outcome.call_id.to_string();
                deferred.retain(|d| *d != id);
                let failure = outcome.failure_info();
                if failure.is_some_and(|f| {
                    f.code() == tack_core::tool::ErrorCode::Denied
                        && f.message().contains(tack_hooks::DEFERRED)
                }) {
                    deferred.push(id);
                }
            }
            _ => {}
        }
    }
    deferred
        .iter()
        .filter_map(|id| calls.iter().rev().find(|c| c.call_id.to_string() == *id))
        .cloned()
        .collect()
}

/// The registry of the builtin tools alone (for `tools` and `replay`).
pub fn builtin_registry() -> Result<InstalledPlugins, String> {
    PluginSet::new()
        .with(BuiltinTools)
        .build()
        .map_err(|e| format!("cannot install the builtin tools: {e}"))
}

/// Shows the answer as it streams in, and the model client's retries.
struct TerminalObserver {
    printer: Arc<EventPrinter>,
    /// The reason of the last retry (a repeated one is not repeated).
    last_retry: std::sync::Mutex<Option<String>>,
}

impl ModelObserver for TerminalObserver {
    fn text_delta(&self, text: &str) {
        self.printer.stream_text(text);
    }

    /// One line per retry: the reason the first time, then only that it
    /// failed again the same way (`-v` logs every reason).
    fn retry(&self, retry: &Retry) {
        tracing::info!(attempt = retry.attempt, reason = %retry.reason, "model request failed");
        let mut last = self
            .last_retry
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if last.as_deref() == Some(retry.reason.as_str()) {
            eprintln!(
                "tack: attempt {} failed the same way; retrying in {:.1}s",
                retry.attempt,
                retry.delay.as_secs_f64()
            );
        } else {
            eprintln!(
                "tack: {}; retrying in {:.1}s (attempt {} failed)",
                tack_agent::escape_line(&retry.reason),
                retry.delay.as_secs_f64(),
                retry.attempt
            );
            *last = Some(retry.reason.clone());
        }
    }
}

/// The `permission_mode` hooks are told, in Claude Code's words where one
/// fits (`default`, `acceptEdits`, `bypassPermissions`, `plan`).
pub(crate) fn hook_permission_mode(mode: tack_permission::Mode) -> &'static str {
    use tack_permission::Mode;
    match mode {
        Mode::AcceptEdits => "acceptEdits",
        Mode::AllowAll => "bypassPermissions",
        Mode::ReadOnly => "plan",
        _ => "default",
    }
}

/// Why an approval could not be asked for without a terminal, and what the
/// user can do about it — which depends on the mode already in force.
fn unattended_reason(mode: tack_permission::Mode) -> String {
    use tack_permission::Mode;
    let fix = match mode {
        Mode::ReadOnly | Mode::Ask => {
            "use --mode accept-edits to let file edits run without asking, or --mode allow-all for commands too"
        }
        Mode::AcceptEdits => "use --mode allow-all to let commands run without asking",
        // In allow-all only an `ask` rule, or a command the rules cannot
        // read in full, asks: no mode lifts that.
        _ => {
            "an ask rule, or a command the permission rules cannot read in full, needs a person: run in a terminal to answer, or change the rule"
        }
    };
    format!(
        "stdin is not a terminal, so no one can be asked in mode `{}`; {fix}",
        mode.as_str()
    )
}

#[cfg(test)]
mod tests {
    use super::unattended_reason;
    use tack_permission::Mode;

    #[test]
    fn the_unattended_hint_never_suggests_the_mode_in_force() {
        for (mode, name) in [
            (Mode::ReadOnly, "read-only"),
            (Mode::Ask, "ask"),
            (Mode::AcceptEdits, "accept-edits"),
            (Mode::AllowAll, "allow-all"),
        ] {
            let reason = unattended_reason(mode);
            assert!(reason.contains(&format!("in mode `{name}`")), "{reason}");
            assert!(
                !reason.contains(&format!("--mode {name}")),
                "{name}: {reason}"
            );
        }
        assert!(unattended_reason(Mode::AcceptEdits).contains("--mode allow-all"));
        assert!(unattended_reason(Mode::AllowAll).contains("terminal"));
    }
}
