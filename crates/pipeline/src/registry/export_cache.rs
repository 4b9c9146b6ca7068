//! The exported tool lists, written straight from the registered schemas and
//! kept per presentation and format until the tool set changes.

use std::collections::HashMap;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard};
use tack_core::hook::AgentId;
use tack_core::host::{ExportedTool, ToolFormat, tools_json};
use tack_replicated::Replicated;

use super::{Presentation, ToolRegistry};

/// A value published as an immutable snapshot, with a generation that every
/// write access bumps: whatever was computed from an older generation is
/// stale.
///
/// Readers on the call path read their thread's copy `C` of the published
/// snapshot ([`with_copy`](Self::with_copy), see [`Replicated`]); other
/// readers load the published snapshot without a lock. Writers take the
/// writers' lock, change a working copy, and publish a copy of it when the
/// write access ends: the value is made of persistent maps, so that copy is
/// a few pointers.
pub(crate) struct Versioned<T: Clone + Send + Sync, C: Send = Arc<T>> {
    published: Replicated<T, C>,
    /// The writers' copy, equal to the published one between writes.
    working: Mutex<T>,
    /// Told the generation after every write access.
    changes: tokio::sync::watch::Sender<u64>,
}

impl<T: Clone + Send + Sync, C: Send> Versioned<T, C> {
    pub(crate) fn new(value: T) -> Self {
        Self {
            published: Replicated::new(value.clone()),
            working: Mutex::new(value),
            changes: tokio::sync::watch::Sender::new(0),
        }
    }

    /// A receiver told after every write access (the value may have
    /// changed); a reader it wakes sees the written value.
    pub(crate) fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// The published snapshot. Hold it briefly (it is meant for one lookup).
    #[inline]
    pub(crate) fn read(&self) -> arc_swap::Guard<Arc<T>> {
        self.published.load()
    }

    /// Runs `read` on this thread's copy of the published snapshot (made by
    /// `make` at the thread's first read after a change).
    #[inline]
    pub(crate) fn with_copy<R>(
        &self,
        make: impl FnOnce(&Arc<T>) -> C,
        read: impl FnOnce(&mut C) -> R,
    ) -> R {
        self.published.with_copy(make, read)
    }

    /// Write access to the writers' copy; it is published, and what was
    /// derived from the value before is stale, when the access ends.
    pub(crate) fn write(&self) -> Write<'_, T, C> {
        Write {
            working: Some(self.working.lock()),
            versioned: self,
        }
    }

    pub(crate) fn generation(&self) -> u64 {
        self.published.version()
    }

    /// How many copies reads made (see [`Replicated::copies_made`]).
    #[cfg(test)]
    pub(crate) fn copies_made(&self) -> u64 {
        self.published.copies_made()
    }
}

/// Write access to a [`Versioned`] value; dropping it publishes the value.
pub(crate) struct Write<'a, T: Clone + Send + Sync, C: Send> {
    /// Always `Some` until dropped (taken then, to release the lock before
    /// the replaced snapshot is dropped).
    working: Option<MutexGuard<'a, T>>,
    versioned: &'a Versioned<T, C>,
}

impl<T: Clone + Send + Sync, C: Send> Deref for Write<'_, T, C> {
    type Target = T;
    fn deref(&self) -> &T {
        self.working.as_ref().expect("held until dropped")
    }
}

impl<T: Clone + Send + Sync, C: Send> DerefMut for Write<'_, T, C> {
    fn deref_mut(&mut self) -> &mut T {
        self.working.as_mut().expect("held until dropped")
    }
}

impl<T: Clone + Send + Sync, C: Send> Drop for Write<'_, T, C> {
    fn drop(&mut self) {
        let Some(working) = self.working.take() else {
            return;
        };
        // Published before the generation moves: a reader that sees the new
        // generation reads the new value (one that reads the old generation
        // and the new value only rewrites its export once more). The
        // threads' copies are emptied with it.
        let replaced = self
            .versioned
            .published
            .publish(Arc::new(T::clone(&working)));
        let generation = self.versioned.published.version();
        // Cheap without receivers.
        self.versioned.changes.send_replace(generation);
        // The replaced snapshot (and the threads' copies) may hold the last
        // reference to a removed tool, and dropping that tool may run a
        // disposer it owns (a mask, a companion tool) that writes here: the
        // writers' lock goes first.
        drop(working);
        drop(replaced);
    }
}

/// The exported lists of the agents that see the registry's shared tool set
/// (no tools, masks or presentation of their own), one per presentation and
/// format: at most a dozen, however many agents there are.
#[derive(Default)]
pub(crate) struct ExportCache {
    lists: Mutex<HashMap<(Presentation, ToolFormat), Written>>,
}

/// An exported list and the generation of the tool set it was written from.
type Written = (u64, Arc<str>);

