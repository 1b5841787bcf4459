//! Resilient communicators against the plain one, on identical code.
//!
//! **Overhead** ([`resilient`]). The job makes every communicator it is
//! asked for: `plain` (a duplicate of the world), `agree` and `log`
//! ([`Resilient::with_config`] with `Check::Agree` or `Check::Log`), `hier`
//! ([`Hierarchical::with_config`], `Check::Agree`, built whatever the rank
//! count; k from the job's `pertinax run --resilient=hier --resilient-k K`,
//! else [`pertinax_resilient::default_k`]). Every measurement goes through
//! one generic function over the [`Communicator`] trait, so they all run
//! the same code and differ only in the communicator. Per (op, bytes) case
//! and communicator (in an order that rotates from case to case): a
//! barrier on the communicator (which empties a replay log), `warmup`
//! untimed calls, a barrier on the world, `reps` timed calls; each rank's
//! mean time per call, the maximum over ranks (a rooted operation's cost
//! shows at the ranks that are not the root, so rank 0's time alone would
//! not do), as the Legio paper's "each call repeated, times accumulated"
//! method. Then one call with rank-dependent data checks the result on
//! every rank. Barriers and reductions of the timings run on the world,
//! outside the timed calls. Rank 0 prints:
//!
//! ```text
//! RES comm=log op=bcast bytes=1 ranks=8 t_max_us=2.345 t_avg_us=2.100 reps=2000 warmup=200
//! ```
//!
//! (`hier` lines end with ` k=K`, the local group size.)
//!
//! **Repair** ([`repair`]). Every rank loops on a one-element allreduce on a
//! resilient communicator (flat, or [`Hierarchical`] when the job was
//! started with `pertinax run --resilient=hier`), passing the fault point
//! [`ITER_POINT`] at the top of each iteration; the launcher kills the
//! victim there (`pertinax run --kill V@resilient.iter#K`). Each survivor
//! times every call and finds the one during which the communicator was
//! repaired (the call that spans the failure: detection + repair + redo;
//! in the hierarchical mode, a rank the repair did not involve finds the
//! first result with a missing rank instead); its extra time is that call's
//! time minus the median of the survivor's fault-free calls before it (after
//! `warmup` untimed ones). The lowest survivor prints the maximum over
//! survivors:
//!
//! ```text
//! REPAIR shape=flat check=log ranks=8 survivors=7 spanned=7 failed=7 repairs=1 iters=450
//!   span_iter=349..349 repair_max_us=812.5 repair_min_us=640.2 span_max_us=830.1
//!   base_med_us=17.6 after_med_us=16.9 proc_max_us=402.7 bad=0
//! ```
//!
//! (on one line). `proc_max_us` is the most time a survivor spent inside
//! the library's repair procedure (`Resilient::repair_time`,
//! `Hierarchical::repair_time`: shrinks, joins, replays; no detection, no
//! redo), the Legio paper's repair time. `spanned` counts the survivors that saw the failure,
//! `bad` the calls whose sum was not the number of contributors. A
//! hierarchical line (`shape=hier`) ends with ` k=3 masters=0,3,6
//! deputies=1,4,7 local_repairs=1 global_repairs=0`: the local group size,
//! the masters and the deputies when the communicator was made (`-`:
//! none), and the most local and global repairs any survivor made.

use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use pertinax::{Comm, Op};
use pertinax_resilient::{
    Communicator, CommunicatorExt, Config, Error, HierConfig, Hierarchical, Outcome, Resilient,
};

use crate::cli::{reps_for, CollOp, ResCheck, ResComm};
use crate::stats::median;

/// The fault point at the top of each iteration of the repair loop.
pub const ITER_POINT: &str = "resilient.iter";

/// What one overhead launch measures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResParams {
    /// The communicators, in the order of the first case.
    pub comms: Vec<ResComm>,
    /// The (op, bytes) cases, in order.
    pub cases: Vec<(CollOp, usize)>,
    /// Calls per timed series up to 4 KiB (see [`reps_for`]).
    pub reps: usize,
    /// Untimed calls before a series of `reps` calls (scaled with it).
    pub warmup: usize,
}

/// What one repair launch does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RepairParams {
    /// The resilient communicator's check.
    pub check: ResCheck,
    /// Allreduce iterations in all.
    pub iters: usize,
    /// Untimed iterations at the start (not in the fault-free median).
    pub warmup: usize,
}

