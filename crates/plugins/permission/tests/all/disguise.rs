//! Property: wrapping, quoting or reordering a denied command never turns
//! it into an allowed one, whatever allow rules are around it.

use proptest::prelude::*;
use tack_permission::{Action, Mode, Permission, PermissionConfig, Rule};

use crate::harness::bash;

/// A denied command, as argv words.
fn denied() -> impl Strategy<Value = Vec<String>> {
    prop_oneof![
        Just(vec!["rm", "-rf", "t"]),
        Just(vec!["rm", "t"]),
        Just(vec!["git", "push", "--force"]),
        Just(vec!["git", "push"]),
        Just(vec!["curl", "https://example.com"]),
    ]
    .prop_map(|words| words.into_iter().map(str::to_owned).collect())
}

/// One way of writing argv[0] (or a git subcommand).
pub fn spell(word: &str, how: u8) -> String {
    let (head, tail) = word.split_at(1);
    match how % 10 {
        0 => word.to_owned(),
        1 => format!("'{word}'"),
        2 => format!("\"{word}\""),
        3 => format!("\\{word}"),
        4 => format!("{head}\"\"{tail}"),
        5 => format!("{head}''{tail}"),
        6 => format!("/usr/bin/{word}"),
        7 => format!("$'{word}'"),
        8 => format!("{head}\\\n{tail}"),
        _ => format!("{head}\\{tail}"),
    }
}

fn single_quote(script: &str) -> String {
    format!("'{}'", script.replace('\'', "'\\''"))
}

