//! Fault injection: named points where the launcher can make a rank die.
//!
//! A program marks places with [`fault_point`]; `pertinax run --kill
//! 2@iteration#3` (or a seeded random schedule) makes rank 2 die at the
//! third time it reaches `fault_point("iteration")`. The plan reaches the
//! rank through its environment and is read once at [`crate::init`]; when
//! the rank has no plan, a fault point is one load and one branch.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use pertinax_wire::env;
use pertinax_wire::fault::{Plan, PlanError, Point};

/// How an injected fault ends the process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum How {
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

/// Parses `NAME@K:SIGNAL,...` (see [`pertinax_wire::fault::Plan`]).
fn parse(spec: &str) -> Result<Vec<Shot>, String> {
    let plan: Plan = spec.parse().map_err(|e: PlanError| e.to_string())?;
    Ok(plan
        .shots
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
        .collect())
}

/// Reads this process's plan from the environment (once, at init).
///
/// # Errors
/// A malformed plan.
pub(crate) fn load() -> Result<(), String> {
    let Ok(spec) = std::env::var(env::FAULTS) else {
        return Ok(());
    };
    let shots = parse(&spec)?;
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
///     pertinax::fault_point("iteration");
///     // ... the step's work ...
/// }
/// ```
#[inline]
pub fn fault_point(name: &str) {
    if let Some(plan) = PLAN.get() {
        hit(plan, name);
    }
}

#[cold]
fn hit(plan: &[Shot], name: &str) {
    for s in plan {
        if s.point.as_deref().is_some_and(|p| p != name) {
            continue;
        }
        let n = s.seen.fetch_add(1, Ordering::Relaxed) + 1;
        if n == s.hit {
            fire(name, n, s.how);
        }
    }
}

fn fire(name: &str, hit: u64, how: How) {
    let signal = match how {
        How::Signal(s) => s,
        How::Panic => 0,
    };
    crate::runtime::with_current(|rt| {
        use crate::backend::Backend;
        rt.b.report_injection(name, hit, signal);
    });
    match how {
        How::Panic => panic!("pertinax: injected panic at fault point {name:?} (hit {hit})"),
        How::Signal(sig) => {
            let _ = pertinax_sys::process::raise_default(sig);
            if sig != libc::SIGSTOP {
                // Signals are delivered before kill() returns to a
                // single-threaded target; be sure anyway.
                pertinax_sys::process::exit_now(128 + sig);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_parse() {
        let p = parse("iteration@3:kill, *@7:panic,x@1").unwrap();
        assert_eq!(p.len(), 3);
        assert_eq!(p[0].point.as_deref(), Some("iteration"));
        assert_eq!((p[0].hit, p[0].how), (3, How::Signal(libc::SIGKILL)));
        assert_eq!((p[1].point.as_deref(), p[1].how), (None, How::Panic));
        assert_eq!(p[2].how, How::Signal(libc::SIGKILL));
        for bad in ["iteration", "a@0:kill", "a@x", "a@1:hup"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
