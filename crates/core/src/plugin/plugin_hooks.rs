//! The hook points as a plugin sees them while it installs: every
//! registration goes straight into the plugin's footprint.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use super::{PluginError, Registration};
use crate::hook::{
    Disposables, Disposer, ListenerSpec, Next, Observer, ObserverListener, Order, OrderError,
    Scope, Waterfall, WaterfallListener,
};
use crate::hooks::{
    CodeDispatchEvent, CodeDispatchLogEntry, ExecuteOutput, ExecuteRequest, ExecutionRecord,
    PostDecision, PostExecuteInput, ToolHooks,
};
use crate::policy::{Guard, GuardVerdict, Guards, PreDecision};
use crate::tool::ToolExecution;

/// The host's tool hook points, as [`PluginContext::hooks`](super::PluginContext::hooks)
/// hands them to a plugin.
///
/// Same hook points as [`ToolHooks`], but every `tap`, `register` and guard
/// `add*` made through this view is put into the plugin's footprint at once
/// and returns a [`Registration`], not a [`Disposer`](crate::hook::Disposer):
/// the listener stays installed until the plugin is unloaded, whether the
/// handle is kept, bound to `_gate` or dropped.
///
/// ```
/// use tack_core::plugin::{Plugin, PluginContext, PluginError};
/// use tack_core::policy::PreDecision;
///
/// struct DenyAll;
/// impl Plugin for DenyAll {
///     fn name(&self) -> &str { "deny-all" }
///     fn install(&self, cx: &mut PluginContext<'_>) -> Result<(), PluginError> {
///         // No `cx.keep(..)` needed, and dropping the handle is harmless.
///         let _gate = cx.hooks().pre_execute().tap("deny-all", |_, _| async {
///             PreDecision::deny("nothing runs here")
///         });
///         Ok(())
///     }
/// }
/// ```
#[derive(Clone, Copy)]
pub struct PluginHooks<'a> {
    plugin: &'a str,
    hooks: &'a ToolHooks,
    footprint: &'a Disposables,
}

impl fmt::Debug for PluginHooks<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PluginHooks")
            .field("hooks", self.hooks)
            .finish_non_exhaustive()
    }
}

impl<'a> PluginHooks<'a> {
    pub(crate) fn new(plugin: &'a str, hooks: &'a ToolHooks, footprint: &'a Disposables) -> Self {
        Self {
            plugin,
            hooks,
            footprint,
        }
    }

    fn waterfall<In, Out>(&self, hook: &'a Waterfall<In, Out>) -> PluginWaterfall<'a, In, Out> {
        PluginWaterfall {
            plugin: self.plugin,
            hook,
            footprint: self.footprint,
        }
    }

    fn observer<T>(&self, hook: &'a Observer<T>) -> PluginObserver<'a, T> {
        PluginObserver {
            plugin: self.plugin,
            hook,
            footprint: self.footprint,
        }
    }

    /// `tools/pre-execute`.
    pub fn pre_execute(&self) -> PluginWaterfall<'a, Arc<ToolExecution>, PreDecision> {
        self.waterfall(self.hooks.pre_execute())
    }

    /// `tools/execute`.
    pub fn execute(&self) -> PluginWaterfall<'a, ExecuteRequest, ExecuteOutput> {
        self.waterfall(self.hooks.execute())
    }

    /// `tools/post-execute`.
    pub fn post_execute(&self) -> PluginWaterfall<'a, PostExecuteInput, PostDecision> {
        self.waterfall(self.hooks.post_execute())
    }

    /// `tools/result`.
    pub fn result(&self) -> PluginObserver<'a, ExecutionRecord> {
        self.observer(self.hooks.result())
    }

    /// `tools/code-dispatch-log`.
    pub fn code_dispatch_log(
        &self,
    ) -> PluginWaterfall<'a, CodeDispatchLogEntry, CodeDispatchLogEntry> {
        self.waterfall(self.hooks.code_dispatch_log())
    }

    /// `tools/code-dispatch`.
    pub fn code_dispatch(&self) -> PluginObserver<'a, CodeDispatchEvent> {
        self.observer(self.hooks.code_dispatch())
    }

    /// The guards.
    pub fn guards(&self) -> PluginGuards<'a> {
        PluginGuards {
            guards: self.hooks.guards(),
            footprint: self.footprint,
        }
    }

    /// The host's hook points themselves, for what is not a registration:
    /// cloning them into a tool that dispatches (code mode), reading
    /// listener names. A registration made through them returns a plain
    /// [`Disposer`](crate::hook::Disposer) that the plugin must hand to
    /// [`PluginContext::keep`](super::PluginContext::keep).
    pub fn tool_hooks(&self) -> &'a ToolHooks {
        self.hooks
    }
}

/// A waterfall hook point whose registrations go into a plugin's footprint.
/// See [`PluginHooks`].
pub struct PluginWaterfall<'a, In, Out> {
    plugin: &'a str,
    hook: &'a Waterfall<In, Out>,
    footprint: &'a Disposables,
}

impl<In, Out> fmt::Debug for PluginWaterfall<'_, In, Out> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("PluginWaterfall").field(self.hook).finish()
    }
}

