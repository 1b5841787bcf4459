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
//! - **Reductions** take an [`ErasedOp`], the one type-erased form of an
//!   [`Op<T>`](crate::Op) ([`Op::erase`](crate::Op::erase)): it combines
//!   bytes, and the core's collectives run it as they run an `Op<T>`, so a
//!   decorator hands it down unchanged.
//! - **dup, split and shrink** come in two forms: [`Communicator::dup`],
//!   [`Communicator::split`] and [`Communicator::shrink`] return `Self`
//!   (`where Self: Sized`), the `_boxed` forms a boxed trait object.
//!
//! # Errors: an associated type
//!
//! Each communicator keeps its own error type
//! ([`Communicator::Error`](crate::Communicator::Error)): the core's [`Error`] for [`Comm`](crate::Comm),
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
//! [`PendingOp`], whose result is a [`Completion`]: a plain communicator's
//! request held inline, or a decorator's operation, boxed. [`Pending`] is
//! the one trait of every pending operation: the core's [`Request`]
//! implements it, and so do the decorators' requests (a resilient receive
//! whose failed source goes to the policy, the guard's request that turns
//! a failure into the propagated error, the resilient non-blocking
//! collectives), each with its own error type; the core's
//! [`wait_all`](crate::wait_all), [`wait_any`](crate::wait_any) and
//! [`test_any`](crate::test_any) wait for any of them.
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

mod ext;
mod plain;

use std::fmt;

use bytemuck::Pod;

pub use ext::CommunicatorExt;

use crate::op::ErasedOp;
use crate::pending::PendingOp;
use crate::{Error, Rank, Scope, Source, Status, Tag, TagMatch};

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

impl Completion {
    /// The completion of an operation of a plain communicator.
    pub(crate) fn of(status: Status) -> Completion {
        Completion {
            status: Some(status),
            outcome: Outcome::default(),
        }
    }
}

// ---- the trait ----------------------------------------------------------

/// A boxed communicator with errors `E` (what [`Communicator::dup_boxed`],
/// [`Communicator::split_boxed`] and [`Communicator::shrink_boxed`]
/// return).
pub type BoxedComm<E> = Box<dyn Communicator<Error = E>>;

/// A communicator: the plain [`Comm`](crate::Comm), or a decorator over one
/// (`pertinax-resilient`'s communicators, `pertinax-propagate`'s guard,
/// `pertinax-msglog`'s logged communicator), so that decorators stack and
/// application code is written once. Object safe; the typed methods are
/// in [`CommunicatorExt`].
///
/// This trait and [`CommunicatorExt`] are the one way to call an
/// operation on any communicator. A plain [`Comm`](crate::Comm)'s
/// point-to-point and collective operations, blocking and non-blocking,
/// are only here (a `Comm`'s [`PendingOp`] holds its request inline, with
/// no allocation); its inherent methods are the calls no decorator offers
/// (the in-place, synchronous and buffered forms, `recv_vec`, serde
/// values, foreign buffers, spawning, intercommunicators) and those of the
/// same shape (`rank`, `dup`, `agree`, ...). The contracts are the same on every
/// communicator (same arguments, same matching, same collective rules),
/// except for what a decorator does about failures, which it documents:
/// a plain `Comm` returns `ProcFailed`, a resilient communicator repairs
/// and reports an [`Outcome`], a guard turns the failure into the error
/// propagated to every rank.
///
/// # What every communicator offers
///
/// The required methods: rank and size, failures and revocation,
/// blocking and non-blocking point-to-point, the eight basic collectives,
/// `dup` and `split`. The provided methods (v-collectives, scans,
/// reduce-scatter, non-blocking collectives, agreement, shrink,
/// acknowledgement) return `Unsupported` with the reason unless the
/// communicator overrides them: [`Comm`](crate::Comm), boxed communicators
/// and the guard offer all of them; each decorator's documentation lists
/// what it does not. [`Communicator::sendrecv_bytes`] is provided for
/// every communicator from its non-blocking point-to-point.
pub trait Communicator {
    /// The error of every operation.
    type Error: CommError;

