//! The timeout plugin's configuration: data a host builds in code or reads
//! from its settings.

use std::sync::Arc;
use std::time::Duration;

use tack_core::hook::Scope;
use tack_core::serde::{Deserialize, Deserializer};

/// What [`Timeout::new`](crate::Timeout::new) builds the plugin
/// from. Build it with its methods, or deserialize it from settings
/// (durations in milliseconds, every key optional):
///
/// ```
/// use std::time::Duration;
/// use tack_timeout::{TimeoutConfig, Timeout};
///
/// let config = TimeoutConfig::default()
///     .default_budget(Duration::from_secs(60))
///     .ceiling(Duration::from_secs(300));
/// let from_settings: TimeoutConfig = tack_core::serde_json::from_str(
///     r#"{"default_budget_ms": 60000, "ceiling_ms": 300000}"#,
/// ).unwrap();
/// assert_eq!(config, from_settings);
/// let policy = Timeout::new(config).unwrap();
/// assert_eq!(policy.budget_for(None), Some(Duration::from_secs(60)));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(crate = "tack_core::serde", default, deny_unknown_fields)]
pub struct TimeoutConfig {
    #[serde(rename = "default_budget_ms", deserialize_with = "millis")]
    pub(crate) default_budget: Option<Duration>,
    #[serde(rename = "ceiling_ms", deserialize_with = "millis")]
    pub(crate) ceiling: Option<Duration>,
    #[serde(rename = "grace_ms", deserialize_with = "millis")]
    pub(crate) grace: Option<Duration>,
    pub(crate) before: Vec<Arc<str>>,
    pub(crate) after: Vec<Arc<str>>,
    #[serde(skip)]
    pub(crate) scope: Scope,
}

fn millis<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Duration>, D::Error> {
    Ok(Option::<u64>::deserialize(deserializer)?.map(Duration::from_millis))
}

impl TimeoutConfig {
    /// A budget for tools that declare no timeout (default: none, such tools
    /// run without a deadline). Settings key: `default_budget_ms`.
    pub fn default_budget(mut self, budget: Duration) -> Self {
        self.default_budget = Some(budget);
        self
    }

    /// The largest budget any call gets (default: none). Settings key:
    /// `ceiling_ms`.
    pub fn ceiling(mut self, ceiling: Duration) -> Self {
        self.ceiling = Some(ceiling);
        self
    }

    /// How long a body told to stop may take before it is abandoned (default
    /// [`DEFAULT_GRACE`](crate::DEFAULT_GRACE); zero abandons it at the
    /// deadline). Settings key: `grace_ms`.
    pub fn grace(mut self, grace: Duration) -> Self {
        self.grace = Some(grace);
        self
    }

    /// Places the wrapper before (outside) the `tools/execute` listener
    /// named `name`: the budget covers it. Without any placement the
    /// wrapper is outside every wrapper registered at the default priority.
    /// Settings key: `before` (a list of names).
    ///
    /// The named listener must be registered when the plugin is installed.
    pub fn before(mut self, name: impl Into<Arc<str>>) -> Self {
        self.before.push(name.into());
        self
    }

    /// Places the wrapper after (inside) the `tools/execute` listener named
    /// `name`: that listener sees the caller's token and the `TIMEOUT`
    /// output. Every run of the wrapper — each attempt of a retry that runs
    /// the rest of the chain again — counts against the same deadline, the
    /// call's. Settings key: `after` (a list of names).
    ///
    /// The named listener must be registered when the plugin is installed.
    pub fn after(mut self, name: impl Into<Arc<str>>) -> Self {
        self.after.push(name.into());
        self
    }

    /// Applies the wrapper to one agent only (default: global; not a
    /// settings key).
    pub fn scope(mut self, scope: impl Into<Scope>) -> Self {
        self.scope = scope.into();
        self
    }
}
