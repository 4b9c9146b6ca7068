//! Turning events into the lines a user reads, live and on replay.

use std::collections::HashMap;

use serde_json::Value;
use tack_core::host::{default_present_call, default_present_result};
use tack_core::policy::ApprovalOutcome;
use tack_core::tool::{ContentBlock, Outcome};
use tack_pipeline::ToolRegistry;

use crate::escape::{escape_block, escape_line};
use crate::event::{Event, Record, TurnEndReason};

/// Where continuation lines of multi-line text start.
const INDENT: &str = "  ";

/// How lines look.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Style {
    /// Plain text (piped output, files, tests).
    #[default]
    Plain,
    /// ANSI colours on the prefixes (a terminal).
    Color,
}

/// Renders events through the tools' pure `present_call` / `present_result`
/// functions, so a replayed log prints exactly what the live run printed.
///
/// Lines look like the seed's demo: `[user] …`, `[tool:read_file] -> ok` or
/// `[tool:read_file] -> ERR CODE: message`, `[assistant] …`.
///
/// Everything shown comes from outside the host (tool names, arguments,
/// outputs, model text), so control characters are escaped: names, ids and
/// codes with [`escape_line`] (never a raw line feed), free text with
/// [`escape_block`] (line feeds kept, continuation lines indented by two
/// spaces). Every line starts with a `[…]` prefix the renderer wrote itself,
/// or with whitespace.
///
/// ```
/// use std::sync::Arc;
/// use tack_agent::{Event, Record, Renderer, Style};
/// use tack_core::tool::{CallId, ErrorCode, ToolError, Outcome};
/// use tack_core::host::{NewToolError, NewOutcome};
/// let mut r = Renderer::new(tack_pipeline::ToolRegistry::new(), Style::Plain);
/// let rec = |event| Record::new(1, 0, event);
/// assert_eq!(r.render(&rec(Event::User { text: "读文件 README.md".into() })).as_deref(), Some("[user] 读文件 README.md"));
/// let failed = Outcome::failure(CallId::from("c1"), "read_file", ToolError::from_code(ErrorCode::ExecutionFailed, "no such file"));
/// assert_eq!(
///     r.render(&rec(Event::ToolResult { outcome: Arc::new(failed), index: 0 })).as_deref(),
///     Some("[tool:read_file] -> ERR EXECUTION_FAILED: no such file"),
/// );
/// ```
#[derive(Debug)]
pub struct Renderer {
    registry: ToolRegistry,
    style: Style,
    /// Arguments by call id (for approval lines).
    arguments: HashMap<String, Value>,
    /// Arguments of the current batch by position (ids may repeat).
    batch: Vec<Value>,
    /// Settled `run_code` sub-calls, per parent call, shown under its result.
    nested: HashMap<String, Vec<String>>,
}

impl Renderer {
    /// A renderer that finds tool definitions in `registry`.
    pub fn new(registry: ToolRegistry, style: Style) -> Self {
        Self {
            registry,
            style,
            arguments: HashMap::new(),
            batch: Vec::new(),
            nested: HashMap::new(),
        }
    }

    fn prefix(&self, label: &str, color: &str) -> String {
        match self.style {
            Style::Plain => format!("[{label}]"),
            Style::Color => format!("\x1b[{color}m[{label}]\x1b[0m"),
        }
    }

    fn present_call(&self, call_id: &str, tool: &str) -> String {
        let args = self.arguments.get(call_id).cloned().unwrap_or(Value::Null);
        match self.registry.get(tool, None) {
            Some(t) => t.definition().present_call(&args),
            // A name no tool has (the model's): shown escaped, on one line.
            None => default_present_call(&escape_line(tool), &args),
        }
    }

    fn present_result(&self, outcome: &Outcome, index: usize) -> String {
        let args = self
            .batch
            .get(index)
            .or_else(|| self.arguments.get(outcome.call_id.as_str()))
            .cloned()
            .unwrap_or(Value::Null);
        match self.registry.get(&outcome.tool, None) {
            // A replaced content's value is not logged: the tool's presenter
            // would read a value that is not there.
            Some(t) if !outcome.content_replaced => t.definition().present_result(&args, outcome),
            _ => default_present_result(outcome),
        }
    }

    /// The start of an answer streamed as it arrives: the `[assistant] `
    /// prefix its [`Event::Assistant`] line would have. Follow it with
    /// [`streamed_text`](Self::streamed_text) for each piece; the pieces
    /// together print exactly what [`render`](Self::render) prints for the
    /// whole answer.
    pub fn streamed_answer_start(&self) -> String {
        format!("{} ", self.prefix("assistant", "1;32"))
    }

    /// One piece of a streamed answer, escaped as its whole line would be.
    pub fn streamed_text(&self, piece: &str) -> String {
        escape_block(piece, INDENT)
    }

