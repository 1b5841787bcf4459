//! Non-blocking requests and the scope that keeps their buffers alive.
//!
//! A non-blocking operation borrows its buffer for as long as the engine
//! may use it. Requests therefore live in a [`scope`]: the buffers they
//! borrow must outlive the scope, and the scope does not end until every
//! request started in it has completed, even ones that were dropped or
//! forgotten. This is what makes it impossible for safe code to touch or
//! free a buffer while a request uses it.
//!
//! # Example
//! ```
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

use crate::engine::ReqKey;
use crate::error::{Error, Result};
use crate::runtime::{with_current, Runtime};
use crate::types::Status;
use crate::wait::Backoff;

pub use pertinax_sys::lend::Scope;

/// Runs `f` with a scope for non-blocking operations; returns after every
/// request started in it has completed (also when `f` panics).
pub fn scope<'env, F, R>(f: F) -> R
where
    F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> R,
{
    let mut b = Backoff::default();
    pertinax_sys::lend::scope(f, || {
        if with_current(|rt| rt.drain_step(&mut b)).is_none() {
            // No runtime: nothing can hold a lent buffer; avoid a hot loop.
            pertinax_sys::yield_cpu();
        }
    })
}

/// A pending non-blocking operation.
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

    /// Waits for completion.
    ///
    /// # Errors
    /// The operation's error, or `RequestInactive` if the result was
    /// already returned by [`Request::test`] or [`wait_any`].
    pub fn wait(mut self) -> Result<Status> {
        self.wait_mut()
    }

    fn wait_mut(&mut self) -> Result<Status> {
        if !self.active {
            return Err(Error::RequestInactive);
        }
        self.active = false;
        self.rt.engine.borrow_mut().wait(self.key)
    }

    /// Completes the request if it can without waiting.
    ///
    /// # Errors
    /// As [`Request::wait`].
    pub fn test(&mut self) -> Result<Option<Status>> {
        if !self.active {
            return Err(Error::RequestInactive);
        }
        let mut e = self.rt.engine.borrow_mut();
        e.progress();
        match e.take(self.key)? {
            None => Ok(None),
            Some(r) => {
                self.active = false;
                r.map(Some)
            }
        }
    }
}

/// Waits until one active request completes; returns its index and status.
/// `Ok(None)` when no request is active.
///
/// # Errors
/// The completed operation's error.
pub fn wait_any(reqs: &mut [Request<'_>]) -> Result<Option<(usize, Status)>> {
    let Some(rt) = reqs.iter().find(|r| r.active).map(|r| r.rt.clone()) else {
        return Ok(None);
    };
    let mut e = rt.engine.borrow_mut();
    let mut hit = None;
    e.wait_until(|e| {
        hit = reqs.iter().position(|r| r.active && e.is_done(r.key));
        hit.is_some()
    });
    let Some(i) = hit else { return Ok(None) };
    reqs[i].active = false;
    match e.take(reqs[i].key)? {
        Some(r) => r.map(|st| Some((i, st))),
        None => Err(Error::RequestInactive),
    }
}

/// Completes one active request if any can be without waiting.
///
/// # Errors
/// The completed operation's error.
pub fn test_any(reqs: &mut [Request<'_>]) -> Result<Option<(usize, Status)>> {
    let Some(rt) = reqs.iter().find(|r| r.active).map(|r| r.rt.clone()) else {
        return Ok(None);
    };
    let mut e = rt.engine.borrow_mut();
    e.progress();
    let Some(i) = reqs.iter().position(|r| r.active && e.is_done(r.key)) else {
        return Ok(None);
    };
    reqs[i].active = false;
    match e.take(reqs[i].key)? {
        Some(r) => r.map(|st| Some((i, st))),
        None => Err(Error::RequestInactive),
    }
}

/// Waits for every active request. Returns the statuses in order, or the
/// first error after all have completed.
///
/// # Errors
/// The first failed operation's error.
pub fn wait_all(reqs: &mut [Request<'_>]) -> Result<Vec<Status>> {
    let mut out = Vec::with_capacity(reqs.len());
    let mut first_err = None;
    for r in reqs.iter_mut() {
        if !r.active {
            continue;
        }
        match r.wait_mut() {
            Ok(st) => out.push(st),
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    match first_err {
        Some(e) => Err(e),
        None => Ok(out),
    }
}
