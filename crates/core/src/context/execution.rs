//! The frozen view of one execution that hooks and guards see.

use std::fmt;
use std::sync::{Arc, OnceLock};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::EffectsInner;
use crate::capability::Capabilities;
use crate::hook::{AgentId, Provenance};
use crate::model::{ArgumentRewrite, Arguments, CallId, ExecutionToken, Tier, ToolName};

/// One execution as hooks see it: a resolved tool, valid frozen arguments and
/// the execution's token. Immutable: a `tools/pre-execute` decision may
/// rewrite the arguments, and the pipeline then builds a new execution (same
/// call id and token) with the revalidated arguments, and records what the
/// model sent ([`original_arguments`](Self::original_arguments)) and who
/// rewrote it ([`rewritten_by`](Self::rewritten_by)).
///
/// The pipeline builds it (through
/// `tack_core::host::NewToolExecution`); hooks, guards and
/// tool bodies read it:
///
/// ```
/// use tack_core::tool::ToolExecution;
///
/// fn is_destructive(exec: &ToolExecution) -> bool {
///     exec.name() == "bash" && exec.arg_str("command").is_some_and(|c| c.contains("rm -rf"))
/// }
/// ```
#[derive(Clone, Debug)]
pub struct ToolExecution {
    pub(crate) call_id: CallId,
    pub(crate) tool: ToolName,
    pub(crate) arguments: Arguments,
    pub(crate) tier: Tier,
    pub(crate) token: ExecutionToken,
    pub(crate) agent: Option<AgentId>,
    pub(crate) parent: Option<ExecutionToken>,
    pub(crate) rewrite: Option<Arc<ArgumentRewrite>>,
    /// The run of the body, when the pipeline's context lives in this
    /// execution's allocation (the context needs none of its own).
    pub(crate) run: RunSlot,
}

/// What one run of an execution's body reads and writes, kept in the
/// execution's own allocation: the capabilities and the cancellation signal
/// it runs with (set once, when its context is made) and the effects it asks
/// for. A clone starts empty.
#[derive(Default)]
pub(crate) struct RunSlot {
    pub(crate) parts: OnceLock<RunParts>,
    pub(crate) effects: EffectsInner,
}

/// What a body's first context keeps in its execution's run slot: moved
/// there, so making the context copies neither (a cancellation token's
/// clone takes a lock).
pub(crate) struct RunParts {
    pub(crate) capabilities: Arc<Capabilities>,
    pub(crate) cancel: CancellationToken,
}

impl Clone for RunSlot {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl fmt::Debug for RunSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RunSlot")
    }
}

impl ToolExecution {
    /// This execution with other arguments: what a `tools/pre-execute`
    /// listener that rewrites the call hands on to the listeners after it, so
    /// they judge the call as it will run. Everything else (call id, token,
    /// agent, parent) is kept. It is not yet validated: the pipeline checks
    /// the final rewrite (from the decision's
    /// [`with_arguments`](crate::policy::PreDecision::with_arguments)) against
    /// the tool's schema before approval, guards or the body see it. The
    /// new [`arguments_text`](Self::arguments_text) is the value's compact
    /// JSON.
    pub fn with_rewritten_arguments(&self, arguments: impl Into<Arc<Value>>) -> Self {
        Self {
            call_id: self.call_id.clone(),
            tool: self.tool.clone(),
            arguments: Arguments::from(arguments.into()),
            tier: self.tier,
            token: self.token.clone(),
            agent: self.agent.clone(),
            parent: self.parent.clone(),
            rewrite: self.rewrite.clone(),
            run: RunSlot::default(),
        }
    }

    /// The run slot of the body (the pipeline's).
    /// The cancellation signal of the run the execution's slot holds.
    #[inline]
    pub(crate) fn run_cancel(&self) -> Option<&CancellationToken> {
        self.run.parts.get().map(|parts| &parts.cancel)
    }

    pub(crate) fn run(&self) -> &RunSlot {
        &self.run
    }

    /// The arguments the model sent, when a `tools/pre-execute` listener (or
    /// the approval) rewrote them: [`arguments`](Self::arguments) are then
    /// the rewrite. `None` when these are the model's own arguments.
    ///
    /// ```
    /// use tack_core::tool::ToolExecution;
    ///
    /// fn was_rewritten(exec: &ToolExecution) -> bool {
    ///     exec.original_arguments().is_some()
    /// }
    /// ```
    pub fn original_arguments(&self) -> Option<&Arc<Value>> {
        self.rewrite.as_ref().map(|r| &r.original)
    }

    /// The arguments a listener put in place of the model's; `None` without
    /// a rewrite. They are [`arguments`](Self::arguments), except in the
    /// execution a post-execute listener sees of a call the rewriting
    /// decision denied, or whose rewrite was invalid: that one kept the
    /// model's arguments, and the refused rewrite is only recorded.
    pub fn rewritten_arguments(&self) -> Option<&Arc<Value>> {
        self.rewrite.as_ref().map(|r| &r.rewritten)
    }

    /// Who rewrote the arguments (`tools/pre-execute › listener <name>`), when
    /// they were rewritten and the maker is known.
    pub fn rewritten_by(&self) -> Option<&Provenance> {
        self.rewrite.as_ref().and_then(|r| r.by.as_ref())
    }

    /// The call's id.
    pub fn call_id(&self) -> &CallId {
        &self.call_id
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        self.tool.as_str()
    }

    /// The tool's name, typed.
    pub fn tool(&self) -> &ToolName {
        &self.tool
    }

    /// The validated, frozen arguments (always a JSON object).
    ///
    /// Every number in it is exactly the number the model wrote (the parse
    /// stage refuses one an `i64`, `u64` or `f64` would round); key order is
    /// not promised: read [`arguments_text`](Self::arguments_text) for it.
    pub fn arguments(&self) -> &Arc<Value> {
        self.arguments.value()
    }

    /// The arguments exactly as the model sent them (what typed tools
    /// deserialize from, and what a log should keep).
    pub fn arguments_text(&self) -> &str {
        self.arguments.text()
    }

    /// The arguments, text and parsed value.
    pub(crate) fn parsed_arguments(&self) -> &Arguments {
        &self.arguments
    }

    /// One argument by key.
    pub fn arg(&self, key: &str) -> Option<&Value> {
        self.arguments.value().get(key)
    }

    /// One string argument by key (`None` if absent or not a string).
    pub fn arg_str(&self, key: &str) -> Option<&str> {
        self.arg(key).and_then(Value::as_str)
    }

    /// The tool's tier.
    pub fn tier(&self) -> Tier {
        self.tier
    }

    /// This execution's token.
    pub fn token(&self) -> &ExecutionToken {
        &self.token
    }

    /// The agent the call was made for.
    pub fn agent(&self) -> Option<&AgentId> {
        self.agent.as_ref()
    }

    /// The token of the execution that made this call, when it is nested.
    pub fn parent(&self) -> Option<&ExecutionToken> {
        self.parent.as_ref()
    }
}
