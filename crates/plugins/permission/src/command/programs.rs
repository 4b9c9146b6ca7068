//! The closed list of programs whose argv this reader understands, and the
//! options with which some of them run code after all.
//!
//! A program on the list runs no other program, or runs only what the
//! reader reads from its arguments (`git` without configuration set on the
//! command line, `sed` without its `e` command, `tar` without its command
//! options). Every other program may run anything, so when a deny or ask
//! rule could apply, it is unreadable unless an allow rule names it.

use super::Tok;

/// Programs and bash builtins that run no other program, whatever their
/// arguments (sorted: looked up by binary search).
const PLAIN: &[&str] = &[
    ":",
    "[",
    "b2sum",
    "base32",
    "base64",
    "basename",
    "bg",
    "break",
    "bunzip2",
    "bzcat",
    "bzip2",
    "cat",
    "cd",
    "chgrp",
    "chmod",
    "chown",
    "cksum",
    "clear",
    "cmp",
    "column",
    "comm",
    "continue",
    "cp",
    "csplit",
    "cut",
    "date",
    "dd",
    "df",
    "diff",
    "dirname",
    "dirs",
    "disown",
    "du",
    "echo",
    "egrep",
    "exit",
    "expand",
    "expr",
    "factor",
    "false",
    "fg",
    "fgrep",
    "file",
    "fmt",
    "fold",
    "free",
    "getopts",
    "grep",
    "groups",
    "gunzip",
    "gzip",
    "head",
    "help",
    "hexdump",
    "history",
    "hostname",
    "iconv",
    "id",
    "jobs",
    "join",
    "jq",
    "kill",
    "killall",
    "link",
    "ln",
    "locale",
    "logname",
    "ls",
    "lsof",
    "md5sum",
    "mkdir",
    "mkfifo",
    "mktemp",
    "mv",
    "nl",
    "nproc",
    "numfmt",
    "od",
    "paste",
    "pgrep",
    "pkill",
    "popd",
    "pr",
    "printenv",
    "printf",
    "ps",
    "pushd",
    "pwd",
    "read",
    "readlink",
    "realpath",
    "return",
    "rev",
    "rm",
    "rmdir",
    "seq",
    "set",
    "sha1sum",
    "sha224sum",
    "sha256sum",
    "sha384sum",
    "sha512sum",
    "shift",
    "shopt",
    "shred",
    "shuf",
    "sleep",
    "stat",
    "strings",
    "sum",
    "sync",
    "tac",
    "tail",
    "tee",
    "test",
    "touch",
    "tr",
    "tree",
    "true",
    "truncate",
    "tsort",
    "type",
    "ulimit",
    "umask",
    "uname",
    "unexpand",
    "uniq",
    "unlink",
    "unset",
    "unxz",
    "uptime",
    "wait",
    "wc",
];

/// Whether `name` runs no other program whatever its arguments.
pub(super) fn plain(name: &str) -> bool {
    PLAIN.binary_search(&name).is_ok()
}

/// Whether a long option `--name…` given as `word` is `option` or an
/// abbreviation of it (GNU and git accept unambiguous prefixes).
fn abbreviates(word: &str, option: &str) -> bool {
    let name = word
        .strip_prefix("--")
        .map(|w| w.split('=').next().unwrap_or(w));
    name.is_some_and(|n| n.len() >= 2 && option.starts_with(n))
}

/// Whether a short-option cluster (`-xvf`) holds `letter`.
fn cluster_has(word: &str, letters: &str) -> bool {
    word.strip_prefix('-')
        .filter(|rest| !rest.is_empty() && !rest.starts_with('-'))
        .is_some_and(|rest| rest.chars().any(|c| letters.contains(c)))
}

/// The first argument that is not fully known, described.
fn dynamic(name: &str, args: &[Tok]) -> Option<String> {
    args.iter().find(|a| !matches!(a, Tok::Lit(_))).map(|a| {
        format!(
            "`{name}` is given `{}`, which is expanded at run time",
            a.source()
        )
    })
}

