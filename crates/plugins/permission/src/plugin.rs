//! The plugin: configuration, installation, the inventory factory.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use tack_core::hook::{AgentId, Order, Scope};
use tack_core::plugin::{Plugin, PluginContext, PluginError, PluginFactory};
use tack_core::policy::ApprovalService;
use tack_core::tool::ToolExecution;

use crate::gate::{GateListener, GateState};
use serde::Deserialize;

use crate::{
    Action, Evaluation, Mode, Modes, PermissionFile, Rule, RuleError, RuleSet, SessionRules,
};

/// The plugin's name, also the name of its `tools/pre-execute` listener (the
/// provenance of its denials).
pub const PLUGIN_NAME: &str = "permission";

/// The permission gate: a [`Plugin`] that installs a `tools/pre-execute`
/// listener named `permission` and, if configured, an approver.
///
/// ```
/// use tack_permission::{Mode, Permission, PermissionConfig, Rule};
/// use tack_pipeline::PluginSet;
///
/// let gate = Permission::new(PermissionConfig::default()
///     .mode(Mode::AcceptEdits)
///     .rule(Rule::deny("bash").command("command", "rm *").build().unwrap())
///);
/// let plugins = PluginSet::new().with(gate).build().unwrap();
/// let hooks = plugins.pipeline.hooks();
/// assert_eq!(hooks.pre_execute().listener_names(None)[0].as_ref(), "permission");
/// plugins.disposables.dispose(); // unload
/// assert_eq!(hooks.pre_execute().listener_count(), 0);
/// ```
#[derive(Clone)]
pub struct Permission {
    state: Arc<GateState>,
    approver: Option<Arc<dyn ApprovalService>>,
    order: Order,
    scope: Scope,
}

impl std::fmt::Debug for Permission {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Permission")
            .field("rules", &self.state.rules.len())
            .field("mode", &self.state.modes.default_mode())
            .field("root", &self.state.root)
            .field("approver", &self.approver.is_some())
            .field("order", &self.order)
            .finish_non_exhaustive()
    }
}

impl Default for Permission {
    fn default() -> Self {
        Self::new(PermissionConfig::default())
    }
}

impl Permission {
    /// The gate `config` describes.
    pub fn new(config: PermissionConfig) -> Permission {
        let modes = Modes::new(config.mode);
        for (agent, mode) in config.agent_modes {
            modes.set_agent(agent, mode);
        }
        Permission {
            state: Arc::new(GateState {
                rules: config.rules,
                session: config.session,
                modes,
                root: config.root,
            }),
            approver: config.approver,
            order: config.order,
            scope: config.scope,
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
}

impl Plugin for Permission {
    fn name(&self) -> &str {
        PLUGIN_NAME
    }

    fn install(&self, cx: &mut PluginContext<'_>) -> Result<(), PluginError> {
        let pre_execute = cx.hooks().pre_execute();
        let gate = match &self.scope {
            Scope::Global => pre_execute.clone(),
            Scope::Agent(agent) => pre_execute.for_agent(agent),
        };
        gate.register_with(
            PLUGIN_NAME,
            self.order.clone(),
            GateListener(self.state.clone()),
        )?;
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

/// What [`Permission::new`] builds the gate from: mode `ask`, no rules, no
/// workspace root and no approver by default. Build it with its methods, or
/// deserialize its data from settings (`mode`, `agent_modes`, `allow` /
/// `ask` / `deny` rule lists, `workspace_root`); the approver, the shared
/// session rules, the order and the scope are set in code.
///
/// ```
/// use tack_permission::{Mode, Permission, PermissionConfig, Rule};
///
/// let config: PermissionConfig = tack_core::serde_json::from_str(r#"{
///     "mode": "accept-edits",
///     "agent_modes": {"reviewer": "read-only"},
///     "deny": ["bash(command: \"rm *\")"]
/// }"#).unwrap();
/// let gate = Permission::new(config);
/// assert_eq!(gate.modes().default_mode(), Mode::AcceptEdits);
/// assert_eq!(gate.rules().len(), 1);
///
/// let same = Permission::new(
///     PermissionConfig::default()
///         .mode(Mode::AcceptEdits)
///         .agent_mode("reviewer", Mode::ReadOnly)
///         .rule(Rule::deny("bash").command("command", "rm *").build().unwrap()),
/// );
/// assert_eq!(same.rules().len(), 1);
///
/// // A rule that does not parse is refused with the parser's reason.
/// let bad = tack_core::serde_json::from_str::<PermissionConfig>(r#"{"deny": ["bash("]}"#);
/// assert!(bad.is_err());
/// ```
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(try_from = "RawConfig")]
pub struct PermissionConfig {
    mode: Mode,
    agent_modes: Vec<(AgentId, Mode)>,
    rules: RuleSet,
    root: Option<PathBuf>,
    approver: Option<Arc<dyn ApprovalService>>,
    session: SessionRules,
    order: Order,
    scope: Scope,
}

/// The settings form of [`PermissionConfig`].
#[derive(Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct RawConfig {
    mode: Mode,
    agent_modes: BTreeMap<String, Mode>,
    allow: Vec<String>,
    ask: Vec<String>,
    deny: Vec<String>,
    workspace_root: Option<PathBuf>,
}

impl TryFrom<RawConfig> for PermissionConfig {
    type Error = RuleError;

    fn try_from(raw: RawConfig) -> Result<Self, RuleError> {
        let mut config = PermissionConfig::default().mode(raw.mode);
        for (agent, mode) in raw.agent_modes {
            config = config.agent_mode(AgentId::new(agent), mode);
        }
        for (action, texts) in [
            (Action::Deny, raw.deny),
            (Action::Ask, raw.ask),
            (Action::Allow, raw.allow),
        ] {
            for text in texts {
                config = config.rule(Rule::parse(action, &text)?);
            }
        }
        if let Some(root) = raw.workspace_root {
            config = config.workspace_root(root);
        }
        Ok(config)
    }
}

impl PermissionConfig {
    /// The default mode (default `ask`).
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// One agent's mode.
    pub fn agent_mode(mut self, agent: impl Into<AgentId>, mode: Mode) -> Self {
        self.agent_modes.push((agent.into(), mode));
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

    /// Where the gate goes among the `tools/pre-execute` listeners (default
    /// [`Order::NORMAL`]): a rank, and before or after listeners by name.
    pub fn order(mut self, order: Order) -> Self {
        self.order = order;
        self
    }

    /// Gate one agent only (default: global).
    pub fn scope(mut self, scope: impl Into<Scope>) -> Self {
        self.scope = scope.into();
        self
    }
}
