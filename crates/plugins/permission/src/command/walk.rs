//! The walk over bash's syntax tree: every simple command, wherever it is.

use brush_parser::ast::{
    AndOrList, Assignment, AssignmentName, AssignmentValue, Command, CommandPrefixOrSuffixItem,
    CompoundCommand, CompoundList, ExtendedTestExpr, IoFileRedirectKind, IoFileRedirectTarget,
    IoRedirect, Pipeline, SimpleCommand,
};
use brush_parser::{Parser, ParserOptions, SourceInfo};

use super::variables::runs_code;
use super::{PreparedCommand, SubCommand, Tok};

/// How deep shells nest in shells (`sh -c "sh -c '…'"`, `$( $( ) )`) before
/// the rest is treated as unreadable.
const MAX_DEPTH: usize = 12;
/// Brackets nested deeper than this are not handed to the parser (its
/// recursion would be the limit); the command is unreadable instead.
const MAX_NESTING: usize = 64;
/// Longer command strings are not parsed.
const MAX_LEN: usize = 1 << 20;

/// Where a command's standard input comes from, for a shell that reads its
/// script there.
#[derive(Clone, Debug)]
pub(super) enum Stdin {
    /// The stdin the whole command string was given.
    Inherited,
    /// A here-document or here-string whose text is fully known.
    Text(String),
    /// A pipe, a file, or text built at run time (described).
    Unknown(String),
}

pub(crate) struct Walker<'a> {
    pub(super) out: &'a mut PreparedCommand,
    pub(super) depth: usize,
    pub(super) options: ParserOptions,
    /// Why the simple command being read runs an opaque program, if so.
    pub(super) opaque: Option<String>,
    /// The functions the command string defines (their bodies are read, so
    /// calling one is understood).
    pub(super) functions: Vec<String>,
}

impl<'a> Walker<'a> {
    pub(crate) fn new(out: &'a mut PreparedCommand) -> Self {
        Self {
            out,
            depth: 0,
            options: ParserOptions::default(),
            opaque: None,
            functions: Vec::new(),
        }
    }

    /// Parses `text` as a bash script and walks it.
    pub(crate) fn script(&mut self, text: &str) {
        if self.depth > MAX_DEPTH {
            self.out
                .unreadable(|| "shells and substitutions are nested too deeply to read".to_owned());
            return;
        }
        if text.len() > MAX_LEN || nesting(text) > MAX_NESTING {
            self.out
                .unreadable(|| "the command is too large or too deeply nested to read".to_owned());
            return;
        }
        if has_here_document(text) && text.contains(['`', '$']) {
            // The parser and bash disagree on some here-documents inside
            // substitutions (`$(cat <<EOF … EOF)`): what is found is still
            // read below, but the command does not count as fully read.
            self.out.unreadable(|| {
                "it has a here-document together with a substitution or expansion, which this reader does not parse reliably"
                    .to_owned()
            });
        }
        let options = self.options.clone();
        let parsed = std::panic::catch_unwind(|| {
            Parser::new(text.as_bytes(), &options, &SourceInfo::default()).parse_program()
        });
        match parsed {
            Ok(Ok(program)) => {
                for list in &program.complete_commands {
                    self.list(list, &Stdin::Inherited);
                }
            }
            Ok(Err(error)) => {
                let error = error.to_string();
                self.out
                    .unreadable(|| format!("it does not parse as bash ({error})"));
            }
            Err(_) => self
                .out
                .unreadable(|| "the bash parser failed on it".to_owned()),
        }
    }

    fn list(&mut self, list: &CompoundList, stdin: &Stdin) {
        for item in &list.0 {
            self.and_or(&item.0, stdin);
        }
    }

    fn and_or(&mut self, list: &AndOrList, stdin: &Stdin) {
        for (_, pipeline) in list {
            self.pipeline(pipeline, stdin);
        }
    }

    fn pipeline(&mut self, pipeline: &Pipeline, stdin: &Stdin) {
        for (i, command) in pipeline.seq.iter().enumerate() {
            if i == 0 {
                self.command(command, stdin);
            } else {
                self.command(command, &Stdin::Unknown("a pipe".to_owned()));
            }
        }
    }

