//! Non-blocking resilient collectives: requests posted before a failure
//! are re-posted on the repaired communicator.
//!
//! [`Resilient::scope`] opens a scope, like [`pertinax::scope`], in which
//! [`NbScope::ibarrier`], [`NbScope::ibcast`], [`NbScope::ireduce`],
//! [`NbScope::iallreduce`] and [`NbScope::iallgather`] post collectives
//! that run while the program computes. Each returns an [`NbRequest`] to
//! [`wait`](NbRequest::wait) or [`test`](NbRequest::test) (or
//! [`pertinax::wait_all`]); its [`Outcome`] is what the blocking operation would
//! have returned.
//!
//! # Buffers
//!
//! The buffers a request uses are borrowed for the whole scope: outputs
//! are written into them when the scope ends, and the program reads them
//! after [`Resilient::scope`] returns. This follows from the core's
//! lending rule (see [`pertinax::scope`]): a buffer lent to the engine can
//! be touched again only once the scope that lent it has ended, and a
//! request that may be posted again after a failure must lend a fresh
//! buffer each time. So the layer lends the caller's output buffer to the
//! first attempt (no copy on the fault-free path) and buffers of its own
//! to later attempts, and copies the final result into the caller's
//! buffer when the scope ends. Inputs are borrowed shared, so every
//! attempt sends the original inputs; a broadcast root's buffer is both,
//! so the root keeps a copy of its data for the attempts after the first.
//!
//! # Order, agreement and re-posting
//!
//! - Every rank posts the same requests in the same order (the MPI rule
//!   for collectives); they are numbered in that order.
//! - Requests complete in posting order: waiting (or testing) a request
//!   first completes every request posted before it. Ranks may wait in
//!   different orders and still complete, agree and repair identically.
//! - Under [`Check::Agree`] a request that completed locally is followed by
//!   an agreement on the collective communicator, as a blocking collective
//!   is: it succeeded everywhere, or everybody repairs (a shrink, the same
//!   repair as the blocking operations) and then posts again, on the
//!   repaired communicator and in posting order, every request not yet
//!   agreed complete, with its original inputs and its root mapped from
//!   its original rank. A root that has failed by then goes to the
//!   [`Policy`](crate::Policy), as in the blocking operations: the outcome
//!   names it as skipped (its buffers are not written) or the request
//!   ends with [`Error::Failed`].
//! - [`NbRequest::test`] never waits for other ranks' operations or
//!   agreements (it contributes to the agreement with
//!   [`Comm::iagree`](pertinax::Comm::iagree)), but a repair, once a
//!   failure is agreed, runs to its end inside the call that learns of it.
//! - A blocking collective, `dup` or `split` of the same communicator while
//!   requests of the scope are not yet complete is refused with
//!   `InvalidArgument` (its agreement would come before theirs at this rank
//!   only); once every posted request was waited for, blocking collectives
//!   may be called inside the scope again. Only one scope may be open on a
//!   communicator at a time.
//! - When the scope ends, requests that were never waited for are
//!   completed (and agreed) in order; their results are still written to
//!   their buffers, their errors are dropped (wait a request to see them).
//! - [`Check::Log`] has no agreement to learn of a failure in a request
//!   that completed here, so it is not supported: [`Resilient::scope`]
//!   returns [`Error::Unsupported`].
//!
//! As with the blocking operations, an attempt that failed may have
//! written part of an output buffer before the failure (when it was the
//! caller's buffer); when the request then ends skipped or with an error,
//! that content is unspecified. Fault points (for tests): `res.nb.local`
//! (a request completed locally, before its agreement) and
//! `res.nb.repost` (after each re-post of a repair).
//!
//! # Example
//! ```
//! use pertinax::Op;
//! use pertinax_resilient::{Communicator, Resilient};
//!
//! let universe = pertinax::init()?;
//! let res = Resilient::new(&universe.world())?;
//! let mut table = vec![0u64; 4];
//! if res.rank().0 == 0 {
//!     table = vec![1, 2, 3, 4];
//! }
//! let mine = [res.rank().0 as u64 + 1];
//! let mut sum = [0u64];
//! let mut all = vec![0u64; res.size()];
//! let (t, s, a) = res.scope(|s| {
//!     let t = s.ibcast(&mut table, 0)?;
//!     let r = s.iallreduce(&mine, &mut sum, &Op::sum())?;
//!     let g = s.iallgather(&mine, &mut all)?;
//!     // ... compute while they run ...
//!     let s = r.wait()?; // completes the bcast first
//!     Ok::<_, pertinax_resilient::Error>((t.wait()?, s, g.wait()?))
//! })??;
//! // The buffers hold the results now; the outcomes say who contributed.
//! assert!(t.is_complete() && s.is_complete() && a.is_complete());
//! assert_eq!(table, [1, 2, 3, 4]);
//! assert_eq!(sum[0], (1..=res.size() as u64).sum::<u64>());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A buffer stays borrowed until the scope has ended, so this does not
//! compile:
//!
//! ```compile_fail
//! # let universe = pertinax::init()?;
//! # let res = pertinax_resilient::Resilient::new(&universe.world())?;
//! let mut buf = [0u32; 2];
//! res.scope(|s| {
//!     let r = s.ibcast(&mut buf, 0)?;
//!     let early = buf[0]; // error: `buf` is borrowed by the scope
//!     r.wait()
//! })??;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::cell::{Cell, RefCell};

