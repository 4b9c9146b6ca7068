//! Normalizing an argv: basename of argv\[0\], wrappers unwrapped, git's
//! global options skipped, shells and `eval` read, and the commands that
//! run code out of sight (`source`, `find -exec`, a shell fed by a pipe)
//! marked unreadable.

use super::programs::{self, GitSub};
use super::variables::assigned_name;
use super::walk::{Stdin, Walker};
use super::{Tok, View};

/// How many wrappers deep `sudo env nice timeout …` is unwrapped.
const MAX_UNWRAP: usize = 16;

/// Shells whose `-c` string and stdin are read as bash.
const SHELLS: [&str; 10] = [
    "sh",
    "bash",
    "dash",
    "zsh",
    "ksh",
    "mksh",
    "ash",
    "yash",
    "fish",
    "busybox-sh",
];

/// Interpreters that read a program from stdin when given no script.
const INTERPRETERS: [&str; 14] = [
    "python", "python2", "python3", "perl", "ruby", "node", "nodejs", "php", "lua", "luajit",
    "tclsh", "deno", "bun", "pwsh",
];

/// Bash builtins that take variable names, where bash evaluates an array
/// subscript (`a[$(cmd)]`) as arithmetic, running its substitutions.
const NAME_BUILTINS: [&str; 13] = [
    "declare",
    "typeset",
    "local",
    "export",
    "readonly",
    "let",
    "read",
    "mapfile",
    "readarray",
    "unset",
    "getopts",
    "wait",
    "printf",
];

/// A command that runs another command given in its arguments.
struct Wrapper {
    name: &'static str,
    /// Short options that take an argument (attached or next word).
    short_args: &'static str,
    /// Short options without an argument.
    short_flags: &'static str,
    /// Long options that take an argument (`--user root` or `--user=root`).
    long_args: &'static [&'static str],
    /// Long options without an argument.
    long_flags: &'static [&'static str],
    /// Options after which no command runs (`command -v`, `chrt -p`).
    stops: &'static [&'static str],
    /// Positional arguments before the command (`timeout DURATION cmd`).
    positionals: usize,
    /// `NAME=value` words before the command are skipped.
    assignments: bool,
    /// The command gets more arguments at run time (`xargs`).
    more: bool,
    /// A bare `-N` (`nice -10`) is an option.
    numeric: bool,
}

const fn wrapper(name: &'static str) -> Wrapper {
    Wrapper {
        name,
        short_args: "",
        short_flags: "",
        long_args: &[],
        long_flags: &[],
        stops: &[],
        positionals: 0,
        assignments: false,
        more: false,
        numeric: false,
    }
}

