//! Rebuilding a conversation from a session log, to continue it.

use tack_core::tool::ToolCall;

use crate::event::{Event, Record};
use crate::message::Message;
use crate::model::observe::Usage;

/// A conversation rebuilt from a log's records.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct ResumedHistory {
    /// The history as the loop kept it (without the system prompt).
    pub messages: Vec<Message>,
    /// The session's token usage so far (its last `model/usage` total).
    pub usage: Usage,
    /// What could not be carried over (a batch of calls whose results
    /// never came, from a session that stopped mid-batch).
    pub notes: Vec<String>,
}

/// Rebuilds the history an [`Agent`](crate::Agent) kept from the records of
/// a verified log ([`read_log`](crate::read_log) or
/// [`SessionLog::resume`](crate::SessionLog::resume)): the user's prompts,
/// the answers, each batch of tool calls followed by their results in model
/// order, and the deferred contexts. Records that were never model messages
/// (approvals, `run_code` sub-calls, usage, turn ends) are skipped. A last
/// batch whose results are missing (the session stopped while it ran) is
/// dropped, with a note: a model cannot be sent calls without results.
///
/// ```
/// use tack_agent::{Event, Message, Record, history_from_records};
/// let records = vec![
///     Record::new(1, 0, Event::User { text: "hi".into() }),
///     Record::new(2, 0, Event::Assistant { text: "hello".into() }),
/// ];
/// let resumed = history_from_records(&records);
/// assert!(matches!(&resumed.messages[..], [Message::User(u), Message::Assistant(a)] if u == "hi" && a == "hello"));
/// ```
pub fn history_from_records(records: &[Record]) -> ResumedHistory {
    let mut out = ResumedHistory::default();
    // The open batch: where its ToolCalls message is, and results missing.
    let mut batch: Option<(usize, usize)> = None;
    for record in records {
        match &record.event {
            Event::User { text } => {
                close_incomplete(&mut out, &mut batch);
                out.messages.push(Message::User(text.clone()));
            }
            Event::Assistant { text } | Event::AssistantNote { text } => {
                close_incomplete(&mut out, &mut batch);
                out.messages.push(Message::Assistant(text.clone()));
            }
            Event::ToolCall {
                call_id,
                tool,
                arguments,
                ..
            } => {
                let call = ToolCall::new(call_id.clone(), tool.clone(), arguments.clone());
                let len = out.messages.len();
                match (batch, out.messages.last_mut()) {
                    // Calls of one batch are logged one after the other.
                    (Some((at, missing)), Some(Message::ToolCalls(calls))) if at + 1 == len => {
                        calls.push(call);
                        batch = Some((at, missing + 1));
                    }
                    _ => {
                        close_incomplete(&mut out, &mut batch);
                        out.messages.push(Message::ToolCalls(vec![call]));
                        batch = Some((out.messages.len() - 1, 1));
                    }
                }
            }
            Event::ToolResult { outcome, .. } => {
                let call_id = outcome.call_id.to_string();
                let message = Message::ToolResult {
                    call_id: call_id.clone(),
                    tool: outcome.tool.clone(),
                    content: outcome.content.joined_text(),
                    is_error: !outcome.is_success(),
                };
                // A result outside a batch is a call run again
                // (`Agent::rerun`): it replaces the call's earlier result.
                if batch.is_none()
                    && let Some(earlier) = out.messages.iter_mut().rev().find(
                        |m| matches!(m, Message::ToolResult { call_id: c, .. } if *c == call_id),
                    )
                {
                    *earlier = message;
                    continue;
                }
                out.messages.push(message);
                if let Some((at, missing)) = batch {
                    batch = (missing > 1).then(|| (at, missing - 1));
                }
            }
            Event::ContextDeferred { context, .. } | Event::HookContext { context, .. } => {
                out.messages.push(Message::Context(context.clone()));
            }
            Event::ModelUsage { session, .. } => out.usage = *session,
            _ => {}
        }
    }
    close_incomplete(&mut out, &mut batch);
    out
}

/// Drops a batch still missing results (and what followed it).
fn close_incomplete(out: &mut ResumedHistory, batch: &mut Option<(usize, usize)>) {
    if let Some((at, missing)) = batch.take() {
        out.messages.truncate(at);
        out.notes.push(format!(
            "a batch of tool calls had {missing} result(s) missing (the session stopped while it ran): it is left out of the resumed conversation"
        ));
    }
}
