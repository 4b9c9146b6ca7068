//! TypeScript → JavaScript by erasing types (`swc_ts_fast_strip`, strip-only).

#[cfg(feature = "typescript")]
use std::sync::{Arc, Mutex};

#[cfg(feature = "typescript")]
use swc_common::SourceMap;
#[cfg(feature = "typescript")]
use swc_common::errors::{DiagnosticBuilder, Emitter, Handler};
#[cfg(feature = "typescript")]
use swc_common::sync::Lrc;
#[cfg(feature = "typescript")]
use swc_ts_fast_strip::{Mode, Options, operate};

#[cfg(feature = "typescript")]
use crate::location::Program;
use crate::location::{Position, wrap};

#[cfg(feature = "typescript")]
/// At most this many diagnostics are quoted in one error (the first one is
/// usually the cause; the rest are often consequences).
const MAX_DIAGNOSTICS: usize = 3;

#[cfg(feature = "typescript")]
/// A parser diagnostic: its message and where it points (a byte offset in
/// the wrapped text).
#[derive(Debug)]
struct Diagnostic {
    message: String,
    offset: Option<usize>,
}

#[cfg(feature = "typescript")]
/// A diagnostic as emitted: its message and its primary span's start (a
/// position in the source map).
type Emitted = (String, Option<u32>);

#[cfg(feature = "typescript")]
/// Collects the parser's diagnostics instead of printing them (printing would
/// quote the wrapped text, not the program).
#[derive(Clone, Default)]
struct Collector(Arc<Mutex<Vec<Emitted>>>);

#[cfg(feature = "typescript")]
impl Emitter for Collector {
    fn emit(&mut self, db: &mut DiagnosticBuilder<'_>) {
        let at = db.span.primary_span().map(|span| span.lo().0);
        if let Ok(mut seen) = self.0.lock() {
            seen.push((db.message(), at));
        }
    }
}

/// Why stripping failed.
#[derive(Debug)]
#[cfg_attr(not(feature = "typescript"), allow(dead_code))]
pub(crate) enum StripError {
    /// Not parseable: the located message, and the first error's position
    /// in the program.
    Syntax {
        message: String,
        at: Option<Position>,
    },
    /// TypeScript that has runtime semantics (enums, namespaces, parameter
    /// properties, ...).
    NonErasable {
        message: String,
        at: Option<Position>,
    },
}

#[cfg(feature = "typescript")]
/// Wraps `code` as the body of an async function (see [`crate::location`])
/// and erases its types. Errors point at the program's own lines.
pub(crate) fn prepare(code: &str) -> Result<String, StripError> {
    let cm: Lrc<SourceMap> = Lrc::new(SourceMap::default());
    let collector = Collector::default();
    let handler = Handler::with_emitter(true, false, Box::new(collector.clone()));
    let options = Options {
        module: Some(false),
        filename: Some("program.ts".to_owned()),
        mode: Mode::StripOnly,
        ..Options::default()
    };
    let error = match operate(&cm, &handler, wrap(code), options) {
        Ok(output) => return Ok(output.code),
        Err(error) => error,
    };
    let start = cm.files().first().map_or(0, |file| file.start_pos.0);
    let diagnostics: Vec<Diagnostic> = collector
        .0
        .lock()
        .map(|seen| {
            seen.iter()
                .map(|(message, at)| Diagnostic {
                    message: message.clone(),
                    offset: at.map(|lo| lo.saturating_sub(start) as usize),
                })
                .collect()
        })
        .unwrap_or_default();
    let program = Program::new(code);
    let (kind, non_erasable) = match error.code {
        swc_ts_fast_strip::ErrorCode::UnsupportedSyntax => {
            ("non-erasable TypeScript (use plain types only)", true)
        }
        _ => ("SyntaxError", false),
    };
    let mut at = None;
    let mut parts = Vec::new();
    for diagnostic in diagnostics.iter().take(MAX_DIAGNOSTICS) {
        match diagnostic.offset {
            Some(offset) => {
                let position = program.map_offset(offset);
                at.get_or_insert(position);
                parts.push(program.describe(kind, &diagnostic.message, position));
            }
            None => parts.push(format!("{kind}: {}", diagnostic.message)),
        }
    }
    if diagnostics.len() > MAX_DIAGNOSTICS {
        parts.push(format!(
            "({} more errors not shown)",
            diagnostics.len() - MAX_DIAGNOSTICS
        ));
    }
    let message = if parts.is_empty() {
        format!("{kind}: {}", error.message)
    } else {
        parts.join("\n")
    };
    Err(if non_erasable {
        StripError::NonErasable { message, at }
    } else {
        StripError::Syntax { message, at }
    })
}

/// Without the `typescript` feature programs are JavaScript: wrapped as
/// they are (a type annotation is then the engine's syntax error).
#[cfg(not(feature = "typescript"))]
pub(crate) fn prepare(code: &str) -> Result<String, StripError> {
    Ok(wrap(code))
}

#[cfg(all(test, feature = "typescript"))]
mod tests {
    use super::*;

    fn syntax(code: &str) -> (String, Position) {
        match prepare(code) {
            Err(StripError::Syntax {
                message,
                at: Some(at),
            }) => (message, at),
            other => panic!("expected a located syntax error: {other:?}"),
        }
    }

    #[test]
    fn types_are_erased_in_place() {
        let out = prepare("const a: number = 1;\nreturn a;").unwrap();
        assert!(out.contains("const a") && !out.contains("number"), "{out}");
    }

    #[test]
    fn a_syntax_error_on_line_three_points_at_line_three() {
        let (message, at) = syntax("const a = 1;\nconst b = 2;\nconst = 3;\nreturn a;");
        assert_eq!((at.line, at.column), (3, 7), "{message}");
        assert!(message.contains("\n 3 | const = 3;\n"), "{message}");
        assert!(!message.contains("async"), "no wrapper text: {message}");
    }

    #[test]
    fn a_syntax_error_on_the_first_line_has_the_program_column() {
        let (message, at) = syntax("let x = ;");
        assert_eq!((at.line, at.column), (1, 9), "{message}");
    }

    #[test]
    fn an_unclosed_brace_is_at_the_end_of_the_program() {
        let (message, at) = syntax("if (true) {\n  console.log(1);");
        assert_eq!(at.line, 2, "{message}");
        assert!(at.at_end, "{message}");
        assert!(message.contains("end of the program"), "{message}");
        assert!(!message.contains("})()"), "no wrapper text: {message}");
    }

    #[test]
    fn non_erasable_typescript_is_located() {
        match prepare("const a = 1;\nenum Color { Red }\nreturn a;") {
            Err(StripError::NonErasable {
                message,
                at: Some(at),
            }) => assert_eq!(at.line, 2, "{message}"),
            other => panic!("expected non-erasable: {other:?}"),
        }
    }
}
