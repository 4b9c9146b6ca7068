//! The `requestState` of 2026-07-28 `input_required` results: a handle to
//! answers kept here, so a client can neither forge nor alter them.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;

/// How many unanswered rounds are kept; the oldest goes first.
const KEPT: usize = 1024;

/// One round's state: the tool it is for and the answers so far.
struct Round {
    tool: String,
    answers: BTreeMap<String, Value>,
}

/// The rounds waiting for their client to call again, by handle.
#[derive(Clone, Default)]
pub(crate) struct RequestStates(Arc<Mutex<States>>);

#[derive(Default)]
struct States {
    rounds: HashMap<String, Round>,
    order: VecDeque<String>,
}

/// Why a `requestState` was refused.
pub(crate) enum StateError {
    /// Not issued by this server, altered, used already, or forgotten.
    Unknown,
    /// Issued for another tool.
    OtherTool(String),
}

impl RequestStates {
    /// Keeps `answers` for `tool`; the handle the client echoes.
    pub(crate) fn keep(&self, tool: &str, answers: BTreeMap<String, Value>) -> String {
        let handle = handle();
        let Ok(mut states) = self.0.lock() else {
            return handle;
        };
        if states.order.len() >= KEPT
            && let Some(oldest) = states.order.pop_front()
        {
            states.rounds.remove(&oldest);
        }
        states.order.push_back(handle.clone());
        states.rounds.insert(
            handle.clone(),
            Round {
                tool: tool.to_owned(),
                answers,
            },
        );
        handle
    }

    /// The answers kept under `handle` for `tool` (each handle is used once).
    pub(crate) fn take(
        &self,
        handle: &str,
        tool: &str,
    ) -> Result<BTreeMap<String, Value>, StateError> {
        let mut states = self.0.lock().map_err(|_| StateError::Unknown)?;
        let round = states.rounds.remove(handle).ok_or(StateError::Unknown)?;
        states.order.retain(|h| h != handle);
        if round.tool != tool {
            return Err(StateError::OtherTool(round.tool));
        }
        Ok(round.answers)
    }
}

/// 128 bits no client can guess: the process's random hash keys over a
/// counter.
fn handle() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let keys = std::collections::hash_map::RandomState::new();
    let mut parts = [0u64; 2];
    for (i, part) in parts.iter_mut().enumerate() {
        let mut hasher = keys.build_hasher();
        hasher.write_u64(n);
        hasher.write_usize(i);
        *part = hasher.finish();
    }
    format!("tack-{:016x}{:016x}", parts[0], parts[1])
}
