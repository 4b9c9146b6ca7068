//! Reading a session log back, and verifying it.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::chain::{GENESIS_HASH, sha256_hex, unseal};
use crate::event::{Event, Record};

/// What [`read_log`] found in a log that passed every check.
#[derive(Debug)]
#[non_exhaustive]
pub struct LogContents {
    /// Every complete record, in file order.
    pub records: Vec<Record>,
    /// The line of each record in `records`, exactly as in the file.
    pub lines: Vec<String>,
    /// Notes for the user that do not make the log invalid: a torn last
    /// line, a log that ends mid-turn.
    pub warnings: Vec<String>,
}

/// One place where a log fails verification.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LogBreak {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong there.
    pub reason: String,
}

impl fmt::Display for LogBreak {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.reason)
    }
}

/// At most this many breaks are listed in [`LogReadError::Invalid`].
pub const MAX_REPORTED_BREAKS: usize = 20;

/// A log that cannot be read, or that fails verification.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LogReadError {
    /// The file could not be read.
    #[error("cannot read the session log {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The log fails verification: a line is not a valid record, a record
    /// was edited, removed, inserted or reordered, or the log is empty.
    #[error(
        "the session log {path} fails verification (damaged or tampered with; nothing was replayed):\n{}",
        list(.breaks, *.more)
    )]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The first breaks found, in line order (at most
        /// [`MAX_REPORTED_BREAKS`]).
        breaks: Vec<LogBreak>,
        /// How many more were found and not listed.
        more: usize,
    },
}

fn list(breaks: &[LogBreak], more: usize) -> String {
    let mut out: Vec<String> = breaks.iter().map(|b| format!("  {b}")).collect();
    if more > 0 {
        out.push(format!("  … and {more} more"));
    }
    out.join("\n")
}

/// Whether `line` can be the start of the record numbered `seq` that the
/// writer began and never finished: records start `{"seq":N,`.
fn is_torn_record(line: &str, seq: u64) -> bool {
    let head = format!("{{\"seq\":{seq},");
    !line.is_empty()
        && if line.len() < head.len() {
            head.starts_with(line)
        } else {
            line.starts_with(&head)
        }
}

/// Reads and verifies a session log.
///
/// Every line must be one record, in order:
///
/// * **schema**: a JSON object with numeric `seq` and `ts`, a known `type`
///   and that type's fields;
/// * **order**: `seq` counts 1, 2, 3, … with no gap or repeat;
/// * **hash**: the line's last member is `"hash":"<hex>"`, the SHA-256 of
///   the line's bytes without that member (the text before `,"hash":"`,
///   then `}`);
/// * **chain**: its `prev` is the `hash` of the line before (64 zeros for
///   the first).
///
/// So an edited line fails its own hash, and a removed, inserted or
/// reordered line breaks the order and the chain. Verification goes on
/// after a break (from the broken line, as if it were right) so every break
/// is reported with its line number; any break, or an empty log, is
/// [`LogReadError::Invalid`].
///
/// One case is not a break: a crash in the middle of a write leaves the
/// last line torn, without its line feed. A last line with no line feed
/// that is the start of the next record (`{"seq":N,…` with the expected
/// `N`) and not a whole one is skipped with a warning. Anything else that
/// is not a record, anywhere, is a break, and so is a log without one whole
/// record.
///
/// The chain needs no key: it catches damage and edits made without
/// recomputing every later hash. Someone who can write the file and
/// recompute hashes can forge a consistent log (or cut whole records off
/// its end); keep logs where the tools cannot write, as `tack` does.
///
/// ```
/// use std::sync::Arc;
/// use tack_agent::{Event, EventBus, LogReadError, SessionLog, read_log};
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("s.jsonl");
/// let bus = EventBus::new(Some(Arc::new(SessionLog::create(&path).unwrap())));
/// bus.emit(Event::User { text: "hi".into() }).unwrap();
/// bus.emit(Event::Assistant { text: "hello".into() }).unwrap();
/// assert_eq!(read_log(&path).unwrap().records.len(), 2);
///
/// // Someone edits the answer.
/// let text = std::fs::read_to_string(&path).unwrap().replace("hello", "HELLO");
/// std::fs::write(&path, text).unwrap();
/// let LogReadError::Invalid { breaks, .. } = read_log(&path).unwrap_err() else { panic!() };
/// assert_eq!(breaks[0].line, 2);
/// ```
///
/// # Errors
///
/// [`LogReadError::Io`], or [`LogReadError::Invalid`] listing each break.
pub fn read_log(path: &Path) -> Result<LogContents, LogReadError> {
    let bytes = std::fs::read(path).map_err(|source| LogReadError::Io {
        path: path.to_owned(),
        source,
    })?;
    verify_bytes(&bytes, path)
}

