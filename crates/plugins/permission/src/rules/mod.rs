//! Rules: ordered allow / ask / deny rules on tool name, tier and arguments.

pub(crate) mod claude;
mod decision;
pub(crate) mod matcher;
mod search;
mod spec;
pub(crate) mod toml;

use std::fmt;
use std::path::Path;

use globset::{Glob, GlobBuilder, GlobMatcher};
use tack_core::hook::AgentId;
use tack_core::tool::{Tier, ToolExecution};

use crate::Action;
use crate::command::{CommandPattern, Match, PreparedCommand};
pub use decision::Decision;
pub(crate) use decision::decide;
use matcher::{NormalizedPath, normalize_path};
use search::{Reach, Search};

/// Argument names whose patterns are shell command patterns in the compact
/// rule syntax; every other argument name takes a path glob.
pub const COMMAND_ARGS: [&str; 3] = ["command", "cmd", "script"];

/// A rule that cannot be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RuleError {
    /// A glob that does not compile.
    #[error("invalid glob `{glob}`: {message}")]
    Glob {
        /// The glob.
        glob: String,
        /// Why.
        message: String,
    },
    /// A command pattern that is not a list of literal words.
    #[error("invalid command pattern `{pattern}`: {message}")]
    Command {
        /// The pattern.
        pattern: String,
        /// What is wrong, and how to write it instead.
        message: String,
    },
    /// A compact rule (`tool(arg: "pattern")`) that does not parse.
    #[error("invalid rule `{rule}`: {message}")]
    Syntax {
        /// The rule text.
        rule: String,
        /// What is wrong.
        message: String,
    },
}

/// What kind of pattern an [`ArgPattern`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArgKind {
    /// A path glob (`src/**`), matched against the lexically normalized path.
    Path,
    /// A shell command pattern, matched word by word against each simple
    /// command's argv: `git status*` is a prefix, `git status` the exact argv.
    Command,
}

/// A pattern on one named string argument.
#[derive(Clone, Debug)]
pub struct ArgPattern {
    arg: String,
    pattern: String,
    matcher: ArgMatcher,
}

#[derive(Clone, Debug)]
enum ArgMatcher {
    Path(GlobMatcher),
    Command(CommandPattern),
}

impl ArgPattern {
    /// The argument name.
    pub fn arg(&self) -> &str {
        &self.arg
    }

    /// The pattern as written.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// Path glob or command pattern.
    pub fn kind(&self) -> ArgKind {
        match self.matcher {
            ArgMatcher::Path(_) => ArgKind::Path,
            ArgMatcher::Command(_) => ArgKind::Command,
        }
    }

    fn matches_path(&self, action: Action, value: &str, cache: &mut Prepared<'_>) -> bool {
        let path = cache.path(&self.arg, value);
        self.matches_normalized(action, path)
    }

    fn matches_normalized(&self, action: Action, path: &NormalizedPath) -> bool {
        let ArgMatcher::Path(matcher) = &self.matcher else {
            return false;
        };
        match path {
            NormalizedPath::Inside(p) => matcher.is_match(p),
            // `..` out of the workspace never matches an allow glob.
            NormalizedPath::Escaping(p) => action != Action::Allow && matcher.is_match(p),
            // Outside the root: only an absolute glob can allow it.
            NormalizedPath::Absolute(p) => {
                (action != Action::Allow || self.pattern.starts_with('/')) && matcher.is_match(p)
            }
        }
    }

    fn command_pattern(&self) -> Option<&CommandPattern> {
        match &self.matcher {
            ArgMatcher::Command(pattern) => Some(pattern),
            ArgMatcher::Path(_) => None,
        }
    }
}

impl fmt::Display for ArgPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {:?}", self.arg, self.pattern)
    }
}

fn compile_glob(glob: &str) -> Result<GlobMatcher, RuleError> {
    GlobBuilder::new(glob)
        .literal_separator(true)
        .build()
        .map(|g: Glob| g.compile_matcher())
        .map_err(|e| RuleError::Glob {
            glob: glob.to_owned(),
            message: e.kind().to_string(),
        })
}

