//! The driver: iterations as transactions, coordinated checkpoints,
//! recovery (replace, agree on the front line, restore, replay), the
//! final step and the final agreement.
//!
//! # Protocol
//!
//! A run is a sequence of *epochs* on one communicator, each ended by
//! exactly one agreement (the core's uniform `agree`) that is not
//! all-successful, or by the final one that is:
//!
//! - an epoch posts the replay of the last recovery, then runs
//!   iterations; at the start of every iteration that is a multiple of the
//!   checkpoint interval (and not yet committed) it takes a coordinated
//!   checkpoint, whose commit is an agreement; after the last iteration
//!   it runs the final step as iteration `iterations` (logged, rolled
//!   back and replayed like any iteration, its result kept beside the
//!   state), then agrees on the end;
//! - a rank that sees a failure rolls its state back to the iteration's
//!   start, revokes the communicator (so that every rank's next
//!   operation fails), and votes "failed" in one agreement, unless the
//!   failure came out of an agreement (a checkpoint's commit, the end),
//!   which already was its vote;
//! - after a failed agreement every rank calls `replace_failed` (same
//!   size and ranks; new processes in the dead ranks' places start the
//!   program and join here as replacements) and a *recovery round* on the
//!   new communicator: every rank tells its iteration and the iterations
//!   its log covers, the checkpoints are restored where memory was lost,
//!   and the rollback is decided ([`decide`](round::decide)); the round
//!   ends with an agreement, and a failure during it starts another round.
//!
//! Because every decision follows from an agreement or from data every
//! rank received before one, all survivors make the same calls in the
//! same order, which the core's recovery calls require.

mod round;

use std::rc::Rc;
use std::time::Instant;

use pertinax::{Comm, Communicator, Error as CoreError, PendingOp, Role, Universe};
use pertinax_checkpoint::{Checkpointer, Config as CkptConfig};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::{Config, Error, Logged, Mode, Report, Rollback};

/// Why an epoch or a round ended early.
enum Stop {
    /// The rank took part in a failed agreement: recover.
    Failed,
    /// The run cannot go on.
    Fatal(Error),
}

impl From<Error> for Stop {
    fn from(e: Error) -> Stop {
        Stop::Fatal(e)
    }
}

/// A message to replay: destination, tag, payload.
type Replay = (usize, i32, Rc<[u8]>);

struct Driver<'c, S, R> {
    cfg: &'c Config,
    iterations: u64,
    lg: Logged,
    ckpt: Checkpointer,
    state: S,
    snapshot: S,
    /// The iteration this rank is at: `iterations` before the final step,
    /// `iterations + 1` after it.
    it: u64,
    /// The final step's result: `Some` exactly when `it > iterations`.
    result: Option<R>,
    has_state: bool,
    /// This process lost its memory (a replacement) and has not restored
    /// a checkpoint yet.
    fresh: bool,
    /// Iterations below this were finished by some rank before the last
    /// recovery: running them again is recomputation.
    redo_until: u64,
    rollback: Rollback,
    recoveries: u32,
    /// The state of iteration 0, until the first checkpoint is committed
    /// (a failure before it restarts everyone from there).
    initial: Option<S>,
}

/// Runs `iterations` iterations of `body` over the state made by `init`,
/// with transactional iterations, coordinated checkpoints and message
/// logging as `cfg` says, and recovers from process failures on the way
/// (see the [crate documentation](crate)).
///
/// `body(it, state, comm)` runs iteration `it`: it must be deterministic
/// (the same state and messages give the same sends and the same next
/// state), do all its communication through `comm`, and change nothing
/// outside `state` that a rerun of the iteration would change again. An
/// error that is a process failure is recovered; any other error ends the
/// run. A replacement process (started by a recovery in a dead rank's
/// place) calls `run` like the original did and joins the recovery.
///
/// The protection ends when `run` returns: [`Report::comm`] is a plain
/// communicator. To gather or reduce the result under the protection,
/// use [`run_and_finish`]; `run` is `run_and_finish` with an empty final
/// step.
///
/// # Errors
/// [`Error::InvalidConfig`]; [`Error::Body`] for a body's error that is
/// not a failure; [`Error::Unprotected`] for a failure in
/// [`Mode::Plain`]; [`Error::Checkpoint`] when the checkpoints cannot give
/// a lost state back; [`Error::State`] when the state does not encode;
/// [`Error::Core`] when a recovery call of the core fails.
pub fn run<S, I, F>(
    universe: &Universe,
    cfg: &Config,
    iterations: u64,
    init: I,
    body: F,
) -> Result<Report<S>, Error>
where
    S: Clone + Serialize + DeserializeOwned,
    I: FnOnce() -> S,
    F: FnMut(u64, &mut S, &Logged) -> Result<(), CoreError>,
{
    run_and_finish(universe, cfg, iterations, init, body, |_, _| Ok(()))
}

