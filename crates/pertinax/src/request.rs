//! Non-blocking requests and the scope that keeps their buffers alive.
//!
//! A non-blocking operation borrows its buffer for as long as the backend
//! may use it. Requests therefore live in a [`scope`]: the buffers they
//! borrow must outlive the scope, and the scope does not end until the
//! backend is done with every buffer lent in it, even for requests that
//! were dropped or forgotten. This is what makes it impossible for safe
//! code to touch or free a buffer while a request uses it.
//!
//! # Failures
//!
//! The failure semantics (stated on [`scope`], [`Request`], [`wait_all`],
//! [`wait_any`], [`Request::cancel`]) follow ULFM: a request fails as soon
//! as the failure that dooms it is known, every wait returns that failure
//! at once and leaves the other requests pending, a revocation completes
//! every pending request of the communicator with `Revoked`, and an
//! unmatched receive can be cancelled (dropping its request cancels it),
//! so a scope can always end.
//!
//! # Example
//! ```
//! use pertinax::prelude::*;
//!
//! let u = pertinax::init()?;
//! let world = u.world();
//! let data = [1u32, 2, 3];
//! let mut got = [0u32; 3];
//! pertinax::scope(|s| {
//!     let r = world.irecv(s, &mut got, 0, 1)?;
//!     let q = world.isend(s, &data, 0, 1)?;
//!     pertinax::wait_all(&mut [r, q])?;
//!     Ok::<(), pertinax::Error>(())
//! })?;
//! assert_eq!(got, data);
//! # Ok::<(), pertinax::Error>(())
//! ```
//!
//! The buffer stays borrowed while the request may use it, so this does
//! not compile:
//!
//! ```compile_fail
//! use pertinax::prelude::*;
//!
//! let u = pertinax::init()?;
//! let world = u.world();
//! let mut got = [0u32; 3];
//! pertinax::scope(|s| {
//!     let r = world.irecv(s, &mut got, 0, 1)?;
//!     got[0] = 7; // error: `got` is mutably borrowed by the request
//!     r.wait()
//! })?;
//! # Ok::<(), pertinax::Error>(())
//! ```
//!
//! and neither does a buffer that would not outlive the scope:
//!
//! ```compile_fail
//! use pertinax::prelude::*;
//!
//! let u = pertinax::init()?;
//! let world = u.world();
//! pertinax::scope(|s| {
//!     let mut local = [0u32; 3];
//!     let r = world.irecv(s, &mut local, 0, 1)?; // error: does not live long enough
//!     r.wait()
//! })?;
//! # Ok::<(), pertinax::Error>(())
//! ```

use std::marker::PhantomData;
use std::rc::Rc;

use crate::backend::{Backend, ReqKey};
use crate::error::{Error, Result};
use crate::pending::Pending;
#[cfg(doc)]
use crate::pending::{test_any, wait_all, wait_any};
use crate::runtime::{with_current, Runtime};
use crate::types::Status;
use crate::wait::Backoff;

pub use pertinax_os::lend::Scope;

