//! Words: quote and escape removal, and what a word builds only at run time.

use brush_parser::word::{Parameter, ParameterExpr, ParameterTransformOp, WordPiece};

use super::walk::Walker;

/// One word of a simple command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Tok {
    /// Fully known: the text the program receives (quotes and escapes removed).
    Lit(String),
    /// Known text with an unquoted glob (`*`, `?`, `[`), brace expansion or a
    /// tilde prefix: the shell turns it into file names (or other words) at
    /// run time.
    Glob(String),
    /// Built at run time by an expansion or substitution; holds the source.
    Dyn(String),
}

impl Tok {
    /// The text of a fully known word.
    pub(crate) fn lit(&self) -> Option<&str> {
        match self {
            Tok::Lit(s) => Some(s),
            _ => None,
        }
    }

    /// The word as the rule reasons show it.
    pub(crate) fn source(&self) -> &str {
        match self {
            Tok::Lit(s) | Tok::Glob(s) | Tok::Dyn(s) => s,
        }
    }
}

/// Characters that make a word more than its literal text (quotes, escapes,
/// expansions, globs, extglobs, braces, tilde).
const SPECIAL: [char; 14] = [
    '\\', '\'', '"', '$', '`', '~', '*', '?', '[', '{', '(', '!', '@', '+',
];

#[derive(Default)]
struct WordState {
    text: String,
    unquoted: String,
    dynamic: bool,
    tilde: bool,
}

