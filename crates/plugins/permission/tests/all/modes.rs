//! Each mode × tier, rules against modes, per-agent modes.

use serde_json::json;
use tack_core::hook::AgentId;
use tack_core::tool::Tier;
use tack_permission::{Action, Basis, Mode, Permission, PermissionConfig, Rule};

use crate::harness::*;

const TIERS: [Tier; 4] = [Tier::ReadOnly, Tier::Writes, Tier::Executes, Tier::Network];

#[test]
fn each_mode_by_each_tier() {
    use Action::*;
    let expected: [(Mode, [Action; 4]); 4] = [
        (Mode::ReadOnly, [Allow, Deny, Deny, Deny]),
        (Mode::Ask, [Allow, Ask, Ask, Ask]),
        (Mode::AcceptEdits, [Allow, Allow, Ask, Ask]),
        (Mode::AllowAll, [Allow, Allow, Allow, Allow]),
    ];
    for (mode, actions) in expected {
        let gate = Permission::new(PermissionConfig::default().mode(mode));
        for (tier, action) in TIERS.into_iter().zip(actions) {
            let ev = gate.evaluate(&exec("t", tier, json!({})));
            assert_eq!(ev.action, action, "{mode} × {tier}");
            assert_eq!(ev.basis, Basis::Mode(mode));
            assert_eq!(mode.baseline(tier), action);
        }
    }
}

#[test]
fn ask_is_the_default_mode() {
    assert_eq!(Permission::default().modes().default_mode(), Mode::Ask);
}

#[test]
fn deny_and_ask_rules_apply_in_allow_all() {
    let gate = Permission::new(
        PermissionConfig::default()
            .mode(Mode::AllowAll)
            .rule(
                Rule::deny("bash")
                    .command("command", "rm *")
                    .build()
                    .unwrap(),
            )
            .rule(Rule::ask("fetch").build().unwrap()),
    );
    assert_eq!(gate.evaluate(&bash("rm -rf /")).action, Action::Deny);
    assert_eq!(
        gate.evaluate(&exec("fetch", Tier::Network, json!({})))
            .action,
        Action::Ask
    );
    assert_eq!(gate.evaluate(&bash("ls")).action, Action::Allow);
}

#[test]
fn allow_rules_loosen_ask_modes_but_not_read_only() {
    let rule = Rule::allow("bash")
        .command("command", "git status*")
        .build()
        .unwrap();
    let ask = Permission::new(
        PermissionConfig::default()
            .mode(Mode::Ask)
            .rule(rule.clone()),
    );
    assert_eq!(ask.evaluate(&bash("git status")).action, Action::Allow);
    let ro = Permission::new(PermissionConfig::default().mode(Mode::ReadOnly).rule(rule));
    let call = bash("git status");
    let ev = ro.evaluate(&call);
    assert_eq!(ev.action, Action::Deny);
    assert_eq!(ev.basis, Basis::ModeFloor(Mode::ReadOnly));
    assert_eq!(
        ev.reason(&call),
        "tool `bash` (executes) is not allowed in permission mode `read-only`, which permits read-only tools only"
    );
}

#[test]
fn ask_rules_tighten_read_only_tiers() {
    let gate = Permission::new(
        PermissionConfig::default().rule(
            Rule::ask("read_file")
                .path("path", "secrets/**")
                .build()
                .unwrap(),
        ),
    );
    assert_eq!(gate.evaluate(&read("secrets/key")).action, Action::Ask);
    assert_eq!(gate.evaluate(&read("src/lib.rs")).action, Action::Allow);
}

// APR-009 (in tack's terms): a per-agent mode outranks the default, in both
// directions, and the last setting wins.
#[test]
fn per_agent_mode_overrides_the_default_both_ways() {
    let gate = Permission::new(
        PermissionConfig::default()
            .mode(Mode::Ask)
            .agent_mode(AgentId::new("planner"), Mode::ReadOnly)
            .agent_mode(AgentId::new("builder"), Mode::AllowAll),
    );
    let w = |agent: &str| exec_for(agent, "write_file", Tier::Writes, json!({}));
    assert_eq!(gate.evaluate(&w("planner")).action, Action::Deny);
    assert_eq!(gate.evaluate(&w("builder")).action, Action::Allow);
    assert_eq!(gate.evaluate(&w("other")).action, Action::Ask);
    assert_eq!(gate.evaluate(&write("x")).action, Action::Ask);
    // Last setting wins; clearing falls back to the default.
    gate.modes()
        .set_agent(AgentId::new("planner"), Mode::AcceptEdits);
    assert_eq!(gate.evaluate(&w("planner")).action, Action::Allow);
    gate.modes().clear_agent(AgentId::new("planner"));
    assert_eq!(gate.evaluate(&w("planner")).action, Action::Ask);
    // APR-012 (live switch): the default changes for the next call.
    gate.modes().set_default(Mode::ReadOnly);
    assert_eq!(gate.evaluate(&w("other")).action, Action::Deny);
}

#[test]
fn mode_names_round_trip_and_unknown_names_are_refused() {
    for mode in Mode::ALL {
        assert_eq!(mode.as_str().parse::<Mode>().unwrap(), mode);
    }
    let err = "never".parse::<Mode>().unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown permission mode `never`: expected `read-only`, `ask`, `accept-edits` or `allow-all`"
    );
}
