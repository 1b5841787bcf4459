//! The [`Communicator`] trait: the operations every communicator offers,
//! the plain [`Comm`](crate::Comm) and the decorators of the recovery libraries
//! (`pertinax-resilient`'s communicators, `pertinax-propagate`'s guard),
//! so that decorators stack (a guarded resilient communicator) and
//! application code is written once.
//!
//! # Shape
//!
//! - **Object safe.** `&dyn Communicator<Error = E>` and
//!   `Box<dyn Communicator<Error = E>>` work: the trait's methods move
//!   bytes (with the element size where it matters: a receive checks that
//!   the message is a whole number of elements) and take ranks and tags as
//!   [`Rank`], [`Tag`], [`Source`] and [`TagMatch`]. The typed methods
//!   (`send::<T>`, `allreduce::<T>`, ...) are in [`CommunicatorExt`],
//!   implemented for every `C: Communicator + ?Sized`, so generic code
//!   and trait objects call them alike.
//! - **Reductions** go through [`DynOp`], the type-erased form of an
//!   [`Op<T>`]: it combines bytes, and runs the reduction on a plain
//!   [`Comm`](crate::Comm) (the element type is recovered inside the op), which is what
//!   a decorator over `Comm` needs.
//! - **dup and split** come in two forms: [`Communicator::dup`] and
//!   [`Communicator::split`] return `Self` (`where Self: Sized`),
//!   [`Communicator::dup_boxed`] and [`Communicator::split_boxed`] a boxed
//!   trait object.
//!
//! # Errors: an associated type
//!
//! Each communicator keeps its own error type
//! ([`Communicator::Error`]): the core's [`Error`] for [`Comm`](crate::Comm),
//! `pertinax_resilient::Error` (with its policy's `Failed`), the guard's
//! `GuardError<E>` (with the propagated error) around the error `E` of the
//! communicator it guards. One core error would have to carry every
//! layer's kinds as opaque payloads, which recovery code could no longer
//! match. The bound [`CommError`] is what a decorator needs of the layer
//! below: the core's errors convert into it (`From<Error>`), and
//! [`CommError::is_fault`] tells a failure (a dead peer, a revocation) from
//! a local error. A trait object names the error:
//! `dyn Communicator<Error = pertinax::Error>`.
//!
//! # Outcomes
//!
//! Operations return an [`Outcome`]: what they did besides succeeding. A
//! plain [`Comm`](crate::Comm) always completes with every rank (its outcome is
//! [`Outcome::default`], complete), and reports a failure as an error; a
//! resilient communicator completes without the failed ranks and says so
//! in the outcome (`skipped`, `missing`). A receive returns
//! `Option<Status>`: `None` when it was skipped (a resilient receive whose
//! source has failed, under an `ignore` policy).
//!
//! # Non-blocking operations
//!
//! [`Communicator::isend_bytes`] and [`Communicator::irecv_bytes`] start an
//! operation inside a core [`scope`](crate::scope) (which keeps the
//! buffers borrowed until the engine is done with them) and return a
//! [`PendingOp`]: a boxed [`Pending`], the trait of every pending
//! operation. The core's [`Request`] implements it, and so do the
//! decorators' requests (a resilient receive whose failed source goes to
//! the policy, the guard's request that turns a failure into the
//! propagated error, the resilient non-blocking collectives), each with
//! its own error type.
//!
//! # Failures
//!
//! [`Communicator::failed_ranks`] is the local view of the failed ranks;
//! [`Communicator::revoke`] and [`Communicator::is_revoked`] carry ULFM's
//! revocation to the decorator's level: after a revocation by any member,
//! the pending and later operations of every member return a fault error
//! (a decorator that cannot offer this returns `Unsupported` from
//! `revoke`). This is what lets a guard interrupt the communicator it
//! guards.
//!
//! # Example
//! ```
//! use pertinax::{Communicator, CommunicatorExt, Op};
//!
//! // Any communicator, plain or decorated, as a trait object.
//! fn total(c: &dyn Communicator<Error = pertinax::Error>) -> Result<u64, pertinax::Error> {
//!     let mut sum = [0u64];
//!     c.allreduce(&[c.rank().0 as u64 + 1], &mut sum, &Op::sum())?;
//!     Ok(sum[0])
//! }
//!
//! let u = pertinax::init()?;
//! let world = u.world();
//! assert_eq!(total(&world)?, (1..=world.size() as u64).sum::<u64>());
//! # Ok::<(), pertinax::Error>(())
//! ```

