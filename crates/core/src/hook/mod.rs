//! The hook mechanism: typed hook points that plugins attach listeners to.
//!
//! Two kinds of hook point:
//!
//! * [`Waterfall<In, Out>`]: listeners form a chain around the hook's default.
//!   Each gets the input and a [`Next`] it may run at most once.
//! * [`Observer<T>`]: listeners see a frozen `Arc<T>` and cannot change it.
//!
//! Every registration takes a [`ListenerSpec`] (name, [`Scope`], [`Priority`])
//! and returns a [`Disposer`]; a plugin's disposers live in one [`Disposables`]
//! bag. `tap_with` / `register_with` also take an [`Order`]: before or after
//! other listeners, by name. See `docs/architecture.md` for the ordering and failure rules with
//! diagrams.

mod disposer;
mod error;
mod listeners;
mod observer;
mod order;
mod provenance;
mod scope;
mod view;
mod waterfall;

pub use disposer::{Disposables, Disposer};
pub use error::{HookError, panic_message};
pub use listeners::{ListenerSpec, Priority};
pub use observer::{Notified, Observer, ObserverListener};
pub use order::{Order, OrderError, Relation};
pub use provenance::{Decider, Provenance};
pub use scope::{AgentId, Scope};
pub use waterfall::{Dispatch, Next, NextFuture, Waterfall, WaterfallListener};

pub(crate) use listeners::ListenerList;
