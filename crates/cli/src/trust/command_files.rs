//! What a hook command or an MCP server's command runs from inside the
//! workspace, so that trust covers the programs and not only the file that
//! names them.
//!
//! For each simple command (a hook's `sh -c` line is split by
//! [`super::shell_words`]; a stdio server is its `command` and `args`):
//!
//! * the program, resolved as it will be: a path relative to the working
//!   directory, or a lookup on `PATH` (the server's `env.PATH` when set).
//!   A `PATH` entry inside the workspace is a caveat, and each entry inside
//!   it that comes before the program found (or every one, when none is
//!   found) is recorded as *missing*: a program planted there later would
//!   run instead;
//! * an interpreter's script (`sh x.sh`, `bash x`, `python3 server.py`,
//!   `node srv.js`, `ruby`, `perl`, …), a shell's `-c` text (read the same
//!   way), a Python module given as `-m pkg` (its file or package directory
//!   in the working directory, or both recorded missing), `uv run …`;
//! * `npx`, `bunx`, `pnpm dlx`, `yarn dlx`, `npm exec`: the package's
//!   `node_modules/.bin/NAME` in the working directory or a parent (the
//!   link, its target and the package's `package.json`), or, when there is
//!   none, those places recorded missing;
//! * any other word that is an existing file.
//!
//! Each such file inside the workspace is recorded with its SHA-256 (a
//! symlink: of its target's name, plus the target's contents; a directory:
//! of its files' names and hashes), or as missing. A change, a
//! disappearance or an appearance is refused. What tack cannot know (the
//! modules an interpreter imports, a package npx downloads, text the shell
//! computes when it runs) is said in [`Runs::caveats`].

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use super::inside;
use super::shell_words::{Word, simple_commands};
use super::store::sha256_hex;

/// A file's recorded state: its SHA-256, or `None` when it is missing.
pub type FileState = Option<String>;

/// What a command runs from inside the workspace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Runs {
    /// The files inside the workspace it runs or loads, by path (the
    /// directory's symlinks resolved, the name as written), with their
    /// state now.
    pub files: BTreeMap<PathBuf, FileState>,
    /// What tack cannot know about what it runs.
    pub caveats: Vec<String>,
}

impl Runs {
    /// Adds `other`'s files and caveats.
    pub fn extend(&mut self, other: Runs) {
        self.files.extend(other.files);
        for caveat in other.caveats {
            self.caveat(caveat);
        }
    }

    fn caveat(&mut self, text: String) {
        if !self.caveats.contains(&text) {
            self.caveats.push(text);
        }
    }
}

/// What the hook command `command` runs (`sh -c` in the workspace `root`).
pub fn of_hook(command: &str, root: &Path) -> Runs {
    let mut scan = Scan {
        root,
        cwd: root.to_owned(),
        path_var: std::env::var_os("PATH"),
        what: format!("the hook `{}`", tack_agent::escape_line(command)),
        runs: Runs::default(),
    };
    scan.shell(command, 0);
    scan.runs
}

/// What the MCP server `name` (`.mcp.json`'s shape) runs; nothing for a
/// server reached by URL.
pub fn of_server(name: &str, server: &Value, root: &Path) -> Runs {
    let Some(command) = server.get("command").and_then(Value::as_str) else {
        return Runs::default();
    };
    let mut words = vec![command.to_owned()];
    if let Some(Value::Array(args)) = server.get("args") {
        words.extend(args.iter().filter_map(Value::as_str).map(str::to_owned));
    }
    // The server starts in tack's working directory unless it sets `cwd`.
    let host = std::env::current_dir().unwrap_or_else(|_| root.to_owned());
    let cwd = match server.get("cwd").and_then(Value::as_str) {
        Some(dir) => host.join(dir),
        None => host,
    };
    let path_var = server
        .get("env")
        .and_then(|env| env.get("PATH"))
        .and_then(Value::as_str)
        .map(OsString::from)
        .or_else(|| std::env::var_os("PATH"));
    let mut scan = Scan {
        root,
        cwd,
        path_var,
        what: format!(
            "MCP server `{}` (`{}`)",
            tack_agent::escape_line(name),
            tack_agent::escape_line(&words.join(" "))
        ),
        runs: Runs::default(),
    };
    let words: Vec<Word> = words
        .into_iter()
        .map(|text| Word {
            text,
            dynamic: false,
        })
        .collect();
    scan.simple(&words, 0, false);
    scan.runs
}