impl Walker<'_> {
    /// Reads one word: removes quotes and escapes, walks into its command
    /// substitutions, and records expansions that can run code.
    pub(super) fn word(&mut self, raw: &str) -> Tok {
        // Fast path: no quoting, escape, expansion, glob, brace or tilde
        // character, so bash takes the word as it is.
        if !raw.is_empty() && !raw.contains(SPECIAL) {
            return Tok::Lit(raw.to_owned());
        }
        if raw.contains("$[") {
            // `$[ … ]`, bash's old arithmetic expansion (the parser takes it
            // for text); also flagged inside single quotes, to be safe.
            self.out.unreadable(|| {
                format!("the arithmetic `{raw}` (`$[…]`) can run code through array subscripts")
            });
            return self.dynamic(raw);
        }
        let pieces = match brush_parser::word::parse(raw, &self.options) {
            Ok(pieces) => pieces,
            Err(error) => {
                self.out
                    .unreadable(|| format!("the word `{raw}` does not parse ({error})"));
                return self.dynamic(raw);
            }
        };
        let mut state = WordState::default();
        for piece in &pieces {
            self.piece(&piece.piece, false, &mut state);
        }
        if state.dynamic {
            return self.dynamic(raw);
        }
        let u = &state.unquoted;
        let bracket = u.find('[').is_some_and(|at| u[at..].contains(']'));
        let glob = state.tilde
            || bracket
            || u.contains(['*', '?', '('])
            || (u.contains('{') && u.contains('}') && (u.contains(',') || u.contains("..")));
        if glob {
            Tok::Glob(state.text)
        } else {
            Tok::Lit(state.text)
        }
    }

    fn dynamic(&mut self, raw: &str) -> Tok {
        if self.out.dynamic.is_none() {
            self.out.dynamic = Some(format!("`{raw}` is expanded at run time"));
        }
        Tok::Dyn(raw.to_owned())
    }

    fn piece(&mut self, piece: &WordPiece, quoted: bool, state: &mut WordState) {
        match piece {
            WordPiece::Text(text) => {
                if text.contains("$[") {
                    // `$[ … ]`, bash's old arithmetic expansion.
                    state.dynamic = true;
                    self.out.unreadable(|| {
                        format!(
                            "the arithmetic `{text}` (`$[…]`) can run code through array subscripts"
                        )
                    });
                }
                state.text.push_str(text);
                if !quoted {
                    state.unquoted.push_str(text);
                }
            }
            WordPiece::SingleQuotedText(text) => state.text.push_str(text),
            WordPiece::AnsiCQuotedText(text) => match ansi_c(text) {
                Some(decoded) => state.text.push_str(&decoded),
                None => state.dynamic = true,
            },
            WordPiece::DoubleQuotedSequence(inner) => {
                for piece in inner {
                    self.piece(&piece.piece, true, state);
                }
            }
            // `$"…"` is translated through the locale's message catalog.
            WordPiece::GettextDoubleQuotedSequence(inner) => {
                state.dynamic = true;
                for piece in inner {
                    self.piece(&piece.piece, true, state);
                }
            }
            WordPiece::TildePrefix(user) => {
                state.tilde = true;
                state.text.push('~');
                state.text.push_str(user);
            }
            WordPiece::EscapeSequence(escape) => {
                let escaped = escape.get(1..).unwrap_or_default();
                match escaped {
                    "\n" => {} // a line continuation
                    "'" if quoted => state.text.push_str("\\'"),
                    _ => state.text.push_str(escaped),
                }
            }
            WordPiece::ParameterExpansion(expr) => {
                state.dynamic = true;
                self.parameter(expr);
            }
            WordPiece::CommandSubstitution(script) => {
                state.dynamic = true;
                self.nested(script);
            }
            WordPiece::BackquotedCommandSubstitution(script) => {
                state.dynamic = true;
                self.nested(&unescape_backquoted(script));
            }
            WordPiece::ArithmeticExpression(expr) => {
                state.dynamic = true;
                self.arithmetic(&expr.value);
            }
        }
    }

    /// Walks a command substitution's script.
    fn nested(&mut self, script: &str) {
        self.depth += 1;
        self.script(script);
        self.depth -= 1;
    }

    /// Arithmetic (`$(( ))`, `(( ))`, subscripts, offsets): bash evaluates
    /// array subscripts inside it, through variables too, so anything but
    /// plain numbers and operators can run code.
    pub(super) fn arithmetic(&mut self, expr: &str) {
        let plain = expr.chars().all(|c| {
            c.is_ascii_digit() || c.is_ascii_whitespace() || "+-*/%<>=!&|^~?:,()".contains(c)
        });
        if !plain {
            self.out.unreadable(|| {
                format!("the arithmetic `{expr}` can run code through array subscripts")
            });
            self.scan_text(expr);
        }
    }

    /// Finds command substitutions inside text bash expands (an arithmetic
    /// expression, an operand of `${x:-…}`, an unquoted here-document).
    pub(super) fn scan_text(&mut self, text: &str) {
        if !text.contains(['$', '`']) {
            return;
        }
        match brush_parser::word::parse(text, &self.options) {
            Ok(pieces) => {
                let mut state = WordState::default();
                for piece in &pieces {
                    self.piece(&piece.piece, true, &mut state);
                }
            }
            Err(_) => self
                .out
                .unreadable(|| format!("the expansion in `{text}` does not parse")),
        }
    }

    fn parameter(&mut self, expr: &ParameterExpr) {
        use ParameterExpr as P;
        let (parameter, indirect, operands): (Option<&Parameter>, bool, Vec<&str>) = match expr {
            P::Parameter {
                parameter,
                indirect,
            }
            | P::ParameterLength {
                parameter,
                indirect,
            } => (Some(parameter), *indirect, Vec::new()),
            P::UseDefaultValues {
                parameter,
                indirect,
                default_value: operand,
                ..
            }
            | P::AssignDefaultValues {
                parameter,
                indirect,
                default_value: operand,
                ..
            }
            | P::IndicateErrorIfNullOrUnset {
                parameter,
                indirect,
                error_message: operand,
                ..
            }
            | P::UseAlternativeValue {
                parameter,
                indirect,
                alternative_value: operand,
                ..
            }
            | P::RemoveSmallestSuffixPattern {
                parameter,
                indirect,
                pattern: operand,
            }
            | P::RemoveLargestSuffixPattern {
                parameter,
                indirect,
                pattern: operand,
            }
            | P::RemoveSmallestPrefixPattern {
                parameter,
                indirect,
                pattern: operand,
            }
            | P::RemoveLargestPrefixPattern {
                parameter,
                indirect,
                pattern: operand,
            }
            | P::UppercaseFirstChar {
                parameter,
                indirect,
                pattern: operand,
            }
            | P::UppercasePattern {
                parameter,
                indirect,
                pattern: operand,
            }
            | P::LowercaseFirstChar {
                parameter,
                indirect,
                pattern: operand,
            }
            | P::LowercasePattern {
                parameter,
                indirect,
                pattern: operand,
            } => (
                Some(parameter),
                *indirect,
                operand.iter().map(String::as_str).collect(),
            ),
            P::Substring {
                parameter,
                indirect,
                offset,
                length,
            } => {
                self.arithmetic(&offset.value);
                if let Some(length) = length {
                    self.arithmetic(&length.value);
                }
                (Some(parameter), *indirect, Vec::new())
            }
            P::Transform {
                parameter,
                indirect,
                op,
            } => {
                if matches!(op, ParameterTransformOp::PromptExpand) {
                    self.out.unreadable(|| {
                        "`${…@P}` expands a prompt string, which runs the command substitutions in it"
                            .to_owned()
                    });
                }
                (Some(parameter), *indirect, Vec::new())
            }
            P::ReplaceSubstring {
                parameter,
                indirect,
                pattern,
                replacement,
                ..
            } => {
                let mut operands = vec![pattern.as_str()];
                operands.extend(replacement.as_deref());
                (Some(parameter), *indirect, operands)
            }
            P::VariableNames { .. } | P::MemberKeys { .. } => (None, false, Vec::new()),
        };
        if indirect {
            self.out.unreadable(|| {
                "`${!…}` expands a name held in a variable, and bash evaluates array subscripts in it as code"
                    .to_owned()
            });
        }
        if let Some(Parameter::NamedWithIndex { index, .. }) = parameter {
            self.arithmetic(index);
        }
        for operand in operands {
            self.scan_text(operand);
        }
    }
}

