//! What a sandbox allows: the mode preset and its options.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::limits::ResourceLimits;

/// The preset a sandbox starts from, as other agent hosts name them.
///
/// ```
/// use tack_sandbox::SandboxMode;
/// let mode: SandboxMode = "read-only".parse().unwrap();
/// assert_eq!(mode, SandboxMode::ReadOnly);
/// assert_eq!(SandboxMode::default(), SandboxMode::WorkspaceWrite);
/// assert!("host-root".parse::<SandboxMode>().unwrap_err().to_string().contains("workspace-write"));
/// ```
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum SandboxMode {
    /// Read inside the roots; write nothing. Commands may write only `/dev/null`.
    ReadOnly,
    /// Read inside the roots; write only under the workspace root and the extra
    /// writable roots. The default.
    #[default]
    WorkspaceWrite,
    /// No confinement: the filesystem capability reads and writes anywhere and
    /// commands run without a filesystem sandbox (the network may still be denied).
    FullAccess,
}

impl SandboxMode {
    /// The mode's name: `read-only`, `workspace-write` or `full-access`.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::FullAccess => "full-access",
        }
    }
}

impl fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether commands run inside bubblewrap's namespaces.
///
/// ```
/// use tack_sandbox::{Namespaces, SandboxPolicy};
/// let policy = SandboxPolicy::workspace_write("/srv/project").with_namespaces(Namespaces::Required);
/// assert_eq!(policy.namespaces(), Namespaces::Required);
/// assert_eq!(Namespaces::default(), Namespaces::Auto);
/// ```
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Namespaces {
    /// Use bubblewrap when it works on this machine, else run commands on the
    /// floor alone (Landlock, seccomp, no capabilities); the status says
    /// which. The default.
    #[default]
    Auto,
    /// Refuse commands when bubblewrap is missing or cannot create
    /// namespaces here (under `require_os_isolation(true)`); the refusal
    /// names the `bubblewrap` package.
    Required,
    /// Never use bubblewrap: the floor alone.
    Disabled,
}

impl fmt::Display for Namespaces {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Namespaces::Auto => "auto",
            Namespaces::Required => "required",
            Namespaces::Disabled => "disabled",
        })
    }
}

/// A string that names no [`SandboxMode`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown sandbox mode `{given}`: use one of read-only, workspace-write, full-access")]
pub struct ParseModeError {
    given: String,
}

impl FromStr for SandboxMode {
    type Err = ParseModeError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "read-only" => Ok(SandboxMode::ReadOnly),
            "workspace-write" => Ok(SandboxMode::WorkspaceWrite),
            "full-access" => Ok(SandboxMode::FullAccess),
            other => Err(ParseModeError {
                given: other.to_owned(),
            }),
        }
    }
}

/// Everything a [`Sandbox`](crate::Sandbox) is built from.
///
/// Start from a preset and add options; nothing is checked until
/// [`Sandbox::new`](crate::Sandbox::new), which canonicalizes the roots and
/// compiles the denied globs.
///
/// ```
/// use tack_sandbox::{SandboxMode, SandboxPolicy};
/// let policy = SandboxPolicy::workspace_write("/srv/project")
///     .with_readable_root("/usr/share/doc")
///     .with_denied(".git/**")
///     .with_denied("**/.env")
///     .with_network(false);
/// assert_eq!(policy.mode(), SandboxMode::WorkspaceWrite);
/// assert!(!policy.network_allowed());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SandboxPolicy {
    mode: SandboxMode,
    workspace_root: PathBuf,
    readable_roots: Vec<PathBuf>,
    writable_roots: Vec<PathBuf>,
    denied: Vec<String>,
    protected: Vec<String>,
    hidden: Vec<String>,
    unix_sockets: Vec<PathBuf>,
    home: Option<PathBuf>,
    network: bool,
    namespaces: Namespaces,
    require_os_isolation: bool,
    limits: ResourceLimits,
    extra_env: Vec<String>,
    output_limit: usize,
}

