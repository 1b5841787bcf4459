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

use std::time::Duration;

use pertinax_mpi_sys as sys;

use super::watchdog;
use crate::error::{Error, Result};

/// `MPI_Finalize`, with a watchdog.
///
/// # Errors
/// `Bootstrap` with MPI's code when `MPI_Finalize` fails.
pub(super) fn finalize() -> Result<()> {
    super::agree::abandon_parked();
    let failed = sys::Comm::world().get_failed().unwrap_or_default();
    let rank = watchdog::world_rank();
    let bound = watchdog::bound(
        pertinax_wire::env::tune::MPI_FINALIZE_BOUND,
        Duration::from_secs(10),
    );
    let _guard = watchdog::start("pertinax-finalize-bound", bound, move |b| {
        eprintln!(
            "pertinax: rank {rank}: MPI_Finalize has not returned within {:.1} s \
             (Open MPI hangs there at times after a process failure; failed \
             processes known here: {failed:?}); ending without it (exit code 0)",
            b.as_secs_f64()
        );
        0
    });
    sys::finalize().map_err(|c| Error::Bootstrap(format!("MPI finalize: {c}")))
}
