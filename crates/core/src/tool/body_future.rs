//! The future of one run of a tool's body, and the per-thread reuse of its
//! allocation.
//!
//! A tool body is type-erased behind [`ToolHandler`](super::ToolHandler), so
//! its future lives on the heap. Allocating and freeing that box for every
//! call is a measurable share of a cheap call, so a body built with
//! [`BodyFuture::reusing`] gives its box back to a small pool of the thread
//! that drops it, and the next call of the same body on that thread runs in
//! it (the old future is dropped in place and the new one written over it,
//! through the safe [`Pin::set`]). A future dropped before it finished has
//! its captures dropped at once, before its box is pooled: a pooled box
//! holds nothing.

use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::FutureExt;
use futures::future::{BoxFuture, Fuse};
use serde_json::Value;

use super::ToolError;

/// What a body returns: its success value or its error.
pub type BodyResult = Result<Value, ToolError>;

/// The most boxes one thread keeps for one kind of body future. Past it, a
/// finished body's box is freed as usual (a thread running many calls of
/// the same tool at once reuses up to this many).
const KEPT_PER_KIND: usize = 4;

/// The most kinds of body future one thread keeps boxes for (looked up by a
/// linear scan: a thread calls a handful of tool kinds; past this many, the
/// other kinds' boxes are freed as usual).
const KINDS_PER_THREAD: usize = 32;

/// The future of one run of a tool's body: what
/// [`ToolHandler::call`](super::ToolHandler::call) returns.
///
/// Build it with [`reusing`](Self::reusing) (the box is reused by the
/// thread's next call of the same body), with [`boxed`](Self::boxed), or
/// from any `BoxFuture<'static, BodyResult>` with `From`. A closure handler
/// and a typed [`Tool`](super::Tool) get `reusing` without asking.
///
/// ```
/// use serde_json::json;
/// use tack_core::tool::BodyFuture;
///
/// # futures::executor::block_on(async {
/// let body = BodyFuture::reusing(async { Ok(json!(1)) });
/// assert_eq!(body.await.unwrap(), json!(1));
/// // The next body of the same kind on this thread runs in the same box.
/// let again = BodyFuture::reusing(async { Ok(json!(1)) });
/// assert_eq!(again.await.unwrap(), json!(1));
/// # });
/// ```
#[must_use = "futures do nothing unless awaited"]
pub struct BodyFuture {
    inner: Inner,
}

enum Inner {
    Boxed(BoxFuture<'static, BodyResult>),
    Reused(Option<Pin<Box<dyn Reusable>>>),
}

/// A body future in a box that goes back to its thread's pool when done with.
trait Reusable: Future<Output = BodyResult> + Send {
    /// Empties the box (dropping what the future still holds) and keeps it
    /// for the next body of the same kind on this thread.
    fn recycle(self: Pin<Box<Self>>);
}

impl<F> Reusable for Fuse<F>
where
    F: Future<Output = BodyResult> + Send + 'static,
{
    fn recycle(mut self: Pin<Box<Self>>) {
        self.as_mut().set(Fuse::terminated());
        give_back(self);
    }
}

thread_local! {
    /// Each kind of body future's empty boxes, on this thread.
    static POOL: RefCell<Vec<(TypeId, Box<dyn Any>)>> = const { RefCell::new(Vec::new()) };
}

type Boxes<F> = Vec<Pin<Box<Fuse<F>>>>;

/// An empty box for a body future of type `F`, when this thread keeps one.
fn take_box<F: Future<Output = BodyResult> + Send + 'static>() -> Option<Pin<Box<Fuse<F>>>> {
    POOL.try_with(|pool| {
        let mut pool = pool.try_borrow_mut().ok()?;
        let (_, boxes) = pool
            .iter_mut()
            .find(|(kind, _)| *kind == TypeId::of::<F>())?;
        boxes.downcast_mut::<Boxes<F>>()?.pop()
    })
    .ok()
    .flatten()
}

/// Keeps an empty box for the next body future of type `F` on this thread
/// (or frees it, when the thread keeps enough, or is exiting).
fn give_back<F: Future<Output = BodyResult> + Send + 'static>(empty: Pin<Box<Fuse<F>>>) {
    let _ = POOL.try_with(|pool| {
        let Ok(mut pool) = pool.try_borrow_mut() else {
            return;
        };
        let kind = TypeId::of::<F>();
        let index = match pool.iter().position(|(k, _)| *k == kind) {
            Some(index) => index,
            None if pool.len() < KINDS_PER_THREAD => {
                pool.push((kind, Box::new(Boxes::<F>::new())));
                pool.len() - 1
            }
            None => return,
        };
        if let Some(boxes) = pool[index].1.downcast_mut::<Boxes<F>>()
            && boxes.len() < KEPT_PER_KIND
        {
            boxes.push(empty);
        }
    });
}

