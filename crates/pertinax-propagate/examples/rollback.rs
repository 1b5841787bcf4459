//! Global rollback to the last checkpoint (the third situation of the
//! error-propagation paper): every rank advances a state, keeps an in-memory
//! checkpoint every 5 steps, and when one rank hits an error (here at step
//! 13 on rank 1) every rank rolls back to the last checkpoint and redoes the
//! steps. The final state is checked against a fault-free computation.
//!
//! `pertinax run -n 4 -- target/release/examples/rollback`

use pertinax::CommunicatorExt as _;
use pertinax::Op;
use pertinax_propagate::{GuardError, Guarded};

fn next(x: u64, rank: usize, step: u64) -> u64 {
    x.wrapping_mul(6364136223846793005)
        .wrapping_add(((rank as u64) << 32) | step)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let universe = pertinax::init()?;
    let world = universe.world();
    let (me, n) = (world.rank().index(), world.size());
    let steps = 30u64;
    let g = Guarded::new(&world)?;
    let (mut x, mut step) = (me as u64 + 1, 0u64);
    let mut checkpoint = (x, step);
    let mut failed_once = false;
    let mut rollbacks = 0;
    while step < steps {
        if step % 5 == 0 {
            checkpoint = (x, step);
        }
        let lost = me == 1 && step == 13 && !failed_once;
        failed_once |= lost;
        let y = next(x, me, step);
        let mut sum = [0u64];
        let r = if lost {
            // The signaller gets the same error as every other rank.
            g.signal(13, "lost state at step 13")
                .and_then(|p| Err(GuardError::Propagated(p)))
        } else {
            g.run(|c| c.allreduce(&[y], &mut sum, &Op::bxor()))
        };
        match r {
            Ok(_) => {
                x = y;
                step += 1;
            }
            Err(GuardError::Propagated(p)) => {
                // Every rank rolls back to its last checkpoint; they agree on
                // the step because every rank took it at the same steps, and
                // the earliest one wins if a rank was caught a step behind.
                let mut lo = [0u64];
                g.run(|c| c.allreduce(&[checkpoint.1], &mut lo, &Op::min()))?;
                if checkpoint.1 != lo[0] {
                    return Err(format!("rank {me}: checkpoints disagree").into());
                }
                (x, step) = checkpoint;
                rollbacks += 1;
                if me == 0 {
                    println!("{p}: rolling back to step {step}");
                }
            }
            Err(GuardError::Other(e)) => return Err(e.into()),
        }
    }
    // Check: the state of a fault-free run.
    let want = (0..steps).fold(me as u64 + 1, |x, s| next(x, me, s));
    let ok = (x == want) as u64;
    let mut all = [0u64];
    g.run(|c| c.allreduce(&[ok], &mut all, &Op::sum()))?;
    if me == 0 {
        println!(
            "rollback: {rollbacks} rollback(s), final state verified on {}/{n} ranks",
            all[0]
        );
    }
    if all[0] as usize != n {
        return Err("wrong final state".into());
    }
    Ok(())
}
