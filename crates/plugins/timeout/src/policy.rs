//! The timeout policy: budgets, ceiling, grace period, placement.

use std::time::Duration;

use tack_core::hook::{Order, Scope};

use crate::{TimeoutConfig, TimeoutConfigError};

/// How long a body that was told to stop may take before it is abandoned.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(2);

/// Configuration of the timeout wrapper (also the [`Plugin`](tack_core::plugin::Plugin)).
///
/// The default: declared budgets only (no default budget, no ceiling), a
/// 2 s grace period, global scope, outside the other `tools/execute`
/// wrappers (registered at [`Order::EARLY`](tack_core::hook::Order::EARLY)). To place it relative to a
/// particular wrapper, name it: [`TimeoutConfig::before`] /
/// [`TimeoutConfig::after`]. Built with [`new`](Self::new) from a
/// [`TimeoutConfig`].
///
/// ```
/// use std::time::Duration;
/// use tack_timeout::Timeout;
///
/// let policy = Timeout::default();
/// assert_eq!(policy.budget_for(None), None); // undeclared: untouched
/// assert_eq!(policy.budget_for(Some(Duration::from_secs(5))), Some(Duration::from_secs(5)));
/// assert_eq!(policy.grace(), Duration::from_secs(2));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timeout {
    pub(crate) default_budget: Option<Duration>,
    pub(crate) ceiling: Option<Duration>,
    pub(crate) grace: Duration,
    pub(crate) order: Order,
    pub(crate) scope: Scope,
}

impl Default for Timeout {
    fn default() -> Self {
        Self {
            default_budget: None,
            ceiling: None,
            grace: DEFAULT_GRACE,
            order: Order::EARLY,
            scope: Scope::Global,
        }
    }
}

impl Timeout {
    /// The policy (and plugin) `config` describes.
    ///
    /// # Errors
    ///
    /// [`TimeoutConfigError`] for a zero default or ceiling, or a default
    /// above the ceiling.
    pub fn new(config: TimeoutConfig) -> Result<Timeout, TimeoutConfigError> {
        let mut order = Order::EARLY;
        for name in config.before {
            order = order.and_before(name);
        }
        for name in config.after {
            order = order.and_after(name);
        }
        let p = Timeout {
            default_budget: config.default_budget,
            ceiling: config.ceiling,
            grace: config.grace.unwrap_or(DEFAULT_GRACE),
            order,
            scope: config.scope,
        };
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

    /// The budget of a tool that declared `declared`: the declared budget, or
    /// the policy default when it declared none, clamped by the ceiling.
    /// `None`: no deadline (the call is passed through untouched).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tack_timeout::{TimeoutConfig, Timeout};
    /// let ms = Duration::from_millis;
    /// let p = Timeout::new(TimeoutConfig::default().ceiling(ms(1000))).unwrap();
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

    /// Where the wrapper goes among the other `tools/execute` listeners: at
    /// [`Order::EARLY`], and before or after the wrappers it names.
    pub fn order(&self) -> &Order {
        &self.order
    }

    /// The scope the wrapper is registered in.
    pub fn scope(&self) -> &Scope {
        &self.scope
    }
}
