//! Resilient communicators: programs that continue with the survivors when
//! ranks fail, in the manner of Legio, built only on pertinax's public API.
//!
//! Embarrassingly parallel programs (Monte Carlo, screening, parameter
//! sweeps) lose only the failed ranks' share of the work when a rank dies;
//! what kills them is the communication library. A [`Resilient`]
//! communicator hides failures from the program:
//!
//! - **Stable ranks.** Ranks and size never change after failures; failed
//!   ranks are listed by [`Communicator::failed_ranks`].
//! - **Collectives repair and repeat.** A collective that meets a failure
//!   repairs the communicator (a shrink) and completes on the survivors, at
//!   every survivor, also when some survivors had already finished it (the
//!   *broadcast notification problem*; see "How" below).
//! - **Policies** say what happens when the rank that matters has failed
//!   (the root of a broadcast, reduce, gather or scatter, the peer of a send
//!   or receive): ignore it (the call returns and its [`Outcome`] names the
//!   skipped rank) or stop with [`Error::Failed`]. See [`Policy`] for the
//!   defaults. A collective's outcome is the same at every survivor; a
//!   point-to-point one is this rank's (see [`Decided`]). An any-source
//!   receive applies the `recv` policy to each failure of the communicator
//!   once, earliest first, when no matching message is there: `stop` returns
//!   [`Error::Failed`] naming it, `ignore` returns `Ok(None)`; the next
//!   any-source receive waits again. So it never waits forever for a dead
//!   sender (but a rank that *left*, see below, does not wake it).
//! - **Leaving.** Dropping a [`Resilient`] (or a [`Hierarchical`]) is
//!   local and never starts a collective, so a rank may return early (`?`)
//!   without hanging the others: once it has ended, their next collective
//!   reports it failed and repairs around it. [`Resilient::finish`] is the
//!   collective end (a barrier), needed under [`Check::Log`] when ranks
//!   may leave at different times.
//! - **Original positions.** gather, scatter and allgather keep every
//!   survivor's data at its original rank's position; the failed ranks'
//!   slots are reported in [`Outcome::missing`], never silently filled.
//!   The v-forms (gatherv, scatterv, allgatherv, alltoallv) take their
//!   counts and displacements per original rank; the failed ranks' blocks
//!   of the receive buffer are left as they were (also when the rank died
//!   during the call) and listed missing. gatherv and scatterv follow the
//!   gather and scatter policies for a failed root.
//! - **Scans and reduce-scatter.** scan and exscan reduce, in original
//!   rank order, over the survivors at (exscan: before) this rank; the
//!   lowest survivor's exscan leaves its buffer as it was (as MPI leaves
//!   rank 0's). reduce_scatter takes its counts per original rank and
//!   reduces over the survivors, each survivor getting its block (the
//!   failed ranks' blocks go nowhere).
//! - **What each mode offers.** [`Resilient`] under [`Check::Agree`]:
//!   every blocking collective of [`Communicator`]. Under [`Check::Log`]:
//!   all but alltoall and alltoallv ([`Error::Unsupported`]: each rank's
//!   result is its own, so no kept result can serve a laggard, and the
//!   re-run that scan and reduce_scatter use is not implemented for them).
//!   [`Hierarchical`] (agree only): all but alltoall and alltoallv; its
//!   scan, exscan, reduce_scatter and v-forms are built on its allgather,
//!   allreduce, gather and scatter (whole inputs gathered, blocks padded
//!   to the largest), so they repair as those do.
//! - **One trait.** [`Communicator`] (the core's, re-exported here with
//!   its typed extension [`CommunicatorExt`] and [`Outcome`]) is
//!   implemented by the plain [`pertinax::Comm`], by [`Resilient`],
//!   [`Hierarchical`] and [`World`] (any of them, chosen at run time), so
//!   application code is generic over it, and other decorators stack on
//!   them (a `pertinax-propagate` guard over a [`Resilient`]). This crate
//!   uses only that trait, the core's public API and its ULFM calls.
//! - **Transparency.** [`world`] returns the plain world communicator, or a
//!   resilient one when the job runs under `pertinax run --resilient`: an
//!   unchanged program becomes resilient with a launcher option, the Rust
//!   counterpart of Legio's link-time interposition.
//! - [`SharedFile`]: file output that every survivor can still write after
//!   failures, each rank's part at its original offset.
//! - **Non-blocking collectives.** [`Resilient::scope`] opens a scope in
//!   which barrier, bcast, reduce, allreduce and allgather are posted
//!   ([`NbScope::ibcast`], ...) and run while the program computes; an
//!   [`NbRequest`] is waited for or tested. Requests complete and are
//!   agreed in posting order, whatever order ranks wait in; after a
//!   failure, every request not yet agreed complete is posted again on the
//!   repaired communicator with its original inputs, and its outcome is
//!   the blocking operation's. Results land in the caller's buffers when
//!   the scope ends (the core's lending rule); blocking collectives are
//!   refused while requests are outstanding; the log check is not
//!   supported ([`Error::Unsupported`]). See [`NbScope`].
//!
//! # Example
//! ```no_run
//! use pertinax::Op;
//! use pertinax_resilient::{Communicator, CommunicatorExt};
//!
//! // Plain, resilient or guarded: any communicator, with its own errors.
//! fn work<C: Communicator + ?Sized>(comm: &C) -> Result<f64, C::Error> {
//!     let mine = comm.rank().0 as f64;
//!     let mut sum = [0.0];
//!     comm.allreduce(&[mine], &mut sum, &Op::sum())?; // over the survivors
//!     Ok(sum[0])
//! }
//!
//! let universe = pertinax::init()?;
//! let world = pertinax_resilient::world(&universe)?; // resilient with --resilient
//! let total = work(&world)?;
//! println!("sum {total}, {} rank(s) lost", world.fault_count());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # How
//!
//! A [`Resilient`] holds two communicators: one for point-to-point traffic,
//! never repaired (point-to-point between live ranks works on a
//! communicator with failed members), and one for collectives, replaced by
//! its shrink at each repair. Every collective has a sequence number.
//!
//! A failure does not reach every rank in the same operation: a broadcast
//! root can return before a leaf learns that its parent died (the
//! *broadcast notification problem*). Two checks keep the survivors in
//! step ([`Check`]):
//!
//! - [`Check::Agree`] (the default, Legio's way): an agreement after every
//!   collective decides whether it succeeded everywhere; if not, everybody
//!   repairs and repeats it. Right for every program. Where the backend's
//!   agreement carries words at the price of a flag (native: each member's
//!   record is one write to shared memory), a barrier, and a bcast, reduce
//!   or allreduce of at most 12 bytes, is that agreement alone
//!   ([`pertinax::Comm::agree_gather`]): every member contributes its data
//!   and computes the result from the records every member reads the
//!   same, so the collective is uniform by construction and the fault-free
//!   path has one agreement and no collective (members that ended without
//!   contributing are repaired away before it returns). On MPI, whose
//!   agreement carries one word, these run as collective plus agreement.
//! - [`Check::Log`] (`--resilient-check log`): no agreement on the
//!   fault-free path. A rank keeps, for each collective since the last
//!   synchronizing one (barrier, allreduce, allgather: their completion
//!   anywhere means every rank entered them), what a laggard would need:
//!   the result (broadcast, allreduce, allgather, allgatherv) or its own
//!   input (reduce, gather, scatter, their v-forms, scan, exscan,
//!   reduce_scatter: run again after the repair, over the survivors then,
//!   by the ranks that completed them alongside those that did not; so a
//!   laggard's scan, exscan or reduce_scatter may leave out a rank that the
//!   others' results include, each result matching its own outcome's
//!   `missing`). A repair is one fault-tolerant agreement
//!   ([`pertinax::Comm::shrink_gather`]) that gives every survivor the new
//!   communicator and every survivor's count of completed collectives;
//!   survivors that are ahead then replay what the laggards miss, in
//!   order, on the new communicator. Only for programs whose ranks do not
//!   wait for one another outside this communicator's collectives (a
//!   survivor blocked in a receive from a laggard cannot come back to
//!   replay for it), like NAS EP.
#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod comm;
mod file;
mod flavor;
mod layout;
mod p2p;
mod policy;
mod replay;

