//! Allocations per call of the pipeline for a trivial typed tool (`{x:
//! integer}` → `x + 1`), with no listeners and with the typical set (5
//! pre-execute listeners, 1 guard, 1 execute wrapper, 1 post-execute
//! listener, 1 result observer), the size of the future
//! `Pipeline::execute` returns, and the peak resident memory around
//! 1,000,000 calls (it must stay flat).
//!
//! A bench of its own because counting needs an instrumented global
//! allocator, which adds atomic counter updates to every allocation and
//! free: the timing bench (`--bench pipeline`) runs on the plain system
//! allocator so its figures measure the pipeline, not the instrument.
//!
//! Run: `cargo bench -p tack-pipeline --bench allocations`

use std::alloc::System;

use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

mod add_one_call;

use add_one_call::{add_one_registry, call, run, turn, with_listeners};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    {
        let (registry, _tool) = add_one_registry();
        let future = registry.execute(call(), turn());
        println!(
            "size of the future `Pipeline::execute` returns: {} bytes",
            std::mem::size_of_val(&future)
        );
    }
    for (label, listeners) in [("no listeners", false), ("set (c)", true)] {
        let (registry, _tool) = add_one_registry();
        let _keep = if listeners {
            with_listeners(&registry)
        } else {
            Vec::new()
        };
        run(&registry);
        let region = Region::new(GLOBAL);
        const SAMPLE: usize = 1000;
        for _ in 0..SAMPLE {
            run(&registry);
        }
        let stats = region.change();
        println!(
            "pipeline ({label}): {:.1} allocations and {:.0} bytes allocated per call",
            stats.allocations as f64 / SAMPLE as f64,
            stats.bytes_allocated as f64 / SAMPLE as f64
        );
    }
    let (registry, _tool) = add_one_registry();
    let _keep = with_listeners(&registry);
    let before = peak_rss_kib();
    for _ in 0..1_000_000 {
        run(&registry);
    }
    let after = peak_rss_kib();
    println!(
        "peak resident memory: {} KiB before, {} KiB after 1,000,000 calls with set (c)",
        before.map_or("?".to_owned(), |k| k.to_string()),
        after.map_or("?".to_owned(), |k| k.to_string())
    );
}
