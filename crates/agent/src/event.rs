//! What happens in a session, as events: logged, rendered, replayed.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tack_core::hooks::CodeDispatchEvent;
use tack_core::policy::{ApprovalOutcome, ApprovalRequest};
use tack_core::tool::{ContentBlock, DeferredContext, Outcome};

use crate::log::writer::{LogError, SessionLog};

/// One thing that happened in a session. Serialized with a `type` tag
/// (`user`, `assistant`, `tool/call`, `approval/request`, `approval/outcome`,
/// `tool/code-dispatch-start`, `tool/code-dispatch`, `tool/result`,
/// `context/deferred`, `turn/end`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum Event {
    /// The user's prompt.
    #[serde(rename = "user")]
    User {
        /// What they said.
        text: String,
    },
    /// The model's text answer.
    #[serde(rename = "assistant")]
    Assistant {
        /// The answer.
        text: String,
    },
    /// The model asked for a call.
    #[serde(rename = "tool/call")]
    ToolCall {
        /// The call's id.
        call_id: String,
        /// The tool's name.
        tool: String,
        /// The raw argument text the model produced.
        arguments: String,
    },
    /// A policy asked the approver about a call.
    #[serde(rename = "approval/request")]
    ApprovalRequest {
        /// The request (call id, tool, tier, reason; never the arguments).
        request: ApprovalRequest,
    },
    /// The approver answered.
    #[serde(rename = "approval/outcome")]
    ApprovalOutcome {
        /// The call.
        call_id: String,
        /// The tool's name.
        tool: String,
        /// The answer.
        outcome: ApprovalOutcome,
    },
    /// A call's outcome: status `ok` or `error` (with `{code, message}`),
    /// content blocks, presentation meta and provenance.
    #[serde(rename = "tool/result")]
    ToolResult {
        /// The outcome, as the pipeline froze it.
        #[serde(flatten)]
        outcome: Arc<Outcome>,
    },
    /// A `run_code` program started a tool call (a log record only: it never
    /// becomes a model message).
    #[serde(rename = "tool/code-dispatch-start")]
    CodeDispatchStart {
        /// The `run_code` call.
        parent_call_id: String,
        /// The nested call (`<parent>:code:<n>`).
        call_id: String,
        /// The tool called.
        tool: String,
        /// The arguments the program passed (JSON text).
        arguments: String,
    },
    /// A tool call made by a `run_code` program settled: its complete final
    /// content, as `tools/code-dispatch-log` left it (a log record only: it
    /// never becomes a model message).
    #[serde(rename = "tool/code-dispatch")]
    CodeDispatch {
        /// The `run_code` call.
        parent_call_id: String,
        /// The nested call (`<parent>:code:<n>`).
        call_id: String,
        /// The tool called.
        tool: String,
        /// The arguments as logged (JSON text).
        arguments: String,
        /// `ok` or `error`.
        status: String,
        /// The error code of a failure.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<String>,
        /// The content as logged.
        content: Vec<ContentBlock>,
    },
    /// Context a tool deferred, appended after its batch.
    #[serde(rename = "context/deferred")]
    ContextDeferred {
        /// The call that deferred it.
        call_id: String,
        /// The context: a string for text, or `{content, source?}` for
        /// content blocks (images included).
        #[serde(alias = "text")]
        context: DeferredContext,
    },
    /// The turn ended.
    #[serde(rename = "turn/end")]
    TurnEnd {
        /// Why.
        reason: TurnEndReason,
        /// How many model calls the turn made.
        steps: usize,
    },
}

impl Event {
    /// The wire name of the event's type.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::User { .. } => "user",
            Event::Assistant { .. } => "assistant",
            Event::ToolCall { .. } => "tool/call",
            Event::ApprovalRequest { .. } => "approval/request",
            Event::ApprovalOutcome { .. } => "approval/outcome",
            Event::CodeDispatchStart { .. } => "tool/code-dispatch-start",
            Event::CodeDispatch { .. } => "tool/code-dispatch",
            Event::ToolResult { .. } => "tool/result",
            Event::ContextDeferred { .. } => "context/deferred",
            Event::TurnEnd { .. } => "turn/end",
        }
    }
}

impl From<&CodeDispatchEvent> for Event {
    fn from(event: &CodeDispatchEvent) -> Self {
        match event {
            CodeDispatchEvent::Started(start) => Event::CodeDispatchStart {
                parent_call_id: start.parent_call_id.to_string(),
                call_id: start.call_id.to_string(),
                tool: start.tool.clone(),
                arguments: start.arguments.clone(),
            },
            CodeDispatchEvent::Settled(entry) => Event::CodeDispatch {
                parent_call_id: entry.parent_call_id.to_string(),
                call_id: entry.call_id.to_string(),
                tool: entry.tool.clone(),
                arguments: entry.arguments.clone(),
                status: if entry.is_error() { "error" } else { "ok" }.to_owned(),
                code: entry.error.map(|code| code.as_str().to_owned()),
                content: entry.content.clone(),
            },
        }
    }
}

/// Why a turn ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TurnEndReason {
    /// The model answered in text.
    Answered,
    /// A tool concluded the turn.
    Concluded,
    /// The step limit was reached before an answer.
    MaxSteps,
    /// The session's cancellation signal fired (e.g. Ctrl-C).
    Cancelled,
}

/// An event with its sequence number and time: one line of the session log.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// 1-based position in the session.
    pub seq: u64,
    /// Milliseconds since the Unix epoch.
    pub ts: u64,
    /// What happened.
    pub event: Event,
}

impl Record {
    /// The JSON object `{"seq", "ts", "type", …}`.
    pub fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("seq".into(), Value::from(self.seq));
        out.insert("ts".into(), Value::from(self.ts));
        if let Ok(Value::Object(fields)) = serde_json::to_value(&self.event) {
            out.extend(fields);
        }
        Value::Object(out)
    }

    /// Parses one log line.
    ///
    /// # Errors
    ///
    /// A message saying what is wrong with the line.
    pub fn from_json_line(line: &str) -> Result<Record, String> {
        let mut value: Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
        let object = value
            .as_object_mut()
            .ok_or_else(|| "not a JSON object".to_owned())?;
        let number = |v: Option<Value>, name: &str| {
            v.and_then(|v| v.as_u64())
                .ok_or_else(|| format!("no numeric `{name}`"))
        };
        let seq = number(object.remove("seq"), "seq")?;
        let ts = number(object.remove("ts"), "ts")?;
        let event = serde_json::from_value(value).map_err(|e| e.to_string())?;
        Ok(Record { seq, ts, event })
    }
}

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
    order: Mutex<()>,
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
            order: Mutex::new(()),
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
        // One event at a time: log order is seq order.
        let _order = self.order.lock();
        let record = Record {
            seq: self.seq.fetch_add(1, Ordering::Relaxed) + 1,
            ts: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
                .unwrap_or(0),
            event,
        };
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