/// One disguise around a command string.
#[derive(Clone, Debug)]
pub enum Layer {
    Prefix(&'static str),
    Shell(&'static str),
    Eval,
    Trap,
    Brace,
    Subshell,
    If,
    For,
    While,
    Function,
    Substitution,
    Backquotes,
    Before(&'static str),
    After(&'static str),
    AndAfter(&'static str),
    PipeAfter(&'static str),
    HereDoc,
    Background,
    Assign,
}

pub fn layer() -> impl Strategy<Value = Layer> {
    prop_oneof![
        prop_oneof![
            Just("sudo "),
            Just("sudo -u root "),
            Just("doas "),
            Just("env "),
            Just("env A=1 "),
            Just("command "),
            Just("exec "),
            Just("nice "),
            Just("nice -n 5 "),
            Just("ionice -c3 "),
            Just("nohup "),
            Just("timeout 5 "),
            Just("stdbuf -oL "),
            Just("time "),
            Just("setsid "),
            Just("xargs "),
            Just("chrt -f 1 "),
            Just("taskset -c 0 "),
            Just("VAR=1 "),
            Just("! "),
        ]
        .prop_map(Layer::Prefix),
        prop_oneof![
            Just("bash"),
            Just("sh"),
            Just("dash"),
            Just("bash -lc"),
            Just("zsh")
        ]
        .prop_map(Layer::Shell),
        Just(Layer::Eval),
        Just(Layer::Trap),
        Just(Layer::Brace),
        Just(Layer::Subshell),
        Just(Layer::If),
        Just(Layer::For),
        Just(Layer::While),
        Just(Layer::Function),
        Just(Layer::Substitution),
        Just(Layer::Backquotes),
        prop_oneof![Just("ls"), Just("git status"), Just("echo ok")].prop_map(Layer::Before),
        prop_oneof![Just("ls"), Just("git status"), Just("echo ok")].prop_map(Layer::After),
        prop_oneof![Just("ls"), Just("true")].prop_map(Layer::AndAfter),
        prop_oneof![Just("ls"), Just("echo ok")].prop_map(Layer::PipeAfter),
        Just(Layer::HereDoc),
        Just(Layer::Background),
        Just(Layer::Assign),
    ]
}

pub fn wrap(command: String, layer: &Layer) -> String {
    match layer {
        Layer::Prefix(prefix) => {
            // `VAR=1` and `!` stay in front, where bash reads them as such.
            let mut rest = command.as_str();
            let mut leading = String::new();
            while let Some(tail) = rest
                .strip_prefix("! ")
                .or_else(|| rest.strip_prefix("VAR=1 "))
            {
                leading.push_str(&rest[..rest.len() - tail.len()]);
                rest = tail;
            }
            if *prefix == "! " {
                format!("! {leading}{rest}").replacen("! ! ", "! ", 1)
            } else {
                format!("{leading}{prefix}{rest}")
            }
        }
        Layer::Shell(shell) if shell.ends_with("-lc") => {
            format!("{shell} {}", single_quote(&command))
        }
        Layer::Shell(shell) => format!("{shell} -c {}", single_quote(&command)),
        Layer::Eval => format!("eval {}", single_quote(&command)),
        Layer::Trap => format!("trap {} EXIT", single_quote(&command)),
        Layer::Brace => format!("{{ {command}; }}"),
        Layer::Subshell => format!("({command})"),
        Layer::If => format!("if true; then {command}; fi"),
        Layer::For => format!("for i in 1 2; do {command}; done"),
        Layer::While => format!("while true; do {command}; break; done"),
        Layer::Function => format!("f() {{ {command}; }}; f"),
        Layer::Substitution => format!("echo $({command})"),
        Layer::Backquotes if !command.contains('`') => format!("echo `{command}`"),
        Layer::Backquotes => format!("echo $({command})"),
        Layer::Before(other) => format!("{other}; {command}"),
        Layer::After(other) => format!("{command}; {other}"),
        Layer::AndAfter(other) => format!("{other} && {command}"),
        Layer::PipeAfter(other) => format!("{other} | {command}"),
        Layer::HereDoc if !command.contains("EOF") => format!("bash <<'EOF'\n{command}\nEOF"),
        Layer::HereDoc => format!("bash -c {}", single_quote(&command)),
        Layer::Background => format!("{command} &"),
        Layer::Assign => format!("x=$({command})"),
    }
}

fn gate(mode: Mode, allows: &[&str]) -> Permission {
    let mut builder = PermissionConfig::default().mode(mode);
    for pattern in ["rm *", "git push*", "curl*"] {
        builder = builder.rule(
            Rule::deny("bash")
                .command("command", pattern)
                .build()
                .unwrap(),
        );
    }
    for pattern in allows {
        builder = builder.rule(
            Rule::allow("bash")
                .command("command", *pattern)
                .build()
                .unwrap(),
        );
    }
    Permission::new(builder)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn a_disguised_denied_command_is_never_allowed(
        argv in denied(),
        spelling in 0u8..10,
        sub_spelling in 0u8..10,
        layers in proptest::collection::vec(layer(), 0..4),
        mode in prop_oneof![Just(Mode::AllowAll), Just(Mode::AcceptEdits), Just(Mode::Ask)],
        allow_wide in any::<bool>(),
    ) {
        let mut words = argv.clone();
        words[0] = spell(&argv[0], spelling);
        if argv[0] == "git" {
            // A path is no git subcommand: skip that spelling there.
            words[1] = spell(&argv[1], if sub_spelling == 6 { 0 } else { sub_spelling });
        }
        let mut command = words.join(" ");
        for layer in &layers {
            command = wrap(command, layer);
        }
        let allows: &[&str] = if allow_wide {
            &["ls*", "echo *", "git status*", "true", "sudo *", "env *", "bash *", "sh *", "eval *", "xargs *"]
        } else {
            &["ls*", "git status*"]
        };
        let gate = gate(mode, allows);
        let decided = gate.evaluate(&bash(&command)).action;
        prop_assert_ne!(decided, Action::Allow, "{:?}", command);
    }
}

/// The disguises themselves are fine: the same layers around a harmless
/// command stay allowed in `allow-all` mode, so the property above is not
/// passing because everything asks.
#[test]
fn the_same_disguises_around_a_harmless_command_are_allowed() {
    let gate = gate(Mode::AllowAll, &[]);
    for layer in [
        Layer::Prefix("sudo "),
        Layer::Prefix("env A=1 "),
        Layer::Prefix("timeout 5 "),
        Layer::Shell("bash"),
        Layer::Eval,
        Layer::Brace,
        Layer::If,
        Layer::Function,
        Layer::Substitution,
        Layer::Before("ls"),
        Layer::HereDoc,
    ] {
        let command = wrap("ls -la t".to_owned(), &layer);
        assert_eq!(
            gate.evaluate(&bash(&command)).action,
            Action::Allow,
            "{command:?}"
        );
    }
}