mod dyn_op;
mod plain;

use std::fmt;

use bytemuck::Pod;

pub use dyn_op::{DynOp, OwnedOp};

use crate::{Error, Op, Rank, Request, Scope, Source, Status, Tag, TagMatch};

/// What a communicator's error type must offer the layers above it.
pub trait CommError: std::error::Error + From<Error> + 'static {
    /// Whether this error is a failure that recovery reacts to (a dead
    /// peer, a revocation), as opposed to a local error (a bad argument).
    fn is_fault(&self) -> bool;
}

impl CommError for Error {
    fn is_fault(&self) -> bool {
        Error::is_fault(self)
    }
}

/// What an operation did besides succeeding.
///
/// Always complete on a plain [`Comm`](crate::Comm) (which reports failures as
/// errors); a resilient communicator fills it in.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The operation did not take place because this rank (its root or
    /// peer) has failed and the policy says ignore; buffers it would have
    /// filled are untouched.
    pub skipped: Option<Rank>,
    /// Ranks whose part of the result is missing (their slots in a
    /// gather or allgather result are untouched; their contribution is not
    /// in a reduction).
    pub missing: Vec<Rank>,
}

impl Outcome {
    /// Whether the operation took place with every rank's data.
    pub fn is_complete(&self) -> bool {
        self.skipped.is_none() && self.missing.is_empty()
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.skipped, self.missing.is_empty()) {
            (Some(r), _) => write!(f, "skipped: rank {} has failed", r.0),
            (None, true) => f.write_str("complete"),
            (None, false) => {
                f.write_str("missing ranks")?;
                for r in &self.missing {
                    write!(f, " {}", r.0)?;
                }
                Ok(())
            }
        }
    }
}

/// How a pending operation completed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Completion {
    /// The message's status for a receive that received (`None`: skipped,
    /// or an operation without a status of its own).
    pub status: Option<Status>,
    /// What the operation did besides succeeding.
    pub outcome: Outcome,
}

/// A pending non-blocking operation of any communicator, with the error
/// type `E` of the communicator that started it.
///
/// The core's [`Request`] implements it, so do the recovery libraries'
/// requests. Dropping a pending operation lets it go as its type says
/// (a core request: see [`crate::scope`]).
pub trait Pending<E> {
    /// Waits for completion and takes the result.
    ///
    /// # Errors
    /// The operation's error (see the implementations).
    fn wait(self: Box<Self>) -> Result<Completion, E>;
    /// Completes the operation if it can without waiting: `Ok(None)`
    /// while it is pending.
    ///
    /// # Errors
    /// As [`Pending::wait`].
    fn test(&mut self) -> Result<Option<Completion>, E>;
    /// Cancels the operation if it has not started moving data (see
    /// [`Request::cancel`]); true if it was cancelled. Operations that
    /// cannot be cancelled return false.
    ///
    /// # Errors
    /// When the result was already taken.
    fn cancel(&mut self) -> Result<bool, E>;
    /// Whether the result has not been taken yet.
    fn is_active(&self) -> bool;
}

/// A boxed [`Pending`] operation, as the trait's non-blocking methods
/// return it.
pub type PendingOp<'s, E> = Box<dyn Pending<E> + 's>;

impl Pending<Error> for Request<'_> {
    fn wait(self: Box<Self>) -> Result<Completion, Error> {
        Request::wait(*self).map(|st| Completion {
            status: Some(st),
            outcome: Outcome::default(),
        })
    }
    fn test(&mut self) -> Result<Option<Completion>, Error> {
        Ok(Request::test(self)?.map(|st| Completion {
            status: Some(st),
            outcome: Outcome::default(),
        }))
    }
    fn cancel(&mut self) -> Result<bool, Error> {
        Request::cancel(self)
    }
    fn is_active(&self) -> bool {
        Request::is_active(self)
    }
}

/// A pending operation whose errors convert into `F` (for a decorator
/// that hands out the requests of the communicator below it).
pub fn pending_into<'s, E: 's, F: From<E> + 's>(p: PendingOp<'s, E>) -> PendingOp<'s, F> {
    Box::new(MapErr(p, std::marker::PhantomData))
}

/// See [`pending_into`].
struct MapErr<'s, E, F>(PendingOp<'s, E>, std::marker::PhantomData<fn() -> F>);