/// The buffers of one case.
enum Data {
    /// Barrier.
    Empty,
    /// Bcast (in place: `send` only), and reductions of sizes that are not
    /// a multiple of 8 (u8 sums).
    Bytes { send: Vec<u8>, recv: Vec<u8> },
    /// Reductions: f64 sums of bytes/8 elements.
    Doubles { send: Vec<f64>, recv: Vec<f64> },
}

/// The reduction operators, made once.
struct Ops {
    sum_f64: Op<f64>,
    sum_u8: Op<u8>,
}

/// One (op, size) with its buffers.
struct Case {
    op: CollOp,
    data: Data,
}

impl Case {
    fn new(op: CollOp, bytes: usize) -> Result<Case> {
        let data = match op {
            CollOp::Barrier => Data::Empty,
            CollOp::Bcast => Data::Bytes {
                send: vec![1; bytes],
                recv: Vec::new(),
            },
            CollOp::Reduce | CollOp::Allreduce if bytes.is_multiple_of(8) => Data::Doubles {
                send: vec![1.0; bytes / 8],
                recv: vec![0.0; bytes / 8],
            },
            CollOp::Reduce | CollOp::Allreduce => Data::Bytes {
                send: vec![1; bytes],
                recv: vec![0; bytes],
            },
            CollOp::Allgather | CollOp::Alltoall => {
                bail!(
                    "the resilient benchmark measures barrier, bcast, reduce and allreduce, not {}",
                    op.name()
                )
            }
        };
        Ok(Case { op, data })
    }

    /// One call of the operation (root 0 where there is one).
    fn call<C>(&mut self, c: &C, ops: &Ops) -> Result<(), Error>
    where
        C: Communicator + ?Sized,
        Error: From<C::Error>,
    {
        match (&mut self.data, self.op) {
            (Data::Bytes { send, .. }, CollOp::Bcast) => c.bcast(send, 0),
            (Data::Doubles { send, recv }, CollOp::Reduce) => c.reduce(send, recv, &ops.sum_f64, 0),
            (Data::Bytes { send, recv }, CollOp::Reduce) => c.reduce(send, recv, &ops.sum_u8, 0),
            (Data::Doubles { send, recv }, CollOp::Allreduce) => {
                c.allreduce(send, recv, &ops.sum_f64)
            }
            (Data::Bytes { send, recv }, CollOp::Allreduce) => c.allreduce(send, recv, &ops.sum_u8),
            // Barrier, and (unreachable after `Case::new`) anything else.
            _ => c.barrier(),
        }
        .map(|_| ())
        .map_err(Error::from)
    }

    /// Fills the buffers with rank-dependent data, calls once and checks
    /// this rank's result; `false` if it is wrong.
    fn check<C>(&mut self, c: &C, ops: &Ops) -> Result<bool, Error>
    where
        C: Communicator + ?Sized,
        Error: From<C::Error>,
    {
        let (me, n) = (c.rank().index(), c.size());
        let byte = |r: usize, i: usize| (r * 31 + i * 7 + 3) as u8;
        let must = self.op != CollOp::Reduce || me == 0;
        match &mut self.data {
            Data::Empty => {}
            Data::Bytes { send, recv } => {
                for (i, x) in send.iter_mut().enumerate() {
                    *x = if self.op != CollOp::Bcast || me == 0 {
                        byte(me, i)
                    } else {
                        0
                    };
                }
                recv.fill(0);
            }
            Data::Doubles { send, recv } => {
                for (i, x) in send.iter_mut().enumerate() {
                    *x = (me + 1) as f64 * (i % 5 + 1) as f64;
                }
                recv.fill(0.0);
            }
        }
        self.call(c, ops)?;
        Ok(match (&self.data, self.op) {
            (Data::Bytes { send, .. }, CollOp::Bcast) => {
                send.iter().enumerate().all(|(i, &x)| x == byte(0, i))
            }
            (Data::Bytes { recv, .. }, _) => {
                let expect = |i: usize| (0..n).fold(0u8, |a, r| a.wrapping_add(byte(r, i)));
                !must || recv.iter().enumerate().all(|(i, &x)| x == expect(i))
            }
            (Data::Doubles { recv, .. }, _) => {
                let total = (n * (n + 1) / 2) as f64;
                !must
                    || recv
                        .iter()
                        .enumerate()
                        .all(|(i, &x)| x == total * (i % 5 + 1) as f64)
            }
            (Data::Empty, _) => true,
        })
    }
}

/// A communicator under measurement.
enum Under {
    Plain(Comm),
    Resilient(Box<Resilient>),
    Hier(Box<Hierarchical>),
}

