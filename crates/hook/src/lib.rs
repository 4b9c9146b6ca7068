//! # tack-hook
//!
//! The hook engine behind tack's plugin contract: typed hook points that
//! listeners attach to, with ordering, scopes and disposal. It knows nothing
//! of tools; `tack-core` instantiates it for the tool pipeline's hook points
//! and re-exports what a plugin author names ([`Next`], [`Order`], [`Scope`],
//! [`AgentId`], [`Disposer`]).
//!
//! Two kinds of hook point:
//!
//! * [`Waterfall<In, Out>`]: listeners form a chain around the hook's default.
//!   Each gets the input and a [`Next`] it may run at most once.
//! * [`Observer<T>`]: listeners see a frozen `Arc<T>` and cannot change it.
//!
//! Every registration takes a listener name and returns a [`Disposer`]; a
//! plugin's disposers live in one [`Disposables`] bag. A listener applies to
//! every agent, or to one when registered through the handle `for_agent`
//! returns (its [`Scope`]). `tap_with` / `register_with` also take an
//! [`Order`]: a rank
//! ([`Order::EARLY`], [`Order::LATE`]) and before or after other listeners,
//! by name. See `docs/architecture.md` for the ordering and failure rules with
//! diagrams.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod disposer;
mod entry;
mod error;
pub mod future_pool;
mod listeners;
mod memo;
mod observer;
mod order;
mod provenance;
mod scope;
mod view;
mod waterfall;

pub use disposer::{Disposables, Disposer};
pub use error::{HookError, panic_message};
pub use observer::{Notified, Observer};
pub use order::{Order, OrderError};
pub use provenance::Provenance;
pub use scope::{AgentId, Scope};
pub use waterfall::{Dispatch, Next, Waterfall, WaterfallListener};

pub use listeners::ListenerList;
pub use view::View;
