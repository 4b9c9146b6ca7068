//! Thread-local pools of the boxes type-erased futures live in, by the
//! future's type: a hook listener's future (one that does not return
//! `next.run(..)` itself), a hook point's asynchronous default, and a tool
//! body (tack-core's `BodyFuture`).
//!
//! Why: each of those futures is boxed once per dispatch or call. A chain of
//! listeners allocates one box per level and frees them all as it unwinds;
//! past the allocator's small
//! per-thread cache (7 blocks of a size in glibc) each allocation and each
//! free goes to the slower shared bins, about 180 instructions a level. A box
//! holds an `Option<F>` and its pool key: when its future is done (or dropped unfinished)
//! the box is emptied in place with [`Pin::set`] (which drops the future and
//! everything it captured at once) and kept on this thread for the next future
//! of the same type, which is written into it with `Pin::set` again.
//!
//! * Each future type has a [`PoolKey`], a small number given once per type
//!   for the whole program: a thread's pools are a table indexed by it, so
//!   taking a box and giving it back index that table instead of hashing the
//!   type. Whoever builds such futures over and over (a listener, a hook
//!   point's default, a typed tool's handler) looks its key up once, when
//!   it is made.
//! * A box is given back to the pool of the thread that drops it, whichever
//!   thread filled it: a future may move between threads between polls.
//! * A pool keeps only empty boxes, so it never keeps a listener's captures
//!   (or a disposed listener) alive, and at most `POOL_BYTES` of them per
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

use parking_lot::Mutex;

/// How many bytes of empty boxes one thread keeps for one future type.
const POOL_BYTES: usize = 32 << 10;

/// The fewest boxes a pool keeps, however big the future.
const POOL_MIN: usize = 4;

/// Type ids hashed with foldhash's fixed-seed hasher: the keys are
/// `TypeId`s, not input an attacker chooses, so no random seed is needed.
type ByType<V> = HashMap<TypeId, V, foldhash::fast::FixedState>;

/// The key of every future type that has one, for the whole program. Only
/// read when a key is looked up the first time on a thread.
static KEYS: Mutex<Option<ByType<PoolKey>>> = Mutex::new(None);

thread_local! {
    /// By [`PoolKey`], a `Vec<Pin<Box<Keyed<F>>>>` of empty boxes of the
    /// key's future type `F`. Lazily initialized: measured a little faster
    /// per box than a `const` initializer.
    static POOLS: RefCell<Vec<Option<Box<dyn Any>>>> = RefCell::new(Vec::new());
    /// The keys this thread has looked up, so a thread takes the program's
    /// lock once per type.
    static KNOWN: RefCell<Option<ByType<PoolKey>>> = const { RefCell::new(None) };
}

/// A future type's index in every thread's pool table: the same number on
/// every thread, given the first time the type is looked up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolKey(u32);

impl PoolKey {
    /// The key of the future type `F`.
    pub fn of<F: 'static>() -> Self {
        let id = TypeId::of::<F>();
        let known = KNOWN
            .try_with(|known| known.try_borrow().ok()?.as_ref()?.get(&id).copied())
            .ok()
            .flatten();
        if let Some(key) = known {
            return key;
        }
        let key = {
            let mut keys = KEYS.lock();
            let keys = keys.get_or_insert_with(ByType::default);
            let next = u32::try_from(keys.len()).unwrap_or(u32::MAX);
            *keys.entry(id).or_insert(PoolKey(next))
        };
        let _ = KNOWN.try_with(|known| {
            if let Ok(mut known) = known.try_borrow_mut() {
                known.get_or_insert_with(ByType::default).insert(id, key);
            }
        });
        key
    }

    /// The key of the future a function of three arguments returns: a way
    /// to name the type of an `async fn`'s or `-> impl Future` function's
    /// future (`PoolKey::returned_by(body::<T>)`).
    pub fn returned_by<A, B, C, R: 'static>(_: fn(A, B, C) -> R) -> Self {
        Self::of::<R>()
    }

    fn index(self) -> usize {
        // A `u32` fits every `usize` this crate builds for.
        self.0 as usize
    }
}

/// The most boxes of a future type `F` a thread keeps.
fn capacity<F>() -> usize {
    (POOL_BYTES / size_of::<Keyed<F>>().max(1)).max(POOL_MIN)
}

pin_project_lite::pin_project! {
    /// What a pooled box holds: a future of type `F` or nothing, and the
    /// key of the pool the box goes back to (kept in the box, so a handle
    /// to it is one pointer and its vtable).
    pub(crate) struct Keyed<F> {
        key: PoolKey,
        #[pin]
        future: Option<F>,
    }
}