/// The hierarchical communicator's knobs: k from the job's `pertinax run
/// --resilient=hier --resilient-k K` (`PERTINAX_RESILIENT_K`), else `None`
/// ([`pertinax_resilient::default_k`] of the size); threshold 1, although
/// [`Hierarchical::with_config`] builds the hierarchy at every size (only
/// `pertinax_resilient::world` looks at the threshold).
///
/// # Errors
/// A resilient setting in the environment that the library rejects.
fn hier_config() -> Result<HierConfig> {
    let k = Config::from_env()?.and_then(|c| c.hier).and_then(|h| h.k);
    Ok(HierConfig { k, threshold: 1 })
}

/// Slowest rank's and mean over ranks of the mean time per call, µs.
#[derive(Clone, Copy, Debug)]
struct Timing {
    max: f64,
    avg: f64,
}

/// Warm-up, barrier, `reps` timed calls, max and mean over ranks; then one
/// checked call. The same code for every communicator.
fn series<C>(
    c: &C,
    world: &Comm,
    case: &mut Case,
    ops: &Ops,
    reps: usize,
    warmup: usize,
) -> Result<Timing>
where
    C: Communicator + ?Sized,
    Error: From<C::Error>,
{
    // A barrier on the measured communicator first: it empties the `log`
    // check's replay log, so that freeing the previous case's entries (up to
    // 63 results of up to 1 MiB) is not charged to this case.
    c.barrier().map_err(Error::from)?;
    for _ in 0..warmup {
        case.call(c, ops)?;
    }
    world.barrier()?;
    let t0 = Instant::now();
    for _ in 0..reps {
        case.call(c, ops)?;
    }
    let us = t0.elapsed().as_secs_f64() / reps.max(1) as f64 * 1e6;
    let mut max = [0.0];
    world.allreduce(&[us], &mut max, &Op::max())?;
    let mut sum = [0.0];
    world.allreduce(&[us], &mut sum, &ops.sum_f64)?;
    let ok = case.check(c, ops)?;
    let mut bad = [u8::from(!ok)];
    world.allreduce_in_place(&mut bad, &Op::max())?;
    if bad[0] != 0 {
        let who = if ok { "another rank" } else { "this rank" };
        bail!(
            "RES op={}: {who} got a wrong result (rank {})",
            case.op.name(),
            world.rank().index()
        );
    }
    Ok(Timing {
        max: max[0],
        avg: sum[0] / world.size() as f64,
    })
}

/// The overhead measurement: one `RES` line per case and communicator.
///
/// # Errors
/// A failed operation, or a wrong result on any rank (every rank then
/// fails).
pub fn resilient(world: &Comm, p: &ResParams) -> Result<()> {
    let (me, n) = (world.rank().index(), world.size());
    let ops = Ops {
        sum_f64: Op::sum(),
        sum_u8: Op::sum(),
    };
    let mut comms = Vec::with_capacity(p.comms.len());
    for &k in &p.comms {
        let cfg = |check: ResCheck| Config {
            check: check.to_check(),
            ..Config::default()
        };
        let c = match (k, k.check()) {
            (_, None) => Under::Plain(world.dup()?),
            (ResComm::Hier, Some(check)) => Under::Hier(Box::new(Hierarchical::with_config(
                world,
                cfg(check),
                hier_config()?,
            )?)),
            (_, Some(check)) => {
                Under::Resilient(Box::new(Resilient::with_config(world, cfg(check))?))
            }
        };
        comms.push((k, c));
    }
    if me == 0 {
        let cores = std::thread::available_parallelism().map_or(0, |c| c.get());
        let names: Vec<&str> = p.comms.iter().map(|c| c.name()).collect();
        println!(
            "# impl=pertinax ranks={n} cores={cores} reps={} warmup={} comms={}",
            p.reps,
            p.warmup,
            names.join(",")
        );
    }
    for (k, &(op, bytes)) in p.cases.iter().enumerate() {
        let reps = reps_for(bytes, p.reps);
        let warmup = (p.warmup * reps / p.reps.max(1)).max(2);
        for j in 0..comms.len() {
            let (kind, under) = &comms[(j + k) % comms.len()];
            let mut case = Case::new(op, bytes)?;
            let (t, hier_k) = match under {
                Under::Plain(c) => (series(c, world, &mut case, &ops, reps, warmup)?, None),
                Under::Resilient(r) => (series(&**r, world, &mut case, &ops, reps, warmup)?, None),
                Under::Hier(h) => (
                    series(&**h, world, &mut case, &ops, reps, warmup)?,
                    Some(h.k()),
                ),
            };
            if me == 0 {
                println!(
                    "RES comm={} op={} bytes={bytes} ranks={n} t_max_us={:.3} t_avg_us={:.3} reps={reps} warmup={warmup}{}",
                    kind.name(),
                    op.name(),
                    t.max,
                    t.avg,
                    hier_k.map_or(String::new(), |k| format!(" k={k}"))
                );
            }
        }
    }
    Ok(())
}

