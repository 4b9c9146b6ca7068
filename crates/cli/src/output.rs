//! Printing events: rendered lines, or JSONL.

use std::io::Write;
use std::sync::Mutex;

use tack_agent::{Event, Record, Renderer, Style};
use tack_pipeline::ToolRegistry;

/// Prints records as text lines or JSONL on stdout, and an answer's text as
/// it streams in.
pub struct EventPrinter {
    renderer: Mutex<Renderer>,
    json: bool,
    /// Whether a streamed answer's line is open (printed without its end).
    streaming: Mutex<bool>,
}

impl EventPrinter {
    /// A printer; `style` applies to text lines.
    pub fn new(registry: ToolRegistry, style: Style, json: bool) -> Self {
        Self {
            renderer: Mutex::new(Renderer::new(registry, style)),
            json,
            streaming: Mutex::new(false),
        }
    }

    /// Prints a piece of the answer as it arrives (text output only): the
    /// `[assistant]` prefix first, then the escaped pieces; the answer's
    /// record then only ends the line.
    pub fn stream_text(&self, piece: &str) {
        if self.json || piece.is_empty() {
            return;
        }
        let renderer = self.renderer.lock().unwrap_or_else(|e| e.into_inner());
        let mut open = self.streaming.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = std::io::stdout().lock();
        if !*open {
            let _ = write!(out, "{}", renderer.streamed_answer_start());
            *open = true;
        }
        let _ = write!(out, "{}", renderer.streamed_text(piece));
        let _ = out.flush();
    }

    /// The text for `record`, if it shows anything.
    pub fn line(&self, record: &Record) -> Option<String> {
        if self.json {
            return Some(record.to_line());
        }
        // A poisoned lock only means an earlier print panicked; keep going.
        let mut renderer = self.renderer.lock().unwrap_or_else(|e| e.into_inner());
        renderer.render(record)
    }

    /// Prints one record's line, if any.
    pub fn print(&self, record: &Record) {
        if let Some(line) = self.line(record) {
            let mut open = self.streaming.lock().unwrap_or_else(|e| e.into_inner());
            let mut out = std::io::stdout().lock();
            if std::mem::take(&mut *open) {
                // End the streamed line; the answer itself is already shown.
                let _ = writeln!(out);
                if matches!(
                    record.event,
                    Event::Assistant { .. } | Event::AssistantNote { .. }
                ) && !self.json
                {
                    let _ = out.flush();
                    return;
                }
            }
            // A closed stdout (e.g. `| head`) must not stop the session.
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        }
    }
}

/// The text style for stdout, as anstream decides it: colour on a terminal
/// that supports it, never with `NO_COLOR` (non-empty) or `CLICOLOR=0`,
/// always with `CLICOLOR_FORCE` (not `0`) unless `NO_COLOR` is set.
pub fn stdout_style() -> Style {
    match anstream::AutoStream::choice(&std::io::stdout()) {
        anstream::ColorChoice::Never => Style::Plain,
        _ => Style::Color,
    }
}

/// Prints `text` and a newline on stdout; a closed stdout is not an error.
pub fn print_text(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}");
    let _ = out.flush();
}
