//! What the HTTP model clients share: the request timeout, retries with
//! backoff and jitter honouring `retry-after`, error mapping, and reading a
//! server-sent event stream.

use std::time::Duration;

use backon::{BackoffBuilder, ExponentialBuilder};
use futures::StreamExt;
use reqwest::header::HeaderMap;
use reqwest::{RequestBuilder, Response, StatusCode};

use super::ModelError;
use super::observe::{ModelObserver, Retry};

/// The default request timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// How much of an error body goes into a message.
const BODY_SNIPPET: usize = 300;

/// When and how often a failed model request is retried: on HTTP 408, 409,
/// 429 and 5xx, on a connection that fails or is reset, and on a timeout;
/// never once the answer has started streaming.
///
/// The waits grow exponentially from `min_delay` to `max_delay` with full
/// jitter; a `retry-after` (or `retry-after-ms`) header replaces the wait,
/// and one longer than `max_retry_after` ends the retries.
///
/// ```
/// use std::time::Duration;
/// use tack_agent::RetryPolicy;
/// let policy = RetryPolicy::default().with_max_retries(5).with_delays(Duration::from_millis(10), Duration::from_secs(1));
/// assert_eq!(policy.max_retries, 5);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RetryPolicy {
    /// Retries after the first attempt (0: none).
    pub max_retries: usize,
    /// The first wait.
    pub min_delay: Duration,
    /// The longest wait the backoff grows to.
    pub max_delay: Duration,
    /// The longest `retry-after` honoured; a server asking for more ends the
    /// retries with its error.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 3,
            min_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(20),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// Sets how many retries follow the first attempt.
    #[must_use]
    pub fn with_max_retries(mut self, retries: usize) -> Self {
        self.max_retries = retries;
        self
    }

    /// Sets the first and the longest backoff wait.
    #[must_use]
    pub fn with_delays(mut self, min: Duration, max: Duration) -> Self {
        self.min_delay = min;
        self.max_delay = max.max(min);
        self
    }

    /// Sets the longest `retry-after` honoured.
    #[must_use]
    pub fn with_max_retry_after(mut self, max: Duration) -> Self {
        self.max_retry_after = max;
        self
    }
}

/// A failed attempt: the error, whether it may be retried, and the wait the
/// server asked for.
struct Attempt {
    error: ModelError,
    retryable: bool,
    retry_after: Option<Duration>,
}

/// The wait a `retry-after-ms` or `retry-after` (seconds) header asks for.
/// (An HTTP-date form is not read: the backoff's own wait applies.)
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let number = |name: &str| {
        headers
            .get(name)?
            .to_str()
            .ok()?
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
    };
    if let Some(ms) = number("retry-after-ms") {
        return Duration::try_from_secs_f64(ms / 1000.0).ok();
    }
    number("retry-after").and_then(|s| Duration::try_from_secs_f64(s).ok())
}

pub(crate) fn snippet(body: &str) -> String {
    let mut cut: String = body.chars().take(BODY_SNIPPET).collect();
    if body.chars().count() > BODY_SNIPPET {
        cut.push('…');
    }
    cut
}

/// Maps a reqwest error to a [`ModelError`].
pub(crate) fn transport(url: &str, timeout: Duration, e: &reqwest::Error) -> ModelError {
    if e.is_timeout() {
        ModelError::Timeout {
            url: url.to_owned(),
            timeout_ms: timeout.as_millis(),
        }
    } else {
        // The chain names the cause (`connection reset by peer`).
        let mut reason = e.to_string();
        let mut source = std::error::Error::source(e);
        while let Some(cause) = source {
            reason.push_str(": ");
            reason.push_str(&cause.to_string());
            source = cause.source();
        }
        ModelError::Transport {
            url: url.to_owned(),
            reason,
        }
    }
}

fn retryable_status(status: StatusCode) -> bool {
    matches!(status.as_u16(), 408 | 409 | 429) || status.is_server_error()
}