    /// The text for one record (possibly several lines), or `None` for
    /// events that print nothing (a call is shown with its result).
    pub fn render(&mut self, record: &Record) -> Option<String> {
        match &record.event {
            Event::User { text } => Some(format!(
                "{} {}",
                self.prefix("user", "1;36"),
                escape_block(text, INDENT)
            )),
            Event::Assistant { text } | Event::AssistantNote { text } => Some(format!(
                "{} {}",
                self.prefix("assistant", "1;32"),
                escape_block(text, INDENT)
            )),
            Event::ToolCall {
                call_id,
                arguments,
                index,
                ..
            } => {
                let args: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
                if *index == 0 {
                    self.batch.clear();
                }
                if self.batch.len() <= *index {
                    self.batch.resize(*index + 1, Value::Null);
                }
                self.batch[*index] = args.clone();
                self.arguments.insert(call_id.clone(), args);
                None
            }
            // The request carries its own summary: a code-mode sub-call was
            // never shown as a `tool/call`, so its arguments are known only here.
            Event::ApprovalRequest { request } => Some(format!(
                "{} {} needs approval: {}",
                self.prefix("approval", "1;33"),
                escape_block(
                    &if request.summary.is_empty() {
                        self.present_call(request.call_id.as_str(), &request.tool)
                    } else {
                        request.summary.clone()
                    },
                    INDENT
                ),
                escape_block(&request.reason, INDENT)
            )),
            Event::ApprovalOutcome { tool, outcome, .. } => {
                let tool = escape_line(tool);
                Some(format!(
                    "{} {}",
                    self.prefix("approval", "1;33"),
                    escape_block(
                        &if matches!(outcome, ApprovalOutcome::AllowedAlways) {
                            format!("tool `{tool}` approved for this session")
                        } else if outcome.is_allowed() {
                            format!("tool `{tool}` approved once")
                        } else {
                            outcome.denial_message(&tool)
                        },
                        INDENT
                    )
                ))
            }
            Event::ToolResult { outcome, index } => {
                let color = if outcome.is_success() { "1;34" } else { "1;31" };
                let mut text = format!(
                    "{} -> {}",
                    self.prefix(&format!("tool:{}", escape_line(&outcome.tool)), color),
                    escape_block(&self.present_result(outcome, *index), INDENT)
                );
                // A `run_code` result lists the calls its program made.
                for line in self
                    .nested
                    .remove(outcome.call_id.as_str())
                    .into_iter()
                    .flatten()
                {
                    text.push_str("\n  ↳ ");
                    text.push_str(&line);
                }
                Some(text)
            }
            Event::CodeDispatchStart { .. }
            | Event::SessionStart { .. }
            | Event::ModelUsage { .. } => None,
            Event::CodeDispatch {
                parent_call_id,
                call_id,
                tool,
                code,
                ..
            } => {
                let status = code
                    .as_deref()
                    .map_or_else(|| "ok".to_owned(), |c| format!("ERR {}", escape_line(c)));
                self.nested
                    .entry(parent_call_id.clone())
                    .or_default()
                    .push(format!(
                        "[tool:{}] {} -> {status}",
                        escape_line(tool),
                        escape_line(call_id)
                    ));
                None
            }
            Event::ContextDeferred { context, .. } => {
                let mut text = context.text();
                let images = context
                    .content
                    .iter()
                    .filter(|block| matches!(block, ContentBlock::Image { .. }))
                    .count();
                if images > 0 {
                    if !text.is_empty() {
                        text.push(' ');
                    }
                    text.push_str(&format!(
                        "({images} image{})",
                        if images == 1 { "" } else { "s" }
                    ));
                }
                if let Some(source) = context.source() {
                    text.push_str(&format!(" — from {}", escape_line(source)));
                }
                Some(format!(
                    "{} {}",
                    self.prefix("context", "2"),
                    escape_block(&text, INDENT)
                ))
            }
            Event::TurnEnd {
                reason: TurnEndReason::MaxSteps,
                steps,
            } => Some(format!(
                "{} the turn reached the step limit ({steps} model calls) without a final answer; raise --max-steps or narrow the request",
                self.prefix("stopped", "1;31")
            )),
            Event::TurnEnd {
                reason: TurnEndReason::Cancelled,
                ..
            } => Some(format!(
                "{} the turn was cancelled; running calls ended CANCELLED and the model was not asked again",
                self.prefix("stopped", "1;31")
            )),
            Event::TurnEnd {
                reason: TurnEndReason::EmptyReply,
                ..
            } => Some(format!(
                "{} the model replied with neither text nor a tool call; the turn ended without an answer",
                self.prefix("stopped", "1;31")
            )),
            Event::HookContext { hook, context } => Some(format!(
                "{} {} — from the {} hook",
                self.prefix("context", "2"),
                escape_block(&context.text(), INDENT),
                escape_line(hook)
            )),
            Event::PromptBlocked { reason } => Some(format!(
                "{} the prompt was blocked by a hook: {}",
                self.prefix("blocked", "1;31"),
                escape_block(reason, INDENT)
            )),
            Event::HookReport {
                hook,
                command,
                blocked,
                message,
            } => Some(format!(
                "{} {} hook `{}`: {}",
                if *blocked {
                    self.prefix("hook", "1;31")
                } else {
                    self.prefix("hook", "33")
                },
                escape_line(hook),
                escape_line(command),
                escape_block(message, INDENT)
            )),
            Event::TurnEnd { .. } => None,
        }
    }
}
