//! The timeout policy: budgets, ceiling, grace period, placement.

use std::time::Duration;

use tack_core::hook::{Disposer, ListenerSpec, Priority, Scope};
use tack_core::hooks::ToolHooks;

use crate::TimeoutConfigError;
use crate::plugin::LISTENER_NAME;

/// How long a body that was told to stop may take before it is abandoned.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(2);

/// Configuration of the timeout wrapper (also the [`Plugin`](tack_core::plugin::Plugin)).
///
/// The default: declared budgets only (no default budget, no ceiling), a
/// 2 s grace period, global scope, [`Priority::EARLY`].
///
/// ```
/// use std::time::Duration;
/// use tack_timeout::TimeoutPolicy;
///
/// let policy = TimeoutPolicy::default();
/// assert_eq!(policy.budget_for(None), None); // undeclared: untouched
/// assert_eq!(policy.budget_for(Some(Duration::from_secs(5))), Some(Duration::from_secs(5)));
/// assert_eq!(policy.grace(), Duration::from_secs(2));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimeoutPolicy {
    pub(crate) default_budget: Option<Duration>,
    pub(crate) ceiling: Option<Duration>,
    pub(crate) grace: Duration,
    pub(crate) priority: Priority,
    pub(crate) scope: Scope,
}

impl Default for TimeoutPolicy {
    fn default() -> Self {
        Self {
            default_budget: None,
            ceiling: None,
            grace: DEFAULT_GRACE,
            priority: Priority::EARLY,
            scope: Scope::Global,
        }
    }
}

impl TimeoutPolicy {
    /// A builder starting from the defaults.
    pub fn builder() -> TimeoutPolicyBuilder {
        TimeoutPolicyBuilder {
            policy: Self::default(),
        }
    }

    /// The budget of a tool that declared `declared`: the declared budget, or
    /// the policy default when it declared none, clamped by the ceiling.
    /// `None`: no deadline (the call is passed through untouched).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tack_timeout::TimeoutPolicy;
    /// let ms = Duration::from_millis;
    /// let p = TimeoutPolicy::builder().ceiling(ms(1000)).build().unwrap();
    /// assert_eq!(p.budget_for(Some(ms(5000))), Some(ms(1000)));
    /// assert_eq!(p.budget_for(Some(ms(10))), Some(ms(10)));
    /// assert_eq!(p.budget_for(None), None); // a ceiling is not a default
    /// ```
    pub fn budget_for(&self, declared: Option<Duration>) -> Option<Duration> {
        let budget = declared.or(self.default_budget)?;
        Some(self.ceiling.map_or(budget, |ceiling| budget.min(ceiling)))
    }

    /// The default budget for tools that declare none.
    pub fn default_budget(&self) -> Option<Duration> {
        self.default_budget
    }

    /// The ceiling every budget is clamped to.
    pub fn ceiling(&self) -> Option<Duration> {
        self.ceiling
    }

    /// The grace period after the deadline.
    pub fn grace(&self) -> Duration {
        self.grace
    }

    /// The wrapper's priority on `tools/execute`.
    pub fn priority(&self) -> Priority {
        self.priority
    }

    /// The scope the wrapper is registered in.
    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    /// Registers the wrapper on `hooks` directly (what the plugin's `install`
    /// does), returning its disposer.
    pub fn attach(&self, hooks: &ToolHooks) -> Disposer {
        let spec = ListenerSpec::new(LISTENER_NAME)
            .with_scope(self.scope.clone())
            .with_priority(self.priority);
        hooks
            .execute()
            .register(spec, crate::wrapper::TimeoutWrapper::new(self.clone()))
    }
}

/// Builds a [`TimeoutPolicy`]; [`build`](Self::build) checks it.
#[derive(Clone, Debug)]
pub struct TimeoutPolicyBuilder {
    policy: TimeoutPolicy,
}

impl TimeoutPolicyBuilder {
    /// A budget for tools that declare no timeout (default: none, such tools
    /// run without a deadline).
    pub fn default_budget(mut self, budget: Duration) -> Self {
        self.policy.default_budget = Some(budget);
        self
    }

    /// The largest budget any call gets (default: none).
    pub fn ceiling(mut self, ceiling: Duration) -> Self {
        self.policy.ceiling = Some(ceiling);
        self
    }

    /// How long a body told to stop may take before it is abandoned (default
    /// [`DEFAULT_GRACE`]; zero abandons it at the deadline).
    pub fn grace(mut self, grace: Duration) -> Self {
        self.policy.grace = grace;
        self
    }

    /// The wrapper's priority (default [`Priority::EARLY`]: outside the other
    /// wrappers, so the budget covers them too).
    pub fn priority(mut self, priority: Priority) -> Self {
        self.policy.priority = priority;
        self
    }

    /// Applies the wrapper to one agent only (default: global).
    pub fn scope(mut self, scope: impl Into<Scope>) -> Self {
        self.policy.scope = scope.into();
        self
    }

    /// Checks and returns the policy.
    ///
    /// # Errors
    ///
    /// [`TimeoutConfigError`] for a zero default or ceiling, or a default
    /// above the ceiling.
    pub fn build(self) -> Result<TimeoutPolicy, TimeoutConfigError> {
        let p = self.policy;
        if p.default_budget.is_some_and(|d| d.is_zero()) {
            return Err(TimeoutConfigError::Zero {
                what: "default budget",
            });
        }
        if p.ceiling.is_some_and(|c| c.is_zero()) {
            return Err(TimeoutConfigError::Zero { what: "ceiling" });
        }
        if let (Some(default), Some(ceiling)) = (p.default_budget, p.ceiling) {
            if default > ceiling {
                return Err(TimeoutConfigError::DefaultAboveCeiling { default, ceiling });
            }
        }
        Ok(p)
    }
}