/// Runs `f` with a scope for non-blocking operations; returns once the
/// backend is done with every buffer lent in it (also when `f` panics).
///
/// # What happens to requests still pending at the end
///
/// Before returning, the scope drives progress until no request started
/// in it can touch its buffer any more. A request that was waited for (or
/// tested to completion), failed, was revoked or was cancelled holds
/// nothing: it never delays the end. A request the closure *dropped*
/// while still pending is let go: a receive that has not matched a
/// message is cancelled (its buffer is left as it was), anything else
/// completes in the background. So the end waits only for operations
/// that are already moving data or that a peer may be reading:
///
/// - a receive whose message is arriving in fragments, until the last one
///   (or the sender's failure);
/// - a send larger than the eager limit whose receiver has the address of
///   its buffer, until the receiver takes the message, refuses it (after
///   a revocation, at its next call into the library), or ends;
/// - a non-blocking collective, until it completes or fails.
///
/// Each of these ends when the peer calls the library, fails, or the
/// communicator is revoked and the peer learns it; none of them waits for
/// a message that may never be sent. A request kept alive with
/// [`std::mem::forget`] is not dropped: it completes in the background
/// like an undropped one, so a forgotten receive from a rank that never
/// sends keeps the scope waiting (until a failure or a revocation ends
/// it).
///
/// # Errors
/// `scope` itself returns what `f` returns. The pattern below handles a
/// failure: on an error from [`wait_all`] the rank revokes the
/// communicator (so that peers blocked on it return too) and leaves the
/// scope with `?`; the requests still pending in the array are dropped,
/// which cancels the unmatched receive.
///
/// ```
/// use pertinax::prelude::*;
///
/// let u = pertinax::init()?;
/// let world = u.world();
/// let (me, n) = (world.rank().index(), world.size());
/// let mine = [me as u64; 4];
/// let mut left = [0u64; 4];
/// let r = pertinax::scope(|s| {
///     let mut reqs = [
///         world.irecv(s, &mut left, (me + n - 1) % n, 1)?,
///         world.isend(s, &mine, (me + 1) % n, 1)?,
///     ];
///     match pertinax::wait_all(&mut reqs) {
///         Ok(_) => Ok(()),
///         Err(e) => {
///             // `e.index` failed; the others may still be pending.
///             world.revoke()?;
///             Err(e.error)
///         }
///     }
/// });
/// match r {
///     Ok(()) => assert_eq!(left, [((me + n - 1) % n) as u64; 4]),
///     // A peer failed or the communicator was revoked: recover
///     // (agree, shrink...), then go on.
///     Err(e) if e.is_fault() => {}
///     Err(e) => return Err(e),
/// }
/// # Ok::<(), pertinax::Error>(())
/// ```
pub fn scope<'env, F, R>(f: F) -> R
where
    F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> R,
{
    let mut b = Backoff::default();
    pertinax_os::lend::scope(f, || {
        if with_current(|rt| rt.drain_step(&mut b)).is_none() {
            // No runtime: nothing can hold a lent buffer; avoid a hot loop.
            pertinax_os::yield_cpu();
        }
    })
}

/// A pending non-blocking operation.
///
/// A request completes once, with a [`Status`] or an [`Error`]; its
/// result is taken by [`Request::wait`], a successful [`Request::test`],
/// or one of [`wait_any`], [`test_any`], [`wait_all`], after which the
/// request is inactive.
///
/// # Failures
///
/// A request fails as soon as the failure that dooms it is known here
/// (no later than the next call into the library after the launcher
/// announced it): `ProcFailed` when the peer it needs failed,
/// `ProcFailedPending` for an any-source receive while a failure on the
/// communicator is not acknowledged, `Revoked` when its communicator is
/// revoked (by any rank: the revocation completes every pending
/// point-to-point request and collective of the communicator at every
/// rank that learns it). A send up to the eager limit completes when its
/// data is copied out (at once); one posted to a destination already
/// known to be gone completes with `ProcFailed` instead, never `Ok`. A
/// larger send completes when the receiver has taken the data, and fails
/// when the receiver fails or refuses it after a revocation.
///
/// Dropping a request that is still pending lets it go: see [`scope`].
#[derive(Debug)]
#[must_use = "a request does nothing unless waited for or tested"]
pub struct Request<'s> {
    rt: Rc<Runtime>,
    key: ReqKey,
    active: bool,
    _scope: PhantomData<&'s ()>,
}

