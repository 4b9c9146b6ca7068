//! What happens in a session, as events: logged, rendered, replayed.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tack_core::hooks::CodeDispatchEvent;
use tack_core::policy::{ApprovalOutcome, ApprovalRequest};
use tack_core::tool::{ContentBlock, DeferredContext, Outcome};

use crate::chain::seal;
use crate::model::observe::Usage;

/// One thing that happened in a session. Serialized with a `type` tag
/// (`user`, `assistant`, `assistant/note`, `tool/call`, `approval/request`, `approval/outcome`,
/// `tool/code-dispatch-start`, `tool/code-dispatch`, `tool/result`,
/// `context/deferred`, `context/hook`, `user/blocked`, `hook/report`, `model/usage`, `session/start`, `turn/end`).
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
    /// Text the model streamed before the tool calls of the same reply ("I
    /// will read both files."): shown as it arrived, kept in the history
    /// before the batch. Not an answer: the turn goes on.
    #[serde(rename = "assistant/note")]
    AssistantNote {
        /// The text.
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
        /// The call's 0-based position in its batch: with the record's place
        /// in the log it names the call even when a model reuses an id.
        #[serde(default)]
        index: usize,
    },
    /// A policy asked the approver about a call.
    #[serde(rename = "approval/request")]
    ApprovalRequest {
        /// The request: call id, tool, tier, agent, reason, the call's
        /// validated arguments and a one-line summary.
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
        /// The position in its batch of the call this result answers (the
        /// `index` of its `tool/call` record).
        #[serde(default)]
        index: usize,
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
        /// That call's position in its batch.
        #[serde(default)]
        index: usize,
        /// The context: a string for text, or `{content, source?}` for
        /// content blocks (images included).
        #[serde(alias = "text")]
        context: DeferredContext,
    },
    /// The tokens one model call used, and the session's total so far.
    #[serde(rename = "model/usage")]
    ModelUsage {
        /// This call's.
        #[serde(flatten)]
        usage: Usage,
        /// The session's so far (this call's included).
        session: Usage,
    },
    /// A session started, or was resumed: the model asked and what the
    /// system prompt was made of (a log record only: it is not shown and
    /// never becomes a model message).
    #[serde(rename = "session/start")]
    SessionStart {
        /// The model's name ([`ChatModel::name`](crate::ChatModel::name)).
        model: String,
        /// The parts of the system prompt, in order: `default`,
        /// `--system-prompt`, `--system-prompt @FILE`, `AGENTS.md FILE`, …
        sources: Vec<String>,
        /// The whole system prompt the model is sent.
        system_prompt: String,
        /// Whether this continues an earlier session of the same log.
        #[serde(default)]
        resumed: bool,
        /// How the host confines commands, and why (e.g. which sandbox
        /// layer runs them), when the host says.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sandbox: Option<String>,
    },
    /// Context an agent hook added: after the prompt (`UserPromptSubmit`),
    /// at the start of a session (`SessionStart`), or the reason a `Stop`
    /// hook gave to keep the agent going.
    #[serde(rename = "context/hook")]
    HookContext {
        /// The hook point's event, e.g. `UserPromptSubmit`.
        hook: String,
        /// The context.
        context: DeferredContext,
    },
    /// A `UserPromptSubmit` listener blocked the prompt: it was not added to
    /// the history and the model was not asked.
    #[serde(rename = "user/blocked")]
    PromptBlocked {
        /// Why.
        reason: String,
    },
    /// A hook command (a settings file's `hooks`) failed without blocking,
    /// or blocked: what the user is shown.
    #[serde(rename = "hook/report")]
    HookReport {
        /// The event, e.g. `PreToolUse`.
        hook: String,
        /// The command line.
        command: String,
        /// Whether it blocked (or failed closed); otherwise a non-blocking error.
        blocked: bool,
        /// What happened.
        message: String,
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
            Event::AssistantNote { .. } => "assistant/note",
            Event::ToolCall { .. } => "tool/call",
            Event::ApprovalRequest { .. } => "approval/request",
            Event::ApprovalOutcome { .. } => "approval/outcome",
            Event::CodeDispatchStart { .. } => "tool/code-dispatch-start",
            Event::CodeDispatch { .. } => "tool/code-dispatch",
            Event::ToolResult { .. } => "tool/result",
            Event::ContextDeferred { .. } => "context/deferred",
            Event::HookContext { .. } => "context/hook",
            Event::PromptBlocked { .. } => "user/blocked",
            Event::HookReport { .. } => "hook/report",
            Event::TurnEnd { .. } => "turn/end",
            Event::SessionStart { .. } => "session/start",
            Event::ModelUsage { .. } => "model/usage",
        }
    }
}

