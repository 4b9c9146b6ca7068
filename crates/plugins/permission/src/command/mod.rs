//! Shell commands as command rules see them: parsed as bash, every simple
//! command reduced to an argv, and every part that cannot be read named.
//!
//! A command string is parsed once per call ([`PreparedCommand::new`]) with
//! `brush-parser`, a bash parser. The walk goes into lists, pipelines,
//! subshells, `{ }`, `if`/`for`/`while`/`until`/`case`, function bodies,
//! `$( )`, backticks, `<( )`, here-documents fed to a shell, `sh -c`/`bash -c`
//! strings and `eval`. Each simple command becomes a [`SubCommand`]: its
//! words with quotes and escapes removed, as written (what allow rules
//! match) and in its normalized *views* (what deny and ask rules match):
//! argv\[0\] reduced to its basename, `VAR=` prefixes dropped, wrappers such as
//! `sudo` or `timeout` unwrapped, git's global options skipped.
//!
//! What cannot be read is recorded, never guessed: a parse failure, a word
//! built at run time (`$x`, `$(…)`, globs), a shell fed from a pipe or a file
//! descriptor, `find -exec`, `source`, code-running expansions (`${x@P}`,
//! array subscripts in any arithmetic context), builtin options that take
//! code (`compgen -C`), variables that make later programs run code
//! (`BASH_ENV`, `PS4`, `LD_PRELOAD`, `GIT_SSH_COMMAND`). And a program that
//! is not on the closed list of programs whose argv the reader understands
//! ([`programs`]) is *opaque*: it may run anything.

mod argv;
mod pattern;
mod programs;
mod variables;
mod walk;
mod word;

pub(crate) use pattern::{CommandPattern, Match};
pub(crate) use word::Tok;

/// One argv of a simple command, as deny and ask rules see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct View {
    /// The words; argv\[0\] is reduced to its basename.
    pub(crate) words: Vec<Tok>,
    /// More words are added at run time (`xargs` appends its input).
    pub(crate) more: bool,
}

/// One simple command found anywhere in the command string.
#[derive(Clone, Debug)]
pub(crate) struct SubCommand {
    /// The words as written (quotes removed), when allow rules may match it:
    /// no `VAR=` prefix, no redirection to a file, no word built at run time
    /// (a glob is accepted after argv\[0\]). `None` otherwise.
    pub(crate) literal: Option<Vec<Tok>>,
    /// The argv and each unwrapped form of it, for deny and ask rules.
    pub(crate) views: Vec<View>,
    /// Why the program it runs may run other programs out of sight (it is
    /// not on the closed list of understood programs), if so. Unlike
    /// [`PreparedCommand::unread`], an allow rule that names the command
    /// vouches for it.
    pub(crate) opaque: Option<String>,
}

/// A command argument analyzed once per call, for every rule to match against.
#[derive(Clone, Debug, Default)]
pub(crate) struct PreparedCommand {
    /// Every simple command, in source order (nested ones included).
    pub(crate) commands: Vec<SubCommand>,
    /// Why the command cannot be fully read (the first reason found), if so.
    pub(crate) unread: Option<String>,
    /// The first word built at run time, described (`` `$x` is expanded at run time``).
    pub(crate) dynamic: Option<String>,
    /// Something outside the simple commands (a redirection of a compound
    /// command to a file) keeps allow rules from matching.
    pub(crate) allow_blocked: bool,
}

impl PreparedCommand {
    /// Parses and analyzes `command` as bash.
    pub(crate) fn new(command: &str) -> Self {
        let mut out = PreparedCommand::default();
        walk::Walker::new(&mut out).script(command);
        out
    }

    /// Whether allow rules may match at all: everything was read and nothing
    /// is built at run time.
    pub(crate) fn allowable(&self) -> bool {
        self.unread.is_none() && self.dynamic.is_none() && !self.allow_blocked
    }

    /// The first opaque simple command's reason, if any.
    pub(crate) fn opaque(&self) -> Option<&str> {
        self.commands.iter().find_map(|c| c.opaque.as_deref())
    }

    pub(crate) fn unreadable(&mut self, why: impl FnOnce() -> String) {
        if self.unread.is_none() {
            self.unread = Some(why());
        }
    }
}

#[cfg(test)]
mod tests;