/// Inside backquotes, `\$`, `` \` `` and `\\` stand for the plain character.
fn unescape_backquoted(script: &str) -> String {
    let mut out = String::with_capacity(script.len());
    let mut chars = script.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(&next) = chars.peek() {
                if matches!(next, '$' | '`' | '\\') {
                    out.push(next);
                    chars.next();
                    continue;
                }
            }
        }
        out.push(c);
    }
    out
}

/// Decodes the body of an ANSI-C quoted string (`$'…'`) as bash does; `None`
/// for an escape this decoder does not know (the word is then treated as
/// built at run time).
pub(super) fn ansi_c(body: &str) -> Option<String> {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let escape = chars.next()?;
        let simple = match escape {
            'a' => Some('\x07'),
            'b' => Some('\x08'),
            'e' | 'E' => Some('\x1b'),
            'f' => Some('\x0c'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\x0b'),
            '\\' | '\'' | '"' | '?' => Some(escape),
            _ => None,
        };
        if let Some(simple) = simple {
            out.push(simple);
            continue;
        }
        let (radix, max, first) = match escape {
            '0'..='7' => (8, 3, Some(escape)),
            'x' => (16, 2, None),
            'u' => (16, 4, None),
            'U' => (16, 8, None),
            'c' => {
                let control = chars.next().filter(char::is_ascii)?;
                out.push(char::from((control as u8) & 0x1f));
                continue;
            }
            _ => return None,
        };
        let mut digits = String::new();
        digits.extend(first);
        while digits.len() < max {
            match chars.peek() {
                Some(d) if d.is_digit(radix) => {
                    digits.push(*d);
                    chars.next();
                }
                _ => break,
            }
        }
        if digits.is_empty() {
            return None;
        }
        let value = u32::from_str_radix(&digits, radix).ok()?;
        // A NUL ends the string in bash; octal and \x are bytes.
        if value == 0 {
            return Some(out);
        }
        if matches!(escape, 'u' | 'U') || value < 0x80 {
            out.push(char::from_u32(value)?);
        } else {
            // A raw byte above 0x7f: not valid text on its own.
            return None;
        }
    }
    Some(out)
}