/// One survivor's view of the failure, µs (`NEG_INFINITY` where it saw no
/// repair, so that the maximum over survivors ignores it).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Seen {
    /// The spanning call minus the fault-free median.
    extra: f64,
    /// The spanning call.
    span: f64,
    /// The median fault-free call before it.
    base: f64,
    /// The median call after it.
    after: f64,
    /// The spanning call's iteration.
    iter: f64,
}

/// A survivor's view from its call times and the spanning iteration.
fn seen(times: &[f64], span: Option<usize>, warmup: usize) -> Seen {
    let none = f64::NEG_INFINITY;
    let Some(k) = span.filter(|&k| k < times.len()) else {
        return Seen {
            extra: none,
            span: none,
            base: none,
            after: none,
            iter: none,
        };
    };
    let lo = if k > warmup { warmup } else { 0 };
    let base = median(&times[lo..k]).unwrap_or(0.0);
    Seen {
        extra: times[k] - base,
        span: times[k],
        base,
        after: median(&times[k + 1..]).unwrap_or(none),
        iter: k as f64,
    }
}

/// What the repair loop reads of a resilient communicator besides the
/// [`Communicator`] trait.
trait Repairable: Communicator<Error = Error> {
    /// `flat` or `hier`, in the `REPAIR` line.
    const SHAPE: &'static str;

    /// Repairs so far: (local, global); a flat communicator's are all
    /// local.
    fn repair_counts(&self) -> (u64, u64);

    /// Time spent in repair procedures (shrinks, joins, replays).
    fn repair_time(&self) -> Duration;

    /// Whether the call that returned `o` saw the failure, `before` being
    /// the repairs before it: it repaired the communicator.
    fn saw_failure(&self, before: u64, _o: &Outcome) -> bool {
        let (l, g) = self.repair_counts();
        l + g > before
    }
}

impl Repairable for Resilient {
    const SHAPE: &'static str = "flat";

    fn repair_counts(&self) -> (u64, u64) {
        (self.repairs(), 0)
    }

    fn repair_time(&self) -> Duration {
        Resilient::repair_time(self)
    }
}

impl Repairable for Hierarchical {
    const SHAPE: &'static str = "hier";

    fn repair_counts(&self) -> (u64, u64) {
        self.repairs()
    }

    fn repair_time(&self) -> Duration {
        Hierarchical::repair_time(self)
    }

    /// A hierarchical repair involves only the communicators the failure
    /// reached (the victim's group; for a master or a deputy, also the
    /// global communicator of the masters and deputies), so
    /// the other ranks see the failure as the first result with a missing
    /// rank (every group's presence bits come through the global stage of
    /// the same operation).
    fn saw_failure(&self, before: u64, o: &Outcome) -> bool {
        let (l, g) = self.repair_counts();
        l + g > before || !o.missing.is_empty()
    }
}

/// The repair measurement: a `REPAIR` line from the lowest survivor. The
/// communicator is flat unless the job was started with `pertinax run
/// --resilient=hier` (k from `--resilient-k`, else the library's default).
///
/// # Errors
/// A failed operation that the resilient layer did not repair.
pub fn repair(world: &Comm, p: RepairParams) -> Result<()> {
    let cfg = Config {
        check: p.check.to_check(),
        ..Config::default()
    };
    if Config::from_env()?.and_then(|c| c.hier).is_none() {
        let r = Resilient::with_config(world, cfg)?;
        return repair_loop(&r, p, None);
    }
    let h = Hierarchical::with_config(world, cfg, hier_config()?)?;
    // The masters and the deputies when the communicator is made (on the
    // world: nobody has failed yet), so that the bench can tell which kind
    // its victim was.
    let masters = ranks_where(world, h.is_master())?;
    let deputies = ranks_where(world, h.is_deputy())?;
    let fields = format!(" k={} masters={masters} deputies={deputies}", h.k());
    repair_loop(&h, p, Some(&fields))
}