    /// This process's rank.
    fn rank(&self) -> Rank;
    /// The number of ranks (a resilient communicator counts its failed
    /// ones).
    fn size(&self) -> usize;
    /// The ranks of [`Communicator::get_failed`], as this communicator's
    /// ranks in increasing order (no error: nothing known is empty).
    fn failed_ranks(&self) -> Vec<Rank>;
    /// The group of this communicator's processes known here to have
    /// failed (`MPIX_Comm_get_failed`; on an intercommunicator, of the
    /// remote group): local knowledge, another member may know more or
    /// fewer at the same moment (agree for one view). A plain
    /// communicator lists them in the order this process learned of them
    /// (the order [`Communicator::ack_failed`] counts in); a resilient one
    /// lists its failed original ranks, those its repairs excluded
    /// included, in increasing order. Members that finalized are not
    /// failed.
    ///
    /// # Errors
    /// `CommFreed`, `Finalized`.
    fn get_failed(&self) -> Result<crate::Group, Self::Error>;
    /// The number of failed ranks.
    fn fault_count(&self) -> usize {
        self.failed_ranks().len()
    }
    /// Whether the communicator was revoked (as known here).
    fn is_revoked(&self) -> bool;
    /// Revokes the communicator at every member (`MPIX_Comm_revoke`): after
    /// a revocation by any member, the pending and later operations of
    /// every member return a fault error. This is what lets a guard
    /// interrupt the communicator it guards.
    ///
    /// # Errors
    /// `Unsupported` (or the decorator's equivalent) when the decorator
    /// cannot be revoked; the core's revoke errors.
    fn revoke(&self) -> Result<(), Self::Error>;
    /// The error of operation `op` when this communicator does not offer
    /// it: what every provided operation that is not overridden returns
    /// (`op` is the operation's MPI name without `_bytes`: `"scan"`,
    /// `"gatherv"`, `"ibarrier"`, `"ack_failed"`, `"agree"`, `"shrink"`,
    /// ...). A decorator overrides this one method to say why, rather than
    /// each operation.
    fn unsupported(&self, op: &'static str) -> Self::Error {
        Error::Unsupported { feature: op }.into()
    }

    /// This communicator as the plain [`Comm`](crate::Comm) it is (a
    /// `Comm`, or a box of one), else `None`: the typed reductions of
    /// [`CommunicatorExt`] hand a plain communicator the typed operation
    /// as it is (its monomorphized loop, nothing allocated) rather than
    /// an [`ErasedOp`]. A decorator keeps the default.
    fn as_plain(&self) -> Option<&crate::Comm> {
        None
    }

    // ---- point-to-point ----