/// [`read_log`] on a log's bytes already read (`path` names it in messages).
pub(crate) fn verify_bytes(bytes: &[u8], path: &Path) -> Result<LogContents, LogReadError> {
    let (records, lines, warnings, breaks) = verify(bytes, path);
    if breaks.is_empty() && !records.is_empty() {
        return Ok(LogContents {
            records,
            lines,
            warnings,
        });
    }
    let mut breaks = breaks;
    if breaks.is_empty() {
        breaks.push(LogBreak {
            line: 1,
            reason: "the log holds no whole record (it was emptied, or the session stopped before its first record was written)"
                .to_owned(),
        });
    }
    let more = breaks.len().saturating_sub(MAX_REPORTED_BREAKS);
    breaks.truncate(MAX_REPORTED_BREAKS);
    Err(LogReadError::Invalid {
        path: path.to_owned(),
        breaks,
        more,
    })
}

fn torn_warning(path: &Path, line: usize, intact: usize) -> String {
    format!(
        "{}: line {line} is torn (the writer stopped mid-line, e.g. a crash); skipped it, the {intact} records before it are intact",
        path.display()
    )
}

type Verified = (Vec<Record>, Vec<String>, Vec<String>, Vec<LogBreak>);

fn verify(bytes: &[u8], path: &Path) -> Verified {
    let mut records = Vec::new();
    let mut kept = Vec::new();
    let mut warnings = Vec::new();
    let mut breaks = Vec::new();
    let ends_with_newline = bytes.last() == Some(&b'\n');
    let physical: Vec<&[u8]> = bytes
        .strip_suffix(b"\n")
        .unwrap_or(bytes)
        .split(|b| *b == b'\n')
        .collect();
    let count = if bytes.is_empty() { 0 } else { physical.len() };
    let mut expected_seq = 1u64;
    let mut expected_prev = GENESIS_HASH.to_owned();
    for (i, raw) in physical.iter().take(count).enumerate() {
        let number = i + 1;
        let mut fail = |reason: String| {
            breaks.push(LogBreak {
                line: number,
                reason,
            });
        };
        let last = number == count;
        let Ok(line) = std::str::from_utf8(raw) else {
            // A write torn inside a character.
            let torn = last
                && !ends_with_newline
                && is_torn_record(&String::from_utf8_lossy(raw), expected_seq);
            if torn {
                warnings.push(torn_warning(path, number, records.len()));
            } else {
                fail("not UTF-8 text".to_owned());
            }
            continue;
        };
        let record = match Record::from_json_line(line) {
            Ok(record) => record,
            Err(_) if last && !ends_with_newline && is_torn_record(line, expected_seq) => {
                warnings.push(torn_warning(path, number, records.len()));
                break;
            }
            Err(_) if line.trim().is_empty() => {
                fail("an empty line (the writer never writes one)".to_owned());
                continue;
            }
            Err(reason) => {
                fail(format!("not a valid record: {reason}"));
                continue;
            }
        };
        let mut problems = Vec::new();
        if record.seq != expected_seq {
            problems.push(format!(
                "seq {} where {expected_seq} was expected (a record was removed, inserted or moved)",
                record.seq
            ));
        }
        let sealed = unseal(line);
        match (&sealed, &record.link) {
            (Ok((body, claimed)), Some(link)) => {
                if sha256_hex(body.as_bytes()) != *claimed {
                    problems
                        .push("the record does not match its hash: the line was edited".to_owned());
                }
                if link.prev != expected_prev {
                    problems.push(if number == 1 {
                        "the first record's `prev` is not the genesis hash (64 zeros): records before it were removed".to_owned()
                    } else {
                        format!(
                            "`prev` is not the hash of line {}: the chain is broken (a record was removed, inserted or moved, or forged)",
                            number - 1
                        )
                    });
                }
            }
            (Err(reason), _) => problems.push(reason.clone()),
            (Ok(_), None) => {
                problems.push(
                    "the record has no `prev` (not written by this tack, or edited)".to_owned(),
                );
            }
        }
        if problems.is_empty() {
            records.push(record.clone());
            kept.push(line.to_owned());
        } else {
            fail(problems.join("; "));
        }
        // Judge the next line against this one, so one break is reported once.
        expected_seq = record.seq.saturating_add(1);
        if let Some(link) = &record.link {
            expected_prev.clone_from(&link.hash);
        }
    }
    if breaks.is_empty()
        && let Some(last) = records.last()
        && !matches!(last.event, Event::TurnEnd { .. })
    {
        warnings.push(format!(
            "{}: the log ends without a `turn/end` record: the session stopped mid-turn (or whole records were cut off its end)",
            path.display()
        ));
    }
    (records, kept, warnings, breaks)
}
