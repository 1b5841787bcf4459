//! Fault injection: named points where the launcher can make a rank die.
//!
//! A program marks places with [`fault_point`]; `pertinax run --kill
//! 2@iteration#3` (or a seeded random schedule) makes rank 2 die at the
//! third time it reaches `fault_point("iteration")`. The plan reaches the
//! rank through its environment and is read once at `pertinax::init`; when
//! the rank has no plan, a fault point is one load and one branch.
//!
//! Whoever started the job, the same plan can be given to every rank:
//! `PERTINAX_FAULTS=2@iteration#3` (shots with a victim, the `--kill`
//! grammar) and `PERTINAX_FAULT_SEED=SEED[:COUNT[:MAX_HIT]]` (the
//! `--fault-seed` schedule, drawn alike by every rank for the world's size)
//! strike only their victim, a rank of the job's first world; a process
//! started later (spare, spawned, replacement) keeps only the shots without
//! a victim, so a replacement is not killed again.
//!
//! The native engine's large-message protocols and the core's collective
//! schedules have fault points of their own, so that a kill can land where
//! the data is (`*` counts them too):
//!
//! | point | process | where |
//! |---|---|---|
//! | `p2p.rts` | sender | its request to send (the buffer's address) is out |
//! | `p2p.cts` | receiver | it matched the request and asked for fragments |
//! | `p2p.frag` | sender | after each fragment it put in the ring |
//! | `p2p.frag.recv` | receiver | after each fragment it copied out, but the last |
//! | `p2p.pull` | receiver | before it copies the message from the sender's memory |
//! | `coll.round` | every member | a collective's round has started (its sends are out), on a backend whose collectives are the core's schedules (native) |
//!
//! A panic planned at one of them ends the process with `SIGABRT` instead:
//! unwinding out of the progress engine would leave it half-way through a
//! record.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use pertinax_wire::env;
use pertinax_wire::fault::{Plan, PlanError, Point};
use pertinax_wire::kill::RandomFaults;

/// How an injected fault ends the process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum How {
    Signal(i32),
    Panic,
}

#[derive(Debug)]
struct Shot {
    /// Point name, or `None` for any point.
    point: Option<String>,
    hit: u64,
    how: How,
    seen: AtomicU64,
}

static PLAN: OnceLock<Vec<Shot>> = OnceLock::new();

/// The `PERTINAX_FAULTS` plan of the parents of a process that the MPI
/// backend spawned (Open MPI hands `mpirun -x` variables to the job's
/// first processes only); read by [`load`] when the variable is not set.
static INHERITED: OnceLock<String> = OnceLock::new();

/// Records the parents' plan (kept for [`load`] when the variable is not
/// set); before [`load`].
pub fn inherit(spec: String) {
    let _ = INHERITED.set(spec);
}

/// This process's job-wide plan: `PERTINAX_FAULTS`, else the one inherited
/// from its parents, so that a spawned process hands it on to the
/// processes it spawns in turn.
pub fn job_plan() -> Option<String> {
    std::env::var(env::FAULTS)
        .ok()
        .or_else(|| INHERITED.get().cloned())
}

/// Parses `NAME@K:SIGNAL,...` (see [`pertinax_wire::fault::Plan`]) and
/// keeps the shots of this process: those without a victim, and for the
/// world's rank `rank` (`None` for a process started later) its own.
fn parse(spec: &str, rank: Option<u32>) -> Result<Vec<Shot>, String> {
    let plan: Plan = spec.parse().map_err(|e: PlanError| e.to_string())?;
    Ok(shots(match rank {
        Some(r) => plan.for_rank(r),
        None => plan.own(),
    }))
}

/// The kills of the world's rank `rank` in the seeded schedule `spec`
/// (`SEED[:COUNT[:MAX_HIT]]`) for a world of `size` ranks.
fn seeded(spec: &str, rank: u32, size: usize) -> Result<Vec<Shot>, String> {
    let r: RandomFaults = spec.parse().map_err(|e| format!("{e}"))?;
    let kills = r.schedule(size).map_err(|e| e.to_string())?;
    Ok(shots(
        pertinax_wire::kill::plan_of(&kills, rank).unwrap_or_default(),
    ))
}

fn shots(plan: Plan) -> Vec<Shot> {
    plan.shots
        .into_iter()
        .map(|s| Shot {
            point: match s.point {
                Point::Any => None,
                Point::Named(name) => Some(name),
            },
            hit: s.hit,
            how: s.signal.number().map_or(How::Panic, How::Signal),
            seen: AtomicU64::new(0),
        })
        .collect()
}

/// Reads this process's plan from the environment (once, at init): the
/// world's rank `rank` of `size` ranks, `None` for a process started later.
///
/// # Errors
/// A malformed plan or seed (the message names the variable).
pub fn load(rank: Option<(u32, usize)>) -> Result<(), String> {
    let spec = std::env::var(env::FAULTS)
        .ok()
        .or_else(|| INHERITED.get().cloned());
    let mut shots = match spec {
        Some(spec) => {
            parse(&spec, rank.map(|r| r.0)).map_err(|m| format!("{}: {m}", env::FAULTS))?
        }
        None => Vec::new(),
    };
    if let (Ok(spec), Some((rank, size))) = (std::env::var(env::FAULT_SEED), rank) {
        shots.extend(seeded(&spec, rank, size).map_err(|m| format!("{}: {m}", env::FAULT_SEED))?);
    }
    if !shots.is_empty() {
        let _ = PLAN.set(shots);
    }
    Ok(())
}

