//! `tack chat`.

use std::io::{BufRead, Write};
use std::process::ExitCode;

use crate::args::SessionArgs;
use crate::session;

/// An interactive session: one prompt per line until `exit` or end of input.
pub async fn chat(args: SessionArgs) -> Result<ExitCode, String> {
    let mut session = session::open(&args)?;
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
        session.agent.run(prompt).await.map_err(|e| e.to_string())?;
    }
}