impl<E, F: From<E>> Pending<F> for MapErr<'_, E, F> {
    fn wait(self: Box<Self>) -> Result<Completion, F> {
        Ok(self.0.wait()?)
    }
    fn test(&mut self) -> Result<Option<Completion>, F> {
        Ok(self.0.test()?)
    }
    fn cancel(&mut self) -> Result<bool, F> {
        Ok(self.0.cancel()?)
    }
    fn is_active(&self) -> bool {
        self.0.is_active()
    }
}

/// Waits for every operation in order; returns each one's result (an
/// inactive operation gives its `is_active` error, as its wait would).
pub fn wait_each<E>(ops: Vec<PendingOp<'_, E>>) -> Vec<Result<Completion, E>> {
    ops.into_iter().map(|p| p.wait()).collect()
}

// ---- the trait ----------------------------------------------------------

/// A boxed communicator with errors `E` (what [`Communicator::dup_boxed`]
/// and [`Communicator::split_boxed`] return).
pub type BoxedComm<E> = Box<dyn Communicator<Error = E>>;

/// A communicator: the plain [`Comm`](crate::Comm), or a decorator over one
/// (`pertinax-resilient`'s communicators, `pertinax-propagate`'s guard), so
/// that decorators stack and application code is written once. Object
/// safe; the typed methods are in [`CommunicatorExt`].
///
/// The methods' contracts are [`Comm`](crate::Comm)'s (same arguments, same
/// matching, same collective rules), except for what a decorator does
/// about failures, which it documents: a plain `Comm` returns
/// `ProcFailed`, a resilient communicator repairs and reports an
/// [`Outcome`], a guard turns the failure into the error propagated to
/// every rank.
pub trait Communicator {
    /// The error of every operation.
    type Error: CommError;

    /// This process's rank.
    fn rank(&self) -> Rank;
    /// The number of ranks (a resilient communicator counts its failed
    /// ones).
    fn size(&self) -> usize;
    /// The ranks known here to have failed, in increasing order (local
    /// knowledge; a resilient communicator adds the ranks its repairs
    /// excluded).
    fn failed_ranks(&self) -> Vec<Rank>;
    /// The number of failed ranks.
    fn fault_count(&self) -> usize {
        self.failed_ranks().len()
    }
    /// Whether the communicator was revoked (as known here).
    fn is_revoked(&self) -> bool;
    /// Revokes the communicator at every member: after a revocation by any
    /// member, the pending and later operations of every member return a
    /// fault error. This is what lets a guard interrupt the communicator it
    /// guards.
    ///
    /// # Errors
    /// `Unsupported` (or the decorator's equivalent) when the decorator
    /// cannot be revoked; the core's revoke errors.
    fn revoke(&self) -> Result<(), Self::Error>;

