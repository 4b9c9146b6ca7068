//! The plugin: configuration, installation, the inventory factory.

use std::path::PathBuf;
use std::sync::Arc;

use tack_core::hook::{AgentId, Disposer, ListenerSpec, Priority, Scope};
use tack_core::hooks::ToolHooks;
use tack_core::plugin::{Plugin, PluginContext, PluginError, PluginFactory};
use tack_core::policy::ApprovalService;
use tack_core::tool::ToolExecution;

use crate::gate::{GateListener, GateState};
use crate::{Evaluation, Mode, Modes, PermissionFile, Rule, RuleSet, SessionRules};

/// The plugin's name, also the name of its `tools/pre-execute` listener (the
/// provenance of its denials).
pub const PLUGIN_NAME: &str = "permission";

/// The permission gate: a [`Plugin`] that installs a `tools/pre-execute`
/// listener named `permission` and, if configured, an approver.
///
/// ```
/// use tack_core::hooks::ToolHooks;
/// use tack_permission::{Mode, Permission, Rule};
///
/// let gate = Permission::builder()
///     .mode(Mode::AcceptEdits)
///     .rule(Rule::deny("bash").command("command", "rm *").build().unwrap())
///     .build();
/// let hooks = ToolHooks::new();
/// let disposer = gate.attach(&hooks);
/// assert_eq!(hooks.pre_execute().listener_names(None)[0].as_ref(), "permission");
/// disposer.dispose();
/// ```
#[derive(Clone)]
pub struct Permission {
    state: Arc<GateState>,
    approver: Option<Arc<dyn ApprovalService>>,
    priority: Priority,
    scope: Scope,
}

impl std::fmt::Debug for Permission {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Permission")
            .field("rules", &self.state.rules.len())
            .field("mode", &self.state.modes.default_mode())
            .field("root", &self.state.root)
            .field("approver", &self.approver.is_some())
            .field("priority", &self.priority)
            .finish_non_exhaustive()
    }
}

impl Default for Permission {
    fn default() -> Self {
        Self::builder().build()
    }
}

impl Permission {
    /// A builder: mode `ask`, no rules, no workspace root, no approver.
    pub fn builder() -> PermissionBuilder {
        PermissionBuilder {
            mode: Mode::default(),
            agent_modes: Vec::new(),
            rules: RuleSet::new(),
            root: None,
            approver: None,
            session: SessionRules::new(),
            priority: Priority::NORMAL,
            scope: Scope::Global,
        }
    }

    /// What the gate decides for `exec` now (a dry run of the listener).
    pub fn evaluate(&self, exec: &ToolExecution) -> Evaluation {
        self.state.evaluate(exec)
    }

    /// The session rules ("always for this session"), to hand to an approver.
    pub fn session_rules(&self) -> SessionRules {
        self.state.session.clone()
    }

    /// The modes, to switch the default or an agent's mode at run time.
    pub fn modes(&self) -> &Modes {
        &self.state.modes
    }

    /// The configured rules.
    pub fn rules(&self) -> &RuleSet {
        &self.state.rules
    }

    /// Sets the approver installed with the gate (replacing any).
    pub fn with_approver(mut self, approver: Arc<dyn ApprovalService>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// Registers the listener on `hooks` directly, without the approver
    /// (what `install` does for the listener); returns its disposer.
    pub fn attach(&self, hooks: &ToolHooks) -> Disposer {
        let spec = ListenerSpec::new(PLUGIN_NAME)
            .with_scope(self.scope.clone())
            .with_priority(self.priority);
        hooks
            .pre_execute()
            .register(spec, GateListener(self.state.clone()))
    }
}

impl Plugin for Permission {
    fn name(&self) -> &str {
        PLUGIN_NAME
    }

    fn install(&self, cx: &mut PluginContext<'_>) -> Result<(), PluginError> {
        let disposer = self.attach(cx.hooks().tool_hooks());
        cx.keep(disposer);
        if let Some(approver) = &self.approver {
            cx.provide_approval(approver.clone());
        }
        Ok(())
    }
}

inventory::submit! {
    PluginFactory::new(
        PLUGIN_NAME,
        "Permission gate in `ask` mode: read-only tools run, others need approval.",
        || Box::new(Permission::default()),
    )
}

/// Builds a [`Permission`].
#[derive(Debug)]
pub struct PermissionBuilder {
    mode: Mode,
    agent_modes: Vec<(AgentId, Mode)>,
    rules: RuleSet,
    root: Option<PathBuf>,
    approver: Option<Arc<dyn ApprovalService>>,
    session: SessionRules,
    priority: Priority,
    scope: Scope,
}

impl PermissionBuilder {
    /// The default mode (default `ask`).
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// One agent's mode.
    pub fn agent_mode(mut self, agent: AgentId, mode: Mode) -> Self {
        self.agent_modes.push((agent, mode));
        self
    }

    /// Appends a rule.
    pub fn rule(mut self, rule: Rule) -> Self {
        self.rules.push(rule);
        self
    }

    /// Appends rules.
    pub fn rules(mut self, rules: RuleSet) -> Self {
        self.rules.extend(rules);
        self
    }

    /// Applies a permission file: its mode (if it sets one) and its rules.
    pub fn file(mut self, file: PermissionFile) -> Self {
        if let Some(mode) = file.mode {
            self.mode = mode;
        }
        self.rules.extend(file.rules);
        self
    }

    /// The workspace root: absolute path arguments inside it are matched
    /// relative to it; `..` above it never matches an allow rule.
    pub fn workspace_root(mut self, root: impl Into<PathBuf>) -> Self {
        self.root = Some(root.into());
        self
    }

    /// The approver installed with the gate (default: none, so every `ask`
    /// is denied as "no approver is available").
    pub fn approver(mut self, approver: Arc<dyn ApprovalService>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// Shares an existing set of session rules (e.g. one an approver records into).
    pub fn session_rules(mut self, session: SessionRules) -> Self {
        self.session = session;
        self
    }

    /// The listener's priority (default `NORMAL`).
    pub fn priority(mut self, priority: Priority) -> Self {
        self.priority = priority;
        self
    }

    /// Gate one agent only (default: global).
    pub fn scope(mut self, scope: impl Into<Scope>) -> Self {
        self.scope = scope.into();
        self
    }

    /// The gate.
    pub fn build(self) -> Permission {
        let modes = Modes::new(self.mode);
        for (agent, mode) in self.agent_modes {
            modes.set_agent(agent, mode);
        }
        Permission {
            state: Arc::new(GateState {
                rules: self.rules,
                session: self.session,
                modes,
                root: self.root,
            }),
            approver: self.approver,
            priority: self.priority,
            scope: self.scope,
        }
    }
}
