//! Guarded non-blocking operations: requests whose completion returns the
//! propagated errors, by blocking wait or as a [`Future`].
//!
//! Start the operation on [`Guarded::comm`] inside a [`pertinax::scope`],
//! then hand the request to the guard:
//!
//! ```no_run
//! use pertinax_propagate::{Guarded, GuardError};
//!
//! let universe = pertinax::init()?;
//! let mut g = Guarded::new(&universe.world())?;
//! let mut got = [0u64; 4];
//! let r = pertinax::scope(|s| {
//!     let req = g.comm().irecv(s, &mut got, 0, 1)?;
//!     // ... compute while the message travels ...
//!     Ok::<_, pertinax::Error>(g.request(req).wait())
//! })?;
//! match r {
//!     Ok(_status) => {}
//!     Err(GuardError::Propagated(p)) => eprintln!("{p}"), // the same everywhere
//!     Err(GuardError::Other(e)) => return Err(e.into()),
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # `async`
//!
//! A [`GuardedRequest`] is also a [`Future`], so `async` code can `.await`
//! it; no runtime is needed or imposed. Communication only moves while
//! somebody polls the engine, so a pending request asks to be polled again
//! at once (it wakes its own waker): under an executor that has other
//! tasks, they run in between; [`block_on`] is the minimal executor for
//! programs without one. When the poll meets a propagated error, it runs
//! the resolution (a collective over the survivors) inside that poll.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use pertinax::{Request, Status};

use crate::{GuardError, Guarded};

/// A non-blocking operation on a guarded communicator; see the
/// [module documentation](self).
#[derive(Debug)]
#[must_use = "a request does nothing unless waited for, tested or awaited"]
pub struct GuardedRequest<'g, 's> {
    guard: &'g mut Guarded,
    req: Request<'s>,
}

impl Guarded {
    /// Takes charge of `req`, a request started on [`Guarded::comm`]: its
    /// completion returns the errors propagated to this rank.
    pub fn request<'g, 's>(&'g mut self, req: Request<'s>) -> GuardedRequest<'g, 's> {
        GuardedRequest { guard: self, req }
    }

    /// Waits for every request (started on [`Guarded::comm`]). Returns the
    /// statuses in order, or the propagated error as soon as one request
    /// fails (as [`pertinax::wait_all`]: the others are left as they are;
    /// a propagation revokes the working communicator, which ends them).
    ///
    /// # Errors
    /// As [`Guarded::run`].
    pub fn wait_all(&mut self, reqs: &mut [Request<'_>]) -> Result<Vec<Status>, GuardError> {
        self.run(|_| pertinax::wait_all(reqs).map_err(pertinax::Error::from))
    }
}

impl GuardedRequest<'_, '_> {
    /// Waits for completion.
    ///
    /// # Errors
    /// As [`Guarded::run`]; a signal this rank raised before returns its
    /// propagated error without waiting (the operation is cut off by the
    /// revocation).
    pub fn wait(self) -> Result<Status, GuardError> {
        let GuardedRequest { guard, req } = self;
        guard.run(move |_| req.wait())
    }

    /// Completes the request if it can without waiting: `Ok(None)` while
    /// it is pending.
    ///
    /// # Errors
    /// As [`GuardedRequest::wait`].
    pub fn test(&mut self) -> Result<Option<Status>, GuardError> {
        let req = &mut self.req;
        self.guard.run(|_| req.test())
    }
}

impl Future for GuardedRequest<'_, '_> {
    type Output = Result<Status, GuardError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        match this.test() {
            Ok(Some(st)) => Poll::Ready(Ok(st)),
            Ok(None) => {
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            Err(e) => Poll::Ready(Err(e)),
        }
    }
}

/// Runs a future to completion on this thread, polling it until it is
/// ready (the minimal executor for guarded requests; any executor works).
pub fn block_on<F: Future>(fut: F) -> F::Output {
    let mut fut = std::pin::pin!(fut);
    let mut cx = Context::from_waker(Waker::noop());
    let mut spins = 0u32;
    loop {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
        spins = spins.wrapping_add(1);
        if spins % 64 == 0 {
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
}
