//! Collective latency in the method of the Open MPI anchor `coll.c`:
//! warm-up, a calibration that sets the repetitions (same on every rank),
//! then batches; per batch the slowest rank's mean time per call (IMB's
//! t_max); the median over batches is printed as
//! `COLL op=... ranks=... t_max_us_med=...`.
//!
//! A quick look at one build (`pertinax-bench coll` is the measurement,
//! side by side with Open MPI): `cargo build --release -p pertinax-bench
//! --example collbench`, then `pertinax run -n N --
//! target/release/examples/collbench [OPS]` where OPS is a comma list of
//! barrier, bcast_8B, bcast_64KiB, bcast_1MiB, allreduce_1dbl,
//! allreduce_64KiB, allreduce_1MiB, reduce_8B, reduce_64KiB, allgather_8B,
//! allgather_64KiB, alltoall_8B, alltoall_64KiB (default: the anchor's five).

use pertinax::{Communicator as _, CommunicatorExt as _};
use std::time::Instant;

use pertinax::{Comm, Op};

fn run(
    w: &Comm,
    op: &str,
    a: &mut [f64],
    b: &mut [f64],
) -> Result<pertinax::Outcome, pertinax::Error> {
    let n = w.size();
    match op {
        "barrier" => w.barrier(),
        "bcast_8B" => w.bcast(&mut a[..1], 0),
        "bcast_64KiB" => w.bcast(&mut a[..8192], 0),
        "bcast_1MiB" => w.bcast(&mut a[..131072], 0),
        "allreduce_1dbl" => w.allreduce(&a[..1], &mut b[..1], &Op::sum()),
        "allreduce_64KiB" => w.allreduce(&a[..8192], &mut b[..8192], &Op::sum()),
        "allreduce_1MiB" => w.allreduce(&a[..131072], &mut b[..131072], &Op::sum()),
        "reduce_8B" => w.reduce(&a[..1], &mut b[..1], &Op::sum(), 0),
        "reduce_64KiB" => w.reduce(&a[..8192], &mut b[..8192], &Op::sum(), 0),
        "reduce_1MiB" => w.reduce(&a[..131072], &mut b[..131072], &Op::sum(), 0),
        "allgather_8B" => w.allgather(&a[..1], &mut b[..n]),
        "allgather_64KiB" => w.allgather(&a[..8192], &mut b[..8192 * n]),
        "alltoall_8B" => w.alltoall(&a[..n], &mut b[..n]),
        "alltoall_64KiB" => w.alltoall(&a[..8192 * n], &mut b[..8192 * n]),
        other => Err(pertinax::Error::InvalidArgument(format!(
            "unknown op {other}"
        ))),
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), pertinax::Error> {
    let u = pertinax::init()?;
    let w = u.world();
    let ops = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "barrier,bcast_8B,bcast_64KiB,allreduce_1dbl,allreduce_64KiB".into());
    let n = w.size();
    let mut a = vec![1.0f64; 131072.max(8192 * n)];
    let mut b = vec![0.0f64; 131072.max(8192 * n)];
    for op in ops.split(',') {
        for _ in 0..20 {
            run(&w, op, &mut a, &mut b)?;
        }
        w.barrier()?;
        let t = Instant::now();
        for _ in 0..10 {
            run(&w, op, &mut a, &mut b)?;
        }
        let mut tc = [t.elapsed().as_secs_f64() / 10.0];
        w.allreduce_in_place(&mut tc, &Op::max())?;
        let reps = ((0.3 / tc[0].max(1e-9)) as usize).clamp(20, 1000);
        let mut batches = Vec::new();
        for _ in 0..5 {
            w.barrier()?;
            let t = Instant::now();
            for _ in 0..reps {
                run(&w, op, &mut a, &mut b)?;
            }
            let mut us = [t.elapsed().as_secs_f64() / reps as f64 * 1e6];
            w.allreduce_in_place(&mut us, &Op::max())?;
            batches.push(us[0]);
        }
        if w.rank().index() == 0 {
            println!(
                "COLL op={op} ranks={n} t_max_us_med={:.3} reps={reps}",
                median(&mut batches)
            );
        }
    }
    u.finalize()
}
