//! Resource keys (docs/design.md, difference 9): parallel calls that write the same key never
//! overlap; different keys, and reads of one key, do.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tack_core::tool::ToolCall;
use tack_pipeline::{ResourceClaim, SchedulerConfig};
use tokio_util::sync::CancellationToken;

use super::harness::*;

fn keyed(args: &Value) -> Vec<ResourceClaim> {
    match args["key"].as_str() {
        Some(key) if args["write"] == json!(true) => vec![ResourceClaim::write(key)],
        Some(key) => vec![ResourceClaim::read(key)],
        None => Vec::new(),
    }
}

fn call(id: &str, key: &str, write: bool, ms: u64) -> ToolCall {
    work_with(id, json!({"ms": ms, "p": true, "key": key, "write": write}))
}

async fn run(b: &Bench, calls: Vec<ToolCall>) {
    let config = SchedulerConfig::default().with_resource_keys("work", keyed);
    let out = b.run_with(config, calls, CancellationToken::new()).await;
    assert!(out.iter().all(|o| o.is_success()), "{out:?}");
}

#[tokio::test(start_paused = true)]
async fn writes_to_one_key_do_not_overlap_writes_to_different_keys_do() {
    let b = Bench::new();
    run(
        &b,
        vec![
            call("w1", "fs:/a", true, 10),
            call("w2", "fs:/b", true, 10),
            call("w3", "fs:/a", true, 10),
        ],
    )
    .await;
    assert_eq!(b.timeline(), ["w1 0..10", "w2 0..10", "w3 10..20"]);
}

#[tokio::test(start_paused = true)]
async fn reads_share_a_key_and_a_write_waits_for_them() {
    let b = Bench::new();
    run(
        &b,
        vec![
            call("r1", "fs:/a", false, 10),
            call("r2", "fs:/a", false, 20),
            call("w3", "fs:/a", true, 5),
            call("r4", "fs:/a", false, 5),
        ],
    )
    .await;
    // w3 waits for both readers; calls start in model order, so r4 waits for w3.
    assert_eq!(
        b.timeline(),
        ["r1 0..10", "r2 0..20", "w3 20..25", "r4 25..30"]
    );
}

#[tokio::test(start_paused = true)]
async fn keys_are_off_by_default_and_a_panicking_classifier_means_exclusive() {
    let b = Bench::new();
    b.run(
        10,
        vec![call("w1", "fs:/a", true, 10), call("w2", "fs:/a", true, 10)],
    )
    .await;
    assert_eq!(
        b.timeline(),
        ["w1 0..10", "w2 0..10"],
        "no keys configured: both parallel"
    );

    let b = Bench::new();
    let out = b
        .run_with(
            SchedulerConfig::default().with_resource_keys("work", |_| panic!("classifier blew up")),
            vec![work("p1", 10, true), work("p2", 10, true)],
            CancellationToken::new(),
        )
        .await;
    assert!(out.iter().all(|o| o.is_success()));
    assert_eq!(b.timeline(), ["p1 0..10", "p2 10..20"]);
}
