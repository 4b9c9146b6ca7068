//! Each thread's copies of the registered tools it calls.
//!
//! A call holds the tool it resolved to for its whole run, and the stages
//! clone the tool's name and handler; done on the one shared allocation,
//! every call on every thread would write the same reference counts, a
//! cache line the threads then pass back and forth. Instead each thread
//! calls through a copy of its own ([`RegisteredTool::thread_copy`]): the
//! same definition and validators, with a count only that thread writes.
//!
//! They are kept with the thread's copy of the published catalogue (the
//! registry's [`Replicated`](tack_replicated::Replicated) value), so a
//! lookup reads the registry's version and this thread's copy, and each
//! change of the registry empties them with it: a removed tool is not kept
//! alive by a thread that stopped calling.

use std::collections::HashMap;
use std::sync::Arc;

use foldhash::fast::RandomState;

use super::{Layers, RegisteredTool};

/// One thread's copy of the catalogue, and by registration id its copies of
/// the tools it called.
pub(crate) struct ThreadCopies {
    pub(crate) layers: Arc<Layers>,
    tools: HashMap<u64, Arc<RegisteredTool>, RandomState>,
}

impl ThreadCopies {
    /// The copies of a thread that has called nothing yet in `layers`.
    pub(crate) fn of(layers: &Arc<Layers>) -> Self {
        Self {
            layers: layers.clone(),
            tools: HashMap::default(),
        }
    }

    /// Looks a call up in this thread's catalogue: `lookup` picks the
    /// registered tool (if any) and what else the caller needs, and the
    /// tool comes back as this thread's copy of it.
    pub(crate) fn resolve<R>(
        &mut self,
        lookup: impl FnOnce(&Layers) -> (Option<&Arc<RegisteredTool>>, R),
    ) -> (Option<Arc<RegisteredTool>>, R) {
        let (shared, found) = lookup(&self.layers);
        let Some(shared) = shared else {
            return (None, found);
        };
        let copy = self
            .tools
            .entry(shared.id)
            .or_insert_with(|| Arc::new(shared.thread_copy()));
        (Some(copy.clone()), found)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};
    use tack_core::tool::{OutputSpec, ToolDefinition};

    use super::*;
    use crate::ToolRegistry;

    fn tool(name: &str) -> ToolDefinition {
        ToolDefinition::builder(name)
            .description("A tool.")
            .input_schema(json!({"type": "object"}))
            .output(OutputSpec::new(json!({})))
            .handler(|_args, _cx| async move { Ok(Value::Null) })
            .build()
            .expect("valid")
    }

    /// Resolving a call reads this thread's copies: after the first call no
    /// call loads the published catalogue or copies a tool (no lock but the
    /// thread's own, no shared count written), until a change.
    #[test]
    fn a_resolve_makes_no_copy_until_a_change() {
        let registry = ToolRegistry::new();
        let _a = registry.register(tool("a")).expect("registers");
        let first = registry.resolve("a", None).tool.expect("found");
        let made = registry.inner.layers.copies_made();
        for _ in 0..100 {
            let again = registry.resolve("a", None).tool.expect("found");
            assert!(
                Arc::ptr_eq(&first, &again),
                "this thread's copy of the tool"
            );
            assert!(registry.resolve("missing", None).tool.is_none());
        }
        assert_eq!(registry.inner.layers.copies_made(), made);

        let _b = registry.register(tool("b")).expect("registers");
        let after = registry.resolve("a", None).tool.expect("found");
        assert!(!Arc::ptr_eq(&first, &after), "a change empties the copies");
        assert_eq!(registry.inner.layers.copies_made(), made + 1);
    }
}
