//! Writing the session log.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use parking_lot::Mutex;

use crate::event::Record;

/// An append-only JSONL session log: one [`Record`] per line, each line
/// written whole and flushed before the next event happens.
///
/// ```
/// use tack_agent::{Event, EventBus, SessionLog, read_log};
/// use std::sync::Arc;
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("s.jsonl");
/// let bus = EventBus::new(Some(Arc::new(SessionLog::create(&path).unwrap())));
/// bus.emit(Event::User { text: "读文件 README.md".into() }).unwrap();
/// let read = read_log(&path).unwrap();
/// assert_eq!(read.records[0].event, Event::User { text: "读文件 README.md".into() });
/// assert!(read.warnings.is_empty());
/// ```
#[derive(Debug)]
pub struct SessionLog {
    path: PathBuf,
    file: Mutex<File>,
}

/// The session log could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LogError {
    /// Opening or creating the file failed.
    #[error(
        "cannot create the session log {path}: {source}; choose a writable place with --log FILE"
    )]
    Create {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Appending an event failed.
    #[error("cannot append to the session log {path}: {source}")]
    Append {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl SessionLog {
    /// Opens `path` for appending, creating it and its parent directories.
    ///
    /// # Errors
    ///
    /// [`LogError::Create`] if the file cannot be opened for writing.
    pub fn create(path: &Path) -> Result<Self, LogError> {
        let fail = |source| LogError::Create {
            path: path.to_owned(),
            source,
        };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(fail)?;
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(fail)?;
        Ok(Self {
            path: path.to_owned(),
            file: Mutex::new(file),
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record as a line and flushes it.
    ///
    /// # Errors
    ///
    /// [`LogError::Append`].
    pub fn append(&self, record: &Record) -> Result<(), LogError> {
        let mut line = record.to_json().to_string();
        line.push('\n');
        let mut file = self.file.lock();
        // One write per line: a crash tears at most the last line.
        file.write_all(line.as_bytes())
            .and_then(|()| file.flush())
            .map_err(|source| LogError::Append {
                path: self.path.clone(),
                source,
            })
    }
}
