//! A tool call's card: its state, and its HTML from the tool's presentation.

use std::sync::Arc;

use serde_json::Value;
use tack_core::host::{default_present_call, default_present_result};
use tack_core::policy::ApprovalOutcome;
use tack_core::tool::{ContentBlock, Outcome};
use tack_pipeline::ToolRegistry;

use crate::html::{clipped, escape_html};

/// The most characters one block of a card shows (output, file, diff).
const MAX_SHOWN: usize = 20_000;

/// One call as the page shows it, built from its records alone.
#[derive(Clone, Debug)]
pub(crate) struct Card {
    /// The element's id: `i-SEQ`, the sequence number of the record that
    /// opened the card.
    pub dom_id: String,
    /// The call's id.
    pub call_id: String,
    /// The tool's name, as called.
    pub tool: String,
    /// The arguments (null when they are not JSON).
    pub args: Value,
    /// When the call was made (ms since the epoch).
    pub started: u64,
    /// The approval asked for, if any.
    pub approval: Option<Approval>,
    /// When the result came, and the result.
    pub result: Option<(u64, Arc<Outcome>)>,
    /// The calls a `run_code` program made, one line each.
    pub nested: Vec<String>,
}

/// An approval request on a card, and its answer.
#[derive(Clone, Debug)]
pub(crate) struct Approval {
    /// When it was asked.
    pub asked: u64,
    /// Why the policy asked.
    pub reason: String,
    /// When and how it was answered.
    pub answered: Option<(u64, ApprovalOutcome)>,
}

/// `12 ms`, `1.50 s`.
pub(crate) fn duration(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else {
        format!("{}.{:02} s", ms / 1000, (ms % 1000) / 10)
    }
}

impl Card {
    /// A card for a call made at `ts`.
    pub fn new(seq: u64, ts: u64, call_id: &str, tool: &str, args: Value) -> Self {
        Self {
            dom_id: format!("i-{seq}"),
            call_id: call_id.to_owned(),
            tool: tool.to_owned(),
            args,
            started: ts,
            approval: None,
            result: None,
            nested: Vec::new(),
        }
    }

    /// Whether an approval was asked and not answered yet.
    pub fn awaiting_approval(&self) -> bool {
        self.approval.as_ref().is_some_and(|a| a.answered.is_none())
    }

    /// The one-line description of the call, from the tool's presenter.
    pub fn title(&self, registry: &ToolRegistry) -> String {
        match registry.get(&self.tool, None) {
            Some(tool) => tool.definition().present_call(&self.args),
            None => default_present_call(&self.tool, &self.args),
        }
    }

    fn summary(&self, registry: &ToolRegistry, outcome: &Outcome) -> String {
        match registry.get(&outcome.tool, None) {
            // A replaced content's value is not logged: the presenter would
            // read a value that is not there.
            Some(tool) if !outcome.content_replaced => {
                tool.definition().present_result(&self.args, outcome)
            }
            _ => default_present_result(outcome),
        }
    }

