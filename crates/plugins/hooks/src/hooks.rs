//! [`Hooks`]: the configured commands, the session they run for, and the
//! events they answer.

use std::sync::{Arc, RwLock};

use serde_json::{Map, Value};

use crate::config::{HookEvent, HooksConfig};
use crate::dispatch::{Inner, TurnStopper};
use crate::report::Reporter;
use crate::session::HookSession;

/// Claude Code style hooks for one session: a [`Plugin`](tack_core::plugin::Plugin)
/// for the tool events (`PreToolUse` on `tools/pre-execute`, `PostToolUse` on
/// `tools/post-execute`) and methods a host calls for the agent events.
///
/// Hook commands are the user's own: they run with the user's rights,
/// outside any sandbox the tools run in.
///
/// ```
/// use serde_json::json;
/// use tack_hooks::{HookSession, Hooks, HooksConfig};
/// let config = HooksConfig::from_settings(&json!({"hooks": {"UserPromptSubmit": [
///     {"hooks": [{"type": "command", "command": "echo 'Today is a holiday.'"}]}
/// ]}}), None).unwrap();
/// let hooks = Hooks::new(config, HookSession::new("s1", std::env::temp_dir()));
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let check = hooks.user_prompt_submit("hello").await;
/// assert_eq!(check.blocked, None);
/// assert_eq!(check.context, ["Today is a holiday."]);
/// # });
/// ```
#[derive(Clone)]
pub struct Hooks {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hooks")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

/// What the `PermissionRequest` hooks answered for a call that needs
/// approval.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PermissionAnswer {
    /// Approve it, in the user's place.
    Allow,
    /// Approve it, with what the hook's `decision` also said: arguments to
    /// run the call with instead (`updatedInput`, in tack's names and
    /// fields), and permission rules to add for the rest of the session
    /// (`updatedPermissions`).
    AllowUpdated {
        /// The call's new arguments (the host validates them again).
        input: Option<Value>,
        /// Rules to add for the session.
        permissions: Vec<PermissionUpdate>,
    },
    /// Decline it, with the message the model reads.
    Deny(String),
}

/// One rule of a `PermissionRequest` hook's `updatedPermissions`
/// (`{"type": "addRules", "behavior": "allow", "rules": [{"toolName":
/// "Bash", "ruleContent": "npm test"}]}`), as Claude Code's rule text.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PermissionUpdate {
    /// `allow`, `deny` or `ask`.
    pub behavior: String,
    /// The rule in Claude Code's syntax: `Bash(npm test)`, `Read`.
    pub rule: String,
    /// The hook command that gave it.
    pub command: String,
}

/// What the `UserPromptSubmit` hooks decided.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PromptCheck {
    /// Why the prompt is blocked (it must not reach the model).
    pub blocked: Option<String>,
    /// Context to add after the prompt.
    pub context: Vec<String>,
}

/// What the `PostToolBatch` hooks decided.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BatchCheck {
    /// Context to add after the batch's results, before the model is asked
    /// again (each hook's `additionalContext`).
    pub context: Vec<String>,
    /// Why the agent must stop instead of asking the model again (exit 2's
    /// stderr, `decision: "block"`'s `reason`, `continue: false`'s
    /// `stopReason`): the model reads it when the conversation goes on.
    pub stop: Option<String>,
}

impl Hooks {
    /// Hooks from `config` for `session`.
    pub fn new(config: HooksConfig, session: HookSession) -> Self {
        Self::build(config, session, None)
    }

    /// Hooks that also hand every report (an error that did not block, a
    /// block) to `reporter`, e.g. to show it to the user.
    pub fn with_reporter(config: HooksConfig, session: HookSession, reporter: Reporter) -> Self {
        Self::build(config, session, Some(reporter))
    }

    fn build(config: HooksConfig, session: HookSession, reporter: Option<Reporter>) -> Self {
        Self {
            inner: Arc::new(Inner {
                config,
                session: RwLock::new(session),
                reporter,
                pre_run: None,
                ran_once: Default::default(),
                pre_context: Default::default(),
                async_context: Default::default(),
                stopper: RwLock::new(None),
            }),
        }
    }

