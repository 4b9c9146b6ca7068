//! What the model said: a tool call, its id, and the token nested calls carry.

use std::cell::Cell;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use crate::hook::AgentId;

/// The id a model gave a tool call (or the host made up for it).
///
/// ```
/// use tack_core::tool::CallId;
/// let id = CallId::from("call_1");
/// assert_eq!(id.as_str(), "call_1");
/// assert_eq!(id.to_string(), "call_1");
/// ```
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CallId(Arc<str>);

impl CallId {
    /// A call id from any string.
    pub fn new(id: impl Into<Arc<str>>) -> Self {
        Self(id.into())
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for CallId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CallId({:?})", &*self.0)
    }
}

impl fmt::Display for CallId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for CallId {
    fn from(value: &str) -> Self {
        Self::new(value)
    }
}

impl From<String> for CallId {
    fn from(value: String) -> Self {
        Self::new(value)
    }
}

/// The opaque identity of one execution.
///
/// Every execution gets a fresh token; every stage of it (pre-execute, guards,
/// execute, post-execute, result) sees the same one. A composite tool (such as
/// `run_code`) passes its own execution's token as the
/// [`parent`](ToolCall::parent) of the calls it makes, which is how the pipeline
/// tells a nested call from a model-direct one. Callers cannot choose a token's
/// value; the pipeline issues a new one per execution
/// (`tack_core::host::NewExecutionToken::issue`).
///
/// ```
/// use tack_core::host::NewExecutionToken;
/// use tack_core::tool::{CallId, ExecutionToken};
/// let a = ExecutionToken::issue(CallId::from("c1"));
/// let b = ExecutionToken::issue(CallId::from("c2"));
/// assert_ne!(a, b);
/// assert_eq!(a, a.clone());
/// assert_eq!(a.root_call_id().as_str(), "c1");
/// ```
///
/// Issuing one allocates nothing: the token is its serial beside the root
/// call's id (a shared string), and cloning it copies the serial and shares
/// the id.
#[derive(Clone)]
pub struct ExecutionToken {
    pub(crate) serial: u64,
    pub(crate) root: CallId,
}

/// The next block of serials not yet handed to a thread.
static NEXT_BLOCK: AtomicU64 = AtomicU64::new(1);

/// How many serials a thread takes at once: the shared counter is written
/// once per this many calls on a thread, not on every call.
const BLOCK: u64 = 1024;

thread_local! {
    /// This thread's serials: the next one, and the end of its block.
    static SERIALS: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

/// A serial no other token of this process has.
pub(crate) fn next_serial() -> u64 {
    SERIALS.with(|serials| {
        let (mut next, mut end) = serials.get();
        if next == end {
            next = NEXT_BLOCK.fetch_add(BLOCK, Ordering::Relaxed);
            end = next + BLOCK;
        }
        serials.set((next + 1, end));
        next
    })
}

impl ExecutionToken {
    /// The call id of the outermost call of the tree this execution belongs to.
    pub fn root_call_id(&self) -> &CallId {
        &self.root
    }
}

impl PartialEq for ExecutionToken {
    fn eq(&self, other: &Self) -> bool {
        self.serial == other.serial
    }
}

impl Eq for ExecutionToken {}

impl std::hash::Hash for ExecutionToken {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.serial.hash(state);
    }
}

impl fmt::Debug for ExecutionToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ExecutionToken(#{}, root {})", self.serial, self.root)
    }
}

/// One tool call as the model uttered it: a name and a raw JSON string.
///
/// Nothing is validated here: the name may be unknown and the arguments may not
/// be JSON at all. The pipeline turns every `ToolCall` into exactly one
/// [`Outcome`](super::Outcome).
///
/// ```
/// use tack_core::tool::ToolCall;
/// let call = ToolCall::new("c1", "read_file", r#"{"path": "README.md"}"#);
/// assert_eq!(call.name, "read_file");
/// assert!(call.agent.is_none() && call.parent.is_none());
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ToolCall {
    /// The call's id, echoed in its outcome.
    pub call_id: CallId,
    /// The tool name as the model wrote it (unvalidated).
    pub name: String,
    /// The arguments exactly as the model wrote them (unparsed). The pipeline
    /// parses them into `tack_core::host::Arguments`, which keep this text
    /// beside the parsed object and refuse a number the object would not hold
    /// exactly.
    pub arguments: String,
    /// The agent that made the call; `None` for a host without agents.
    pub agent: Option<AgentId>,
    /// The token of the execution that made this call, for nested calls.
    pub parent: Option<ExecutionToken>,
}

impl ToolCall {
    /// A model-direct call made for no particular agent.
    pub fn new(
        call_id: impl Into<CallId>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        Self {
            call_id: call_id.into(),
            name: name.into(),
            arguments: arguments.into(),
            agent: None,
            parent: None,
        }
    }

    /// Sets the agent.
    pub fn with_agent(mut self, agent: impl Into<AgentId>) -> Self {
        self.agent = Some(agent.into());
        self
    }

    /// Marks the call as nested inside the execution that holds `parent`.
    pub fn with_parent(mut self, parent: ExecutionToken) -> Self {
        self.parent = Some(parent);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::NewExecutionToken;
    use std::collections::HashSet;

    #[test]
    fn tokens_issued_on_many_threads_are_all_distinct() {
        // More than one block per thread, so blocks are taken concurrently.
        let per_thread = 3 * BLOCK as usize + 7;
        let serials: Vec<u64> = std::thread::scope(|s| {
            let workers: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(move || {
                        (0..per_thread)
                            .map(|_| ExecutionToken::issue(CallId::from("c")).serial)
                            .collect::<Vec<u64>>()
                    })
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|w| w.join().unwrap())
                .collect()
        });
        let distinct: HashSet<u64> = serials.iter().copied().collect();
        assert_eq!(distinct.len(), 4 * per_thread);
        assert!(!distinct.contains(&0), "0 is never a serial");
    }
}