impl BodyFuture {
    /// A body future in a box that is reused: when this future is dropped
    /// (finished or not), its box is emptied and kept by the dropping
    /// thread, and the next `reusing` with a future of the same type on that
    /// thread writes its future into it instead of allocating.
    pub fn reusing<F>(future: F) -> Self
    where
        F: Future<Output = BodyResult> + Send + 'static,
    {
        let boxed: Pin<Box<Fuse<F>>> = match take_box::<F>() {
            Some(mut empty) => {
                empty.as_mut().set(future.fuse());
                empty
            }
            None => Box::pin(future.fuse()),
        };
        Self {
            inner: Inner::Reused(Some(boxed)),
        }
    }

    /// A body future boxed the usual way (not reused).
    pub fn boxed<F>(future: F) -> Self
    where
        F: Future<Output = BodyResult> + Send + 'static,
    {
        Self {
            inner: Inner::Boxed(Box::pin(future)),
        }
    }
}

impl From<BoxFuture<'static, BodyResult>> for BodyFuture {
    fn from(future: BoxFuture<'static, BodyResult>) -> Self {
        Self {
            inner: Inner::Boxed(future),
        }
    }
}

impl Future for BodyFuture {
    type Output = BodyResult;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<BodyResult> {
        match &mut self.get_mut().inner {
            Inner::Boxed(future) => future.as_mut().poll(cx),
            Inner::Reused(Some(future)) => future.as_mut().poll(cx),
            Inner::Reused(None) => Poll::Pending,
        }
    }
}

impl Drop for BodyFuture {
    fn drop(&mut self) {
        if let Inner::Reused(reused) = &mut self.inner
            && let Some(future) = reused.take()
        {
            future.recycle();
        }
    }
}

impl fmt::Debug for BodyFuture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.inner {
            Inner::Boxed(_) => "boxed",
            Inner::Reused(_) => "reused",
        };
        f.debug_struct("BodyFuture").field("box", &kind).finish()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use futures::executor::block_on;
    use serde_json::json;

    use super::*;

    /// Counts its live instances: what a future still holds.
    struct Held(Arc<AtomicUsize>);

    impl Held {
        fn new(count: &Arc<AtomicUsize>) -> Self {
            count.fetch_add(1, Ordering::SeqCst);
            Self(count.clone())
        }
    }

    impl Drop for Held {
        fn drop(&mut self) {
            self.0.fetch_sub(1, Ordering::SeqCst);
        }
    }

    async fn body(held: Held, ready: bool) -> BodyResult {
        if !ready {
            futures::future::pending::<()>().await;
        }
        drop(held);
        Ok(json!("done"))
    }

    fn kept_boxes<F: Future<Output = BodyResult> + Send + 'static>(_: &F) -> usize {
        POOL.with(|pool| {
            pool.borrow()
                .iter()
                .find(|(kind, _)| *kind == TypeId::of::<F>())
                .and_then(|(_, boxes)| boxes.downcast_ref::<Boxes<F>>())
                .map_or(0, Vec::len)
        })
    }

    #[test]
    fn a_finished_body_gives_its_box_to_the_next_one() {
        let count = Arc::new(AtomicUsize::new(0));
        let first = body(Held::new(&count), true);
        let kind_of = body(Held::new(&count), true);
        let before = kept_boxes(&kind_of);
        drop(kind_of);
        assert_eq!(block_on(BodyFuture::reusing(first)).unwrap(), json!("done"));
        assert_eq!(kept_boxes(&body(Held::new(&count), true)), before + 1);
        let second = BodyFuture::reusing(body(Held::new(&count), true));
        assert_eq!(
            kept_boxes(&body(Held::new(&count), true)),
            before,
            "the second body took the kept box"
        );
        assert_eq!(block_on(second).unwrap(), json!("done"));
        assert_eq!(count.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn a_body_dropped_unfinished_drops_its_captures_before_its_box_is_kept() {
        let count = Arc::new(AtomicUsize::new(0));
        let mut unfinished = BodyFuture::reusing(body(Held::new(&count), false));
        let waker = futures::task::noop_waker();
        assert!(
            Pin::new(&mut unfinished)
                .poll(&mut Context::from_waker(&waker))
                .is_pending()
        );
        assert_eq!(count.load(Ordering::SeqCst), 1);
        drop(unfinished);
        assert_eq!(
            count.load(Ordering::SeqCst),
            0,
            "a kept box holds nothing of the body it ran"
        );
    }

    #[test]
    fn a_body_moved_to_another_thread_runs_there_and_frees_its_captures() {
        let count = Arc::new(AtomicUsize::new(0));
        let body_here = BodyFuture::reusing(body(Held::new(&count), true));
        let out = std::thread::spawn(move || block_on(body_here))
            .join()
            .expect("the other thread");
        assert_eq!(out.unwrap(), json!("done"));
        assert_eq!(count.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn a_thread_keeps_a_bounded_number_of_boxes() {
        let count = Arc::new(AtomicUsize::new(0));
        let many: Vec<BodyFuture> = (0..KEPT_PER_KIND * 3)
            .map(|_| BodyFuture::reusing(body(Held::new(&count), true)))
            .collect();
        drop(many);
        assert!(kept_boxes(&body(Held::new(&count), true)) <= KEPT_PER_KIND);
        assert_eq!(count.load(Ordering::SeqCst), 0);
    }
}
