//! One ordered verdict, closed verdict types, closed scopes, and the codes a
//! tool may return.

use tack_core::hook::{AgentId, Scope};
use tack_core::host::GuardOutcome;
use tack_core::policy::{Action, PreDecision};
use tack_core::tool::{ErrorCode, ToolError};

#[test]
fn actions_order_allow_ask_deny_and_decisions_follow_them() {
    assert!(Action::Allow < Action::Ask && Action::Ask < Action::Deny);
    let decisions = [
        PreDecision::allow(),
        PreDecision::ask("a"),
        PreDecision::deny("d"),
    ];
    let actions: Vec<Action> = decisions.iter().map(PreDecision::action).collect();
    assert_eq!(actions, [Action::Allow, Action::Ask, Action::Deny]);
    for a in &decisions {
        for b in &decisions {
            let stricter = a.clone().stricter(b.clone());
            assert_eq!(stricter.action(), a.action().max(b.action()));
        }
    }
    // A tie keeps the first, whatever the reasons say.
    let tie = PreDecision::deny("zzz").stricter(PreDecision::deny("aaa"));
    assert_eq!(tie.reason(), Some("zzz"));
}

#[test]
fn a_decision_built_from_an_action_carries_its_reason() {
    assert!(PreDecision::from_action(Action::Allow, "ignored").is_allow());
    let ask = PreDecision::from_action(Action::Ask, "writes files");
    assert_eq!(ask.action(), Action::Ask);
    assert_eq!(ask.reason(), Some("writes files"));
    let deny = PreDecision::from_action(Action::Deny, "no");
    assert_eq!(deny.action(), Action::Deny);
    assert_eq!(deny.reason(), Some("no"));
}

#[test]
fn actions_have_one_wire_form() {
    for action in [Action::Allow, Action::Ask, Action::Deny] {
        assert_eq!(action.as_str().parse::<Action>().unwrap(), action);
        let json = serde_json::to_string(&action).unwrap();
        assert_eq!(json, format!("\"{action}\""));
    }
    let err = "maybe".parse::<Action>().unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown action `maybe`: expected `allow`, `ask` or `deny`"
    );
    for name in err.expected {
        assert_eq!(name.parse::<Action>().unwrap().as_str(), *name);
    }
}

// These matches have no catch-all arm: they compile only because the verdict
// types, `Action` and `Scope` are closed, so a consumer never needs an arm
// that treats something unknown as "allow" or "global".
fn describe_pre(decision: &PreDecision) -> Option<&str> {
    match decision.action() {
        Action::Allow => None,
        Action::Ask | Action::Deny => decision.reason(),
    }
}

fn describe_guard(answer: &Result<(), String>) -> bool {
    match answer {
        Ok(()) => true,
        Err(_) => false,
    }
}

fn describe_outcome(outcome: &GuardOutcome) -> bool {
    match outcome {
        GuardOutcome::Passed => true,
        GuardOutcome::Denied { .. } => false,
    }
}

fn layer(scope: &Scope) -> Option<&str> {
    match scope {
        Scope::Global => None,
        Scope::Agent(agent) => Some(agent.as_str()),
    }
}

#[test]
fn verdicts_and_scopes_are_matched_completely() {
    assert_eq!(describe_pre(&PreDecision::ask("x")), Some("x"));
    assert_eq!(describe_pre(&PreDecision::allow()), None);
    assert!(describe_guard(&Ok(())));
    assert!(!describe_guard(&Err("no".into())));
    assert!(describe_outcome(&GuardOutcome::Passed));
    assert_eq!(layer(&Scope::Global), None);
    assert_eq!(layer(&Scope::Agent(AgentId::new("a"))), Some("a"));
}

#[test]
fn a_tool_error_carries_only_the_codes_a_tool_may_produce() {
    let made = [
        ToolError::new("m"),
        ToolError::invalid_arguments("m"),
        ToolError::cancelled("m"),
        ToolError::timeout("m"),
        ToolError::code_run_failed("m"),
    ]
    .map(|err| err.code());
    assert_eq!(
        made,
        [
            ErrorCode::ExecutionFailed,
            ErrorCode::InvalidArguments,
            ErrorCode::Cancelled,
            ErrorCode::Timeout,
            ErrorCode::CodeRunFailed,
        ]
    );
    // Every other wire code is the pipeline's verdict about a call; no
    // constructor of a tool error gives it (and `ToolError`'s fields are
    // private: tests/compile_fail/tool_error_cannot_claim_denied.rs).
    let pipeline_only: Vec<ErrorCode> = ErrorCode::ALL
        .into_iter()
        .filter(|code| !made.contains(code))
        .collect();
    assert_eq!(
        pipeline_only,
        [
            ErrorCode::UnknownTool,
            ErrorCode::Denied,
            ErrorCode::OutputInvalid,
            ErrorCode::Internal,
        ]
    );
}
