//! The demonstration job, a rank dies and the others finish the work:
//!
//! ```sh
//! pertinax run -n 4 --tag-output --kill 3@chunk#6 -- target/release/examples/demo
//! ```
//!
//! The ranks integrate 4/(1+x²) over [0, 1] (which gives π) in rounds of
//! chunks. The launcher kills rank 3 when it reaches its sixth chunk
//! (`--kill 3@chunk#6`; the program marks the place with
//! `pertinax::fault_point("chunk")`). The survivors' allreduce reports the
//! failure; they revoke the communicator, shrink it, redo the interrupted
//! round among themselves, and rank 0 checks π at the end. Without
//! `--kill`, nothing fails and the same result comes out. Then a token
//! circles the ring of survivors and ranks 0 and 1 time a ping-pong.
//!
//! With `--spares 1`, pass `replace` as the program's argument: the dead
//! rank is then replaced by the spare (same size, same ranks) instead of
//! shrinking.

use pertinax::{Communicator as _, CommunicatorExt as _};
use std::time::Instant;

use pertinax::{Comm, Error, Op, RankList, Role};

/// Chunks of the integral; each is `STEPS / CHUNKS` midpoints.
const CHUNKS: u64 = 64;
const STEPS: u64 = 64_000_000;

/// The sum of chunk `c`'s midpoints (times the step width).
fn chunk(c: u64) -> f64 {
    pertinax::fault_point("chunk");
    let per = STEPS / CHUNKS;
    let h = 1.0 / STEPS as f64;
    (c * per..(c + 1) * per)
        .map(|i| {
            let x = (i as f64 + 0.5) * h;
            4.0 / (1.0 + x * x)
        })
        .sum::<f64>()
        * h
}

fn main() -> Result<(), Error> {
    let universe = pertinax::init()?;
    let replace = std::env::args().nth(1).as_deref() == Some("replace");
    let mut comm: Comm = universe.world();
    let say = |c: &Comm, msg: String| {
        if c.rank().index() == 0 {
            println!("{msg}");
        }
    };
    if let Role::Replacement { rank, .. } = universe.role() {
        println!("replacement process takes over rank {rank}");
    }

    // 1. π in rounds of `size` chunks per rank; a round that fails is redone.
    let mut pi = 0.0;
    let mut next = 0u64;
    let mut failures = 0;
    if universe.role() != Role::Original {
        // A replacement learns where the others are.
        let mut s = [0u64];
        comm.bcast(&mut s, 0)?;
        next = s[0];
        let mut p = [0f64];
        comm.bcast(&mut p, 0)?;
        pi = p[0];
    }
    while next < CHUNKS {
        let (rank, size) = (comm.rank().index() as u64, comm.size() as u64);
        let round: Vec<u64> = (next..CHUNKS.min(next + 2 * size)).collect();
        let part: f64 = round
            .iter()
            .skip(rank as usize)
            .step_by(size as usize)
            .map(|&c| chunk(c))
            .sum();
        let mut sum = [0f64];
        let r = comm.allreduce(&[part], &mut sum, &Op::sum());
        // Everybody agrees whether the round worked everywhere.
        if let Err(e) = &r {
            if !e.is_fault() {
                return Err(e.clone());
            }
            comm.revoke()?;
        }
        let agreed = comm.agree_detailed(r.is_ok() as u32)?;
        if agreed.flags == 1 && agreed.failed.is_empty() {
            pi += sum[0];
            next = round.last().map_or(CHUNKS, |c| c + 1);
            continue;
        }
        failures += 1;
        let t = Instant::now();
        let failed = &agreed.failed;
        if replace {
            let r = comm.replace_failed()?;
            say(&r.comm, format!(
                "round at chunk {next}: rank(s) {} failed; replaced in {:.0} us, redoing the round on {} ranks",
                RankList(failed),
                t.elapsed().as_secs_f64() * 1e6,
                r.comm.size()
            ));
            comm = r.comm;
            let (mut s, mut p) = ([next], [pi]);
            comm.bcast(&mut s, 0)?;
            comm.bcast(&mut p, 0)?;
        } else {
            comm = comm.shrink()?;
            say(&comm, format!(
                "round at chunk {next}: rank(s) {} failed; revoked and shrunk in {:.0} us, redoing the round on {} ranks",
                RankList(failed),
                t.elapsed().as_secs_f64() * 1e6,
                comm.size()
            ));
        }
    }
    let err = (pi - std::f64::consts::PI).abs();
    say(
        &comm,
        format!(
            "pi = {pi:.12} on {} ranks after {failures} failure(s) (error {err:.1e})",
            comm.size()
        ),
    );
    if comm.rank().index() == 0 && err > 1e-9 {
        universe.abort(1, "wrong value of pi");
    }

    // 2. A token around the ring of survivors, 1000 laps.
    let (rank, size) = (comm.rank().index(), comm.size());
    let next = (rank + 1) % size;
    let prev = (rank + size - 1) % size;
    let laps = 1000u64;
    let t = Instant::now();
    let mut tok = [0u64];
    for _ in 0..laps {
        if rank == 0 {
            comm.send(&[tok[0] + 1], next, 2)?;
            comm.recv(&mut tok, prev, 2)?;
        } else {
            comm.recv(&mut tok, prev, 2)?;
            comm.send(&[tok[0] + 1], next, 2)?;
        }
    }
    if rank == 0 {
        let hops = laps * size as u64;
        assert_eq!(tok[0], hops, "the token lost a hop");
        println!(
            "token: {hops} hops in {:.2} ms ({:.2} us per hop)",
            t.elapsed().as_secs_f64() * 1e3,
            t.elapsed().as_secs_f64() * 1e6 / hops as f64
        );
    }

    // 3. Ping-pong of 8 bytes and 1 MiB between ranks 0 and 1.
    if size > 1 && rank < 2 {
        for len in [8usize, 1 << 20] {
            let mut buf = vec![1u8; len];
            let reps = if len > 1000 { 200 } else { 20_000 };
            let t = Instant::now();
            for _ in 0..reps {
                if rank == 0 {
                    comm.send(&buf, 1, 3)?;
                    comm.recv(&mut buf, 1, 3)?;
                } else {
                    comm.recv(&mut buf, 0, 3)?;
                    comm.send(&buf, 0, 3)?;
                }
            }
            if rank == 0 {
                let half = t.elapsed().as_secs_f64() / (2.0 * reps as f64);
                println!(
                    "ping-pong {len} B: {:.3} us half round trip, {:.2} GB/s",
                    half * 1e6,
                    len as f64 / half / 1e9
                );
            }
        }
    }
    comm.barrier()?;
    say(&comm, "demo finished: result verified".into());
    universe.finalize()
}