    fn command(&mut self, command: &Command, stdin: &Stdin) {
        match command {
            Command::Simple(simple) => self.simple(simple, stdin),
            Command::Compound(compound, redirects) => {
                let mut stdin = stdin.clone();
                if let Some(redirects) = redirects {
                    let mut allowable = true;
                    for redirect in &redirects.0 {
                        self.redirect(redirect, &mut allowable, &mut stdin);
                    }
                    if !allowable {
                        self.out.allow_blocked = true;
                    }
                }
                self.compound(compound, &stdin);
            }
            Command::Function(function) => {
                self.functions.push(function.fname.clone());
                let body = &function.body;
                let mut stdin = stdin.clone();
                if let Some(redirects) = &body.1 {
                    let mut allowable = true;
                    for redirect in &redirects.0 {
                        self.redirect(redirect, &mut allowable, &mut stdin);
                    }
                    if !allowable {
                        self.out.allow_blocked = true;
                    }
                }
                self.compound(&body.0, &stdin);
            }
            Command::ExtendedTest(test) => self.extended_test(test),
        }
    }

    fn compound(&mut self, compound: &CompoundCommand, stdin: &Stdin) {
        match compound {
            CompoundCommand::Arithmetic(arith) => self.arithmetic(&arith.expr.value),
            CompoundCommand::ArithmeticForClause(clause) => {
                for expr in [&clause.initializer, &clause.condition, &clause.updater]
                    .into_iter()
                    .flatten()
                {
                    self.arithmetic(&expr.value);
                }
                self.list(&clause.body.0, stdin);
            }
            CompoundCommand::BraceGroup(group) => self.list(&group.0, stdin),
            CompoundCommand::Subshell(subshell) => self.list(&subshell.0, stdin),
            CompoundCommand::ForClause(clause) => {
                for value in clause.values.iter().flatten() {
                    self.word(&value.value);
                }
                self.list(&clause.body.0, stdin);
            }
            CompoundCommand::CaseClause(clause) => {
                self.word(&clause.value.value);
                for case in &clause.cases {
                    for pattern in &case.patterns {
                        self.word(&pattern.value);
                    }
                    if let Some(list) = &case.cmd {
                        self.list(list, stdin);
                    }
                }
            }
            CompoundCommand::IfClause(clause) => {
                self.list(&clause.condition, stdin);
                self.list(&clause.then, stdin);
                for branch in clause.elses.iter().flatten() {
                    if let Some(condition) = &branch.condition {
                        self.list(condition, stdin);
                    }
                    self.list(&branch.body, stdin);
                }
            }
            CompoundCommand::WhileClause(clause) | CompoundCommand::UntilClause(clause) => {
                self.list(&clause.0, stdin);
                self.list(&clause.1.0, stdin);
            }
        }
    }

    fn extended_test(&mut self, test: &ExtendedTestExpr) {
        use brush_parser::ast::BinaryPredicate as B;
        match test {
            ExtendedTestExpr::And(a, b) | ExtendedTestExpr::Or(a, b) => {
                self.extended_test(a);
                self.extended_test(b);
            }
            ExtendedTestExpr::Not(inner) | ExtendedTestExpr::Parenthesized(inner) => {
                self.extended_test(inner);
            }
            ExtendedTestExpr::UnaryTest(predicate, word) => {
                let tok = self.word(&word.value);
                let names_variable = matches!(
                    predicate,
                    brush_parser::ast::UnaryPredicate::ShellVariableIsSetAndAssigned
                        | brush_parser::ast::UnaryPredicate::ShellVariableIsSetAndNameRef
                );
                if names_variable && (word.value.contains('[') || !matches!(tok, Tok::Lit(_))) {
                    self.out.unreadable(|| {
                        format!(
                            "`[[ -v {} ]]` evaluates an array subscript as arithmetic, which can run code",
                            word.value
                        )
                    });
                }
            }
            ExtendedTestExpr::BinaryTest(predicate, left, right) => {
                let arithmetic = matches!(
                    predicate,
                    B::ArithmeticEqualTo
                        | B::ArithmeticNotEqualTo
                        | B::ArithmeticLessThan
                        | B::ArithmeticLessThanOrEqualTo
                        | B::ArithmeticGreaterThan
                        | B::ArithmeticGreaterThanOrEqualTo
                );
                for word in [left, right] {
                    let tok = self.word(&word.value);
                    if arithmetic {
                        // `[[ x -eq y ]]` evaluates both sides as arithmetic.
                        match tok.lit() {
                            Some(text) => self.arithmetic(text),
                            None => self.out.unreadable(|| {
                                format!(
                                    "`[[ … -eq … ]]` evaluates `{}` as arithmetic, which can run code",
                                    word.value
                                )
                            }),
                        }
                    }
                }
            }
        }
    }