/// Paths read-only to the tools in every writable preset, unless lifted
/// one by one with [`SandboxPolicy::without_protected`]: what programs
/// outside the sandbox execute from later.
///
/// - **At any depth** of every writable root, as a directory, a file or a
///   symlink: `.git` (a planted `config` fsmonitor or hook runs at the user's
///   next `git status`; a `.git` *file* redirects git to another directory),
///   `.gitmodules`, tack's own `.tack`, and the configuration other tools run
///   programs from: `.mcp.json`, `.claude`, `.codex`, `.agents`, `.vscode`,
///   `.idea`, `.envrc`, `.direnv`.
/// - **In the home directory**, when a writable root contains it: the shell
///   start-up files, git's and ssh's configuration, the desktop's autostart
///   and user services, and tack's own configuration and state.
///
/// The file tools refuse to write, create or remove these paths, present
/// or not. Commands find the existing ones mounted read-only (namespace
/// layer only), and a protected entry a command creates is removed when the
/// command ends, with a note in its output (both layers).
pub const DEFAULT_PROTECTED: &[&str] = &[
    "**/.git",
    "**/.gitmodules",
    "**/.tack",
    "**/.mcp.json",
    "**/.claude",
    "**/.codex",
    "**/.agents",
    "**/.vscode",
    "**/.idea",
    "**/.envrc",
    "**/.direnv",
    "~/.bashrc",
    "~/.bash_profile",
    "~/.bash_login",
    "~/.bash_logout",
    "~/.profile",
    "~/.zshrc",
    "~/.zshenv",
    "~/.zprofile",
    "~/.zlogin",
    "~/.zlogout",
    "~/.config/fish",
    "~/.gitconfig",
    "~/.config/git",
    "~/.ssh",
    "~/.config/autostart",
    "~/.config/systemd",
    "~/.config/tack",
    "~/.local/state/tack",
];

/// Paths hidden from the tools and from commands unless lifted one by one
/// with [`SandboxPolicy::without_hidden`]: the user's credentials, other
/// agents' credentials, browser profiles, and tack's own configuration and
/// state. Each is `~/…` (under the home directory) or absolute; one that
/// does not exist hides nothing.
///
/// The file tools refuse to read, list or write them. Commands find an
/// existing hidden directory empty and an existing hidden file empty
/// (namespace layer), or cannot open either (the floor, through Landlock);
/// see [`SandboxPolicy::with_hidden`] for what each layer leaves out.
pub const DEFAULT_HIDDEN: &[&str] = &[
    "~/.ssh",
    "~/.aws",
    "~/.azure",
    "~/.config/gcloud",
    "~/.gnupg",
    "~/.config/gh",
    "~/.docker",
    "~/.kube",
    "~/.netrc",
    "~/.npmrc",
    "~/.pypirc",
    "~/.git-credentials",
    "~/.config/git/credentials",
    "~/.cargo/credentials.toml",
    "~/.claude",
    "~/.claude.json",
    "~/.codex",
    "~/.mozilla",
    "~/.config/google-chrome",
    "~/.config/chromium",
    "~/.config/BraveSoftware",
    "~/.config/microsoft-edge",
    "~/.config/vivaldi",
    "~/snap/firefox",
    "~/.config/tack",
    "~/.local/state/tack",
];

/// Bytes kept of stdout and of stderr each when a request sets no limit.
pub const DEFAULT_OUTPUT_LIMIT: usize = 64 * 1024;

impl SandboxPolicy {
    /// A policy with `mode` over the workspace `root`. Network is denied for
    /// commands except under [`SandboxMode::FullAccess`]; OS isolation is required.
    pub fn new(mode: SandboxMode, root: impl Into<PathBuf>) -> Self {
        Self {
            mode,
            workspace_root: root.into(),
            readable_roots: Vec::new(),
            writable_roots: Vec::new(),
            denied: Vec::new(),
            protected: DEFAULT_PROTECTED.iter().map(|g| (*g).to_owned()).collect(),
            hidden: DEFAULT_HIDDEN.iter().map(|g| (*g).to_owned()).collect(),
            unix_sockets: Vec::new(),
            home: None,
            network: mode == SandboxMode::FullAccess,
            namespaces: Namespaces::Auto,
            require_os_isolation: true,
            limits: ResourceLimits::default(),
            extra_env: Vec::new(),
            output_limit: DEFAULT_OUTPUT_LIMIT,
        }
    }

    /// Read inside the roots, write nothing.
    pub fn read_only(root: impl Into<PathBuf>) -> Self {
        Self::new(SandboxMode::ReadOnly, root)
    }

