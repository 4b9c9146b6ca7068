//! The tool registry: a global layer, one layer per agent, masks and presentation.

mod export_cache;
mod presentation;
mod registered;
mod restrict;
mod thread_copies;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tack_core::hook::{AgentId, Disposer, Scope};
use tack_core::host::ToolSchema;
use tack_core::plugin::PluginError;
use tack_core::plugin::ToolRegistrar;
use tack_core::tool::ToolDefinition;

use export_cache::{ExportCache, Versioned};
pub use presentation::{Presentation, RUN_CODE, UnknownPresentation};
pub use registered::RegisteredTool;
pub use restrict::{RestrictError, Restriction};
use thread_copies::ThreadCopies;

/// A persistent map of tools by name: a copy is a pointer, a change O(log n).
type Tools = imbl::OrdMap<String, Arc<RegisteredTool>>;

#[derive(Clone, Default)]
struct AgentLayer {
    tools: Tools,
    masks: Vec<(u64, Arc<Restriction>)>,
    presentation: Option<Presentation>,
}

impl AgentLayer {
    fn is_empty(&self) -> bool {
        self.tools.is_empty() && self.masks.is_empty() && self.presentation.is_none()
    }

    fn permits(&self, name: &str) -> bool {
        self.masks.iter().all(|(_, m)| m.permits(name))
    }
}

/// The whole catalogue at one moment. Made of persistent maps, so publishing
/// a changed copy costs O(log n), not a copy of every tool.
#[derive(Clone, Default)]
struct Layers {
    global: Tools,
    /// Each agent's layer, shared between snapshots until changed.
    agents: imbl::HashMap<AgentId, Arc<AgentLayer>>,
    presentation: Presentation,
    /// The code-mode transport (`run_code`), shown under code or both.
    transport: Option<Arc<RegisteredTool>>,
}

impl Layers {
    /// `agent`'s layer for changing (made if missing).
    fn agent_mut(&mut self, agent: &AgentId) -> &mut AgentLayer {
        Arc::make_mut(self.agents.entry(agent.clone()).or_default())
    }

    /// Changes `agent`'s layer if it has one, and drops it once empty.
    fn change_agent(&mut self, agent: &AgentId, change: impl FnOnce(&mut AgentLayer)) {
        let Some(layer) = self.agents.get_mut(agent) else {
            return;
        };
        let layer = Arc::make_mut(layer);
        change(layer);
        if layer.is_empty() {
            self.agents.remove(agent);
        }
    }
}

struct Inner {
    /// The catalogue, and each thread's copy of it with the tools it
    /// resolved calls to.
    layers: Versioned<Layers, ThreadCopies>,
    exports: ExportCache,
    next_id: AtomicU64,
}

/// What a call's name resolved to, read in one look at the registry: the
/// registered tool (an immutable snapshot: the definition and its compiled
/// validators, kept alive by the call however the registry changes
/// meanwhile) and the presentation of the caller's agent.
pub(crate) struct Resolution {
    pub(crate) tool: Option<Arc<RegisteredTool>>,
    pub(crate) presentation: Presentation,
}

/// The tool catalogue: which tools exist, for whom, and how they are shown.
///
/// * **Layers**: a global layer plus one per agent. An agent's tool shadows a
///   global tool of the same name for that agent only. Duplicate names in one
///   layer are an error.
/// * **Masks**: [`restrict`](Self::restrict) hides global tools from one agent;
///   masks intersect; an agent's own tools are never masked.
/// * **Visibility**: a hidden tool is indistinguishable from a missing one.
/// * **Validators**: input and output schemas are compiled once, at
///   registration (`jsonschema`); a schema that does not compile is refused,
///   and so is one deeper than
///   [`ToolDefinition::MAX_SCHEMA_DEPTH`](tack_core::tool::ToolDefinition::MAX_SCHEMA_DEPTH) (checked without
///   recursion before compiling, which recurses).
///
/// The registry only knows tools; calls run through a
/// [`Pipeline`](crate::Pipeline) built over it
/// ([`Pipeline::new`](crate::Pipeline::new)), which resolves each call here
/// once, to an immutable snapshot of the registered tool: a tool unregistered
/// while a call of it runs still finishes that call, against the definition
/// and schemas it was resolved to.
///
/// Cheap to clone (clones share everything).
///
/// ```
/// use serde_json::json;
/// use tack_core::tool::{OutputSpec, ToolDefinition};
/// use tack_pipeline::ToolRegistry;
///
/// let registry = ToolRegistry::new();
/// let echo = ToolDefinition::builder("echo")
///     .description("Repeat the text.")
///     .input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}}))
///     .output(OutputSpec::new(json!({"type": "string"})))
///     .handler(|args, _cx| async move { Ok(args["text"].clone()) })
///     .build()
///     .unwrap();
/// let _kept = registry.register(echo).unwrap();
/// assert_eq!(registry.schemas(None)[0].name, "echo");
/// assert!(registry.get("echo", None).is_some());
/// ```
#[derive(Clone)]
pub struct ToolRegistry {
    inner: Arc<Inner>,
}