/// `tar`: the options that run a program (checkpoint actions, compressors,
/// volume scripts, remote shells) make it unreadable.
pub(super) fn tar(args: &[Tok]) -> Option<String> {
    const LONG: [&str; 7] = [
        "checkpoint-action",
        "to-command",
        "use-compress-program",
        "info-script",
        "new-volume-script",
        "rsh-command",
        "rmt-command",
    ];
    if let Some(why) = dynamic("tar", args) {
        return Some(why);
    }
    for (i, arg) in args.iter().filter_map(Tok::lit).enumerate() {
        let long = arg.starts_with("--")
            && arg != "--checkpoint"
            && !arg.starts_with("--checkpoint=")
            && LONG.iter().any(|o| abbreviates(arg, o));
        // The first word may be an option cluster without a dash (`tar cIf`).
        let short = cluster_has(arg, "IF")
            || (i == 0 && !arg.starts_with('-') && arg.chars().any(|c| "IF".contains(c)));
        if long || short {
            return Some(format!("`tar {arg}` runs a program given in its arguments"));
        }
    }
    None
}

/// `sort --compress-program=PROG` runs `PROG`.
pub(super) fn sort(args: &[Tok]) -> Option<String> {
    if let Some(why) = dynamic("sort", args) {
        return Some(why);
    }
    args.iter()
        .filter_map(Tok::lit)
        .find(|a| a.starts_with("--") && a.len() > 4 && abbreviates(a, "compress-program"))
        .map(|a| format!("`sort {a}` runs a program given in its arguments"))
}

/// `rg --pre CMD` runs `CMD` on every file.
pub(super) fn rg(args: &[Tok]) -> Option<String> {
    args.iter()
        .filter_map(Tok::lit)
        .find(|a| *a == "--pre" || a.starts_with("--pre="))
        .map(|a| format!("`rg {a}` runs a program on every file it searches"))
}

/// `test -v 'a[…]'` and `[ -v … ]` evaluate the subscript as arithmetic.
pub(super) fn test(name: &str, args: &[Tok]) -> Option<String> {
    args.windows(2).find_map(|pair| {
        let operand = &pair[1];
        (pair[0].lit() == Some("-v")
            && (operand.source().contains('[') || !matches!(operand, Tok::Lit(_))))
        .then(|| {
            format!(
                "`{name} -v {}` evaluates an array subscript as arithmetic, which can run code",
                operand.source()
            )
        })
    })
}

/// Builtins whose options take code: `compgen -C`/`-F`, `complete -C`/`-F`,
/// `mapfile -C`, `bind -x`, and `fc` (which runs an editor or history).
pub(super) fn callbacks(name: &str, args: &[Tok]) -> Option<String> {
    let letters = match name {
        "compgen" | "complete" => "CF",
        "mapfile" | "readarray" => "C",
        "bind" => "x",
        "fc" => return Some("`fc` runs an editor or commands from the history".to_owned()),
        _ => return None,
    };
    if let Some(why) = dynamic(name, args) {
        return Some(why);
    }
    args.iter()
        .filter_map(Tok::lit)
        .find(|a| cluster_has(a, letters))
        .map(|a| format!("`{name} {a}` runs code given as an option"))
}

