//! The entry a hook point keeps for each registered listener.

use std::sync::Arc;

use super::{Order, Scope};

/// One registered listener.
pub(crate) struct Entry<L: ?Sized> {
    pub(crate) name: Arc<str>,
    pub(crate) scope: Scope,
    /// Higher runs first (see [`Order`]).
    pub(crate) rank: i32,
    pub(crate) order: Option<Order>,
    pub(crate) listener: Arc<L>,
}

impl<L: ?Sized> Entry<L> {
    pub(crate) fn constrained(&self) -> bool {
        self.order.as_ref().is_some_and(|o| !o.is_empty())
    }
}