use bytemuck::Pod;
use pertinax::{Op, Rank};

use crate::{Check, Communicator, Error, Outcome, Resilient};

mod buffers;
mod queue;

use buffers::{deliver, Chain};
use queue::{Inner, Post, Queue, Spec, Typed, Wait};

/// A scope for non-blocking resilient collectives: see [`Resilient::scope`]
/// and the [crate documentation](crate). `'b` is the lifetime of the
/// buffers its requests borrow (they outlive the scope).
pub struct NbScope<'x, 'b> {
    q: &'x (dyn Post<'b> + 'x),
    res: &'x Resilient,
}

/// A non-blocking resilient collective: see [`NbScope`].
#[must_use = "a request's outcome is only known by waiting for it or testing it"]
pub struct NbRequest<'x> {
    w: &'x (dyn Wait + 'x),
    id: usize,
    active: bool,
    /// Its result, once it completed while advancing without waiting (so
    /// that whether it failed is known before it is taken), until taken.
    done: Option<Result<Outcome, Error>>,
}

impl std::fmt::Debug for NbScope<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NbScope").field("res", self.res).finish()
    }
}

impl std::fmt::Debug for NbRequest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NbRequest")
            .field("id", &self.id)
            .field("active", &self.active)
            .finish()
    }
}

fn bad(what: &str, detail: String) -> Error {
    pertinax::Error::InvalidArgument(format!("{what}: {detail}")).into()
}

/// `buf` as bytes (a zero-sized element type is refused, not a panic).
fn bytes_mut<'a, T: Pod>(what: &str, buf: &'a mut [T]) -> Result<&'a mut [u8], Error> {
    bytemuck::try_cast_slice_mut(buf).map_err(|e| bad(what, format!("buffer: {e}")))
}

/// `buf` as bytes (a zero-sized element type is refused, not a panic).
fn bytes<'a, T: Pod>(what: &str, buf: &'a [T]) -> Result<&'a [u8], Error> {
    bytemuck::try_cast_slice(buf).map_err(|e| bad(what, format!("buffer: {e}")))
}