/// [`run`], then a *final step* under the same protection: `finish(state,
/// comm)` runs once after the last iteration, on the final state, and
/// what it returns is [`Report::result`].
///
/// The final step is where the result of the run is gathered or reduced
/// (a `gather` of every rank's part at a root, an `allreduce` of a norm,
/// a verdict). It runs as iteration number `iterations`, inside the
/// protected region: its sends and collective results are logged; a
/// failure in it (or in the final agreement that follows it) is
/// recovered like a failure in an iteration, so a rank killed just after
/// the last iteration is replaced, runs its iterations again from its
/// checkpoint and then the final step, served the collective results it
/// needs from the survivors' logs; a survivor that had finished its final
/// step keeps its result, one whose final step failed runs it again. The
/// run ends with one agreement after the final step, so every rank
/// returns with the final step done; nothing after that is protected.
///
/// `finish` must meet the conditions of an iteration (see the
/// [crate documentation](crate#when-local-rollback-is-correct)): it is
/// deterministic, communicates only through `comm`, and may run more than
/// once at a rank (side effects such as printing belong after
/// `run_and_finish` returns, from the result). It does not change the
/// state, so the result must be a function of the state (and of the
/// messages it receives). In [`Mode::Plain`] it runs once, unprotected.
///
/// ```no_run
/// use pertinax::{Communicator, CommunicatorExt};
/// use pertinax_msglog::{Config, Logged};
///
/// #[derive(Clone, serde::Serialize, serde::Deserialize)]
/// struct State { x: Vec<f64> }
///
/// fn step(_it: u64, s: &mut State, _c: &Logged) -> Result<(), pertinax::Error> {
///     for v in &mut s.x { *v = 0.5 * *v + 1.0; }
///     Ok(())
/// }
///
/// fn main() -> Result<(), Box<dyn std::error::Error>> {
///     let universe = pertinax::init()?;
///     let cfg = Config::default();
///     let init = || State { x: vec![1.0; 4] };
///     // Every rank's block at rank 0, gathered under the protection: a
///     // kill at `finish#1` or `finish.end#1` is recovered like one in an
///     // iteration, and the gather's result is the fault-free one.
///     let report = pertinax_msglog::run_and_finish(&universe, &cfg, 50, init, step,
///         |s: &State, c: &Logged| {
///             let me_root = c.rank().index() == 0;
///             let mut all = vec![0.0; if me_root { s.x.len() * c.size() } else { 0 }];
///             c.gather(&s.x, &mut all, 0)?;
///             Ok(all)
///         })?;
///     if report.comm.rank().index() == 0 {
///         println!("{} values, first {}", report.result.len(), report.result[0]);
///     }
///     Ok(())
/// }
/// ```
///
/// # Errors
/// As [`run`]; an error of `finish` that is not a failure is
/// [`Error::Body`] with `iteration` equal to `iterations`.
pub fn run_and_finish<S, R, I, F, G>(
    universe: &Universe,
    cfg: &Config,
    iterations: u64,
    init: I,
    mut body: F,
    mut finish: G,
) -> Result<Report<S, R>, Error>
where
    S: Clone + Serialize + DeserializeOwned,
    I: FnOnce() -> S,
    F: FnMut(u64, &mut S, &Logged) -> Result<(), CoreError>,
    G: FnMut(&S, &Logged) -> Result<R, CoreError>,
{
    cfg.validate()?;
    let world = universe.world();
    let state = init();
    if cfg.mode == Mode::Plain {
        return plain(world, iterations, state, &mut body, &mut finish);
    }
    let fresh = matches!(universe.role(), Role::Replacement { .. });
    let ckpt = Checkpointer::new(
        &world,
        CkptConfig {
            dir: cfg.ckpt_dir.clone(),
            ..CkptConfig::default()
        },
    )
    .map_err(Error::Checkpoint)?;
    let mut d = Driver {
        cfg,
        iterations,
        lg: Logged::new(world, cfg.mode, cfg.log_cap, 0),
        ckpt,
        snapshot: state.clone(),
        initial: Some(state.clone()),
        state,
        it: 0,
        result: None,
        has_state: !fresh,
        fresh,
        redo_until: 0,
        rollback: Rollback::None,
        // A replacement was born in a recovery.
        recoveries: fresh as u32,
    };
    let mut plan = Vec::new();
    let mut recovering = fresh;
    let result = loop {
        if recovering {
            match d.round() {
                Ok(p) => plan = p,
                Err(Stop::Failed) => {
                    d.repair()?;
                    continue;
                }
                Err(Stop::Fatal(e)) => return Err(e),
            }
        }
        match d.epoch(std::mem::take(&mut plan), &mut body, &mut finish) {
            Ok(r) => break r,
            Err(Stop::Failed) => {
                d.repair()?;
                recovering = true;
            }
            Err(Stop::Fatal(e)) => return Err(e),
        }
    };
    let (total, peak) = d.lg.with_log(|l| (l.total(), l.peak()));
    let mut stats = d.lg.with_stats(|s| s.clone());
    stats.logged_bytes = total;
    stats.log_peak_bytes = peak;
    stats.comm_s = d.lg.comm_s();
    Ok(Report {
        state: d.state,
        result,
        comm: d.lg.comm().clone(),
        rollback: d.rollback,
        recoveries: d.recoveries,
        stats,
    })
}

