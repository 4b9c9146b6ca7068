//! Reading `tack chat`'s prompts: with line editing and history (rustyline)
//! on a terminal, line by line from a pipe or file.

use std::io::{BufRead, IsTerminal, Write};

use rustyline::config::{Behavior, Config};
use rustyline::error::ReadlineError;

/// What the user gave at the prompt.
pub enum Input {
    /// A line (without its line feed).
    Line(String),
    /// End of input (Ctrl-D, a closed pipe).
    End,
    /// Ctrl-C at the prompt.
    Interrupted,
}

/// Reads prompts.
pub enum Prompter {
    /// Line editing and in-memory history on the controlling terminal.
    Editor(Box<rustyline::DefaultEditor>),
    /// Plain lines from stdin, the prompt on stderr.
    Lines,
}

/// The controlling terminal's mode as it was before the editor ran, to
/// give back if a signal ends `tack` while the editor holds it raw.
pub struct TerminalMode {
    tty: std::fs::File,
    mode: nix::sys::termios::Termios,
}

impl TerminalMode {
    /// The current mode of the controlling terminal, if there is one.
    pub fn save() -> Option<Self> {
        let tty = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty")
            .ok()?;
        let mode = nix::sys::termios::tcgetattr(&tty).ok()?;
        Some(Self { tty, mode })
    }

    /// Sets it back.
    pub fn restore(&self) {
        let _ =
            nix::sys::termios::tcsetattr(&self.tty, nix::sys::termios::SetArg::TCSANOW, &self.mode);
    }
}

impl Prompter {
    /// Whether prompts are read with the line editor.
    pub fn is_editor(&self) -> bool {
        matches!(self, Prompter::Editor(_))
    }

    /// The editor when stdin is a terminal and the controlling terminal can
    /// be opened (so the editing never lands in redirected output); plain
    /// lines otherwise.
    pub fn new() -> Self {
        let tty = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty")
            .is_ok();
        if std::io::stdin().is_terminal() && tty {
            let config = Config::builder()
                .behavior(Behavior::PreferTerm)
                .auto_add_history(true)
                .build();
            if let Ok(editor) = rustyline::DefaultEditor::with_config(config) {
                return Prompter::Editor(Box::new(editor));
            }
        }
        Prompter::Lines
    }

    /// The next input after showing `prompt`.
    ///
    /// # Errors
    ///
    /// A message when the terminal or stdin cannot be read.
    pub fn read(&mut self, prompt: &str) -> Result<Input, String> {
        match self {
            Prompter::Editor(editor) => match editor.readline(prompt) {
                Ok(line) => Ok(Input::Line(line)),
                Err(ReadlineError::Eof) => Ok(Input::End),
                Err(ReadlineError::Interrupted) => Ok(Input::Interrupted),
                Err(e) => Err(format!("cannot read the terminal: {e}")),
            },
            Prompter::Lines => {
                eprint!("{prompt}");
                let _ = std::io::stderr().flush();
                let mut line = String::new();
                let read = std::io::stdin()
                    .lock()
                    .read_line(&mut line)
                    .map_err(|e| format!("cannot read stdin: {e}"))?;
                if read == 0 {
                    return Ok(Input::End);
                }
                let trimmed = line.strip_suffix('\n').unwrap_or(&line);
                Ok(Input::Line(
                    trimmed.strip_suffix('\r').unwrap_or(trimmed).to_owned(),
                ))
            }
        }
    }
}
