//! `tack run`.

use std::process::ExitCode;

use tack_agent::{RunEnd, Usage};

use crate::args::RunArgs;
use crate::exit;
use crate::interrupt::{Interrupts, Stop};
use crate::session;

/// Runs one prompt to its end.
pub async fn run(args: RunArgs) -> Result<ExitCode, String> {
    if let Some(refused) = crate::trust_gate::gate(&args.session)? {
        return Ok(refused);
    }
    let mut session = session::open(&args.session).await?;
    let prompt = args.prompt.join(" ");
    let interrupts = Interrupts::install();
    session.start().await?;
    interrupts.arm(session.agent.cancellation().clone());
    if let Some(reason) = session.run_deferred().await? {
        interrupts.disarm();
        session.end("exit").await;
        eprintln!(
            "tack: {reason}; the prompt was not sent (session log: {})",
            session.log_path.display()
        );
        return Ok(ExitCode::from(exit::SUCCESS));
    }
    let end = session.agent.run(prompt).await;
    interrupts.disarm();
    session.end("exit").await;
    let end = end.map_err(|e| format!("{e} (session log: {})", session.log_path.display()))?;
    if !args.session.json {
        eprintln!(
            "tack: session log {}{}",
            session.log_path.display(),
            usage_note(session.agent.usage())
        );
    }
    Ok(ExitCode::from(match end {
        RunEnd::StepLimit { .. } => exit::STEP_LIMIT,
        RunEnd::EmptyReply => exit::EMPTY_REPLY,
        RunEnd::PromptBlocked { .. } => exit::FAILURE,
        RunEnd::Cancelled => interrupts.received().unwrap_or(Stop::Interrupt).exit_code(),
        _ => exit::SUCCESS,
    }))
}

/// `; tokens: N in, M out` when the model reported any usage.
pub fn usage_note(usage: Usage) -> String {
    if usage == Usage::default() {
        String::new()
    } else {
        format!(
            "; tokens: {} in, {} out",
            usage.input_tokens, usage.output_tokens
        )
    }
}
