//! `Replicated` under real threads: changes published on one thread while
//! others read, with no timing in any assertion.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};

use tack_replicated::Replicated;

/// A value whose two halves are written together: a read that saw them
/// differ would have seen a torn value.
#[derive(Debug)]
struct Pair {
    a: u64,
    b: u64,
}

fn read(r: &Replicated<Pair>) -> (u64, u64) {
    r.with_copy(
        |p| Arc::new(Pair { a: p.a, b: p.b }),
        |mine| (mine.a, mine.b),
    )
}

/// One writer publishes 1, 2, … while readers read: after a change returned,
/// no read (on any thread) sees an older value, each thread's reads never go
/// back, and no read sees a torn value.
#[test]
fn no_read_sees_a_value_older_than_the_last_change_that_returned() {
    const CHANGES: u64 = 20_000;
    const READERS: usize = 3;
    let r = Replicated::<Pair>::new(Pair { a: 0, b: 0 });
    // The last value whose publication returned.
    let returned = AtomicU64::new(0);
    let done = AtomicBool::new(false);
    let start = Barrier::new(READERS + 1);
    std::thread::scope(|s| {
        let readers: Vec<_> = (0..READERS)
            .map(|_| {
                s.spawn(|| {
                    start.wait();
                    let mut last = 0;
                    let mut reads = 0u64;
                    while !done.load(Ordering::SeqCst) {
                        let floor = returned.load(Ordering::SeqCst);
                        let (a, b) = read(&r);
                        assert_eq!(a, b, "a torn value");
                        assert!(a >= floor, "read {a} after {floor} was published");
                        assert!(a >= last, "read {a} after reading {last}");
                        last = a;
                        reads += 1;
                    }
                    // The next read after the last change sees it.
                    assert_eq!(read(&r), (CHANGES, CHANGES));
                    reads
                })
            })
            .collect();
        start.wait();
        for value in 1..=CHANGES {
            drop(r.publish(Arc::new(Pair { a: value, b: value })));
            returned.store(value, Ordering::SeqCst);
        }
        done.store(true, Ordering::SeqCst);
        for reader in readers {
            assert!(reader.join().expect("reader") > 0);
        }
    });
}

/// A change published on one thread is seen by every other thread's next
/// read, though those threads hold copies made before it.
#[test]
fn every_thread_sees_a_change_on_its_next_read() {
    const THREADS: usize = 4;
    let r = Replicated::<Pair>::new(Pair { a: 1, b: 1 });
    let copied = Barrier::new(THREADS + 1);
    let changed = Barrier::new(THREADS + 1);
    std::thread::scope(|s| {
        let threads: Vec<_> = (0..THREADS)
            .map(|_| {
                s.spawn(|| {
                    assert_eq!(read(&r), (1, 1));
                    copied.wait();
                    changed.wait();
                    read(&r)
                })
            })
            .collect();
        copied.wait();
        assert_eq!(r.copies_held(), THREADS);
        let replaced = r.publish(Arc::new(Pair { a: 2, b: 2 }));
        assert_eq!(replaced.copies.len(), THREADS, "every copy emptied");
        changed.wait();
        for thread in threads {
            assert_eq!(thread.join().expect("reader"), (2, 2));
        }
    });
}

/// Copies made while changes race with them are emptied by the change after
/// them: once the readers stop, no thread's copy keeps a replaced value alive
/// (the copies here share the published value, so a copy left behind would
/// keep it).
#[test]
fn no_copy_outlives_the_change_after_it() {
    const READERS: usize = 3;
    const CHANGES: u64 = 2_000;
    let r = Replicated::<Pair>::new(Pair { a: 0, b: 0 });
    let shared = |r: &Replicated<Pair>| r.with_copy(|p| p.clone(), |mine| mine.a);
    let done = AtomicBool::new(false);
    let mut replaced = Vec::new();
    std::thread::scope(|s| {
        for _ in 0..READERS {
            s.spawn(|| {
                while !done.load(Ordering::SeqCst) {
                    let _ = shared(&r);
                }
            });
        }
        for value in 1..=CHANGES {
            let value = Arc::new(Pair { a: value, b: value });
            replaced.push(Arc::downgrade(&value));
            drop(r.publish(value));
        }
        done.store(true, Ordering::SeqCst);
    });
    let last = replaced.pop().expect("published");
    assert!(last.upgrade().is_some(), "the published value lives");
    let kept = replaced.iter().filter(|w| w.upgrade().is_some()).count();
    assert_eq!(kept, 0, "replaced values kept alive by threads' copies");
}
