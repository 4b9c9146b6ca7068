//! An approval waits durably: every process stops and starts again, then
//! the answer resumes the session.

use std::time::Duration;

use tack_restate::{ApprovalAnswer, StoredMessage};

use crate::restate::wait_until;
use crate::scene::Scene;

#[test]
fn an_approval_survives_a_restart_of_every_process() {
    let Some(mut scene) = Scene::new() else {
        return;
    };
    let mut endpoint = scene.endpoint("A");
    scene.register(&endpoint);
    scene.script("asked", &[&[("c1", "guarded", "asked-c1")]], "done");
    scene.script("refused", &[&[("c1", "guarded", "refused-c1")]], "done");
    let mut invocations = Vec::new();
    for session in ["asked", "refused"] {
        let id = scene
            .runtime
            .block_on(scene.client.send_turn(session, "go"))
            .expect("start the turn");
        invocations.push(id);
    }
    for session in ["asked", "refused"] {
        wait_until("the approval request", Duration::from_secs(120), || {
            scene
                .runtime
                .block_on(scene.client.pending_approval(session))
                .expect("pending_approval")
                .is_some()
        });
    }

    // Every process stops; the server and the endpoint start again.
    endpoint.stop();
    scene.restate.restart();
    endpoint.restart();

    let client = scene.client.clone();
    let pending = scene
        .runtime
        .block_on(client.pending_approval("asked"))
        .expect("pending_approval")
        .expect("still waiting after the restart");
    assert_eq!(pending.request.tool, "guarded");
    assert_eq!(pending.request.call_id.to_string(), "c1");
    assert_eq!(
        pending.request.reason,
        "guarded calls need a person's approval"
    );
    assert!(
        scene.lines("asked-c1").is_empty(),
        "the body waits for the answer"
    );

    let allow = ApprovalAnswer {
        allow: true,
        reason: None,
    };
    let deny = ApprovalAnswer {
        allow: false,
        reason: Some("not today".into()),
    };
    scene
        .runtime
        .block_on(client.answer("asked", &allow))
        .expect("answer");
    // The other answer goes to the awakeable through the ingress directly.
    let refused = scene
        .runtime
        .block_on(client.pending_approval("refused"))
        .expect("pending_approval")
        .expect("still waiting after the restart");
    scene
        .runtime
        .block_on(client.resolve_awakeable(&refused.awakeable, &deny))
        .expect("resolve the awakeable");

    for id in &invocations {
        let report = scene.runtime.block_on(client.attach(id)).expect("attach");
        assert_eq!(report.text.as_deref(), Some("done"), "{report:?}");
    }
    assert_eq!(
        scene.lines("asked-c1"),
        ["A"],
        "the approved call ran exactly once"
    );
    assert!(
        scene.lines("refused-c1").is_empty(),
        "the refused call never ran"
    );
    let history = scene
        .runtime
        .block_on(client.history("refused"))
        .expect("history");
    let refused = history.iter().find_map(|m| match m {
        StoredMessage::ToolResult {
            content, is_error, ..
        } => Some((content.clone(), *is_error)),
        _ => None,
    });
    let (content, is_error) = refused.expect("a result");
    assert!(
        is_error && content.starts_with("DENIED") && content.contains("not today"),
        "{content}"
    );
    // No approval is pending any more.
    assert!(
        scene
            .runtime
            .block_on(client.pending_approval("asked"))
            .expect("pending")
            .is_none()
    );
    let _ = scene.path();
}