impl ToolRegistry {
    /// The JSON text of the tools `agent`'s model is shown (those of
    /// [`visible`](Self::visible), sorted by name), as one array in `format`:
    /// what a request's `tools` field carries.
    ///
    /// Written straight from the registered tools, serializing nothing: each
    /// tool's name, description and argument schema are written as JSON text
    /// once, when it is registered, and copied into the list from there. The list
    /// of every agent that has no tools, masks or presentation of its own is
    /// the same one, kept per presentation and format until a tool, a mask,
    /// the transport or a presentation changes; an agent with a layer of
    /// its own gets its list written anew on each call.
    ///
    /// ```
    /// use serde_json::json;
    /// use tack_core::tool::{OutputSpec, ToolDefinition};
    /// use tack_core::host::ToolFormat;
    /// use tack_pipeline::ToolRegistry;
    ///
    /// let registry = ToolRegistry::new();
    /// let _echo = registry.register(
    ///     ToolDefinition::builder("echo")
    ///         .description("Repeat the text.")
    ///         .input_schema(json!({"type": "object"}))
    ///         .output(OutputSpec::new(json!({"type": "string"})))
    ///         .handler(|args, _cx| async move { Ok(args["text"].clone()) })
    ///         .build()
    ///         .unwrap(),
    /// ).unwrap();
    /// let text = registry.export_tools(None, ToolFormat::OpenAi);
    /// let tools: serde_json::Value = serde_json::from_str(&text).unwrap();
    /// assert_eq!(tools[0]["function"]["name"], "echo");
    /// // Kept until the tool set changes: the same text, not a copy.
    /// assert!(std::sync::Arc::ptr_eq(&text, &registry.export_tools(None, ToolFormat::OpenAi)));
    /// ```
    pub fn export_tools(&self, agent: Option<&AgentId>, format: ToolFormat) -> Arc<str> {
        let generation = self.inner.layers.generation();
        let shared = {
            let layers = self.inner.layers.read();
            match agent {
                Some(agent) if layers.agents.contains_key(agent) => None,
                _ => Some(layers.presentation),
            }
        };
        let Some(presentation) = shared else {
            return self.write_tools(agent, format);
        };
        let key = (presentation, format);
        if let Some((built, text)) = self.inner.exports.lists.lock().get(&key)
            && *built == generation
        {
            return text.clone();
        }
        // Written without holding the cache's lock; tagged with the
        // generation read before reading the tools, so a change made
        // meanwhile leaves it stale rather than wrong.
        let text = self.write_tools(agent, format);
        let mut lists = self.inner.exports.lists.lock();
        if lists
            .get(&key)
            .is_none_or(|(built, _)| *built <= generation)
        {
            lists.insert(key, (generation, text.clone()));
        }
        text
    }

    fn write_tools(&self, agent: Option<&AgentId>, format: ToolFormat) -> Arc<str> {
        let layers = self.inner.layers.read();
        Arc::from(tools_json(
            ToolRegistry::visible_all_in(&layers, agent)
                .into_iter()
                .map(|t| {
                    ExportedTool::of_definition(&t.definition, format).with_rendered(&t.rendered)
                }),
        ))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};
    use tack_core::hook::Scope;
    use tack_core::host::export_tools;
    use tack_core::tool::{OutputSpec, ToolDefinition};

    use super::*;
    use crate::Restriction;

    fn tool(name: &str) -> ToolDefinition {
        ToolDefinition::builder(name)
            .description(format!("The {name} tool."))
            .input_schema(json!({"type": "object", "properties": {"x": {"type": "integer"}}}))
            .output(OutputSpec::new(json!({})))
            .handler(|_args, _cx| async move { Ok(Value::Null) })
            .build()
            .unwrap()
    }

    fn names(text: &str) -> Vec<String> {
        let tools: Vec<Value> = serde_json::from_str(text).unwrap();
        tools
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    }

    #[test]
    fn the_text_is_that_of_the_schemas_in_every_format() {
        let registry = ToolRegistry::new();
        let _b = registry.register(tool("b")).unwrap();
        let _a = registry.register(tool("a")).unwrap();
        for format in [
            ToolFormat::Neutral,
            ToolFormat::OpenAi,
            ToolFormat::Anthropic,
            ToolFormat::Mcp,
        ] {
            let expected = serde_json::to_string(&export_tools(&registry.schemas(None), format));
            assert_eq!(*registry.export_tools(None, format), expected.unwrap());
        }
    }

    #[test]
    fn a_change_to_the_tool_set_is_seen_at_once() {
        let registry = ToolRegistry::new();
        let agent = AgentId::new("agent");
        let a = registry.register(tool("a")).unwrap();
        let first = registry.export_tools(None, ToolFormat::Neutral);
        assert_eq!(names(&first), ["a"]);
        assert!(Arc::ptr_eq(
            &first,
            &registry.export_tools(Some(&agent), ToolFormat::Neutral)
        ));

        let _b = registry.register(tool("b")).unwrap();
        assert_eq!(
            names(&registry.export_tools(None, ToolFormat::Neutral)),
            ["a", "b"]
        );
        a.dispose();
        assert_eq!(
            names(&registry.export_tools(Some(&agent), ToolFormat::Neutral)),
            ["b"]
        );

        // An agent's own tool and mask are its own.
        let _own = registry
            .register_in(Scope::Agent(agent.clone()), tool("own"))
            .unwrap();
        let _c = registry.register(tool("c")).unwrap();
        let _mask = registry.restrict(&agent, Restriction::deny(["c"])).unwrap();
        assert_eq!(
            names(&registry.export_tools(Some(&agent), ToolFormat::Neutral)),
            ["b", "own"]
        );
        assert_eq!(
            names(&registry.export_tools(None, ToolFormat::Neutral)),
            ["b", "c"]
        );

        // A presentation change is a change too.
        registry.set_presentation(None, Presentation::Code);
        assert_eq!(
            names(&registry.export_tools(None, ToolFormat::Neutral)),
            Vec::<String>::new()
        );
    }
}
