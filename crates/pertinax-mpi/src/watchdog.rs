//! Bounds on the Open MPI calls that at times never return after a
//! process failure, so a job ends with a message instead of hanging.
//!
//! - `MPI_Finalize` (see [`super::finalize`]): the program's work is done,
//!   so past its bound the process ends with exit code 0.
//! - `MPI_Comm_spawn` and the `MPI_Init` of a spawned process: Open MPI 5
//!   at times never completes a spawn started after a failure (the new
//!   process waits in `PMIx_Init` for its runtime, the parents in the
//!   spawn's connect/accept: seen here about once in 30 replacements on a
//!   loaded host; an intermittent class of hangs known upstream, e.g.
//!   openpmix/openpmix#2735, open-mpi/ompi#9713). Past the bound
//!   ([`pertinax_wire::env::tune::MPI_SPAWN_BOUND`], 60 s by default; `0`:
//!   none) the process says so on stderr and ends with exit code
//!   [`SPAWN_HUNG`] (`EX_TEMPFAIL`: the job can be run again).
//!
//! A bound is a thread that sleeps in 10 ms steps until its guard is
//! dropped or the bound passes; a thread that cannot start leaves the call
//! unbounded.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Exit code of a process whose spawn (or whose `MPI_Init` as a spawned
/// process) passed its bound: `EX_TEMPFAIL`.
pub const SPAWN_HUNG: i32 = 75;

/// The bound in milliseconds read from `var`; `default` when unset or not
/// a number; `None` for `0` (no bound).
pub(super) fn bound(var: &str, default: Duration) -> Option<Duration> {
    match std::env::var(var) {
        Ok(v) => match v.trim().parse::<u64>() {
            Ok(0) => None,
            Ok(ms) => Some(Duration::from_millis(ms)),
            Err(_) => Some(default),
        },
        Err(_) => Some(default),
    }
}

/// The bound on `MPI_Comm_spawn` and a spawned process's `MPI_Init`.
pub(super) fn spawn_bound() -> Option<Duration> {
    bound(
        pertinax_wire::env::tune::MPI_SPAWN_BOUND,
        Duration::from_secs(60),
    )
}

/// This process's rank in `MPI_COMM_WORLD` as Open MPI's launcher set it,
/// for messages (`?` if unknown).
pub(super) fn world_rank() -> String {
    std::env::var("OMPI_COMM_WORLD_RANK").unwrap_or_else(|_| "?".into())
}

/// A running bound: dropping it (the call returned) stops it.
#[derive(Debug)]
pub(super) struct Guard {
    done: Arc<AtomicBool>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Release);
    }
}

/// Starts a bound of `bound` (`None`: none); past it, `expired` prints
/// what happened and gives the exit code the process ends with at once.
pub(super) fn start(
    name: &str,
    bound: Option<Duration>,
    expired: impl FnOnce(Duration) -> i32 + Send + 'static,
) -> Guard {
    let done = Arc::new(AtomicBool::new(false));
    if let Some(bound) = bound {
        let seen = done.clone();
        let _ = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let start = Instant::now();
                while start.elapsed() < bound {
                    if seen.load(Ordering::Acquire) {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                if !seen.load(Ordering::Acquire) {
                    let code = expired(bound);
                    pertinax_os::process::exit_now(code);
                }
            });
    }
    Guard { done }
}

/// The bound on a spawn this process takes part in (`MPI_Comm_spawn` and
/// the set-up with the new processes, up to their connections).
pub(super) fn spawn_guard() -> Guard {
    let rank = world_rank();
    start("pertinax-spawn-bound", spawn_bound(), move |b| {
        eprintln!(
            "pertinax: rank {rank}: MPI_Comm_spawn and the set-up with the new \
             processes have not ended within {:.1} s: Open MPI at times never completes a spawn after a process \
             failure (the new process waits in MPI_Init for its runtime); ending this \
             process (exit code {SPAWN_HUNG}: run the job again)",
            b.as_secs_f64()
        );
        SPAWN_HUNG
    })
}

/// The bound on `MPI_Init` and the set-up with the parents of a process
/// started by a spawn (Open MPI sets `OMPI_PARENT_PORT` in its
/// environment); `None` for a process `mpirun` started, whose `MPI_Init`
/// is unbounded.
pub(super) fn init_guard() -> Option<Guard> {
    std::env::var_os("OMPI_PARENT_PORT")?;
    Some(start("pertinax-init-bound", spawn_bound(), |b| {
        eprintln!(
            "pertinax: a spawned process: MPI_Init and the set-up with its parents have not \
             ended within {:.1} s: Open MPI at times never completes a spawn after a process \
             failure; ending this process (exit code {SPAWN_HUNG})",
            b.as_secs_f64()
        );
        SPAWN_HUNG
    }))
}
