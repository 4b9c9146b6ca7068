//! Claude Code style hooks (`tack-hooks`) in a session: warnings about
//! what the tools could change, and wiring the hooks to the tool and agent
//! hook points.
//!
//! Hooks run as the user, outside the sandbox. Which files may define them
//! is [`crate::trust`]'s rule: a file inside the workspace only with its
//! exact contents trusted. Under `full-access` the tools can write
//! anything, the user's own settings and the trust store included: the
//! hooks are read all the same, with a loud warning (the user chose to lift
//! the confinement). A hook command that runs a file the tools could
//! write gets a loud warning too. For a hook defined inside the workspace,
//! the files its command runs are checked against what `tack trust`
//! recorded right before every run: one that changed, disappeared or
//! appeared since, and the hook does not run (it blocks, as a fail-closed
//! hook would).

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use tack_agent::{AgentHooks, Event, EventBus, PromptDecision, StopDecision};
use tack_hooks::{HookReport, HookSession, Hooks, HooksConfig, ReportLevel};
use tack_sandbox::SandboxMode;

use crate::settings::HookFile;

/// The listener name on the agent's hook points.
const LISTENER: &str = "hooks";

/// Whether the tools could write `path` (an existing file) in `workspace`
/// (canonical) under `mode`.
/// Protected paths (`.tack/`, `.git/`) count as writable: without
/// bubblewrap, commands can change the ones that exist.
pub fn tools_can_write(path: &Path, workspace: &Path, mode: SandboxMode) -> bool {
    match mode {
        SandboxMode::ReadOnly => false,
        SandboxMode::WorkspaceWrite => crate::trust::inside(path, workspace),
        _ => true,
    }
}

/// Checks every file that defines hooks and merges them. Returns the
/// merged configuration and the loud warnings to print.
///
/// # Errors
///
/// None today: which files may define hooks is [`crate::trust`]'s rule,
/// checked before.
pub fn checked(
    files: &[HookFile],
    workspace: &Path,
    mode: SandboxMode,
) -> Result<(HooksConfig, Vec<String>), String> {
    let mut config = HooksConfig::new();
    let mut warnings = Vec::new();
    for file in files {
        warnings.extend(file.config.warnings().iter().cloned());
        if file.config.is_empty() {
            continue;
        }
        if mode == SandboxMode::FullAccess {
            warnings.push(format!(
                "WARNING: {} defines hooks and the tools can write it under --sandbox full-access; \
                 hooks run outside any sandbox with your rights",
                file.path.display()
            ));
        }
        // A file inside the workspace is used only as trusted, and the
        // scripts its hooks run are checked against that trust before
        // every run: nothing to warn about. A file outside (your own
        // settings) naming a script the tools can write is not checked.
        if !crate::trust::inside(&file.path, workspace) {
            for event in tack_hooks::HookEvent::ALL {
                for group in file.config.groups(event) {
                    for hook in &group.hooks {
                        let runs =
                            crate::trust::command_files::of_hook(&hook.command_line(), workspace);
                        let present = runs.files.iter().filter(|(_, state)| state.is_some());
                        for (script, _) in present {
                            if tools_can_write(script, workspace, mode) {
                                warnings.push(format!(
                                    "WARNING: the {event} hook `{}` in {} runs {}, which the tools can write: a model could change what runs outside the sandbox (your own settings are not checked against a trust); keep hook scripts outside the workspace",
                                    hook.command,
                                    file.path.display(),
                                    script.display(),
                                ));
                            }
                        }
                    }
                }
            }
        }
        config.merge(file.config.clone());
    }
    Ok((config, warnings))
}

/// The hooks of a session, reporting as `hook/report` events (shown like
/// the session's other events, and logged).
pub fn session_hooks(config: HooksConfig, session: HookSession, bus: Arc<EventBus>) -> Hooks {
    let check = recheck(&config, &session.project_dir);
    let hooks = Hooks::with_reporter(
        config,
        session,
        Arc::new(move |report: &HookReport| {
            // A log failure is kept by the bus and stops the loop.
            let _ = bus.emit(Event::HookReport {
                hook: report.event.to_string(),
                command: report.command.clone(),
                blocked: report.level == ReportLevel::Blocked,
                message: report.message.clone(),
            });
        }),
    );
    hooks.with_pre_run(check)
}

