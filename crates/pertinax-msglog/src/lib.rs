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
//! `mpirun`, with the `mpi` feature): rank 3 dies in its 42nd iteration
//! (iteration 41, see [Fault points](#fault-points)), a new process takes
//! its place, restores its checkpoint from its buddy, and runs again from
//! there while the survivors replay the messages it needs;
//! `report.rollback` says `local`.
//!
//! # The final step: finishing the result under protection
//!
//! The protection ends where [`run`] returns. [`Report::comm`] is a plain
//! communicator outside it: a collective there (a gather of the result, a
//! reduction of a norm) fails when a rank dies after the last iteration,
//! and nothing recovers it. To finish the result of the run under the
//! protection, give [`run_and_finish`] a final step: a closure
//! `finish(&state, comm)` that runs once after the last iteration, as
//! iteration number `iterations`, with its messages and collective results
//! logged, rolled back and replayed like an iteration's; what it returns is
//! [`Report::result`]. A rank killed just after the last iteration, or
//! inside the final step, is replaced and recovered, and the result is the
//! fault-free one:
//!
//! ```no_run
//! # use pertinax::{Communicator, CommunicatorExt, Op};
//! # use pertinax_msglog::{Config, Logged};
//! # #[derive(Clone, serde::Serialize, serde::Deserialize)]
//! # struct State { x: Vec<f64>, norm: f64 }
//! # fn step(_it: u64, s: &mut State, c: &Logged) -> Result<(), pertinax::Error> { Ok(()) }
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let universe = pertinax::init()?;
//! let cfg = Config { cp_int: 10, ..Config::default() };
//! let init = || State { x: vec![1.0; 1000], norm: 0.0 };
//! let report = pertinax_msglog::run_and_finish(&universe, &cfg, 100, init, step,
//!     |s: &State, c: &Logged| {
//!         let mut max = [0.0];
//!         c.allreduce(&[s.x.iter().fold(0.0, |m: f64, v| m.max(v.abs()))], &mut max, &Op::max())?;
//!         Ok(max[0])
//!     })?;
//! println!("max |x| = {} (rollback {})", report.result, report.rollback);
//! # Ok(())
//! # }
//! ```
//!
//! Only the final agreement that ends the run follows the final step;
//! what the program does with `report.comm` after that is unprotected.
//!
//! # Fault points
//!
//! Places where `pertinax run --kill RANK@NAME#K` (or `PERTINAX_FAULTS`,
//! or a seeded schedule) kills a rank. `NAME#K` strikes at the K-th time
//! the process passes the point; hits are counted per process from its
//! start, re-executions included, and a replacement process does not get
//! the shots aimed at the rank it replaces (see [`pertinax::fault_point`]),
//! so a planned kill strikes the original process once.
//!
//! | point | where | numbering (`NAME#K`) |
//! |---|---|---|
//! | `iter` | at the start of every iteration, before the state is copied for the rollback (in every [`Mode`]) | the K-th iteration the process starts: `iter#K` is iteration K−1 until the process's first recovery; an iteration run again after a rollback counts again (a survivor that rolled back iteration `i` passes `iter` twice for it) |
//! | `finish` | at the start of the final step, just after the last iteration (also the empty final step of [`run`]; in every mode) | `finish#1` is the first final step; `finish#2` one run again after a recovery |
//! | `finish.end` | after the final step returned, before its log is committed and before the final agreement (in [`Mode::Plain`]: before `run` returns) | as `finish` |
//! | `replay` | at the start of every epoch, once the replay of the last recovery is posted (not in [`Mode::Plain`]) | `replay#1` is the start of the run (nothing to replay), `replay#K` the epoch after the (K−1)-th recovery round that succeeded at this process |
//! | `ckpt` | in each coordinated checkpoint, after this rank's image is written aside (and to its file), before the copy to the buddy ([`pertinax_checkpoint`]'s) | the K-th checkpoint the process attempts: checkpoints are taken at iterations 0, `cp_int`, `2 cp_int`, ... (not at the end), so `ckpt#K` is the one of iteration (K−1)·`cp_int` until a failure; one whose commit failed is taken again and counts again; a rollback to a committed checkpoint does not take it again |
//! | `ckpt.restore` | in the restore of a recovery round, after the restore's plan is made, before its transfers ([`pertinax_checkpoint`]'s) | the K-th restore of the process that got as far as its plan; a recovery before the first committed checkpoint restores nothing and does not count |
//!
//! # What cannot be recovered
//!
//! The checkpoints are in memory, each with a copy at the next rank (its
//! buddy). Without [`Config::ckpt_dir`], **a rank and its buddy failing
//! together** loses the rank's checkpoint, and the run ends with
//! [`Error::Checkpoint`] ([`pertinax_checkpoint::Error::Lost`]) at every
//! rank. This covers the buddy dying *during the first rank's recovery*,
//! not only at the same instant: until the recovery's restore has moved
//! the rank's image from the buddy to the replacement, the buddy's copy is
//! the only one, so a buddy killed in that recovery's agreement, its
//! `replace_failed`, or its restore before the transfers (`ckpt.restore`)
//! loses it too. After the transfers, the buddy may fail like any rank.
//! With [`Config::ckpt_dir`] the rank's file covers both cases. (See
//! [`pertinax_checkpoint`'s limits](pertinax_checkpoint#limits).) And a
//! recovery starts from the survivors: at least one process of the job
//! must live through it.
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
pub use run::{run, run_and_finish};