/// `sed`: unreadable with a script from a file or built at run time, or a
/// script that uses the `e` command or the `e` flag of `s`.
pub(super) fn sed(args: &[Tok]) -> Option<String> {
    if let Some(why) = dynamic("sed", args) {
        return Some(why);
    }
    let args: Vec<&str> = args.iter().filter_map(Tok::lit).collect();
    let mut scripts = Vec::new();
    let mut positional = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = args[i];
        i += 1;
        if arg == "--" {
            positional.extend(&args[i..]);
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            if name == "sandbox" {
                return None; // `e`, `r` and `w` are refused by sed itself
            } else if "expression".starts_with(name) && name.len() >= 2 {
                match value {
                    Some(v) => scripts.push(v),
                    None => {
                        scripts.extend(args.get(i));
                        i += 1;
                    }
                }
            } else if "file".starts_with(name) && !name.is_empty() {
                return Some("`sed --file` reads its script from a file".to_owned());
            } else if "line-length".starts_with(name) && value.is_none() {
                i += 1;
            }
            continue;
        }
        if arg.len() > 1 && arg.starts_with('-') {
            for (at, c) in arg.char_indices().skip(1) {
                match c {
                    'e' | 'l' => {
                        let rest = &arg[at + 1..];
                        let value = if rest.is_empty() {
                            i += 1;
                            args.get(i - 1).copied()
                        } else {
                            Some(rest)
                        };
                        if c == 'e' {
                            scripts.extend(value);
                        }
                        break;
                    }
                    'f' => return Some("`sed -f` reads its script from a file".to_owned()),
                    'i' => break, // the rest is the backup suffix
                    _ => {}
                }
            }
            continue;
        }
        positional.push(arg);
    }
    if scripts.is_empty() {
        scripts.extend(positional.first());
    }
    scripts
        .into_iter()
        .find(|s| sed_runs_code(s))
        .map(|s| format!("the sed script `{s}` runs commands (`e`), or cannot be read"))
}

/// Whether a sed script has an `e` command, an `s///e`, or something this
/// small reader does not follow.
fn sed_runs_code(script: &str) -> bool {
    let c: Vec<char> = script.chars().collect();
    let mut i = 0;
    let skip_to = |i: &mut usize, stops: &str| {
        while *i < c.len() && !stops.contains(c[*i]) {
            *i += 1;
        }
    };
    // Skips a delimited part (`/re/`), honouring `\` escapes; false if unterminated.
    let delimited = |i: &mut usize, delim: char| -> bool {
        while *i < c.len() {
            match c[*i] {
                '\\' => *i += 2,
                d if d == delim => {
                    *i += 1;
                    return true;
                }
                _ => *i += 1,
            }
        }
        false
    };
    loop {
        while i < c.len() && (c[i].is_whitespace() || c[i] == ';') {
            i += 1;
        }
        if i >= c.len() {
            return false;
        }
        // Up to two addresses.
        for n in 0..2 {
            if n == 1 {
                if c.get(i) != Some(&',') {
                    break;
                }
                i += 1;
            }
            match c.get(i) {
                Some(d) if d.is_ascii_digit() || *d == '+' || *d == '~' => {
                    i += 1;
                    while i < c.len() && (c[i].is_ascii_digit() || c[i] == '~') {
                        i += 1;
                    }
                }
                Some('$') => i += 1,
                Some('/') => {
                    i += 1;
                    if !delimited(&mut i, '/') {
                        return true;
                    }
                    while matches!(c.get(i), Some('I' | 'M')) {
                        i += 1;
                    }
                }
                Some('\\') => {
                    let Some(&delim) = c.get(i + 1) else {
                        return true;
                    };
                    i += 2;
                    if !delimited(&mut i, delim) {
                        return true;
                    }
                    while matches!(c.get(i), Some('I' | 'M')) {
                        i += 1;
                    }
                }
                _ => {}
            }
        }
        while i < c.len() && (c[i].is_whitespace() || c[i] == '!') {
            i += 1;
        }
        let Some(&command) = c.get(i) else {
            return false;
        };
        i += 1;
        match command {
            '{' | '}' | '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x'
            | 'z' | 'F' => {}
            'l' | 'q' | 'Q' | 'L' => {
                while i < c.len() && (c[i].is_ascii_digit() || c[i] == ' ') {
                    i += 1;
                }
            }
            '#' | 'a' | 'i' | 'c' | 'r' | 'R' | 'w' | 'W' | ':' => {
                // Text, a file name or a label, to the end of the line (a
                // `\` escapes the next character, a newline included).
                while i < c.len() && c[i] != '\n' {
                    i += if c[i] == '\\' { 2 } else { 1 };
                }
            }
            'b' | 't' | 'T' | 'v' => skip_to(&mut i, ";\n}"),
            'y' => {
                let Some(&delim) = c.get(i) else {
                    return true;
                };
                i += 1;
                if !delimited(&mut i, delim) || !delimited(&mut i, delim) {
                    return true;
                }
            }
            's' => {
                let Some(&delim) = c.get(i) else {
                    return true;
                };
                i += 1;
                if delim == '\n' || delim == '\\' {
                    return true;
                }
                if !delimited(&mut i, delim) || !delimited(&mut i, delim) {
                    return true;
                }
                while i < c.len() && !matches!(c[i], ';' | '\n' | '}') {
                    match c[i] {
                        'e' => return true,
                        'w' => {
                            skip_to(&mut i, "\n");
                            break;
                        }
                        'g' | 'p' | 'i' | 'I' | 'm' | 'M' | ' ' | '\t' => i += 1,
                        d if d.is_ascii_digit() => i += 1,
                        _ => return true,
                    }
                }
            }
            _ => return true,
        }
    }
}