    /// The card's state: `ok`, `err`, `wait` (for approval) or `run`.
    pub fn state(&self) -> &'static str {
        match &self.result {
            Some((_, outcome)) if outcome.is_success() => "ok",
            Some(_) => "err",
            None if self.awaiting_approval() => "wait",
            None => "run",
        }
    }

    /// The card's HTML; times are shown from `t0`.
    pub fn html(&self, registry: &ToolRegistry, t0: u64) -> String {
        let state = self.state();
        let status = match &self.result {
            Some((_, outcome)) => match outcome.failure_info() {
                None => "ok".to_owned(),
                Some(failure) => failure.code().to_string(),
            },
            None if state == "wait" => "awaiting approval".to_owned(),
            None => "running".to_owned(),
        };
        let mut out = format!(
            "<section class=\"card state-{state} kind-{kind}\" id=\"{id}\" data-call-id=\"{call}\" data-tool=\"{tool}\">\
             <header><span class=\"tool\">{tool}</span><span class=\"title\">{title}</span>\
             <span class=\"status\">{status}</span><span class=\"t\">+{at}</span>",
            kind = self.kind(),
            id = escape_html(&self.dom_id),
            call = escape_html(&self.call_id),
            tool = escape_html(&self.tool),
            title = escape_html(&self.title(registry)),
            status = escape_html(&status),
            at = duration(self.started.saturating_sub(t0)),
        );
        if let Some((ended, _)) = &self.result {
            out.push_str(&format!(
                "<span class=\"d\">{}</span>",
                duration(ended.saturating_sub(self.started))
            ));
        }
        out.push_str("</header>");
        if let Some(approval) = &self.approval {
            out.push_str(&approval_html(approval, &self.tool));
            if approval.answered.is_none() {
                // Filled by the live page with the buttons of a pending request.
                out.push_str("<div class=\"prompt\"></div>");
            }
        }
        out.push_str(&self.body());
        if let Some((_, outcome)) = &self.result {
            if outcome.is_success() {
                out.push_str(&format!(
                    "<div class=\"summary\">{}</div>",
                    escape_html(&self.summary(registry, outcome))
                ));
            }
            if let Some(failure) = outcome.failure_info() {
                out.push_str(&format!(
                    "<div class=\"error\"><b>{}</b> {}</div>",
                    escape_html(&failure.code().to_string()),
                    escape_html(failure.message())
                ));
            }
            if let Some(provenance) = &outcome.provenance {
                out.push_str(&format!(
                    "<div class=\"provenance\">decided by {}</div>",
                    escape_html(&provenance.to_string())
                ));
            }
            for note in &outcome.notes {
                out.push_str(&format!("<div class=\"note\">{}</div>", escape_html(note)));
            }
        }
        if !self.nested.is_empty() {
            out.push_str("<ul class=\"nested\">");
            for line in &self.nested {
                out.push_str(&format!("<li>{}</li>", escape_html(line)));
            }
            out.push_str("</ul>");
        }
        out.push_str("</section>");
        out
    }

    fn outcome(&self) -> Option<&Outcome> {
        self.result.as_ref().map(|(_, o)| o.as_ref())
    }

    fn meta(&self) -> Option<&Value> {
        self.outcome().and_then(|o| o.presentation.as_ref())
    }

    /// Which card: `diff`, `write`, `command`, `file` or `generic`.
    fn kind(&self) -> &'static str {
        if self
            .meta()
            .and_then(|m| m.get("kind"))
            .and_then(Value::as_str)
            == Some("diff")
        {
            return "diff";
        }
        match self.tool.as_str() {
            "edit_file" => "diff",
            "write_file" => "write",
            "bash" => "command",
            "read_file" => "file",
            _ => "generic",
        }
    }

    fn arg(&self, name: &str) -> Option<&str> {
        self.args.get(name).and_then(Value::as_str)
    }

    fn body(&self) -> String {
        match self.kind() {
            "diff" => self.diff_body(),
            "write" => self.write_body(),
            "command" => self.command_body(),
            "file" => self.file_body(),
            _ => self.generic_body(),
        }
    }

    fn diff_body(&self) -> String {
        let path = self
            .meta()
            .and_then(|m| m.get("path"))
            .and_then(Value::as_str)
            .or_else(|| self.arg("path"))
            .unwrap_or_default();
        let diff = match self
            .meta()
            .and_then(|m| m.get("diff"))
            .and_then(Value::as_str)
        {
            Some(diff) => diff.to_owned(),
            // Before the result (or when it failed): the change asked for.
            None => {
                let mut planned = String::new();
                for line in self.arg("old_string").unwrap_or_default().lines() {
                    planned.push_str(&format!("-{line}\n"));
                }
                for line in self.arg("new_string").unwrap_or_default().lines() {
                    planned.push_str(&format!("+{line}\n"));
                }
                planned
            }
        };
        format!(
            "<div class=\"body\"><div class=\"path\">{}</div>{}</div>",
            escape_html(path),
            diff_html(&diff)
        )
    }

    fn write_body(&self) -> String {
        let path = self.arg("path").unwrap_or_default();
        let mut head = escape_html(path);
        if let Some(meta) = self.meta() {
            let created = meta.get("created").and_then(Value::as_bool) == Some(true);
            head.push_str(&format!(
                " <span class=\"meta\">{} · {} bytes · {} lines</span>",
                if created { "created" } else { "replaced" },
                meta.get("bytes_written")
                    .and_then(Value::as_u64)
                    .unwrap_or(0),
                meta.get("lines").and_then(Value::as_u64).unwrap_or(0),
            ));
        }
        let mut added = String::new();
        for line in self.arg("content").unwrap_or_default().lines() {
            added.push_str(&format!("+{line}\n"));
        }
        format!(
            "<div class=\"body\"><div class=\"path\">{head}</div>{}</div>",
            diff_html(&added)
        )
    }

    fn command_body(&self) -> String {
        let mut out = format!(
            "<div class=\"body\"><pre class=\"cmd\">$ {}</pre>",
            escape_html(&clipped(self.arg("command").unwrap_or_default(), MAX_SHOWN))
        );
        if let Some(value) = self
            .outcome()
            .and_then(Outcome::value)
            .filter(|v| v.is_object())
        {
            let text = |name: &str| value.get(name).and_then(Value::as_str).unwrap_or_default();
            if !text("stdout").is_empty() {
                out.push_str(&format!(
                    "<pre class=\"out\">{}</pre>",
                    escape_html(&clipped(text("stdout"), MAX_SHOWN))
                ));
            }
            if !text("stderr").is_empty() {
                out.push_str(&format!(
                    "<pre class=\"stderr\">{}</pre>",
                    escape_html(&clipped(text("stderr"), MAX_SHOWN))
                ));
            }
            let exit = if value.get("timed_out").and_then(Value::as_bool) == Some(true) {
                "timed out".to_owned()
            } else if let Some(code) = value.get("exit_code").and_then(Value::as_i64) {
                format!("exit code {code}")
            } else if let Some(signal) = value.get("signal").and_then(Value::as_i64) {
                format!("killed by signal {signal}")
            } else {
                "no exit code".to_owned()
            };
            out.push_str(&format!("<div class=\"exit\">{}</div>", escape_html(&exit)));
        } else if let Some(outcome) = self.outcome().filter(|o| o.is_success()) {
            // The value was not logged (a listener replaced the content).
            out.push_str(&content_html(outcome));
        }
        out.push_str("</div>");
        out
    }

    fn file_body(&self) -> String {
        let mut out = format!(
            "<div class=\"body\"><div class=\"path\">{}</div>",
            escape_html(self.arg("path").unwrap_or_default())
        );
        if let Some(outcome) = self.outcome().filter(|o| o.is_success()) {
            out.push_str(&content_html(outcome));
        }
        out.push_str("</div>");
        out
    }

    fn generic_body(&self) -> String {
        let args = serde_json::to_string_pretty(&self.args).unwrap_or_default();
        let mut out = format!(
            "<div class=\"body\"><pre class=\"args\">{}</pre>",
            escape_html(&clipped(&args, MAX_SHOWN))
        );
        if let Some(outcome) = self.outcome().filter(|o| o.is_success()) {
            out.push_str(&content_html(outcome));
        }
        out.push_str("</div>");
        out
    }
}

