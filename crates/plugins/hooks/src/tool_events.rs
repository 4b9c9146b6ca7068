//! `PreToolUse` on `tools/pre-execute` and `PostToolUse` on
//! `tools/post-execute`.

use std::sync::Arc;

use serde_json::{Map, Value};
use tack_core::hook::{Order, Provenance};
use tack_core::hooks::{ExecutionRecord, ToolHooks};
use tack_core::plugin::{Plugin, PluginContext, PluginError};
use tack_core::policy::PreDecision;
use tack_core::tool::{ContentBlock, DeferredContext, ErrorCode, ToolExecution};

use crate::condition::CallView;
use crate::config::HookEvent;
use crate::hooks::Hooks;
use crate::names::{ToolNames, claude_name, from_claude_input, to_claude_input};

/// The plugin's name.
pub const PLUGIN_NAME: &str = "hooks";

/// The name of its `tools/pre-execute` and `tools/post-execute` listeners
/// (the provenance of what a hook denied or rewrote).
pub const LISTENER_NAME: &str = "hooks";

/// The source of the context hooks add.
pub const CONTEXT_SOURCE: &str = "hooks";

/// How the denial of a call a `PreToolUse` hook deferred
/// (`"permissionDecision": "defer"`) begins: a host that resumes the session
/// finds the deferred calls by it and runs them again.
pub const DEFERRED: &str = "deferred by a PreToolUse hook";

impl Plugin for Hooks {
    fn name(&self) -> &str {
        PLUGIN_NAME
    }

    fn install(&self, cx: &mut PluginContext<'_>) -> Result<(), PluginError> {
        // Outer: the hooks see the call first, and the policies inside them
        // judge the arguments a hook rewrote.
        let pre = self.handles(HookEvent::PreToolUse);
        if pre {
            let hooks = self.clone();
            cx.hooks()
                .pre_execute()
                .tap_with(LISTENER_NAME, Order::EARLY, move |exec, next| {
                    let hooks = hooks.clone();
                    async move {
                        match hooks.pre_tool_use(&exec).await {
                            None => next.run(exec).await,
                            Some(ours) if ours.is_deny() => ours,
                            Some(ours) => {
                                let rest = match ours.rewritten_arguments() {
                                    Some(arguments) => {
                                        Arc::new(exec.with_rewritten_arguments(arguments.clone()))
                                    }
                                    None => exec,
                                };
                                ours.stricter(next.run(rest).await)
                            }
                        }
                    }
                })?;
        }
        // PreToolUse's additionalContext rides on the call's outcome, and
        // so does what finished async hooks said.
        if pre
            || self.handles(HookEvent::PostToolUse)
            || self.handles(HookEvent::PostToolUseFailure)
            || self.handles(HookEvent::PermissionDenied)
            || self.has_async()
        {
            let hooks = self.clone();
            cx.hooks().post_execute().tap_with(
                LISTENER_NAME,
                Order::EARLY,
                move |record: ExecutionRecord, next| {
                    let hooks = hooks.clone();
                    async move {
                        let mut context = record
                            .execution
                            .as_ref()
                            .map(|exec| hooks.take_pre_context(&exec.call_id().to_string()))
                            .unwrap_or_default();
                        let ours = if record.outcome.value().is_some() {
                            hooks.post_tool_use(&record).await
                        } else if denied_unasked(&record.outcome) {
                            hooks.permission_denied(&record).await
                        } else {
                            hooks.post_tool_use_failure(&record).await
                        };
                        let mut decision = next.run(record).await;
                        if let Some(feedback) = ours.block {
                            decision = decision.block(feedback);
                        }
                        if let Some(output) = ours.replace {
                            let text = match output {
                                Value::String(text) => text,
                                other => other.to_string(),
                            };
                            decision = decision.replace_content(vec![ContentBlock::text(text)]);
                        }
                        context.extend(ours.context);
                        context.extend(hooks.take_async_context());
                        for context in context {
                            decision = decision.add_context(
                                DeferredContext::text_note(context).with_source(CONTEXT_SOURCE),
                            );
                        }
                        decision
                    }
                },
            )?;
        }
        Ok(())
    }
}

/// The pipeline stage whose provenance an approval's outcome carries
/// (`tack-pipeline`'s `APPROVAL_STAGE`).
const APPROVAL_STAGE: &str = "approval";