/// How a git subcommand relates to the programs it runs.
pub(super) enum GitSub {
    /// It runs no program given on the command line or in the environment.
    Understood,
    /// It runs a program or configuration given in its arguments (why).
    RunsCode(String),
    /// A subcommand this reader does not know (an alias, `difftool`, an
    /// external `git-x`): it may run anything.
    Unknown,
}

/// git subcommands that run no program named on their command line, with
/// the options that make them do so checked below (sorted).
const GIT_SUBCOMMANDS: &[&str] = &[
    "add",
    "am",
    "annotate",
    "apply",
    "archive",
    "bisect",
    "blame",
    "branch",
    "bundle",
    "cat-file",
    "check-attr",
    "check-ignore",
    "checkout",
    "cherry",
    "cherry-pick",
    "clean",
    "clone",
    "commit",
    "config",
    "count-objects",
    "describe",
    "diff",
    "diff-files",
    "diff-index",
    "diff-tree",
    "fetch",
    "for-each-ref",
    "format-patch",
    "fsck",
    "gc",
    "grep",
    "hash-object",
    "init",
    "log",
    "ls-files",
    "ls-remote",
    "ls-tree",
    "merge",
    "merge-base",
    "mv",
    "name-rev",
    "notes",
    "pull",
    "push",
    "range-diff",
    "read-tree",
    "rebase",
    "reflog",
    "remote",
    "reset",
    "restore",
    "rev-list",
    "rev-parse",
    "revert",
    "rm",
    "shortlog",
    "show",
    "show-ref",
    "sparse-checkout",
    "stash",
    "status",
    "switch",
    "symbolic-ref",
    "tag",
    "update-index",
    "update-ref",
    "var",
    "verify-commit",
    "verify-tag",
    "version",
    "worktree",
];