/// One rule: an action and what it matches (tool-name glob, optional tier,
/// optional agent, argument patterns — all must match).
///
/// ```
/// use tack_permission::{Action, Rule};
/// let rule = Rule::allow("read_file").path("path", "src/**").build().unwrap();
/// assert_eq!(rule.to_string(), r#"allow read_file(path: "src/**")"#);
/// let same = Rule::parse(Action::Allow, r#"read_file(path: "src/**")"#).unwrap();
/// assert_eq!(same.to_string(), rule.to_string());
/// let git = Rule::parse(Action::Allow, r#"bash(command: "git status*")"#).unwrap();
/// assert_eq!(git.to_string(), r#"allow bash(command: "git status*")"#);
/// ```
#[derive(Clone, Debug)]
pub struct Rule {
    action: Action,
    tool: String,
    tool_matcher: ToolMatcher,
    tier: Option<Tier>,
    agent: Option<AgentId>,
    args: Vec<ArgPattern>,
    origin: Option<String>,
}

/// A literal tool name is compared as a string; only real globs use the matcher.
#[derive(Clone, Debug)]
enum ToolMatcher {
    Literal,
    Glob(GlobMatcher),
}

/// How one rule relates to a call.
#[derive(Clone, Debug)]
pub(crate) enum Check {
    /// It does not match.
    No,
    /// It matches.
    Yes,
    /// A deny or ask command pattern might match a command that cannot be
    /// fully read (why).
    Maybe(String),
    /// An allow command pattern covers some of the simple commands of `arg`.
    Partial { arg: String, covered: Vec<bool> },
    /// A deny or ask command pattern matches no simple command of `arg`,
    /// but one runs an opaque program that may run a matching one (why),
    /// unless allow rules name every such simple command.
    Opaque { arg: String, why: String },
    /// A deny or ask path rule on `read_file` may apply to a search that
    /// could read or list a matching file (why).
    Reach(String),
}

/// Per-call memo of normalized path and prepared command arguments, so a
/// hundred rules on the same argument normalize it once.
pub(crate) struct Prepared<'a> {
    root: Option<&'a Path>,
    paths: Vec<(String, NormalizedPath)>,
    commands: Vec<(String, PreparedCommand)>,
}

impl<'a> Prepared<'a> {
    pub(crate) fn new(root: Option<&'a Path>) -> Self {
        Self {
            root,
            paths: Vec::new(),
            commands: Vec::new(),
        }
    }

    fn path(&mut self, arg: &str, value: &str) -> &NormalizedPath {
        let index = match self.paths.iter().position(|(a, _)| a == arg) {
            Some(index) => index,
            None => {
                self.paths
                    .push((arg.to_owned(), normalize_path(value, self.root)));
                self.paths.len() - 1
            }
        };
        &self.paths[index].1
    }

    fn command(&mut self, arg: &str, value: &str) -> &PreparedCommand {
        let index = match self.commands.iter().position(|(a, _)| a == arg) {
            Some(index) => index,
            None => {
                self.commands
                    .push((arg.to_owned(), PreparedCommand::new(value)));
                self.commands.len() - 1
            }
        };
        &self.commands[index].1
    }
}

impl Rule {
    /// Starts an allow rule for tools matching `tool` (a glob: `*`, `mcp_*`).
    pub fn allow(tool: impl Into<String>) -> RuleBuilder {
        RuleBuilder::new(Action::Allow, tool.into())
    }

    /// Starts an ask rule.
    pub fn ask(tool: impl Into<String>) -> RuleBuilder {
        RuleBuilder::new(Action::Ask, tool.into())
    }

    /// Starts a deny rule.
    pub fn deny(tool: impl Into<String>) -> RuleBuilder {
        RuleBuilder::new(Action::Deny, tool.into())
    }

    /// Starts a rule with `action`.
    pub fn builder(action: Action, tool: impl Into<String>) -> RuleBuilder {
        RuleBuilder::new(action, tool.into())
    }

    /// Parses the compact form `tool_glob` or `tool_glob(arg: "pattern", …)`.
    /// Arguments named in [`COMMAND_ARGS`] take command patterns, all others
    /// path globs.
    ///
    /// # Errors
    ///
    /// [`RuleError`] for bad syntax or a bad glob.
    pub fn parse(action: Action, text: &str) -> Result<Rule, RuleError> {
        spec::parse(action, text)
    }

    /// The action.
    pub fn action(&self) -> Action {
        self.action
    }

    /// The tool-name glob.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The tier it is limited to.
    pub fn tier(&self) -> Option<Tier> {
        self.tier
    }

    /// The agent it is limited to.
    pub fn agent(&self) -> Option<&AgentId> {
        self.agent.as_ref()
    }

    /// The argument patterns.
    pub fn args(&self) -> &[ArgPattern] {
        &self.args
    }

