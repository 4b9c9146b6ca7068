//! `tack chat`.

use std::io::{BufRead, Write};
use std::process::ExitCode;

use tokio_util::sync::CancellationToken;

use crate::args::SessionArgs;
use crate::interrupt::Interrupts;
use crate::session;

/// An interactive session: one prompt per line until `exit` or end of input.
/// Ctrl-C during a turn cancels that turn; at the prompt it quits. SIGTERM
/// and SIGHUP during a turn cancel it, then quit.
pub async fn chat(args: SessionArgs) -> Result<ExitCode, String> {
    let mut session = session::open(&args)?;
    let interrupts = Interrupts::install();
    eprintln!(
        "tack chat — session log {}; type `exit` to leave",
        session.log_path.display()
    );
    loop {
        eprint!("> ");
        let _ = std::io::stderr().flush();
        let mut line = String::new();
        let read = std::io::stdin()
            .lock()
            .read_line(&mut line)
            .map_err(|e| format!("cannot read stdin: {e}"))?;
        let prompt = line.trim();
        if read == 0 || prompt == "exit" || prompt == "quit" {
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
