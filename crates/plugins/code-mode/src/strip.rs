//! TypeScript → JavaScript by erasing types (`swc_ts_fast_strip`, strip-only).

use std::io::Write;
use std::sync::{Arc, Mutex};

use swc_common::errors::Handler;
use swc_common::sync::Lrc;
use swc_common::{SourceMap, errors::SourceMapperDyn};
use swc_ts_fast_strip::{Mode, Options, operate};

#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl Write for Buffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Ok(mut inner) = self.0.lock() {
            inner.extend_from_slice(buf);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Why stripping failed.
#[derive(Debug)]
pub(crate) enum StripError {
    /// Not parseable (line and column in the message).
    Syntax(String),
    /// TypeScript that has runtime semantics (enums, namespaces, parameter
    /// properties, ...).
    NonErasable(String),
}

/// Wraps `code` as the body of an async function (on the same first line, so
/// line numbers are the program's) and erases its types.
pub(crate) fn prepare(code: &str) -> Result<String, StripError> {
    let wrapped = format!("(async () => {{{code}\n}})()");
    let cm: Lrc<SourceMap> = Lrc::new(SourceMap::default());
    let buffer = Buffer::default();
    let mapper: Lrc<SourceMapperDyn> = cm.clone();
    let handler = Handler::with_emitter_writer(Box::new(buffer.clone()), Some(mapper));
    let options = Options {
        module: Some(false),
        filename: Some("program.ts".to_owned()),
        mode: Mode::StripOnly,
        ..Options::default()
    };
    match operate(&cm, &handler, wrapped, options) {
        Ok(output) => Ok(output.code),
        Err(error) => {
            let diagnostics = buffer
                .0
                .lock()
                .map(|b| String::from_utf8_lossy(&b).trim().to_owned())
                .unwrap_or_default();
            let message = if diagnostics.is_empty() {
                error.message.clone()
            } else {
                format!("{}\n{diagnostics}", error.message)
            };
            match error.code {
                swc_ts_fast_strip::ErrorCode::UnsupportedSyntax => {
                    Err(StripError::NonErasable(message))
                }
                _ => Err(StripError::Syntax(message)),
            }
        }
    }
}
