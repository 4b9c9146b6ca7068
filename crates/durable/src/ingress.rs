//! A client of Restate's ingress (and admin API) for tack's sessions.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::net::TcpStream;

use crate::approval::{ApprovalAnswer, PendingApproval};
use crate::session::{SERVICE_NAME, TurnReport, TurnRequest};
use crate::stored::StoredMessage;

/// A request to Restate failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IngressError {
    /// The URL is not `http://HOST:PORT[/PATH]`.
    #[error("{0} is not an http://HOST:PORT URL (Restate's ingress, e.g. http://127.0.0.1:8080)")]
    Url(String),
    /// The server could not be reached.
    #[error("could not reach Restate at {url}: {reason} (is restate-server running there?)")]
    Transport {
        /// The URL.
        url: String,
        /// What failed.
        reason: String,
    },
    /// Restate answered with an error status.
    #[error("Restate answered HTTP {status} to {url}: {body}")]
    Status {
        /// The URL.
        url: String,
        /// The status.
        status: u16,
        /// The body (Restate's message).
        body: String,
    },
    /// The answer is not what a tack session returns.
    #[error("Restate's answer to {url} is not valid: {reason}")]
    Malformed {
        /// The URL.
        url: String,
        /// Why.
        reason: String,
    },
}

/// Starts and follows tack sessions through Restate's ingress.
#[derive(Clone, Debug)]
pub struct IngressClient {
    base: String,
}

impl IngressClient {
    /// A client of the ingress at `url` (`http://HOST:PORT`).
    ///
    /// # Errors
    ///
    /// [`IngressError::Url`].
    pub fn new(url: &str) -> Result<Self, IngressError> {
        split(url)?;
        Ok(Self {
            base: url.trim_end_matches('/').to_owned(),
        })
    }

    fn object(&self, session: &str, handler: &str) -> String {
        format!("{}/{SERVICE_NAME}/{}/{handler}", self.base, encode(session))
    }

    /// Runs one turn of `session` and waits for its end (which may be
    /// hours away when it waits for an approval).
    ///
    /// # Errors
    ///
    /// [`IngressError`].
    pub async fn turn(&self, session: &str, prompt: &str) -> Result<TurnReport, IngressError> {
        let body = TurnRequest {
            prompt: prompt.to_owned(),
        };
        request(&self.object(session, "turn"), Some(Some(&body))).await
    }

    /// Starts one turn of `session` without waiting: its invocation id,
    /// for [`attach`](Self::attach).
    ///
    /// # Errors
    ///
    /// [`IngressError`].
    pub async fn send_turn(&self, session: &str, prompt: &str) -> Result<String, IngressError> {
        #[derive(serde::Deserialize)]
        struct Sent {
            #[serde(rename = "invocationId")]
            invocation_id: String,
        }
        let body = TurnRequest {
            prompt: prompt.to_owned(),
        };
        let url = format!("{}/send", self.object(session, "turn"));
        let sent: Sent = request(&url, Some(Some(&body))).await?;
        Ok(sent.invocation_id)
    }

    /// Waits for the turn `invocation` (from [`send_turn`](Self::send_turn)) to end.
    ///
    /// # Errors
    ///
    /// [`IngressError`].
    pub async fn attach(&self, invocation: &str) -> Result<TurnReport, IngressError> {
        let url = format!(
            "{}/restate/invocation/{}/attach",
            self.base,
            encode(invocation)
        );
        request::<(), _>(&url, None).await
    }

    /// The approval `session` waits for, if any.
    ///
    /// # Errors
    ///
    /// [`IngressError`].
    pub async fn pending_approval(
        &self,
        session: &str,
    ) -> Result<Option<PendingApproval>, IngressError> {
        request::<(), _>(&self.object(session, "pending_approval"), Some(None)).await
    }

    /// Answers the approval `session` waits for.
    ///
    /// # Errors
    ///
    /// [`IngressError`] (a session waiting for none answers an error status).
    pub async fn answer(&self, session: &str, answer: &ApprovalAnswer) -> Result<(), IngressError> {
        let _: serde_json::Value =
            request(&self.object(session, "answer"), Some(Some(answer))).await?;
        Ok(())
    }