const WRAPPERS: &[Wrapper] = &[
    Wrapper {
        short_args: "CDghprRtTUu",
        short_flags: "AbBEeHiKknNPSsVv",
        long_args: &[
            "close-from",
            "chdir",
            "group",
            "host",
            "prompt",
            "chroot",
            "role",
            "type",
            "command-timeout",
            "other-user",
            "user",
        ],
        long_flags: &[
            "askpass",
            "background",
            "bell",
            "preserve-env",
            "edit",
            "set-home",
            "login",
            "remove-timestamp",
            "reset-timestamp",
            "list",
            "non-interactive",
            "preserve-groups",
            "stdin",
            "shell",
            "validate",
            "help",
            "version",
        ],
        stops: &[
            "-e",
            "--edit",
            "-l",
            "--list",
            "-v",
            "--validate",
            "-K",
            "-V",
            "--version",
            "--help",
        ],
        assignments: true,
        ..wrapper("sudo")
    },
    Wrapper {
        short_args: "uC",
        short_flags: "Lns",
        stops: &["-C", "-L", "-s"],
        ..wrapper("doas")
    },
    Wrapper {
        short_args: "uCP",
        short_flags: "i0v",
        long_args: &["unset", "chdir"],
        long_flags: &[
            "ignore-environment",
            "null",
            "debug",
            "block-signal",
            "default-signal",
            "ignore-signal",
            "list-signal-handling",
            "help",
            "version",
        ],
        stops: &["--help", "--version", "--list-signal-handling"],
        assignments: true,
        ..wrapper("env")
    },
    Wrapper {
        short_flags: "p",
        stops: &["-v", "-V"],
        ..wrapper("command")
    },
    wrapper("builtin"),
    Wrapper {
        short_args: "a",
        short_flags: "cl",
        ..wrapper("exec")
    },
    Wrapper {
        short_args: "n",
        long_args: &["adjustment"],
        long_flags: &["help", "version"],
        numeric: true,
        ..wrapper("nice")
    },
    Wrapper {
        short_args: "cnpPu",
        short_flags: "t",
        long_args: &["class", "classdata", "pid", "pgid", "uid"],
        long_flags: &["ignore", "help", "version"],
        stops: &["-p", "-P", "-u", "--pid", "--pgid", "--uid"],
        ..wrapper("ionice")
    },
    Wrapper {
        long_flags: &["help", "version"],
        ..wrapper("nohup")
    },
    Wrapper {
        short_args: "sk",
        short_flags: "v",
        long_args: &["signal", "kill-after"],
        long_flags: &[
            "preserve-status",
            "foreground",
            "verbose",
            "help",
            "version",
        ],
        stops: &["--help", "--version"],
        positionals: 1,
        ..wrapper("timeout")
    },
    Wrapper {
        short_args: "ioe",
        long_args: &["input", "output", "error"],
        long_flags: &["help", "version"],
        ..wrapper("stdbuf")
    },
    Wrapper {
        short_args: "fo",
        short_flags: "pavq",
        long_args: &["format", "output"],
        long_flags: &[
            "append",
            "verbose",
            "portability",
            "quiet",
            "help",
            "version",
        ],
        ..wrapper("time")
    },
    Wrapper {
        short_flags: "cfw",
        long_flags: &["ctty", "fork", "wait", "help", "version"],
        ..wrapper("setsid")
    },
    Wrapper {
        short_args: "adEILnPs",
        short_flags: "0prtxo",
        long_args: &[
            "arg-file",
            "delimiter",
            "max-args",
            "max-procs",
            "max-chars",
            "process-slot-var",
        ],
        long_flags: &[
            "null",
            "interactive",
            "no-run-if-empty",
            "verbose",
            "exit",
            "open-tty",
            "show-limits",
            "eof",
            "replace",
            "max-lines",
            "help",
            "version",
        ],
        stops: &["--help", "--version"],
        more: true,
        ..wrapper("xargs")
    },
    Wrapper {
        short_args: "TPD",
        short_flags: "abdfiorRv",
        long_args: &["sched-runtime", "sched-period", "sched-deadline"],
        long_flags: &[
            "all-tasks",
            "batch",
            "deadline",
            "fifo",
            "idle",
            "other",
            "rr",
            "reset-on-fork",
            "verbose",
            "help",
            "version",
        ],
        stops: &["-p", "--pid", "-m", "--max"],
        positionals: 1,
        ..wrapper("chrt")
    },
    Wrapper {
        short_flags: "ac",
        long_flags: &["all-tasks", "cpu-list", "help", "version"],
        stops: &["-p", "--pid"],
        positionals: 1,
        ..wrapper("taskset")
    },
    Wrapper {
        short_args: "Ewc",
        short_flags: "sxnuoFv",
        long_args: &["conflict-exit-code", "timeout", "wait", "command"],
        long_flags: &[
            "shared",
            "exclusive",
            "nonblock",
            "unlock",
            "close",
            "no-fork",
            "verbose",
        ],
        positionals: 1,
        ..wrapper("flock")
    },
    Wrapper {
        long_args: &["user"],
        long_flags: &["disable-internal-agent", "keep-cwd", "help", "version"],
        stops: &["--help", "--version"],
        ..wrapper("pkexec")
    },
    Wrapper {
        long_args: &["userspec", "groups"],
        long_flags: &["skip-chdir", "help", "version"],
        stops: &["--help", "--version"],
        positionals: 1,
        ..wrapper("chroot")
    },
    Wrapper {
        short_args: "lsi",
        short_flags: "uh",
        long_args: &["lib", "faked", "save-file", "load-file"],
        long_flags: &["unknown-is-real", "help", "version"],
        stops: &["-h", "--help", "--version", "-v"],
        ..wrapper("fakeroot")
    },
    wrapper("busybox"),
    wrapper("coproc"),
    wrapper("unbuffer"),
];

/// The outcome of skipping a wrapper's options.
enum Unwrap {
    /// The inner command starts at this index.
    At(usize),
    /// The wrapper runs no command here.
    Nothing,
    /// An option this reader does not know: where the command starts is unclear.
    Unknown(String),
}

