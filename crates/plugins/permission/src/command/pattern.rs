//! Command patterns: literal argv prefixes (`git push*`) or whole argvs
//! (`ls`), matched word by word.

use brush_parser::Token;
use brush_parser::word::WordPiece;

use super::{PreparedCommand, Tok, View};

/// How a deny or ask pattern relates to a command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Match {
    /// Some simple command matches.
    Yes,
    /// None does.
    No,
    /// It might: part of the command cannot be read (the reason).
    Maybe(String),
    /// None does, but a simple command runs an opaque program, which may
    /// run a matching one (the reason); an allow rule naming that simple
    /// command vouches for it.
    Opaque(String),
}

/// A shell command pattern: words compared with a simple command's argv.
/// `git push*` matches an argv that starts with `git push`; `git push` only
/// that exact argv. When the text before `*` ends in a character other than a
/// letter, digit or space (`cat /etc/*`, `ls -*`), the last word is a prefix
/// of the argv's word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CommandPattern {
    words: Vec<String>,
    /// argv\[0\]'s basename, what deny and ask patterns compare.
    first_base: String,
    prefix: bool,
    partial_last: bool,
}

impl CommandPattern {
    /// Parses a pattern; the error says what is wrong.
    pub(crate) fn new(pattern: &str) -> Result<Self, String> {
        let trimmed = pattern.trim();
        let (body, prefix) = match trimmed.strip_suffix('*') {
            Some(body) => (body, true),
            None => (trimmed, false),
        };
        let partial_last = prefix
            && body
                .chars()
                .last()
                .is_some_and(|c| !c.is_alphanumeric() && !c.is_whitespace());
        let words = pattern_words(body)?;
        let first_base = match words.first() {
            Some(first) => first
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .filter(|b| !b.is_empty())
                .unwrap_or(first)
                .to_owned(),
            None => String::new(),
        };
        Ok(Self {
            words,
            first_base,
            prefix,
            partial_last,
        })
    }

    /// `*`: every command, read or not.
    pub(crate) fn matches_everything(&self) -> bool {
        self.prefix && self.words.is_empty()
    }

    fn word_matches(&self, i: usize, want: &str, got: &str) -> bool {
        got == want || (self.partial_last && i + 1 == self.words.len() && got.starts_with(want))
    }

    /// A deny or ask pattern against one view.
    fn match_view(&self, view: &View) -> Match {
        let n = self.words.len();
        for i in 0..n {
            let want = if i == 0 {
                &self.first_base
            } else {
                &self.words[i]
            };
            match view.words.get(i) {
                None if view.more => {
                    return Match::Maybe("the command gets more arguments at run time".to_owned());
                }
                None => return Match::No,
                Some(Tok::Lit(got)) => {
                    if !self.word_matches(i, want, got) {
                        return Match::No;
                    }
                }
                Some(Tok::Glob(source)) => {
                    return Match::Maybe(format!(
                        "`{source}` is expanded to file names at run time"
                    ));
                }
                Some(Tok::Dyn(source)) => {
                    return Match::Maybe(format!("`{source}` is expanded at run time"));
                }
            }
        }
        if self.prefix {
            return Match::Yes;
        }
        let rest = &view.words[n.min(view.words.len())..];
        match rest.iter().find(|t| !matches!(t, Tok::Lit(_))) {
            _ if rest.is_empty() && !view.more => Match::Yes,
            _ if rest.iter().any(|t| matches!(t, Tok::Lit(_))) => Match::No,
            Some(tok) => Match::Maybe(format!("`{}` is expanded at run time", tok.source())),
            None => Match::Maybe("the command gets more arguments at run time".to_owned()),
        }
    }

    /// A deny or ask pattern against the whole command: `Yes` if some view
    /// of some simple command matches; `Maybe` if none does but one might,
    /// or the command cannot be fully read.
    pub(crate) fn match_command(&self, command: &PreparedCommand) -> Match {
        if self.matches_everything() {
            return Match::Yes;
        }
        let mut maybe = None;
        for sub in &command.commands {
            for view in &sub.views {
                match self.match_view(view) {
                    Match::Yes => return Match::Yes,
                    Match::Maybe(why) | Match::Opaque(why) => {
                        maybe.get_or_insert(why);
                    }
                    Match::No => {}
                }
            }
        }
        if let Some(why) = &command.unread {
            return Match::Maybe(why.clone());
        }
        if let Some(why) = maybe {
            return Match::Maybe(why);
        }
        command
            .opaque()
            .map_or(Match::No, |why| Match::Opaque(why.to_owned()))
    }

    /// An allow pattern against one simple command as written.
    fn match_literal(&self, words: &[Tok]) -> bool {
        let n = self.words.len();
        for (i, want) in self.words.iter().enumerate() {
            match words.get(i) {
                Some(Tok::Lit(got)) if self.word_matches(i, want, got) => {}
                _ => return false,
            }
        }
        self.prefix || words.len() == n
    }

    /// An allow pattern: marks in `covered` the simple commands it allows.
    /// Nothing is covered when the command cannot be fully read.
    pub(crate) fn cover(&self, command: &PreparedCommand, covered: &mut [bool]) {
        if self.matches_everything() {
            covered.iter_mut().for_each(|c| *c = true);
            return;
        }
        if !command.allowable() {
            return;
        }
        for (sub, covered) in command.commands.iter().zip(covered) {
            if let Some(words) = &sub.literal {
                if self.match_literal(words) {
                    *covered = true;
                }
            }
        }
    }
}

/// A pattern's words, with the shell's quoting rules: `echo "a b"*` is
/// `echo`, `a b`.
fn pattern_words(body: &str) -> Result<Vec<String>, String> {
    let tokens = brush_parser::tokenize_str(body)
        .map_err(|e| format!("it does not read as shell words ({e})"))?;
    let options = brush_parser::ParserOptions::default();
    let mut words = Vec::with_capacity(tokens.len());
    for token in tokens {
        let raw = match token {
            Token::Word(raw, _) => raw,
            Token::Operator(op, _) if op == "\n" => continue,
            Token::Operator(op, _) => {
                return Err(format!(
                    "it contains `{op}`: a command pattern matches one simple command; \
                     write one rule per command (each part of `a && b` is checked on its own)"
                ));
            }
        };
        let pieces = brush_parser::word::parse(&raw, &options)
            .map_err(|e| format!("the word `{raw}` does not read as a shell word ({e})"))?;
        let mut text = String::new();
        for piece in pieces {
            literal_piece(&piece.piece, &raw, &mut text)?;
        }
        words.push(text);
    }
    Ok(words)
}

fn literal_piece(piece: &WordPiece, raw: &str, text: &mut String) -> Result<(), String> {
    match piece {
        WordPiece::Text(t) | WordPiece::SingleQuotedText(t) => text.push_str(t),
        WordPiece::EscapeSequence(e) => text.push_str(e.get(1..).unwrap_or_default()),
        WordPiece::AnsiCQuotedText(body) => match super::word::ansi_c(body) {
            Some(decoded) => text.push_str(&decoded),
            None => {
                return Err(format!(
                    "the word `{raw}` has an escape this reader does not know"
                ));
            }
        },
        WordPiece::DoubleQuotedSequence(inner) => {
            for piece in inner {
                literal_piece(&piece.piece, raw, text)?;
            }
        }
        WordPiece::TildePrefix(user) => {
            text.push('~');
            text.push_str(user);
        }
        _ => {
            return Err(format!(
                "the word `{raw}` has an expansion; patterns are literal words (quote a `$` to match it)"
            ));
        }
    }
    Ok(())
}
