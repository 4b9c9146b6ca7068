//! Capturing a stream with a byte cap, draining the rest.

use tokio::io::{AsyncRead, AsyncReadExt};

/// What one stream produced.
#[derive(Debug, Default)]
pub(crate) struct Captured {
    kept: Vec<u8>,
    dropped: u64,
}

/// Reads `stream` to its end, keeping the first `limit` bytes and counting
/// the rest (the command never blocks on a full pipe).
pub(crate) async fn capture(mut stream: impl AsyncRead + Unpin, limit: usize) -> Captured {
    let mut captured = Captured::default();
    let mut chunk = vec![0u8; 8192];
    loop {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = limit.saturating_sub(captured.kept.len()).min(n);
                captured.kept.extend_from_slice(&chunk[..room]);
                captured.dropped += (n - room) as u64;
            }
        }
    }
    captured
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
        (text, truncated)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn keeps_the_first_bytes_and_counts_the_rest() {
        let input: &[u8] = b"hello world";
        let (text, truncated) = capture(input, 5).await.into_text();
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
            capture(input, 5).await.into_text(),
            ("ok\n".to_owned(), false)
        );
    }
}