/// [`Mode::Plain`]: the iterations and the final step, nothing else.
fn plain<S, R, F, G>(
    world: Comm,
    iterations: u64,
    mut state: S,
    body: &mut F,
    finish: &mut G,
) -> Result<Report<S, R>, Error>
where
    F: FnMut(u64, &mut S, &Logged) -> Result<(), CoreError>,
    G: FnMut(&S, &Logged) -> Result<R, CoreError>,
{
    let lg = Logged::new(world, Mode::Plain, crate::LogCap::Unlimited, 0);
    let unprotected = |iteration: u64| {
        move |e: CoreError| {
            if e.is_fault() {
                Error::Unprotected {
                    iteration,
                    source: e,
                }
            } else {
                Error::Body {
                    iteration,
                    source: e,
                }
            }
        }
    };
    for it in 0..iterations {
        pertinax::fault_point("iter");
        lg.begin(it);
        body(it, &mut state, &lg).map_err(unprotected(it))?;
        lg.with_stats(|s| s.iterations_run += 1);
    }
    pertinax::fault_point("finish");
    lg.begin(iterations);
    let result = finish(&state, &lg).map_err(unprotected(iterations))?;
    pertinax::fault_point("finish.end");
    let mut stats = lg.with_stats(|s| s.clone());
    stats.comm_s = lg.comm_s();
    Ok(Report {
        state,
        result,
        comm: lg.comm().clone(),
        rollback: Rollback::None,
        recoveries: 0,
        stats,
    })
}

fn core(what: &'static str) -> impl FnOnce(CoreError) -> Error {
    move |source| Error::Core { what, source }
}

