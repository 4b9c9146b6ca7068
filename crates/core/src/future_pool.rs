//! Thread-local pools of the boxes type-erased futures live in, by the
//! future's type: a hook listener's future (one that does not return
//! `next.run(..)` itself), a hook point's asynchronous default, and a tool
//! body ([`BodyFuture`](crate::tool::BodyFuture)).
//!
//! Why: each of those futures is boxed once per dispatch or call. A chain of
//! listeners allocates one box per level and frees them all as it unwinds;
//! past the allocator's small
//! per-thread cache (7 blocks of a size in glibc) each allocation and each
//! free goes to the slower shared bins, about 180 instructions a level. A box
//! is `Pin<Box<Option<F>>>`: when its future is done (or dropped unfinished)
//! the box is emptied in place with [`Pin::set`] (which drops the future and
//! everything it captured at once) and kept on this thread for the next future
//! of the same type, which is written into it with `Pin::set` again.
//!
//! * A box is given back to the pool of the thread that drops it, whichever
//!   thread filled it: a future may move between threads between polls.
//! * A pool keeps only empty boxes, so it never keeps a listener's captures
//!   (or a disposed listener) alive, and at most [`POOL_BYTES`] of them per
//!   type and thread.
//! * No user code runs while a pool is borrowed: the future is dropped
//!   before its box goes back, and written after its box comes out, so a
//!   future whose drop or construction dispatches again (re-entrancy) finds
//!   the pool free.

use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// How many bytes of empty boxes one thread keeps for one future type.
const POOL_BYTES: usize = 32 << 10;

/// The fewest boxes a pool keeps, however big the future.
const POOL_MIN: usize = 4;

/// Pools by future type, hashed with foldhash's fixed-seed hasher: the keys
/// are `TypeId`s, not input an attacker chooses, so no random seed is needed.
type Pools = HashMap<TypeId, Box<dyn Any>, foldhash::fast::FixedState>;

thread_local! {
    /// Per future type, a `Vec<Pin<Box<Option<F>>>>` of empty boxes.
    static POOLS: RefCell<Pools> = RefCell::new(Pools::default());
}

/// The most boxes of a future type `F` a thread keeps.
fn capacity<F>() -> usize {
    (POOL_BYTES / size_of::<Option<F>>().max(1)).max(POOL_MIN)
}

/// A future in a box that goes back to a pool when it is dropped.
pub(crate) trait PooledFuture<Out>: Send {
    /// Polls the future in the box.
    fn poll_pooled(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Out>;
    /// Drops the future (if still there) and gives the empty box to this
    /// thread's pool.
    fn recycle(self: Pin<Box<Self>>);
}

impl<F> PooledFuture<F::Output> for Option<F>
where
    F: Future + Send + 'static,
{
    #[inline]
    fn poll_pooled(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        match self.as_pin_mut() {
            Some(future) => future.poll(cx),
            None => panic!("a pooled future was polled after it was recycled"),
        }
    }

    #[inline]
    fn recycle(mut self: Pin<Box<Self>>) {
        // The captures go now, before the box is pooled (and outside the
        // pool's borrow: their drop may dispatch again).
        self.set(None);
        give_back::<F>(self);
    }
}

/// A box with `future` in it: an empty one of this thread's pool, or a new one.
#[inline]
fn boxed<F>(future: F) -> Pin<Box<Option<F>>>
where
    F: Future + Send + 'static,
{
    match take::<F>() {
        Some(mut slot) => {
            slot.set(Some(future));
            slot
        }
        None => Box::pin(Some(future)),
    }
}

#[inline]
fn take<F: 'static>() -> Option<Pin<Box<Option<F>>>> {
    POOLS
        .try_with(|pools| {
            let mut pools = pools.try_borrow_mut().ok()?;
            pools
                .get_mut(&TypeId::of::<F>())?
                .downcast_mut::<Vec<Pin<Box<Option<F>>>>>()?
                .pop()
        })
        .ok()
        .flatten()
}

#[inline]
fn give_back<F: 'static>(slot: Pin<Box<Option<F>>>) {
    let refused = POOLS.try_with(|pools| {
        let Ok(mut pools) = pools.try_borrow_mut() else {
            return Some(slot);
        };
        let Some(pool) = pools
            .entry(TypeId::of::<F>())
            .or_insert_with(|| Box::new(Vec::<Pin<Box<Option<F>>>>::new()))
            .downcast_mut::<Vec<Pin<Box<Option<F>>>>>()
        else {
            return Some(slot);
        };
        if pool.len() < capacity::<F>() {
            pool.push(slot);
            None
        } else {
            Some(slot)
        }
    });
    // An empty box the pool does not take is freed here, outside its borrow.
    drop(refused);
}