    /// Where it came from (`permissions.toml line 7`, `session`), if known.
    pub fn origin(&self) -> Option<&str> {
        self.origin.as_deref()
    }

    /// Whether the rule matches `exec` for certain; `root` is the workspace
    /// root paths are made relative to. A deny or ask command pattern matches
    /// when some simple command of the command string matches it; an allow
    /// command pattern only when every simple command does and the whole
    /// string could be read. (A [`RuleSet`] also combines allow rules that
    /// each cover part of a command, and asks when a deny or ask rule might
    /// match a command it cannot fully read.)
    pub fn matches(&self, exec: &ToolExecution, root: Option<&Path>) -> bool {
        matches!(self.check(exec, &mut Prepared::new(root)), Check::Yes)
    }

    fn head_matches(&self, exec: &ToolExecution) -> bool {
        self.head_matches_name(exec, exec.name())
    }

    /// Tier and agent as for `exec`, and the tool-name glob against `name`.
    fn head_matches_name(&self, exec: &ToolExecution, name: &str) -> bool {
        if self.tier.is_some_and(|t| t != exec.tier()) {
            return false;
        }
        if let Some(agent) = &self.agent {
            if exec.agent() != Some(agent) {
                return false;
            }
        }
        match &self.tool_matcher {
            ToolMatcher::Literal => self.tool == name,
            ToolMatcher::Glob(glob) => glob.is_match(name),
        }
    }

    /// How the rule relates to `exec`.
    pub(crate) fn check(&self, exec: &ToolExecution, cache: &mut Prepared<'_>) -> Check {
        if let Some(search) = Search::of(exec.name()) {
            if let Some(check) = self.check_search(exec, search, cache) {
                return check;
            }
        }
        if !self.head_matches(exec) {
            return Check::No;
        }
        let mut commands = 0;
        for pattern in &self.args {
            let Some(value) = exec.arg_str(pattern.arg()) else {
                return Check::No;
            };
            match pattern.kind() {
                ArgKind::Path => {
                    if !pattern.matches_path(self.action, value, cache) {
                        return Check::No;
                    }
                }
                ArgKind::Command => commands += 1,
            }
        }
        if commands == 0 {
            return Check::Yes;
        }
        let mut maybe = None;
        let mut opaque = None;
        let mut partial = None;
        for pattern in &self.args {
            let Some(command_pattern) = pattern.command_pattern() else {
                continue;
            };
            let Some(value) = exec.arg_str(pattern.arg()) else {
                return Check::No;
            };
            let command = cache.command(pattern.arg(), value);
            if self.action == Action::Allow {
                if command_pattern.matches_everything() {
                    continue;
                }
                let mut covered = vec![false; command.commands.len()];
                command_pattern.cover(command, &mut covered);
                if covered.is_empty() || !covered.iter().all(|c| *c) {
                    if commands > 1 || !covered.iter().any(|c| *c) {
                        return Check::No;
                    }
                    partial = Some((pattern.arg().to_owned(), covered));
                }
            } else {
                match command_pattern.match_command(command) {
                    Match::Yes => {}
                    Match::No => return Check::No,
                    Match::Maybe(why) => {
                        maybe.get_or_insert(why);
                    }
                    Match::Opaque(why) => {
                        opaque.get_or_insert((pattern.arg().to_owned(), why));
                    }
                }
            }
        }
        match (maybe, opaque, partial) {
            (Some(why), _, _) => Check::Maybe(why),
            (None, Some((arg, why)), _) => Check::Opaque { arg, why },
            (None, None, Some((arg, covered))) => Check::Partial { arg, covered },
            (None, None, None) => Check::Yes,
        }
    }

    /// A deny or ask rule on `read_file` whose patterns are path globs on
    /// `path`, against a `grep`, `glob` or `list_dir` call; `None` when the
    /// rule is not such a rule (it is then checked as any other).
    fn check_search(
        &self,
        exec: &ToolExecution,
        search: Search,
        cache: &mut Prepared<'_>,
    ) -> Option<Check> {
        if self.action == Action::Allow
            || self.args.is_empty()
            || !self
                .args
                .iter()
                .all(|a| a.kind() == ArgKind::Path && a.arg() == "path")
            || !self.head_matches_name(exec, "read_file")
        {
            return None;
        }
        let include = search.include_arg().and_then(|arg| exec.arg_str(arg));
        // `glob(pattern: "src/*.rs")` searches only `src`.
        let (root, include) = search::narrowed(exec.arg_str("path").unwrap_or("."), include);
        let normalized = normalize_path(&root, cache.root);
        let mut could = None;
        for pattern in &self.args {
            if pattern.matches_normalized(self.action, &normalized) {
                continue;
            }
            match search::reach(&pattern.pattern, &normalized, search, include) {
                Reach::All => {}
                Reach::Could(why) => {
                    could.get_or_insert(why);
                }
                // Checked as any other rule (a `*` rule on `path` may still match).
                Reach::No => return None,
            }
        }
        Some(could.map_or(Check::Yes, Check::Reach))
    }

