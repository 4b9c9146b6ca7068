//! The hook mechanism the tool hook points are built on, from the
//! `tack-hook` engine: what a listener is given ([`Next`]), where it applies
//! ([`Scope`], [`AgentId`]), how it is ordered ([`Order`]) and how a
//! registration is undone ([`Disposer`]).
//!
//! * [`Waterfall<In, Out>`]: listeners form a chain around the hook's default.
//!   Each gets the input and a [`Next`] it may run at most once.
//! * [`Observer<T>`]: listeners see a frozen `Arc<T>` and cannot change it.

pub use tack_hook::{
    AgentId, Disposer, Next, Observer, Order, OrderError, Provenance, Scope, Waterfall,
    WaterfallListener,
};
pub(crate) use tack_hook::{Disposables, ListenerList};
pub(crate) use tack_hook::{HookError, panic_message};