/// Marks a fault-injection point named `name`. Does nothing unless the
/// launcher planned a fault for this rank at this point (see `pertinax run
/// --kill` and `--fault-seed`); then, at the planned hit, the process tells
/// the launcher and dies by the planned signal (or panics).
///
/// ```
/// for step in 0..3 {
///     pertinax_backend::inject::fault_point("iteration"); // `pertinax::fault_point`
///     // ... the step's work ...
/// }
/// ```
#[inline]
pub fn fault_point(name: &str) {
    if let Some(plan) = PLAN.get() {
        hit(plan, name, false);
    }
}

/// Whether the launcher planned a fault for this process: a caller that
/// builds point names at run time (the C ABI's `mpi.Allreduce`) builds
/// them only then.
#[inline]
pub fn faults_planned() -> bool {
    PLAN.get().is_some()
}

/// A fault point inside the runtime's protocols (see the module's table):
/// as [`fault_point`], but a planned panic is a `SIGABRT`.
#[inline]
pub fn protocol_point(name: &str) {
    if let Some(plan) = PLAN.get() {
        hit(plan, name, true);
    }
}

#[cold]
fn hit(plan: &[Shot], name: &str, protocol: bool) {
    for s in plan {
        if s.point.as_deref().is_some_and(|p| p != name) {
            continue;
        }
        let n = s.seen.fetch_add(1, Ordering::Relaxed) + 1;
        if n == s.hit {
            let how = match s.how {
                How::Panic if protocol => How::Signal(libc::SIGABRT),
                how => how,
            };
            fire(name, n, how);
        }
    }
}

/// Who is told of an injected death before it happens (the launcher or
/// the log, through the backend): set by `pertinax::init`, so that this
/// module needs nothing above it.
pub type Reporter = Box<dyn Fn(&str, u64, i32)>;

thread_local! {
    static REPORTER: std::cell::RefCell<Option<Reporter>> = const { std::cell::RefCell::new(None) };
}

/// Installs (or, with `None`, removes) the reporter of injected deaths.
pub fn set_reporter(r: Option<Reporter>) {
    REPORTER.with(|c| *c.borrow_mut() = r);
}

fn fire(name: &str, hit: u64, how: How) {
    let signal = match how {
        How::Signal(s) => s,
        How::Panic => 0,
    };
    REPORTER.with(|c| {
        if let Some(report) = c.borrow().as_ref() {
            report(name, hit, signal);
        }
    });
    match how {
        How::Panic => panic!("pertinax: injected panic at fault point {name:?} (hit {hit})"),
        How::Signal(sig) => {
            let _ = pertinax_os::process::raise_default(sig);
            if sig != libc::SIGSTOP {
                // Signals are delivered before kill() returns to a
                // single-threaded target; be sure anyway.
                pertinax_os::process::exit_now(128 + sig);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_parse() {
        let p = parse("iteration@3:kill, *@7:panic,x@1", None).unwrap();
        assert_eq!(p.len(), 3);
        assert_eq!(p[0].point.as_deref(), Some("iteration"));
        assert_eq!((p[0].hit, p[0].how), (3, How::Signal(libc::SIGKILL)));
        assert_eq!((p[1].point.as_deref(), p[1].how), (None, How::Panic));
        assert_eq!(p[2].how, How::Signal(libc::SIGKILL));
        for bad in ["iteration", "a@0:kill", "a@x", "a@1:hup"] {
            assert!(parse(bad, Some(0)).is_err(), "{bad}");
        }
    }

    #[test]
    fn shots_with_a_victim_strike_only_their_rank() {
        let plan = "3@chunk#6,x@1:panic";
        let names = |p: &[Shot]| -> Vec<(Option<String>, u64)> {
            p.iter().map(|s| (s.point.clone(), s.hit)).collect()
        };
        assert_eq!(
            names(&parse(plan, Some(3)).unwrap()),
            [(Some("chunk".into()), 6), (Some("x".into()), 1)]
        );
        assert_eq!(
            names(&parse(plan, Some(2)).unwrap()),
            [(Some("x".into()), 1)]
        );
        assert_eq!(names(&parse(plan, None).unwrap()), [(Some("x".into()), 1)]);
    }

    #[test]
    fn a_seed_gives_each_rank_its_own_kills() {
        // Every rank draws the schedule; the victims are those of the
        // launcher's --fault-seed 42 --fault-count 3 --fault-max-hit 20.
        let kills = RandomFaults {
            seed: 42,
            count: 3,
            max_hit: 20,
        }
        .schedule(16)
        .unwrap();
        let mut victims = Vec::new();
        for r in 0..16u32 {
            let s = seeded("42:3:20", r, 16).unwrap();
            if let [shot] = &s[..] {
                assert_eq!(shot.point, None);
                victims.push(r);
            } else {
                assert!(s.is_empty());
            }
        }
        assert_eq!(victims, kills.iter().map(|k| k.rank).collect::<Vec<_>>());
        assert!(seeded("42:20", 0, 4).is_err(), "20 victims among 3");
        assert!(seeded("x", 0, 4).is_err());
    }
}
