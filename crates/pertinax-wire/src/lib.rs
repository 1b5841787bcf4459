//! Wire formats of pertinax, defined in one place: everything that one
//! process writes and another reads, each as a typed value with its format
//! and its parser side by side (round-trip tested).
//!
//! - [`mod@env`]: the name of every `PERTINAX_*` environment variable: what
//!   the launcher hands each process (rank, size, job id, secret,
//!   inherited descriptors), and what the runtime reads whoever started
//!   it.
//! - [`fault`]: the fault plan of a process ([`env::FAULTS`]) and the
//!   names of the signals of injected faults.
//! - [`resilient`]: the settings of resilient communicators
//!   ([`env::RESILIENT`] and the variables after it) and the policy
//!   grammar.
//! - [`spawn`]: the status codes of spawn requests, written by the launcher
//!   into the shared segment.
//! - [`ctrl`]: the control protocol on the socket between each process and
//!   the launcher: bootstrap key/value exchange, finalization, and launcher
//!   notices.
//! - [`msg`]: the metadata of every message record in the shared-memory
//!   rings.
//! - [`mpirun`]: the options the harness and the benchmarks give Open
//!   MPI's `mpirun` for the MPI backend.
//! - [`rng`]: SplitMix64, the seeded generator whose streams every process
//!   must draw alike (the seeded fault schedule of [`kill`]).
//!
//! # The environment contract
//!
//! `pertinax run` sets the variables of a job, but the parts of the
//! contract below are read by the runtime however the program was started
//! (by hand, by a script, by another launcher, by a test harness), so a
//! program started without `pertinax run` can use them by setting the
//! variables itself:
//!
//! - **Fault points.** [`env::FAULTS`] holds a [`fault::Plan`], e.g.
//!   `PERTINAX_FAULTS=iteration@3:kill,*@40:panic`. `pertinax::init` reads
//!   it once, also in a singleton process (no [`env::RANK`]), and a
//!   malformed plan makes `init` fail with a message naming the shot. At the
//!   planned hit, `pertinax::fault_point` tells the launcher when there is
//!   one (so that it reports the death as injected) and dies by the planned
//!   signal; without a launcher it just dies.
//! - **Resilient communicators.** [`env::RESILIENT`],
//!   [`env::RESILIENT_K`], [`env::RESILIENT_THRESHOLD`],
//!   [`env::RESILIENT_POLICY`] and [`env::RESILIENT_CHECK`] hold a
//!   [`resilient::Settings`] (see that module for each value), read by
//!   `pertinax-resilient` when it wraps a communicator.
//! - **Tunables** ([`env::tune`]) and diagnostics
//!   ([`env::RESILIENT_TRACE`]).
//!
//! What a program cannot do without a launcher is be more than one rank:
//! [`env::RANK`] and the rest of the bootstrap (descriptors of the shared
//! segment and of the control socket, job id, secret) come from a
//! launcher that speaks [`ctrl`]. With [`env::RANK`] unset, a process is
//! a job of size 1.
#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod ctrl;
pub mod env;
pub mod fault;
pub mod kill;
pub mod mpirun;
pub mod msg;
pub mod names;
pub mod resilient;
pub mod rng;
pub mod spawn;
pub mod utc;

/// States of a process slot in the shared segment (`ProcBlock::state`),
/// written by the launcher, read by every process.
pub mod slot {
    /// Nobody occupies the slot.
    pub const EMPTY: u32 = 0;
    /// A process was started in the slot and has not ended.
    pub const RUNNING: u32 = 1;
    /// The process finalized and exited cleanly.
    pub const FINALIZED: u32 = 2;
    /// The process ended without finalizing (killed, crashed, exited early).
    pub const FAILED: u32 = 3;
}
