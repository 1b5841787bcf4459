//! Local failure, local recovery (the first situation of the
//! error-propagation paper): every rank owns a block of data; one rank
//! (rank 2, at step 4) finds its block corrupted and signals; every rank
//! learns of it at its next operation, the owner recomputes its block from
//! scratch while the others keep theirs, and all redo the step. The final
//! global checksum is checked.
//!
//! `pertinax run -n 4 -- target/release/examples/local_recovery`

use pertinax::CommunicatorExt as _;
use pertinax::Op;
use pertinax_propagate::{GuardError, Guarded};

/// Block of `rank` after `step` steps.
fn block(rank: usize, step: u64) -> Vec<u64> {
    (0..1000u64)
        .map(|i| {
            (i + 1)
                .wrapping_mul(rank as u64 + 7)
                .wrapping_add(step * 31)
        })
        .collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let universe = pertinax::init()?;
    let world = universe.world();
    let (me, n) = (world.rank().index(), world.size());
    let g = Guarded::new(&world)?;
    let steps = 10u64;
    let mut step = 0u64;
    let mut data = block(me, 0);
    let mut corrupted_once = false;
    while step < steps {
        let corrupt = me == 2 % n && step == 4 && !corrupted_once;
        if corrupt {
            corrupted_once = true;
            data[17] ^= 0xdead; // the local failure
        }
        let local: u64 = data.iter().fold(0, |a, v| a.wrapping_add(*v));
        let mut total = [0u64];
        let r = if corrupt {
            // The signaller gets the same error as every other rank.
            g.signal(4, "block checksum mismatch")
                .and_then(|p| Err(GuardError::Propagated(p)))
        } else {
            g.run(|c| c.allreduce(&[local], &mut total, &Op::sum()))
        };
        match r {
            Ok(_) => {
                let want = (0..n).fold(0u64, |a, r| {
                    block(r, step).iter().fold(a, |a, v| a.wrapping_add(*v))
                });
                if total[0] != want {
                    return Err(format!("step {step}: checksum {} want {want}", total[0]).into());
                }
                step += 1;
                data = block(me, step);
            }
            Err(GuardError::Propagated(p)) => {
                // Local recovery: only the ranks that signalled recompute.
                if p.signals.iter().any(|s| s.rank == world.rank()) {
                    data = block(me, step);
                }
                if me == 0 {
                    println!("step {step}: {p}: the owner recomputes its block");
                }
                // Resume together from the earliest step.
                let mut lo = [0u64];
                g.run(|c| c.allreduce(&[step], &mut lo, &Op::min()))?;
                if lo[0] != step {
                    step = lo[0];
                    data = block(me, step);
                }
            }
            Err(GuardError::Other(e)) => return Err(e.into()),
        }
    }
    if me == 0 {
        println!("local recovery: {steps} steps, every global checksum verified");
    }
    Ok(())
}