    /// Lets hooks end the agent's turn: `"continue": false` (with
    /// `stopReason`) from a tool event's hook, or a `PreToolUse` hook's
    /// `defer`, calls `stop` with the reason once the call is answered.
    /// Without one, such answers only deny the call (`PreToolUse`) or are
    /// reported.
    pub fn set_turn_stopper(&self, stop: TurnStopper) {
        *self
            .inner
            .stopper
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(stop);
    }

    /// These hooks with `check` run right before each command: a command
    /// it refuses does not run, and blocks as a fail-closed error would
    /// (the refusal is reported and is the reason given).
    pub fn with_pre_run(self, check: crate::runner::PreRun) -> Self {
        Self {
            inner: Arc::new(Inner {
                config: self.inner.config.clone(),
                session: RwLock::new(self.inner.session()),
                reporter: self.inner.reporter.clone(),
                pre_run: Some(check),
                ran_once: Default::default(),
                pre_context: Default::default(),
                async_context: Default::default(),
                stopper: RwLock::new(
                    self.inner
                        .stopper
                        .read()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .clone(),
                ),
            }),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &HooksConfig {
        &self.inner.config
    }

    /// Replaces the session facts (e.g. once the session log's path is known).
    pub fn set_session(&self, session: HookSession) {
        *self
            .inner
            .session
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = session;
    }

    /// The session facts.
    pub fn session(&self) -> HookSession {
        self.inner.session()
    }

    /// Whether any hook is configured for `event`.
    pub fn handles(&self, event: HookEvent) -> bool {
        self.inner.config.groups(event).any(|g| !g.hooks.is_empty())
    }

    /// Whether any hook runs in the background (`async`, `asyncRewake`):
    /// the host then passes on what they said with
    /// [`take_async_context`](Self::take_async_context).
    pub fn has_async(&self) -> bool {
        HookEvent::ALL.iter().any(|event| {
            self.inner
                .config
                .groups(*event)
                .any(|g| g.hooks.iter().any(|h| h.run_async))
        })
    }

    /// What `async` hooks that finished since the last call said for the
    /// model (their `additionalContext` and `systemMessage`, and the stderr
    /// of an `asyncRewake` hook's exit 2), one text per hook, oldest
    /// first. Claude Code gives it to the model at its next turn: tack adds
    /// it after the next batch of tool results or the next prompt.
    pub fn take_async_context(&self) -> Vec<String> {
        std::mem::take(
            &mut *self
                .inner
                .async_context
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    async fn fire_all(
        &self,
        event: HookEvent,
        target: Option<&str>,
        fields: Map<String, Value>,
    ) -> Vec<crate::dispatch::Answer> {
        let names: Vec<&str> = target.into_iter().collect();
        let hooks = self.inner.matching(event, &names, None);
        if hooks.is_empty() {
            return Vec::new();
        }
        self.inner.fire(event, hooks, fields).await
    }

    /// `UserPromptSubmit`: exit 2 or `"decision": "block"` (or
    /// `"continue": false`) blocks the prompt; `additionalContext` and plain
    /// text on exit 0 become context.
    pub async fn user_prompt_submit(&self, prompt: &str) -> PromptCheck {
        let mut fields = Map::new();
        fields.insert("prompt".into(), prompt.into());
        let answers = self
            .fire_all(HookEvent::UserPromptSubmit, None, fields)
            .await;
        let mut check = PromptCheck::default();
        let mut reasons = Vec::new();
        for answer in &answers {
            if let Some(reason) = &answer.blocking {
                reasons.push(reason.clone());
                continue;
            }
            if answer.field("decision") == Some("block") || answer.stops() {
                reasons.push(
                    answer
                        .field("reason")
                        .or_else(|| answer.field("stopReason"))
                        .map_or_else(
                            || {
                                format!(
                                    "the UserPromptSubmit hook `{}` blocked the prompt",
                                    answer.command
                                )
                            },
                            str::to_owned,
                        ),
                );
                continue;
            }
            if let Some(context) = answer.specific("additionalContext").and_then(Value::as_str) {
                check.context.push(context.to_owned());
            } else if let Some(text) = &answer.plain {
                check.context.push(text.clone());
            }
        }
        if !reasons.is_empty() {
            check.blocked = Some(reasons.join("; "));
        }
        check
    }

    /// `Stop`: exit 2 (stderr) or `"decision": "block"` with a `reason`
    /// keeps the agent going; the reason is what the model is told.
    /// `stop_hook_active` tells the hooks the agent already goes on because
    /// of a `Stop` hook (so a script can let it stop). `"continue": false`
    /// lets it stop whatever the others said.
    pub async fn stop(&self, stop_hook_active: bool) -> Option<String> {
        let mut fields = Map::new();
        fields.insert("stop_hook_active".into(), stop_hook_active.into());
        let answers = self.fire_all(HookEvent::Stop, None, fields).await;
        if answers.iter().any(crate::dispatch::Answer::stops) {
            return None;
        }
        let reasons: Vec<String> = answers
            .iter()
            .filter_map(|a| {
                a.blocking.clone().or_else(|| {
                    (a.field("decision") == Some("block")).then(|| {
                        a.field("reason").map_or_else(
                            || format!("the Stop hook `{}` asks you to go on", a.command),
                            str::to_owned,
                        )
                    })
                })
            })
            .collect();
        (!reasons.is_empty()).then(|| reasons.join("\n"))
    }

    /// `PostToolBatch`: every call of a model's batch is answered, before
    /// the model is asked again. Each hook gets `tool_calls`: for each call
    /// (in the model's order) `tool_name`, `tool_input` (the model's
    /// arguments), `tool_use_id` and `tool_response`, the text the model
    /// reads as the call's result. `additionalContext` becomes context;
    /// exit 2 (stderr), `"decision": "block"` (`reason`) or
    /// `"continue": false` (`stopReason`) stop the agent before the model
    /// is asked again.
    pub async fn post_tool_batch(
        &self,
        calls: &[tack_core::tool::ToolCall],
        outcomes: &[Arc<tack_core::tool::Outcome>],
    ) -> BatchCheck {
        let hooks = self.inner.matching(HookEvent::PostToolBatch, &[], None);
        if hooks.is_empty() {
            return BatchCheck::default();
        }
        let session = self.session();
        let tool_calls: Vec<Value> = calls
            .iter()
            .zip(outcomes)
            .map(|(call, outcome)| {
                // Arguments that are not JSON are shown as the model wrote them.
                let arguments = serde_json::from_str::<Value>(&call.arguments)
                    .unwrap_or_else(|_| Value::String(call.arguments.clone()));
                let (name, input) = match session.names {
                    crate::ToolNames::Tack => (call.name.clone(), arguments),
                    _ => (
                        crate::claude_name(&call.name).to_owned(),
                        crate::names::to_claude_input(&call.name, &arguments, &session.cwd),
                    ),
                };
                serde_json::json!({
                    "tool_name": name,
                    "tool_input": input,
                    "tool_use_id": call.call_id.to_string(),
                    "tool_response": outcome.content.joined_text(),
                })
            })
            .collect();
        let mut fields = Map::new();
        fields.insert("tool_calls".into(), Value::Array(tool_calls));
        let answers = self
            .inner
            .fire(HookEvent::PostToolBatch, hooks, fields)
            .await;
        let mut check = BatchCheck::default();
        let mut stops = Vec::new();
        for answer in &answers {
            if let Some(reason) = &answer.blocking {
                stops.push(reason.clone());
                continue;
            }
            let stop = if answer.stops() {
                Some(answer.field("stopReason"))
            } else if answer.field("decision") == Some("block") {
                Some(answer.field("reason"))
            } else {
                None
            };
            if let Some(reason) = stop {
                let reason = reason.map_or_else(
                    || {
                        format!(
                            "the PostToolBatch hook `{}` stopped the agent",
                            answer.command
                        )
                    },
                    str::to_owned,
                );
                self.inner.report(
                    HookEvent::PostToolBatch,
                    &answer.command,
                    crate::ReportLevel::Blocked,
                    format!("stopped the turn: {reason}"),
                );
                stops.push(reason);
                continue;
            }
            if let Some(context) = answer.specific("additionalContext").and_then(Value::as_str) {
                check.context.push(context.to_owned());
            }
        }
        if !stops.is_empty() {
            check.stop = Some(stops.join("; "));
        }
        check
    }

    /// `StopFailure`: the turn ends because the model could not answer.
    /// `error` is the kind of error (`rate_limit`, `authentication_failed`,
    /// `server_error`, …; the matcher is matched against it), `details`
    /// its details (`error_details`) and `message` the error as shown
    /// (`last_assistant_message`). The hooks' output and exit codes change
    /// nothing.
    pub async fn stop_failure(&self, error: &str, details: &str, message: &str) {
        let mut fields = Map::new();
        fields.insert("error".into(), error.into());
        fields.insert("error_details".into(), details.into());
        fields.insert("last_assistant_message".into(), message.into());
        let _ = self
            .fire_all(HookEvent::StopFailure, Some(error), fields)
            .await;
    }

    /// `SessionStart` (`source`: `startup`, `resume`): `additionalContext`
    /// and plain text on exit 0 become context. The matcher is matched
    /// against `source`.
    pub async fn session_start(&self, source: &str) -> Vec<String> {
        let mut fields = Map::new();
        fields.insert("source".into(), source.into());
        let answers = self
            .fire_all(HookEvent::SessionStart, Some(source), fields)
            .await;
        answers
            .iter()
            .filter(|a| a.blocking.is_none())
            .filter_map(|a| {
                a.specific("additionalContext")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .or_else(|| a.plain.clone())
            })
            .collect()
    }

    /// `SessionEnd` (`reason`, e.g. `exit`): for cleanup; nothing it says
    /// changes the session.
    pub async fn session_end(&self, reason: &str) {
        let mut fields = Map::new();
        fields.insert("reason".into(), reason.into());
        let _ = self
            .fire_all(HookEvent::SessionEnd, Some(reason), fields)
            .await;
    }

    /// `PermissionRequest`: a call of `tool` (tack's name) with `arguments`
    /// needs approval. `hookSpecificOutput.decision.behavior` `allow` or
    /// `deny` (with `message`) answers in the user's place; exit 2 denies
    /// with stderr; `interrupt: true` with a deny also ends the turn.
    /// `None`: no hook answered, ask as usual. With `allow`,
    /// `updatedInput` and `updatedPermissions` (`addRules` entries) come back
    /// in [`PermissionAnswer::AllowUpdated`]; other kinds of permission
    /// update are reported and ignored.
    pub async fn permission_request(
        &self,
        tool: &str,
        arguments: &Value,
        call_id: &str,
    ) -> Option<PermissionAnswer> {
        let session = self.session();
        let (shown, input) = match session.names {
            crate::ToolNames::Tack => (tool.to_owned(), arguments.clone()),
            _ => (
                crate::claude_name(tool).to_owned(),
                crate::names::to_claude_input(tool, arguments, &session.cwd),
            ),
        };
        let claude = crate::claude_name(tool);
        let claude_input = crate::names::to_claude_input(tool, arguments, &session.cwd);
        let both = [claude, tool];
        let view = crate::condition::CallView {
            names: &both,
            input: &claude_input,
            cwd: &session.cwd,
            project: &session.project_dir,
        };
        let names: Vec<&str> = if session.names == crate::ToolNames::Tack || shown == tool {
            vec![tool]
        } else {
            vec![&shown, tool]
        };
        let hooks = self
            .inner
            .matching(HookEvent::PermissionRequest, &names, Some(&view));
        if hooks.is_empty() {
            return None;
        }
        let mut fields = Map::new();
        fields.insert("tool_name".into(), shown.clone().into());
        fields.insert("tool_input".into(), input);
        fields.insert("tool_use_id".into(), call_id.into());
        let answers = self
            .inner
            .fire(HookEvent::PermissionRequest, hooks, fields)
            .await;
        let mut denies = Vec::new();
        let mut allowed = false;
        let mut inputs: Vec<(String, Value)> = Vec::new();
        let mut permissions = Vec::new();
        for answer in &answers {
            if let Some(reason) = &answer.blocking {
                denies.push(reason.clone());
                continue;
            }
            let Some(decision) = answer.specific("decision") else {
                continue;
            };
            match decision.get("behavior").and_then(Value::as_str) {
                Some("deny") => {
                    denies.push(decision.get("message").and_then(Value::as_str).map_or_else(
                        || format!("the PermissionRequest hook `{}` denied it", answer.command),
                        str::to_owned,
                    ));
                    if decision.get("interrupt").and_then(Value::as_bool) == Some(true) {
                        self.inner.stop_turn(&format!(
                            "the PermissionRequest hook `{}` interrupted the agent",
                            answer.command
                        ));
                    }
                }
                Some("allow") => {
                    allowed = true;
                    if let Some(updated) = decision.get("updatedInput") {
                        inputs.push((answer.command.clone(), updated.clone()));
                    }
                    if let Some(updates) = decision.get("updatedPermissions") {
                        permissions.extend(self.permission_updates(&answer.command, updates));
                    }
                }
                _ => {}
            }
        }
        if !denies.is_empty() {
            return Some(PermissionAnswer::Deny(denies.join("; ")));
        }
        if !allowed {
            return None;
        }
        let input = match &inputs[..] {
            [] => None,
            [(first, updated), rest @ ..] => {
                if let Some((other, _)) = rest.iter().find(|(_, u)| u != updated) {
                    return Some(PermissionAnswer::Deny(format!(
                        "the PermissionRequest hooks `{first}` and `{other}` rewrote the input of tool `{shown}` differently; the call was not run"
                    )));
                }
                Some(match session.names {
                    crate::ToolNames::Tack => updated.clone(),
                    _ => crate::names::from_claude_input(tool, updated, &session.cwd),
                })
            }
        };
        if input.is_none() && permissions.is_empty() {
            return Some(PermissionAnswer::Allow);
        }
        Some(PermissionAnswer::AllowUpdated { input, permissions })
    }

    /// The `addRules` entries of an `updatedPermissions` list, as rule
    /// text; every other entry is reported and ignored.
    fn permission_updates(&self, command: &str, updates: &Value) -> Vec<PermissionUpdate> {
        let warn = |message: String| {
            self.inner.report(
                HookEvent::PermissionRequest,
                command,
                crate::ReportLevel::Warning,
                message,
            );
        };
        let Some(updates) = updates.as_array() else {
            warn("updatedPermissions must be a list of permission updates; ignored".to_owned());
            return Vec::new();
        };
        let mut out = Vec::new();
        for update in updates {
            let kind = update.get("type").and_then(Value::as_str).unwrap_or("");
            if kind != "addRules" {
                warn(format!(
                    "updatedPermissions: `{kind}` is not applied (tack adds rules for the session only: `addRules`); ignored"
                ));
                continue;
            }
            let behavior = update.get("behavior").and_then(Value::as_str).unwrap_or("");
            if !["allow", "deny", "ask"].contains(&behavior) {
                warn(format!(
                    "updatedPermissions: addRules needs a behavior of allow, deny or ask, not `{behavior}`; ignored"
                ));
                continue;
            }
            if let Some(destination) = update.get("destination").and_then(Value::as_str)
                && destination != "session"
            {
                warn(format!(
                    "updatedPermissions: destination `{destination}`: tack writes no settings file; the rules hold for this session only"
                ));
            }
            for rule in update
                .get("rules")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let Some(tool) = rule.get("toolName").and_then(Value::as_str) else {
                    warn("updatedPermissions: a rule without `toolName`; ignored".to_owned());
                    continue;
                };
                let text = match rule.get("ruleContent").and_then(Value::as_str) {
                    Some(content) => format!("{tool}({content})"),
                    None => tool.to_owned(),
                };
                out.push(PermissionUpdate {
                    behavior: behavior.to_owned(),
                    rule: text,
                    command: command.to_owned(),
                });
            }
        }
        out
    }

    /// `Notification`: the agent needs the user (e.g. an approval); the
    /// matcher is matched against `kind` (e.g. `permission_prompt`).
    pub async fn notification(&self, kind: &str, message: &str) {
        let mut fields = Map::new();
        fields.insert("message".into(), message.into());
        fields.insert("notification_type".into(), kind.into());
        let _ = self
            .fire_all(HookEvent::Notification, Some(kind), fields)
            .await;
    }
}
