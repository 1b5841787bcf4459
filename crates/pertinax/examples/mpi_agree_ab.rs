//! A healthy `agree` through pertinax beside the raw MPI call, in one
//! launch (BENCHMARKS.md): rounds alternate `N` calls of `Comm::agree` on
//! the world and `N` of the blocking `MPIX_Comm_agree` (as a C program
//! calls it) on a duplicate of `MPI_COMM_WORLD`; rank 0 prints the median
//! over 11 rounds of each, in µs per call, and their ratio. MPI backend only
//! (built with the `mpi` feature, started by `mpirun --with-ft ulfm`):
//!
//! ```sh
//! mpirun --with-ft ulfm -n 4 target/mpi/release/examples/mpi_agree_ab 3000
//! ```
//!
//! With a second argument `shrunk`, the last rank dies first (`SIGKILL`);
//! the survivors see it in a receive, then shrink the world
//! (`Comm::shrink`) and revoke and shrink the raw duplicate
//! (`MPIX_Comm_revoke`, `MPIX_Comm_shrink`, as a C program recovers), and
//! the rounds alternate on the two shrunk communicators: the agreement
//! after a recovery, call against call in one launch.

use pertinax::{Communicator as _, CommunicatorExt as _};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let u = pertinax::init()?;
    let w = u.world();
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(3000);
    let shrunk = std::env::args().nth(2).as_deref() == Some("shrunk");
    let mut raw = pertinax_mpi_sys::Comm::world()
        .dup()
        .map_err(|c| format!("MPI_Comm_dup: {c}"))?;
    let mut w = w;
    if shrunk {
        let last = w.size() - 1;
        w.barrier()?;
        if w.rank().0 as usize == last {
            pertinax_os::process::kill(std::process::id(), libc::SIGKILL)?;
        }
        let mut d = [0u8; 1];
        if w.recv(&mut d, last, 7).is_ok() {
            return Err("a receive from the dead rank succeeded".into());
        }
        let nc = w.shrink()?;
        let _ = raw.revoke();
        let mut old = raw;
        raw = old.shrink().map_err(|c| format!("MPIX_Comm_shrink: {c}"))?;
        let _ = old.free();
        w = nc;
    }
    for _ in 0..100 {
        w.agree(1)?;
    }
    let (mut tp, mut tc) = (Vec::new(), Vec::new());
    for _ in 0..11 {
        w.barrier()?;
        let t = Instant::now();
        for _ in 0..n {
            w.agree(1)?;
        }
        tp.push(t.elapsed().as_secs_f64() * 1e6 / n as f64);
        w.barrier()?;
        let t = Instant::now();
        for _ in 0..n {
            raw.agree(!0)
                .map_err(|(c, _)| format!("MPIX_Comm_agree: {c}"))?;
        }
        tc.push(t.elapsed().as_secs_f64() * 1e6 / n as f64);
    }
    tp.sort_by(f64::total_cmp);
    tc.sort_by(f64::total_cmp);
    if w.rank().0 == 0 {
        println!(
            "AGREE{} ranks={} pertinax_us={:.2} mpi_us={:.2} ratio={:.3}",
            if shrunk { " shrunk" } else { "" },
            w.size(),
            tp[5],
            tc[5],
            tp[5] / tc[5]
        );
    }
    let _ = raw.free();
    u.finalize()?;
    Ok(())
}