    fn simple(&mut self, command: &SimpleCommand, stdin: &Stdin) {
        let mut stdin = stdin.clone();
        let mut words = Vec::new();
        let mut allowable = true;
        let mut assigns = false;
        if let Some(prefix) = &command.prefix {
            for item in &prefix.0 {
                match item {
                    CommandPrefixOrSuffixItem::AssignmentWord(assignment, _) => {
                        assigns = true;
                        self.assignment(assignment, command.word_or_name.is_some());
                    }
                    other => self.item(other, &mut words, &mut allowable, &mut stdin),
                }
            }
        }
        if let Some(name) = &command.word_or_name {
            words.push(self.word(&name.value));
        }
        if let Some(suffix) = &command.suffix {
            for item in &suffix.0 {
                self.item(item, &mut words, &mut allowable, &mut stdin);
            }
        }
        let literal = (allowable
            && !assigns
            && !words.is_empty()
            && words.iter().enumerate().all(|(i, tok)| match tok {
                Tok::Lit(_) => true,
                Tok::Glob(_) => i > 0,
                Tok::Dyn(_) => false,
            }))
        .then(|| words.clone());
        // Nested commands read on the way keep their own opaque reason.
        let outer = self.opaque.take();
        let views = if words.is_empty() {
            Vec::new()
        } else {
            self.views(words, &stdin)
        };
        let opaque = std::mem::replace(&mut self.opaque, outer);
        self.out.commands.push(SubCommand {
            literal,
            views,
            opaque,
        });
    }

    fn item(
        &mut self,
        item: &CommandPrefixOrSuffixItem,
        words: &mut Vec<Tok>,
        allowable: &mut bool,
        stdin: &mut Stdin,
    ) {
        match item {
            CommandPrefixOrSuffixItem::IoRedirect(redirect) => {
                self.redirect(redirect, allowable, stdin);
            }
            CommandPrefixOrSuffixItem::Word(word)
            | CommandPrefixOrSuffixItem::AssignmentWord(_, word) => {
                words.push(self.word(&word.value));
            }
            CommandPrefixOrSuffixItem::ProcessSubstitution(_, subshell) => {
                self.depth += 1;
                self.list(&subshell.0, &Stdin::Unknown("a pipe".to_owned()));
                self.depth -= 1;
                words.push(self.dynamic_word("<(…)"));
            }
        }
    }

    pub(super) fn dynamic_word(&mut self, source: &str) -> Tok {
        if self.out.dynamic.is_none() {
            self.out.dynamic = Some(format!("`{source}` is expanded at run time"));
        }
        Tok::Dyn(source.to_owned())
    }

    /// An assignment; `scoped` when it prefixes a command (`IFS= read`), so
    /// that it changes only that command's environment.
    fn assignment(&mut self, assignment: &Assignment, scoped: bool) {
        let name = match &assignment.name {
            AssignmentName::VariableName(name) => name,
            AssignmentName::ArrayElementName(name, index) => {
                self.arithmetic(index);
                name
            }
        };
        // `IFS=… cmd` splits no later word of this command string.
        if !(scoped && name == "IFS") {
            self.code_variable(name);
        }
        match &assignment.value {
            AssignmentValue::Scalar(word) => {
                self.word(&word.value);
            }
            AssignmentValue::Array(items) => {
                for (key, value) in items {
                    if key.is_none() && value.value.starts_with('[') {
                        // `y=([ k]=v)`: bash reads a subscript with blanks
                        // in it as a key (arithmetic) where the parser sees
                        // plain words; refuse to read it either way.
                        self.out.unreadable(|| {
                            format!(
                                "the array element `{}` may be a key bash evaluates as arithmetic, which can run code",
                                value.value
                            )
                        });
                    }
                    if let Some(key) = key {
                        // `y=([k]=v)`: an indexed array's key is arithmetic.
                        match self.word(&key.value) {
                            Tok::Lit(text) => self.arithmetic(&text),
                            _ => self.out.unreadable(|| {
                                format!(
                                    "the array key `[{}]` is evaluated as arithmetic, which can run code",
                                    key.value
                                )
                            }),
                        }
                    }
                    self.word(&value.value);
                }
            }
        }
    }