/// The check before each hook command runs: a command defined by a file
/// inside the workspace `root` runs only if every file it runs from the
/// workspace is as the trust store recorded it when the session started
/// (present with the same contents, or still missing). Commands from files
/// outside are the user's own and are not checked.
fn recheck(config: &HooksConfig, root: &Path) -> tack_hooks::PreRun {
    let mut checked = HashSet::new();
    for event in tack_hooks::HookEvent::ALL {
        for group in config.groups(event) {
            if group
                .source
                .as_ref()
                .is_some_and(|source| crate::trust::inside(source, root))
            {
                checked.extend(
                    group
                        .hooks
                        .iter()
                        .map(tack_hooks::HookCommand::command_line),
                );
            }
        }
    }
    let recorded = if checked.is_empty() {
        Ok(BTreeMap::new())
    } else {
        crate::trust::Judge::new(root).recorded()
    };
    let root = root.to_owned();
    Arc::new(move |hook: &tack_hooks::HookCommand| {
        let line = hook.command_line();
        if !checked.contains(&line) {
            return Ok(());
        }
        let recorded = recorded.as_ref().map_err(|e| {
            format!("what it runs cannot be checked against what you trusted ({e}); fix that, then start a new session")
        })?;
        let now = crate::trust::command_files::of_hook(&line, &root);
        match crate::trust::first_difference(|path| recorded.get(path).cloned(), &now) {
            None => Ok(()),
            Some((file, why)) => Err(format!(
                "{} {why}; it runs outside the sandbox and is defined inside the workspace, where a model could have written it. Review it, then run `tack trust` and start a new session",
                file.display()
            )),
        }
    })
}

/// Attaches `hooks` to the agent's hook points. The listeners stay as long
/// as `agent_hooks` lives.
pub fn attach(hooks: &Hooks, agent_hooks: &AgentHooks) {
    use tack_hooks::HookEvent;
    // `"continue": false` and `defer` end the turn once the batch is answered.
    let turn = agent_hooks.clone();
    hooks.set_turn_stopper(Arc::new(move |reason: &str| {
        turn.request_turn_end(reason);
    }));
    // What finished `async` hooks said reaches the model after the next
    // batch of results (the tool hook points) or with the next prompt.
    if hooks.handles(HookEvent::UserPromptSubmit) || hooks.has_async() {
        let h = hooks.clone();
        agent_hooks
            .user_prompt_submit()
            .tap(LISTENER, move |input, next| {
                let h = h.clone();
                async move {
                    let mut check = if h.handles(HookEvent::UserPromptSubmit) {
                        h.user_prompt_submit(&input.prompt).await
                    } else {
                        tack_hooks::PromptCheck::default()
                    };
                    if let Some(reason) = check.blocked {
                        return PromptDecision::accept().block(reason);
                    }
                    check.context.extend(h.take_async_context());
                    let mut decision = next.run(input).await;
                    for context in check.context {
                        decision = decision.add_context(context);
                    }
                    decision
                }
            });
    }
    if hooks.handles(HookEvent::Stop) {
        let h = hooks.clone();
        agent_hooks.stop().tap(LISTENER, move |input, next| {
            let h = h.clone();
            async move {
                match h.stop(input.stop_hook_active).await {
                    Some(reason) => StopDecision::keep_going(reason),
                    None => next.run(input).await,
                }
            }
        });
    }
    if hooks.handles(HookEvent::PostToolBatch) {
        let h = hooks.clone();
        agent_hooks
            .post_tool_batch()
            .tap(LISTENER, move |input, next| {
                let h = h.clone();
                async move {
                    let check = h.post_tool_batch(&input.calls, &input.outcomes).await;
                    let mut decision = next.run(input).await;
                    for context in check.context {
                        decision = decision.add_context(context);
                    }
                    if let Some(reason) = check.stop {
                        decision = decision.stop(reason);
                    }
                    decision
                }
            });
    }
    if hooks.handles(HookEvent::StopFailure) {
        let h = hooks.clone();
        agent_hooks
            .stop_failure()
            .tap(LISTENER, move |input, next| {
                let h = h.clone();
                async move {
                    h.stop_failure(&input.kind, &input.details, &input.message)
                        .await;
                    next.run(input).await;
                }
            });
    }
    if hooks.handles(HookEvent::SessionStart) {
        let h = hooks.clone();
        agent_hooks
            .session_start()
            .tap(LISTENER, move |input, next| {
                let h = h.clone();
                async move {
                    let mut contexts = h.session_start(&input.source).await;
                    contexts.extend(next.run(input).await);
                    contexts
                }
            });
    }
    if hooks.handles(HookEvent::SessionEnd) {
        let h = hooks.clone();
        agent_hooks.session_end().tap(LISTENER, move |input, next| {
            let h = h.clone();
            async move {
                h.session_end(&input.reason).await;
                next.run(input).await;
            }
        });
    }
    if hooks.handles(HookEvent::Notification) {
        let h = hooks.clone();
        agent_hooks
            .notification()
            .tap(LISTENER, move |input, next| {
                let h = h.clone();
                async move {
                    h.notification(&input.kind, &input.message).await;
                    next.run(input).await;
                }
            });
    }
}

/// Asks the `PermissionRequest` hooks before the approver: an `allow` or
/// `deny` they give is the answer; otherwise `inner` is asked. An allow's
/// `updatedInput` becomes the call's arguments (checked and run through
/// `tools/pre-execute` again by the pipeline); its `updatedPermissions`
/// rules are added for the session, read as Claude Code rules by the same
/// reader as the settings files' (never looser than written, and never an
/// allow that acts like `allow-all`).
pub struct HookApprover {
    hooks: Hooks,
    inner: Arc<dyn tack_core::policy::ApprovalService>,
    rules: Option<(tack_permission::SessionRules, Arc<EventBus>)>,
}

