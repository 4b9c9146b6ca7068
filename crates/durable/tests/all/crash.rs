//! Sessions survive an endpoint killed mid-call.

use std::collections::BTreeMap;

use tack_restate::{INTERRUPTED_MESSAGE, StoredMessage};

use crate::scene::Scene;

pub const SESSIONS: usize = 20;

/// The result the history holds for `call_id`: (content, is_error).
pub fn result(history: &[StoredMessage], call_id: &str) -> Option<(String, bool)> {
    history.iter().find_map(|m| match m {
        StoredMessage::ToolResult {
            call_id: id,
            content,
            is_error,
            ..
        } if id == call_id => Some((content.clone(), *is_error)),
        _ => None,
    })
}

#[test]
fn sessions_complete_after_an_endpoint_is_killed_mid_call() {
    let Some(scene) = Scene::new() else { return };
    let mut a = scene.endpoint("A");
    let b = scene.endpoint("B");

    // Sessions 0..10 start on A, then B is registered and 10..20 start on
    // B: two endpoints serve the same object at once.
    let session = |i: usize| format!("s{i:02}");
    for i in 0..SESSIONS {
        let s = session(i);
        let hold = if i % 2 == 0 {
            "hold"
        } else {
            "hold_idempotent"
        };
        scene.script(
            &s,
            &[
                &[("c1", "append", &format!("{s}-c1"))],
                &[("c2", hold, &format!("{s}-c2"))],
                &[("c3", "append", &format!("{s}-c3"))],
            ],
            &format!("done {s}"),
        );
    }
    let mut invocations = BTreeMap::new();
    for (endpoint, range) in [(&a, 0..SESSIONS / 2), (&b, SESSIONS / 2..SESSIONS)] {
        scene.register(endpoint);
        for i in range.clone() {
            let s = session(i);
            let id = scene
                .runtime
                .block_on(scene.client.send_turn(&s, "go"))
                .unwrap_or_else(|e| panic!("start {s}: {e}\n{}", scene.restate.log()));
            invocations.insert(s, id);
        }
        // Every session of this endpoint is in its held call.
        for i in range {
            scene.wait_for_file(&format!("{}-c2", session(i)));
        }
    }

    // A dies while ten calls are in flight; B's calls finish once the gate
    // opens; A comes back and Restate replays its sessions there.
    a.kill();
    scene.open_gate();
    a.restart();

    let handles: Vec<_> = invocations
        .iter()
        .map(|(s, id)| {
            let (client, s, id) = (scene.client.clone(), s.clone(), id.clone());
            scene
                .runtime
                .spawn(async move { (s.clone(), client.attach(&id).await) })
        })
        .collect();
    for handle in handles {
        let (s, report) = scene.runtime.block_on(handle).expect("join");
        let report = report.unwrap_or_else(|e| panic!("{s}: {e}"));
        assert_eq!(report.end, "answered", "{s}: {report:?}");
        assert_eq!(report.text.as_deref(), Some(format!("done {s}").as_str()));
    }

    let (mut reported, mut repeated) = (0, 0);
    for i in 0..SESSIONS {
        let s = session(i);
        let history = scene
            .runtime
            .block_on(scene.client.history(&s))
            .unwrap_or_else(|e| panic!("history of {s}: {e}"));
        // Completed calls ran exactly once, whatever replays happened, and
        // their deferred context (c1's was replayed on A) follows them once.
        for call in ["c1", "c3"] {
            let lines = scene.lines(&format!("{s}-{call}"));
            assert_eq!(
                lines.len(),
                1,
                "{s} {call} ran {} times: {lines:?}",
                lines.len()
            );
            let (content, is_error) = result(&history, call).expect("a result");
            assert!(!is_error, "{s} {call}: {content}");
            let note = format!("note: appended {s}-{call}");
            let notes = history
                .iter()
                .filter(|m| matches!(m, StoredMessage::Context { context } if serde_json::to_string(context).expect("json").contains(&note)))
                .count();
            assert_eq!(notes, 1, "{s}: the context of {call}");
        }
        let held = scene.lines(&format!("{s}-c2"));
        let (content, is_error) = result(&history, "c2").expect("c2's result");
        let on_a = i < SESSIONS / 2;
        match (on_a, i % 2 == 0) {
            // Interrupted, not idempotent: reported to the model, not repeated.
            (true, true) => {
                assert_eq!(held, ["A"], "{s}: an interrupted call must not run again");
                assert!(
                    is_error && content.contains(INTERRUPTED_MESSAGE),
                    "{s}: {content}"
                );
                assert!(content.starts_with("EXECUTION_FAILED"), "{s}: {content}");
                reported += 1;
            }
            // Interrupted, idempotent: repeated once, on the restarted A.
            (true, false) => {
                assert_eq!(held, ["A", "A"], "{s}: an idempotent call runs again once");
                assert!(!is_error, "{s}: {content}");
                repeated += 1;
            }
            // B was never stopped.
            (false, _) => {
                assert_eq!(held, ["B"], "{s}");
                assert!(!is_error, "{s}: {content}");
            }
        }
    }
    assert_eq!((reported, repeated), (5, 5));
}
