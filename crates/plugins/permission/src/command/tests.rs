use proptest::prelude::*;

use super::word::ansi_c;
use super::*;

fn lit(words: &[&str]) -> Vec<Tok> {
    words.iter().map(|w| Tok::Lit((*w).to_owned())).collect()
}

/// The views of the only (or last) simple command.
fn views(command: &str) -> Vec<Vec<Tok>> {
    let prepared = PreparedCommand::new(command);
    let last = prepared.commands.last().expect("a simple command");
    last.views.iter().map(|v| v.words.clone()).collect()
}

fn unread(command: &str) -> Option<String> {
    PreparedCommand::new(command).unread
}

#[test]
fn quotes_and_escapes_are_removed() {
    for form in [
        "rm x",
        "'rm' x",
        "\"rm\" x",
        "r''m x",
        "r\"\"m x",
        "\\rm x",
        "r\\m x",
        "$'rm' x",
        "$'\\x72m' x",
        "$'\\162m' x",
        "$'\\u0072\\U0000006d' x",
        "r\\\nm x",
    ] {
        assert_eq!(views(form)[0], lit(&["rm", "x"]), "{form:?}");
    }
    // In double quotes a backslash stays unless it escapes `$`, `` ` ``, `"`, `\`.
    assert_eq!(
        views("echo \"a\\b\" \"\\$x\"")[0],
        lit(&["echo", "a\\b", "$x"])
    );
}

#[test]
fn argv0_is_reduced_to_its_basename_for_deny_views_only() {
    let prepared = PreparedCommand::new("/usr/bin/rm x");
    let sub = &prepared.commands[0];
    assert_eq!(sub.views[0].words, lit(&["rm", "x"]));
    assert_eq!(
        sub.literal.as_deref(),
        Some(lit(&["/usr/bin/rm", "x"]).as_slice())
    );
}

#[test]
fn wrappers_are_unwrapped_one_view_each() {
    assert_eq!(
        views("sudo -u root timeout -s KILL 5 env -i A=1 nice -n 2 rm x"),
        vec![
            lit(&[
                "sudo", "-u", "root", "timeout", "-s", "KILL", "5", "env", "-i", "A=1", "nice",
                "-n", "2", "rm", "x"
            ]),
            lit(&[
                "timeout", "-s", "KILL", "5", "env", "-i", "A=1", "nice", "-n", "2", "rm", "x"
            ]),
            lit(&["env", "-i", "A=1", "nice", "-n", "2", "rm", "x"]),
            lit(&["nice", "-n", "2", "rm", "x"]),
            lit(&["rm", "x"]),
        ]
    );
    // Options that mean "run nothing".
    assert_eq!(views("command -v rm").len(), 1);
    assert_eq!(views("sudo -l rm").len(), 1);
    assert_eq!(views("taskset -p 1 2").len(), 1);
    // An unknown option makes the split point unclear: unreadable.
    assert!(unread("sudo --bogus rm x").unwrap().contains("--bogus"));
    assert!(unread("nice -z rm x").unwrap().contains("-z"));
}

#[test]
fn xargs_adds_words_at_run_time() {
    let prepared = PreparedCommand::new("xargs -0 rm");
    let inner = &prepared.commands[0].views[1];
    assert_eq!(inner.words, lit(&["rm"]));
    assert!(inner.more);
}

#[test]
fn git_global_options_are_skipped() {
    assert_eq!(
        views("git -C a --git-dir=.git --no-pager -P push")[1],
        lit(&["git", "push"])
    );
    assert_eq!(
        views("git -c alias.p=push p origin")[1],
        lit(&["git", "push", "origin"])
    );
    assert!(
        unread("git -c color.ui=never status")
            .unwrap()
            .contains("git -c")
    );
    assert_eq!(unread("git -C a status"), None);
}

#[test]
fn nested_scripts_are_read() {
    let prepared = PreparedCommand::new("bash -c 'sh -c \"eval rm x\"'");
    let argvs: Vec<_> = prepared
        .commands
        .iter()
        .map(|c| c.views[0].words.clone())
        .collect();
    assert!(argvs.contains(&lit(&["rm", "x"])), "{argvs:?}");
    assert_eq!(prepared.unread, None);
}

#[test]
fn words_built_at_run_time_are_marked() {
    let prepared = PreparedCommand::new("ls $HOME *.rs ~/x {a,b} \"$(date)\"");
    let words = &prepared.commands.last().unwrap().views[0].words;
    assert_eq!(words[0], Tok::Lit("ls".into()));
    assert!(matches!(&words[1], Tok::Dyn(s) if s == "$HOME"));
    assert!(matches!(&words[2], Tok::Glob(s) if s == "*.rs"));
    assert!(matches!(&words[3], Tok::Glob(_)));
    assert!(matches!(&words[4], Tok::Glob(_)));
    assert!(matches!(&words[5], Tok::Dyn(_)));
    assert_eq!(
        prepared.dynamic.as_deref(),
        Some("`$HOME` is expanded at run time")
    );
    // `[` alone is the test command, not a glob.
    assert_eq!(views("[ -f x ]")[0], lit(&["[", "-f", "x", "]"]));
}