    /// Read inside the roots, write under the workspace and writable roots (the default preset).
    pub fn workspace_write(root: impl Into<PathBuf>) -> Self {
        Self::new(SandboxMode::WorkspaceWrite, root)
    }

    /// No filesystem confinement; network allowed.
    pub fn full_access(root: impl Into<PathBuf>) -> Self {
        Self::new(SandboxMode::FullAccess, root)
    }

    /// Adds a root the filesystem capability may read (never write).
    pub fn with_readable_root(mut self, path: impl Into<PathBuf>) -> Self {
        self.readable_roots.push(path.into());
        self
    }

    /// Adds a root that may be written like the workspace (read-only only
    /// under [`SandboxMode::ReadOnly`], which writes nothing).
    pub fn with_writable_root(mut self, path: impl Into<PathBuf>) -> Self {
        self.writable_roots.push(path.into());
        self
    }

    /// Denies paths inside the roots that match `glob`, for reads and writes
    /// by the filesystem capability. The glob is matched against the path
    /// relative to its root (`.git/**`, `**/.env`); a path is also denied when
    /// one of its parent directories matches, and `dir/**` denies `dir` itself.
    /// Invalid globs are reported by [`Sandbox::new`](crate::Sandbox::new).
    pub fn with_denied(mut self, glob: &str) -> Self {
        self.denied.push(glob.to_owned());
        self
    }

    /// Protects `entry`: a glob relative to each root (with the semantics of
    /// [`with_denied`](Self::with_denied); `**/name` for a name at any
    /// depth), `~/path` under the home directory, or an absolute `/path`.
    /// Protected paths stay readable; the fs capability refuses to write,
    /// create or remove them, commands inside bubblewrap see the existing
    /// ones mounted read-only, and one a command creates is removed when it
    /// ends. [`DEFAULT_PROTECTED`] is protected from the start.
    ///
    /// ```
    /// use tack_sandbox::SandboxPolicy;
    /// let policy = SandboxPolicy::workspace_write("/srv/project")
    ///     .with_protected("**/Makefile")
    ///     .with_protected("/srv/project-secrets")
    ///     .without_protected("**/.vscode");
    /// assert!(policy.protected().iter().any(|p| p == "**/Makefile"));
    /// assert!(!policy.protected().iter().any(|p| p == "**/.vscode"));
    /// ```
    pub fn with_protected(mut self, glob: &str) -> Self {
        if !self.protected.iter().any(|g| g == glob) {
            self.protected.push(glob.to_owned());
        }
        self
    }

    /// Lifts the protection of `glob`, an entry as listed (e.g. `"**/.git"`
    /// to let the tools commit or edit hooks): the user's explicit choice.
    pub fn without_protected(mut self, glob: &str) -> Self {
        self.protected.retain(|g| g != glob);
        self
    }

    /// Hides `entry` (`~/path` under the home directory, or an absolute
    /// `/path`) and everything under it from the tools and from commands.
    /// [`DEFAULT_HIDDEN`] is hidden from the start.
    ///
    /// - The file tools refuse to read, list, write or remove it, in every
    ///   mode.
    /// - Commands inside bubblewrap find an existing hidden directory as an
    ///   empty read-only directory and an existing hidden file as an empty
    ///   one (`/dev/null`), at any place, inside the writable roots too.
    /// - Commands on the floor cannot open, read, list or execute it
    ///   (Landlock, read-only and workspace-write modes). Landlock only
    ///   grants, so the floor grants reading every entry next to a hidden
    ///   path and next to each directory on the way to it, instead of that
    ///   directory: those directories (`/`, `/home`, `~`) cannot be listed,
    ///   and an entry created in them after a command started cannot be
    ///   read by that command. A hidden path inside a sandbox root is not
    ///   hidden from commands on the floor (the root itself would become
    ///   unlistable); the status says `partially enforced`.
    ///
    /// A hidden entry that contains a sandbox root (a workspace inside
    /// `~/.ssh`) is not hidden at all: the user chose to work there.
    /// Entries are compared after symlinks are resolved. Under
    /// [`SandboxMode::FullAccess`] only the file tools refuse them.
    ///
    /// ```
    /// use tack_sandbox::{SandboxPolicy, DEFAULT_HIDDEN};
    /// let policy = SandboxPolicy::workspace_write("/srv/project")
    ///     .with_hidden("/srv/project-secrets")
    ///     .without_hidden("~/.npmrc");
    /// assert!(policy.hidden().iter().any(|p| p == "/srv/project-secrets"));
    /// assert!(!policy.hidden().iter().any(|p| p == "~/.npmrc"));
    /// assert!(DEFAULT_HIDDEN.contains(&"~/.ssh"));
    /// ```
    pub fn with_hidden(mut self, entry: &str) -> Self {
        if !self.hidden.iter().any(|g| g == entry) {
            self.hidden.push(entry.to_owned());
        }
        self
    }