/// Sends the request `build` makes, retrying per `policy`, and returns the
/// first response with a success status. `hint` adds what to check to an
/// error status.
pub(crate) async fn send(
    build: impl Fn() -> RequestBuilder,
    url: &str,
    timeout: Duration,
    policy: RetryPolicy,
    hint: fn(u16) -> &'static str,
    observer: &dyn ModelObserver,
) -> Result<Response, ModelError> {
    let mut backoff = ExponentialBuilder::default()
        .with_min_delay(policy.min_delay)
        .with_max_delay(policy.max_delay)
        .with_max_times(policy.max_retries)
        .with_jitter()
        .build();
    let mut attempt = 0usize;
    loop {
        attempt += 1;
        let failed = match build().send().await {
            Ok(response) if response.status().is_success() => return Ok(response),
            Ok(response) => {
                let status = response.status();
                let wait = retry_after(response.headers());
                let body = response.text().await.unwrap_or_default();
                Attempt {
                    error: ModelError::Http {
                        url: url.to_owned(),
                        status: status.as_u16(),
                        body: snippet(&body),
                        hint: hint(status.as_u16()).to_owned(),
                    },
                    retryable: retryable_status(status),
                    retry_after: wait,
                }
            }
            Err(e) => Attempt {
                retryable: e.is_timeout() || e.is_connect() || e.is_request(),
                error: transport(url, timeout, &e),
                retry_after: None,
            },
        };
        if !failed.retryable {
            return Err(failed.error);
        }
        // The backoff gives the jittered wait and says when retries are spent.
        let Some(backoff_wait) = backoff.next() else {
            return Err(failed.error);
        };
        let delay = match failed.retry_after {
            Some(asked) if asked > policy.max_retry_after => return Err(failed.error),
            Some(asked) => asked,
            None => backoff_wait,
        };
        observer.retry(&Retry {
            attempt,
            delay,
            reason: failed.error.to_string(),
        });
        tokio::time::sleep(delay).await;
    }
}

/// The data of the server-sent events of `response`, handed to `on_event` in order
/// until it returns `true` (the stream's own end marker). A stream that
/// ends before that, breaks or stalls longer than `timeout` is an error.
pub(crate) async fn read_events(
    response: Response,
    url: &str,
    timeout: Duration,
    mut on_event: impl FnMut(&str) -> Result<bool, ModelError>,
) -> Result<(), ModelError> {
    use eventsource_stream::Eventsource;
    let mut events = response.bytes_stream().eventsource();
    loop {
        let next = tokio::time::timeout(timeout, events.next())
            .await
            .map_err(|_| ModelError::Timeout {
                url: url.to_owned(),
                timeout_ms: timeout.as_millis(),
            })?;
        match next {
            None => {
                return Err(ModelError::Transport {
                    url: url.to_owned(),
                    reason:
                        "the stream ended before the answer was complete (the connection was cut)"
                            .to_owned(),
                });
            }
            Some(Err(e)) => {
                let reason = match e {
                    eventsource_stream::EventStreamError::Transport(e) => {
                        return Err(transport(url, timeout, &e));
                    }
                    other => other.to_string(),
                };
                return Err(ModelError::Malformed(format!(
                    "the event stream is broken: {reason}"
                )));
            }
            Some(Ok(event)) => {
                if on_event(&event.data)? {
                    return Ok(());
                }
            }
        }
    }
}

/// Whether `response` is an event stream (a server may ignore `stream`).
pub(crate) fn is_event_stream(response: &Response) -> bool {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"))
}

/// The whole body of a non-streamed response, within `timeout`.
pub(crate) async fn body_text(
    response: Response,
    url: &str,
    timeout: Duration,
) -> Result<String, ModelError> {
    match tokio::time::timeout(timeout, response.text()).await {
        Ok(Ok(text)) => Ok(text),
        Ok(Err(e)) => Err(transport(url, timeout, &e)),
        Err(_) => Err(ModelError::Timeout {
            url: url.to_owned(),
            timeout_ms: timeout.as_millis(),
        }),
    }
}

/// An HTTP client with `timeout` for connecting and for every read (a
/// stream may run longer as long as it keeps arriving).
pub(crate) fn client(timeout: Duration) -> Result<reqwest::Client, ModelError> {
    // reqwest's rustls needs a process-wide crypto provider: rustls's `ring`
    // one, unless the host installed another first (then this changes
    // nothing).
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .connect_timeout(timeout)
        .read_timeout(timeout)
        .build()
        .map_err(|e| ModelError::Config(format!("cannot build the HTTP client: {e}")))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn retry_after_reads_seconds_and_milliseconds() {
        let mut h = HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", "150".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_millis(150)));
        let mut h = HeaderMap::new();
        h.insert(
            "retry-after",
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&h), None);
        h.insert("retry-after", "-1".parse().unwrap());
        assert_eq!(retry_after(&h), None);
    }
}