/// The approval line: asked, and how it was answered.
fn approval_html(approval: &Approval, tool: &str) -> String {
    match &approval.answered {
        None => format!(
            "<div class=\"approval asked\">needs approval: {}</div>",
            escape_html(&approval.reason)
        ),
        Some((at, outcome)) => {
            let text = if matches!(outcome, ApprovalOutcome::AllowedAlways) {
                "approved for this session".to_owned()
            } else if outcome.is_allowed() {
                "approved once".to_owned()
            } else {
                outcome.denial_message(tool)
            };
            format!(
                "<div class=\"approval {}\">{} <span class=\"d\">after {}</span></div>",
                if outcome.is_allowed() {
                    "allowed"
                } else {
                    "denied"
                },
                escape_html(&text),
                duration(at.saturating_sub(approval.asked))
            )
        }
    }
}

/// A unified diff, one span per line, classed by its first character.
fn diff_html(diff: &str) -> String {
    let diff = clipped(diff, MAX_SHOWN);
    let mut out = String::from("<pre class=\"diff\">");
    for line in diff.lines() {
        let class = if line.starts_with("+++") || line.starts_with("---") {
            "file"
        } else if line.starts_with('+') {
            "add"
        } else if line.starts_with('-') {
            "del"
        } else if line.starts_with("@@") {
            "hunk"
        } else {
            "ctx"
        };
        out.push_str(&format!(
            "<span class=\"{class}\">{}</span>",
            escape_html(line)
        ));
    }
    out.push_str("</pre>");
    out
}

/// The text the model read (images counted, not shown).
fn content_html(outcome: &Outcome) -> String {
    let mut text = String::new();
    let mut images = 0;
    for block in outcome.content.iter() {
        match block {
            ContentBlock::Image { .. } => images += 1,
            other => {
                if let Some(t) = other.as_text() {
                    text.push_str(t);
                }
            }
        }
    }
    let mut out = format!(
        "<pre class=\"content\">{}</pre>",
        escape_html(&clipped(&text, MAX_SHOWN))
    );
    if images > 0 {
        out.push_str(&format!(
            "<div class=\"meta\">{images} image{}</div>",
            if images == 1 { "" } else { "s" }
        ));
    }
    out
}
