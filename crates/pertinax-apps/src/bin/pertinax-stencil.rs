//! `pertinax-stencil [--nx N --ny N --nz N --iters N] [message-logging
//! options]`: a 3-D seven-point stencil with LULESH's communication
//! pattern, under `pertinax-msglog`, checked bitwise against the
//! one-process computation.
//!
//! ```sh
//! pertinax run -n 8 -- target/release/pertinax-stencil --nx 48 --ny 48 --nz 48 --iters 40
//! pertinax run -n 8 --kill 3@iter#25 -- target/release/pertinax-stencil --cp-int 10
//! ```
//!
//! The grid is split into blocks on a 3-D process grid
//! ([`pertinax_apps::stencil::Decomposition`]); every iteration each rank
//! exchanges the faces of its block with its up to six neighbours
//! (non-blocking receives and sends, no collective) and updates its
//! block (`stencil::iterate`, written over any
//! [`pertinax::Communicator`]). The iterations run in
//! [`pertinax_msglog::run`] (options: `msglog_common::MsgLogArgs`), which
//! checkpoints, logs the faces sent, and recovers from a rank's death by
//! local or global rollback.
//!
//! Before the iterations every rank computes the whole grid in one
//! process ([`pertinax_apps::stencil::sequential`]); in the run's final
//! step ([`pertinax_msglog::run_and_finish`], under the same protection
//! as the iterations: a kill at `finish#1` or `finish.end#1` is
//! recovered) it compares its block bit for bit, and rank 0 gathers the
//! verdicts and the blocks' checksums. Rank 0 prints the one line of
//! stdout:
//!
//! ```text
//! stencil grid=48x48x48 ranks=8 iters=40 checksum=<16 hex digits> acc=<16 hex digits> dmax_bits=<16 hex digits> verified=true rollback=none recoveries=0 ... time_s=0.123
//! ```
//!
//! `checksum` is the whole field's ([`pertinax_apps::stencil::checksum`]),
//! the same for every number of ranks and every recovery; `acc` digests
//! every collective result of the run (`--collectives` adds every
//! collective kind to the `allreduce` of each iteration), the same for
//! every recovery; `dmax_bits` is the last iteration's largest change; the fields from
//! `rollback` on are `msglog_common::summary`'s (`time_s`: the slowest
//! rank's time in the run). The exit status is 0 if and only if every
//! block was bitwise equal to the reference. Diagnostics go to stderr.

mod msglog_common;
mod stencil;

use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use clap::Parser;
use msglog_common::MsgLogArgs;
use pertinax::{CommunicatorExt, Universe};
use pertinax_apps::stencil::{checksum, sequential, Grid};
use pertinax_msglog::Logged;

use stencil::{Problem, State};

#[derive(Debug, Parser)]
#[command(name = "pertinax-stencil", disable_version_flag = true)]
struct Args {
    /// Cells along x.
    #[arg(long, default_value_t = 48)]
    nx: usize,
    /// Cells along y.
    #[arg(long, default_value_t = 48)]
    ny: usize,
    /// Cells along z.
    #[arg(long, default_value_t = 48)]
    nz: usize,
    /// Iterations.
    #[arg(long, default_value_t = 40)]
    iters: u64,
    /// Also call every other collective (barrier, bcast, reduce, gather,
    /// scatter, allgather, alltoall) in each iteration, their results
    /// digested into `acc=` (a test of the library's serving of
    /// collective results).
    #[arg(long)]
    collectives: bool,
    #[command(flatten)]
    msglog: MsgLogArgs,
}

/// The job at this rank; rank 0 prints the summary line. True if every
/// block was verified.
fn job(universe: &Universe, a: &Args) -> anyhow::Result<bool> {
    let world = universe.world();
    let (me, n) = (world.rank().index(), world.size());
    let grid = Grid::new(a.nx, a.ny, a.nz);
    let p = Problem::new(grid, n, me)?;
    let cfg = a.msglog.config()?;
    let want = p.block.extract(&sequential(p.decomp.grid(), a.iters));
    let t0 = Instant::now();
    // The final step, under the protection: this block's verdict and
    // checksum, gathered at rank 0.
    let finish = |st: &State, c: &Logged| {
        let u = &st.u;
        let same =
            want.len() == u.len() && want.iter().zip(u).all(|(x, y)| x.to_bits() == y.to_bits());
        let row = [u64::from(same), checksum(&p.block, u)];
        let mut rows = if me == 0 {
            vec![0u64; 2 * n]
        } else {
            Vec::new()
        };
        c.gather(&row, &mut rows, 0)?;
        Ok((same, rows))
    };
    let report = pertinax_msglog::run_and_finish(
        universe,
        &cfg,
        a.iters,
        || State::initial(&p),
        |it, st, c| stencil::iterate(c, &p, st, it, a.collectives),
        finish,
    )
    .with_context(|| format!("rank {me}: iterations"))?;
    let time_s = t0.elapsed().as_secs_f64();
    let (same, rows) = &report.result;
    if !same {
        eprintln!(
            "pertinax-stencil: rank {me}: block {:?} differs from the reference",
            p.block
        );
    }
    // Collective: every rank takes part.
    let common = msglog_common::summary(&report, a.iters, time_s)
        .with_context(|| format!("rank {me}: summary"))?;
    if me != 0 {
        return Ok(true);
    }
    let verified = rows.chunks_exact(2).all(|r| r[0] == 1);
    let sum = rows.chunks_exact(2).fold(0, |s, r| s ^ r[1]);
    println!(
        "stencil grid={}x{}x{} ranks={n} iters={} checksum={sum:016x} acc={:016x} dmax_bits={:016x} \
         verified={verified} {common}",
        a.nx,
        a.ny,
        a.nz,
        a.iters,
        report.state.acc,
        report.state.dmax.to_bits(),
    );
    Ok(verified)
}

fn main() -> ExitCode {
    let args = Args::parse();
    msglog_common::main_with("pertinax-stencil", |universe| job(universe, &args))
}
