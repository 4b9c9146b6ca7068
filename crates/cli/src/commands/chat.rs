//! `tack chat`.

use std::process::ExitCode;

use tokio_util::sync::CancellationToken;

use crate::args::SessionArgs;
use crate::interrupt::{Interrupts, Stop};
use crate::prompter::{Input, Prompter, TerminalMode};
use crate::session;

/// An interactive session: one prompt per line until `exit` or end of input,
/// with line editing and history on a terminal.
/// Ctrl-C during a turn cancels that turn; at the prompt it quits. SIGTERM
/// and SIGHUP during a turn cancel it, then quit.
pub async fn chat(args: SessionArgs) -> Result<ExitCode, String> {
    if let Some(refused) = crate::trust_gate::gate(&args)? {
        return Ok(refused);
    }
    let mut session = session::open(&args).await?;
    session.start().await?;
    if let Some(reason) = session.run_deferred().await? {
        eprintln!("tack: {reason}");
    }
    let end = chat_loop(&mut session).await;
    session.end("exit").await;
    end
}

async fn chat_loop(session: &mut session::Session) -> Result<ExitCode, String> {
    let interrupts = Interrupts::install();
    eprintln!(
        "tack chat — session log {}; type `exit` to leave",
        session.log_path.display()
    );
    let mut prompter = Prompter::new();
    if prompter.is_editor() {
        // A signal at the prompt ends `tack` while the editor holds the
        // terminal raw: give it back its mode first.
        if let Some(mode) = TerminalMode::save() {
            interrupts.before_exit(move || mode.restore());
        }
    }
    loop {
        let line = match prompter.read("> ")? {
            Input::Line(line) => line,
            Input::End => return Ok(ExitCode::SUCCESS),
            // Ctrl-C at the prompt quits, as the signal does without the editor.
            Input::Interrupted => return Ok(ExitCode::from(Stop::Interrupt.exit_code())),
        };
        let prompt = line.trim();
        if prompt == "exit" || prompt == "quit" {
            return Ok(ExitCode::SUCCESS);
        }
        if prompt.is_empty() {
            continue;
        }
        // Each turn has its own signal: Ctrl-C ends the turn, not the session.
        let turn = CancellationToken::new();
        session.agent.set_cancellation(turn.clone());
        interrupts.arm(turn);
        let before = session.agent.usage();
        let end = session.agent.run(prompt).await;
        interrupts.disarm();
        end.map_err(|e| e.to_string())?;
        let after = session.agent.usage();
        if after != before {
            eprintln!(
                "tack: tokens this turn: {} in, {} out; session: {} in, {} out",
                after.input_tokens - before.input_tokens,
                after.output_tokens - before.output_tokens,
                after.input_tokens,
                after.output_tokens
            );
        }
        if let Some(stop) = interrupts.take_interrupt() {
            return Ok(ExitCode::from(stop.exit_code()));
        }
    }
}
