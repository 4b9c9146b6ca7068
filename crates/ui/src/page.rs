//! The page's content, built from the session's records alone: the same
//! records give the same HTML, live or replayed.

use std::sync::Arc;

use serde_json::{Value, json};
use tack_agent::{Event, Record, TurnEndReason, escape_line};
use tack_core::tool::{ContentBlock, Outcome};
use tack_pipeline::ToolRegistry;

use crate::card::{Approval, Card, duration};
use crate::html::escape_html;
use crate::timeline::{Step, Timeline, Turn};

/// A message or a card of the session's list, to put in place of the
/// element with the same id, or at the end.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Item {
    /// The element's id.
    pub id: String,
    /// Its HTML.
    pub html: String,
}

/// The outcome of a `run_code` program's call, as its `tool/code-dispatch`
/// record logged it (content and code; no value).
fn nested_outcome(
    call_id: &str,
    tool: &str,
    code: Option<&str>,
    content: &[ContentBlock],
) -> Option<Outcome> {
    let text: String = content.iter().filter_map(ContentBlock::as_text).collect();
    let status = match code {
        None => json!({"status": "ok", "value": null}),
        Some(code) => json!({"status": "error", "error": {"code": code, "message": text}}),
    };
    let mut outcome = json!({"call_id": call_id, "tool": tool, "content": content});
    if let (Some(outcome), Value::Object(status)) = (outcome.as_object_mut(), status) {
        outcome.extend(status);
    }
    serde_json::from_value(outcome).ok()
}

/// The session's page: messages, one card per tool call and the timeline,
/// rendered on the server from the records, with every text the model, a
/// tool or the log wrote escaped.
///
/// ```
/// use tack_agent::{Event, Record};
/// use tack_ui::Page;
/// let mut page = Page::new(tack_pipeline::ToolRegistry::new());
/// let items = page.apply(&Record::new(1, 0, Event::User { text: "<b>hi</b>".into() }));
/// assert_eq!(items[0].id, "i-1");
/// assert!(items[0].html.contains("&lt;b&gt;hi&lt;/b&gt;"));
/// assert!(page.timeline().starts_with("<svg"));
/// ```
#[derive(Debug)]
pub struct Page {
    registry: ToolRegistry,
    t0: Option<u64>,
    now: u64,
    cards: Vec<Card>,
    /// The current batch's cards, by position.
    batch: Vec<usize>,
    steps: Vec<Step>,
    turns: Vec<Turn>,
}

impl Page {
    /// An empty page whose cards find the tools' presenters in `registry`.
    pub fn new(registry: ToolRegistry) -> Self {
        Self {
            registry,
            t0: None,
            now: 0,
            cards: Vec::new(),
            batch: Vec::new(),
            steps: Vec::new(),
            turns: Vec::new(),
        }
    }

    /// The id of the card of `call_id` that awaits an approval (the latest).
    pub fn awaiting_approval(&self, call_id: &str) -> Option<String> {
        self.cards
            .iter()
            .rev()
            .find(|c| c.call_id == call_id && c.awaiting_approval())
            .map(|c| c.dom_id.clone())
    }

