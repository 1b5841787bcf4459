//! The offload paper's microbenchmark (figure 7, table 2): every master
//! offloads one `hello` task per round onto its own booster (one booster
//! per master, allocated over the world) and waits; `pertinax run -n M
//! pertinax-offhello [--reps R] [--spares G] [--no-recover]`.
//!
//! Fault points as in `pertinax-nbody`: the library marks every task
//! execution with `pertinax::fault_point("task")`; a first execution also
//! marks `hello.B.T` (booster `B`, round `T`), so
//! `PERTINAX_FAULTS=hello.3.100@1` kills booster 3 at the start of round
//! 100's task, once.
//!
//! Rank 0 prints `OFFHELLO ... verified=true|false`: per-round times
//! (median, 90th percentile), the loop's time, and the time of the round
//! in which a recovery happened (`fault_round_us`: from the round's start,
//! just before the kill, to the re-executed task's result at every
//! master).

mod offload_common;

use pertinax::CommunicatorExt as _;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use clap::Parser;
use pertinax::Op;
use pertinax_offload::{Boosters, Offload, Options, Registry, TaskContext, TaskFailure};

#[derive(Debug, Parser)]
#[command(name = "pertinax-offhello")]
struct Args {
    /// Rounds (one task per master each).
    #[arg(long, default_value_t = 200)]
    reps: u64,
    /// Spare booster groups.
    #[arg(long, default_value_t = 0)]
    spares: usize,
    /// Offload without `recover` (the paper's original configuration).
    #[arg(long)]
    no_recover: bool,
}

fn hello(ctx: &TaskContext<'_>, round: u64) -> Result<u64, TaskFailure> {
    if ctx.attempt() == 0 {
        pertinax::fault_point(&format!("hello.{}.{round}", ctx.booster()));
    }
    Ok(round.rotate_left(17) ^ ctx.booster() as u64)
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn run(universe: &pertinax::Universe, a: &Args) -> anyhow::Result<bool> {
    let world = universe.world();
    let (me, n) = (world.rank().index(), world.size());
    let mut b =
        Boosters::alloc_with(&world, n, Options::new().spares(a.spares)).context("alloc")?;
    let mut rounds = Vec::with_capacity(a.reps as usize);
    let mut fault_round_us = 0.0f64;
    let mut ok = true;
    let t0 = Instant::now();
    for r in 0..a.reps {
        let before = b.stats().recoveries;
        let t = Instant::now();
        let mut spec = Offload::new("hello", me);
        if !a.no_recover {
            spec = spec.recover();
        }
        let h = b.offload::<u64, u64>(spec, &r)?;
        b.taskwait().context("taskwait")?;
        let v = b.take(h).map_err(|e| anyhow::anyhow!("{}", e.error))?;
        let us = t.elapsed().as_secs_f64() * 1e6;
        ok &= v == r.rotate_left(17) ^ me as u64;
        if b.stats().recoveries > before {
            fault_round_us = fault_round_us.max(us);
        } else {
            rounds.push(us);
        }
    }
    let elapsed = t0.elapsed();
    let st = b.stats();
    b.free().context("free")?;
    let mut all = [0u64];
    world.allreduce(&[u64::from(ok)], &mut all, &Op::min())?;
    let ok = all[0] == 1;
    rounds.sort_by(f64::total_cmp);
    if me == 0 {
        println!(
            "OFFHELLO masters={n} boosters={n} reps={} recover={} spares={} recoveries={} \
             spares_used={} round_med_us={:.1} round_p90_us={:.1} fault_round_us={:.1} \
             elapsed_ms={:.3} verified={ok}",
            a.reps,
            !a.no_recover,
            a.spares,
            st.recoveries,
            st.spares_used,
            pct(&rounds, 0.5),
            pct(&rounds, 0.9),
            fault_round_us,
            elapsed.as_secs_f64() * 1e3
        );
    }
    Ok(ok)
}

fn main() -> ExitCode {
    offload_common::offload_main(
        "pertinax-offhello",
        || {
            let mut reg = Registry::new();
            reg.register("hello", hello);
            reg
        },
        run,
    )
}
