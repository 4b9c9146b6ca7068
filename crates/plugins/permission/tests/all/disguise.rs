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
    /// A place where bash or a program evaluates text: the command runs
    /// from an arithmetic subscript, a callback, a hook variable, a
    /// function from the environment, a program's configuration.
    Evaluated(Evaluated),
}

/// The families of forms where text is evaluated as code.
#[derive(Clone, Copy, Debug)]
pub enum Evaluated {
    ArithmeticSubscript,
    DeclareInteger,
    TestV,
    OldArithmetic,
    ArrayKey,
    Compgen,
    Mapfile,
    Ps4,
    BashFunc,
    ShellStdinFd,
    GitConfigEnv,
    Script,
    SedE,
    XargsShell,
    Opaque(&'static str),
}

pub fn evaluated() -> impl Strategy<Value = Evaluated> {
    prop_oneof![
        Just(Evaluated::ArithmeticSubscript),
        Just(Evaluated::DeclareInteger),
        Just(Evaluated::TestV),
        Just(Evaluated::OldArithmetic),
        Just(Evaluated::ArrayKey),
        Just(Evaluated::Compgen),
        Just(Evaluated::Mapfile),
        Just(Evaluated::Ps4),
        Just(Evaluated::BashFunc),
        Just(Evaluated::ShellStdinFd),
        Just(Evaluated::GitConfigEnv),
        Just(Evaluated::Script),
        Just(Evaluated::SedE),
        Just(Evaluated::XargsShell),
        prop_oneof![
            Just("setarch x86_64 "),
            Just("setpriv "),
            Just("prlimit --nofile=256 "),
        ]
        .prop_map(Evaluated::Opaque),
    ]
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
        evaluated().prop_map(Layer::Evaluated),
    ]
}

/// `command` run from a place where text is evaluated.
fn evaluate(command: &str, how: Evaluated) -> String {
    let in_subscript = single_quote(&format!("a[$({command})]"));
    match how {
        Evaluated::ArithmeticSubscript => format!("x={in_subscript}; (( x ))"),
        Evaluated::DeclareInteger => format!("declare -i x={in_subscript}"),
        Evaluated::TestV => format!("test -v {in_subscript}"),
        Evaluated::OldArithmetic => format!("x={in_subscript}; echo $[x]"),
        Evaluated::ArrayKey => format!("x={in_subscript}; y=([x]=1)"),
        Evaluated::Compgen => format!("compgen -C {} x", single_quote(command)),
        Evaluated::Mapfile => format!(
            "mapfile -c 1 -C {} a <<< line",
            single_quote(&format!("{command};:"))
        ),
        Evaluated::Ps4 => format!("PS4={}; set -x; :", single_quote(&format!("$({command})"))),
        Evaluated::BashFunc => format!(
            "env {} bash -c f",
            single_quote(&format!("BASH_FUNC_f%%=() {{ {command}\n}}"))
        ),
        Evaluated::ShellStdinFd => format!("sh /dev/fd/3 3<<< {}", single_quote(command)),
        Evaluated::GitConfigEnv => format!(
            "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0={} git x",
            single_quote(&format!("!{command}"))
        ),
        Evaluated::Script => format!("script -qc {} typescript", single_quote(command)),
        Evaluated::SedE => format!(
            "echo | sed {}",
            single_quote(&format!("e {}", command.replace('\n', " ")))
        ),
        Evaluated::XargsShell => format!("printf %s {} | xargs -0 sh -c", single_quote(command)),
        Evaluated::Opaque(prefix) => format!("{prefix}{command}"),
    }
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
        Layer::Evaluated(how) => evaluate(&command, *how),
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
