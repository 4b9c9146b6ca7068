//! End to end through the pipeline: fail closed, provenance, session rules.

use std::io::Cursor;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use tack_core::hook::Provenance;
use tack_core::policy::{ApprovalOutcome, ApprovalRequest, ApprovalService, PreDecision};
use tack_core::tool::{ErrorCode, Outcome};
use tack_permission::{
    ChannelApprover, Mode, NoApprover, Permission, PermissionConfig, Rule, TerminalApprover,
};
use tack_test::{Call, Harness};
use tokio_util::sync::CancellationToken;

use crate::harness::*;

async fn call(r: &Harness<Permission>, id: &str, tool: &str, args: &str) -> Arc<Outcome> {
    r.call(Call::raw(tool, args).id(id)).await.outcome().clone()
}

fn denied(out: &Outcome) -> (&str, &Provenance) {
    let f = out
        .failure_info()
        .unwrap_or_else(|| panic!("expected a denial: {out:?}"));
    assert_eq!(f.code(), ErrorCode::Denied, "{out:?}");
    assert!(!f.dispatched());
    (f.message(), out.provenance.as_ref().unwrap())
}

#[tokio::test]
async fn rule_denial_names_the_rule_and_the_listener() {
    let gate = Permission::new(
        PermissionConfig::default()
            .mode(Mode::AllowAll)
            .rule(Rule::parse(tack_permission::Action::Deny, r#"bash(command: "rm *")"#).unwrap()),
    );
    let r = registry(&gate);
    let out = call(&r, "c", "bash", r#"{"command": "rm -rf /"}"#).await;
    let (message, by) = denied(&out);
    assert_eq!(
        message,
        r#"tool `bash` is denied by permission rule `deny bash(command: "rm *")`"#
    );
    assert_eq!(by, &Provenance::listener("tools/pre-execute", "permission"));
    assert!(
        call(&r, "d", "bash", r#"{"command": "ls"}"#)
            .await
            .is_success()
    );
}

// Fail closed: an ask with no approver installed is a denial.
#[tokio::test]
async fn ask_without_an_approver_is_denied() {
    let r = registry(&Permission::default());
    let out = call(&r, "c", "write_file", "{}").await;
    let (message, by) = denied(&out);
    assert!(message.contains("no approver is available"), "{message}");
    assert_eq!(by.listener.as_deref(), Some("no approver"));
    assert!(
        call(&r, "d", "read_file", "{}").await.is_success(),
        "read-only runs in ask mode"
    );
}

#[tokio::test]
async fn the_none_approver_denies_as_unavailable() {
    let gate = Permission::new(PermissionConfig::default().approver(Arc::new(NoApprover)));
    let r = registry(&gate);
    let out = call(&r, "c", "bash", "{}").await;
    let (message, by) = denied(&out);
    assert!(message.contains("approver `none`"), "{message}");
    assert_eq!(by.listener.as_deref(), Some("unavailable"));
}

struct Panicking;
#[async_trait]
impl ApprovalService for Panicking {
    async fn request(&self, _: ApprovalRequest, _: CancellationToken) -> ApprovalOutcome {
        panic!("approver bug")
    }
}

#[tokio::test]
async fn a_panicking_approver_denies() {
    let gate = Permission::new(PermissionConfig::default().approver(Arc::new(Panicking)));
    let r = registry(&gate);
    let out = call(&r, "c", "bash", "{}").await;
    let (message, _) = denied(&out);
    assert!(message.contains("approver bug"), "{message}");
}

// A terminal that is not a terminal: unavailable, denied, nothing read.
#[tokio::test]
async fn a_terminal_approver_without_a_terminal_denies() {
    let out_buf = SharedBuf::default();
    let gate = Permission::default();
    let gate = gate
        .clone()
        .with_approver(Arc::new(TerminalApprover::with_io(
            Cursor::new("y\n"),
            out_buf.clone(),
            false,
            gate.session_rules(),
        )));
    let r = registry(&gate);
    let out = call(&r, "c", "bash", "{}").await;
    let (message, _) = denied(&out);
    assert!(message.contains("stdin is not one"), "{message}");
    assert_eq!(out_buf.text(), "");
}

// Cancellation while the approver waits: CANCELLED, the tool never runs.
#[tokio::test]
async fn cancellation_during_approval_never_runs_the_tool() {
    let gate = Permission::default();
    let (approver, mut inbox) = ChannelApprover::new(gate.session_rules(), 1);
    let gate = gate.with_approver(Arc::new(approver));
    let r = registry(&gate);
    let cancel = CancellationToken::new();
    let ui = {
        let cancel = cancel.clone();
        async move {
            let pending = inbox.recv().await.unwrap();
            cancel.cancel();
            tokio::task::yield_now().await;
            pending.respond(tack_permission::Answer::Once);
        }
    };
    let (report, ()) = tokio::join!(
        r.call(Call::raw("bash", "{}").id("c").cancellation(cancel.clone())),
        ui
    );
    let out = report.outcome();
    let f = out.failure_info().unwrap();
    assert_eq!(f.code(), ErrorCode::Cancelled, "{out:?}");
    assert!(!f.dispatched());
}

// APR-008 in tack's terms: a deny rule (or read-only mode) refuses without
// consulting the approver at all.
#[tokio::test]
async fn a_denial_never_consults_the_approver() {
    let gate = Permission::new(
        PermissionConfig::default()
            .agent_mode("ro", Mode::ReadOnly)
            .rule(Rule::deny("fetch").build().unwrap()),
    );
    let (approver, mut inbox) = ChannelApprover::new(gate.session_rules(), 4);
    let gate = gate.with_approver(Arc::new(approver));
    let r = registry(&gate);
    denied(&*call(&r, "c", "fetch", "{}").await);
    let out = r
        .call(Call::raw("bash", "{}").id("d").agent("ro"))
        .await
        .outcome()
        .clone();
    let (message, _) = denied(&out);
    assert!(message.contains("read-only"), "{message}");
    assert!(inbox.try_recv().is_none(), "nobody was asked");
}

/// Counts requests and answers with a fixed outcome.
struct Counting(AtomicUsize);
#[async_trait]
impl ApprovalService for Counting {
    async fn request(&self, _: ApprovalRequest, _: CancellationToken) -> ApprovalOutcome {
        self.0.fetch_add(1, Ordering::SeqCst);
        ApprovalOutcome::AllowedOnce
    }
}

// "Always for this session" through the pipeline: later matching calls pass
// without asking; other tools still ask; deny rules still win.
#[tokio::test]
async fn always_for_this_session_lets_later_calls_pass_without_asking() {
    let gate = Permission::new(
        PermissionConfig::default().rule(
            Rule::deny("bash")
                .command("command", "rm *")
                .build()
                .unwrap(),
        ),
    );
    let out = SharedBuf::default();
    // One "always" answer; a second prompt would hit end of input (unavailable).
    let terminal =
        TerminalApprover::with_io(Cursor::new("a\n"), out.clone(), true, gate.session_rules());
    let gate = gate.with_approver(Arc::new(terminal));
    let r = registry(&gate);
    let first = call(&r, "c1", "bash", r#"{"command": "ls"}"#).await;
    assert!(first.is_success(), "{first:?}");
    for id in ["c2", "c3"] {
        let later = call(&r, id, "bash", r#"{"command": "ls -la"}"#).await;
        assert!(later.is_success(), "{later:?}");
    }
    assert_eq!(out.text().matches("Allow?").count(), 1, "asked once only");
    // A deny rule still beats the session rule.
    denied(&*call(&r, "c4", "bash", r#"{"command": "rm -rf /"}"#).await);
    // Another tool still asks (and the input is exhausted: unavailable → denied).
    let other = call(&r, "c5", "write_file", "{}").await;
    let (message, _) = denied(&other);
    assert!(message.contains("terminal closed"), "{message}");
}

// The gate never loosens a stricter listener: a later deny wins over our ask,
// and our deny short-circuits.
#[tokio::test]
async fn the_gate_combines_with_other_listeners_by_strictness() {
    let counting = Arc::new(Counting(AtomicUsize::new(0)));
    let gate = Permission::new(PermissionConfig::default().approver(counting.clone()));
    let r = registry(&gate);
    let _other = r
        .hooks()
        .pre_execute()
        .tap("no-bash", |exec, next| async move {
            if exec.name() == "bash" {
                return PreDecision::deny("no shell today");
            }
            next.run(exec).await
        });
    let out = call(&r, "c", "bash", "{}").await;
    let (message, by) = denied(&out);
    assert_eq!(message, "no shell today");
    assert_eq!(by.listener.as_deref(), Some("no-bash"));
    assert!(call(&r, "d", "write_file", "{}").await.is_success());
    assert_eq!(
        counting.0.load(Ordering::SeqCst),
        1,
        "asked for write_file only"
    );
}

#[tokio::test]
async fn unloading_removes_the_gate_and_the_approver() {
    let gate = Permission::new(
        PermissionConfig::default()
            .mode(Mode::ReadOnly)
            .approver(Arc::new(NoApprover)),
    );
    let mut r = registry(&gate);
    denied(&*call(&r, "c", "bash", "{}").await);
    r.uninstall();
    assert_eq!(r.hooks().pre_execute().listener_count(), 0);
    assert!(r.capabilities().snapshot().approval.is_none());
    assert!(call(&r, "d", "bash", "{}").await.is_success());
}

#[test]
fn the_factory_is_registered() {
    let f = tack_core::host::find_plugin("permission").unwrap();
    assert_eq!(f.create().name(), "permission");
}

/// The gate's place among the `tools/pre-execute` listeners: `NORMAL` by
/// default (after an earlier plugin's listener of the same rank), outside it
/// at `Order::EARLY`, and a name it is told to go before must exist.
#[test]
fn the_gate_goes_where_its_order_says() {
    use tack_core::hook::Order;
    use tack_core::plugin::{PluginError, PluginFn};
    use tack_pipeline::PluginSet;

    let other = || {
        PluginFn::new("other", |cx| {
            cx.hooks()
                .pre_execute()
                .tap("other", |exec, next| next.run(exec));
            Ok(())
        })
    };
    let names = |order: Option<Order>| {
        let mut config = PermissionConfig::default();
        if let Some(order) = order {
            config = config.order(order);
        }
        let set = PluginSet::new()
            .with(other())
            .with(Permission::new(config))
            .build()
            .unwrap();
        let names: Vec<String> = set
            .pipeline
            .hooks()
            .pre_execute()
            .listener_names(None)
            .iter()
            .map(|n| n.to_string())
            .collect();
        names
    };
    assert_eq!(names(None), ["other", "permission"]);
    assert_eq!(names(Some(Order::EARLY)), ["permission", "other"]);
    assert_eq!(names(Some(Order::before("other"))), ["permission", "other"]);

    let refused = PluginSet::new()
        .with(Permission::new(
            PermissionConfig::default().order(Order::after("nobody")),
        ))
        .build()
        .unwrap_err();
    assert!(matches!(refused, PluginError::Order { .. }), "{refused:?}");
    assert!(refused.to_string().contains("nobody"), "{refused}");
}