/// A future in a box that goes back to a pool when it is dropped.
pub(crate) trait PooledFuture<Out>: Send {
    /// Polls the future in the box.
    fn poll_pooled(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Out>;
    /// Drops the future (if still there) and gives the empty box to this
    /// thread's pool.
    fn recycle(self: Pin<Box<Self>>);
}

impl<F> PooledFuture<F::Output> for Keyed<F>
where
    F: Future + Send + 'static,
{
    #[inline]
    fn poll_pooled(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        match self.project().future.as_pin_mut() {
            Some(future) => future.poll(cx),
            None => panic!("a pooled future was polled after it was recycled"),
        }
    }

    #[inline]
    fn recycle(mut self: Pin<Box<Self>>) {
        // The captures go now, before the box is pooled (and outside the
        // pool's borrow: their drop may dispatch again).
        self.as_mut().project().future.set(None);
        give_back::<F>(self);
    }
}

/// A box with `future` in it: an empty one of this thread's pool, or a new one.
#[inline]
fn boxed<F>(key: PoolKey, future: F) -> Pin<Box<Keyed<F>>>
where
    F: Future + Send + 'static,
{
    match take::<F>(key) {
        Some(mut slot) => {
            slot.as_mut().project().future.set(Some(future));
            slot
        }
        None => Box::pin(Keyed {
            key,
            future: Some(future),
        }),
    }
}

#[inline]
fn take<F: 'static>(key: PoolKey) -> Option<Pin<Box<Keyed<F>>>> {
    POOLS
        .try_with(|pools| {
            let mut pools = pools.try_borrow_mut().ok()?;
            pools
                .get_mut(key.index())?
                .as_mut()?
                .downcast_mut::<Vec<Pin<Box<Keyed<F>>>>>()?
                .pop()
        })
        .ok()
        .flatten()
}

#[inline]
fn give_back<F: 'static>(slot: Pin<Box<Keyed<F>>>) {
    let key = slot.key;
    let refused = POOLS.try_with(|pools| {
        let Ok(mut pools) = pools.try_borrow_mut() else {
            return Some(slot);
        };
        if pools.len() <= key.index() {
            pools.resize_with(key.index() + 1, || None);
        }
        let Some(pool) = pools
            .get_mut(key.index())?
            .get_or_insert_with(|| Box::new(Vec::<Pin<Box<Keyed<F>>>>::new()))
            .downcast_mut::<Vec<Pin<Box<Keyed<F>>>>>()
        else {
            // A key given for another type (a bug, but not unsound): the
            // box is freed instead of pooled.
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
pub struct Pooled<Out>(Option<Pin<Box<dyn PooledFuture<Out>>>>);

impl<Out> Pooled<Out> {
    /// `future`, in a pooled box (its type's key looked up now: where
    /// futures of one type are built over and over, keep the key and use
    /// [`keyed`](Self::keyed)).
    #[inline]
    pub fn new<F>(future: F) -> Self
    where
        F: Future<Output = Out> + Send + 'static,
    {
        Self::keyed(PoolKey::of::<F>(), future)
    }

    /// `future`, in a pooled box of the pool `key`, which is
    /// [`PoolKey::of::<F>()`](PoolKey::of). A key of another type is not
    /// unsound: the box is then allocated and freed as any box.
    #[inline]
    pub fn keyed<F>(key: PoolKey, future: F) -> Self
    where
        F: Future<Output = Out> + Send + 'static,
    {
        debug_assert_eq!(key, PoolKey::of::<F>(), "a pool key of another type");
        Self(Some(boxed(key, future)))
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
                .get(PoolKey::of::<F>().index())
                .and_then(Option::as_ref)
                .and_then(|pool| pool.downcast_ref::<Vec<Pin<Box<Keyed<F>>>>>())
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

    async fn three(_: u8, _: u16, _: u32) -> u64 {
        1
    }

    #[test]
    fn a_type_has_one_key_on_every_thread_and_types_have_their_own() {
        type A = std::future::Ready<u8>;
        type B = std::future::Ready<u16>;
        let (a, b) = (PoolKey::of::<A>(), PoolKey::of::<B>());
        assert_ne!(a, b);
        assert_eq!(PoolKey::of::<A>(), a, "looked up again");
        let there = std::thread::spawn(|| (PoolKey::of::<B>(), PoolKey::of::<A>()))
            .join()
            .expect("no panic");
        assert_eq!(there, (b, a), "the same keys on another thread");
    }

    #[test]
    fn returned_by_names_the_future_a_function_returns() {
        let key = PoolKey::returned_by(three);
        let future = three(1, 2, 3);
        assert_eq!(key, pool_key_of_value(&future));
        let pooled = Pooled::keyed(key, future);
        drop(pooled);
    }

    fn pool_key_of_value<F: 'static>(_: &F) -> PoolKey {
        PoolKey::of::<F>()
    }
}