impl<'c, S, R> Driver<'c, S, R>
where
    S: Clone + Serialize + DeserializeOwned,
{
    fn comm(&self) -> &Comm {
        self.lg.comm()
    }

    /// An agreement: whether every member voted `ok` and none failed.
    fn vote(&self, ok: bool) -> Result<bool, Stop> {
        let a = self
            .comm()
            .agree_detailed(ok as u32)
            .map_err(core("agreeing"))?;
        Ok(a.flags == 1 && a.failed.is_empty())
    }

    /// A failure seen outside an agreement: revoke, vote "failed".
    fn failed(&self) -> Stop {
        // A revocation that fails leaves the others to notice the
        // failure themselves; the vote below is what matters.
        let _ = self.comm().revoke();
        match self.vote(false) {
            Ok(_) => Stop::Failed,
            Err(s) => s,
        }
    }

    /// A core error from an operation of an epoch or a round.
    fn on_error(&self, e: CoreError, what: &'static str) -> Stop {
        if e.is_fault() {
            self.failed()
        } else {
            Stop::Fatal(Error::Core { what, source: e })
        }
    }

    /// `replace_failed` after a failed agreement.
    fn repair(&mut self) -> Result<(), Error> {
        let r = self
            .comm()
            .replace_failed()
            .map_err(core("replacing the failed ranks"))?;
        self.lg.set_comm(r.comm);
        self.recoveries += 1;
        Ok(())
    }

    fn encode(&self) -> Result<Vec<u8>, Error> {
        postcard::to_allocvec(&self.state).map_err(|e| Error::State {
            what: "encoded",
            why: e.to_string(),
        })
    }

    /// A checkpoint of the state at the start of iteration `it`.
    fn checkpoint(&mut self) -> Result<(), Stop> {
        let t = Instant::now();
        let bytes = self.encode()?;
        let r = self.ckpt.checkpoint(self.lg.comm(), self.it, &bytes);
        let dt = t.elapsed().as_secs_f64();
        self.lg.with_stats(|s| {
            s.ckpt_s += dt;
            s.state_bytes = bytes.len() as u64;
        });
        match r {
            Ok(()) => {
                let at = self.it;
                self.lg.with_log(|l| l.restart_at(at));
                self.initial = None;
                Ok(())
            }
            // The commit's agreement was this rank's vote.
            Err(e) if e.is_fault() => {
                let _ = self.comm().revoke();
                Err(Stop::Failed)
            }
            Err(e) => Err(Stop::Fatal(Error::Checkpoint(e))),
        }
    }

    /// Runs iterations and the final step until the end (`Ok`, with the
    /// final step's result) or a failed agreement.
    fn epoch<F, G>(&mut self, plan: Vec<Replay>, body: &mut F, finish: &mut G) -> Result<R, Stop>
    where
        F: FnMut(u64, &mut S, &Logged) -> Result<(), CoreError>,
        G: FnMut(&S, &Logged) -> Result<R, CoreError>,
    {
        pertinax::scope(|s| {
            let mut pending: Vec<PendingOp<'_, CoreError>> = Vec::with_capacity(plan.len());
            for (dest, tag, data) in &plan {
                match self.lg.comm().isend_bytes(
                    s,
                    data,
                    pertinax::Rank(*dest as i32),
                    pertinax::Tag(*tag),
                ) {
                    Ok(op) => pending.push(op),
                    Err(e) => return Err(self.on_error(e, "replaying")),
                }
            }
            // After the replay is posted (a rank that dies here may have
            // sent part of it).
            pertinax::fault_point("replay");
            loop {
                if let Err(e) = progress(&mut pending) {
                    return Err(self.on_error(e, "replaying"));
                }
                if self.comm().is_revoked() {
                    return Err(self.failed());
                }
                if self.it < self.iterations
                    && self.it.is_multiple_of(self.cfg.cp_int)
                    && self.ckpt.latest() != Some(self.it)
                {
                    self.checkpoint()?;
                }
                if self.it > self.iterations {
                    for op in pending.drain(..) {
                        if let Err(e) = op.wait() {
                            return Err(self.on_error(e, "replaying"));
                        }
                    }
                    if !self.vote(true)? {
                        let _ = self.comm().revoke();
                        return Err(Stop::Failed);
                    }
                    return self.result.take().ok_or_else(|| {
                        Stop::Fatal(Error::State {
                            what: "finished",
                            why: "the final step's result is missing (a bug)".into(),
                        })
                    });
                }
                if self.it == self.iterations {
                    self.finish(finish)?;
                } else {
                    self.iteration(body)?;
                }
            }
        })
    }

    /// The final step, as the transactional iteration `iterations`: the
    /// state is not changed, so a failure only forgets the step's log.
    fn finish<G>(&mut self, finish: &mut G) -> Result<(), Stop>
    where
        G: FnMut(&S, &Logged) -> Result<R, CoreError>,
    {
        let it = self.it;
        pertinax::fault_point("finish");
        self.lg.begin(it);
        match finish(&self.state, &self.lg) {
            Ok(r) => {
                pertinax::fault_point("finish.end");
                self.lg.commit(it);
                self.result = Some(r);
                self.it += 1;
                Ok(())
            }
            Err(e) if e.is_fault() => {
                self.lg.with_log(|l| l.truncate(it));
                Err(self.failed())
            }
            Err(e) => Err(Stop::Fatal(Error::Body {
                iteration: it,
                source: e,
            })),
        }
    }

    /// One transactional iteration.
    fn iteration<F>(&mut self, body: &mut F) -> Result<(), Stop>
    where
        F: FnMut(u64, &mut S, &Logged) -> Result<(), CoreError>,
    {
        let it = self.it;
        pertinax::fault_point("iter");
        let t = Instant::now();
        self.snapshot.clone_from(&self.state);
        let dt = t.elapsed().as_secs_f64();
        self.lg.with_stats(|s| s.txn_copy_s += dt);
        self.lg.begin(it);
        match body(it, &mut self.state, &self.lg) {
            Ok(()) => {
                self.lg.commit(it);
                let redo = it < self.redo_until;
                self.lg.with_stats(|s| {
                    s.iterations_run += 1;
                    s.recomputed += redo as u64;
                });
                self.it += 1;
                Ok(())
            }
            Err(e) if e.is_fault() => {
                let t = Instant::now();
                self.state.clone_from(&self.snapshot);
                let dt = t.elapsed().as_secs_f64();
                self.lg.with_stats(|s| s.txn_copy_s += dt);
                self.lg.with_log(|l| l.truncate(it));
                Err(self.failed())
            }
            Err(e) => Err(Stop::Fatal(Error::Body {
                iteration: it,
                source: e,
            })),
        }
    }
}

/// Completes the replay sends that are done; the first error.
fn progress(pending: &mut Vec<PendingOp<'_, CoreError>>) -> Result<(), CoreError> {
    let mut i = 0;
    while i < pending.len() {
        match pending[i].test()? {
            // Completed: its result is taken, nothing is left to wait for.
            Some(_) => drop(pending.swap_remove(i)),
            None => i += 1,
        }
    }
    Ok(())
}
