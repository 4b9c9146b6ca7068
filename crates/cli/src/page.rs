//! `--ui`: the session's local page (live, or a replayed log).

use std::net::SocketAddr;
use std::sync::Arc;

use tack_agent::Record;
use tack_core::policy::ApprovalService;
use tack_permission::{ChannelApprover, SessionRules};
use tack_pipeline::ToolRegistry;
use tack_ui::{DEFAULT_APPROVAL_TIMEOUT, UiServer};

/// Starts a live session's page and prints its URL; returns it with the
/// approver that asks on it.
pub async fn live(
    addr: SocketAddr,
    registry: &ToolRegistry,
    session_rules: &SessionRules,
) -> Result<(UiServer, Arc<dyn ApprovalService>), String> {
    let (approver, inbox) = ChannelApprover::new(session_rules.clone(), 16);
    let page = UiServer::live(addr, registry.clone(), inbox, DEFAULT_APPROVAL_TIMEOUT)
        .await
        .map_err(|e| e.to_string())?;
    announce(addr, &page);
    Ok((page, Arc::new(approver)))
}

/// Serves a verified log's page until it is closed.
pub async fn replay(
    addr: SocketAddr,
    registry: ToolRegistry,
    records: &[Record],
    title: &str,
) -> Result<(), String> {
    let page = UiServer::replay(addr, registry, records, title)
        .await
        .map_err(|e| e.to_string())?;
    announce(addr, &page);
    page.until_closed(true).await;
    Ok(())
}

/// After the session: serves the page until it is closed (at once when it
/// was never opened).
pub async fn until_closed(page: &UiServer) {
    if page.opened() {
        eprintln!("tack: the session ended; its page stays up until it is closed (or Ctrl-C)");
    }
    page.until_closed(false).await;
}

fn announce(addr: SocketAddr, page: &UiServer) {
    if !addr.ip().is_loopback() {
        eprintln!(
            "tack: warning: the page is served on {addr}, not only to this machine: anyone who can reach it and learns the URL can answer its approvals"
        );
    }
    eprintln!("tack: the session's page: {}", page.url());
}