/// Whether `outcome` is a call that needed approval and was denied with no
/// one deciding: no one could be asked (no terminal, no approval service,
/// an approval service that failed). tack's counterpart of Claude Code's
/// auto mode denying in the user's place. A person's (or a
/// `PermissionRequest` hook's) "no", a deny rule, a mode or a `PreToolUse`
/// hook is not: Claude Code runs no `PermissionDenied` hook for those.
fn denied_unasked(outcome: &tack_core::tool::Outcome) -> bool {
    let declined = tack_core::policy::ApprovalOutcome::Denied { reason: None };
    outcome
        .failure_info()
        .is_some_and(|f| f.code() == ErrorCode::Denied)
        && outcome.provenance.as_ref().is_some_and(|p| {
            p.hook == APPROVAL_STAGE && p.listener.as_deref() != Some(declined.as_str())
        })
}

/// What the `PostToolUse` hooks said.
#[derive(Default)]
struct PostAnswer {
    block: Option<String>,
    context: Vec<String>,
    /// `updatedMCPToolOutput`: what the model sees instead of an MCP
    /// tool's result.
    replace: Option<Value>,
}

impl Hooks {
    fn tool_view(&self, exec: &ToolExecution) -> (String, Value) {
        let session = self.session();
        match session.names {
            ToolNames::Tack => (exec.name().to_owned(), (**exec.arguments()).clone()),
            _ => (
                claude_name(exec.name()).to_owned(),
                to_claude_input(exec.name(), exec.arguments(), &session.cwd),
            ),
        }
    }

    fn names<'a>(&self, exec: &'a ToolExecution, shown: &'a str) -> Vec<&'a str> {
        if self.session().names == ToolNames::Tack || shown == exec.name() {
            vec![exec.name()]
        } else {
            vec![shown, exec.name()]
        }
    }

    /// The hooks of a tool `event` for `exec`: matcher and `if`. (`if` is
    /// a Claude Code permission rule, so it always sees Claude Code's
    /// names and fields.)
    fn tool_hooks(
        &self,
        event: HookEvent,
        exec: &ToolExecution,
        shown: &str,
    ) -> Vec<crate::config::HookCommand> {
        let session = self.session();
        let claude = claude_name(exec.name());
        let claude_input = to_claude_input(exec.name(), exec.arguments(), &session.cwd);
        let both = [claude, exec.name()];
        let view = CallView {
            names: &both,
            input: &claude_input,
            cwd: &session.cwd,
            project: &session.project_dir,
        };
        self.inner
            .matching(event, &self.names(exec, shown), Some(&view))
    }

    fn take_pre_context(&self, call_id: &str) -> Vec<String> {
        self.inner
            .pre_context
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(call_id)
            .unwrap_or_default()
    }

    /// `continue: false` of tool-event answers: ends the turn (the first
    /// `stopReason` given is the reason).
    fn stop_if_asked(&self, event: HookEvent, answers: &[crate::dispatch::Answer]) -> bool {
        let Some(answer) = answers.iter().find(|a| a.stops()) else {
            return false;
        };
        let reason = answer.field("stopReason").map_or_else(
            || format!("the {event} hook `{}` stopped the agent", answer.command),
            str::to_owned,
        );
        self.inner.report(
            event,
            &answer.command,
            crate::ReportLevel::Blocked,
            format!("stopped the turn: {reason}"),
        );
        self.inner.stop_turn(&reason);
        true
    }