impl From<&CodeDispatchEvent> for Event {
    fn from(event: &CodeDispatchEvent) -> Self {
        match event {
            CodeDispatchEvent::Started {
                parent_call_id,
                call_id,
                tool,
                arguments,
                ..
            } => Event::CodeDispatchStart {
                parent_call_id: parent_call_id.to_string(),
                call_id: call_id.to_string(),
                tool: tool.clone(),
                arguments: arguments.clone(),
            },
            CodeDispatchEvent::Settled {
                parent_call_id,
                call_id,
                tool,
                arguments,
                error,
                content,
                ..
            } => Event::CodeDispatch {
                parent_call_id: parent_call_id.to_string(),
                call_id: call_id.to_string(),
                tool: tool.clone(),
                arguments: arguments.clone(),
                status: if error.is_some() { "error" } else { "ok" }.to_owned(),
                code: error.map(|code| code.as_str().to_owned()),
                content: content.clone(),
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
    /// The model replied with neither text nor a tool call: a malformed
    /// reply, which ends the turn without an answer.
    EmptyReply,
    /// A `UserPromptSubmit` listener blocked the prompt.
    PromptBlocked,
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
    /// The record's link in the session's hash chain (`None` for a record
    /// built by hand rather than numbered by an [`EventBus`](crate::EventBus)).
    pub link: Option<Link>,
}

/// A record's place in its session's hash chain: the hash of the record
/// before it and its own (SHA-256, lowercase hex; see
/// [`read_log`](crate::read_log) for the exact form hashed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    /// The `hash` of the previous record ([`GENESIS_HASH`](crate::GENESIS_HASH) for the first).
    pub prev: String,
    /// This record's hash.
    pub hash: String,
}

impl Record {
    /// A record outside any chain (`link` is `None`).
    pub fn new(seq: u64, ts: u64, event: Event) -> Self {
        Self {
            seq,
            ts,
            event,
            link: None,
        }
    }

    /// The record chained after a record whose hash is `prev`.
    pub(crate) fn chained(seq: u64, ts: u64, event: Event, prev: String) -> Self {
        let mut record = Self::new(seq, ts, event);
        let (_, hash) = seal(&record.body(Some(&prev)));
        record.link = Some(Link { prev, hash });
        record
    }

    /// `{"seq", "ts", "type", …, "prev"?}`: everything but the hash.
    fn body_json(&self, prev: Option<&str>) -> Map<String, Value> {
        let mut out = Map::new();
        out.insert("seq".into(), Value::from(self.seq));
        out.insert("ts".into(), Value::from(self.ts));
        if let Ok(Value::Object(fields)) = serde_json::to_value(&self.event) {
            out.extend(fields);
        }
        if let Some(prev) = prev {
            out.insert("prev".into(), Value::from(prev));
        }
        out
    }

    /// The body's text, written member by member so its order is fixed
    /// (`seq`, `ts`, then the event's fields as serde writes them, `type`
    /// first, then `prev`), whatever order a `serde_json::Map` keeps: a torn
    /// record is recognised by its `{"seq":N,` start.
    fn body(&self, prev: Option<&str>) -> String {
        let event = serde_json::to_string(&self.event).unwrap_or_default();
        let fields = event
            .strip_prefix('{')
            .and_then(|e| e.strip_suffix('}'))
            .unwrap_or("");
        let mut out = format!("{{\"seq\":{},\"ts\":{}", self.seq, self.ts);
        if !fields.is_empty() {
            out.push(',');
            out.push_str(fields);
        }
        if let Some(prev) = prev {
            out.push_str(",\"prev\":");
            out.push_str(&Value::from(prev).to_string());
        }
        out.push('}');
        out
    }

    /// The JSON object `{"seq", "ts", "type", …, "prev", "hash"}` (the last
    /// two only for a chained record).
    pub fn to_json(&self) -> Value {
        let mut out = self.body_json(self.link.as_ref().map(|l| l.prev.as_str()));
        if let Some(link) = &self.link {
            out.insert("hash".into(), Value::from(link.hash.as_str()));
        }
        Value::Object(out)
    }

    /// The record's line in the session log, without the line feed: the
    /// compact JSON of [`to_json`](Self::to_json), with `hash` as its last
    /// member.
    pub fn to_line(&self) -> String {
        match &self.link {
            Some(link) => seal(&self.body(Some(&link.prev))).0,
            None => self.body(None),
        }
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
        let text = |v: Option<Value>| match v {
            Some(Value::String(s)) => Some(s),
            _ => None,
        };
        let link = match (text(object.remove("prev")), text(object.remove("hash"))) {
            (Some(prev), Some(hash)) => Some(Link { prev, hash }),
            _ => None,
        };
        let event = serde_json::from_value(value).map_err(|e| e.to_string())?;
        Ok(Record {
            seq,
            ts,
            event,
            link,
        })
    }
}
