//! The timeline: turns, model steps and tool calls on a time axis, as SVG
//! (attributes only: the page's Content-Security-Policy allows no inline
//! styles).

use tack_agent::Usage;

use crate::card::{Card, duration};
use crate::html::escape_html;

/// One model call: from when it was asked to its reply.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Step {
    /// When the model was asked.
    pub start: u64,
    /// When it replied (its usage, its first call or its answer).
    pub end: Option<u64>,
    /// The tokens it used, when the model reported them.
    pub usage: Option<Usage>,
}

impl Step {
    /// A step asked at `start`.
    pub fn open(start: u64) -> Self {
        Self {
            start,
            end: None,
            usage: None,
        }
    }
}

/// One turn: from the prompt to its end.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Turn {
    /// The prompt's time.
    pub start: u64,
    /// The `turn/end` record's.
    pub end: Option<u64>,
}

/// What the timeline shows, as of `now`.
pub(crate) struct Timeline<'a> {
    pub t0: u64,
    pub now: u64,
    pub cards: &'a [Card],
    pub steps: &'a [Step],
    pub turns: &'a [Turn],
}

const WIDTH: u64 = 1000;
const GUTTER: u64 = 80;
const ROW: u64 = 22;
const AXIS: u64 = 20;

impl Timeline<'_> {
    fn span(&self) -> u64 {
        self.now.saturating_sub(self.t0).max(1)
    }

    /// The x of a time, in the SVG's units.
    fn x(&self, ts: u64) -> u64 {
        let plot = WIDTH - GUTTER - 10;
        GUTTER + ts.saturating_sub(self.t0).min(self.span()) * plot / self.span()
    }

    fn bar(&self, class: &str, row: u64, start: u64, end: u64, title: &str, label: &str) -> String {
        let x = self.x(start);
        let w = self.x(end).saturating_sub(x).max(2);
        let y = AXIS + row * ROW;
        // A wait for approval: a band under its call's label.
        let (top, height) = if class == "wait" {
            (y + ROW - 8, 6)
        } else {
            (y + 2, ROW - 4)
        };
        let mut out = format!(
            "<g class=\"{class}\"><rect x=\"{x}\" y=\"{top}\" width=\"{w}\" height=\"{height}\"></rect><title>{}</title>",
            escape_html(title)
        );
        // A label where it fits (about 7 units a character).
        if !label.is_empty() && w >= 7 * label.chars().count() as u64 + 6 {
            out.push_str(&format!(
                "<text x=\"{}\" y=\"{}\">{}</text>",
                x + 3,
                y + ROW - 9,
                escape_html(label)
            ));
        }
        out.push_str("</g>");
        out
    }

    /// The lanes of the calls: each call in the first lane free when it
    /// started (a call still running keeps its lane).
    fn lanes(&self) -> Vec<usize> {
        let mut ends: Vec<u64> = Vec::new();
        let mut lanes = Vec::with_capacity(self.cards.len());
        for card in self.cards {
            let end = card.result.as_ref().map_or(u64::MAX, |(ended, _)| *ended);
            let lane = match ends.iter().position(|&e| e <= card.started) {
                Some(lane) => lane,
                None => {
                    ends.push(0);
                    ends.len() - 1
                }
            };
            ends[lane] = end;
            lanes.push(lane);
        }
        lanes
    }

    /// The SVG.
    pub fn svg(&self) -> String {
        let lanes = self.lanes();
        let lane_count = lanes.iter().max().map_or(0, |l| l + 1) as u64;
        let rows = 2 + lane_count.max(1);
        let height = AXIS + rows * ROW + 4;
        let mut out = format!(
            "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {height}\" width=\"100%\" role=\"img\" aria-label=\"timeline of the session\">"
        );
        // The axis: five ticks over the session so far.
        for k in 0..=4u64 {
            let ts = self.t0 + self.span() * k / 4;
            let x = self.x(ts);
            out.push_str(&format!(
                "<g class=\"tick\"><line x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{height}\"></line><text x=\"{x}\" y=\"12\" text-anchor=\"{}\">{}</text></g>",
                AXIS - 4,
                match k {
                    0 => "start",
                    4 => "end",
                    _ => "middle",
                },
                duration(ts - self.t0)
            ));
        }
        for (row, name) in ["turns", "model"].iter().enumerate() {
            out.push_str(&format!(
                "<text class=\"row\" x=\"4\" y=\"{}\">{name}</text>",
                AXIS + row as u64 * ROW + ROW - 7
            ));
        }
        for lane in 0..lane_count.max(1) {
            out.push_str(&format!(
                "<text class=\"row\" x=\"4\" y=\"{}\">calls {}</text>",
                AXIS + (2 + lane) * ROW + ROW - 7,
                lane + 1
            ));
        }
        for (n, turn) in self.turns.iter().enumerate() {
            let end = turn.end.unwrap_or(self.now);
            out.push_str(&self.bar(
                "turn",
                0,
                turn.start,
                end,
                &format!("turn {}: {}", n + 1, duration(end - turn.start.min(end))),
                &format!("turn {}", n + 1),
            ));
        }
        for (n, step) in self.steps.iter().enumerate() {
            let end = step.end.unwrap_or(self.now);
            let tokens = step.usage.map_or_else(String::new, |u| {
                format!(", {} in / {} out tokens", u.input_tokens, u.output_tokens)
            });
            out.push_str(&self.bar(
                "step",
                1,
                step.start,
                end,
                &format!(
                    "model step {}: {}{tokens}",
                    n + 1,
                    duration(end - step.start.min(end))
                ),
                &step.usage.map_or_else(String::new, |u| {
                    format!("{}/{}", u.input_tokens, u.output_tokens)
                }),
            ));
        }
        for (card, lane) in self.cards.iter().zip(&lanes) {
            let row = 2 + *lane as u64;
            let end = card.result.as_ref().map_or(self.now, |(ended, _)| *ended);
            out.push_str(&format!("<a href=\"#{}\">", escape_html(&card.dom_id)));
            out.push_str(&self.bar(
                &format!("call state-{}", card.state()),
                row,
                card.started,
                end,
                &format!(
                    "{} {}: {}",
                    card.tool,
                    card.call_id,
                    duration(end - card.started.min(end))
                ),
                &card.tool,
            ));
            if let Some(approval) = &card.approval {
                let answered = approval.answered.as_ref().map_or(self.now, |(at, _)| *at);
                out.push_str(&self.bar(
                    "wait",
                    row,
                    approval.asked,
                    answered,
                    &format!(
                        "waited {} for approval",
                        duration(answered - approval.asked.min(answered))
                    ),
                    "",
                ));
            }
            out.push_str("</a>");
        }
        out.push_str("</svg>");
        out
    }
}
