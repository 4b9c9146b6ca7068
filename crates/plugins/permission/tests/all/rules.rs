//! Rule precedence: the strictest matching rule wins.

use proptest::prelude::*;
use serde_json::json;
use tack_core::tool::Tier;
use tack_permission::{Action, Basis, Mode, Permission, PermissionConfig, Rule, RuleSet};

use crate::harness::*;

fn rule(action: Action, text: &str) -> Rule {
    Rule::parse(action, text).unwrap()
}

// The precedence table: which of the matching rules decides, whatever their order.
#[test]
fn precedence_table() {
    use Action::*;
    let table: &[(&[Action], Action)] = &[
        (&[Allow], Allow),
        (&[Ask], Ask),
        (&[Deny], Deny),
        (&[Allow, Ask], Ask),
        (&[Ask, Allow], Ask),
        (&[Allow, Deny], Deny),
        (&[Deny, Allow], Deny),
        (&[Ask, Deny], Deny),
        (&[Deny, Ask], Deny),
        (&[Allow, Ask, Deny], Deny),
        (&[Deny, Ask, Allow], Deny),
        (&[Allow, Allow], Allow),
    ];
    for (actions, expected) in table {
        let set: RuleSet = actions.iter().map(|a| rule(*a, "bash")).collect();
        let got = set.evaluate(&bash("ls"), None).map(|d| d.action());
        assert_eq!(got, Some(*expected), "{actions:?}");
        assert_eq!(actions.iter().copied().max(), Some(*expected), "Ord agrees");
    }
}

#[test]
fn first_of_equally_strict_rules_is_named() {
    let set: RuleSet = [
        Rule::deny("bash").origin("first").build().unwrap(),
        Rule::deny("*").origin("second").build().unwrap(),
    ]
    .into_iter()
    .collect();
    assert_eq!(
        set.evaluate(&bash("ls"), None).unwrap().rule().origin(),
        Some("first")
    );
}

#[test]
fn non_matching_rules_do_not_count() {
    let set: RuleSet = [
        rule(Action::Deny, "write_file"),
        rule(Action::Allow, "bash"),
    ]
    .into_iter()
    .collect();
    assert_eq!(
        set.evaluate(&bash("ls"), None).unwrap().action(),
        Action::Allow
    );
    assert!(set.evaluate(&read("a"), None).is_none());
}

#[test]
fn tool_name_globs_tier_and_agent_restrict_matches() {
    let mcp = Rule::deny("mcp_*").build().unwrap();
    assert!(mcp.matches(&exec("mcp_github", Tier::Network, json!({})), None));
    assert!(!mcp.matches(&bash("ls"), None));
    let net = Rule::ask("*").tier(Tier::Network).build().unwrap();
    assert!(net.matches(&exec("fetch", Tier::Network, json!({})), None));
    assert!(!net.matches(&bash("ls"), None));
    let planner = Rule::deny("*")
        .agent(tack_core::hook::AgentId::new("planner"))
        .build()
        .unwrap();
    assert!(planner.matches(
        &exec_for("planner", "bash", Tier::Executes, json!({})),
        None
    ));
    assert!(!planner.matches(&exec_for("coder", "bash", Tier::Executes, json!({})), None));
    assert!(!planner.matches(&bash("ls"), None));
}