impl<'a, In: Send + 'static, Out: Send + 'static> PluginWaterfall<'a, In, Out> {
    /// Registers a closure listener (see [`Waterfall::tap`]) for the plugin's lifetime.
    pub fn tap<F, Fut>(&self, spec: impl Into<ListenerSpec>, listener: F) -> Registration
    where
        F: Fn(In, Next<In, Out>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Out> + Send + 'static,
    {
        Registration::keep_in(self.footprint, self.hook.tap(spec, listener))
    }

    /// Registers a typed listener (see [`Waterfall::register`]) for the plugin's lifetime.
    pub fn register<L>(&self, spec: impl Into<ListenerSpec>, listener: L) -> Registration
    where
        L: WaterfallListener<In, Out>,
    {
        Registration::keep_in(self.footprint, self.hook.register(spec, listener))
    }

    /// Registers a closure listener placed by `order` (see
    /// [`Waterfall::tap_with`]) for the plugin's lifetime.
    ///
    /// # Errors
    ///
    /// [`PluginError::Order`] for a name not registered on the hook point or
    /// a conflict; `?` in `install` rolls the whole plugin back.
    pub fn tap_with<F, Fut>(
        &self,
        spec: impl Into<ListenerSpec>,
        order: Order,
        listener: F,
    ) -> Result<Registration, PluginError>
    where
        F: Fn(In, Next<In, Out>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Out> + Send + 'static,
    {
        keep_ordered(
            self.plugin,
            self.footprint,
            self.hook.tap_with(spec, order, listener),
        )
    }

    /// Registers a typed listener placed by `order` (see
    /// [`Waterfall::register_with`]) for the plugin's lifetime.
    ///
    /// # Errors
    ///
    /// As [`tap_with`](Self::tap_with).
    pub fn register_with<L>(
        &self,
        spec: impl Into<ListenerSpec>,
        order: Order,
        listener: L,
    ) -> Result<Registration, PluginError>
    where
        L: WaterfallListener<In, Out>,
    {
        keep_ordered(
            self.plugin,
            self.footprint,
            self.hook.register_with(spec, order, listener),
        )
    }

    /// The hook point itself (for its name, listener names, dispatch).
    pub fn hook(&self) -> &'a Waterfall<In, Out> {
        self.hook
    }
}

/// An observer hook point whose registrations go into a plugin's footprint.
/// See [`PluginHooks`].
pub struct PluginObserver<'a, T> {
    plugin: &'a str,
    hook: &'a Observer<T>,
    footprint: &'a Disposables,
}

impl<T> fmt::Debug for PluginObserver<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("PluginObserver").field(self.hook).finish()
    }
}

impl<'a, T: Send + Sync + 'static> PluginObserver<'a, T> {
    /// Registers a closure observer (see [`Observer::tap`]) for the plugin's lifetime.
    pub fn tap<F>(&self, spec: impl Into<ListenerSpec>, observer: F) -> Registration
    where
        F: Fn(&Arc<T>) + Send + Sync + 'static,
    {
        Registration::keep_in(self.footprint, self.hook.tap(spec, observer))
    }

    /// Registers a typed observer (see [`Observer::register`]) for the plugin's lifetime.
    pub fn register<L>(&self, spec: impl Into<ListenerSpec>, observer: L) -> Registration
    where
        L: ObserverListener<T>,
    {
        Registration::keep_in(self.footprint, self.hook.register(spec, observer))
    }

    /// Registers a closure observer placed by `order` (see
    /// [`Observer::tap_with`]) for the plugin's lifetime.
    ///
    /// # Errors
    ///
    /// [`PluginError::Order`] for a name not registered on the hook point or
    /// a conflict.
    pub fn tap_with<F>(
        &self,
        spec: impl Into<ListenerSpec>,
        order: Order,
        observer: F,
    ) -> Result<Registration, PluginError>
    where
        F: Fn(&Arc<T>) + Send + Sync + 'static,
    {
        keep_ordered(
            self.plugin,
            self.footprint,
            self.hook.tap_with(spec, order, observer),
        )
    }

    /// The hook point itself.
    pub fn hook(&self) -> &'a Observer<T> {
        self.hook
    }
}

/// The guard list, whose additions go into a plugin's footprint. See
/// [`PluginHooks`] and [`Guards`].
pub struct PluginGuards<'a> {
    guards: &'a Guards,
    footprint: &'a Disposables,
}

impl fmt::Debug for PluginGuards<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("PluginGuards").field(self.guards).finish()
    }
}

impl<'a> PluginGuards<'a> {
    /// Adds a typed guard (see [`Guards::add`]) for the plugin's lifetime.
    pub fn add<G: Guard>(&self, scope: Scope, name: impl Into<Arc<str>>, guard: G) -> Registration {
        Registration::keep_in(self.footprint, self.guards.add(scope, name, guard))
    }

    /// Adds an async closure guard (see [`Guards::add_async`]) for the plugin's lifetime.
    pub fn add_async<F, Fut>(
        &self,
        scope: Scope,
        name: impl Into<Arc<str>>,
        guard: F,
    ) -> Registration
    where
        F: Fn(Arc<ToolExecution>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = GuardVerdict> + Send + 'static,
    {
        Registration::keep_in(self.footprint, self.guards.add_async(scope, name, guard))
    }

    /// Adds a synchronous closure guard (see [`Guards::add_sync`]) for the plugin's lifetime.
    pub fn add_sync<F>(&self, scope: Scope, name: impl Into<Arc<str>>, guard: F) -> Registration
    where
        F: Fn(&ToolExecution) -> GuardVerdict + Send + Sync + 'static,
    {
        Registration::keep_in(self.footprint, self.guards.add_sync(scope, name, guard))
    }

    /// The guard list itself.
    pub fn guards(&self) -> &'a Guards {
        self.guards
    }
}

fn keep_ordered(
    plugin: &str,
    footprint: &Disposables,
    registered: Result<Disposer, OrderError>,
) -> Result<Registration, PluginError> {
    registered
        .map(|disposer| Registration::keep_in(footprint, disposer))
        .map_err(|error| PluginError::Order {
            plugin: plugin.to_owned(),
            error,
        })
}
