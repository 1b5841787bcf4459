//! The demonstration job: `pertinax run -n 4 -- target/release/examples/demo`.
//!
//! Every rank integrates its share of 4/(1+x²) over [0, 1] (which gives π),
//! the partial sums travel to rank 0 as point-to-point messages, and rank 0
//! checks the result. Then a token circles the ring and the ranks time a
//! ping-pong, so the output shows the transport at work.

use std::time::Instant;

fn main() -> Result<(), pertinax::Error> {
    let universe = pertinax::init()?;
    let world = universe.world();
    let (rank, size) = (world.rank().index(), world.size());

    // 1. π by the midpoint rule, split by rank.
    let steps = 10_000_000u64;
    let h = 1.0 / steps as f64;
    let part: f64 = (rank as u64..steps)
        .step_by(size)
        .map(|i| {
            let x = (i as f64 + 0.5) * h;
            4.0 / (1.0 + x * x)
        })
        .sum::<f64>()
        * h;
    if rank == 0 {
        let mut pi = part;
        for _ in 1..size {
            let mut p = [0f64];
            world.recv(&mut p, pertinax::ANY_SOURCE, 1)?;
            pi += p[0];
        }
        let err = (pi - std::f64::consts::PI).abs();
        println!("pi = {pi:.12} from {size} ranks (error {err:.1e})");
        if err > 1e-9 {
            universe.abort(1, "wrong value of pi");
        }
    } else {
        world.send(&[part], 0, 1)?;
    }

    // 2. A token around the ring, 1000 laps.
    let next = (rank + 1) % size;
    let prev = (rank + size - 1) % size;
    let laps = 1000u64;
    let t = Instant::now();
    let mut tok = [0u64];
    for _ in 0..laps {
        if rank == 0 {
            world.send(&[tok[0] + 1], next, 2)?;
            world.recv(&mut tok, prev, 2)?;
        } else {
            world.recv(&mut tok, prev, 2)?;
            world.send(&[tok[0] + 1], next, 2)?;
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
                    world.send(&buf, 1, 3)?;
                    world.recv(&mut buf, 1, 3)?;
                } else {
                    world.recv(&mut buf, 0, 3)?;
                    world.send(&buf, 0, 3)?;
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
    world.barrier()?;
    if rank == 0 {
        println!("demo finished: result verified");
    }
    universe.finalize()
}
