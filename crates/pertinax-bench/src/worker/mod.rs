//! The measuring side: runs inside a pertinax job and prints one line per
//! measurement in the same format as the Open MPI anchor programs
//! (`PP size=... t_half_us_med=... t_half_us_min=... bw_GBps=... reps=...`,
//! `COLL op=... bytes=... ranks=... t_max_us_med=...`, `FT mode=... N=...
//! det_min_ms=...`, `RES comm=... op=... t_max_us=...`, `REPAIR shape=...
//! check=... repair_max_us=...`).

mod coll;
mod ft;
mod resilient;

use pertinax::{Communicator as _, CommunicatorExt as _};
use std::time::Instant;

pub use coll::coll;
pub use ft::{ft, real_s, FtParams};
pub use resilient::{repair, resilient, RepairParams, ResParams, ITER_POINT};

use anyhow::{anyhow, Result};
use pertinax::Comm;

/// Repetitions for a message size: `base` up to 1 MiB (the Open MPI
/// anchors use the same count for every size they measure, up to 1 MiB),
/// a quarter of it (at least 10) above.
fn reps_for(size: usize, base: usize) -> usize {
    if size > 1 << 20 {
        (base / 4).max(10)
    } else {
        base
    }
}

/// IMB-style ping-pong (`pingping == false`) or ping-ping between ranks 0
/// and 1: `warmup` round trips, then `batches` timed batches; t_half is
/// batch time / (2 reps) for ping-pong and batch time / reps for ping-ping.
///
/// Ping-pong sends from and receives into one buffer, as the Open MPI
/// anchor (`pingpong.c`) does: with separate send and receive buffers,
/// Open MPI's own 1 MiB ping-pong takes about 97 µs instead of 120 µs on
/// this machine (the receive then does not write the lines the next send
/// reads), which once made pertinax-over-MPI look 1.4× faster than C.
/// Ping-ping needs both at once, so it keeps two.
pub fn pingpong(
    w: &Comm,
    sizes: &[usize],
    base_reps: usize,
    warmup: usize,
    batches: usize,
    pingping: bool,
) -> Result<()> {
    let me = w.rank().index();
    if w.size() < 2 {
        return Err(anyhow!("ping-pong needs 2 ranks"));
    }
    let max = sizes.iter().copied().max().unwrap_or(0);
    // Rank 0's bytes; every rank starts otherwise, so the check below sees
    // whether data moved.
    let mut sbuf = vec![1u8; max];
    let mut rbuf = vec![0u8; max];
    let mut buf = if me == 0 { sbuf.clone() } else { rbuf.clone() };
    let label = if pingping { "PI" } else { "PP" };
    for &n in sizes {
        let reps = reps_for(n, base_reps);
        let mut times = Vec::with_capacity(batches);
        for b in 0..=batches {
            let iters = if b == 0 { warmup } else { reps };
            w.barrier()?;
            let t0 = Instant::now();
            if me < 2 {
                let peer = 1 - me;
                for _ in 0..iters {
                    if pingping {
                        pertinax::scope(|s| -> pertinax::Result<()> {
                            let q = w.isend(s, &sbuf[..n], peer, 1)?;
                            w.recv(&mut rbuf[..n], peer, 1)?;
                            q.wait()?;
                            Ok(())
                        })?;
                    } else if me == 0 {
                        w.send(&buf[..n], peer, 1)?;
                        w.recv(&mut buf[..n], peer, 1)?;
                    } else {
                        w.recv(&mut buf[..n], peer, 1)?;
                        w.send(&buf[..n], peer, 1)?;
                    }
                }
            }
            let dt = t0.elapsed().as_secs_f64() * 1e6;
            if b > 0 {
                times.push(if pingping {
                    dt / iters as f64
                } else {
                    dt / (2.0 * iters as f64)
                });
            }
        }
        // Ping-ping: both ranks send the same bytes, so the last message
        // received must equal our own send buffer. Ping-pong: rank 0's
        // bytes went round, so both hold them. A cheap check that data
        // moved.
        let got = if pingping { &rbuf[..n] } else { &buf[..n] };
        if me < 2 && got != &sbuf[..n] {
            return Err(anyhow!("{label} size={n}: rank {me} received wrong data"));
        }
        if n > 0 {
            sbuf[0] = sbuf[0].wrapping_add(1);
            if me == 0 {
                buf[0] = sbuf[0];
            }
        }
        if me == 0 {
            let min = times.iter().copied().fold(f64::INFINITY, f64::min);
            let med = crate::stats::median(&times).unwrap_or(f64::NAN);
            let bw = if n > 0 {
                n as f64 / (med * 1e-6) / 1e9
            } else {
                0.0
            };
            println!("{label} size={n} t_half_us_med={med:.3} t_half_us_min={min:.3} bw_GBps={bw:.3} reps={reps}");
        }
    }
    Ok(())
}

/// Launch-cost probe: `init` then `finalize`, nothing else. Rank 0 prints
/// `HELLO impl=pertinax ranks=N init_max_ms=..`, the slowest rank's time
/// from entering `main` to the end of `init` (as the anchor `hello.c`).
pub fn hello(started: Instant) -> Result<()> {
    let u = pertinax::init()?;
    let init_ms = started.elapsed().as_secs_f64() * 1e3;
    let w = u.world();
    let (me, n) = (w.rank().index(), w.size());
    if me == 0 {
        let mut max = init_ms;
        let mut t = [0f64];
        for peer in 1..n {
            w.recv(&mut t, peer, 7)?;
            max = max.max(t[0]);
        }
        println!("HELLO impl=pertinax ranks={n} init_max_ms={max:.1}");
    } else {
        w.send(&[init_ms], 0, 7)?;
    }
    u.finalize()?;
    Ok(())
}