    /// Lifts the hiding of `entry`, as listed (e.g. `"~/.npmrc"`). This is
    /// the user's choice: a host must not take it from a workspace's own
    /// configuration, which the agent may have written.
    pub fn without_hidden(mut self, entry: &str) -> Self {
        self.hidden.retain(|g| g != entry);
        self
    }

    /// Lets commands reach the Unix socket at `path` (an ssh agent, a
    /// database), the host's explicit choice. Without any, commands cannot
    /// create Unix sockets at all (`socket(AF_UNIX, …)` fails with
    /// `EAFNOSUPPORT`, "address family not supported", and the command's
    /// output gets a note saying why); `socketpair` stays allowed.
    ///
    /// With one or more, commands may create Unix sockets. Inside
    /// bubblewrap each allowed socket is bound into the sandbox (also where
    /// `/tmp` is private or the path is hidden) and every other socket found
    /// under `/run`, `/var/run` and LXD's directories when a command starts
    /// is covered by `/dev/null`; sockets elsewhere stay reachable. On the
    /// floor every path-named socket the user can reach is then reachable
    /// (seccomp cannot see the path `connect` is given); abstract sockets
    /// outside the sandbox are not (Landlock ABI 6+). The status says
    /// `partially enforced`. Commands get the socket's path only through an
    /// environment variable passed with [`with_env_var`](Self::with_env_var)
    /// (`SSH_AUTH_SOCK`) or on their command line.
    ///
    /// ```
    /// use tack_sandbox::SandboxPolicy;
    /// let policy = SandboxPolicy::workspace_write("/srv/project")
    ///     .with_unix_socket("/run/user/1000/ssh-agent.socket")
    ///     .with_env_var("SSH_AUTH_SOCK");
    /// assert_eq!(policy.unix_sockets().len(), 1);
    /// ```
    pub fn with_unix_socket(mut self, path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        if !self.unix_sockets.contains(&path) {
            self.unix_sockets.push(path);
        }
        self
    }

    /// The home directory `~/` protected and hidden entries name (default:
    /// `$HOME` when the sandbox is built).
    pub fn with_home_dir(mut self, home: impl Into<PathBuf>) -> Self {
        self.home = Some(home.into());
        self
    }

    /// The home directory set with [`with_home_dir`](Self::with_home_dir).
    pub fn home_dir(&self) -> Option<&Path> {
        self.home.as_deref()
    }

    /// Whether commands may use the network. When not, commands run in a
    /// new network namespace (bubblewrap), else the seccomp filter refuses
    /// AF_INET and AF_INET6 sockets; see
    /// [`IsolationStatus`](crate::IsolationStatus).
    pub fn with_network(mut self, allowed: bool) -> Self {
        self.network = allowed;
        self
    }

    /// Whether commands run inside bubblewrap's namespaces (default
    /// [`Namespaces::Auto`]). Ignored under [`SandboxMode::FullAccess`].
    pub fn with_namespaces(mut self, namespaces: Namespaces) -> Self {
        self.namespaces = namespaces;
        self
    }

    /// Whether commands must run under OS isolation (default `true`). When the
    /// kernel cannot apply what the policy asks for, `true` refuses every
    /// command and `false` runs it with a logged warning.
    pub fn require_os_isolation(mut self, required: bool) -> Self {
        self.require_os_isolation = required;
        self
    }