use std::fmt;

pub use file::SharedFile;
pub use flavor::flat::{Check, Config, Resilient};
pub use flavor::hier::{default_k, HierConfig, Hierarchical, DEFAULT_THRESHOLD};
pub use flavor::nonblocking::{NbRequest, NbScope};
pub use pertinax::{Communicator, CommunicatorExt, Outcome};
pub use policy::{Kind, OnFailure, Policy};

use pertinax::{Comm, Rank, Status, Universe};

/// The errors of resilient operations.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An error of the underlying communication (a bad argument, or, on a
    /// plain communicator, a failure).
    #[error(transparent)]
    Comm(#[from] pertinax::Error),
    /// The rank the operation depends on has failed and the policy for
    /// this kind of operation says stop.
    #[error("{kind}: rank {rank} has failed (policy: stop; {decided})", kind = .kind.name())]
    Failed {
        /// The operation kind.
        kind: Kind,
        /// The failed rank.
        rank: Rank,
        /// Whether every survivor got this error from the same call (a
        /// collective: the decision was agreed) or only this rank (a
        /// point-to-point operation: its peer's failure is local knowledge).
        decided: Decided,
    },
    /// A bad policy specification or configuration value.
    #[error("resilient configuration: {0}")]
    Policy(String),
    /// File I/O.
    #[error("{op} {path}: {source}")]
    Io {
        /// What was being done.
        op: &'static str,
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The operation is not available in this configuration (the message
    /// says which and why).
    #[error("not supported: {0}")]
    Unsupported(String),
    /// A broken invariant of this crate (a bug): reported, not a panic.
    #[error("internal error of the resilient layer: {0}")]
    Internal(String),
}

/// Who got the same answer as this rank (see [`Error::Failed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decided {
    /// Every survivor of the communicator returned this error from the same
    /// call: collectives decide their outcome together.
    Everyone,
    /// This rank alone: a point-to-point operation whose peer died; other
    /// ranks know of the failure only when they need that rank themselves.
    Locally,
}

impl Decided {
    /// How a policy decision for an operation of `kind` is reached.
    pub fn for_kind(kind: Kind) -> Decided {
        match kind {
            Kind::Send | Kind::Recv => Decided::Locally,
            Kind::Bcast | Kind::Reduce | Kind::Gather | Kind::Scatter => Decided::Everyone,
        }
    }
}

impl fmt::Display for Decided {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Decided::Everyone => "decided for every survivor",
            Decided::Locally => "seen by this rank",
        })
    }
}