    /// For an allow rule with a command pattern on `arg`: marks in
    /// `covered` the simple commands it names as written, vouching for the
    /// opaque programs among them. A pattern of `*` vouches for nothing.
    fn vouch(
        &self,
        exec: &ToolExecution,
        arg: &str,
        cache: &mut Prepared<'_>,
        covered: &mut [bool],
    ) {
        if self.action != Action::Allow || !self.head_matches(exec) {
            return;
        }
        let mut on_arg = None;
        for pattern in &self.args {
            let Some(value) = exec.arg_str(pattern.arg()) else {
                return;
            };
            match pattern.command_pattern() {
                None => {
                    if !pattern.matches_path(self.action, value, cache) {
                        return;
                    }
                }
                Some(command) if pattern.arg() == arg && !command.matches_everything() => {
                    on_arg = Some((command, value));
                }
                Some(_) => return,
            }
        }
        if let Some((command, value)) = on_arg {
            command.cover(cache.command(arg, value), covered);
        }
    }

    /// The rule and its origin, for reasons: ``rule `deny bash(…)` (file line 3)``.
    pub fn describe(&self) -> String {
        match &self.origin {
            Some(origin) => format!("rule `{self}` ({origin})"),
            None => format!("rule `{self}`"),
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.action, self.tool)?;
        if !self.args.is_empty() {
            let args: Vec<String> = self.args.iter().map(ToString::to_string).collect();
            write!(f, "({})", args.join(", "))?;
        }
        if let Some(tier) = self.tier {
            write!(f, " [tier {tier}]")?;
        }
        if let Some(agent) = &self.agent {
            write!(f, " [agent {agent}]")?;
        }
        Ok(())
    }
}

/// Builds a [`Rule`]; [`build`](Self::build) compiles the globs.
#[derive(Clone, Debug)]
pub struct RuleBuilder {
    action: Action,
    tool: String,
    tier: Option<Tier>,
    agent: Option<AgentId>,
    paths: Vec<(String, String)>,
    commands: Vec<(String, String)>,
    origin: Option<String>,
}

impl RuleBuilder {
    fn new(action: Action, tool: String) -> Self {
        Self {
            action,
            tool,
            tier: None,
            agent: None,
            paths: Vec::new(),
            commands: Vec::new(),
            origin: None,
        }
    }

    /// Only tools of this tier.
    pub fn tier(mut self, tier: Tier) -> Self {
        self.tier = Some(tier);
        self
    }

    /// Only calls made for this agent.
    pub fn agent(mut self, agent: impl Into<AgentId>) -> Self {
        self.agent = Some(agent.into());
        self
    }

    /// The string argument `arg`, as a normalized path, matches `glob`.
    pub fn path(mut self, arg: impl Into<String>, glob: impl Into<String>) -> Self {
        self.paths.push((arg.into(), glob.into()));
        self
    }

    /// The string argument `arg`, as a shell command, matches `pattern`:
    /// literal words compared with each simple command's argv
    /// (`git status*`: these words first; `git status`: exactly these words).
    /// [`build`](Self::build) refuses a pattern with `&&`, `|`, `;` or an
    /// expansion.
    pub fn command(mut self, arg: impl Into<String>, pattern: impl Into<String>) -> Self {
        self.commands.push((arg.into(), pattern.into()));
        self
    }

    /// Where the rule came from, named in denial reasons.
    pub fn origin(mut self, origin: impl Into<String>) -> Self {
        self.origin = Some(origin.into());
        self
    }

