//! A healthy `shrink` through pertinax beside the raw MPI calls it is made
//! of, in one launch (BENCHMARKS.md): each round times `N` calls of each
//! of these, in turn, every one followed by the free of what it made:
//!
//! - `pertinax`: `Comm::shrink` of the world;
//! - `shrink`: `MPIX_Comm_shrink` of a duplicate of `MPI_COMM_WORLD`, as a
//!   C program calls it;
//! - `shrink+2dup`: the same and two `MPI_Comm_dup`s of its result (the
//!   MPI communicators of a pertinax communicator, ARCHITECTURE.md);
//! - `agree+shrink+2dup`: a blocking `MPIX_Comm_agree` first (the
//!   agreement by which pertinax's shrink checks that every member made
//!   the same call and agrees on the new context and the survivors).
//!
//! Rank 0 prints the median over 11 rounds of each, in µs per call, the
//! slowest rank's (the maximum over the ranks of each round's time), and
//! `agree_us`, its own mean time in the last sequence's `MPIX_Comm_agree`.
//! MPI backend only (built with the `mpi` feature, started by `mpirun
//! --with-ft ulfm`):
//!
//! ```sh
//! mpirun --with-ft ulfm -n 4 target/mpi/release/examples/mpi_shrink_ab 20
//! ```

use pertinax::{Communicator as _, CommunicatorExt as _};
use pertinax_mpi_sys::Comm as Raw;
use std::time::{Duration, Instant};

/// One of the raw sequences on `w`: `MPIX_Comm_shrink`, preceded by a
/// blocking `MPIX_Comm_agree` if `agree`, followed by `dups` duplicates of
/// its result; everything made is freed. Returns the agreement's time.
fn raw(w: Raw, agree: bool, dups: usize) -> Result<Duration, String> {
    let t = Instant::now();
    if agree {
        w.agree(!0)
            .map_err(|(c, _)| format!("MPIX_Comm_agree: {c}"))?;
    }
    let agreeing = t.elapsed();
    let mut s = w.shrink().map_err(|c| format!("MPIX_Comm_shrink: {c}"))?;
    let mut made = Vec::with_capacity(dups);
    for _ in 0..dups {
        made.push(s.dup().map_err(|c| format!("MPI_Comm_dup: {c}"))?);
    }
    for mut c in made {
        c.free().map_err(|c| format!("MPI_Comm_free: {c}"))?;
    }
    s.free().map_err(|c| format!("MPI_Comm_free: {c}"))?;
    Ok(agreeing)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let u = pertinax::init()?;
    let w = u.world();
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let mut base = Raw::world()
        .dup()
        .map_err(|c| format!("MPI_Comm_dup: {c}"))?;
    const NAMES: [&str; 4] = ["pertinax", "shrink", "shrink+2dup", "agree+shrink+2dup"];
    let mut times: [Vec<f64>; 4] = Default::default();
    let mut agreeing = Duration::ZERO;
    // One warm-up round, not kept.
    for round in 0..12 {
        for (which, t) in times.iter_mut().enumerate() {
            w.barrier()?;
            let t0 = Instant::now();
            for _ in 0..n {
                match which {
                    0 => drop(w.shrink()?),
                    1 => drop(raw(base, false, 0)?),
                    2 => drop(raw(base, false, 2)?),
                    _ => agreeing += raw(base, true, 2)?,
                }
            }
            let us = t0.elapsed().as_secs_f64() * 1e6 / n as f64;
            let mut max = [0.0f64];
            w.allreduce(&[us], &mut max, &pertinax::Op::max())?;
            if round > 0 {
                t.push(max[0]);
            }
        }
    }
    if w.rank().0 == 0 {
        let med: Vec<f64> = times
            .iter_mut()
            .map(|t| {
                t.sort_by(f64::total_cmp);
                t[t.len() / 2]
            })
            .collect();
        let fields: Vec<String> = NAMES
            .iter()
            .zip(&med)
            .map(|(name, m)| format!("{name}_us={m:.1}"))
            .collect();
        println!(
            "SHRINK ranks={} {} agree_us={:.1} pertinax/shrink={:.3} pertinax/shrink+2dup={:.3} pertinax/agree+shrink+2dup={:.3}",
            w.size(),
            fields.join(" "),
            agreeing.as_secs_f64() * 1e6 / (12 * n) as f64,
            med[0] / med[1],
            med[0] / med[2],
            med[0] / med[3]
        );
    }
    let _ = base.free();
    u.finalize()?;
    Ok(())
}