    /// The items `record` adds or changes (the timeline changes too: see
    /// [`timeline`](Self::timeline)).
    pub fn apply(&mut self, record: &Record) -> Vec<Item> {
        let ts = record.ts;
        let t0 = *self.t0.get_or_insert(ts);
        self.now = self.now.max(ts);
        let mut patches = Vec::new();
        let mut message = |class: &str, who: &str, html: String| {
            patches.push(Item {
                id: format!("i-{}", record.seq),
                html: format!(
                    "<div class=\"msg {class}\" id=\"i-{}\"><span class=\"who\">{who}</span><div class=\"text\">{html}</div><span class=\"t\">+{}</span></div>",
                    record.seq,
                    duration(ts.saturating_sub(t0))
                ),
            });
        };
        let mut touched = None;
        match &record.event {
            Event::SessionStart {
                model,
                resumed,
                sandbox,
                ..
            } => {
                let mut text = format!(
                    "{} with model <b>{}</b>",
                    if *resumed { "resumed" } else { "started" },
                    escape_html(model)
                );
                if let Some(sandbox) = sandbox {
                    text.push_str(&format!(" · {}", escape_html(sandbox)));
                }
                message("session", "session", text);
            }
            Event::User { text } => {
                self.turns.push(Turn {
                    start: ts,
                    end: None,
                });
                self.steps.push(Step::open(ts));
                message("user", "user", escape_html(text));
            }
            Event::Assistant { text } => {
                self.end_step(ts);
                message("assistant", "assistant", escape_html(text));
            }
            Event::AssistantNote { text } => {
                self.end_step(ts);
                message("assistant note", "assistant", escape_html(text));
            }
            Event::ModelUsage { usage, session } => {
                match self.steps.last_mut() {
                    Some(step) if step.usage.is_none() => {
                        step.end.get_or_insert(ts);
                        step.usage = Some(*usage);
                    }
                    _ => {}
                }
                message(
                    "usage",
                    "tokens",
                    format!(
                        "{} in, {} out (session: {} in, {} out)",
                        usage.input_tokens,
                        usage.output_tokens,
                        session.input_tokens,
                        session.output_tokens
                    ),
                );
            }
            Event::ToolCall {
                call_id,
                tool,
                arguments,
                index,
            } => {
                self.end_step(ts);
                let args: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
                if *index == 0 {
                    self.batch.clear();
                }
                let at = self.open_card(record.seq, ts, call_id, tool, args);
                if self.batch.len() <= *index {
                    self.batch.resize(*index + 1, at);
                }
                self.batch[*index] = at;
                touched = Some(at);
            }
            Event::ApprovalRequest { request } => {
                let call_id = request.call_id.as_str();
                let found = self.cards.iter().rposition(|c| {
                    c.call_id == call_id && c.result.is_none() && c.approval.is_none()
                });
                // A call a `run_code` program made: its card opens here.
                let at = found.unwrap_or_else(|| {
                    self.open_card(
                        record.seq,
                        ts,
                        call_id,
                        &request.tool,
                        Value::clone(&request.arguments),
                    )
                });
                self.cards[at].approval = Some(Approval {
                    asked: ts,
                    reason: request.reason.clone(),
                    answered: None,
                });
                touched = Some(at);
            }
            Event::ApprovalOutcome {
                call_id, outcome, ..
            } => {
                if let Some(at) = self
                    .cards
                    .iter()
                    .rposition(|c| c.call_id == *call_id && c.awaiting_approval())
                    && let Some(approval) = &mut self.cards[at].approval
                {
                    approval.answered = Some((ts, outcome.clone()));
                    touched = Some(at);
                }
            }
            Event::ToolResult { outcome, index } => {
                let call_id = outcome.call_id.as_str();
                let at = self
                    .batch
                    .get(*index)
                    .copied()
                    .filter(|&at| {
                        self.cards[at].call_id == call_id && self.cards[at].result.is_none()
                    })
                    .or_else(|| {
                        self.cards
                            .iter()
                            .rposition(|c| c.call_id == call_id && c.result.is_none())
                    });
                let at = at.unwrap_or_else(|| {
                    self.open_card(record.seq, ts, call_id, &outcome.tool, Value::Null)
                });
                self.cards[at].result = Some((ts, outcome.clone()));
                touched = Some(at);
                // The batch is done: the model is asked next.
                if self.batch.iter().all(|&at| self.cards[at].result.is_some()) {
                    self.steps.push(Step::open(ts));
                }
            }
            Event::CodeDispatch {
                parent_call_id,
                call_id,
                tool,
                code,
                content,
                ..
            } => {
                // A nested call that was asked about has its own card: it
                // settles here (there is no `tool/result` for it).
                if let Some(at) = self.cards.iter().rposition(|c| {
                    c.call_id == *call_id && c.approval.is_some() && c.result.is_none()
                }) && let Some(outcome) = nested_outcome(call_id, tool, code.as_deref(), content)
                {
                    self.cards[at].result = Some((ts, Arc::new(outcome)));
                    patches.push(Item {
                        id: self.cards[at].dom_id.clone(),
                        html: self.cards[at].html(&self.registry, t0),
                    });
                }
                if let Some(at) = self
                    .cards
                    .iter()
                    .rposition(|c| c.call_id == *parent_call_id)
                {
                    let status = code
                        .as_deref()
                        .map_or_else(|| "ok".to_owned(), |c| format!("ERR {c}"));
                    self.cards[at]
                        .nested
                        .push(format!("{tool} {call_id} → {status}"));
                    touched = Some(at);
                }
            }
            Event::ContextDeferred { context, .. } => {
                let mut text = context.text();
                let images = context
                    .content
                    .iter()
                    .filter(|b| matches!(b, ContentBlock::Image { .. }))
                    .count();
                if images > 0 {
                    text.push_str(&format!(" ({images} images)"));
                }
                if let Some(source) = context.source() {
                    text.push_str(&format!(" — from {}", escape_line(source)));
                }
                message("context", "context", escape_html(&text));
            }
            Event::HookContext { hook, context } => message(
                "context",
                "context",
                format!(
                    "{} — from the {} hook",
                    escape_html(&context.text()),
                    escape_html(hook)
                ),
            ),
            Event::PromptBlocked { reason } => message(
                "blocked",
                "blocked",
                format!("the prompt was blocked by a hook: {}", escape_html(reason)),
            ),
            Event::HookReport {
                hook,
                command,
                blocked,
                message: text,
            } => message(
                if *blocked { "hook blocked" } else { "hook" },
                "hook",
                format!(
                    "{} hook <code>{}</code>: {}",
                    escape_html(hook),
                    escape_html(command),
                    escape_html(text)
                ),
            ),
            Event::TurnEnd { reason, steps } => {
                if let Some(turn) = self.turns.last_mut() {
                    turn.end.get_or_insert(ts);
                }
                // A step opened after the last batch that never ran.
                if let Some(step) = self.steps.last()
                    && step.end.is_none()
                {
                    self.steps.pop();
                }
                let why = match reason {
                    TurnEndReason::Answered => "answered",
                    TurnEndReason::Concluded => "concluded by a tool",
                    TurnEndReason::MaxSteps => "stopped at the step limit",
                    TurnEndReason::Cancelled => "cancelled",
                    TurnEndReason::EmptyReply => "the model replied with nothing",
                    TurnEndReason::PromptBlocked => "the prompt was blocked",
                    _ => "ended",
                };
                message(
                    "turn-end",
                    "turn",
                    format!(
                        "{why} · {steps} model call{}",
                        if *steps == 1 { "" } else { "s" }
                    ),
                );
            }
            _ => {}
        }
        if let Some(at) = touched {
            let card = &self.cards[at];
            patches.push(Item {
                id: card.dom_id.clone(),
                html: card.html(&self.registry, t0),
            });
        }
        patches
    }

