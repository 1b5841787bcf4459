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
//! # Output
//!
//! Rank 0 prints one line on stdout (diagnostics go to stderr):
//!
//! ```text
//! cg class=S ranks=4 zeta=8.5971775078648e+00 zeta_bits=4021319b4b2d6b6d verified=true rollback=none recoveries=0 time_s=0.041
//! ```
//!
//! `verified` is NPB's check (relative error of zeta at most 1e-10),
//! `zeta_bits` zeta's IEEE bits in hex (to compare runs bitwise),
//! `time_s` rank 0's time for the iterations (after the matrix
//! generation). The exit status is 0 when zeta verifies, 1 otherwise or
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
use pertinax_apps::cg::Class;

mod cg;

/// NPB CG on every rank of the job.
#[derive(Debug, Parser)]
#[command(name = "pertinax-cg", version)]
struct Args {
    /// The problem class: S, W or A.
    #[arg(value_parser = parse_class)]
    class: Class,
}

fn parse_class(s: &str) -> Result<Class, String> {
    s.parse()
        .map_err(|e: pertinax_apps::cg::CgError| e.to_string())
}

/// How a run ended, for the summary line.
struct Summary {
    state: cg::State,
    rollback: String,
    recoveries: u32,
    time_s: f64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match job(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("pertinax-cg: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The whole job at this rank; whether zeta verified.
fn job(args: &Args) -> Result<bool> {
    let universe = pertinax::init().context("cannot start")?;
    let world = universe.world();
    let (rank, n) = (world.rank().index(), world.size());
    let class = args.class;
    let problem = cg::Problem::new(class, rank, n).with_context(|| format!("class {class}"))?;
    let summary = run_plain(&world, &problem).with_context(|| format!("rank {rank}"))?;
    let zeta = summary.state.zeta;
    let verified = class.verify(zeta);
    if rank == 0 {
        println!(
            "cg class={class} ranks={n} zeta={} zeta_bits={:016x} verified={verified} \
             rollback={} recoveries={} time_s={:.3}",
            c_exp(zeta),
            zeta.to_bits(),
            summary.rollback,
            summary.recoveries,
            summary.time_s
        );
    }
    universe.finalize().context("finalize")?;
    Ok(verified)
}

/// The class's iterations on the plain world communicator (a failure is
/// an error: the communicator is revoked so that no other rank waits
/// for this one).
fn run_plain(world: &pertinax::Comm, problem: &cg::Problem) -> Result<Summary> {
    let t0 = Instant::now();
    let mut state = cg::State::initial(problem);
    for it in 1..=problem.class.niter() {
        if let Err(e) = cg::iterate(world, problem, &mut state, it) {
            let _ = world.revoke();
            return Err(anyhow::Error::new(e).context(format!("iteration {it}")));
        }
    }
    Ok(Summary {
        state,
        rollback: "none".to_string(),
        recoveries: 0,
        time_s: t0.elapsed().as_secs_f64(),
    })
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