#[test]
fn an_argument_pattern_on_a_missing_or_non_string_argument_does_not_match() {
    let r = rule(Action::Deny, r#"read_file(path: "**")"#);
    assert!(!r.matches(&exec("read_file", Tier::ReadOnly, json!({})), None));
    assert!(!r.matches(&exec("read_file", Tier::ReadOnly, json!({"path": 3})), None));
    assert!(r.matches(&read("x"), None));
}

#[test]
fn compact_syntax_errors_are_clear() {
    for (text, needle) in [
        ("", "the tool name pattern is empty"),
        (r#"bash(command: "ls""#, "missing `)`"),
        (r#"bash(command: ls)"#, "double-quoted"),
        (r#"bash(: "ls")"#, "argument name"),
        (r#"bash(command: "ls" path: "x")"#, "expected `,`"),
        (r#"read_file(path: "src/[")"#, "invalid glob `src/[`"),
    ] {
        let err = Rule::parse(Action::Allow, text).unwrap_err();
        assert!(err.to_string().contains(needle), "{text}: {err}");
    }
    // Escaped quotes inside a pattern.
    let r = rule(Action::Deny, r#"bash(command: "echo \"hi\"*")"#);
    assert!(r.matches(&bash(r#"echo "hi" there"#), None));
}

fn arb_action() -> impl Strategy<Value = Action> {
    prop_oneof![Just(Action::Allow), Just(Action::Ask), Just(Action::Deny)]
}

fn arb_rule() -> impl Strategy<Value = Rule> {
    let tools = prop_oneof![
        Just("*"),
        Just("bash"),
        Just("read_file"),
        Just("write_file"),
        Just("b*")
    ];
    let args = prop_oneof![
        Just(None),
        Just(Some(("path", "src/**"))),
        Just(Some(("path", "**/.env"))),
        Just(Some(("path", "/etc/**"))),
        Just(Some(("command", "git *"))),
        Just(Some(("command", "rm*"))),
        Just(Some(("command", "ls"))),
    ];
    let tier = prop_oneof![
        Just(None),
        Just(Some(Tier::ReadOnly)),
        Just(Some(Tier::Executes))
    ];
    (arb_action(), tools, args, tier).prop_map(|(action, tool, args, tier)| {
        let mut b = Rule::builder(action, tool);
        if let Some(tier) = tier {
            b = b.tier(tier);
        }
        match args {
            Some(("command", p)) => b = b.command("command", p),
            Some((arg, p)) => b = b.path(arg, p),
            None => {}
        }
        b.build().unwrap()
    })
}

fn arb_call() -> impl Strategy<Value = tack_core::tool::ToolExecution> {
    let paths = prop_oneof![
        Just("src/a.rs"),
        Just("src/../.env"),
        Just("../outside"),
        Just("/etc/passwd"),
        Just("/ws/src/x"),
        Just("a/b/.env"),
    ];
    let cmds = prop_oneof![
        Just("git status"),
        Just("git push; rm -rf /"),
        Just("ls"),
        Just("rm -rf x"),
        Just("echo $(rm x)"),
    ];
    prop_oneof![
        paths.clone().prop_map(read),
        paths.prop_map(write),
        cmds.prop_map(bash),
    ]
}

fn arb_mode() -> impl Strategy<Value = Mode> {
    prop_oneof![
        Just(Mode::ReadOnly),
        Just(Mode::Ask),
        Just(Mode::AcceptEdits),
        Just(Mode::AllowAll)
    ]
}

proptest! {
    // Adding a deny rule never makes a decision less strict: a denied call
    // stays denied, an asked one is never allowed.
    #[test]
    fn adding_a_deny_rule_never_loosens(
        rules in proptest::collection::vec(arb_rule(), 0..8),
        extra in arb_rule(),
        position in 0usize..9,
        call in arb_call(),
        mode in arb_mode(),
    ) {
        let before = Permission::new(PermissionConfig::default().mode(mode).workspace_root("/ws")
            .rules(rules.iter().cloned().collect()));
        let deny = Rule::builder(Action::Deny, extra.tool()).build().unwrap();
        let deny = if extra.args().is_empty() { deny } else {
            // the same patterns as `extra`, as a deny rule
            let a = &extra.args()[0];
            match a.kind() {
                tack_permission::ArgKind::Command => Rule::deny(extra.tool()).command(a.arg(), a.pattern()).build().unwrap(),
                _ => Rule::deny(extra.tool()).path(a.arg(), a.pattern()).build().unwrap(),
            }
        };
        let mut with = rules.clone();
        with.insert(position.min(with.len()), deny);
        let after = Permission::new(PermissionConfig::default().mode(mode).workspace_root("/ws")
            .rules(with.into_iter().collect()));
        let (b, a) = (before.evaluate(&call).action, after.evaluate(&call).action);
        prop_assert!(a >= b, "{b:?} became {a:?}");
    }

    // The decision of a set of rules is never looser than any rule that
    // matches on its own, and a matching deny rule always denies.
    #[test]
    fn decision_is_at_least_every_matching_rule(
        rules in proptest::collection::vec(arb_rule(), 0..10),
        call in arb_call(),
    ) {
        let set: RuleSet = rules.iter().cloned().collect();
        let root = Some(std::path::Path::new("/ws"));
        let strictest = rules.iter().filter(|r| r.matches(&call, root)).map(Rule::action).max();
        let got = set.evaluate(&call, root).map(|d| d.action());
        prop_assert!(got >= strictest, "{got:?} < {strictest:?}");
        if strictest == Some(Action::Deny) {
            prop_assert_eq!(got, Some(Action::Deny));
        }
    }
}

#[test]
fn a_deny_reason_names_the_rule_and_its_origin() {
    let gate = Permission::new(
        PermissionConfig::default().rule(
            Rule::deny("bash")
                .command("command", "rm *")
                .origin("perm.toml line 4")
                .build()
                .unwrap(),
        ),
    );
    let call = bash("rm -rf target");
    let ev = gate.evaluate(&call);
    assert_eq!(ev.action, Action::Deny);
    assert!(matches!(ev.basis, Basis::Rule(_)));
    assert_eq!(
        ev.reason(&call),
        r#"tool `bash` is denied by permission rule `deny bash(command: "rm *")` (perm.toml line 4)"#
    );
}

#[test]
fn the_permission_action_is_the_core_verdict() {
    // One ordering of verdicts in tack: the gate's `Action` is tack-core's.
    let action: tack_core::policy::Action = tack_permission::Action::Ask;
    assert_eq!(
        tack_core::policy::PreDecision::ask("r").action(),
        action,
        "a pre-execute decision and a rule speak the same verdict"
    );
}