/// A pooled future: its box goes back to the pool when this is dropped,
/// finished or not.
pub(crate) struct Pooled<Out>(Option<Pin<Box<dyn PooledFuture<Out>>>>);

impl<Out> Pooled<Out> {
    /// `future`, in a pooled box.
    #[inline]
    pub(crate) fn new<F>(future: F) -> Self
    where
        F: Future<Output = Out> + Send + 'static,
    {
        Self(Some(boxed(future)))
    }
}

impl<Out> Future for Pooled<Out> {
    type Output = Out;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Out> {
        match &mut self.0 {
            Some(future) => future.as_mut().poll_pooled(cx),
            None => panic!("a pooled future was polled after it was recycled"),
        }
    }
}

impl<Out> Drop for Pooled<Out> {
    #[inline]
    fn drop(&mut self) {
        if let Some(future) = self.0.take() {
            future.recycle();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::task::Waker;

    fn pooled_count<F: 'static>() -> usize {
        POOLS.with(|pools| {
            pools
                .borrow()
                .get(&TypeId::of::<F>())
                .and_then(|pool| pool.downcast_ref::<Vec<Pin<Box<Option<F>>>>>())
                .map_or(0, Vec::len)
        })
    }

    /// A future that waits for one poll, holding `held`; completes with how
    /// many hold it.
    struct WaitOnce {
        first: bool,
        held: Arc<()>,
    }

    impl Future for WaitOnce {
        type Output = usize;
        fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<usize> {
            if std::mem::take(&mut self.first) {
                Poll::Pending
            } else {
                Poll::Ready(Arc::strong_count(&self.held))
            }
        }
    }

    fn waits(held: Arc<()>) -> WaitOnce {
        WaitOnce { first: true, held }
    }

    /// A pooled [`WaitOnce`] holding `held`, polled once (it waits).
    fn started(held: &Arc<()>) -> Pooled<usize> {
        let mut future = Pooled::new(waits(held.clone()));
        let mut cx = Context::from_waker(Waker::noop());
        assert!(Pin::new(&mut future).poll(&mut cx).is_pending());
        future
    }

    #[test]
    fn a_dropped_unfinished_future_leaves_no_capture_in_the_pool() {
        let held = Arc::new(());
        let future = started(&held);
        assert_eq!(Arc::strong_count(&held), 2);
        let pooled = pooled_count::<WaitOnce>();
        drop(future);
        assert_eq!(
            Arc::strong_count(&held),
            1,
            "the capture went with the future"
        );
        assert_eq!(pooled_count::<WaitOnce>(), pooled + 1, "its box is pooled");

        // The box is reused for the next future of the type.
        let again = Pooled::new(waits(held.clone()));
        assert_eq!(pooled_count::<WaitOnce>(), pooled);
        assert_eq!(Arc::strong_count(&held), 2);
        drop(again);
        assert_eq!(Arc::strong_count(&held), 1);
    }

    #[test]
    fn boxes_are_reused_and_the_pool_is_bounded() {
        type Fut = std::future::Ready<[u8; 4096]>;
        let futures: Vec<Pooled<[u8; 4096]>> = (0..20)
            .map(|_| Pooled::new(std::future::ready([0u8; 4096])))
            .collect();
        drop(futures);
        let kept = pooled_count::<Fut>();
        assert_eq!(kept, capacity::<Fut>(), "filled up to its bound");
        assert!(kept < 20);
        let one = Pooled::new(std::future::ready([1u8; 4096]));
        assert_eq!(pooled_count::<Fut>(), kept - 1, "taken from the pool");
        drop(one);
        assert_eq!(pooled_count::<Fut>(), kept);
    }

    #[test]
    fn a_pooled_future_polled_on_another_thread_completes_and_is_pooled_there() {
        let held = Arc::new(());
        let mut future = started(&held);
        let (count, pooled_there) = std::thread::spawn(move || {
            let mut cx = Context::from_waker(Waker::noop());
            let count = match Pin::new(&mut future).poll(&mut cx) {
                Poll::Ready(count) => count,
                Poll::Pending => panic!("ready on its second poll"),
            };
            drop(future);
            (count, pooled_count::<WaitOnce>())
        })
        .join()
        .expect("no panic");
        assert_eq!(count, 2);
        assert_eq!(pooled_there, 1, "pooled by the thread that dropped it");
        assert_eq!(Arc::strong_count(&held), 1);
    }
}