/// The state of `path` now: see [`FileState`]. A symlink's is of its
/// target's name; a directory's of its files' names and hashes (Python's
/// `__pycache__` left out); an unreadable file has a state no hash equals.
pub fn state_of(path: &Path) -> FileState {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => return Some(format!("unreadable ({e})")),
    };
    if meta.file_type().is_symlink() {
        return Some(match std::fs::read_link(path) {
            Ok(target) => sha256_hex(format!("symlink\0{}", target.display()).as_bytes()),
            Err(e) => format!("unreadable ({e})"),
        });
    }
    if meta.is_dir() {
        let mut listing = String::new();
        tree(path, Path::new(""), &mut listing);
        return Some(sha256_hex(listing.as_bytes()));
    }
    Some(match std::fs::read(path) {
        Ok(bytes) => sha256_hex(&bytes),
        Err(e) => format!("unreadable ({e})"),
    })
}

/// One `name\0state\n` line per entry under `dir`, sorted.
fn tree(dir: &Path, rel: &Path, listing: &mut String) {
    let mut names: Vec<_> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .map(|e| e.file_name())
            .collect(),
        Err(e) => {
            listing.push_str(&format!("{}\0unreadable ({e})\n", rel.display()));
            return;
        }
    };
    names.sort();
    for name in names {
        if name == "__pycache__" || Path::new(&name).extension().is_some_and(|e| e == "pyc") {
            continue;
        }
        let path = dir.join(&name);
        let rel = rel.join(&name);
        let is_dir = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir());
        if is_dir {
            listing.push_str(&format!("{}/\n", rel.display()));
            tree(&path, &rel, listing);
        } else {
            let state = state_of(&path).unwrap_or_default();
            listing.push_str(&format!("{}\0{state}\n", rel.display()));
        }
    }
}

/// The key `path` is recorded under: its directory with symlinks resolved
/// and its name as written (a symlink stays itself), else made absolute
/// and `.`/`..` removed.
pub fn key_of(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    let mut clean = PathBuf::new();
    for part in absolute.components() {
        match part {
            Component::ParentDir => {
                clean.pop();
            }
            Component::CurDir => {}
            other => clean.push(other),
        }
    }
    match (clean.parent(), clean.file_name()) {
        (Some(dir), Some(name)) => dir
            .canonicalize()
            .map_or_else(|_| clean.clone(), |dir| dir.join(name)),
        _ => clean,
    }
}

/// Words a shell runs itself, never looked up on `PATH`.
const SHELL_BUILTINS: &[&str] = &[
    ":", ".", "[", "alias", "cd", "echo", "eval", "exit", "export", "false", "printf", "pwd",
    "read", "return", "set", "shift", "source", "test", "trap", "true", "umask", "unset", "wait",
];

/// Words before the program: skipped.
const PREFIXES: &[&str] = &[
    "!", "{", "}", "if", "then", "else", "elif", "fi", "while", "until", "do", "done", "exec",
    "nohup", "time", "command", "builtin",
];

struct Scan<'a> {
    root: &'a Path,
    cwd: PathBuf,
    path_var: Option<OsString>,
    /// The command, for caveats.
    what: String,
    runs: Runs,
}

