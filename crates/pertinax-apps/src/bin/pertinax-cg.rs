//! `pertinax-cg CLASS`: the NAS Parallel Benchmarks CG kernel (NPB 3.x,
//! the MPI version's distribution and exchanges) on every rank of a job.
//!
//! ```sh
//! pertinax run -n 8 -- target/release/pertinax-cg A
//! ```
//!
//! # What it does
//!
//! The ranks (a power of two) form NPB's `nprows x npcols` grid; each
//! generates its block of the class's matrix and runs the class's 15
//! outer iterations ([`cg::iterate`]: 25 CG steps each, with cg.f's
//! point-to-point exchanges, no collective). NPB's untimed warm-up
//! iteration is not run.
//!
//! The iterations run under [`pertinax_msglog::run`] (options:
//! `msglog_common::MsgLogArgs`): transactional iterations, coordinated
//! checkpoints every `--cp-int` iterations and, in the default `logged`
//! mode, the payload log that lets a failure be recovered by a local
//! rollback. `--mode plain` runs them without protection. `--plain`
//! bypasses the library: the iterations run on the world communicator
//! directly (the baseline; a failure ends the job, the communicator
//! revoked so that no rank waits for the dead one).
//!
//! # Output
//!
//! Rank 0 prints one line on stdout (diagnostics go to stderr):
//!
//! ```text
//! cg class=S ranks=4 zeta=8.5971775078648e+00 zeta_bits=402131c140145f4c verified=true rollback=none recoveries=0 ... time_s=0.041
//! ```
//!
//! `verified` is NPB's check (relative error of zeta at most 1e-10) and,
//! under pertinax-msglog, that every rank's zeta has the same bits
//! (gathered at rank 0 in the run's final step, under the protection: a
//! kill at `finish#1` or `finish.end#1` is recovered),
//! `zeta_bits` zeta's IEEE bits in hex (to compare runs bitwise); the
//! fields from `rollback` on are `msglog_common::summary`'s (`time_s`:
//! the slowest rank's time for the iterations, after the matrix
//! generation). With `--plain` they are `rollback=none recoveries=0
//! time_s=...` (rank 0's time). The exit status is 0 when zeta verifies, 1 otherwise or
//! on an error.
//!
//! # Fault points
//!
//! `cg.iter` (each outer iteration) and `cg.step` (each inner step), for
//! `pertinax run --kill RANK@NAME#K`.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Parser;
use msglog_common::MsgLogArgs;
use pertinax::{Communicator, CommunicatorExt, Universe};
use pertinax_apps::cg::Class;

mod cg;
mod msglog_common;

/// NPB CG on every rank of the job.
#[derive(Debug, Parser)]
#[command(name = "pertinax-cg", version)]
struct Args {
    /// The problem class: S, W or A.
    #[arg(value_parser = parse_class)]
    class: Class,
    /// Run without pertinax-msglog, on the world communicator (the
    /// baseline); the message-logging options are then ignored.
    #[arg(long)]
    plain: bool,
    #[command(flatten)]
    msglog: MsgLogArgs,
}

fn parse_class(s: &str) -> Result<Class, String> {
    s.parse()
        .map_err(|e: pertinax_apps::cg::CgError| e.to_string())
}

fn main() -> ExitCode {
    let args = Args::parse();
    msglog_common::main_with("pertinax-cg", |universe| job(universe, &args))
}

/// The job at this rank; rank 0 prints the summary line. Whether zeta
/// verified (every rank has the same zeta).
fn job(universe: &Universe, args: &Args) -> Result<bool> {
    let world = universe.world();
    let (rank, n) = (world.rank().index(), world.size());
    let class = args.class;
    let problem = cg::Problem::new(class, rank, n).with_context(|| format!("class {class}"))?;
    let (state, zetas, common) = if args.plain {
        let (state, common) =
            run_plain(&world, &problem).with_context(|| format!("rank {rank}"))?;
        (state, Vec::new(), common)
    } else {
        run_logged(universe, &args.msglog, &problem).with_context(|| format!("rank {rank}"))?
    };
    let zeta = state.zeta;
    // Every rank's zeta (gathered at rank 0 by the final step) is rank 0's.
    let verified = class.verify(zeta) && zetas.iter().all(|&z| z == zeta.to_bits());
    if rank == 0 {
        println!(
            "cg class={class} ranks={n} zeta={} zeta_bits={:016x} verified={verified} {common}",
            c_exp(zeta),
            zeta.to_bits(),
        );
    }
    Ok(verified)
}

/// The iterations under pertinax-msglog: the final state, every rank's
/// zeta bits at rank 0 (empty elsewhere; gathered in the run's final
/// step, under the protection) and the summary fields from `rollback` on
/// (collective: every rank takes part).
fn run_logged(
    universe: &Universe,
    msglog: &MsgLogArgs,
    problem: &cg::Problem,
) -> Result<(cg::State, Vec<u64>, String)> {
    let cfg = msglog.config()?;
    let niter = problem.class.niter();
    let t0 = Instant::now();
    let report = pertinax_msglog::run_and_finish(
        universe,
        &cfg,
        niter,
        || cg::State::initial(problem),
        |it, st, c| cg::iterate(c, problem, st, it),
        |st, c| {
            let root = c.rank().index() == 0;
            let mut zetas = vec![0u64; if root { c.size() } else { 0 }];
            c.gather(&[st.zeta.to_bits()], &mut zetas, 0)?;
            Ok(zetas)
        },
    )
    .context("iterations")?;
    let time_s = t0.elapsed().as_secs_f64();
    let common = msglog_common::summary(&report, niter, time_s).context("summary")?;
    Ok((report.state, report.result, common))
}

/// The iterations on the world communicator, without protection.
fn run_plain(world: &pertinax::Comm, problem: &cg::Problem) -> Result<(cg::State, String)> {
    let t0 = Instant::now();
    let mut state = cg::State::initial(problem);
    for it in 0..problem.class.niter() {
        if let Err(e) = cg::iterate(world, problem, &mut state, it) {
            let _ = world.revoke();
            return Err(anyhow::Error::new(e).context(format!("iteration {it}")));
        }
    }
    let time_s = t0.elapsed().as_secs_f64();
    Ok((
        state,
        format!("rollback=none recoveries=0 time_s={time_s:.6}"),
    ))
}

/// `x` as C's `%.13e` prints it (`8.5971775078648e+00`).
fn c_exp(x: f64) -> String {
    let s = format!("{x:.13e}");
    match s.split_once('e') {
        Some((m, e)) => match e.parse::<i32>() {
            Ok(e) => format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs()),
            Err(_) => s,
        },
        None => s,
    }
}