    /// Compiles the rule.
    ///
    /// # Errors
    ///
    /// [`RuleError::Glob`] for a glob that does not compile,
    /// [`RuleError::Command`] for a command pattern that is not literal words.
    pub fn build(self) -> Result<Rule, RuleError> {
        let is_glob = self
            .tool
            .contains(['*', '?', '[', ']', '{', '}', '\\', '!']);
        let tool_matcher = if is_glob {
            ToolMatcher::Glob(compile_glob(&self.tool)?)
        } else {
            ToolMatcher::Literal
        };
        let mut args = Vec::with_capacity(self.paths.len() + self.commands.len());
        for (arg, glob) in self.paths {
            let matcher = ArgMatcher::Path(compile_glob(&glob)?);
            args.push(ArgPattern {
                arg,
                pattern: glob,
                matcher,
            });
        }
        for (arg, pattern) in self.commands {
            let compiled = CommandPattern::new(&pattern).map_err(|message| RuleError::Command {
                pattern: pattern.clone(),
                message,
            })?;
            let matcher = ArgMatcher::Command(compiled);
            args.push(ArgPattern {
                arg,
                pattern,
                matcher,
            });
        }
        Ok(Rule {
            action: self.action,
            tool: self.tool,
            tool_matcher,
            tier: self.tier,
            agent: self.agent,
            args,
            origin: self.origin,
        })
    }
}

/// Ordered rules, decided together: a matching deny rule denies; else a
/// matching ask rule asks, and so does a deny or ask rule that might match a
/// command string that cannot be fully read (or that runs a program not on
/// the reader's closed list, unless allow command rules name that simple
/// command), or a `grep`/`glob` that may reach a file a path rule on
/// `read_file` protects; else the call is allowed when
/// an allow rule matches, or when allow command rules together cover every
/// simple command of it (`git status && ls` under `git status*` and `ls*`).
/// Among equally strict matches the first one is named.
///
/// ```
/// use std::sync::Arc;
/// use serde_json::json;
/// use tack_core::tool::{CallId, ExecutionToken, Tier, ToolExecution, ToolName};
/// use tack_core::host::{NewExecutionToken, NewToolExecution};
/// use tack_permission::{Action, Rule, RuleSet};
///
/// let mut rules = RuleSet::new();
/// rules.push(Rule::allow("bash").command("command", "git *").build().unwrap());
/// rules.push(Rule::allow("bash").command("command", "ls*").build().unwrap());
/// rules.push(Rule::deny("bash").command("command", "git push*").build().unwrap());
/// let call = |cmd: &str| ToolExecution::new(
///     CallId::from("c"), ToolName::new("bash").unwrap(),
///     Arc::new(json!({"command": cmd})), Tier::Executes, ExecutionToken::issue(CallId::from("c")),
/// );
/// let action = |cmd: &str| rules.evaluate(&call(cmd), None).map(|d| d.action());
/// assert_eq!(action("git status && ls -la"), Some(Action::Allow));
/// assert_eq!(action("git push --force"), Some(Action::Deny));
/// assert_eq!(action("sudo git -C . pu''sh"), Some(Action::Deny));
/// // `$(…)` builds the subcommand at run time: the deny rule might apply.
/// let unread = rules.evaluate(&call("git $(echo push)"), None).unwrap();
/// assert_eq!(unread.action(), Action::Ask);
/// assert!(unread.unread().unwrap().contains("$(echo push)"));
/// assert!(rules.evaluate(&call("cat README.md | wc -l"), None).is_none());
/// // `cargo` is not a program the reader understands: it may run `git push`.
/// let opaque = rules.evaluate(&call("cargo build"), None).unwrap();
/// assert_eq!(opaque.action(), Action::Ask);
/// assert!(opaque.unread().unwrap().contains("`cargo`"));
/// ```
#[derive(Clone, Debug, Default)]
pub struct RuleSet {
    rules: Vec<Rule>,
}

impl RuleSet {
    /// No rules.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a rule.
    pub fn push(&mut self, rule: Rule) {
        self.rules.push(rule);
    }

    /// Appends every rule of `other`.
    pub fn extend(&mut self, other: RuleSet) {
        self.rules.extend(other.rules);
    }

    /// The rules in order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// How many rules.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The decision of these rules for `exec`, if any rule decides it.
    pub fn evaluate(&self, exec: &ToolExecution, root: Option<&Path>) -> Option<Decision<'_>> {
        decide(self.rules.iter(), exec, &mut Prepared::new(root))
    }
}

impl FromIterator<Rule> for RuleSet {
    fn from_iter<I: IntoIterator<Item = Rule>>(iter: I) -> Self {
        Self {
            rules: iter.into_iter().collect(),
        }
    }
}