impl Wrapper {
    fn skip(&self, words: &[Tok]) -> Unwrap {
        let mut i = 1;
        let mut positionals = self.positionals;
        while i < words.len() {
            let Some(word) = words[i].lit() else {
                return Unwrap::Unknown(format!(
                    "`{}` is given `{}`, which is expanded at run time",
                    self.name,
                    words[i].source()
                ));
            };
            if self.stops.contains(&word) {
                return Unwrap::Nothing;
            }
            if word == "--" {
                i += 1;
                break;
            }
            if word == "-" && self.name == "env" {
                i += 1; // `env -` is `env -i`
                continue;
            }
            if let Some(long) = word.strip_prefix("--") {
                let name = long.split('=').next().unwrap_or(long);
                if self.long_args.contains(&name) {
                    i += if long.contains('=') { 1 } else { 2 };
                } else if self.long_flags.contains(&name) {
                    i += 1;
                } else {
                    return Unwrap::Unknown(format!(
                        "`{}` is given the option `{word}`, which this reader does not know",
                        self.name
                    ));
                }
                continue;
            }
            if let Some(short) = word.strip_prefix('-').filter(|s| !s.is_empty()) {
                if self.numeric && short.chars().all(|c| c.is_ascii_digit()) {
                    i += 1;
                    continue;
                }
                let mut next = i + 1;
                for (at, c) in short.char_indices() {
                    if self.short_args.contains(c) {
                        if at + c.len_utf8() == short.len() {
                            next += 1; // the argument is the next word
                        }
                        break;
                    } else if !self.short_flags.contains(c) {
                        return Unwrap::Unknown(format!(
                            "`{}` is given the option `-{c}`, which this reader does not know",
                            self.name
                        ));
                    }
                }
                if short
                    .chars()
                    .any(|c| self.stops.contains(&format!("-{c}").as_str()))
                {
                    return Unwrap::Nothing;
                }
                i = next;
                continue;
            }
            if self.assignments && word.split_once('=').is_some_and(|(n, _)| !n.is_empty()) {
                i += 1;
                continue;
            }
            if positionals > 0 {
                positionals -= 1;
                i += 1;
                continue;
            }
            break;
        }
        if i < words.len() {
            Unwrap::At(i)
        } else {
            Unwrap::Nothing
        }
    }
}

/// Whether `text` starts with a literal variable name followed by `=`,
/// `+=` or `[` (the name of an assignment word whose value is dynamic).
fn literal_name_prefix(text: &str) -> bool {
    let name = assigned_name(text);
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && text.len() > name.len()
}

/// Whether an explicit path names a program in a system directory
/// (`/usr/bin/rm`), where its basename says what it is.
fn system_path(path: &str) -> bool {
    const DIRS: [&str; 6] = [
        "/bin",
        "/sbin",
        "/usr/bin",
        "/usr/sbin",
        "/usr/local/bin",
        "/usr/local/sbin",
    ];
    !path.split('/').any(|part| part == "..")
        && path
            .rsplit_once('/')
            .is_some_and(|(dir, _)| DIRS.contains(&lexical(dir).as_str()))
}

/// A path with `//`, `/./` and `..` resolved lexically.
fn lexical(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    if path.starts_with('/') {
        format!("/{joined}")
    } else {
        joined
    }
}

/// Bash builtins' arguments that name variables (or are `NAME=value`).
fn name_args<'t>(name: &str, args: &'t [Tok]) -> Vec<&'t Tok> {
    let mut names = Vec::new();
    let mut i = 0;
    let mut positional = 0;
    // Option letters whose value is a name, and those whose value is other text.
    let (name_options, value_options) = match name {
        "read" => ("a", "dinNptu"),
        "mapfile" | "readarray" => ("", "dnOsuCc"),
        "printf" | "wait" => ("vp", ""),
        _ => ("", ""),
    };
    while i < args.len() {
        let tok = &args[i];
        i += 1;
        if let Some(word) = tok.lit() {
            if word == "--" {
                continue;
            }
            if word.len() > 1 && (word.starts_with('-') || word.starts_with('+')) {
                if let Some(last) = word.chars().last() {
                    if name_options.contains(last) {
                        names.extend(args.get(i));
                        i += 1;
                    } else if value_options.contains(last) {
                        i += 1;
                    }
                }
                continue;
            }
        }
        positional += 1;
        let is_name = match name {
            "printf" | "wait" => false,
            "getopts" => positional > 1,
            _ => true,
        };
        if is_name {
            names.push(tok);
        }
    }
    names
}

fn basename(tok: &mut Tok) {
    if let Tok::Lit(word) = tok {
        if let Some((_, base)) = word.trim_end_matches('/').rsplit_once('/') {
            if !base.is_empty() {
                *word = base.to_owned();
            }
        }
    }
}

