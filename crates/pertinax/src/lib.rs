//! pertinax: fault-tolerant MPI-style message passing for Rust.
//!
//! A pertinax program runs as N processes (*ranks*) started by the
//! launcher, `pertinax run -n N -- program`. Ranks talk through
//! communicators: point-to-point messages matched by source and tag, and
//! collective operations. The native runtime moves data through shared
//! memory on one machine.
//!
//! # Concepts
//! - [`init`] joins the job and returns a [`Universe`]; its
//!   [`world`](Universe::world) communicator holds every rank.
//! - [`Comm`]: rank, size, [`dup`](Comm::dup), [`split`](Comm::split),
//!   [`create`](Comm::create) from a [`Group`].
//! - The operations of every communicator, plain or decorated by a
//!   recovery library, are one API: the [`Communicator`] trait and its
//!   typed extension [`CommunicatorExt`]
//!   ([`send`](CommunicatorExt::send), [`recv`](CommunicatorExt::recv),
//!   the collectives, the ULFM calls). `use pertinax::prelude::*` brings
//!   them in. Each returns what it did besides succeeding: an [`Outcome`]
//!   (always complete on a plain `Comm`), or for a receive an
//!   `Option<Status>` (`None` only when a resilient communicator skips it).
//! - Non-blocking operations return a [`Request`] inside a [`scope`] that
//!   keeps their buffers borrowed until they complete.
//! - Every call returns [`Result`]; a failed peer is an
//!   [`Error::ProcFailed`], never a panic or a hang.
//!
//! # Failure model
//!
//! pertinax follows the ULFM proposal (MPI's fault-tolerance extension, as
//! Open MPI 5 implements it): a failure is reported, never hidden, and the
//! program recovers with [`Comm::revoke`], [`Comm::agree`],
//! [`Comm::shrink`] or [`Comm::replace_failed`].
//!
//! ## What fails, and how it is known
//!
//! Processes fail by stopping: a crash, a kill, a panic that ends the
//! process, an exit without [`Universe::finalize`], or a heartbeat timeout
//! (`pertinax run --heartbeat`, after which the launcher kills the process
//! so that the model stays fail-stop). The launcher is every process's
//! parent: it sees every death and publishes it in the job's shared memory
//! before it wakes everyone, so the failure detector is *perfect* (a live
//! process is never reported failed) and fast (a survivor blocked in any
//! call learns of the death within microseconds). Messages are never lost
//! or corrupted between live processes.
//!
//! A process that called [`Universe::finalize`] (or dropped its
//! [`Universe`]) and exited normally has *finalized*, which is not a
//! failure: [`get_failed`](crate::Communicator::get_failed) does not list it, an agreement completes
//! without it and lists it in [`Agreement::finalized`] (not in
//! [`Agreement::failed`]), [`Comm::shrink`] leaves it out of the new
//! communicator (it takes part in nothing any more), and
//! [`Comm::replace_failed`] does not replace it: it keeps its place,
//! finalized. As in MPI, an operation that needs a finalized process is
//! erroneous: a point-to-point operation naming it returns
//! [`Error::ProcFailed`] rather than waiting forever, and
//! [`Comm::spawn`] and [`Comm::merge`] return `InvalidArgument`.
//!
//! ## Error semantics
//!
//! - An operation that needs a failed peer returns [`Error::ProcFailed`]:
//!   a send to it, a receive from it, and every collective on a
//!   communicator with a failed member, at every survivor, even those that
//!   do not exchange data with the dead rank (so no survivor waits for a
//!   live rank that gave up).
//! - An any-source receive returns [`Error::ProcFailedPending`] while the
//!   communicator has failed members whose failure this process has not
//!   acknowledged with [`Comm::ack_failed`]; it works again afterwards.
//! - After [`Comm::revoke`] by any member, every pending and later
//!   point-to-point and collective operation on the communicator returns
//!   [`Error::Revoked`] at every member (the revocation reaches everyone
//!   even if the revoker dies at once); the recovery calls still work.
//! - Recovery calls on one communicator ([`Comm::agree`] and its variants,
//!   [`Comm::shrink`], [`Comm::spawn`], [`Comm::merge`],
//!   [`Comm::replace_failed`]) are matched by their order, so every member
//!   must make the same ones in the same order. Two different calls in the
//!   same place return [`Error::RecoveryMismatch`] at every member that
//!   takes part, and create or start nothing.
//! - [`Error::is_fault`] tells the errors that recovery code reacts to.
//!   A process failure never surfaces as any other variant.
//!
//! ## Which outcomes are the same everywhere
//!
//! - *Uniform* (the same at every member that returns, whoever dies while
//!   the call runs): [`Comm::agree_detailed`] (the flags, `failed` and
//!   `finalized`; only `unacked` is local), [`Comm::agree`] (the flags;
//!   whether it returns `ProcFailed` depends on local acknowledgements),
//!   [`Comm::shrink`] and [`Comm::shrink_gather`] (the new communicator
//!   and the gathered values), [`Comm::replace_failed_with`] (the ranks
//!   replaced, the values, or a `SpawnFailed`), the `ProcFailed` of
//!   [`Comm::spawn`] and [`Comm::merge`], and `RecoveryMismatch`.
//! - *Not uniform*: any other collective. One that completed at a rank
//!   before that rank learned of a failure returns success there while
//!   others get `ProcFailed` (the broadcast notification problem, see
//!   ARCHITECTURE.md): a program that needs one decision agrees on it.
//!   Point-to-point errors are local by nature; [`get_failed`](crate::Communicator::get_failed) is
//!   the local view.
//!
//! ## Agreement
//!
//! [`Comm::agree`], [`Comm::shrink`], [`Comm::replace_failed`],
//! [`Comm::spawn`] and [`Comm::merge`] each run one agreement through the
//! shared memory, without a coordinator. Each member writes its
//! contribution, stamped with the communicator, the agreement's sequence
//! number and the kind of call, into a record only it writes, then waits
//! until every member has either contributed or *ended* (failed or
//! finalized). A process that has ended writes nothing more and the memory
//! outlives it, so every member decides from the same records:
//! *termination* (every live member returns), *uniform agreement* (every
//! member that returns decides the same), and *validity* (the flags are
//! the AND of the contributions, and a member is listed failed only if it
//! failed without contributing). A member that dies after contributing
//! counts as a contributor.
//!
//! ## Non-shrinking recovery
//!
//! [`Comm::replace_failed_with`] replaces the failed ranks by spares
//! (`pertinax run --spares K`) or new processes of the same program; the
//! survivors' values and the list of replaced ranks reach the replacements
//! in [`Role::Replacement`], so a replacement knows at start-up which
//! ranks restart with it and what the survivors chose (such as the
//! checkpoint to restart from). One survivor asks the launcher, which
//! publishes its answer in shared memory before it starts anything: every
//! survivor reads the same answer whether or not the asker survived, and
//! the next survivor asks if it died first. The launcher's kill plans
//! (`--kill`) apply to the job's original ranks, not to replacements.
//!
//! ## Fault points
//!
//! [`fault_point`] marks places where the launcher's `--kill RANK@NAME#K`
//! or a seeded random schedule (`--fault-seed`) kills a rank. The library
//! marks its own worst moments:
//!
//! | point | where |
//! |---|---|
//! | `ft.agree.enter` | before contributing to an agreement (agree, shrink, spawn, merge, replace_failed) |
//! | `ft.agree.contributed` | right after contributing |
//! | `ft.revoke.partial` | in a revocation, after half of the members were marked |
//! | `ft.replace.request` | in `replace_failed`, at the survivor that asks the launcher, just before it asks |
//! | `ft.spawn.started` | in a spawn or `replace_failed`, at the member that asked, once the new processes are started and before they have their assignment from it (on MPI) or the parents have the answer (native) |
//! | `comm.intercomm.enter`, `.received`, `.exchanged`, `.distributing`, `.committed` | the steps of [`Comm::intercomm_create`] |
//!
//! # Example
//! ```
//! use pertinax::prelude::*;
//!
//! let universe = pertinax::init()?;
//! let world = universe.world();
//! let (rank, size) = (world.rank().index(), world.size());
//! // Pass a token around the ring.
//! let next = (rank + 1) % size;
//! let prev = (rank + size - 1) % size;
//! let mut token = [0u64];
//! if rank == 0 {
//!     world.send(&[42u64], next, 0)?;
//!     world.recv(&mut token, prev, 0)?;
//! } else {
//!     world.recv(&mut token, prev, 0)?;
//!     world.send(&token, next, 0)?;
//! }
//! assert_eq!(token[0], 42);
//! # Ok::<(), pertinax::Error>(())
//! ```
#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod backend;
pub(crate) mod collective;
mod comm;
mod communicator;
mod dispatch;
mod group;
mod intercomm;
mod p2p;
mod pending;
mod request;
mod runtime;
mod spawn;
mod ulfm;
mod universe;

