//! Collective latency in exactly the method of the Open MPI anchor
//! `coll.c` (and of this crate's `c/coll_sweep.c`, its Open MPI twin).
//!
//! Per (op, size): `warmup` untimed calls; a calibration of 10 calls after
//! a barrier, whose time per call is maxed over ranks, so that every rank
//! runs the same reps = clamp(target / t_call, 20, max_reps); then
//! `batches` timed batches, each after a barrier. A batch's value is the
//! slowest rank's mean time per call (IMB's t_max); rank 0 prints the
//! median over batches:
//!
//! ```text
//! COLL op=allreduce bytes=8 ranks=4 t_max_us_med=1.234 t_avg_us_med=1.100 reps=1000 batches=5
//! ```
//!
//! After the batches, one untimed call with rank-dependent data checks that
//! the operation delivered the right result on every rank.

use pertinax::{Communicator as _, CommunicatorExt as _};
use std::time::Instant;

use anyhow::{bail, Result};
use pertinax::{Comm, Op};

use crate::cli::{CollCounts, CollOp, COLL_CALIBRATION};

/// The buffers of one case.
enum Data {
    /// Barrier.
    Empty,
    /// Byte payloads (bcast, allgather, alltoall; reductions of sizes that
    /// are not a multiple of 8, as u8 sums).
    Bytes { send: Vec<u8>, recv: Vec<u8> },
    /// Reductions: f64 sums of size/8 elements.
    Doubles { send: Vec<f64>, recv: Vec<f64> },
}

/// The reduction operators, made once (not per call).
struct Ops {
    sum_f64: Op<f64>,
    sum_u8: Op<u8>,
    max_f64: Op<f64>,
}

/// One (op, size) with its buffers, sized for `n` ranks.
struct Case {
    op: CollOp,
    bytes: usize,
    data: Data,
}

impl Case {
    fn new(op: CollOp, bytes: usize, n: usize) -> Case {
        let data = match op {
            CollOp::Barrier => Data::Empty,
            CollOp::Bcast => Data::Bytes {
                send: vec![1; bytes],
                recv: Vec::new(),
            },
            CollOp::Reduce | CollOp::Allreduce if bytes.is_multiple_of(8) => Data::Doubles {
                send: vec![1.0; bytes / 8],
                recv: vec![0.0; bytes / 8],
            },
            CollOp::Reduce | CollOp::Allreduce => Data::Bytes {
                send: vec![1; bytes],
                recv: vec![0; bytes],
            },
            CollOp::Allgather => Data::Bytes {
                send: vec![1; bytes],
                recv: vec![0; n * bytes],
            },
            CollOp::Alltoall => Data::Bytes {
                send: vec![1; n * bytes],
                recv: vec![0; n * bytes],
            },
        };
        Case { op, bytes, data }
    }

    /// One call of the operation (root 0 where there is one).
    fn call(&mut self, w: &Comm, ops: &Ops) -> pertinax::Result<pertinax::Outcome> {
        match (&mut self.data, self.op) {
            (_, CollOp::Barrier) => w.barrier(),
            (Data::Bytes { send, .. }, CollOp::Bcast) => w.bcast(send, 0),
            (Data::Doubles { send, recv }, CollOp::Reduce) => w.reduce(send, recv, &ops.sum_f64, 0),
            (Data::Bytes { send, recv }, CollOp::Reduce) => w.reduce(send, recv, &ops.sum_u8, 0),
            (Data::Doubles { send, recv }, CollOp::Allreduce) => {
                w.allreduce(send, recv, &ops.sum_f64)
            }
            (Data::Bytes { send, recv }, CollOp::Allreduce) => w.allreduce(send, recv, &ops.sum_u8),
            (Data::Bytes { send, recv }, CollOp::Allgather) => w.allgather(send, recv),
            (Data::Bytes { send, recv }, CollOp::Alltoall) => w.alltoall(send, recv),
            _ => unreachable!("Case::new pairs every op with its buffers"),
        }
    }

