//! Writing the session log.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use nix::fcntl::{Flock, FlockArg};
use parking_lot::Mutex;

use crate::event::Record;
use crate::log::location::{create_at, create_under, ensure_state_home, workspace_key};
use crate::log::reader::{LogContents, LogReadError, verify_bytes};

/// An append-only JSONL session log: one [`Record`] per line, each line
/// written whole and flushed before the next event happens, each record
/// chained to the one before by its hash (see [`read_log`](crate::read_log)).
///
/// A log is always a new file, mode 0600, created without following a
/// symbolic link (the directories it creates are 0700).
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
/// // No `turn/end` yet: the session is still in its first turn.
/// assert!(read.warnings[0].contains("turn/end"));
/// ```
#[derive(Debug)]
pub struct SessionLog {
    path: PathBuf,
    /// Held with an exclusive `flock` for the log's life: a second writer
    /// (`tack --resume` of a log in use) is refused.
    file: Mutex<Flock<File>>,
}

/// Takes the exclusive lock on a log file, without waiting.
fn lock(file: File) -> std::io::Result<Flock<File>> {
    Flock::lock(file, FlockArg::LockExclusiveNonblock).map_err(|(_, errno)| {
        if errno == nix::errno::Errno::EWOULDBLOCK {
            std::io::Error::new(
                std::io::ErrorKind::WouldBlock,
                "another tack session is writing this log; wait for it to end",
            )
        } else {
            std::io::Error::from(errno)
        }
    })
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
    /// Creates the new file `path` (mode 0600) and the directories missing
    /// on its way (mode 0700). The directory that already exists nearest to
    /// it is used as it is; below it no symbolic link is followed, and the
    /// file itself is never an existing file or a link.
    ///
    /// # Errors
    ///
    /// [`LogError::Create`] if the file exists, a link is in the way, or it
    /// cannot be created.
    pub fn create(path: &Path) -> Result<Self, LogError> {
        let file = create_at(path)
            .and_then(lock)
            .map_err(|source| LogError::Create {
                path: path.to_owned(),
                source,
            })?;
        Ok(Self {
            path: path.to_owned(),
            file: Mutex::new(file),
        })
    }

    /// Creates a new log for `workspace` in the per-user state directory
    /// `state_home` (see [`state_home`](crate::state_home)):
    /// `<state_home>/tack/sessions/<workspace key>/<UNIX_MS>-<PID>.jsonl`,
    /// with the key of [`workspace_key`](crate::workspace_key). `state_home`
    /// is created if missing (0700) and used as it is; `tack`, `sessions`
    /// and the key's folder are created (0700) or opened without following
    /// a symbolic link; the file is new, 0600.
    ///
    /// ```
    /// let state = tempfile::tempdir().unwrap();
    /// let log = tack_agent::SessionLog::create_for_workspace(state.path(), "/work/demo".as_ref()).unwrap();
    /// let dir = log.path().parent().unwrap();
    /// assert_eq!(dir, state.path().join("tack/sessions").join(tack_agent::workspace_key("/work/demo".as_ref())));
    /// ```
    ///
    /// # Errors
    ///
    /// [`LogError::Create`].
    pub fn create_for_workspace(state_home: &Path, workspace: &Path) -> Result<Self, LogError> {
        let ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        let folder = Path::new("tack")
            .join("sessions")
            .join(workspace_key(workspace));
        let pid = std::process::id();
        let mut attempt = 0u32;
        loop {
            // Two sessions of one process in one millisecond get a suffix.
            let name = match attempt {
                0 => format!("{ms}-{pid}.jsonl"),
                n => format!("{ms}-{pid}-{n}.jsonl"),
            };
            let relative = folder.join(name);
            let path = state_home.join(&relative);
            match ensure_state_home(state_home)
                .and_then(|()| create_under(state_home, &relative))
                .and_then(lock)
            {
                Ok(file) => {
                    return Ok(Self {
                        path,
                        file: Mutex::new(file),
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 64 => {
                    attempt += 1;
                }
                Err(source) => return Err(LogError::Create { path, source }),
            }
        }
    }

    /// Opens an existing log to continue its session: reads it through the
    /// same open file, verifies it (order, schema, hash chain), cuts a torn
    /// last line off (the record a crash left half-written), and returns the
    /// log positioned at its end with what it holds. Records appended next
    /// must continue its numbering and chain: build the bus with
    /// [`EventBus::resuming`](crate::EventBus::resuming).
    ///
    /// The file is opened without following a symbolic link.
    ///
    /// # Errors
    ///
    /// [`LogReadError::Io`] if it cannot be opened, read or cut;
    /// [`LogReadError::Invalid`] if it fails verification (nothing is
    /// written to it then).
    pub fn resume(path: &Path) -> Result<(Self, LogContents), LogReadError> {
        use std::io::{Read, Seek, SeekFrom};
        use std::os::unix::fs::OpenOptionsExt;
        let io = |source: std::io::Error| LogReadError::Io {
            path: path.to_owned(),
            source,
        };
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
            .open(path)
            .map_err(io)?;
        // Before reading: no other session may append while this one runs.
        let mut file = lock(file).map_err(io)?;
        if !file.metadata().map_err(io)?.is_file() {
            return Err(io(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "not a regular file",
            )));
        }
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(io)?;
        let contents = verify_bytes(&bytes, path)?;
        // Everything after the last whole record is a torn write: cut it.
        let intact: usize = contents.lines.iter().map(|l| l.len() + 1).sum();
        if intact < bytes.len() {
            file.set_len(intact as u64).map_err(io)?;
        }
        file.seek(SeekFrom::End(0)).map_err(io)?;
        Ok((
            Self {
                path: path.to_owned(),
                file: Mutex::new(file),
            },
            contents,
        ))
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
        let mut line = record.to_line();
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
