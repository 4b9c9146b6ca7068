//! The future of one run of a tool's body.
//!
//! A tool body is type-erased behind [`ToolHandler`](super::ToolHandler), so
//! its future lives on the heap. Allocating and freeing that box for every
//! call is a measurable share of a cheap call, so a body built with
//! [`BodyFuture::new`] lives in a box from the thread's pool for its
//! future type (the same pool hook listeners' futures use): the box goes
//! back to the pool of the thread that drops the future, emptied first (so
//! it holds nothing of the call it ran), and the next call of the same body
//! on that thread is written into it instead of allocating.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use serde_json::Value;

use super::ToolError;
use tack_hook::future_pool::{PoolKey, Pooled};

/// What a body returns: its success value or its error.
pub(crate) type BodyResult = Result<Value, ToolError>;

/// The future of one run of a tool's body: what
/// `ToolHandler::call` returns (the pipeline's hot path; a plugin runs a
/// body with `ToolDefinition::run_body`).
///
/// Build it with [`new`](Self::new) or from any
/// `BoxFuture<'static, Result<Value, ToolError>>` with `From`. A closure handler and a
/// typed [`Tool`](super::Tool) build theirs without asking. After a thread's
/// first call of a body, `new` allocates nothing for the next calls of the
/// same body on that thread.
///
/// ```
/// use serde_json::json;
/// use tack_core::host::BodyFuture;
///
/// # futures::executor::block_on(async {
/// let body = BodyFuture::new(async { Ok(json!(1)) });
/// assert_eq!(body.await.unwrap(), json!(1));
/// # });
/// ```
#[must_use = "futures do nothing unless awaited"]
pub struct BodyFuture {
    inner: Inner,
}

enum Inner {
    Boxed(BoxFuture<'static, BodyResult>),
    Reused(Pooled<BodyResult>),
}

impl BodyFuture {
    /// The future of one run of a body.
    pub fn new<F>(future: F) -> Self
    where
        F: Future<Output = BodyResult> + Send + 'static,
    {
        Self {
            inner: Inner::Reused(Pooled::new(future)),
        }
    }

    /// [`new`](Self::new) with the pool key of `F`, looked up
    /// once by whoever builds futures of that type over and over.
    pub(crate) fn new_keyed<F>(key: PoolKey, future: F) -> Self
    where
        F: Future<Output = BodyResult> + Send + 'static,
    {
        Self {
            inner: Inner::Reused(Pooled::keyed(key, future)),
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
            Inner::Reused(future) => Pin::new(future).poll(cx),
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

    #[test]
    fn reused_bodies_run_one_after_another_and_hold_nothing_after() {
        let count = Arc::new(AtomicUsize::new(0));
        for _ in 0..3 {
            let body = BodyFuture::new(body(Held::new(&count), true));
            assert_eq!(block_on(body).unwrap(), json!("done"));
        }
        assert_eq!(count.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn a_body_dropped_unfinished_drops_what_it_holds() {
        let count = Arc::new(AtomicUsize::new(0));
        let mut unfinished = BodyFuture::new(body(Held::new(&count), false));
        let mut cx = Context::from_waker(std::task::Waker::noop());
        assert!(Pin::new(&mut unfinished).poll(&mut cx).is_pending());
        assert_eq!(count.load(Ordering::SeqCst), 1);
        drop(unfinished);
        assert_eq!(count.load(Ordering::SeqCst), 0, "a kept box holds nothing");
    }
}