impl Scan<'_> {
    fn caveat(&mut self, why: &str) {
        let text = format!("{}: {why}", self.what);
        self.runs.caveat(text);
    }

    fn shell(&mut self, text: &str, depth: usize) {
        if depth > 4 {
            self.caveat(
                "nests `sh -c` too deep for tack to follow; what the innermost runs is not covered",
            );
            return;
        }
        if text.contains("$(") || text.contains('`') {
            self.caveat(
                "computes part of itself when it runs (`$(…)` or backticks); what that runs is not covered",
            );
        }
        let project = self.root.to_string_lossy().into_owned();
        for words in simple_commands(text, &project) {
            self.simple(&words, depth, true);
        }
    }

    /// One simple command; `in_shell`: run by `sh` (builtins exist).
    fn simple(&mut self, words: &[Word], depth: usize, in_shell: bool) {
        let mut i = 0;
        while let Some(word) = words.get(i) {
            let text = word.text.as_str();
            if is_assignment(text) || (in_shell && PREFIXES.contains(&text)) {
                i += 1;
            } else if text == "env" {
                i += 1;
                while words
                    .get(i)
                    .is_some_and(|w| w.text.starts_with('-') || is_assignment(&w.text))
                {
                    i += 1;
                }
            } else {
                break;
            }
        }
        let Some(program) = words.get(i) else {
            return;
        };
        let args = &words[i + 1..];
        if program.dynamic {
            self.caveat(&format!(
                "runs `{}`, which the shell works out when it runs; what that is is not covered",
                program.text
            ));
            return;
        }
        if in_shell && SHELL_BUILTINS.contains(&program.text.as_str()) {
            if matches!(program.text.as_str(), "." | "source") {
                self.script(args.first());
            } else if program.text == "eval" {
                self.caveat("uses `eval`; what that runs is not covered");
            }
            return;
        }
        self.program(&program.text);
        let name = Path::new(&program.text)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match name.as_str() {
            "sh" | "bash" | "dash" | "zsh" | "ksh" | "mksh" | "ash" | "fish" => {
                match args.iter().position(|a| a.text == "-c") {
                    Some(at) => {
                        if let Some(inner) = args.get(at + 1) {
                            if inner.dynamic {
                                self.caveat("runs `-c` text the shell works out when it runs; what that runs is not covered");
                            }
                            self.shell(&inner.text, depth + 1);
                        }
                    }
                    None => self.script(first_operand(args, &["-o", "+o"])),
                }
            }
            n if is_python(n) => self.python(args),
            "node" | "nodejs" | "ts-node" | "tsx" => {
                self.script(first_operand(
                    args,
                    &[
                        "-r",
                        "--require",
                        "--import",
                        "--loader",
                        "--experimental-loader",
                    ],
                ));
                self.caveat(&format!(
                    "{name} loads the modules the script imports (relative paths, node_modules) from the workspace: only the script is covered"
                ));
            }
            "deno" | "bun" => {
                let rest = match args.first() {
                    Some(first) if first.text == "run" => &args[1..],
                    _ => args,
                };
                self.script(first_operand(rest, &[]));
                self.caveat(&format!(
                    "{name} loads the modules the script imports from the workspace: only the script is covered"
                ));
            }
            "ruby" | "perl" | "php" | "lua" | "Rscript" | "tclsh" | "wish" => {
                self.script(first_operand(args, &["-I", "-r", "-e"]));
                self.caveat(&format!(
                    "{name} may load other files the script requires from the workspace: only the script is covered"
                ));
            }
            "npx" | "bunx" | "pnpx" => self.npx(args),
            "npm" | "pnpm" | "yarn"
                if args
                    .first()
                    .is_some_and(|a| matches!(a.text.as_str(), "exec" | "dlx" | "x")) =>
            {
                self.npx(&args[1..]);
            }
            "uv" if args.first().is_some_and(|a| a.text == "run") => self.uv_run(&args[1..], depth),
            "uvx" => {
                self.caveat("uvx runs a tool from its package index, which trust cannot cover")
            }
            _ => {}
        }
        // Any other word that names an existing file.
        for arg in args.iter().filter(|a| !a.dynamic) {
            let path = self.cwd.join(&arg.text);
            if !arg.text.is_empty() && path.is_file() {
                self.record(&path);
            }
        }
    }

    /// Resolves and records the program `name`.
    fn program(&mut self, name: &str) {
        if name.contains('/') {
            let path = self.cwd.join(name);
            self.record(&path);
            return;
        }
        let path_var = self.path_var.clone().unwrap_or_default();
        for dir in std::env::split_paths(&path_var) {
            // An empty or relative entry is relative to the working directory.
            let dir = self.cwd.join(dir);
            let candidate = dir.join(name);
            let in_workspace = inside(&dir, self.root);
            if in_workspace {
                self.caveat(&format!(
                    "PATH includes {}, inside the workspace: `{name}` is looked up there, and what it loads is not covered",
                    dir.display()
                ));
            }
            if is_executable(&candidate) {
                self.record(&candidate);
                return;
            }
            if in_workspace {
                self.record(&candidate);
            }
        }
    }

    /// Records the script `word` names (missing included).
    fn script(&mut self, word: Option<&Word>) {
        let Some(word) = word else {
            return;
        };
        if word.dynamic {
            self.caveat(&format!(
                "runs the script `{}`, whose name the shell works out when it runs; what that is is not covered",
                word.text
            ));
            return;
        }
        if word.text.is_empty() || word.text == "-" {
            return;
        }
        let path = self.cwd.join(&word.text);
        self.record(&path);
    }

    fn python(&mut self, args: &[Word]) {
        let mut i = 0;
        while let Some(arg) = args.get(i) {
            let text = arg.text.as_str();
            let module = match text {
                "-m" => args.get(i + 1).map(|m| m.text.clone()),
                t if t.starts_with("-m") => Some(t[2..].to_owned()),
                _ => None,
            };
            if let Some(module) = module {
                self.module(&module);
                return;
            }
            match text {
                "-c" => {
                    self.caveat(
                        "runs inline Python code (`-c`); the modules it imports are not covered",
                    );
                    return;
                }
                "-W" | "-X" | "--check-hash-based-pycs" => i += 2,
                "-" => return,
                t if t.starts_with('-') => i += 1,
                _ => {
                    self.script(Some(arg));
                    self.caveat(
                        "Python imports modules from the script's directory and its installed packages (a virtual environment in the workspace included): only the script is covered",
                    );
                    return;
                }
            }
        }
    }

    /// `python -m module`: its file or package in the working directory
    /// (first on Python's path), else both places recorded missing.
    fn module(&mut self, module: &str) {
        let top = module.split('.').next().unwrap_or_default();
        if top.is_empty() {
            return;
        }
        let dir = self.cwd.join(top);
        let file = self.cwd.join(format!("{top}.py"));
        if dir.is_dir() {
            self.record(&dir);
        } else if file.is_file() {
            self.record(&file);
        } else {
            self.record(&dir);
            self.record(&file);
            self.caveat(&format!(
                "Python imports the module `{module}` from its installed packages (a virtual environment in the workspace included), which trust does not cover"
            ));
            return;
        }
        self.caveat(&format!(
            "the module `{module}` may import other modules from the workspace or its installed packages: only its own file or package is covered"
        ));
    }

    /// `npx [options] PACKAGE[@version] …`: the local install, if any.
    fn npx(&mut self, args: &[Word]) {
        let mut package = None;
        let mut command = None;
        let mut i = 0;
        while let Some(arg) = args.get(i) {
            let text = arg.text.as_str();
            if text == "-p" || text == "--package" {
                package = args.get(i + 1).map(|w| w.text.clone());
                i += 2;
            } else if let Some(p) = text.strip_prefix("--package=") {
                package = Some(p.to_owned());
                i += 1;
            } else if text.starts_with('-') {
                i += 1;
            } else {
                command = Some(arg.text.clone());
                break;
            }
        }
        let Some(spec) = command.or(package) else {
            return;
        };
        let bin = bin_name(&spec);
        let mut found = false;
        for dir in self.cwd.clone().ancestors() {
            let link = dir.join("node_modules").join(".bin").join(&bin);
            if std::fs::symlink_metadata(&link).is_ok() {
                self.record(&link);
                if let Some(manifest) = link
                    .canonicalize()
                    .ok()
                    .and_then(|target| package_json(&target))
                {
                    self.record(&manifest);
                }
                self.caveat(&format!(
                    "runs the installed `{bin}` from {}, which loads the package's other files and dependencies from node_modules: only its program and package.json are covered",
                    link.display()
                ));
                found = true;
                break;
            }
            if inside(dir, self.root) {
                self.record(&link);
            }
        }
        if !found {
            self.caveat(&format!(
                "`{spec}` is not installed in the workspace, so it is fetched from the package registry when it runs, which trust cannot cover (if it appears in node_modules/.bin, sessions are refused until trusted again)"
            ));
        }
    }

    /// `uv run [options] COMMAND…`.
    fn uv_run(&mut self, args: &[Word], depth: usize) {
        const VALUED: &[&str] = &[
            "--with",
            "--with-requirements",
            "--python",
            "-p",
            "--project",
            "--directory",
            "--package",
            "--extra",
            "--group",
            "--env-file",
            "--index",
            "--default-index",
            "--from",
        ];
        let mut i = 0;
        while let Some(arg) = args.get(i) {
            if VALUED.contains(&arg.text.as_str()) {
                i += 2;
            } else if arg.text.starts_with('-') {
                i += 1;
            } else {
                break;
            }
        }
        self.caveat(
            "`uv run` installs the project's dependencies and runs in its environment, which trust does not cover",
        );
        let rest = &args[i.min(args.len())..];
        if let Some(first) = rest.first()
            && Path::new(&first.text)
                .extension()
                .is_some_and(|e| e == "py")
        {
            self.script(Some(first));
            return;
        }
        self.simple(rest, depth + 1, false);
    }

    /// Records `path` if it is inside the workspace: its state, and for a
    /// symlink its target's too.
    fn record(&mut self, path: &Path) {
        if !inside(path, self.root) {
            return;
        }
        let key = key_of(path);
        let state = state_of(&key);
        let link = std::fs::symlink_metadata(&key).is_ok_and(|m| m.file_type().is_symlink());
        self.runs.files.insert(key.clone(), state);
        if link && let Ok(target) = key.canonicalize() {
            let state = state_of(&target);
            self.runs.files.insert(target, state);
        }
    }
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

