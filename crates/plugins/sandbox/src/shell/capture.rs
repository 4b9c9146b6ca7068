//! Capturing a stream with a byte cap, draining the rest.
//!
//! Bytes are kept as they arrive, in a buffer shared with the caller: a
//! reader that is stopped (a process outside the command still holds the
//! pipe open) never loses what it had read.

use std::sync::{Arc, Mutex, PoisonError};

use tokio::io::{AsyncRead, AsyncReadExt};

/// What one stream produced.
#[derive(Debug, Default)]
pub(crate) struct Captured {
    kept: Vec<u8>,
    dropped: u64,
    /// The stream had not ended when reading stopped.
    pub(crate) unfinished: bool,
}

/// The buffer a [`capture`] fills.
pub(crate) type Shared = Arc<Mutex<Captured>>;

/// Reads `stream` to its end into `into`, keeping the first `limit` bytes
/// and counting the rest (the command never blocks on a full pipe).
pub(crate) async fn capture(mut stream: impl AsyncRead + Unpin, limit: usize, into: Shared) {
    let mut chunk = vec![0u8; 8192];
    loop {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let mut captured = into.lock().unwrap_or_else(PoisonError::into_inner);
                let room = limit.saturating_sub(captured.kept.len()).min(n);
                captured.kept.extend_from_slice(&chunk[..room]);
                captured.dropped += (n - room) as u64;
            }
        }
    }
}

/// Takes what was captured so far out of `shared`.
pub(crate) fn take(shared: &Shared) -> Captured {
    std::mem::take(&mut *shared.lock().unwrap_or_else(PoisonError::into_inner))
}

impl Captured {
    /// The text (lossy UTF-8) with a marker when bytes were dropped, and
    /// whether any were.
    pub(crate) fn into_text(self) -> (String, bool) {
        let mut text = String::from_utf8_lossy(&self.kept).into_owned();
        let truncated = self.dropped > 0;
        if truncated {
            if !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!(
                "[output truncated by tack-sandbox: {} more bytes not shown]",
                self.dropped
            ));
        }
        if self.unfinished {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(
                "[tack-sandbox: a process outside the command's process group still held this \
                 stream open after the command ended; what was read until then is shown]",
            );
        }
        (text, truncated)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn captured(input: &[u8], limit: usize) -> Captured {
        let shared = Shared::default();
        capture(input, limit, shared.clone()).await;
        take(&shared)
    }

    #[tokio::test]
    async fn keeps_the_first_bytes_and_counts_the_rest() {
        let input: &[u8] = b"hello world";
        let (text, truncated) = captured(input, 5).await.into_text();
        assert!(truncated);
        assert_eq!(
            text,
            "hello\n[output truncated by tack-sandbox: 6 more bytes not shown]"
        );
    }

    #[tokio::test]
    async fn short_output_is_unmarked() {
        let input: &[u8] = b"ok\n";
        assert_eq!(
            captured(input, 5).await.into_text(),
            ("ok\n".to_owned(), false)
        );
    }

    #[tokio::test]
    async fn bytes_read_before_a_stop_are_kept() {
        let (mut writer, reader) = tokio::io::duplex(64);
        let shared = Shared::default();
        let task = tokio::spawn(capture(reader, 100, shared.clone()));
        tokio::io::AsyncWriteExt::write_all(&mut writer, b"IMPORTANT\n")
            .await
            .unwrap();
        // The writer stays open, like a detached child holding the pipe.
        while shared.lock().unwrap().kept.is_empty() {
            tokio::task::yield_now().await;
        }
        task.abort();
        let mut got = take(&shared);
        got.unfinished = true;
        let (text, truncated) = got.into_text();
        assert!(!truncated);
        assert!(
            text.starts_with("IMPORTANT\n[tack-sandbox: a process"),
            "{text}"
        );
        drop(writer);
    }
}