    /// `PreToolUse`: `None` when no hook matched the tool.
    async fn pre_tool_use(&self, exec: &ToolExecution) -> Option<PreDecision> {
        let (shown, input) = self.tool_view(exec);
        let hooks = self.tool_hooks(HookEvent::PreToolUse, exec, &shown);
        if hooks.is_empty() {
            return None;
        }
        let mut fields = Map::new();
        fields.insert("tool_name".into(), shown.clone().into());
        fields.insert("tool_input".into(), input);
        fields.insert("tool_use_id".into(), exec.call_id().to_string().into());
        let answers = self.inner.fire(HookEvent::PreToolUse, hooks, fields).await;
        let mut denies = Vec::new();
        let mut asks = Vec::new();
        let mut defers = Vec::new();
        let mut contexts = Vec::new();
        let mut rewrites: Vec<(String, Value)> = Vec::new();
        if self.stop_if_asked(HookEvent::PreToolUse, &answers) {
            let reason = answers
                .iter()
                .find_map(|a| a.stops().then(|| a.field("stopReason")).flatten())
                .unwrap_or("a PreToolUse hook stopped the agent");
            return Some(PreDecision::deny(format!(
                "{reason} (the call was not run and the turn ends)"
            )));
        }
        for answer in &answers {
            if let Some(reason) = &answer.blocking {
                denies.push(reason.clone());
                continue;
            }
            if let Some(why) = &answer.unsupported {
                asks.push(why.clone());
                continue;
            }
            if let Some(context) = answer.specific("additionalContext").and_then(Value::as_str) {
                contexts.push(context.to_owned());
            }
            let reason = answer
                .specific("permissionDecisionReason")
                .and_then(Value::as_str)
                .or_else(|| answer.field("reason"));
            let decision = answer
                .specific("permissionDecision")
                .and_then(Value::as_str)
                .or(match answer.field("decision") {
                    Some("block") => Some("deny"),
                    Some("approve") => Some("allow"),
                    _ => None,
                });
            let because = |what: &str| {
                reason.map_or_else(
                    || {
                        format!(
                            "the PreToolUse hook `{}` {what} tool `{shown}`",
                            answer.command
                        )
                    },
                    str::to_owned,
                )
            };
            match decision {
                Some("deny") => {
                    denies.push(because("denied"));
                    continue;
                }
                Some("defer") => {
                    defers.push(because("deferred"));
                    continue;
                }
                Some("ask") => asks.push(because("asks before running")),
                Some("allow") | None => {}
                Some(other) => self.inner.report(
                    HookEvent::PreToolUse,
                    &answer.command,
                    crate::ReportLevel::Warning,
                    format!(
                        "unknown permissionDecision `{other}` (allow, deny, ask or defer); ignored"
                    ),
                ),
            }
            if let Some(updated) = answer.specific("updatedInput") {
                rewrites.push((answer.command.clone(), updated.clone()));
            }
        }
        if !contexts.is_empty() {
            self.inner
                .pre_context
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .entry(exec.call_id().to_string())
                .or_default()
                .extend(contexts);
        }
        if !denies.is_empty() {
            return Some(PreDecision::deny(denies.join("; ")));
        }
        if !defers.is_empty() {
            let reason = defers.join("; ");
            self.inner.stop_turn(&format!(
                "the `{shown}` call was deferred by a PreToolUse hook: {reason}"
            ));
            return Some(PreDecision::deny(format!(
                "{DEFERRED}: {reason} (the call was not run; the turn ends so that it can be decided outside the session, and resuming the session runs it again)"
            )));
        }
        let decision = if asks.is_empty() {
            PreDecision::allow()
        } else {
            PreDecision::ask(asks.join("; "))
        };
        let Some((first, updated)) = rewrites.first() else {
            return Some(decision);
        };
        if let Some((other, _)) = rewrites.iter().find(|(_, u)| u != updated) {
            return Some(PreDecision::deny(format!(
                "the PreToolUse hooks `{first}` and `{other}` rewrote the input of tool `{shown}` \
                 differently; the call was not run"
            )));
        }
        let arguments = match self.session().names {
            ToolNames::Tack => updated.clone(),
            _ => from_claude_input(exec.name(), updated, &self.session().cwd),
        };
        Some(
            decision
                .with_arguments(arguments)
                .with_rewritten_by(Provenance::listener(ToolHooks::PRE_EXECUTE, LISTENER_NAME)),
        )
    }

    /// `PostToolUse`, for calls whose tool ran and succeeded.
    async fn post_tool_use(&self, record: &ExecutionRecord) -> PostAnswer {
        let (Some(exec), Some(value)) = (&record.execution, record.outcome.value()) else {
            return PostAnswer::default();
        };
        let (shown, tool_input) = self.tool_view(exec);
        let hooks = self.tool_hooks(HookEvent::PostToolUse, exec, &shown);
        if hooks.is_empty() {
            return PostAnswer::default();
        }
        let mut fields = Map::new();
        fields.insert("tool_name".into(), shown.clone().into());
        fields.insert("tool_input".into(), tool_input);
        fields.insert("tool_response".into(), value.clone());
        fields.insert("tool_use_id".into(), exec.call_id().to_string().into());
        let answers = self.inner.fire(HookEvent::PostToolUse, hooks, fields).await;
        self.stop_if_asked(HookEvent::PostToolUse, &answers);
        let mut post = PostAnswer::default();
        let mut withheld = Vec::new();
        for answer in &answers {
            let feedback = if let Some(reason) = &answer.blocking {
                if answer.failed_closed {
                    // A fail-closed error: the result is withheld.
                    withheld.push(reason.clone());
                    continue;
                }
                Some(reason.clone())
            } else if answer.field("decision") == Some("block") {
                Some(answer.field("reason").map_or_else(
                    || {
                        format!(
                            "the PostToolUse hook `{}` objected to this result",
                            answer.command
                        )
                    },
                    str::to_owned,
                ))
            } else {
                None
            };
            if let Some(feedback) = feedback {
                post.context.push(format!(
                    "PostToolUse hook feedback on the `{shown}` call {}: {feedback}",
                    exec.call_id()
                ));
            }
            if let Some(context) = answer.specific("additionalContext").and_then(Value::as_str) {
                post.context.push(context.to_owned());
            }
            if let Some(output) = answer.specific("updatedMCPToolOutput") {
                if exec.name().starts_with("mcp__") {
                    // The model sees this instead; the session log then
                    // keeps what the model saw, not the tool's value.
                    post.replace = Some(output.clone());
                } else {
                    self.inner.report(
                        HookEvent::PostToolUse,
                        &answer.command,
                        crate::ReportLevel::Warning,
                        format!(
                            "updatedMCPToolOutput applies to MCP tools only; the result of `{shown}` is kept"
                        ),
                    );
                }
            }
        }
        if !withheld.is_empty() {
            post.block = Some(withheld.join("; "));
        }
        post
    }