    /// Resolves the awakeable of a [`PendingApproval`] with `answer`
    /// through Restate's ingress directly (`POST
    /// /restate/awakeables/{id}/resolve`), as a host that only knows the
    /// awakeable would.
    ///
    /// # Errors
    ///
    /// [`IngressError`].
    pub async fn resolve_awakeable(
        &self,
        awakeable: &str,
        answer: &ApprovalAnswer,
    ) -> Result<(), IngressError> {
        let url = format!(
            "{}/restate/awakeables/{}/resolve",
            self.base,
            encode(awakeable)
        );
        let _: serde_json::Value = request(&url, Some(Some(answer))).await?;
        Ok(())
    }

    /// The history of `session`.
    ///
    /// # Errors
    ///
    /// [`IngressError`].
    pub async fn history(&self, session: &str) -> Result<Vec<StoredMessage>, IngressError> {
        request::<(), _>(&self.object(session, "history"), Some(None)).await
    }
}

/// Registers the endpoint at `endpoint_uri` with the Restate server whose
/// admin API is at `admin_url` (`POST /deployments`).
///
/// # Errors
///
/// [`IngressError`].
pub async fn register_deployment(admin_url: &str, endpoint_uri: &str) -> Result<(), IngressError> {
    let url = format!("{}/deployments", admin_url.trim_end_matches('/'));
    let body = serde_json::json!({"uri": endpoint_uri, "force": true});
    let _: serde_json::Value = request(&url, Some(Some(&body))).await?;
    Ok(())
}

fn encode(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `(host:port, path)` of an `http://` URL.
fn split(url: &str) -> Result<(String, String), IngressError> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| IngressError::Url(url.to_owned()))?;
    let (authority, path) = match rest.find('/') {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, "/"),
    };
    if authority.is_empty() || !authority.contains(':') {
        return Err(IngressError::Url(url.to_owned()));
    }
    Ok((authority.to_owned(), path.to_owned()))
}

/// One HTTP/1.1 request and its JSON answer: a GET (`None`), or a POST
/// with a JSON body (`Some(Some(body))`) or an empty one (`Some(None)`).
async fn request<B: Serialize, T: DeserializeOwned>(
    url: &str,
    body: Option<Option<&B>>,
) -> Result<T, IngressError> {
    let (authority, path) = split(url)?;
    let transport = |reason: String| IngressError::Transport {
        url: url.to_owned(),
        reason,
    };
    let stream = TcpStream::connect(&authority)
        .await
        .map_err(|e| transport(e.to_string()))?;
    // A small request is sent at once, not held back for more.
    stream
        .set_nodelay(true)
        .map_err(|e| transport(e.to_string()))?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| transport(e.to_string()))?;
    tokio::spawn(connection);
    let builder = http::Request::builder()
        .uri(path)
        .header(http::header::HOST, &authority);
    let request = match body {
        Some(None) => builder
            .method(http::Method::POST)
            .body(Full::new(Bytes::new())),
        Some(Some(body)) => {
            let json = serde_json::to_vec(body).map_err(|e| transport(e.to_string()))?;
            builder
                .method(http::Method::POST)
                .header(http::header::CONTENT_TYPE, "application/json")
                .body(Full::new(Bytes::from(json)))
        }
        None => builder
            .method(http::Method::GET)
            .body(Full::new(Bytes::new())),
    }
    .map_err(|e| transport(e.to_string()))?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| transport(e.to_string()))?;
    let status = response.status();
    let bytes = response
        .into_body()
        .collect()
        .await
        .map_err(|e| transport(e.to_string()))?
        .to_bytes();
    if !status.is_success() {
        return Err(IngressError::Status {
            url: url.to_owned(),
            status: status.as_u16(),
            body: String::from_utf8_lossy(&bytes).into_owned(),
        });
    }
    let bytes = if bytes.is_empty() {
        Bytes::from_static(b"null")
    } else {
        bytes
    };
    serde_json::from_slice(&bytes).map_err(|e| IngressError::Malformed {
        url: url.to_owned(),
        reason: format!("{e}: {}", String::from_utf8_lossy(&bytes)),
    })
}
