//! Reading a session log back.

use std::path::{Path, PathBuf};

use crate::event::Record;

/// What [`read_log`] found.
#[derive(Debug)]
#[non_exhaustive]
pub struct LogContents {
    /// Every complete record, in file order.
    pub records: Vec<Record>,
    /// Problems that were skipped (a torn last line), for the user.
    pub warnings: Vec<String>,
}

/// A log that cannot be read.
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
    /// A line other than the last is not a valid record: the log is damaged.
    #[error("the session log {path} is damaged at line {line}: {reason}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        reason: String,
    },
}

/// Reads a session log. A last line that is not a complete record (not
/// valid JSON: a crash in the middle of a write) is skipped with a
/// warning; every record before it is kept.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("s.jsonl");
/// std::fs::write(&path, "{\"seq\":1,\"ts\":0,\"type\":\"user\",\"text\":\"hi\"}\n{\"seq\":2,\"ts\":0,\"ty").unwrap();
/// let read = tack_agent::read_log(&path).unwrap();
/// assert_eq!(read.records.len(), 1);
/// assert!(read.warnings[0].contains("torn"));
/// ```
///
/// # Errors
///
/// [`LogReadError::Io`], or [`LogReadError::Corrupt`] for a bad line that is
/// not the last.
pub fn read_log(path: &Path) -> Result<LogContents, LogReadError> {
    let text = std::fs::read_to_string(path).map_err(|source| LogReadError::Io {
        path: path.to_owned(),
        source,
    })?;
    let lines: Vec<&str> = text.lines().collect();
    let mut records = Vec::with_capacity(lines.len());
    let mut warnings = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let last = i + 1 == lines.len();
        match Record::from_json_line(line) {
            Ok(record) => records.push(record),
            Err(_) if last => warnings.push(format!(
                "{}: line {} is torn (the writer stopped mid-line); skipped it, the {} records before it are intact",
                path.display(),
                i + 1,
                records.len()
            )),
            Err(reason) => {
                return Err(LogReadError::Corrupt {
                    path: path.to_owned(),
                    line: i + 1,
                    reason,
                });
            }
        }
    }
    Ok(LogContents { records, warnings })
}
