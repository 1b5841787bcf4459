//! The measuring side: runs inside a pertinax job and prints one line per
//! measurement in the same format as the Open MPI anchor programs
//! (`PP size=... t_half_us_med=... t_half_us_min=... bw_GBps=... reps=...`).

use std::time::Instant;

use anyhow::{anyhow, Result};
use pertinax::Comm;

/// Median of a slice (sorted in place).
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Repetitions for a message size: fewer for large messages.
fn reps_for(size: usize, base: usize) -> usize {
    if size >= 1 << 20 {
        (base / 20).max(10)
    } else if size >= 64 << 10 {
        (base / 4).max(10)
    } else {
        base
    }
}

/// IMB-style ping-pong (`pingping == false`) or ping-ping between ranks 0
/// and 1: `warmup` round trips, then `batches` timed batches; t_half is
/// batch time / (2 reps) for ping-pong and batch time / reps for ping-ping.
pub fn pingpong(w: &Comm, sizes: &[usize], base_reps: usize, warmup: usize, batches: usize, pingping: bool) -> Result<()> {
    let me = w.rank().index();
    if w.size() < 2 {
        return Err(anyhow!("ping-pong needs 2 ranks"));
    }
    let max = sizes.iter().copied().max().unwrap_or(0);
    let mut sbuf = vec![1u8; max];
    let mut rbuf = vec![0u8; max];
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
                        w.send(&sbuf[..n], peer, 1)?;
                        w.recv(&mut rbuf[..n], peer, 1)?;
                    } else {
                        w.recv(&mut rbuf[..n], peer, 1)?;
                        w.send(&sbuf[..n], peer, 1)?;
                    }
                }
            }
            let dt = t0.elapsed().as_secs_f64() * 1e6;
            if b > 0 {
                times.push(if pingping { dt / iters as f64 } else { dt / (2.0 * iters as f64) });
            }
        }
        sbuf[0] = sbuf[0].wrapping_add(1);
        if me == 0 {
            let min = times.iter().copied().fold(f64::INFINITY, f64::min);
            let med = median(&mut times);
            let bw = if n > 0 { n as f64 / (med * 1e-6) / 1e9 } else { 0.0 };
            println!("{label} size={n} t_half_us_med={med:.3} t_half_us_min={min:.3} bw_GBps={bw:.3} reps={reps}");
        }
    }
    Ok(())
}