impl Error {
    /// Whether this is a failure the resilient layer recovers from (or,
    /// for the layers above, a failure: a revocation of a resilient
    /// communicator is one).
    pub fn is_fault(&self) -> bool {
        matches!(self, Error::Comm(e) if e.is_fault())
    }
}

impl pertinax::CommError for Error {
    fn is_fault(&self) -> bool {
        Error::is_fault(self)
    }
}

/// The world communicator, plain or resilient as the job asks.
#[derive(Debug)]
pub enum World {
    /// `pertinax run` without `--resilient`.
    Plain(Comm),
    /// `pertinax run --resilient` (or `--resilient=hier` below the
    /// hierarchy's threshold).
    Resilient(Box<Resilient>),
    /// `pertinax run --resilient=hier` from the threshold on.
    Hierarchical(Box<Hierarchical>),
}

/// The world communicator of `universe`: resilient when the environment
/// asks for it (`PERTINAX_RESILIENT`, set by `pertinax run --resilient`,
/// with the knobs of [`Config::from_env`]), plain otherwise. Collective.
///
/// # Errors
/// A bad configuration ([`Error::Policy`]), or the errors of
/// [`Resilient::new`].
pub fn world(universe: &Universe) -> Result<World, Error> {
    let w = universe.world();
    match Config::from_env()? {
        Some(cfg) => match cfg.hier {
            Some(h) if w.size() >= h.threshold => Ok(World::Hierarchical(Box::new(
                Hierarchical::with_config(&w, cfg, h)?,
            ))),
            _ => Ok(World::Resilient(Box::new(Resilient::with_config(&w, cfg)?))),
        },
        None => Ok(World::Plain(w)),
    }
}

impl World {
    /// Whether failures are handled (the job runs with `--resilient`).
    pub fn is_resilient(&self) -> bool {
        !matches!(self, World::Plain(_))
    }

    /// Ends this rank's use of the world collectively: a barrier, then the
    /// communicator is dropped (see [`Resilient::finish`] and
    /// [`Hierarchical::finish`]; dropping alone starts no collective in
    /// either mode).
    ///
    /// # Errors
    /// The barrier's.
    pub fn finish(self) -> Result<Outcome, Error> {
        match self {
            World::Plain(c) => Ok(Communicator::barrier(&c)?),
            World::Resilient(r) => r.finish(),
            World::Hierarchical(h) => h.finish(),
        }
    }
}

/// Receive result: `None` when the receive was skipped (its source has
/// failed and the policy says ignore; for an any-source receive: a failure
/// of the communicator not reported before, see the crate documentation).
pub type Received = Option<Status>;