impl HookApprover {
    /// `hooks` first, then `inner`.
    pub fn new(hooks: Hooks, inner: Arc<dyn tack_core::policy::ApprovalService>) -> Self {
        Self {
            hooks,
            inner,
            rules: None,
        }
    }

    /// Adds the rules of `updatedPermissions` to `rules`, reporting on `bus`
    /// what was added or skipped.
    pub fn with_session_rules(
        mut self,
        rules: tack_permission::SessionRules,
        bus: Arc<EventBus>,
    ) -> Self {
        self.rules = Some((rules, bus));
        self
    }

    fn add_rules(&self, updates: &[tack_hooks::PermissionUpdate]) {
        let Some((rules, bus)) = &self.rules else {
            return;
        };
        let home = std::env::var_os("HOME")
            .map(std::path::PathBuf::from)
            .filter(|p| p.is_absolute());
        for update in updates {
            let action = match update.behavior.as_str() {
                "deny" => tack_permission::Action::Deny,
                "ask" => tack_permission::Action::Ask,
                _ => tack_permission::Action::Allow,
            };
            let place = format!("the PermissionRequest hook `{}`", update.command);
            let report = |message: String, blocked: bool| {
                let _ = bus.emit(Event::HookReport {
                    hook: "PermissionRequest".to_owned(),
                    command: update.command.clone(),
                    blocked,
                    message,
                });
            };
            let read = match tack_permission::claude_rule(
                action,
                &update.rule,
                home.as_deref(),
                Some(&place),
            ) {
                Ok(read) => read,
                Err(e) => {
                    report(
                        format!("updatedPermissions: `{}`: {e}; skipped", update.rule),
                        false,
                    );
                    continue;
                }
            };
            if let Some(note) = &read.note {
                report(
                    format!("updatedPermissions: `{}`: {note}", update.rule),
                    false,
                );
            }
            for rule in read.rules {
                if let Some(why) = crate::settings::widening(&rule) {
                    report(
                        format!(
                            "updatedPermissions: `{}` would {rule}: {why}, which acts like mode `allow-all`; skipped",
                            update.rule
                        ),
                        false,
                    );
                    continue;
                }
                report(
                    format!(
                        "updatedPermissions: added `{rule}` for this session (from `{} {}`)",
                        update.behavior, update.rule
                    ),
                    false,
                );
                rules.push(rule);
            }
        }
    }
}

#[async_trait::async_trait]
impl tack_core::policy::ApprovalService for HookApprover {
    async fn request(
        &self,
        request: tack_core::policy::ApprovalRequest,
        cancel: tokio_util::sync::CancellationToken,
    ) -> tack_core::policy::ApprovalOutcome {
        use tack_core::policy::ApprovalOutcome;
        let answer = self
            .hooks
            .permission_request(
                &request.tool,
                &request.arguments,
                &request.call_id.to_string(),
            )
            .await;
        match answer {
            Some(tack_hooks::PermissionAnswer::Allow) => ApprovalOutcome::AllowedOnce,
            Some(tack_hooks::PermissionAnswer::AllowUpdated { input, permissions }) => {
                self.add_rules(&permissions);
                match input {
                    Some(arguments) => ApprovalOutcome::AllowedRewritten {
                        arguments,
                        by: "PermissionRequest hook".to_owned(),
                    },
                    None => ApprovalOutcome::AllowedOnce,
                }
            }
            Some(tack_hooks::PermissionAnswer::Deny(reason)) => ApprovalOutcome::Denied {
                reason: Some(reason),
            },
            _ => self.inner.request(request, cancel).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_outside_files_are_safe_under_workspace_write() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(ws.join(".tack")).unwrap();
        std::fs::create_dir_all(ws.join("src")).unwrap();
        let inside = ws.join("src/settings.json");
        let protected = ws.join(".tack/settings.json");
        std::fs::write(&inside, "{}").unwrap();
        std::fs::write(&protected, "{}").unwrap();
        let w = SandboxMode::WorkspaceWrite;
        assert!(tools_can_write(&inside, &ws, w));
        // Without bubblewrap commands can write .tack/; with it, they can
        // create it where it is missing.
        assert!(tools_can_write(&protected, &ws, w));
        assert!(!tools_can_write(Path::new("/etc/hostname"), &ws, w));
        assert!(!tools_can_write(&inside, &ws, SandboxMode::ReadOnly));
        assert!(tools_can_write(&protected, &ws, SandboxMode::FullAccess));
        // A protected-looking name that is a symlink to a writable file is writable.
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        let link = ws.join(".git/hooks.json");
        std::os::unix::fs::symlink(&inside, &link).unwrap();
        assert!(tools_can_write(&link, &ws, w));
    }
}