impl<'x, 'b> NbScope<'x, 'b> {
    fn request(&self, id: usize) -> NbRequest<'x> {
        NbRequest {
            w: self.q.waiter(),
            id,
            active: true,
            done: None,
        }
    }

    /// Non-blocking [`Communicator::barrier`].
    ///
    /// # Errors
    /// [`Error::Internal`] after a failed repair (see [`NbRequest::wait`]).
    pub fn ibarrier(&self) -> Result<NbRequest<'x>, Error> {
        let id = self.q.post(Spec::Barrier, None, None, None)?;
        Ok(self.request(id))
    }

    /// Non-blocking [`CommunicatorExt::bcast`](pertinax::CommunicatorExt::bcast): `buf` holds the result when
    /// the scope has ended (unless the root failed).
    ///
    /// # Errors
    /// `InvalidRank` for a bad root (nothing is posted).
    pub fn ibcast<T: Pod>(
        &self,
        buf: &'b mut [T],
        root: impl Into<Rank>,
    ) -> Result<NbRequest<'x>, Error> {
        let root = self.res.check_rank(root.into())?;
        let buf: &'b mut [u8] = bytes_mut("bcast", buf)?;
        let input = (root == self.res.rank().index()).then(|| buf.to_vec());
        let id = self.q.post(Spec::Bcast { root }, Some(buf), input, None)?;
        Ok(self.request(id))
    }

    /// Non-blocking [`CommunicatorExt::reduce`](pertinax::CommunicatorExt::reduce): at the root, `recv` holds the
    /// result when the scope has ended; elsewhere it is not used (it may
    /// be empty).
    ///
    /// # Errors
    /// `InvalidRank` for a bad root (nothing is posted). A root whose
    /// `recv` is not as long as `send` takes part with a scratch buffer and
    /// its request ends with `InvalidArgument`.
    pub fn ireduce<T: Pod>(
        &self,
        send: &'b [T],
        recv: &'b mut [T],
        op: &Op<T>,
        root: impl Into<Rank>,
    ) -> Result<NbRequest<'x>, Error> {
        let root = self.res.check_rank(root.into())?;
        let bad = (root == self.res.rank().index() && recv.len() != send.len()).then(|| {
            format!(
                "reduce: send has {} elements, receive has {}",
                send.len(),
                recv.len()
            )
        });
        let recv = bytes_mut("reduce", recv)?;
        bytes("reduce", send)?;
        let red = Box::new(Typed {
            send,
            op: op.clone(),
        });
        let id = self
            .q
            .post(Spec::Reduce { root, red }, Some(recv), None, bad)?;
        Ok(self.request(id))
    }

    /// Non-blocking [`CommunicatorExt::allreduce`](pertinax::CommunicatorExt::allreduce): `recv` holds the result
    /// when the scope has ended.
    ///
    /// # Errors
    /// `InvalidArgument` if `send` and `recv` differ in length (nothing is
    /// posted).
    pub fn iallreduce<T: Pod>(
        &self,
        send: &'b [T],
        recv: &'b mut [T],
        op: &Op<T>,
    ) -> Result<NbRequest<'x>, Error> {
        if send.len() != recv.len() {
            return Err(bad(
                "allreduce",
                format!(
                    "send has {} elements, receive has {}",
                    send.len(),
                    recv.len()
                ),
            ));
        }
        let recv = bytes_mut("allreduce", recv)?;
        let red = Box::new(Typed {
            send,
            op: op.clone(),
        });
        let id = self
            .q
            .post(Spec::Allreduce { red }, Some(recv), None, None)?;
        Ok(self.request(id))
    }

    /// Non-blocking [`CommunicatorExt::allgather`](pertinax::CommunicatorExt::allgather): `recv` holds every
    /// contributor's `send` at its original position when the scope has
    /// ended (the missing ranks' blocks are not written).
    ///
    /// # Errors
    /// `InvalidArgument` unless `recv` holds `size × send.len()` elements
    /// (nothing is posted).
    pub fn iallgather<T: Pod>(
        &self,
        send: &'b [T],
        recv: &'b mut [T],
    ) -> Result<NbRequest<'x>, Error> {
        let size = self.res.size();
        if recv.len() != size * send.len() {
            return Err(bad(
                "allgather",
                format!(
                    "receive holds {} elements, {size} × {} needed",
                    recv.len(),
                    send.len()
                ),
            ));
        }
        let id = self.q.post(
            Spec::Allgather {
                send: bytes("allgather", send)?,
            },
            Some(bytes_mut("allgather", recv)?),
            None,
            None,
        )?;
        Ok(self.request(id))
    }
}

impl NbRequest<'_> {
    /// Waits until the request (and every request posted before it) has
    /// completed and been agreed; returns its outcome, the one the blocking
    /// operation would have returned. Its output buffer holds the result
    /// once the scope has ended.
    ///
    /// # Errors
    /// [`Error::Failed`] when its root has failed and the policy says stop;
    /// an argument error of the core (e.g. a count that differs between
    /// ranks); [`Error::Internal`] once a repair has failed (no request of
    /// the scope can complete after that).
    pub fn wait(mut self) -> Result<Outcome, Error> {
        self.wait_outcome()
    }

    fn wait_outcome(&mut self) -> Result<Outcome, Error> {
        if let Some(r) = self.done.take() {
            self.active = false;
            return r;
        }
        self.complete(true).and_then(|o| {
            o.ok_or_else(|| Error::Internal("a waited request did not complete".into()))
        })
    }

    /// Completes the request if that needs no waiting for other ranks (a
    /// repair, once a failure is agreed, runs to its end here): `Ok(None)`
    /// while it is pending. Completes earlier requests first.
    ///
    /// # Errors
    /// As [`NbRequest::wait`]; `RequestInactive` once the outcome was
    /// returned.
    pub fn test(&mut self) -> Result<Option<Outcome>, Error> {
        if let Some(r) = self.done.take() {
            self.active = false;
            return r.map(Some);
        }
        self.complete(false)
    }

    /// Whether the outcome has not been returned yet.
    pub fn is_active(&self) -> bool {
        self.active
    }

    fn complete(&mut self, block: bool) -> Result<Option<Outcome>, Error> {
        if !self.active {
            return Err(pertinax::Error::RequestInactive.into());
        }
        if !self.w.advance(self.id, block)? {
            return Ok(None);
        }
        self.active = false;
        self.w.take(self.id).map(Some)
    }
}