impl<'s> Request<'s> {
    pub(crate) fn new(rt: Rc<Runtime>, key: ReqKey) -> Request<'s> {
        Request {
            rt,
            key,
            active: true,
            _scope: PhantomData,
        }
    }

    /// Whether the result has not been taken yet.
    pub fn is_active(&self) -> bool {
        self.active
    }

    /// Waits for completion and takes the result.
    ///
    /// # Errors
    /// The operation's error as soon as it is known: `ProcFailed`,
    /// `ProcFailedPending`, `Revoked` (see [`Request`]), `Cancelled` after
    /// a successful [`Request::cancel`], `Truncated` or
    /// `LengthNotMultiple` for a receive; `RequestInactive` if the result
    /// was already taken.
    pub fn wait(mut self) -> Result<Status> {
        self.wait_mut()
    }

    fn wait_mut(&mut self) -> Result<Status> {
        if !self.active {
            return Err(Error::RequestInactive);
        }
        self.active = false;
        self.rt.b.wait(self.key)
    }

    /// Completes the request if it can without waiting: `Ok(None)` while
    /// it is pending.
    ///
    /// # Errors
    /// As [`Request::wait`]; the error is returned (and the request
    /// becomes inactive) on the first call after it is known.
    pub fn test(&mut self) -> Result<Option<Status>> {
        if !self.active {
            return Err(Error::RequestInactive);
        }
        let e = &self.rt.b;
        e.progress();
        match e.take(self.key)? {
            None => Ok(None),
            Some(r) => {
                self.active = false;
                r.map(Some)
            }
        }
    }

    /// Cancels the operation if it has not started moving data; true if it
    /// was cancelled.
    ///
    /// A cancelled request is complete and never touches its buffer
    /// again: its result ([`Request::wait`], [`wait_all`]...) is
    /// `Err(Error::Cancelled)`, and a message it would have matched stays
    /// for a later receive. What can be cancelled:
    ///
    /// - a receive that has not matched a message: yes;
    /// - a receive whose message is arriving in fragments (a large message
    ///   matched while its sender streams it): no, the backend writes the
    ///   buffer until the last fragment; it completes normally, or fails
    ///   with the sender;
    /// - a send: no (as in MPI 4, where cancelling a send is deprecated).
    ///   A send up to the eager limit is complete already; a larger one
    ///   has announced its buffer to the receiver, which may be reading it
    ///   at this moment; it ends when the receiver takes it, refuses it
    ///   after a revocation, or fails;
    /// - a non-blocking collective: no (revoke the communicator instead);
    /// - a complete request: no (its result is kept).
    ///
    /// When this returns false the request is unchanged: wait for it as
    /// usual.
    ///
    /// # Errors
    /// `RequestInactive` if the result was already taken.
    ///
    /// # Example
    /// ```
    /// use pertinax::prelude::*;
    ///
    /// let u = pertinax::init()?;
    /// let world = u.world();
    /// let mut got = [0u8; 4];
    /// pertinax::scope(|s| {
    ///     // Nobody sends with tag 9: without the cancel, the wait below
    ///     // would never return.
    ///     let mut r = world.irecv(s, &mut got, 0, 9)?;
    ///     assert!(r.cancel()?);
    ///     assert_eq!(r.wait(), Err(pertinax::Error::Cancelled));
    ///     Ok::<(), pertinax::Error>(())
    /// })?;
    /// # Ok::<(), pertinax::Error>(())
    /// ```
    pub fn cancel(&mut self) -> Result<bool> {
        if !self.active {
            return Err(Error::RequestInactive);
        }
        self.rt.b.cancel(self.key)
    }
}

impl Drop for Request<'_> {
    fn drop(&mut self) {
        if self.active {
            // The backend lets go of it (and must not panic if it is busy).
            self.rt.b.forget(self.key);
        }
    }
}

impl Pending for Request<'_> {
    type Output = Status;
    type Error = Error;

    fn is_active(&self) -> bool {
        self.active
    }
    fn is_done(&mut self) -> bool {
        let e = &self.rt.b;
        !self.active || {
            e.progress();
            e.is_done(self.key)
        }
    }
    fn has_failed(&mut self) -> bool {
        self.active && self.rt.b.request_failed(self.key)
    }
    fn take(&mut self) -> Result<Status> {
        if !self.active {
            return Err(Error::RequestInactive);
        }
        // A complete request's result as it is (the backend's blocking
        // wait is for one still pending).
        match self.rt.b.take(self.key)? {
            Some(r) => {
                self.active = false;
                r
            }
            None => Request::wait_mut(self),
        }
    }
    fn step(&self, b: &mut Backoff) {
        self.rt.b.drain_step(b);
    }
    fn cancel(&mut self) -> Result<bool> {
        Request::cancel(self)
    }
    fn wait_mut(&mut self) -> Result<Status> {
        Request::wait_mut(self)
    }
    fn test(&mut self) -> Result<Option<Status>> {
        Request::test(self)
    }
}
