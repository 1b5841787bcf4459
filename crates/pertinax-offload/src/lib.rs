//! Master/booster task offload with automatic re-execution: the OmpSs
//! offload `recover` clause (seed `offload-recovery-ompss-mpi3`, sections
//! 4 to 6) as a library over pertinax's public API.
//!
//! *Masters* allocate *boosters* ([`Boosters::alloc`], the paper's
//! `deep_booster_alloc`, over any communicator that can be a [`Parent`]):
//! processes spawned for them, by default the
//! master's own program started again in a booster role. Masters offload
//! tasks, registered by name on the booster side with typed inputs and
//! outputs, onto booster *i* ([`Boosters::offload`]); a task offloaded with
//! other types than its registration's fails with
//! [`Error::TypeMismatch`] and never runs. A task knows its booster, its
//! master ([`TaskContext::master`]) and its attempt. Masters wait for them
//! ([`Boosters::taskwait`], [`Boosters::wait`], or without blocking
//! [`Boosters::poll`]). A task offloaded with
//! [`Offload::recover`] survives the failure of its booster: the library
//! notices the failure, replaces the whole booster group (by a spare
//! group, or a new spawn), and runs the task again from its original
//! input; the application never sees the failure. A task without it
//! fails with a [`TaskError`] that hands its input back.
//!
//! The semantics are the paper's:
//!
//! - **Clearance.** A finished task's output is held until its recover
//!   domain is cleared, so a re-execution always starts from the original
//!   input and nothing the master sees is ever half-updated.
//! - **Recover domains.** Tasks between two waits form the implicit
//!   domain; [`Boosters::domain`] names explicit ones, cleared by
//!   [`Boosters::wait_domain`]. Tasks of a domain may talk to each other
//!   over the boosters' communicator ([`TaskContext::comm`]); when a
//!   booster fails, every task not yet cleared is restarted, on a fresh
//!   group, in its original order.
//! - **Failure consensus.** Boosters allocated over a communicator of
//!   several masters are shared: every wait (and [`Boosters::free`]) is
//!   collective over the masters, who agree (with the core's
//!   fault-tolerant agreement) that no booster failed before anything is
//!   cleared, and recover together otherwise. A private allocation (over
//!   the self communicator) has no consensus.
//! - **Failure isolation.** A booster's failure never harms the masters
//!   (the launcher isolates spawned groups); it takes down its siblings
//!   and its own boosters (they watch for it and leave). They leave
//!   quietly ([`booster_main`]: code 0, without finalizing, so the masters
//!   see them fail): under `pertinax run`, whose status is 0 when every
//!   process exits 0 or dies of an injected fault, a job whose every
//!   booster failure was recovered exits 0. (A booster whose own task
//!   panicked exits 101, as a program that panics does.)
//! - **Nesting.** A task may allocate boosters of its own (over
//!   `ctx.universe().self_comm()`); a failure among them is recovered by
//!   that task, never above it.
//!
//! Beyond the paper: spare groups ([`Options::spares`]) so that a recovery
//! does not pay a spawn, a retry limit ([`Options::max_attempts`],
//! [`Error::RetriesExceeded`]), and replication of a task on a second
//! booster ([`Offload::replicate`]: the first successful result wins). A
//! stopped (hung) booster is a failure like any other once the runtime's
//! heartbeats notice it (`pertinax run --heartbeat MS`).
//!
//! # Fault points
//!
//! On the booster side, for plans without a victim (the only ones that
//! reach spawned processes, `PERTINAX_FAULTS=NAME@K`, which strike every
//! process reaching the point, `K` counted per process):
//!
//! | point | booster | when |
//! |---|---|---|
//! | `task` | every one | at the start of every task execution |
//! | `task.G.B` | booster `B` of group `G` of a top-level allocation | at the start of every task execution |
//! | `shutdown`, `shutdown.B` | every one, booster `B` | it receives the masters' shutdown in [`Boosters::free`] |
//!
//! `G` is the group's generation in its allocation: 0 for the group
//! allocated first, 1 for the group that replaced it after a failure (a
//! spare or a new spawn), and so on. So `PERTINAX_FAULTS=task.0.1@3` kills
//! booster 1 of the first group at its third task, once: its replacement
//! (generation 1) never reaches that point. A top-level allocation is one
//! whose masters are no boosters; nested boosters (allocated by a task)
//! have only `task`. With private allocations (over the self
//! communicator), each master has a first group of its own, and the plan
//! strikes booster `B` of each of them; over a shared allocation, it
//! strikes one process. At `shutdown`, every task of the group is
//! cleared: a kill there loses no result, and `free` neither waits for the
//! boosters nor fails. (A shot on `*` counts all of these points.)
//!
//! # Spawn slots
//!
//! Under `pertinax run`, spawned processes take slots of the job's
//! `--max-spawn`, for good (a slot is never used again), and its default
//! is the number of ranks: enough for one booster per master, without
//! spares or a single replacement. An allocation of `B` boosters with `S`
//! spare groups that is to survive `F` booster failures needs
//! `B × (1 + S + F)` slots; each private allocation needs its own, and a
//! nested allocation takes its boosters' slots at every execution of the
//! task that makes it. Start the job with `pertinax run --max-spawn N` for
//! the sum or more. When a spawn finds no slot left, the error is
//! [`Error::NoSpawnRoom`], which says the `--max-spawn` that this
//! process's allocations needed at that point (with one shared
//! allocation, what the job needs to go past it). Under `mpirun`,
//! spawning has no such limit.
//!
//! # Example
//!
//! One program, both roles: a booster serves, a master offloads.
//!
//! ```no_run
//! use pertinax_offload::{Boosters, Offload, Registry};
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let universe = pertinax::init()?;
//!     let mut tasks = Registry::new();
//!     tasks.register("square", |_ctx, x: u64| Ok(x * x));
//!     if pertinax_offload::is_booster(&universe) {
//!         pertinax_offload::booster_main(universe, &tasks);
//!     }
//!     let world = universe.world();
//!     // One booster per master, shared by all masters (failure consensus).
//!     let mut boosters = Boosters::alloc(&world, world.size())?;
//!     let me = world.rank().index();
//!     let t = boosters.offload::<u64, u64>(Offload::new("square", me).recover(), &7)?;
//!     boosters.taskwait()?;
//!     assert_eq!(boosters.take(t)?, 49);
//!     boosters.free()?;
//!     universe.finalize()?;
//!     Ok(())
//! }
//! ```
#![warn(missing_docs)]

mod booster;
mod error;
mod master;
mod parent;
mod round;
mod wire;

pub use booster::{booster_main, is_booster, serve, user_args, Ended, Registry, TaskContext};
pub use error::{Error, TaskError, TaskFailure};
pub use master::{Boosters, Domain, Offload, Options, Stats, Task, TaskState};
pub use parent::Parent;
pub use wire::BOOSTER_MARKER;