/// A git subcommand and its arguments (after the global options).
pub(super) fn git(sub: &str, args: &[Tok]) -> GitSub {
    if GIT_SUBCOMMANDS.binary_search(&sub).is_err() {
        return GitSub::Unknown;
    }
    let runs = |what: &str| GitSub::RunsCode(format!("`git {sub} {what}` can run a program"));
    let args = args.iter().filter_map(Tok::lit);
    if sub == "config" {
        let reads = args
            .clone()
            .any(|a| matches!(a, "-l" | "--list" | "get" | "list") || a.starts_with("--get"));
        return if reads {
            GitSub::Understood
        } else {
            GitSub::RunsCode(
                "`git config` sets configuration, which can make git run programs".to_owned(),
            )
        };
    }
    const ALWAYS: [&str; 3] = ["exec", "upload-pack", "receive-pack"];
    let (long, short): (&[&str], &str) = match sub {
        "rebase" => (&["strategy"], "xs"),
        "merge" | "pull" | "cherry-pick" | "revert" => (&["strategy"], "s"),
        "grep" => (&["open-files-in-pager"], "O"),
        "clone" => (&["template", "config"], "uc"),
        "init" => (&["template"], ""),
        _ => (&[], ""),
    };
    if sub == "bisect" && args.clone().next() == Some("run") {
        return runs("run");
    }
    for arg in args {
        if arg == "--" {
            break;
        }
        let option = ALWAYS.iter().chain(long).any(|o| abbreviates(arg, o))
            || (!short.is_empty() && cluster_has(arg, short));
        if option {
            return runs(arg);
        }
    }
    GitSub::Understood
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lits(words: &[&str]) -> Vec<Tok> {
        words.iter().map(|w| Tok::Lit((*w).to_owned())).collect()
    }

    #[test]
    fn the_lists_are_sorted_for_binary_search() {
        assert!(PLAIN.windows(2).all(|w| w[0] < w[1]));
        assert!(GIT_SUBCOMMANDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn sed_scripts_with_e_are_found_and_ordinary_ones_pass() {
        for script in [
            "s/a/b/",
            "s/a/b/g",
            "/error/p",
            "1,3d",
            "$!N; s/\\n/ /",
            "s|x|y|2g",
            "1a hello; e rm x",
            "y/abc/xyz/",
            "/^#/d;s/e/E/g",
            "s/x/y/w out.txt",
        ] {
            assert!(!sed_runs_code(script), "{script}");
        }
        for script in [
            "e rm x",
            "1e rm x",
            "s/x/rm victim/e",
            "s/x/y/ge",
            "/a/ e rm x",
            "1!e rm x",
            "s/x/y/;e rm x",
            "s/unterminated",
            "k",
        ] {
            assert!(sed_runs_code(script), "{script}");
        }
        assert!(sed(&lits(&["-n", "1e rm x", "f"])).is_some());
        assert!(sed(&lits(&["-ne", "s/x/y/e", "f"])).is_some());
        assert!(sed(&lits(&["--expr=e rm x"])).is_some());
        assert!(sed(&lits(&["-f", "script.sed"])).is_some());
        assert!(sed(&lits(&["-i.bak", "s/a/b/", "f"])).is_none());
        assert!(sed(&lits(&["--sandbox", "e rm x"])).is_none());
    }

    #[test]
    fn tar_git_sort_rg_and_callback_options_are_found() {
        assert!(
            tar(&lits(&[
                "--checkpoint=1",
                "--checkpoint-action=exec=rm x",
                "-cf",
                "a",
                "b"
            ]))
            .is_some()
        );
        assert!(tar(&lits(&["--checkpoint-a=exec=rm x"])).is_some());
        assert!(tar(&lits(&["-cIf", "sh", "a"])).is_some());
        assert!(tar(&lits(&["--to-command=sh", "-xf", "a"])).is_some());
        assert!(tar(&lits(&["-czf", "a.tgz", "--checkpoint=10", "src"])).is_none());
        assert!(sort(&lits(&["--compress-prog=sh", "f"])).is_some());
        assert!(sort(&lits(&["-u", "f"])).is_none());
        assert!(rg(&lits(&["--pre", "sh", "x"])).is_some());
        assert!(rg(&lits(&["--pre-glob", "*.gz", "x"])).is_none());
        assert!(callbacks("compgen", &lits(&["-C", "rm x", "y"])).is_some());
        assert!(callbacks("mapfile", &lits(&["-t", "-C", "f", "a"])).is_some());
        assert!(callbacks("mapfile", &lits(&["-t", "a"])).is_none());
        assert!(callbacks("bind", &lits(&["-x", "\"\\C-x\": rm x"])).is_some());
        assert!(test("test", &lits(&["-v", "a[$(rm x)]"])).is_some());
        assert!(test("test", &lits(&["-f", "a"])).is_none());
        assert!(matches!(git("status", &lits(&["-s"])), GitSub::Understood));
        assert!(matches!(
            git("rebase", &lits(&["-x", "rm x"])),
            GitSub::RunsCode(_)
        ));
        assert!(matches!(
            git("rebase", &lits(&["--exe=rm x"])),
            GitSub::RunsCode(_)
        ));
        assert!(matches!(
            git("config", &lits(&["core.pager", "rm x"])),
            GitSub::RunsCode(_)
        ));
        assert!(matches!(
            git("config", &lits(&["--get", "user.name"])),
            GitSub::Understood
        ));
        assert!(matches!(git("difftool", &[]), GitSub::Unknown));
        assert!(matches!(
            git("bisect", &lits(&["run", "rm"])),
            GitSub::RunsCode(_)
        ));
    }
}
