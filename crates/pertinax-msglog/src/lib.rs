//! Message logging with local and hybrid rollback, for any iterative
//! kernel: the protocol of seed `message-logging-local-rollback`
//! (sections 3 to 8) as a library, so that a kernel gets transactional
//! iterations, coordinated checkpoints, sender-based payload logging and
//! the replay after a failure without writing any of them.
//!
//! # Use
//!
//! The kernel keeps everything that lives from one iteration to the next
//! in one state value `S` (`Clone + Serialize + Deserialize`), and writes
//! one iteration as a function of the iteration number, the state and a
//! communicator. [`run`] does the rest:
//!
//! ```no_run
//! use pertinax::{Communicator, CommunicatorExt, Op};
//! use pertinax_msglog::{Config, Logged};
//!
//! #[derive(Clone, serde::Serialize, serde::Deserialize)]
//! struct State { x: Vec<f64>, norm: f64 }
//!
//! fn step(_it: u64, s: &mut State, c: &Logged) -> Result<(), pertinax::Error> {
//!     let (me, n) = (c.rank().index(), c.size());
//!     let mut left = vec![0.0; s.x.len()];
//!     // Any point-to-point or collective call, through `c`.
//!     pertinax::scope(|sc| {
//!         let r = c.irecv(sc, &mut left, (me + n - 1) % n, 1)?;
//!         let q = c.isend(sc, &s.x, (me + 1) % n, 1)?;
//!         r.wait()?;
//!         q.wait().map(drop)
//!     })?;
//!     for (a, b) in s.x.iter_mut().zip(&left) { *a = 0.5 * (*a + b); }
//!     let mut sum = [0.0];
//!     c.allreduce(&[s.x.iter().sum::<f64>()], &mut sum, &Op::sum())?;
//!     s.norm = sum[0];
//!     Ok(())
//! }
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let universe = pertinax::init()?;
//!     let cfg = Config { cp_int: 10, ..Config::default() };
//!     let init = || State { x: vec![1.0; 1000], norm: 0.0 };
//!     let report = pertinax_msglog::run(&universe, &cfg, 100, init, step)?;
//!     println!("norm={} rollback={}", report.state.norm, report.rollback);
//!     Ok(())
//! }
//! ```
//!
//! Run it under `pertinax run -n 8 --kill 3@iter#42 -- prog` (or
//! `mpirun`, with the `mpi` feature): rank 3 dies in its 42nd iteration,
//! a new process takes its place, restores its checkpoint from its
//! buddy, and runs again from there while the survivors replay the
//! messages it needs; `report.rollback` says `local`.
//!
//! # What happens
//!
//! - **Transactional iterations** (section 3.1, enforced instead of asked
//!   for): before each iteration the state is copied; an iteration that
//!   fails is rolled back to the copy, so a kernel never needs hand-made
//!   temporary buffers.
//! - **Coordinated checkpoints** ([`pertinax_checkpoint`]) every
//!   [`Config::cp_int`] iterations, in memory with a copy at the next
//!   rank (and on disk with [`Config::ckpt_dir`]); a checkpoint is
//!   committed by an agreement, so every rank holds the same ones.
//! - **Sender-based payload logging** ([`Logged`]): every send is logged
//!   with its iteration, destination and tag; every collective's result
//!   too. The log starts again at each checkpoint and can be capped
//!   ([`LogCap`]).
//! - **Recovery**: the failure is noticed by some rank in its current
//!   iteration; it rolls back that iteration and revokes the communicator,
//!   every rank votes in an agreement, the dead ranks are replaced
//!   (`replace_failed`: same size and ranks), and the ranks exchange their
//!   iterations (the front line) and how far their logs reach. Then:
//!   - **local rollback** when every rank ahead of another can replay to
//!     it from its log: only the replaced ranks restore their checkpoint;
//!     the survivors keep their state at the start of their current
//!     iteration (at most one iteration lost each). Every rank replays,
//!     from its own log, the messages of the iterations the ranks behind
//!     it will run again; the lowest rank past an iteration serves its
//!     collective results; sends "into the future" (to a rank that already
//!     finished that iteration) are dropped;
//!   - **global rollback** otherwise (a capped log that does not reach
//!     back, [`Mode::Transactional`], or [`RollbackPolicy::Global`]):
//!     every rank restores the checkpoint.
//!
//!   [`Report::rollback`] says which happened. A failure during the
//!   recovery, the replay or a checkpoint starts another recovery.
//!
//! # When local rollback is correct
//!
//! The replay is exact, hence the result bitwise the fault-free one, when
//! the kernel meets these conditions (the paper's, section 3.3, plus what
//! a generic replay needs):
//!
//! 1. **Deterministic iterations**: from the same state and the same
//!    received messages, an iteration sends the same messages (same
//!    destinations, tags, contents and order per destination) and reaches
//!    the same state. Send-determinism across ranks is not needed.
//! 2. **All state in `S`**: whatever an iteration reads that an earlier
//!    iteration wrote is in the state value (or is constant); side effects
//!    outside it (files, output) may happen again.
//! 3. **All communication through the [`Logged`] communicator**, with
//!    named sources: any-source receives and probes are refused with an
//!    error, since replaying them would need their match order logged
//!    (event logging, which this library does not do). Any-tag receives
//!    from a named source are fine (one sender's messages keep their
//!    order).
//! 4. **Tags below [`FIRST_RESERVED_TAG`]**; no communicator created
//!    inside an iteration; every rank runs the same number of iterations.
//! 5. **Collectives** are the blocking ones of the `Communicator` trait.
//!    `reduce`, `gather` and `scatter` run as `allreduce`, `allgather` and
//!    `bcast` underneath (so that any rank can serve the result), and
//!    `alltoall` as logged point-to-point messages: correct, but costlier
//!    than the plain calls.
//!
//! Global rollback needs only 2 (and coordinated checkpoints), like the
//! paper says.

#![warn(missing_docs)]

mod config;
mod error;
mod log;
mod logged;
mod report;
mod run;

pub use config::{Config, LogCap, Mode, RollbackPolicy};
pub use error::Error;
pub use logged::{Logged, FIRST_RESERVED_TAG};
pub use report::{Report, Rollback, Stats};
pub use run::run;
