//! The page's approvals, through a real server on a loopback port: an
//! answer sent as the page sends it, and the denial of a request no one
//! answers in time.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tack_agent::{Event, Record};
use tack_core::policy::{ApprovalOutcome, ApprovalRequest, ApprovalService};
use tack_core::tool::{CallId, Tier};
use tack_permission::{ChannelApprover, SessionRules};
use tack_pipeline::ToolRegistry;
use tack_ui::UiServer;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn request(call_id: &str) -> ApprovalRequest {
    ApprovalRequest::new(
        CallId::from(call_id),
        "bash",
        Tier::Executes,
        None,
        json!({"command": "make"}),
        "commands ask",
    )
}

/// The page's records of a call that asks.
fn show_call(page: &UiServer, call_id: &str) {
    page.record(&Record::new(
        1,
        10,
        Event::ToolCall {
            call_id: call_id.into(),
            tool: "bash".into(),
            arguments: json!({"command": "make"}).to_string(),
            index: 0,
        },
    ));
    page.record(&Record::new(
        2,
        11,
        Event::ApprovalRequest {
            request: request(call_id),
        },
    ));
}

/// `http://HOST/TOKEN/` → (`HOST`, `TOKEN`).
fn split(url: &str) -> (String, String) {
    let rest = url.strip_prefix("http://").unwrap();
    let (host, token) = rest.split_once('/').unwrap();
    (host.to_owned(), token.trim_end_matches('/').to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_from_the_page_settles_the_request_on_its_card() {
    let rules = SessionRules::new();
    let (approver, inbox) = ChannelApprover::new(rules.clone(), 4);
    let addr = "127.0.0.1:0".parse().unwrap();
    let page = UiServer::live(addr, ToolRegistry::new(), inbox, Duration::from_secs(60))
        .await
        .unwrap();
    let (host, token) = split(page.url());
    show_call(&page, "c1");

    // The page is open: its events stream carries the prompt, on c1's card.
    let mut events = TcpStream::connect(&host).await.unwrap();
    events
        .write_all(format!("GET /{token}/events HTTP/1.1\r\nHost: {host}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let asked =
        tokio::spawn(async move { approver.request(request("c1"), Default::default()).await });
    let mut seen = String::new();
    let mut buffer = [0u8; 4096];
    while !seen.contains("\"op\":\"prompt\"") {
        let n = events.read(&mut buffer).await.unwrap();
        assert!(n > 0, "{seen}");
        seen.push_str(&String::from_utf8_lossy(&buffer[..n]));
    }
    let prompt = seen
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .map(|data| serde_json::from_str::<serde_json::Value>(data).unwrap())
        .find(|frame| frame["op"] == "prompt")
        .unwrap();
    assert_eq!(prompt["card"], "i-1");
    assert_eq!(prompt["summary"], "bash: make");

    // The answer, as the page's script sends it.
    let body = json!({"pending": prompt["pending"], "answer": "session"}).to_string();
    let mut answer = TcpStream::connect(&host).await.unwrap();
    answer
        .write_all(
            format!(
                "POST /{token}/answer HTTP/1.1\r\nHost: {host}\r\nOrigin: http://{host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    let mut response = String::new();
    answer.read_to_string(&mut response).await.unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert_eq!(asked.await.unwrap(), ApprovalOutcome::AllowedAlways);
    // "For this session" is the session allow rule the terminal records.
    assert_eq!(rules.snapshot().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_no_one_answers_in_time_is_denied() {
    let (approver, inbox) = ChannelApprover::new(SessionRules::new(), 4);
    let approver: Arc<dyn ApprovalService> = Arc::new(approver);
    let addr = "127.0.0.1:0".parse().unwrap();
    let page = UiServer::live(addr, ToolRegistry::new(), inbox, Duration::from_millis(200))
        .await
        .unwrap();
    show_call(&page, "c1");
    let outcome = approver.request(request("c1"), Default::default()).await;
    let ApprovalOutcome::Denied {
        reason: Some(reason),
    } = &outcome
    else {
        panic!("{outcome:?}");
    };
    assert!(
        reason.contains("no answer from the session's page within"),
        "{reason}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_for_a_call_the_page_does_not_show_is_denied() {
    let (approver, inbox) = ChannelApprover::new(SessionRules::new(), 4);
    let addr = "127.0.0.1:0".parse().unwrap();
    let _page = UiServer::live(addr, ToolRegistry::new(), inbox, Duration::from_secs(60))
        .await
        .unwrap();
    let outcome = approver.request(request("c9"), Default::default()).await;
    assert!(!outcome.is_allowed(), "{outcome:?}");
}