/// The world ranks whose `flag` is set (an allreduce max of a per-rank
/// flag over `world`), comma-separated; `-` for none.
fn ranks_where(world: &Comm, flag: bool) -> Result<String> {
    let n = world.size();
    let mut mine = vec![0u8; n];
    mine[world.rank().index()] = u8::from(flag);
    let mut all = vec![0u8; n];
    world.allreduce(&mine, &mut all, &Op::max())?;
    let list: Vec<String> = (0..n)
        .filter(|&r| all[r] != 0)
        .map(|r| r.to_string())
        .collect();
    Ok(if list.is_empty() {
        "-".into()
    } else {
        list.join(",")
    })
}

/// The allreduce loop of [`repair`] on `r`; `hier`: the hierarchical
/// communicator's fields of the `REPAIR` line (k, masters and deputies),
/// which are then followed by its repair counts.
fn repair_loop<C: Repairable>(r: &C, p: RepairParams, hier: Option<&str>) -> Result<()> {
    let n = r.size();
    let sum = Op::sum();
    let mut times = Vec::with_capacity(p.iters);
    let mut span = None;
    let mut bad = 0u32;
    for i in 0..p.iters {
        pertinax::fault_point(ITER_POINT);
        let (l, g) = r.repair_counts();
        let mut out = [0.0f64];
        let t0 = Instant::now();
        let o = r.allreduce(&[1.0f64], &mut out, &sum)?;
        times.push(t0.elapsed().as_secs_f64() * 1e6);
        if span.is_none() && r.saw_failure(l + g, &o) {
            span = Some(i);
        }
        if out[0] != (n - o.missing.len()) as f64 {
            bad += 1;
        }
    }
    let s = seen(&times, span, p.warmup);
    let (local, global) = r.repair_counts();
    let mut hi = [
        s.extra,
        s.span,
        s.base,
        s.after,
        s.iter,
        -s.extra,
        -s.iter,
        local as f64,
        global as f64,
        r.repair_time().as_secs_f64() * 1e6,
    ];
    // A survivor without a repair contributes +inf to the minima: mask it.
    for x in &mut hi[5..7] {
        if x.is_infinite() {
            *x = f64::NEG_INFINITY;
        }
    }
    let mut max = [0.0; 10];
    let out = r.allreduce(&hi, &mut max, &Op::max())?;
    let mut counts = [0u32; 2];
    r.allreduce(&[u32::from(span.is_some()), bad], &mut counts, &Op::sum())?;
    let failed: Vec<usize> = out.missing.iter().map(|x| x.index()).collect();
    let reporter = (0..n).find(|x| !failed.contains(x));
    if reporter == Some(r.rank().index()) {
        let list = if failed.is_empty() {
            "-".to_string()
        } else {
            let v: Vec<String> = failed.iter().map(usize::to_string).collect();
            v.join(",")
        };
        let hier = hier.map_or(String::new(), |f| {
            format!(
                "{f} local_repairs={:.0} global_repairs={:.0}",
                max[7], max[8]
            )
        });
        println!(
            "REPAIR shape={} check={} ranks={n} survivors={} spanned={} failed={list} repairs={} \
             iters={} span_iter={:.0}..{:.0} repair_max_us={:.1} repair_min_us={:.1} \
             span_max_us={:.1} base_med_us={:.3} after_med_us={:.3} proc_max_us={:.1} bad={}{hier}",
            C::SHAPE,
            p.check.name(),
            n - failed.len(),
            counts[0],
            local + global,
            p.iters,
            -max[6],
            max[4],
            max[0],
            -max[5],
            max[1],
            max[2],
            max[3],
            max[9],
            counts[1],
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_survivor_sees_the_spanning_call_against_its_earlier_median() {
        let times = [100.0, 9.0, 10.0, 11.0, 500.0, 12.0, 14.0];
        let s = seen(&times, Some(4), 1);
        assert_eq!(s.base, 10.0);
        assert_eq!((s.span, s.extra, s.iter), (500.0, 490.0, 4.0));
        assert_eq!(s.after, 13.0);
        // A failure inside the warm-up: the median of what came before.
        let early = seen(&times, Some(1), 3);
        assert_eq!((early.base, early.extra), (100.0, -91.0));
        assert_eq!(seen(&times, None, 1).extra, f64::NEG_INFINITY);
        assert_eq!(seen(&times, Some(6), 1).after, f64::NEG_INFINITY);
        assert_eq!(seen(&times, Some(9), 1).span, f64::NEG_INFINITY);
    }
}