    /// Sends `buf` to `dest` (see [`Comm::send`](crate::Comm::send)).
    ///
    /// # Errors
    /// See the implementations.
    fn send_bytes(&self, buf: &[u8], dest: Rank, tag: Tag) -> Result<Outcome, Self::Error>;
    /// Receives into `buf`, a whole number of `elem`-byte elements (see
    /// [`Comm::recv`](crate::Comm::recv)); `None` when the receive was skipped.
    ///
    /// # Errors
    /// See the implementations.
    fn recv_bytes(
        &self,
        buf: &mut [u8],
        elem: usize,
        src: Source,
        tag: TagMatch,
    ) -> Result<Option<Status>, Self::Error>;
    /// Waits for a matching message and describes it (see
    /// [`Comm::probe`](crate::Comm::probe)); `None` when the probe was skipped.
    ///
    /// # Errors
    /// See the implementations.
    fn probe(&self, src: Source, tag: TagMatch) -> Result<Option<Status>, Self::Error>;
    /// Describes a matching message if one is here (see [`Comm::iprobe`](crate::Comm::iprobe)).
    ///
    /// # Errors
    /// See the implementations.
    fn iprobe(&self, src: Source, tag: TagMatch) -> Result<Option<Status>, Self::Error>;
    /// Starts sending `buf` inside `scope` (see [`Comm::isend`](crate::Comm::isend)).
    ///
    /// # Errors
    /// See the implementations.
    fn isend_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        buf: &'s [u8],
        dest: Rank,
        tag: Tag,
    ) -> Result<PendingOp<'s, Self::Error>, Self::Error>;
    /// Starts receiving into `buf` inside `scope` (see [`Comm::irecv`](crate::Comm::irecv)).
    ///
    /// # Errors
    /// See the implementations.
    fn irecv_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [u8],
        elem: usize,
        src: Source,
        tag: TagMatch,
    ) -> Result<PendingOp<'s, Self::Error>, Self::Error>;

    /// Blocks until every (live) rank has called it.
    ///
    /// # Errors
    /// See the implementations.
    fn barrier(&self) -> Result<Outcome, Self::Error>;
    /// Broadcasts `buf` from `root`.
    ///
    /// # Errors
    /// See the implementations.
    fn bcast_bytes(&self, buf: &mut [u8], root: Rank) -> Result<Outcome, Self::Error>;
    /// Combines every rank's `send` with `op` into `recv` at `root`.
    ///
    /// # Errors
    /// See the implementations.
    fn reduce_dyn(
        &self,
        send: &[u8],
        recv: &mut [u8],
        op: DynOp<'_>,
        root: Rank,
    ) -> Result<Outcome, Self::Error>;
    /// Combines every rank's `send` with `op` into every rank's `recv`.
    ///
    /// # Errors
    /// See the implementations.
    fn allreduce_dyn(
        &self,
        send: &[u8],
        recv: &mut [u8],
        op: DynOp<'_>,
    ) -> Result<Outcome, Self::Error>;
    /// Collects every rank's `send` into `recv` at `root`, at the rank's
    /// position.
    ///
    /// # Errors
    /// See the implementations.
    fn gather_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        root: Rank,
    ) -> Result<Outcome, Self::Error>;
    /// Sends block `i` of `send` at `root` to rank `i`.
    ///
    /// # Errors
    /// See the implementations.
    fn scatter_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        root: Rank,
    ) -> Result<Outcome, Self::Error>;
    /// Collects every rank's `send` into every rank's `recv`.
    ///
    /// # Errors
    /// See the implementations.
    fn allgather_bytes(&self, send: &[u8], recv: &mut [u8]) -> Result<Outcome, Self::Error>;
    /// Block `j` of `send` goes to rank `j`, into block `i` of its `recv`.
    ///
    /// # Errors
    /// See the implementations.
    fn alltoall_bytes(&self, send: &[u8], recv: &mut [u8]) -> Result<Outcome, Self::Error>;

    /// A new communicator with the same ranks (collective), boxed.
    ///
    /// # Errors
    /// See the implementations.
    fn dup_boxed(&self) -> Result<BoxedComm<Self::Error>, Self::Error>;
    /// One communicator per `color`, ranks ordered by `key` then rank,
    /// boxed; `None` takes part but gets no communicator (collective).
    ///
    /// # Errors
    /// See the implementations.
    fn split_boxed(
        &self,
        color: Option<u32>,
        key: i32,
    ) -> Result<Option<BoxedComm<Self::Error>>, Self::Error>;
    /// [`Communicator::dup_boxed`], of the same type.
    ///
    /// # Errors
    /// See the implementations.
    fn dup(&self) -> Result<Self, Self::Error>
    where
        Self: Sized;
    /// [`Communicator::split_boxed`], of the same type.
    ///
    /// # Errors
    /// See the implementations.
    fn split(&self, color: Option<u32>, key: i32) -> Result<Option<Self>, Self::Error>
    where
        Self: Sized;
}

/// `buf` as bytes (zero-sized element types are refused).
pub(crate) fn bytes<T: Pod>(buf: &[T]) -> Result<&[u8], Error> {
    bytemuck::try_cast_slice(buf).map_err(|e| zst::<T>(e))
}

/// See [`bytes`].
pub(crate) fn bytes_mut<T: Pod>(buf: &mut [T]) -> Result<&mut [u8], Error> {
    bytemuck::try_cast_slice_mut(buf).map_err(|e| zst::<T>(e))
}

fn zst<T>(e: bytemuck::PodCastError) -> Error {
    Error::InvalidArgument(format!(
        "a buffer of {} cannot be sent as bytes: {e}",
        std::any::type_name::<T>()
    ))
}

