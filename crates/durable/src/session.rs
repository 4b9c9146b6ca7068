//! The session virtual object: one key per session, one turn at a time.

use std::sync::Arc;

use restate_sdk::prelude::*;
use serde::{Deserialize, Serialize};
use tack_agent::{Agent, RunEnd, Usage};

use crate::approval::{ApprovalAnswer, DurableApprover, PendingApproval};
use crate::host::SessionHost;
use crate::steps::{PENDING_APPROVAL, RestateJournal};
use crate::stored::StoredMessage;

/// The state key of a session's history.
pub const HISTORY: &str = "history";

/// The name of the virtual object, as Restate's ingress addresses it:
/// `POST /TackSession/{session}/turn`.
pub const SERVICE_NAME: &str = "TackSession";

/// A turn to run: the user's prompt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnRequest {
    /// What the user says.
    pub prompt: String,
}

/// How a turn ended (a [`RunEnd`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnReport {
    /// `answered`, `concluded`, `step_limit`, `cancelled`, `empty_reply`
    /// or `prompt_blocked`.
    pub end: String,
    /// The model's answer, or why the prompt was blocked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

impl TurnReport {
    fn from_end(end: &RunEnd) -> Self {
        let (end, text) = match end {
            RunEnd::Answered(text) => ("answered", Some(text.clone())),
            RunEnd::Concluded => ("concluded", None),
            RunEnd::StepLimit { .. } => ("step_limit", None),
            RunEnd::Cancelled => ("cancelled", None),
            RunEnd::EmptyReply => ("empty_reply", None),
            RunEnd::PromptBlocked { reason } => ("prompt_blocked", Some(reason.clone())),
            _ => ("ended", None),
        };
        Self {
            end: end.to_owned(),
            text,
        }
    }
}

/// The session virtual object, served by every tack endpoint: Restate runs
/// one `turn` at a time per session key, on whichever endpoint it picks,
/// and replays a turn's journal after a crash.
pub struct TackSession {
    host: Arc<dyn SessionHost>,
}

impl TackSession {
    /// The object for `host`'s sessions. It installs [`DurableApprover`] as
    /// the approval service of the host's pipeline.
    pub fn new(host: Arc<dyn SessionHost>) -> Self {
        // The capability lives as long as the pipeline: the endpoint serves
        // until its process ends.
        host.pipeline()
            .capabilities()
            .provide_approval(Arc::new(DurableApprover));
        Self { host }
    }
}

#[restate_sdk::object(name = "TackSession")]
impl TackSession {
    /// Runs one turn of the session: the prompt, then model steps and tool
    /// calls, each journaled, until the model answers.
    #[handler]
    async fn turn(
        &self,
        ctx: ObjectContext<'_>,
        request: Json<TurnRequest>,
    ) -> Result<Json<TurnReport>, HandlerError> {
        let stored = ctx
            .get::<Json<Vec<StoredMessage>>>(HISTORY)
            .await?
            .map(|Json(history)| history)
            .unwrap_or_default();
        let history = stored.iter().map(StoredMessage::to_message).collect();
        let model = self.host.model(ctx.key());
        let mut agent = Agent::builder(model, self.host.pipeline().clone())
            .system_prompt(self.host.system_prompt())
            .max_steps(self.host.max_steps())
            .resume(history, Usage::default())
            .build();
        let journal = RestateJournal::new(&ctx);
        let end = agent
            .run_journaled(request.0.prompt, &journal)
            .await
            .map_err(|e| TerminalError::new(e.to_string()))?;
        let history: Vec<StoredMessage> = agent
            .history()
            .iter()
            .filter_map(StoredMessage::from_message)
            .collect();
        ctx.set(HISTORY, Json(history));
        Ok(Json(TurnReport::from_end(&end)))
    }

    /// The approval the session waits for, if any.
    #[handler]
    async fn pending_approval(
        &self,
        ctx: SharedObjectContext<'_>,
    ) -> Result<Json<Option<PendingApproval>>, HandlerError> {
        Ok(Json(
            ctx.get::<Json<PendingApproval>>(PENDING_APPROVAL)
                .await?
                .map(|Json(p)| p),
        ))
    }

    /// Answers the approval the session waits for (an error when it waits
    /// for none).
    #[handler]
    async fn answer(
        &self,
        ctx: SharedObjectContext<'_>,
        answer: Json<ApprovalAnswer>,
    ) -> Result<(), HandlerError> {
        let Some(Json(pending)) = ctx.get::<Json<PendingApproval>>(PENDING_APPROVAL).await? else {
            return Err(TerminalError::new(format!(
                "session {} is not waiting for an approval",
                ctx.key()
            ))
            .into());
        };
        ctx.resolve_awakeable(&pending.awakeable, answer);
        Ok(())
    }

    /// The session's history.
    #[handler]
    async fn history(
        &self,
        ctx: SharedObjectContext<'_>,
    ) -> Result<Json<Vec<StoredMessage>>, HandlerError> {
        Ok(Json(
            ctx.get::<Json<Vec<StoredMessage>>>(HISTORY)
                .await?
                .map(|Json(h)| h)
                .unwrap_or_default(),
        ))
    }
}