    /// Records an assignment or export of a variable that makes later code
    /// run (`BASH_ENV`, `PS4`, `BASH_FUNC_f%%`, `LD_PRELOAD`, `GIT_SSH_COMMAND`).
    pub(super) fn code_variable(&mut self, name: &str) {
        if runs_code(name) {
            self.out.unreadable(|| {
                format!(
                    "it sets `{name}`, which makes bash or a later program run code or changes what later words mean"
                )
            });
        }
    }

    /// Walks a redirection: substitutions in its target, whether allow rules
    /// may still match (only `/dev/null`, fd duplication and reading a
    /// regular path keep that), and what it makes the command's stdin.
    fn redirect(&mut self, redirect: &IoRedirect, allowable: &mut bool, stdin: &mut Stdin) {
        let is_stdin = |fd: &Option<u32>, default_in: bool| match fd {
            Some(fd) => *fd == 0,
            None => default_in,
        };
        match redirect {
            IoRedirect::File(fd, kind, target) => {
                let reads = matches!(
                    kind,
                    IoFileRedirectKind::Read | IoFileRedirectKind::DuplicateInput
                );
                match target {
                    IoFileRedirectTarget::Filename(word) => {
                        let tok = self.word(&word.value);
                        let harmless = match (&tok, kind) {
                            (Tok::Lit(path), _) if path == "/dev/null" => true,
                            (Tok::Lit(path), IoFileRedirectKind::Read) => {
                                !path.starts_with("/dev/")
                            }
                            _ => false,
                        };
                        *allowable &= harmless;
                        if reads && is_stdin(fd, true) {
                            *stdin = match tok.lit() {
                                Some("/dev/null") => Stdin::Text(String::new()),
                                _ => Stdin::Unknown(format!("the file `{}`", word.value)),
                            };
                        }
                    }
                    IoFileRedirectTarget::Fd(_) => {}
                    IoFileRedirectTarget::Duplicate(word) => {
                        let tok = self.word(&word.value);
                        *allowable &= tok
                            .lit()
                            .is_some_and(|t| t == "-" || t.chars().all(|c| c.is_ascii_digit()));
                    }
                    IoFileRedirectTarget::ProcessSubstitution(_, subshell) => {
                        self.depth += 1;
                        self.list(&subshell.0, &Stdin::Unknown("a pipe".to_owned()));
                        self.depth -= 1;
                        *allowable = false;
                        if reads && is_stdin(fd, true) {
                            *stdin = Stdin::Unknown("a process substitution".to_owned());
                        }
                    }
                }
            }
            IoRedirect::HereDocument(fd, doc) => {
                let text = &doc.doc.value;
                let known = if doc.requires_expansion && text.contains(['$', '`', '\\']) {
                    self.scan_text(text);
                    None
                } else {
                    Some(text.clone())
                };
                if is_stdin(fd, true) {
                    *stdin = match known {
                        Some(text) => Stdin::Text(text),
                        None => Stdin::Unknown("a here-document with expansions".to_owned()),
                    };
                }
            }
            IoRedirect::HereString(fd, word) => {
                let tok = self.word(&word.value);
                if is_stdin(fd, true) {
                    *stdin = match tok {
                        Tok::Lit(text) => Stdin::Text(text + "\n"),
                        _ => Stdin::Unknown("a here-string built at run time".to_owned()),
                    };
                }
            }
            IoRedirect::OutputAndError(word, _) => {
                let tok = self.word(&word.value);
                *allowable &= tok.lit() == Some("/dev/null");
            }
        }
    }
}

/// Whether `text` has a `<<` that is not part of `<<<`.
fn has_here_document(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.windows(2).enumerate().any(|(i, pair)| {
        pair == b"<<" && bytes.get(i + 2) != Some(&b'<') && (i == 0 || bytes[i - 1] != b'<')
    })
}

/// The deepest nesting of brackets and of `if`/`case`/`do` blocks, counted
/// without regard to quoting (an over-count only makes a command unreadable,
/// never readable).
fn nesting(text: &str) -> usize {
    let mut depth = 0usize;
    let mut max = 0usize;
    let mut open = |depth: &mut usize| {
        *depth += 1;
        max = max.max(*depth);
    };
    for byte in text.bytes() {
        match byte {
            b'(' | b'{' | b'[' => open(&mut depth),
            b')' | b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    let mut blocks = 0usize;
    for word in text.split(|c: char| c.is_whitespace() || ";&|()<>{}`$\"'".contains(c)) {
        match word {
            "if" | "case" | "do" => open(&mut blocks),
            "fi" | "esac" | "done" => blocks = blocks.saturating_sub(1),
            _ => {}
        }
    }
    max
}
