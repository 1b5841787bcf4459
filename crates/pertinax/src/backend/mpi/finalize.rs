//! `MPI_Finalize`, bounded after a process failure.
//!
//! Open MPI 5.0 (with ULFM) sometimes never returns from `MPI_Finalize` in
//! the survivors of a failure (they wait in `ompi_mpi_finalize` for the
//! runtime's fence, which includes the dead process): seen here in about
//! one job in five with one rank killed, also when the survivors never
//! learned of the failure (a rank killed right after its last message). The
//! program's work is done by then, so a watchdog thread bounds the wait
//! ([`pertinax_wire::env::tune::MPI_FINALIZE_BOUND`], 10 s by default, `0`:
//! no bound): past it, the process says so on stderr (naming Open MPI, and
//! the failed processes it knew of) and ends at once with exit code 0, as
//! `MPI_Finalize` would have let it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use pertinax_mpi_sys as sys;

use crate::error::{Error, Result};

/// The default bound.
const DEFAULT_BOUND: Duration = Duration::from_secs(10);

/// The bound from the environment; `None`: no bound.
fn bound() -> Option<Duration> {
    match std::env::var(pertinax_wire::env::tune::MPI_FINALIZE_BOUND) {
        Ok(v) => match v.trim().parse::<u64>() {
            Ok(0) => None,
            Ok(ms) => Some(Duration::from_millis(ms)),
            Err(_) => Some(DEFAULT_BOUND),
        },
        Err(_) => Some(DEFAULT_BOUND),
    }
}

/// `MPI_Finalize`, with a watchdog.
///
/// # Errors
/// `Bootstrap` with MPI's code when `MPI_Finalize` fails.
pub(super) fn finalize() -> Result<()> {
    let failed = sys::Comm::world().get_failed().unwrap_or_default();
    let done = Arc::new(AtomicBool::new(false));
    if let Some(bound) = bound() {
        let done = done.clone();
        let rank = std::env::var("OMPI_COMM_WORLD_RANK").unwrap_or_else(|_| "?".into());
        // A thread that cannot start leaves MPI_Finalize unbounded.
        let _ = std::thread::Builder::new()
            .name("pertinax-finalize-bound".into())
            .spawn(move || {
                let start = Instant::now();
                while start.elapsed() < bound {
                    if done.load(Ordering::Acquire) {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                if !done.load(Ordering::Acquire) {
                    eprintln!(
                        "pertinax: rank {rank}: MPI_Finalize has not returned within {:.1} s \
                         (Open MPI hangs there at times after a process failure; failed \
                         processes known here: {failed:?}); ending without it (exit code 0)",
                        bound.as_secs_f64()
                    );
                    pertinax_os::process::exit_now(0);
                }
            });
    }
    let r = sys::finalize().map_err(|c| Error::Bootstrap(format!("MPI finalize: {c}")));
    done.store(true, Ordering::Release);
    r
}