fn is_python(name: &str) -> bool {
    name == "pypy3"
        || name == "pypy"
        || name
            .strip_prefix("python")
            .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// The first argument that is not an option (after `--`, the next one);
/// `valued` options take the next word.
fn first_operand<'a>(args: &'a [Word], valued: &[&str]) -> Option<&'a Word> {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let text = arg.text.as_str();
        if text == "--" {
            return args.get(i + 1);
        }
        if valued.contains(&text) {
            i += 2;
        } else if text.starts_with('-') || text.starts_with('+') {
            i += 1;
        } else {
            return Some(arg);
        }
    }
    None
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `@scope/pkg@1.2` → `pkg`.
fn bin_name(spec: &str) -> String {
    let unscoped = spec
        .strip_prefix('@')
        .and_then(|s| s.split_once('/'))
        .map_or(spec, |(_, name)| name);
    unscoped.split('@').next().unwrap_or(unscoped).to_owned()
}

/// The `package.json` of the package holding `file` (the nearest one
/// above it).
fn package_json(file: &Path) -> Option<PathBuf> {
    file.ancestors()
        .skip(1)
        .map(|dir| dir.join("package.json"))
        .find(|manifest| manifest.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        (dir, ws)
    }

    #[test]
    fn interpreter_scripts_missing_ones_and_modules_are_found() {
        let (_dir, ws) = ws();
        std::fs::write(ws.join("server.py"), "print()").unwrap();
        std::fs::create_dir_all(ws.join("pkg/__pycache__")).unwrap();
        std::fs::write(ws.join("pkg/__init__.py"), "").unwrap();
        let runs = of_hook("python3 server.py && sh scripts/on-stop.sh", &ws);
        assert!(runs.files[&ws.join("server.py")].is_some());
        assert_eq!(runs.files[&ws.join("scripts/on-stop.sh")], None);
        assert!(runs.caveats.iter().any(|c| c.contains("imports modules")));
        let runs = of_hook("python3 -m pkg.main --flag", &ws);
        let before = runs.files[&ws.join("pkg")].clone();
        assert!(before.is_some());
        // Python's own cache does not count; a new module does.
        std::fs::write(ws.join("pkg/__pycache__/x.pyc"), "c").unwrap();
        assert_eq!(
            of_hook("python3 -m pkg.main", &ws).files[&ws.join("pkg")],
            before
        );
        std::fs::write(ws.join("pkg/main.py"), "").unwrap();
        assert_ne!(
            of_hook("python3 -m pkg.main", &ws).files[&ws.join("pkg")],
            before
        );
        // `sh -c` text is read the same way.
        let runs = of_hook("bash -c 'node srv.js'", &ws);
        assert_eq!(runs.files[&ws.join("srv.js")], None);
        // A file outside the workspace is the user's own.
        assert!(of_hook("sh /etc/profile", &ws).files.is_empty());
    }

    #[test]
    fn npx_finds_the_local_install_or_records_its_absence() {
        let (_dir, ws) = ws();
        let server = serde_json::json!({"command": "npx", "args": ["-y", "@acme/some-server@1", "."], "cwd": ws});
        let runs = of_server("s", &server, &ws);
        let link = ws.join("node_modules/.bin/some-server");
        assert_eq!(runs.files[&link], None);
        assert!(runs.caveats.iter().any(|c| c.contains("package registry")));
        std::fs::create_dir_all(ws.join("node_modules/@acme/some-server/bin")).unwrap();
        std::fs::create_dir_all(ws.join("node_modules/.bin")).unwrap();
        std::fs::write(ws.join("node_modules/@acme/some-server/package.json"), "{}").unwrap();
        std::fs::write(ws.join("node_modules/@acme/some-server/bin/s.js"), "x").unwrap();
        std::os::unix::fs::symlink("../@acme/some-server/bin/s.js", &link).unwrap();
        let runs = of_server("s", &server, &ws);
        assert!(runs.files[&link].is_some());
        assert!(runs.files[&ws.join("node_modules/@acme/some-server/bin/s.js")].is_some());
        assert!(runs.files[&ws.join("node_modules/@acme/some-server/package.json")].is_some());
    }

    #[test]
    fn a_path_entry_inside_the_workspace_is_a_caveat_and_guarded() {
        let (_dir, ws) = ws();
        std::fs::create_dir_all(ws.join("bin")).unwrap();
        let server = serde_json::json!({"command": "sh", "args": ["-c", "true"], "env": {"PATH": format!("{}:/usr/bin:/bin", ws.join("bin").display())}});
        let runs = of_server("s", &server, &ws);
        assert_eq!(runs.files[&ws.join("bin/sh")], None);
        assert!(runs.caveats.iter().any(|c| c.contains("PATH includes")));
    }

    #[test]
    fn names_are_bins() {
        assert_eq!(bin_name("@scope/pkg@1.2"), "pkg");
        assert_eq!(bin_name("server@latest"), "server");
        assert!(is_python("python3.12") && is_python("python") && !is_python("pythonx"));
        assert!(is_assignment("A_1=x") && !is_assignment("--a=b"));
    }
}
