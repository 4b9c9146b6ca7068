//! The event bus: numbers a session's events, chains and writes them to its
//! log, and hands them to observers.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;

use crate::chain::GENESIS_HASH;
use crate::event::{Event, Record};
use crate::log::writer::{LogError, SessionLog};

type Observer = Arc<dyn Fn(&Record) + Send + Sync>;

/// Numbers events, writes them to the session log (if any) and hands them
/// to observers (a renderer, a UI). Shared by the loop and the approval
/// wrapper, which emit from different tasks.
///
/// ```
/// use std::sync::Arc;
/// use parking_lot::Mutex;
/// use tack_agent::{Event, EventBus};
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let sink = seen.clone();
/// let bus = EventBus::new(None).with_observer(move |r| sink.lock().push(r.seq));
/// bus.emit(Event::User { text: "hi".into() }).unwrap();
/// assert_eq!(*seen.lock(), [1]);
/// ```
pub struct EventBus {
    log: Option<Arc<SessionLog>>,
    observers: Vec<Observer>,
    seq: AtomicU64,
    /// Held while a record is numbered, chained and written: the hash of
    /// the last record.
    order: Mutex<String>,
    failed: Mutex<Option<String>>,
}

impl std::fmt::Debug for EventBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventBus")
            .field("log", &self.log)
            .field("observers", &self.observers.len())
            .finish_non_exhaustive()
    }
}

impl EventBus {
    /// A bus writing to `log` (or to no log).
    pub fn new(log: Option<Arc<SessionLog>>) -> Self {
        Self {
            log,
            observers: Vec::new(),
            seq: AtomicU64::new(0),
            order: Mutex::new(GENESIS_HASH.to_owned()),
            failed: Mutex::new(None),
        }
    }

    /// A bus continuing the session whose last record is `last`: the next
    /// record is numbered `last.seq + 1` and chained to `last`'s hash (see
    /// [`SessionLog::resume`]).
    pub fn resuming(log: Arc<SessionLog>, last: &Record) -> Self {
        let hash = last
            .link
            .as_ref()
            .map_or_else(|| GENESIS_HASH.to_owned(), |l| l.hash.clone());
        Self {
            log: Some(log),
            observers: Vec::new(),
            seq: AtomicU64::new(last.seq),
            order: Mutex::new(hash),
            failed: Mutex::new(None),
        }
    }

    /// Adds an observer, called with each record after it is logged.
    pub fn with_observer(mut self, observer: impl Fn(&Record) + Send + Sync + 'static) -> Self {
        self.observers.push(Arc::new(observer));
        self
    }

    /// The log, if any.
    pub fn log(&self) -> Option<&Arc<SessionLog>> {
        self.log.as_ref()
    }

    /// Logs `event` and shows it to the observers.
    ///
    /// # Errors
    ///
    /// [`LogError`] if the log could not be written (the observers still see
    /// the event).
    pub fn emit(&self, event: Event) -> Result<Record, LogError> {
        // One event at a time: log order is seq order and chain order.
        let mut last_hash = self.order.lock();
        let record = Record::chained(
            self.seq.fetch_add(1, Ordering::Relaxed) + 1,
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
                .unwrap_or(0),
            event,
            last_hash.clone(),
        );
        if let Some(link) = &record.link {
            last_hash.clone_from(&link.hash);
        }
        let written = match &self.log {
            Some(log) => log.append(&record),
            None => Ok(()),
        };
        for observer in &self.observers {
            observer(&record);
        }
        if let Err(e) = &written {
            let mut failed = self.failed.lock();
            if failed.is_none() {
                *failed = Some(e.to_string());
            }
        }
        written.map(|()| record)
    }

    /// The first log failure of an event emitted where it could not be
    /// returned (the approval wrapper), if any.
    pub fn first_failure(&self) -> Option<String> {
        self.failed.lock().clone()
    }
}