pub(crate) use pertinax_backend::{error, inject, op, types, wait};

pub use collective::LentCollective;
pub use comm::Comm;
pub use communicator::{BoxedComm, CommError, Communicator, CommunicatorExt, Completion, Outcome};
pub use error::{Error, RankList, RecoveryCall, Result};
pub use group::{Group, GroupRelation};
pub use inject::{fault_point, faults_planned};
pub use op::{Arith, Bitwise, ErasedOp, Logical, Op, Ordered, ValueIndex};
pub use pending::{
    pending_into, test_any, wait_all, wait_any, AnyResult, Pending, PendingOp, WaitError,
};
pub use request::{scope, Request, Scope};
pub use runtime::ThreadEntry;
pub use spawn::{Replaced, Role};
pub use types::{Rank, Source, Status, Tag, TagMatch, ANY_SOURCE, ANY_TAG, TAG_UB};
pub use ulfm::{Agreement, Gathered, PendingAgreement};
pub use universe::{init, Universe};
pub use wait::Backoff;

/// What a program imports: the traits every communicator's operations
/// come from, and the types their arguments and results use.
///
/// ```
/// use pertinax::prelude::*;
/// ```
pub mod prelude {
    pub use crate::{
        Comm, Communicator, CommunicatorExt, Completion, Error, Op, Outcome, Pending, PendingOp,
        Rank, Source, Status, Tag, TagMatch, ANY_SOURCE, ANY_TAG,
    };
}

/// The README's examples, compiled and run as doc tests.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The user guide's examples, compiled and run as doc tests.
#[doc = include_str!("../../../docs/user-guide.md")]
#[cfg(doctest)]
pub struct UserGuideDoctests;

/// The failure model's examples, compiled and run as doc tests.
#[doc = include_str!("../../../docs/failure-model.md")]
#[cfg(doctest)]
pub struct FailureModelDoctests;

/// Re-exported so that users can derive `Pod` for their message types.
pub use bytemuck;
