//! For random turns of parallel and exclusive calls with random durations, the
//! schedule is exactly the one the rules describe (a reference simulation),
//! and so satisfies every invariant: pool bound, start order, barriers.

use proptest::prelude::*;
use serde_json::json;
use tack_core::policy::PreDecision;

use super::harness::*;

/// When each call starts and ends under the rules, calls taking no time to be
/// admitted: `(start, end)` per call.
fn simulate(calls: &[(bool, u64)], max: usize) -> Vec<(u64, u64)> {
    let mut out = Vec::with_capacity(calls.len());
    let mut running: Vec<u64> = Vec::new(); // end times of the calls in flight
    let mut not_before = 0u64; // starts are in model order, and after a barrier ends
    for &(parallel, ms) in calls {
        let start = if parallel {
            let mut at = not_before;
            running.retain(|&end| end > at);
            while running.len() >= max {
                at = at.max(*running.iter().min().unwrap());
                running.retain(|&end| end > at);
            }
            at
        } else {
            let at = running.iter().copied().fold(not_before, u64::max);
            running.clear();
            at
        };
        let end = start + ms;
        running.push(end);
        not_before = if parallel { start } else { end };
        out.push((start, end));
    }
    out
}

fn check(calls: &[(bool, u64)], max: usize, gated: bool) -> Result<(), TestCaseError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async {
        let b = Bench::new();
        let _policy = gated.then(|| {
            b.pipeline
                .hooks()
                .pre_execute()
                .tap("allow", |_exec, _next| async { PreDecision::allow() })
        });
        let turn: Vec<_> = calls
            .iter()
            .enumerate()
            .map(|(i, &(p, ms))| work_with(&format!("c{i:02}"), json!({"ms": ms, "p": p})))
            .collect();
        let out = b.run(max, turn).await;
        let want_ids: Vec<String> = (0..calls.len()).map(|i| format!("c{i:02}")).collect();
        prop_assert_eq!(
            ids(&out),
            want_ids.iter().map(String::as_str).collect::<Vec<_>>()
        );
        prop_assert!(out.iter().all(|o| o.is_success()));

        let spans = b.spans();
        // Bodies start in model order.
        let order: Vec<&str> = spans.iter().map(|s| s.id.as_str()).collect();
        prop_assert_eq!(
            &order,
            &want_ids.iter().map(String::as_str).collect::<Vec<_>>()
        );
        // The pool bound holds.
        prop_assert!(peak(&spans) <= max);
        // An exclusive call overlaps nothing.
        for (i, &(parallel, _)) in calls.iter().enumerate() {
            if parallel {
                continue;
            }
            let e = &spans[i];
            let (start, end) = (e.start, e.end.unwrap());
            for (j, other) in spans.iter().enumerate() {
                if j != i {
                    let other_end = other.end.unwrap();
                    prop_assert!(
                        other_end <= start || other.start >= end,
                        "{} overlaps {}",
                        other.id,
                        e.id
                    );
                }
            }
        }
        // And the schedule is exactly the greedy one.
        let got: Vec<(u64, u64)> = spans.iter().map(|s| (s.start, s.end.unwrap())).collect();
        prop_assert_eq!(got, simulate(calls, max));
        Ok(())
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn random_turns_follow_the_rules(
        calls in prop::collection::vec((prop::bool::weighted(0.7), 0u64..40), 1..24),
        max in 1usize..6,
        gated in any::<bool>(),
    ) {
        check(&calls, max, gated)?;
    }
}

#[test]
fn the_reference_simulation_matches_the_documented_example() {
    let calls = [
        (true, 10),
        (true, 20),
        (false, 5),
        (true, 10),
        (true, 30),
        (true, 10),
    ];
    assert_eq!(
        simulate(&calls, 10),
        [(0, 10), (0, 20), (20, 25), (25, 35), (25, 55), (25, 35)]
    );
    assert_eq!(
        simulate(&[(true, 10), (true, 30), (true, 10), (true, 10)], 2),
        [(0, 10), (0, 30), (10, 20), (20, 30)]
    );
}