#[test]
fn code_running_expansions_are_unreadable() {
    for (form, needle) in [
        ("echo ${x@P}", "@P"),
        ("echo ${!x}", "${!"),
        ("echo $((x + 1))", "arithmetic"),
        ("echo ${a[i]}", "arithmetic"),
        ("echo ${x:n:1}", "arithmetic"),
        ("(( n ))", "arithmetic"),
        ("a[i]=1", "arithmetic"),
        ("PS4='$(id)' ls", "PS4"),
    ] {
        let why = unread(form).unwrap_or_else(|| panic!("{form:?} read"));
        assert!(why.contains(needle), "{form:?}: {why}");
    }
    for form in [
        "echo $((1 + 2))",
        "echo ${a[0]}",
        "echo ${x:-default}",
        "echo ${#x}",
    ] {
        assert_eq!(unread(form), None, "{form:?}");
    }
}

#[test]
fn limits_make_a_command_unreadable_instead_of_crashing() {
    let deep = format!("{}x{}", "(".repeat(100_000), ")".repeat(100_000));
    assert!(unread(&deep).unwrap().contains("too deeply nested"));
    let nested_shells = (0..20).fold("rm x".to_owned(), |inner, _| format!("eval {inner:?}"));
    assert!(unread(&nested_shells).is_some());
    let huge = "echo x; ".repeat(200_000);
    assert!(unread(&huge).unwrap().contains("too large"));
    let subs = format!("{}x{}", "$(".repeat(30), ")".repeat(30));
    assert!(unread(&subs).is_some());
}

#[test]
fn nesting_up_to_the_limit_is_read_without_overflowing_the_stack() {
    // Run on a thread with the default test stack (2 MiB).
    std::thread::spawn(|| {
        let parens = format!("{}rm x{}", "{ ".repeat(60), "; }".repeat(60));
        let prepared = PreparedCommand::new(&parens);
        assert_eq!(prepared.unread, None);
        assert_eq!(prepared.commands[0].views[0].words, lit(&["rm", "x"]));
        let ifs = format!("{}rm x{}", "if true; then ".repeat(60), "; fi".repeat(60));
        let prepared = PreparedCommand::new(&ifs);
        assert_eq!(prepared.unread, None);
        assert!(
            prepared
                .commands
                .iter()
                .any(|c| c.views[0].words == lit(&["rm", "x"]))
        );
        let too_deep = format!(
            "{}rm x{}",
            "if true; then ".repeat(1000),
            "; fi".repeat(1000)
        );
        assert!(unread(&too_deep).unwrap().contains("too deeply nested"));
    })
    .join()
    .unwrap();
}

#[test]
fn ansi_c_decoding() {
    assert_eq!(ansi_c("a\\tb\\n").as_deref(), Some("a\tb\n"));
    assert_eq!(ansi_c("\\x41\\101\\u00e9").as_deref(), Some("AAé"));
    assert_eq!(ansi_c("\\'\\\\").as_deref(), Some("'\\"));
    assert_eq!(ansi_c("\\cA").as_deref(), Some("\u{1}"));
    assert_eq!(
        ansi_c("ab\\0cd").as_deref(),
        Some("ab"),
        "NUL ends the string"
    );
    assert_eq!(ansi_c("\\xff"), None, "a raw byte is not text");
    assert_eq!(ansi_c("\\q"), None);
    assert_eq!(ansi_c("\\"), None);
}

#[test]
fn patterns_are_words() {
    let p = CommandPattern::new("git push*").unwrap();
    let m = |c: &str| p.match_command(&PreparedCommand::new(c));
    assert_eq!(m("git push"), Match::Yes);
    // `pushx` is no git command: an alias or a `git-pushx` program may run.
    assert!(matches!(m("git pushx"), Match::Opaque(_)));
    assert_eq!(m("git status"), Match::No);
    assert!(matches!(m("git $x"), Match::Maybe(_)));
    assert!(matches!(m("$x push"), Match::Maybe(_)));
    assert_eq!(m("echo $x"), Match::No);
    assert!(CommandPattern::new("*").unwrap().matches_everything());
    assert!(
        CommandPattern::new("a; b")
            .unwrap_err()
            .contains("one rule per command")
    );
}

proptest! {
    // Arbitrary text never panics the reader; an unterminated single quote
    // is never taken as read.
    #[test]
    fn arbitrary_text_is_read_or_marked_unreadable(text in "[ -~\\n]{0,80}") {
        let prepared = PreparedCommand::new(&text);
        let plain = !text.contains(['"', '\\', '#', '$', '`', '<']);
        if plain && text.matches('\'').count() % 2 == 1 {
            prop_assert!(prepared.unread.is_some(), "{:?} read", text);
        }
    }

    // Shell-quoting a word any way yields the same word.
    #[test]
    fn quoting_is_removed(word in "[a-z0-9._/-]{1,12}", how in 0u8..4) {
        let quoted = match how {
            0 => format!("'{word}'"),
            1 => format!("\"{word}\""),
            2 => word.chars().map(|c| format!("\\{c}")).collect(),
            _ => format!("$'{word}'"),
        };
        let prepared = PreparedCommand::new(&format!("echo {quoted}"));
        prop_assert_eq!(&prepared.commands[0].views[0].words[1], &Tok::Lit(word));
    }
}