    /// Sends `buf` to `dest` (see [`CommunicatorExt::send`]).
    ///
    /// # Errors
    /// See the implementations.
    fn send_bytes(&self, buf: &[u8], dest: Rank, tag: Tag) -> Result<Outcome, Self::Error>;
    /// Receives into `buf`, a whole number of `elem`-byte elements (see
    /// [`CommunicatorExt::recv`]); `None` when the receive was
    /// skipped.
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
    /// Sends `send` to `dest` and receives into `recv` (whole `elem`-byte
    /// elements) at once, so that a ring of exchanges cannot deadlock (see
    /// [`CommunicatorExt::sendrecv`]). Provided: a receive and
    /// a send started together in a scope, then both waited for; the first
    /// failure returns at once.
    ///
    /// # Errors
    /// The receive's or the send's error.
    #[allow(clippy::too_many_arguments)]
    fn sendrecv_bytes(
        &self,
        send: &[u8],
        dest: Rank,
        sendtag: Tag,
        recv: &mut [u8],
        elem: usize,
        src: Source,
        recvtag: TagMatch,
    ) -> Result<Option<Status>, Self::Error> {
        crate::scope(|s| {
            let r = self.irecv_bytes(s, recv, elem, src, recvtag)?;
            let q = self.isend_bytes(s, send, dest, sendtag)?;
            // Either failure returns at once (a receive still pending is
            // cancelled when dropped), not after the other completes.
            let mut done = crate::wait_all(&mut [r, q]).map_err(|e| e.error)?;
            Ok(done.swap_remove(0).status)
        })
    }
    /// Waits for a matching message and describes it (see
    /// [`Communicator::probe`]); `None` when the probe was
    /// skipped.
    ///
    /// # Errors
    /// See the implementations.
    fn probe(&self, src: Source, tag: TagMatch) -> Result<Option<Status>, Self::Error>;
    /// Describes a matching message if one is here, without waiting
    /// (`MPI_Iprobe`): `None` when none is.
    ///
    /// # Errors
    /// As [`Communicator::probe`]; on a plain communicator, an
    /// any-source probe with an unacknowledged failure returns
    /// `ProcFailedPending`, as the receive would.
    fn iprobe(&self, src: Source, tag: TagMatch) -> Result<Option<Status>, Self::Error>;
    /// Starts sending `buf` inside `scope` (`MPI_Isend`); it stays
    /// borrowed until the operation completes (at once for a message up to
    /// the eager limit, whose data is copied out; see
    /// [`Request`](crate::Request) for when a larger one completes).
    ///
    /// # Errors
    /// `InvalidRank`, `InvalidTag`, `CommFreed`, `Finalized` at once. A
    /// failure (on a plain communicator `ProcFailed` for a destination
    /// known to be gone, even if it died while this rank was busy
    /// elsewhere; `Revoked`) is the operation's result, returned by its
    /// wait.
    fn isend_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        buf: &'s [u8],
        dest: Rank,
        tag: Tag,
    ) -> Result<PendingOp<'s, Self::Error>, Self::Error>;
    /// Starts receiving into `buf`, whose elements are `elem` bytes,
    /// inside `scope` (`MPI_Irecv`); it stays borrowed until the operation
    /// completes, is cancelled, or is dropped before it matched a message
    /// (which cancels it).
    ///
    /// # Errors
    /// `InvalidRank`, `InvalidTag`, `CommFreed`, `Finalized` at once; the
    /// others of [`CommunicatorExt::recv`](crate::CommunicatorExt::recv)
    /// when waited for.
    fn irecv_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [u8],
        elem: usize,
        src: Source,
        tag: TagMatch,
    ) -> Result<PendingOp<'s, Self::Error>, Self::Error>;
    /// Sends `buf` in synchronous mode (`MPI_Ssend`; see
    /// [`CommunicatorExt::ssend`]).
    ///
    /// # Errors
    /// `Unsupported` unless the communicator offers it.
    fn ssend_bytes(&self, buf: &[u8], dest: Rank, tag: Tag) -> Result<Outcome, Self::Error> {
        let _ = (buf, dest, tag);
        Err(self.unsupported("ssend"))
    }
    /// Starts a synchronous send inside `scope` (`MPI_Issend`; see
    /// [`CommunicatorExt::issend`]).
    ///
    /// # Errors
    /// `Unsupported` unless the communicator offers it.
    fn issend_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        buf: &'s [u8],
        dest: Rank,
        tag: Tag,
    ) -> Result<PendingOp<'s, Self::Error>, Self::Error> {
        let _ = (scope, buf, dest, tag);
        Err(self.unsupported("issend"))
    }
    /// Sends `buf` in buffered mode (`MPI_Bsend`; see
    /// [`CommunicatorExt::bsend`]).
    ///
    /// # Errors
    /// `Unsupported` unless the communicator offers it.
    fn bsend_bytes(&self, buf: &[u8], dest: Rank, tag: Tag) -> Result<Outcome, Self::Error> {
        let _ = (buf, dest, tag);
        Err(self.unsupported("bsend"))
    }

    // ---- collectives ----

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
    /// Combines every rank's `send` with `op` into `recv` at `root` (see
    /// [`CommunicatorExt::reduce`]).
    ///
    /// # Errors
    /// See the implementations.
    fn reduce_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        op: &ErasedOp,
        root: Rank,
    ) -> Result<Outcome, Self::Error>;
    /// Combines every rank's `send` with `op` into every rank's `recv`.
    ///
    /// # Errors
    /// See the implementations.
    fn allreduce_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        op: &ErasedOp,
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
    /// [`Communicator::allreduce_bytes`] in place (`MPI_IN_PLACE`): `buf`
    /// is the contribution and the result. Provided: over a copy of `buf`.
    ///
    /// # Errors
    /// As [`Communicator::allreduce_bytes`].
    fn allreduce_in_place_bytes(
        &self,
        buf: &mut [u8],
        op: &ErasedOp,
    ) -> Result<Outcome, Self::Error> {
        let send = buf.to_vec();
        self.allreduce_bytes(&send, buf, op)
    }
    /// [`Communicator::reduce_bytes`] in place: `buf` is the contribution,
    /// and at the root the result. Provided: over a copy of `buf`.
    ///
    /// # Errors
    /// As [`Communicator::reduce_bytes`].
    fn reduce_in_place_bytes(
        &self,
        buf: &mut [u8],
        op: &ErasedOp,
        root: Rank,
    ) -> Result<Outcome, Self::Error> {
        let send = buf.to_vec();
        if self.rank() == root {
            self.reduce_bytes(&send, buf, op, root)
        } else {
            self.reduce_bytes(&send, &mut [], op, root)
        }
    }
    /// [`Communicator::allgather_bytes`] in place: this rank's block is
    /// already at its position in `buf`. Provided: over a copy of the
    /// block.
    ///
    /// # Errors
    /// `InvalidArgument` if `buf` is not `size` equal blocks; otherwise as
    /// [`Communicator::allgather_bytes`].
    fn allgather_in_place_bytes(&self, buf: &mut [u8]) -> Result<Outcome, Self::Error> {
        let n = self.size().max(1);
        if !buf.len().is_multiple_of(n) {
            return Err(Error::InvalidArgument(format!(
                "allgather in place: {} bytes are not {n} equal blocks",
                buf.len()
            ))
            .into());
        }
        let block = buf.len() / n;
        let at = self.rank().index() * block;
        let mine = buf
            .get(at..at + block)
            .map(<[u8]>::to_vec)
            .unwrap_or_default();
        self.allgather_bytes(&mine, buf)
    }
    /// Block `j` of `send` goes to rank `j`, into block `i` of its `recv`;
    /// the blocks are whole `elem`-byte elements.
    ///
    /// # Errors
    /// See the implementations.
    fn alltoall_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        elem: usize,
    ) -> Result<Outcome, Self::Error>;

    /// Inclusive prefix reduction (see [`CommunicatorExt::scan`]).
    ///
    /// # Errors
    /// `Unsupported` unless the communicator offers it.
    fn scan_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        op: &ErasedOp,
    ) -> Result<Outcome, Self::Error> {
        let _ = (send, recv, op);
        Err(self.unsupported("scan"))
    }
    /// Exclusive prefix reduction (see [`CommunicatorExt::exscan`]).
    ///
    /// # Errors
    /// `Unsupported` unless the communicator offers it.
    fn exscan_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        op: &ErasedOp,
    ) -> Result<Outcome, Self::Error> {
        let _ = (send, recv, op);
        Err(self.unsupported("exscan"))
    }
    /// Reduces `send` and scatters the result, `counts[i]` elements of
    /// `op` to rank `i` (see [`CommunicatorExt::reduce_scatter`]).
    ///
    /// # Errors
    /// `Unsupported` unless the communicator offers it.
    fn reduce_scatter_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        op: &ErasedOp,
    ) -> Result<Outcome, Self::Error> {
        let _ = (send, recv, counts, op);
        Err(self.unsupported("reduce_scatter"))
    }
    /// [`Communicator::gather_bytes`] with `counts[i]` elements of `elem`
    /// bytes from rank `i`, placed at element `displs[i]` (see
    /// [`CommunicatorExt::gatherv`]).
    ///
    /// # Errors
    /// `Unsupported` unless the communicator offers it.
    #[allow(clippy::too_many_arguments)]
    fn gatherv_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        displs: &[usize],
        elem: usize,
        root: Rank,
    ) -> Result<Outcome, Self::Error> {
        let _ = (send, recv, counts, displs, elem, root);
        Err(self.unsupported("gatherv"))
    }
    /// [`Communicator::scatter_bytes`] with `counts[i]` elements of `elem`
    /// bytes, from element `displs[i]`, to rank `i` (see
    /// [`CommunicatorExt::scatterv`]).
    ///
    /// # Errors
    /// `Unsupported` unless the communicator offers it.
    #[allow(clippy::too_many_arguments)]
    fn scatterv_bytes(
        &self,
        send: &[u8],
        counts: &[usize],
        displs: &[usize],
        recv: &mut [u8],
        elem: usize,
        root: Rank,
    ) -> Result<Outcome, Self::Error> {
        let _ = (send, counts, displs, recv, elem, root);
        Err(self.unsupported("scatterv"))
    }
    /// [`Communicator::allgather_bytes`] with `counts[i]` elements of
    /// `elem` bytes from rank `i` at element `displs[i]` (see
    /// [`CommunicatorExt::allgatherv`]).
    ///
    /// # Errors
    /// `Unsupported` unless the communicator offers it.
    fn allgatherv_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        displs: &[usize],
        elem: usize,
    ) -> Result<Outcome, Self::Error> {
        let _ = (send, recv, counts, displs, elem);
        Err(self.unsupported("allgatherv"))
    }
    /// [`Communicator::alltoall_bytes`] with per-rank counts and
    /// displacements in `elem`-byte elements (see
    /// [`CommunicatorExt::alltoallv`]).
    ///
    /// # Errors
    /// `Unsupported` unless the communicator offers it.
    #[allow(clippy::too_many_arguments)]
    fn alltoallv_bytes(
        &self,
        send: &[u8],
        scounts: &[usize],
        sdispls: &[usize],
        recv: &mut [u8],
        rcounts: &[usize],
        rdispls: &[usize],
        elem: usize,
    ) -> Result<Outcome, Self::Error> {
        let _ = (send, scounts, sdispls, recv, rcounts, rdispls, elem);
        Err(self.unsupported("alltoallv"))
    }

    // ---- non-blocking collectives ----

    /// Starts a barrier inside `scope` (`MPI_Ibarrier`).
    ///
    /// # Errors
    /// `Unsupported` unless the communicator offers it.
    fn ibarrier<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
    ) -> Result<PendingOp<'s, Self::Error>, Self::Error> {
        let _ = scope;
        Err(self.unsupported("ibarrier"))
    }
    /// Starts a broadcast inside `scope`.
    ///
    /// # Errors
    /// `Unsupported` unless the communicator offers it.
    fn ibcast_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [u8],
        root: Rank,
    ) -> Result<PendingOp<'s, Self::Error>, Self::Error> {
        let _ = (scope, buf, root);
        Err(self.unsupported("ibcast"))
    }
    /// Starts a reduction to `root` inside `scope`.
    ///
    /// # Errors
    /// `Unsupported` unless the communicator offers it.
    fn ireduce_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        send: &'s [u8],
        recv: &'s mut [u8],
        op: &ErasedOp,
        root: Rank,
    ) -> Result<PendingOp<'s, Self::Error>, Self::Error> {
        let _ = (scope, send, recv, op, root);
        Err(self.unsupported("ireduce"))
    }
    /// Starts an allreduce inside `scope`.
    ///
    /// # Errors
    /// `Unsupported` unless the communicator offers it.
    fn iallreduce_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        send: &'s [u8],
        recv: &'s mut [u8],
        op: &ErasedOp,
    ) -> Result<PendingOp<'s, Self::Error>, Self::Error> {
        let _ = (scope, send, recv, op);
        Err(self.unsupported("iallreduce"))
    }
    /// Starts an allgather inside `scope`.
    ///
    /// # Errors
    /// `Unsupported` unless the communicator offers it.
    fn iallgather_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        send: &'s [u8],
        recv: &'s mut [u8],
    ) -> Result<PendingOp<'s, Self::Error>, Self::Error> {
        let _ = (scope, send, recv);
        Err(self.unsupported("iallgather"))
    }
    /// Starts an all-to-all of `elem`-byte elements inside `scope`.
    ///
    /// # Errors
    /// `Unsupported` unless the communicator offers it.
    fn ialltoall_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        send: &'s [u8],
        recv: &'s mut [u8],
        elem: usize,
    ) -> Result<PendingOp<'s, Self::Error>, Self::Error> {
        let _ = (scope, send, recv, elem);
        Err(self.unsupported("ialltoall"))
    }

    // ---- ULFM ----

    /// Acknowledges the first `n` failures of
    /// [`Communicator::failed_ranks`] (all with `usize::MAX`); returns how
    /// many are acknowledged now (`MPIX_Comm_ack_failed`, see
    /// [`Comm::ack_failed`](crate::Comm::ack_failed)).
    ///
    /// # Errors
    /// `Unsupported` unless the communicator offers it.
    fn ack_failed(&self, n: usize) -> Result<usize, Self::Error> {
        let _ = n;
        Err(self.unsupported("ack_failed"))
    }
    /// The bitwise AND of every live member's `flags`, the same at every
    /// member whatever fails meanwhile (`MPIX_Comm_agree`, see
    /// [`Comm::agree`](crate::Comm::agree)).
    ///
    /// # Errors
    /// `Unsupported` unless the communicator offers it.
    fn agree(&self, flags: u32) -> Result<u32, Self::Error> {
        let _ = flags;
        Err(self.unsupported("agree"))
    }
    /// A new communicator of the live members (`MPIX_Comm_shrink`, see
    /// [`Comm::shrink`](crate::Comm::shrink)), boxed.
    ///
    /// # Errors
    /// `Unsupported` unless the communicator offers it.
    fn shrink_boxed(&self) -> Result<BoxedComm<Self::Error>, Self::Error> {
        Err(self.unsupported("shrink"))
    }
    /// [`Communicator::shrink_boxed`], of the same type.
    ///
    /// # Errors
    /// `Unsupported` unless the communicator offers it.
    fn shrink(&self) -> Result<Self, Self::Error>
    where
        Self: Sized,
    {
        Err(self.unsupported("shrink"))
    }

    // ---- communicators ----

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