/// The typed methods of every [`Communicator`] (implemented for all of
/// them, trait objects included).
pub trait CommunicatorExt: Communicator {
    /// Sends `buf` to `dest` with `tag`.
    ///
    /// # Errors
    /// As [`Communicator::send_bytes`].
    fn send<T: Pod>(
        &self,
        buf: &[T],
        dest: impl Into<Rank>,
        tag: impl Into<Tag>,
    ) -> Result<Outcome, Self::Error> {
        self.send_bytes(bytes(buf)?, dest.into(), tag.into())
    }
    /// Receives into `buf` from `src` (a rank, or any).
    ///
    /// # Errors
    /// As [`Communicator::recv_bytes`].
    fn recv<T: Pod>(
        &self,
        buf: &mut [T],
        src: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<Option<Status>, Self::Error> {
        let elem = std::mem::size_of::<T>();
        self.recv_bytes(bytes_mut(buf)?, elem, src.into(), tag.into())
    }
    /// Starts sending `buf` inside `scope`.
    ///
    /// # Errors
    /// As [`Communicator::isend_bytes`].
    fn isend<'s, T: Pod>(
        &self,
        scope: &'s Scope<'s, '_>,
        buf: &'s [T],
        dest: impl Into<Rank>,
        tag: impl Into<Tag>,
    ) -> Result<PendingOp<'s, Self::Error>, Self::Error> {
        self.isend_bytes(scope, bytes(buf)?, dest.into(), tag.into())
    }
    /// Starts receiving into `buf` inside `scope`.
    ///
    /// # Errors
    /// As [`Communicator::irecv_bytes`].
    fn irecv<'s, T: Pod>(
        &self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [T],
        src: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<PendingOp<'s, Self::Error>, Self::Error> {
        let elem = std::mem::size_of::<T>();
        self.irecv_bytes(scope, bytes_mut(buf)?, elem, src.into(), tag.into())
    }
    /// Broadcasts `buf` from `root`.
    ///
    /// # Errors
    /// As [`Communicator::bcast_bytes`].
    fn bcast<T: Pod>(&self, buf: &mut [T], root: impl Into<Rank>) -> Result<Outcome, Self::Error> {
        self.bcast_bytes(bytes_mut(buf)?, root.into())
    }
    /// Combines every rank's `send` with `op` into `recv` at `root`.
    ///
    /// # Errors
    /// As [`Communicator::reduce_dyn`].
    fn reduce<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: &Op<T>,
        root: impl Into<Rank>,
    ) -> Result<Outcome, Self::Error> {
        self.reduce_dyn(bytes(send)?, bytes_mut(recv)?, DynOp::new(op), root.into())
    }
    /// Combines every rank's `send` with `op` into every rank's `recv`.
    ///
    /// # Errors
    /// As [`Communicator::allreduce_dyn`].
    fn allreduce<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: &Op<T>,
    ) -> Result<Outcome, Self::Error> {
        self.allreduce_dyn(bytes(send)?, bytes_mut(recv)?, DynOp::new(op))
    }
    /// Collects every rank's `send` into `recv` at `root`.
    ///
    /// # Errors
    /// As [`Communicator::gather_bytes`].
    fn gather<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        root: impl Into<Rank>,
    ) -> Result<Outcome, Self::Error> {
        self.gather_bytes(bytes(send)?, bytes_mut(recv)?, root.into())
    }
    /// Sends block `i` of `send` at `root` to rank `i`.
    ///
    /// # Errors
    /// As [`Communicator::scatter_bytes`].
    fn scatter<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        root: impl Into<Rank>,
    ) -> Result<Outcome, Self::Error> {
        self.scatter_bytes(bytes(send)?, bytes_mut(recv)?, root.into())
    }
    /// Collects every rank's `send` into every rank's `recv`.
    ///
    /// # Errors
    /// As [`Communicator::allgather_bytes`].
    fn allgather<T: Pod>(&self, send: &[T], recv: &mut [T]) -> Result<Outcome, Self::Error> {
        self.allgather_bytes(bytes(send)?, bytes_mut(recv)?)
    }
    /// Block `j` of `send` goes to rank `j`.
    ///
    /// # Errors
    /// As [`Communicator::alltoall_bytes`].
    fn alltoall<T: Pod>(&self, send: &[T], recv: &mut [T]) -> Result<Outcome, Self::Error> {
        self.alltoall_bytes(bytes(send)?, bytes_mut(recv)?)
    }
}

impl<C: Communicator + ?Sized> CommunicatorExt for C {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_print() {
        assert_eq!(Outcome::default().to_string(), "complete");
        let o = Outcome {
            skipped: None,
            missing: vec![Rank(2), Rank(5)],
        };
        assert_eq!(o.to_string(), "missing ranks 2 5");
        assert!(!o.is_complete());
    }
}