impl Walker<'_> {
    /// The views of one simple command's words, recording nested scripts
    /// and unreadable parts on the way.
    pub(super) fn views(&mut self, words: Vec<Tok>, stdin: &Stdin) -> Vec<View> {
        let mut views = Vec::new();
        let mut current = words;
        let mut more = false;
        for _ in 0..MAX_UNWRAP {
            if current.is_empty() {
                return views;
            }
            if let Some(path) = current[0]
                .lit()
                .filter(|w| w.contains('/') && !system_path(w))
            {
                let path = path.to_owned();
                self.set_opaque(|| {
                    format!(
                        "`{path}` is a program named by its path, which this reader cannot see into"
                    )
                });
            }
            basename(&mut current[0]);
            views.push(View {
                words: current.clone(),
                more,
            });
            let Some(name) = current[0].lit().map(str::to_owned) else {
                return views;
            };
            if let Some(wrapper) = WRAPPERS.iter().find(|w| w.name == name) {
                match wrapper.skip(&current) {
                    Unwrap::At(at) => {
                        if wrapper.assignments {
                            for word in current[1..at].iter().filter_map(Tok::lit) {
                                if let Some((name, _)) =
                                    word.split_once('=').filter(|_| !word.starts_with('-'))
                                {
                                    self.code_variable(name);
                                }
                            }
                        }
                        current.drain(..at);
                        more |= wrapper.more;
                        if name == "xargs" {
                            self.xargs_replace(&views, &mut current);
                        }
                        continue;
                    }
                    Unwrap::Nothing => return views,
                    Unwrap::Unknown(why) => {
                        self.out.unreadable(|| why);
                        return views;
                    }
                }
            }
            self.special(&name, &current, more, stdin, &mut views);
            return views;
        }
        if !current.is_empty() {
            self.out
                .unreadable(|| "wrappers are nested too deeply to read".to_owned());
        }
        views
    }

    pub(super) fn set_opaque(&mut self, why: impl FnOnce() -> String) {
        if self.opaque.is_none() {
            self.opaque = Some(why());
        }
    }

    /// `xargs -I R cmd R`: the replace string stands for input words.
    fn xargs_replace(&mut self, views: &[View], inner: &mut [Tok]) {
        let Some(outer) = views.last() else { return };
        let mut replace = None;
        for (i, tok) in outer.words.iter().enumerate() {
            match tok.lit() {
                Some("-I") | Some("--replace") => {
                    replace = outer.words.get(i + 1).and_then(Tok::lit).map(str::to_owned);
                }
                Some(word) if word.starts_with("-I") && word.len() > 2 => {
                    replace = Some(word[2..].to_owned());
                }
                Some(word) if word.starts_with("--replace=") || word.starts_with("-i") => {
                    let value = word.split_once('=').map_or(&word[2..], |(_, v)| v);
                    replace = Some(if value.is_empty() { "{}" } else { value }.to_owned());
                }
                _ => {}
            }
        }
        if let Some(replace) = replace {
            for tok in inner.iter_mut() {
                if tok.lit().is_some_and(|w| w.contains(replace.as_str())) {
                    *tok = self.dynamic_word(tok.source().to_owned().as_str());
                }
            }
        }
    }

    /// Commands that run code given as text, or out of sight; and every
    /// program not on the closed list of understood programs is opaque.
    fn special(
        &mut self,
        name: &str,
        words: &[Tok],
        more: bool,
        stdin: &Stdin,
        views: &mut Vec<View>,
    ) {
        let args = &words[1..];
        if SHELLS.contains(&name) {
            self.shell(name, args, more, stdin);
            return;
        }
        if INTERPRETERS.contains(&name)
            || name
                .strip_prefix("python")
                .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
        {
            let reads_stdin = args
                .iter()
                .all(|a| a.lit().is_some_and(|w| w.starts_with('-')))
                || args.iter().any(|a| a.lit() == Some("-"));
            if reads_stdin && !more {
                let from = stdin_source(stdin);
                self.out.unreadable(|| {
                    format!("`{name}` reads its program from standard input ({from})")
                });
            }
            self.set_opaque(|| {
                format!("`{name}` runs a program of its own (`-c`, `-e`, a script file) that this reader does not read")
            });
            return;
        }
        let hard = match name {
            "eval" => {
                self.joined_script("eval", args);
                None
            }
            "source" | "." => Some(format!(
                "`{name}` runs the commands of a file this reader cannot see"
            )),
            "trap" => {
                self.trap(args);
                None
            }
            "alias" | "hash" | "enable" => {
                Some(format!("`{name}` changes what a command name runs"))
            }
            "find" => {
                self.find(args, stdin, views);
                None
            }
            "git" => {
                self.git(words, more, views);
                None
            }
            "su" => {
                self.dash_c(name, args, "gGsw");
                None
            }
            "runuser" => {
                self.dash_c(name, args, "ugGsw");
                None
            }
            "script" => {
                self.dash_c(name, args, "BEIOTmo");
                None
            }
            "parallel" | "at" | "batch" => Some(format!(
                "`{name}` runs commands it reads from its arguments or input"
            )),
            "watch" => {
                self.watch(words, stdin, views);
                None
            }
            "sed" => programs::sed(args),
            "tar" => programs::tar(args),
            "sort" => programs::sort(args),
            "rg" => programs::rg(args),
            "test" | "[" => programs::test(name, args),
            "compgen" | "complete" | "mapfile" | "readarray" | "bind" | "fc" => {
                programs::callbacks(name, args)
            }
            _ => {
                let understood = programs::plain(name)
                    || NAME_BUILTINS.contains(&name)
                    || self.functions.iter().any(|f| f == name);
                if !understood {
                    self.set_opaque(|| {
                        format!(
                            "`{name}` is not among the programs whose arguments this reader understands, and it can run other programs"
                        )
                    });
                }
                None
            }
        };
        if let Some(why) = hard {
            self.out.unreadable(|| why);
        }
        if NAME_BUILTINS.contains(&name) {
            self.variable_names(name, args);
        }
    }

    /// Builtins that take variable names: subscripts and `let` expressions
    /// are arithmetic; the integer and nameref attributes make later
    /// assignments arithmetic; some names make later code run.
    fn variable_names(&mut self, name: &str, args: &[Tok]) {
        let subscript = args.iter().any(|a| {
            let text = a.source();
            text.contains('[') && (name != "printf" || args.iter().any(|a| a.lit() == Some("-v")))
        });
        let let_names = name == "let"
            && args
                .iter()
                .any(|a| a.source().chars().any(|c| c.is_alphabetic() || c == '$'));
        if subscript || let_names {
            self.out.unreadable(|| {
                format!(
                    "`{name}` is given a variable name or expression that bash evaluates as arithmetic, which can run code"
                )
            });
        }
        if name == "let" {
            return;
        }
        if matches!(
            name,
            "declare" | "typeset" | "local" | "readonly" | "export"
        ) {
            for arg in args.iter().filter_map(Tok::lit) {
                let option = arg.len() > 1 && (arg.starts_with('-') || arg.starts_with('+'));
                if option && arg[1..].contains(['i', 'n']) {
                    let arg = arg.to_owned();
                    self.out.unreadable(|| {
                        format!(
                            "`{name} {arg}` gives a variable the integer or name-reference attribute, so later assignments are evaluated as arithmetic, which can run code"
                        )
                    });
                }
            }
        }
        for tok in name_args(name, args) {
            let text = tok.source();
            match tok {
                Tok::Lit(word) => self.code_variable(assigned_name(word)),
                _ if literal_name_prefix(text) => self.code_variable(assigned_name(text)),
                _ => {
                    let text = text.to_owned();
                    self.out.unreadable(|| {
                        format!(
                            "`{name}` is given the variable name `{text}`, which is built at run time (bash evaluates subscripts in names as arithmetic)"
                        )
                    });
                }
            }
        }
    }

    /// `sh -c 'script'`, `bash` fed by a here-document, `sh` fed by a pipe,
    /// `sh /dev/stdin`; a script file or `--rcfile` is opaque.
    fn shell(&mut self, name: &str, args: &[Tok], more: bool, stdin: &Stdin) {
        let mut dash_c = false;
        let mut from_stdin = false;
        let mut i = 0;
        while i < args.len() {
            let Some(word) = args[i].lit() else {
                let source = args[i].source().to_owned();
                self.out.unreadable(|| {
                    format!("`{name}` is given `{source}`, which is expanded at run time")
                });
                return;
            };
            if word == "--" || word == "-" {
                i += 1;
                break;
            }
            if word.starts_with("--") {
                if matches!(word, "--rcfile" | "--init-file") {
                    let file = args.get(i + 1).map(|t| t.source().to_owned());
                    let file = file.unwrap_or_default();
                    self.set_opaque(|| {
                        format!("`{name} {word}` runs the commands of `{file}`, which this reader cannot see")
                    });
                    i += 2;
                } else {
                    i += 1;
                }
                continue;
            }
            if word.len() > 1 && (word.starts_with('-') || word.starts_with('+')) {
                let mut takes = 0;
                for c in word[1..].chars() {
                    match c {
                        'c' => dash_c = true,
                        's' => from_stdin = true,
                        'o' | 'O' => takes += 1,
                        _ => {}
                    }
                }
                i += 1 + takes;
                continue;
            }
            break;
        }
        let rest = args.get(i..).unwrap_or_default();
        if dash_c {
            match rest.first() {
                Some(Tok::Lit(script)) => {
                    let script = script.clone();
                    self.nested_script(&script);
                }
                Some(other) => {
                    let source = other.source().to_owned();
                    self.out.unreadable(|| {
                        format!("`{name} -c` runs `{source}`, which is built at run time")
                    });
                }
                None if more => self.out.unreadable(|| {
                    format!("`{name} -c` runs the words `xargs` gives it as a script")
                }),
                None => {}
            }
            return;
        }
        if more && rest.is_empty() && !from_stdin {
            self.out.unreadable(|| {
                format!("`{name}` runs a script named by the words `xargs` gives it")
            });
            return;
        }
        match rest.first().filter(|_| !from_stdin) {
            Some(Tok::Lit(path)) => {
                let path = path.clone();
                let normalized = lexical(&path);
                if matches!(
                    normalized.as_str(),
                    "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0" | "/proc/thread-self/fd/0"
                ) {
                    self.shell_stdin(name, stdin);
                } else if normalized.starts_with("/dev/") || normalized.starts_with("/proc/") {
                    self.out.unreadable(|| {
                        format!(
                            "`{name}` reads its script from `{path}`, a device or file descriptor"
                        )
                    });
                } else {
                    self.set_opaque(|| {
                        format!(
                            "`{name}` runs the script file `{path}`, which this reader cannot see"
                        )
                    });
                }
            }
            None => self.shell_stdin(name, stdin),
            Some(other) => {
                let source = other.source().to_owned();
                self.out.unreadable(|| {
                    format!("`{name}` runs the script `{source}`, which is built at run time")
                });
            }
        }
    }

    /// A shell reading its script from standard input: read when it is a
    /// known here-document or here-string, unreadable otherwise.
    fn shell_stdin(&mut self, name: &str, stdin: &Stdin) {
        match stdin {
            Stdin::Text(text) => {
                let text = text.clone();
                self.nested_script(&text);
            }
            _ => {
                let from = stdin_source(stdin);
                self.out.unreadable(|| {
                    format!("`{name}` reads its commands from standard input ({from})")
                });
            }
        }
    }

    fn nested_script(&mut self, script: &str) {
        self.depth += 1;
        self.script(script);
        self.depth -= 1;
    }

    /// `eval word…`: the words joined by spaces are a script.
    fn joined_script(&mut self, name: &str, args: &[Tok]) {
        let mut script = String::new();
        for arg in args {
            match arg {
                Tok::Lit(text) => {
                    if !script.is_empty() {
                        script.push(' ');
                    }
                    script.push_str(text);
                }
                other => {
                    let source = other.source().to_owned();
                    self.out.unreadable(|| {
                        format!("`{name}` runs `{source}`, which is built at run time")
                    });
                    return;
                }
            }
        }
        self.nested_script(&script);
    }

    /// `watch [options] command…`: the words joined are run by `sh -c`, or
    /// with `-x` as an argv.
    fn watch(&mut self, words: &[Tok], stdin: &Stdin, views: &mut Vec<View>) {
        const WATCH: Wrapper = Wrapper {
            short_args: "nq",
            short_flags: "bcdeghptwxv",
            long_args: &["interval", "differences", "equexit"],
            long_flags: &[
                "beep",
                "color",
                "no-color",
                "errexit",
                "chgexit",
                "precise",
                "no-title",
                "no-wrap",
                "exec",
                "no-linewrap",
                "help",
                "version",
            ],
            stops: &["-h", "--help", "-v", "--version"],
            ..wrapper("watch")
        };
        match WATCH.skip(words) {
            Unwrap::At(at) => {
                let exec = words[1..at].iter().any(|w| {
                    w.lit().is_some_and(|w| {
                        w == "--exec"
                            || (w.starts_with('-') && !w.starts_with("--") && w.contains('x'))
                    })
                });
                if exec {
                    views.extend(self.views(words[at..].to_vec(), stdin));
                } else {
                    self.joined_script("watch", &words[at..]);
                }
            }
            Unwrap::Nothing => {}
            Unwrap::Unknown(why) => self.out.unreadable(|| why),
        }
    }

    /// `su -c 'script' user`, `runuser -c …`, `script -qc …`: the `-c`
    /// string is a script (also inside an option cluster); without `-c`
    /// they run an interactive shell, which is opaque. `takes` lists the
    /// short options that take a value.
    fn dash_c(&mut self, name: &str, args: &[Tok], takes: &str) {
        let mut scripts: Vec<Option<Tok>> = Vec::new();
        let mut i = 0;
        while i < args.len() {
            let Some(word) = args[i].lit() else {
                i += 1;
                continue;
            };
            i += 1;
            if word == "--" {
                break;
            }
            if let Some(long) = word.strip_prefix("--") {
                let (option, value) = match long.split_once('=') {
                    Some((o, v)) => (o, Some(v)),
                    None => (long, None),
                };
                if option.len() >= 2 && "command".starts_with(option) {
                    match value {
                        Some(v) => scripts.push(Some(Tok::Lit(v.to_owned()))),
                        None => {
                            scripts.push(args.get(i).cloned());
                            i += 1;
                        }
                    }
                }
                continue;
            }
            if word.len() > 1 && word.starts_with('-') {
                for (at, c) in word.char_indices().skip(1) {
                    let rest = &word[at + c.len_utf8()..];
                    if c == 'c' {
                        if rest.is_empty() {
                            scripts.push(args.get(i).cloned());
                            i += 1;
                        } else {
                            scripts.push(Some(Tok::Lit(rest.to_owned())));
                        }
                        break;
                    }
                    if takes.contains(c) {
                        if rest.is_empty() {
                            i += 1;
                        }
                        break;
                    }
                }
            }
        }
        if scripts.is_empty() {
            self.set_opaque(|| {
                format!("`{name}` without `-c` runs an interactive shell this reader cannot see")
            });
        }
        for script in scripts {
            match script {
                Some(Tok::Lit(script)) => self.nested_script(&script),
                Some(other) => {
                    let source = other.source().to_owned();
                    self.out.unreadable(|| {
                        format!("`{name} -c` runs `{source}`, which is built at run time")
                    });
                }
                None => {}
            }
        }
    }

    /// `trap 'handler' SIGNAL…`: the handler is a script. Listing (`-l`,
    /// `-p`) and resetting (`-`, a number first) run nothing; anything else
    /// is read as a handler.
    fn trap(&mut self, args: &[Tok]) {
        let mut rest = args;
        match rest.first().and_then(Tok::lit) {
            Some("-l" | "-p" | "-P") => return,
            Some("--") => rest = &rest[1..],
            _ => {}
        }
        if rest.len() < 2 {
            return; // listing, or resetting one signal
        }
        match &rest[0] {
            Tok::Lit(handler) => {
                let number = !handler.is_empty() && handler.chars().all(|c| c.is_ascii_digit());
                if handler != "-" && !number {
                    let handler = handler.clone();
                    self.nested_script(&handler);
                }
            }
            other => {
                let source = other.source().to_owned();
                self.out.unreadable(|| {
                    format!("`trap` installs the handler `{source}`, which is built at run time")
                });
            }
        }
    }

    /// `find … -exec cmd {} ;`: the command is read (with `{}` standing for
    /// file names), and the call is marked unreadable; so is `-delete`.
    fn find(&mut self, args: &[Tok], stdin: &Stdin, views: &mut Vec<View>) {
        let mut i = 0;
        while i < args.len() {
            match args[i].lit() {
                Some(action @ ("-exec" | "-execdir" | "-ok" | "-okdir")) => {
                    let action = action.to_owned();
                    self.out.unreadable(|| {
                        format!("`find {action}` runs a command for each file it finds")
                    });
                    let start = i + 1;
                    let mut end = start;
                    while end < args.len() && !matches!(args[end].lit(), Some(";" | "+")) {
                        end += 1;
                    }
                    let inner: Vec<Tok> = args[start..end]
                        .iter()
                        .map(|t| {
                            if t.source().contains("{}") {
                                Tok::Dyn(t.source().to_owned())
                            } else {
                                t.clone()
                            }
                        })
                        .collect();
                    if !inner.is_empty() {
                        views.extend(self.views(inner, stdin));
                    }
                    i = end + 1;
                }
                Some("-delete") => {
                    self.out
                        .unreadable(|| "`find -delete` deletes the files it finds".to_owned());
                    i += 1;
                }
                _ => i += 1,
            }
        }
    }

    /// git's global options skipped: `git -C dir --no-pager push` → `git push`.
    /// `-c` and `--config-env` set configuration that can run programs
    /// (aliases, pagers, hooks): unreadable, with a `-c alias.x=…` used as `x`
    /// expanded for deny rules.
    fn git(&mut self, words: &[Tok], more: bool, views: &mut Vec<View>) {
        const WITH_ARG: [&str; 8] = [
            "-C",
            "-c",
            "--git-dir",
            "--work-tree",
            "--namespace",
            "--super-prefix",
            "--config-env",
            "--attr-source",
        ];
        const FLAGS: [&str; 21] = [
            "-p",
            "--paginate",
            "-P",
            "--no-pager",
            "--no-replace-objects",
            "--no-lazy-fetch",
            "--no-optional-locks",
            "--no-advice",
            "--bare",
            "--literal-pathspecs",
            "--glob-pathspecs",
            "--noglob-pathspecs",
            "--icase-pathspecs",
            "--exec-path",
            "--html-path",
            "--man-path",
            "--info-path",
            "--version",
            "-v",
            "--help",
            "-h",
        ];
        let mut i = 1;
        let mut aliases: Vec<(String, String)> = Vec::new();
        while i < words.len() {
            let Some(word) = words[i].lit() else {
                break; // a dynamic subcommand: the view below shows it as such
            };
            let (name, attached) = match word.split_once('=') {
                Some((name, value)) if name.starts_with("--") => (name, Some(value)),
                _ => (word, None),
            };
            if WITH_ARG.contains(&name) {
                let value = match attached {
                    Some(value) => Some(value.to_owned()),
                    None => words.get(i + 1).map(|t| t.source().to_owned()),
                };
                if matches!(name, "-c" | "--config-env") {
                    self.out.unreadable(|| {
                        format!("`git {name}` sets configuration that can run programs")
                    });
                    if let Some((key, value)) = value.as_deref().and_then(|v| v.split_once('=')) {
                        if let Some(alias) = key.strip_prefix("alias.") {
                            aliases.push((alias.to_owned(), value.to_owned()));
                        }
                    }
                }
                i += if attached.is_some() { 1 } else { 2 };
            } else if name == "--exec-path" && attached.is_some() {
                self.out.unreadable(|| {
                    "`git --exec-path=…` changes where git finds the programs it runs".to_owned()
                });
                i += 1;
            } else if FLAGS.contains(&name) || name.starts_with("--list-cmds") {
                i += 1;
            } else if word.starts_with('-') {
                let word = word.to_owned();
                self.out.unreadable(|| {
                    format!("`git` is given the option `{word}`, which this reader does not know")
                });
                return;
            } else {
                break;
            }
        }
        let aliased = words
            .get(i)
            .and_then(Tok::lit)
            .is_some_and(|sub| aliases.iter().any(|(a, _)| a == sub));
        if let (Some(sub), false) = (words.get(i).and_then(Tok::lit), aliased) {
            match programs::git(sub, &words[i + 1..]) {
                GitSub::Understood => {}
                GitSub::RunsCode(why) => self.out.unreadable(|| why),
                GitSub::Unknown => {
                    let sub = sub.to_owned();
                    self.set_opaque(|| {
                        format!(
                            "`git {sub}` is not a git command this reader understands (an alias or another program may run)"
                        )
                    });
                }
            }
        }
        if i == 1 {
            return; // nothing skipped: the view is already there
        }
        let mut normalized = vec![words[0].clone()];
        normalized.extend(words.iter().skip(i).cloned());
        if let Some(sub) = normalized.get(1).and_then(Tok::lit) {
            if let Some((_, value)) = aliases.iter().rev().find(|(a, _)| a == sub) {
                if let Some(script) = value.strip_prefix('!') {
                    self.nested_script(script);
                } else {
                    let expansion: Vec<Tok> = value
                        .split_whitespace()
                        .map(|w| Tok::Lit(w.to_owned()))
                        .collect();
                    normalized.splice(1..2, expansion);
                }
            }
        }
        views.push(View {
            words: normalized,
            more,
        });
    }
}

fn stdin_source(stdin: &Stdin) -> String {
    match stdin {
        Stdin::Inherited => "the caller's".to_owned(),
        Stdin::Text(_) => "a here-document".to_owned(),
        Stdin::Unknown(what) => what.clone(),
    }
}