    /// Opens a new card (record `seq`, at `ts`) and returns its place.
    fn open_card(&mut self, seq: u64, ts: u64, call_id: &str, tool: &str, args: Value) -> usize {
        self.cards.push(Card::new(seq, ts, call_id, tool, args));
        self.cards.len() - 1
    }

    fn end_step(&mut self, ts: u64) {
        if let Some(step) = self.steps.last_mut() {
            step.end.get_or_insert(ts);
        }
    }

    /// The timeline's SVG as of the last record.
    pub fn timeline(&self) -> String {
        Timeline {
            t0: self.t0.unwrap_or(0),
            now: self.now,
            cards: &self.cards,
            steps: &self.steps,
            turns: &self.turns,
        }
        .svg()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;
    use tack_core::host::NewOutcome;
    use tack_core::policy::{ApprovalOutcome, ApprovalRequest};
    use tack_core::tool::{CallId, Outcome, Tier};

    use super::*;

    fn items(items: &[Item]) -> Vec<(String, String)> {
        items
            .iter()
            .map(|i| (i.id.clone(), i.html.clone()))
            .collect()
    }

    fn records() -> Vec<Record> {
        let args = json!({"command": "echo <b>"});
        vec![
            Record::new(
                1,
                100,
                Event::ToolCall {
                    call_id: "c1".into(),
                    tool: "bash".into(),
                    arguments: args.to_string(),
                    index: 0,
                },
            ),
            Record::new(
                2,
                110,
                Event::ApprovalRequest {
                    request: ApprovalRequest::new(
                        CallId::from("c1"),
                        "bash",
                        Tier::Executes,
                        None,
                        args,
                        "commands ask",
                    ),
                },
            ),
            Record::new(
                3,
                150,
                Event::ApprovalOutcome {
                    call_id: "c1".into(),
                    tool: "bash".into(),
                    outcome: ApprovalOutcome::AllowedAlways,
                },
            ),
            Record::new(
                4,
                170,
                Event::ToolResult {
                    outcome: Arc::new(Outcome::success(
                        CallId::from("c1"),
                        "bash",
                        json!({"stdout": "<b>\\n", "stderr": "", "exit_code": 0}),
                        tack_core::tool::ContentBlock::text("<b>"),
                    )),
                    index: 0,
                },
            ),
        ]
    }

    #[test]
    fn an_approval_is_shown_on_its_calls_card_and_cleared_by_its_answer() {
        let mut page = Page::new(ToolRegistry::new());
        let all = records();
        page.apply(&all[0]);
        let asked = items(&page.apply(&all[1]));
        assert_eq!(asked.len(), 1);
        assert_eq!(asked[0].0, "i-1", "the call's own card");
        assert!(
            asked[0].1.contains("needs approval: commands ask"),
            "{}",
            asked[0].1
        );
        assert!(asked[0].1.contains("<div class=\"prompt\"></div>"));
        assert_eq!(page.awaiting_approval("c1").as_deref(), Some("i-1"));
        assert_eq!(page.awaiting_approval("c2"), None);
        let answered = items(&page.apply(&all[2]));
        assert!(
            answered[0].1.contains("approved for this session"),
            "{}",
            answered[0].1
        );
        assert!(!answered[0].1.contains("prompt"));
        assert_eq!(page.awaiting_approval("c1"), None);
        let done = items(&page.apply(&all[3]));
        assert!(done[0].1.contains("state-ok"));
        assert!(
            done[0].1.contains("<pre class=\"out\">&lt;b&gt;"),
            "{}",
            done[0].1
        );
        assert!(done[0].1.contains("exit code 0"));
        assert!(!done[0].1.contains("<b>"));
    }

    #[test]
    fn the_timeline_shows_steps_with_their_tokens_and_parallel_calls_in_lanes() {
        use tack_agent::Usage;
        let mut page = Page::new(ToolRegistry::new());
        let usage = Usage {
            input_tokens: 120,
            output_tokens: 30,
        };
        let call = |seq, ts, id: &str, index| {
            Record::new(
                seq,
                ts,
                Event::ToolCall {
                    call_id: id.into(),
                    tool: "read_file".into(),
                    arguments: "{}".into(),
                    index,
                },
            )
        };
        let result = |seq, ts, id: &str, index| {
            Record::new(
                seq,
                ts,
                Event::ToolResult {
                    outcome: Arc::new(Outcome::success(
                        CallId::from(id),
                        "read_file",
                        json!(null),
                        tack_core::tool::ContentBlock::text("x"),
                    )),
                    index,
                },
            )
        };
        for record in [
            Record::new(1, 1000, Event::User { text: "go".into() }),
            Record::new(
                2,
                1400,
                Event::ModelUsage {
                    usage,
                    session: usage,
                },
            ),
            call(3, 1400, "a", 0),
            call(4, 1400, "b", 1),
            result(5, 1600, "a", 0),
            result(6, 1800, "b", 1),
        ] {
            page.apply(&record);
        }
        let svg = page.timeline();
        assert!(
            svg.contains("model step 1: 400 ms, 120 in / 30 out tokens"),
            "{svg}"
        );
        assert!(svg.contains(">120/30</text>"), "{svg}");
        assert!(svg.contains("read_file a: 200 ms"), "{svg}");
        assert!(svg.contains("read_file b: 400 ms"), "{svg}");
        assert!(
            svg.contains(">calls 2</text>"),
            "two calls at once, two lanes: {svg}"
        );
        assert!(!svg.contains(">calls 3</text>"), "{svg}");
    }

    #[test]
    fn the_same_records_render_the_same_page() {
        let render = || {
            let mut page = Page::new(ToolRegistry::new());
            records()
                .iter()
                .flat_map(|r| page.apply(r))
                .collect::<Vec<_>>()
        };
        assert_eq!(render(), render());
    }
}