/// A resilient non-blocking collective is a pending operation of the
/// core's kind, so the core's waits take it, alone or with other
/// communicators' requests (its completion carries the outcome, no status).
impl pertinax::Pending for NbRequest<'_> {
    type Output = pertinax::Completion;
    type Error = Error;

    fn is_active(&self) -> bool {
        self.active
    }
    fn is_done(&mut self) -> bool {
        if !self.active || self.done.is_some() {
            return true;
        }
        // Completed: its result is taken from the scope now and kept, so
        // that `has_failed` knows it.
        match self.complete(false) {
            Ok(None) => false,
            Ok(Some(o)) => {
                self.active = true;
                self.done = Some(Ok(o));
                true
            }
            Err(e) => {
                self.active = true;
                self.done = Some(Err(e));
                true
            }
        }
    }
    fn has_failed(&mut self) -> bool {
        matches!(self.done, Some(Err(_)))
    }
    fn take(&mut self) -> Result<pertinax::Completion, Error> {
        self.wait_outcome().map(|outcome| pertinax::Completion {
            status: None,
            outcome,
        })
    }
    fn step(&self, b: &mut pertinax::Backoff) {
        b.snooze();
    }
    /// Completes it in the scope's own blocking wait.
    fn wait_mut(&mut self) -> Result<pertinax::Completion, Error> {
        pertinax::Pending::take(self)
    }
    /// Collectives cannot be cancelled (false, as in the core).
    fn cancel(&mut self) -> Result<bool, Error> {
        if !self.active {
            return Err(pertinax::Error::RequestInactive.into());
        }
        Ok(false)
    }
}

/// Marks the communicator's scope closed when the scope ends, also by
/// unwinding.
struct Open<'r>(&'r Resilient);

impl Drop for Open<'_> {
    fn drop(&mut self) {
        self.0.set_nb_state(None);
    }
}

impl Resilient {
    /// Runs `f` with a scope for non-blocking collectives on this
    /// communicator (see the [module documentation](crate::NbScope) and
    /// the crate's). Returns once every request posted in it has
    /// completed and been agreed; the buffers then hold the results. Every
    /// rank opens the scope and posts the same requests in the same order.
    ///
    /// # Errors
    /// [`Error::Unsupported`] under [`Check::Log`]; `InvalidArgument` when
    /// a scope is already open on this communicator; [`Error::Internal`]
    /// when completing the requests nobody waited for met an error of the
    /// layer (a failed repair). The errors of the requests themselves are
    /// their [`NbRequest::wait`]'s.
    pub fn scope<'b, R>(&self, f: impl for<'x> FnOnce(&NbScope<'x, 'b>) -> R) -> Result<R, Error> {
        if self.config().check == Check::Log {
            return Err(Error::Unsupported(
                "non-blocking collectives under the log check (it has no agreement that would \
                 tell a rank whose request completed that another rank's failed); use the \
                 agree check"
                    .into(),
            ));
        }
        if self.nb_state().is_some() {
            return Err(pertinax::Error::InvalidArgument(
                "a non-blocking scope is already open on this communicator".into(),
            )
            .into());
        }
        self.set_nb_state(Some(0));
        let _open = Open(self);
        let mut chain = Chain::default();
        let (r, fin, deliveries) = pertinax::scope(|cs| {
            let inner = Inner {
                res: self,
                cs,
                tail: RefCell::new(Some(&mut chain)),
                slots: Cell::new(0),
                q: RefCell::new(Queue {
                    reqs: Vec::new(),
                    head: 0,
                    agreeing: None,
                    view: self.view(),
                    deliveries: Vec::new(),
                    broken: None,
                }),
            };
            let r = f(&NbScope {
                q: &inner,
                res: self,
            });
            let fin = inner.finish();
            let q = inner.q.into_inner();
            (r, fin, q.deliveries)
        });
        let delivered = deliver(chain, deliveries);
        fin?;
        delivered?;
        Ok(r)
    }
}
