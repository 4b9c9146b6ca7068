//! The [`ClientChannel`] of served calls: a tool body's progress, log
//! messages and questions reach the MCP client its call came from.

use futures::future::BoxFuture;
use serde_json::Value;
use tack_core::capability::{
    CapabilityError, ClientChannel, ClientLogLevel, ClientRequest, ClientRequestKind,
};
use tack_core::tool::CallId;

use super::call_client::CallPeers;

/// The channel over the calls an [`McpServer`](crate::McpServer) is
/// running: a call it is not running (a model's call, a nested call) gets
/// nothing sent and [`CapabilityError::NoClient`] for a question.
pub(crate) struct McpClientChannel {
    pub(crate) peers: CallPeers,
}

impl ClientChannel for McpClientChannel {
    fn progress(
        &self,
        call: &CallId,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> BoxFuture<'static, ()> {
        let client = self.peers.get(call.as_str());
        Box::pin(async move {
            if let Some(client) = client {
                client.progress(progress, total, message).await;
            }
        })
    }

    fn log(&self, call: &CallId, level: ClientLogLevel, data: Value) -> BoxFuture<'static, ()> {
        let client = self.peers.get(call.as_str());
        Box::pin(async move {
            if let Some(client) = client {
                client.log(level, data).await;
            }
        })
    }

    fn can_ask(&self, call: &CallId, kind: ClientRequestKind) -> bool {
        self.peers
            .get(call.as_str())
            .is_some_and(|client| client.can_ask(kind))
    }

    fn ask(
        &self,
        call: &CallId,
        requests: Vec<ClientRequest>,
    ) -> BoxFuture<'static, Result<Vec<Value>, CapabilityError>> {
        let client = self.peers.get(call.as_str());
        Box::pin(async move {
            match client {
                Some(client) => client.ask(requests).await,
                None => Err(CapabilityError::NoClient),
            }
        })
    }
}