impl fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let layers = self.inner.layers.read();
        f.debug_struct("ToolRegistry")
            .field("global", &layers.global.keys().collect::<Vec<_>>())
            .field("agents", &layers.agents.len())
            .finish_non_exhaustive()
    }
}

impl Default for ToolRegistry {
    fn default() -> Self {
        Self::new()
    }
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self {
            inner: Arc::new(Inner {
                layers: Versioned::new(Layers::default()),
                exports: ExportCache::default(),
                next_id: AtomicU64::new(1),
            }),
        }
    }

    /// Registers a global tool.
    ///
    /// # Errors
    ///
    /// [`PluginError::DuplicateTool`] when the global layer has the name,
    /// [`PluginError::ReservedTool`] for `run_code`,
    /// [`PluginError::InvalidSchema`] when a schema does not compile.
    pub fn register(&self, definition: ToolDefinition) -> Result<Disposer, PluginError> {
        self.register_in(Scope::Global, definition)
    }

    /// Registers a tool in `scope` (an agent's tool shadows a global one of the
    /// same name for that agent).
    ///
    /// # Errors
    ///
    /// As [`register`](Self::register), for the scope's layer.
    pub fn register_in(
        &self,
        scope: Scope,
        definition: ToolDefinition,
    ) -> Result<Disposer, PluginError> {
        let name = definition.name().to_string();
        if name == RUN_CODE {
            return Err(PluginError::ReservedTool {
                plugin: None,
                name,
                reason: "it is the code-mode transport and cannot be registered or shadowed"
                    .to_owned(),
            });
        }
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let tool = Arc::new(RegisteredTool::compile(id, scope.clone(), definition)?);
        {
            let mut layers = self.inner.layers.write();
            let taken = match &scope {
                Scope::Agent(agent) => layers
                    .agents
                    .get(agent)
                    .is_some_and(|l| l.tools.contains_key(&name)),
                Scope::Global => layers.global.contains_key(&name),
            };
            if taken {
                return Err(PluginError::DuplicateTool {
                    plugin: None,
                    name,
                    scope: scope.to_string(),
                });
            }
            match &scope {
                Scope::Agent(agent) => layers.agent_mut(agent).tools.insert(name.clone(), tool),
                Scope::Global => layers.global.insert(name.clone(), tool),
            };
        }
        tracing::debug!(tool = %name, %scope, "tool registered");
        Ok(self.disposer(scope, name, id))
    }

    /// The disposer of the registration `id` of `name` in `scope`: it removes
    /// that registration only (a no-op once another took the name).
    fn disposer(&self, scope: Scope, name: String, id: u64) -> Disposer {
        let weak = Arc::downgrade(&self.inner);
        Disposer::new(move || {
            if let Some(inner) = weak.upgrade() {
                let mut layers = inner.layers.write();
                match &scope {
                    Scope::Agent(agent) => {
                        let ours = layers
                            .agents
                            .get(agent)
                            .and_then(|l| l.tools.get(&name))
                            .is_some_and(|t| t.id == id);
                        if ours {
                            layers.change_agent(agent, |layer| {
                                layer.tools.remove(&name);
                            });
                        }
                    }
                    Scope::Global => {
                        if layers.global.get(&name).is_some_and(|t| t.id == id) {
                            layers.global.remove(&name);
                        }
                    }
                }
            }
        })
    }

    /// Replaces tools of `scope` under one write of the registry: removes the
    /// tools named in `remove` and registers `add`. A call resolving a name
    /// that is removed and added (a changed tool) finds the old definition
    /// or the new one, never neither. All or nothing: every definition is
    /// compiled and checked before anything changes. A name in `remove` that
    /// is not registered is ignored. Returns the disposers of the added tools,
    /// in the order of `add`; the removed tools' old disposers become no-ops.
    ///
    /// ```
    /// use serde_json::json;
    /// use tack_core::hook::Scope;
    /// use tack_core::tool::{OutputSpec, ToolDefinition};
    /// use tack_pipeline::ToolRegistry;
    ///
    /// let tool = |description: &str| {
    ///     ToolDefinition::builder("echo")
    ///         .description(description)
    ///         .input_schema(json!({"type": "object"}))
    ///         .output(OutputSpec::new(json!({})))
    ///         .handler(|args, _cx| async move { Ok((*args).clone()) })
    ///         .build()
    ///         .unwrap()
    /// };
    /// let registry = ToolRegistry::new();
    /// let old = registry.register(tool("Old.")).unwrap();
    /// let new = registry
    ///     .replace(Scope::Global, &["echo".to_owned()], vec![tool("New.")])
    ///     .unwrap();
    /// assert_eq!(registry.get("echo", None).unwrap().definition().description(), "New.");
    /// old.dispose(); // a no-op now
    /// assert!(registry.get("echo", None).is_some());
    /// new[0].dispose();
    /// assert!(registry.get("echo", None).is_none());
    /// ```
    ///
    /// # Errors
    ///
    /// As [`register_in`](Self::register_in), for the first definition of
    /// `add` that is refused (a name twice in `add` is a duplicate); nothing
    /// changed then.
    pub fn replace(
        &self,
        scope: Scope,
        remove: &[String],
        add: Vec<ToolDefinition>,
    ) -> Result<Vec<Disposer>, PluginError> {
        let mut compiled = Vec::with_capacity(add.len());
        for definition in add {
            let name = definition.name().to_string();
            if name == RUN_CODE {
                return Err(PluginError::ReservedTool {
                    plugin: None,
                    name,
                    reason: "it is the code-mode transport and cannot be registered or shadowed"
                        .to_owned(),
                });
            }
            if compiled.iter().any(|(n, _)| *n == name) {
                return Err(PluginError::DuplicateTool {
                    plugin: None,
                    name,
                    scope: scope.to_string(),
                });
            }
            let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
            let tool = Arc::new(RegisteredTool::compile(id, scope.clone(), definition)?);
            compiled.push((name, tool));
        }
        {
            let mut layers = self.inner.layers.write();
            let empty = Tools::new();
            let current = match &scope {
                Scope::Agent(agent) => layers.agents.get(agent).map_or(&empty, |l| &l.tools),
                Scope::Global => &layers.global,
            };
            if let Some((name, _)) = compiled
                .iter()
                .find(|(name, _)| current.contains_key(name) && !remove.contains(name))
            {
                return Err(PluginError::DuplicateTool {
                    plugin: None,
                    name: name.clone(),
                    scope: scope.to_string(),
                });
            }
            let change = |layer: &mut Tools| {
                for name in remove {
                    layer.remove(name);
                }
                for (name, tool) in &compiled {
                    layer.insert(name.clone(), Arc::clone(tool));
                }
            };
            match &scope {
                Scope::Agent(agent) => {
                    layers.agent_mut(agent);
                    layers.change_agent(agent, |layer| change(&mut layer.tools));
                }
                Scope::Global => change(&mut layers.global),
            }
        }
        tracing::debug!(%scope, removed = remove.len(), added = compiled.len(), "tools replaced");
        Ok(compiled
            .into_iter()
            .map(|(name, tool)| self.disposer(scope.clone(), name, tool.id))
            .collect())
    }

    /// A change signal: the receiver is marked changed after every change to
    /// the registry (a tool registered, replaced or disposed, a mask, a
    /// presentation); what it then reads is the changed registry. Signals
    /// may come in bursts and for changes an agent does not see: compare
    /// what you derive (e.g. [`visible`](Self::visible)) before acting on it.
    /// An MCP server uses it to send `notifications/tools/list_changed`.
    ///
    /// ```
    /// use tack_pipeline::ToolRegistry;
    ///
    /// let registry = ToolRegistry::new();
    /// let mut changes = registry.changes();
    /// assert!(!changes.has_changed().unwrap());
    /// registry.set_presentation(None, Default::default());
    /// assert!(changes.has_changed().unwrap());
    /// changes.mark_unchanged();
    /// ```
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.layers.subscribe()
    }

    /// Hides global tools from `agent` with a mask. Masks on one agent
    /// intersect; disposing one lifts only it.
    ///
    /// # Errors
    ///
    /// [`RestrictError`] when the restriction is empty, names `run_code`, or
    /// names tools the agent does not inherit (the message lists them and the
    /// global tools).
    pub fn restrict(
        &self,
        agent: impl Into<AgentId>,
        restriction: Restriction,
    ) -> Result<Disposer, RestrictError> {
        let agent = &agent.into();
        if restriction.is_empty() {
            return Err(RestrictError::Empty);
        }
        if restriction.names().any(|n| n == RUN_CODE) {
            return Err(RestrictError::Reserved);
        }
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        {
            let mut layers = self.inner.layers.write();
            let unknown: Vec<String> = restriction
                .names()
                .filter(|n| !layers.global.contains_key(*n))
                .cloned()
                .collect();
            if !unknown.is_empty() {
                return Err(RestrictError::UnknownTools {
                    agent: agent.to_string(),
                    unknown,
                    inheritable: layers.global.keys().cloned().collect(),
                });
            }
            layers
                .agent_mut(agent)
                .masks
                .push((id, Arc::new(restriction)));
        }
        let weak = Arc::downgrade(&self.inner);
        let agent = agent.clone();
        Ok(Disposer::new(move || {
            if let Some(inner) = weak.upgrade() {
                inner.layers.write().change_agent(&agent, |layer| {
                    layer.masks.retain(|(mask, _)| *mask != id);
                });
            }
        }))
    }

    /// Sets how tools are presented, for one agent or (with `None`) as the
    /// registry's default.
    pub fn set_presentation(&self, agent: Option<&AgentId>, presentation: Presentation) {
        let mut layers = self.inner.layers.write();
        match agent {
            None => layers.presentation = presentation,
            Some(agent) => layers.agent_mut(agent).presentation = Some(presentation),
        }
    }

    /// How tools are presented to `agent`.
    pub fn presentation(&self, agent: Option<&AgentId>) -> Presentation {
        let layers = self.inner.layers.read();
        Self::presentation_in(&layers, agent)
    }

    fn presentation_in(layers: &Layers, agent: Option<&AgentId>) -> Presentation {
        agent
            .and_then(|a| layers.agents.get(a))
            .and_then(|l| l.presentation)
            .unwrap_or(layers.presentation)
    }

    /// The tool named `name` as `agent` sees it: its own, else a global one
    /// that no mask hides. `None` for a missing or hidden tool alike.
    pub fn get(&self, name: &str, agent: Option<&AgentId>) -> Option<Arc<RegisteredTool>> {
        let layers = self.inner.layers.read();
        Self::visible_in(&layers, name, agent)
    }

    fn visible_in(
        layers: &Layers,
        name: &str,
        agent: Option<&AgentId>,
    ) -> Option<Arc<RegisteredTool>> {
        Self::visible_ref(layers, name, agent).cloned()
    }

    fn visible_ref<'a>(
        layers: &'a Layers,
        name: &str,
        agent: Option<&AgentId>,
    ) -> Option<&'a Arc<RegisteredTool>> {
        if name == RUN_CODE {
            let presented = Self::presentation_in(layers, agent) != Presentation::Native;
            return layers.transport.as_ref().filter(|_| presented);
        }
        let layer = agent.and_then(|a| layers.agents.get(a));
        if let Some(own) = layer.and_then(|l| l.tools.get(name)) {
            return Some(own);
        }
        let global = layers.global.get(name)?;
        layer.is_none_or(|l| l.permits(name)).then_some(global)
    }

    /// Looks up `name` for `agent` together with the agent's presentation, in
    /// one read of the registry: the snapshot a call runs against.
    ///
    /// The tool is this thread's copy of the registered one (see
    /// [`RegisteredTool::thread_copy`]).
    pub(crate) fn resolve(&self, name: &str, agent: Option<&AgentId>) -> Resolution {
        let (tool, presentation) = self.inner.layers.with_copy(ThreadCopies::of, |mine| {
            mine.resolve(|layers| {
                (
                    Self::visible_ref(layers, name, agent),
                    Self::presentation_in(layers, agent),
                )
            })
        });
        Resolution { tool, presentation }
    }

    /// The model-visible schemas of the tools `agent` sees, sorted by name
    /// (stable across calls, so prompts stay prefix-cache friendly). Each is a
    /// copy: changing it changes nothing in the registry.
    pub fn schemas(&self, agent: Option<&AgentId>) -> Vec<ToolSchema> {
        self.visible(agent)
            .iter()
            .map(|t| t.definition.schema())
            .collect()
    }

    /// The tools `agent`'s model is shown, sorted by name: the native tools
    /// (presentation native), only the `run_code` transport (code), or both.
    pub fn visible(&self, agent: Option<&AgentId>) -> Vec<Arc<RegisteredTool>> {
        let layers = self.inner.layers.read();
        Self::visible_all_in(&layers, agent)
            .into_iter()
            .cloned()
            .collect()
    }

    /// What [`visible`](Self::visible) lists, borrowed from `layers`.
    fn visible_all_in<'a>(
        layers: &'a Layers,
        agent: Option<&AgentId>,
    ) -> Vec<&'a Arc<RegisteredTool>> {
        let presentation = Self::presentation_in(layers, agent);
        let transport = layers
            .transport
            .as_ref()
            .filter(|_| presentation != Presentation::Native);
        if presentation == Presentation::Code {
            return transport.into_iter().collect();
        }
        let mut merged = Self::natives_in(layers, agent);
        if let Some(transport) = transport {
            let at = merged.partition_point(|t| t.definition.name().as_str() < RUN_CODE);
            merged.insert(at, transport);
        }
        merged
    }

    /// `agent`'s own tools over the global ones its masks permit, by name.
    fn natives_in<'a>(layers: &'a Layers, agent: Option<&AgentId>) -> Vec<&'a Arc<RegisteredTool>> {
        let Some(layer) = agent.and_then(|a| layers.agents.get(a)) else {
            // The shared case: the global layer, already in name order.
            return layers.global.values().collect();
        };
        let mut merged: BTreeMap<&str, &Arc<RegisteredTool>> = layers
            .global
            .iter()
            .filter(|(name, _)| layer.permits(name))
            .map(|(name, tool)| (name.as_str(), tool))
            .collect();
        merged.extend(layer.tools.iter().map(|(name, tool)| (name.as_str(), tool)));
        merged.into_values().collect()
    }

    /// The native tools `agent` can call from inside a `run_code` program
    /// (whatever its presentation), sorted by name: what a code-mode SDK
    /// describes.
    pub fn native_tools(&self, agent: Option<&AgentId>) -> Vec<Arc<RegisteredTool>> {
        let layers = self.inner.layers.read();
        Self::natives_in(&layers, agent)
            .into_iter()
            .cloned()
            .collect()
    }

    /// Registers the code-mode transport: the one tool allowed the reserved
    /// name `run_code`, shown to agents whose presentation is code or both.
    ///
    /// # Errors
    ///
    /// [`PluginError::ReservedTool`] for another name,
    /// [`PluginError::DuplicateTool`] when a transport exists,
    /// [`PluginError::InvalidSchema`] when a schema does not compile.
    pub fn register_code_transport(
        &self,
        definition: ToolDefinition,
    ) -> Result<Disposer, PluginError> {
        let name = definition.name().to_string();
        if name != RUN_CODE {
            return Err(PluginError::ReservedTool {
                plugin: None,
                name,
                reason: format!("the code-mode transport must be named `{RUN_CODE}`"),
            });
        }
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let tool = Arc::new(RegisteredTool::compile(id, Scope::Global, definition)?);
        {
            let mut layers = self.inner.layers.write();
            if layers.transport.is_some() {
                return Err(PluginError::DuplicateTool {
                    plugin: None,
                    name,
                    scope: "code-mode transport".to_owned(),
                });
            }
            layers.transport = Some(tool);
        }
        let weak = Arc::downgrade(&self.inner);
        Ok(Disposer::new(move || {
            if let Some(inner) = weak.upgrade() {
                let mut layers = inner.layers.write();
                if layers.transport.as_ref().is_some_and(|t| t.id == id) {
                    layers.transport = None;
                }
            }
        }))
    }
}

impl ToolRegistrar for ToolRegistry {
    fn register_tool(
        &self,
        scope: Scope,
        definition: ToolDefinition,
    ) -> Result<Disposer, PluginError> {
        self.register_in(scope, definition)
    }

    fn register_code_transport(&self, definition: ToolDefinition) -> Result<Disposer, PluginError> {
        ToolRegistry::register_code_transport(self, definition)
    }

    fn replace_tools(
        &self,
        scope: Scope,
        remove: &[String],
        add: Vec<ToolDefinition>,
    ) -> Result<Vec<Disposer>, PluginError> {
        self.replace(scope, remove, add)
    }
}
