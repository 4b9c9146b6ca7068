//! Two endpoints behind one balancing URL: Restate spreads the sessions
//! over them, and a session whose endpoint dies moves to the other.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tack_restate::INTERRUPTED_MESSAGE;

use crate::crash::{SESSIONS, result};
use crate::scene::Scene;

/// A TCP proxy on a free port handing each new connection to the next of
/// `backends` that accepts it (round robin).
fn balancer(runtime: &tokio::runtime::Runtime, backends: Vec<u16>) -> u16 {
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("bind");
    let port = listener.local_addr().expect("address").port();
    let next = Arc::new(AtomicUsize::new(0));
    runtime.spawn(async move {
        loop {
            let Ok((mut inbound, _)) = listener.accept().await else {
                return;
            };
            let (backends, next) = (backends.clone(), Arc::clone(&next));
            tokio::spawn(async move {
                for _ in 0..backends.len() {
                    let at = next.fetch_add(1, Ordering::Relaxed) % backends.len();
                    if let Ok(mut outbound) =
                        tokio::net::TcpStream::connect(("127.0.0.1", backends[at])).await
                    {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                        return;
                    }
                }
            });
        }
    });
    port
}

#[test]
fn sessions_spread_over_endpoints_behind_one_url_and_move_when_one_dies() {
    let Some(scene) = Scene::new() else { return };
    let mut a = scene.endpoint("A");
    let b = scene.endpoint("B");
    let port = balancer(&scene.runtime, vec![a.port, b.port]);
    let admin = scene.restate.admin.clone();
    scene
        .runtime
        .block_on(tack_restate::register_deployment(
            &admin,
            &format!("http://127.0.0.1:{port}"),
        ))
        .expect("register");
    let sessions: Vec<String> = (0..SESSIONS).map(|i| format!("b{i:02}")).collect();
    for (i, s) in sessions.iter().enumerate() {
        let hold = if i % 2 == 0 {
            "hold"
        } else {
            "hold_idempotent"
        };
        scene.script(
            s,
            &[
                &[("c1", "append", &format!("{s}-c1"))],
                &[("c2", hold, &format!("{s}-c2"))],
                &[("c3", "append", &format!("{s}-c3"))],
            ],
            "done",
        );
    }
    let invocations: Vec<String> = sessions
        .iter()
        .map(|s| {
            scene
                .runtime
                .block_on(scene.client.send_turn(s, "go"))
                .expect("start")
        })
        .collect();
    for s in &sessions {
        scene.wait_for_file(&format!("{s}-c2"));
    }
    // Restate placed the sessions on both endpoints.
    let on_a: Vec<bool> = sessions
        .iter()
        .map(|s| scene.lines(&format!("{s}-c2")) == ["A"])
        .collect();
    let placed_on_a = on_a.iter().filter(|a| **a).count();
    assert!(
        placed_on_a > 0 && placed_on_a < SESSIONS,
        "every session ran on one endpoint: {placed_on_a} of {SESSIONS} on A"
    );

    // A dies and stays dead: its sessions' retries reach B through the
    // same URL.
    a.kill();
    scene.open_gate();
    for id in &invocations {
        let report = scene
            .runtime
            .block_on(scene.client.attach(id))
            .expect("attach");
        assert_eq!(report.text.as_deref(), Some("done"), "{report:?}");
    }
    for (i, s) in sessions.iter().enumerate() {
        let history = scene
            .runtime
            .block_on(scene.client.history(s))
            .expect("history");
        for call in ["c1", "c3"] {
            assert_eq!(scene.lines(&format!("{s}-{call}")).len(), 1, "{s} {call}");
        }
        let held = scene.lines(&format!("{s}-c2"));
        let (content, is_error) = result(&history, "c2").expect("c2's result");
        match (on_a[i], i % 2 == 0) {
            (true, true) => {
                assert_eq!(held, ["A"], "{s}");
                assert!(
                    is_error && content.contains(INTERRUPTED_MESSAGE),
                    "{s}: {content}"
                );
            }
            (true, false) => {
                assert_eq!(held, ["A", "B"], "{s}: run again once, on B");
                assert!(!is_error, "{s}: {content}");
            }
            (false, _) => {
                assert_eq!(held, ["B"], "{s}");
                assert!(!is_error, "{s}: {content}");
            }
        }
    }
}