    /// Fills the buffers with rank-dependent data, calls once, and checks
    /// this rank's result; `false` if it is wrong.
    fn check(&mut self, w: &Comm, ops: &Ops) -> pertinax::Result<bool> {
        let (me, n) = (w.rank().index(), w.size());
        let b = self.bytes;
        // Byte `i` that rank `r` contributes (or sends in block `j`).
        let byte = |r: usize, j: usize, i: usize| (r * 31 + j * 7 + i) as u8;
        match (&mut self.data, self.op) {
            (Data::Empty, _) => {
                self.call(w, ops)?;
                Ok(true)
            }
            (Data::Bytes { send, .. }, CollOp::Bcast) => {
                for (i, x) in send.iter_mut().enumerate() {
                    *x = if me == 0 { byte(0, 0, i) } else { 0 };
                }
                self.call(w, ops)?;
                let Data::Bytes { send, .. } = &self.data else {
                    unreachable!()
                };
                Ok(send.iter().enumerate().all(|(i, &x)| x == byte(0, 0, i)))
            }
            (Data::Doubles { send, recv }, op) => {
                let factor = |i: usize| (i % 5 + 1) as f64;
                for (i, x) in send.iter_mut().enumerate() {
                    *x = (me + 1) as f64 * factor(i);
                }
                recv.fill(0.0);
                self.call(w, ops)?;
                let Data::Doubles { recv, .. } = &self.data else {
                    unreachable!()
                };
                let total = (n * (n + 1) / 2) as f64;
                let must = op == CollOp::Allreduce || me == 0;
                Ok(!must
                    || recv
                        .iter()
                        .enumerate()
                        .all(|(i, &x)| x == total * factor(i)))
            }
            (Data::Bytes { send, recv }, op @ (CollOp::Reduce | CollOp::Allreduce)) => {
                for (i, x) in send.iter_mut().enumerate() {
                    *x = byte(me, 0, i);
                }
                recv.fill(0);
                self.call(w, ops)?;
                let Data::Bytes { recv, .. } = &self.data else {
                    unreachable!()
                };
                let expect = |i: usize| (0..n).fold(0u8, |a, r| a.wrapping_add(byte(r, 0, i)));
                let must = op == CollOp::Allreduce || me == 0;
                Ok(!must || recv.iter().enumerate().all(|(i, &x)| x == expect(i)))
            }
            (Data::Bytes { send, recv }, CollOp::Allgather) => {
                for (i, x) in send.iter_mut().enumerate() {
                    *x = byte(me, 0, i);
                }
                recv.fill(0);
                self.call(w, ops)?;
                let Data::Bytes { recv, .. } = &self.data else {
                    unreachable!()
                };
                Ok((0..n).all(|j| (0..b).all(|i| recv[j * b + i] == byte(j, 0, i))))
            }
            (Data::Bytes { send, recv }, CollOp::Alltoall) => {
                for j in 0..n {
                    for i in 0..b {
                        send[j * b + i] = byte(me, j, i);
                    }
                }
                recv.fill(0);
                self.call(w, ops)?;
                let Data::Bytes { recv, .. } = &self.data else {
                    unreachable!()
                };
                // Block j came from rank j, which addressed it to us.
                Ok((0..n).all(|j| (0..b).all(|i| recv[j * b + i] == byte(j, me, i))))
            }
            _ => unreachable!("Case::new pairs every op with its buffers"),
        }
    }
}

/// Measures every case and prints one `COLL` line per case from rank 0.
///
/// # Errors
/// A failed collective, or wrong data on any rank (every rank then fails).
pub fn coll(w: &Comm, cases: &[(CollOp, usize)], counts: CollCounts) -> Result<()> {
    let (me, n) = (w.rank().index(), w.size());
    let ops = Ops {
        sum_f64: Op::sum(),
        sum_u8: Op::sum(),
        max_f64: Op::max(),
    };
    if me == 0 {
        let cores = std::thread::available_parallelism().map_or(0, |c| c.get());
        println!(
            "# impl=pertinax ranks={n} cores={cores} warmup={} batches={} max_reps={} target_ms={}",
            counts.warmup, counts.batches, counts.max_reps, counts.target_ms
        );
    }
    for &(op, bytes) in cases {
        let mut case = Case::new(op, bytes, n);
        for _ in 0..counts.warmup {
            case.call(w, &ops)?;
        }
        w.barrier()?;
        let t0 = Instant::now();
        for _ in 0..COLL_CALIBRATION {
            case.call(w, &ops)?;
        }
        let mut t_call = [t0.elapsed().as_secs_f64() / COLL_CALIBRATION as f64];
        w.allreduce_in_place(&mut t_call, &ops.max_f64)?;
        let reps = counts.reps(t_call[0]);
        let mut t_max = Vec::with_capacity(counts.batches);
        let mut t_avg = Vec::with_capacity(counts.batches);
        for _ in 0..counts.batches {
            w.barrier()?;
            let t0 = Instant::now();
            for _ in 0..reps {
                case.call(w, &ops)?;
            }
            let us = t0.elapsed().as_secs_f64() / reps as f64 * 1e6;
            let mut mx = [us];
            w.allreduce_in_place(&mut mx, &ops.max_f64)?;
            let mut sum = [us];
            w.allreduce_in_place(&mut sum, &ops.sum_f64)?;
            t_max.push(mx[0]);
            t_avg.push(sum[0] / n as f64);
        }
        let ok = case.check(w, &ops)?;
        let mut bad = [u8::from(!ok)];
        w.allreduce_in_place(&mut bad, &Op::max())?;
        if bad[0] != 0 {
            let who = if ok { "another rank" } else { "this rank" };
            bail!(
                "COLL op={} bytes={bytes}: {who} got a wrong result (rank {me})",
                op.name()
            );
        }
        if me == 0 {
            let med = |v: &[f64]| crate::stats::median(v).unwrap_or(f64::NAN);
            println!(
                "COLL op={} bytes={bytes} ranks={n} t_max_us_med={:.3} t_avg_us_med={:.3} reps={reps} batches={}",
                op.name(),
                med(&t_max),
                med(&t_avg),
                counts.batches
            );
        }
    }
    Ok(())
}