    /// Replaces the resource limits commands run with.
    pub fn with_limits(mut self, limits: ResourceLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Passes one more environment variable through to commands. Names that
    /// end in `_KEY`, `_TOKEN`, `_SECRET` or `_PASSWORD` are never passed.
    pub fn with_env_var(mut self, name: impl Into<String>) -> Self {
        self.extra_env.push(name.into());
        self
    }

    /// The bytes kept of stdout and of stderr each when a request sets no limit.
    pub fn with_default_output_limit(mut self, bytes: usize) -> Self {
        self.output_limit = bytes;
        self
    }

    /// The mode.
    pub fn mode(&self) -> SandboxMode {
        self.mode
    }

    /// The workspace root as given.
    pub fn workspace_root(&self) -> &Path {
        &self.workspace_root
    }

    /// The extra read-only roots as given.
    pub fn readable_roots(&self) -> &[PathBuf] {
        &self.readable_roots
    }

    /// The extra writable roots as given.
    pub fn writable_roots(&self) -> &[PathBuf] {
        &self.writable_roots
    }

    /// The denied globs.
    pub fn denied(&self) -> &[String] {
        &self.denied
    }

    /// The protected globs (read-only to the tools).
    pub fn protected(&self) -> &[String] {
        &self.protected
    }

    /// The hidden entries (unreadable to the tools and to commands).
    pub fn hidden(&self) -> &[String] {
        &self.hidden
    }

    /// The Unix sockets commands may reach, as given.
    pub fn unix_sockets(&self) -> &[PathBuf] {
        &self.unix_sockets
    }

    /// Whether commands may use the network.
    pub fn network_allowed(&self) -> bool {
        self.network
    }

    /// Whether commands run inside bubblewrap's namespaces.
    pub fn namespaces(&self) -> Namespaces {
        self.namespaces
    }

    /// Whether commands must run under OS isolation.
    pub fn os_isolation_required(&self) -> bool {
        self.require_os_isolation
    }

    /// The resource limits of commands.
    pub fn limits(&self) -> &ResourceLimits {
        &self.limits
    }

    /// Extra environment variables passed to commands.
    pub fn extra_env(&self) -> &[String] {
        &self.extra_env
    }

    /// The default output cap per stream.
    pub fn default_output_limit(&self) -> usize {
        self.output_limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_round_trip_through_their_names() {
        for mode in [
            SandboxMode::ReadOnly,
            SandboxMode::WorkspaceWrite,
            SandboxMode::FullAccess,
        ] {
            assert_eq!(mode.as_str().parse::<SandboxMode>().unwrap(), mode);
        }
    }

    #[test]
    fn an_unknown_mode_is_rejected_with_the_vocabulary() {
        let err = "host-root".parse::<SandboxMode>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown sandbox mode `host-root`: use one of read-only, workspace-write, full-access"
        );
    }

    #[test]
    fn presets_set_network_defaults() {
        assert!(!SandboxPolicy::read_only("/x").network_allowed());
        assert!(!SandboxPolicy::workspace_write("/x").network_allowed());
        assert!(SandboxPolicy::full_access("/x").network_allowed());
        assert!(SandboxPolicy::workspace_write("/x").os_isolation_required());
    }

    #[test]
    fn git_and_tack_are_protected_until_lifted() {
        let policy = SandboxPolicy::workspace_write("/x");
        assert_eq!(policy.protected(), DEFAULT_PROTECTED);
        let lifted = policy.without_protected("**/.git").with_protected("ci/**");
        assert!(!lifted.protected().iter().any(|p| p == "**/.git"));
        assert_eq!(lifted.protected().last().map(String::as_str), Some("ci/**"));
    }

    #[test]
    fn credentials_are_hidden_until_lifted_and_sockets_are_listed_once() {
        let policy = SandboxPolicy::read_only("/x");
        assert_eq!(policy.hidden(), DEFAULT_HIDDEN);
        let lifted = policy
            .without_hidden("~/.ssh")
            .with_hidden("/srv/keys")
            .with_hidden("/srv/keys")
            .with_unix_socket("/run/a.sock")
            .with_unix_socket("/run/a.sock");
        assert!(!lifted.hidden().iter().any(|p| p == "~/.ssh"));
        assert_eq!(
            lifted.hidden().last().map(String::as_str),
            Some("/srv/keys")
        );
        assert_eq!(lifted.hidden().len(), DEFAULT_HIDDEN.len());
        assert_eq!(lifted.unix_sockets(), [PathBuf::from("/run/a.sock")]);
    }
}
