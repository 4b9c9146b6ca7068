//! What a host gives the session object.

use std::sync::Arc;

use tack_agent::ChatModel;
use tack_pipeline::Pipeline;

/// What a durable host gives its sessions: the model, the pipeline (its
/// tools, hooks and permission rules) and the loop's settings. One host
/// serves every session of an endpoint, concurrently.
pub trait SessionHost: Send + Sync + 'static {
    /// The model for a turn of `session` (asked once per turn; a replayed
    /// step does not ask it).
    fn model(&self, session: &str) -> Arc<dyn ChatModel>;

    /// The pipeline every session's calls run through.
    fn pipeline(&self) -> &Pipeline;

    /// The system prompt.
    fn system_prompt(&self) -> String {
        tack_agent::DEFAULT_SYSTEM_PROMPT.to_owned()
    }

    /// The step limit: model calls per turn.
    fn max_steps(&self) -> usize {
        tack_agent::DEFAULT_MAX_STEPS
    }
}