    /// `PermissionDenied`, for a call that needed approval and was denied
    /// with no one deciding ([`denied_unasked`]): `reason` is the denial the
    /// model reads. `hookSpecificOutput.retry: true` adds a message telling
    /// the model it may retry the call (the denial stands); exit 2 and
    /// other output change nothing but `continue: false`.
    async fn permission_denied(&self, record: &ExecutionRecord) -> PostAnswer {
        let (Some(exec), Some(failure)) = (&record.execution, record.outcome.failure_info()) else {
            return PostAnswer::default();
        };
        let (shown, tool_input) = self.tool_view(exec);
        let hooks = self.tool_hooks(HookEvent::PermissionDenied, exec, &shown);
        if hooks.is_empty() {
            return PostAnswer::default();
        }
        let mut fields = Map::new();
        fields.insert("tool_name".into(), shown.clone().into());
        fields.insert("tool_input".into(), tool_input);
        fields.insert("tool_use_id".into(), exec.call_id().to_string().into());
        fields.insert("reason".into(), failure.message().to_owned().into());
        let answers = self
            .inner
            .fire(HookEvent::PermissionDenied, hooks, fields)
            .await;
        self.stop_if_asked(HookEvent::PermissionDenied, &answers);
        let mut post = PostAnswer::default();
        if let Some(answer) = answers.iter().find(|a| {
            a.blocking.is_none() && a.specific("retry").and_then(Value::as_bool) == Some(true)
        }) {
            post.context.push(format!(
                "The PermissionDenied hook `{}` says you may retry the denied `{shown}` call {}.",
                answer.command,
                exec.call_id()
            ));
        }
        post
    }

    /// `PostToolUseFailure`, for calls of a known tool with valid arguments
    /// that ran and failed (not denied ones: they never ran).
    async fn post_tool_use_failure(&self, record: &ExecutionRecord) -> PostAnswer {
        let Some(exec) = &record.execution else {
            return PostAnswer::default();
        };
        let Some(failure) = record.outcome.failure_info() else {
            return PostAnswer::default();
        };
        if failure.code() == ErrorCode::Denied {
            return PostAnswer::default();
        }
        let (shown, tool_input) = self.tool_view(exec);
        let hooks = self.tool_hooks(HookEvent::PostToolUseFailure, exec, &shown);
        if hooks.is_empty() {
            return PostAnswer::default();
        }
        let error = failure.message().to_owned();
        let mut fields = Map::new();
        fields.insert("tool_name".into(), shown.clone().into());
        fields.insert("tool_input".into(), tool_input);
        fields.insert("tool_use_id".into(), exec.call_id().to_string().into());
        fields.insert("error".into(), error.into());
        fields.insert(
            "is_interrupt".into(),
            (failure.code() == ErrorCode::Cancelled).into(),
        );
        let answers = self
            .inner
            .fire(HookEvent::PostToolUseFailure, hooks, fields)
            .await;
        self.stop_if_asked(HookEvent::PostToolUseFailure, &answers);
        let mut post = PostAnswer::default();
        for answer in &answers {
            if let Some(reason) = &answer.blocking {
                post.context.push(format!(
                    "PostToolUseFailure hook feedback on the `{shown}` call {}: {reason}",
                    exec.call_id()
                ));
            }
            if let Some(context) = answer.specific("additionalContext").and_then(Value::as_str) {
                post.context.push(context.to_owned());
            }
        }
        post
    }
}
