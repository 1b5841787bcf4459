//! `pertinax-bench`: benchmarks of pertinax, launch by launch against
//! Open MPI where it is installed.
//!
//! ```text
//! pertinax-bench pingpong [--launches K] [--json] [--no-ompi] [--sizes 0,8,64K]
//! pertinax-bench pingping ...
//! pertinax-bench launch [--ranks 1,2,4,8,16]
//! pertinax-bench coll [--ranks 2,4,8,16] [--ops barrier,allreduce] [--sizes 8,64K] [--launches 3]
//! pertinax-bench ft [--ranks 4,8,16] [--modes recv,allreduce,agreeblk,agree] [--parts compare,cost,replace,spawn]
//! pertinax-bench propagate [--ranks 2,4,8,16] [--reps 1000] [--launches 3]
//! pertinax-bench resilient [--parts overhead,repair,apps] [--ranks 2,4,8,16] [--repair-ranks 4,8,16]
//! pertinax-bench msglog [--parts overhead,rollback] [--classes A] [--ranks 8] [--launches 3] [--json]
//! pertinax-bench all --launches 5
//! pertinax-bench regress --against DIR [--launches K]   # old build in DIR vs this one
//! pertinax-bench coll --json --csv rows.csv --plot figures/ > rows.json
//! pertinax-bench plot --in rows.json --out figures/      # figures from saved rows
//! pertinax run -n 2 -- pertinax-bench worker pingpong   # the measuring side
//! pertinax-bench pingpong|pingping|coll|ft --backend mpi [--mpi-exe PATH] ...
//! ```
//!
//! `--backend mpi` measures pertinax over Open MPI (the MPI backend): the
//! pertinax ranks are this program built with the feature (`--mpi-exe`,
//! default `target/mpi/release/pertinax-bench`, built by
//! `PERTINAX_MPICC=/tmp/ompi/bin/mpicc CARGO_TARGET_DIR=target/mpi cargo
//! build --release -p pertinax-bench --features pertinax/mpi`) started by
//! `mpirun --with-ft ulfm`, beside the C anchors on the same Open MPI (also
//! `--with-ft ulfm`), interleaved; rows say `"impl":"pertinax-mpi"`. This
//! program itself needs no feature.
//!
//! This machine's speed changes between launches and other jobs share it,
//! so every benchmark interleaves its configurations launch by launch, runs
//! the host sentinel (`c2c.c`) before each launch, and reports the median
//! and the minimum over launches. Code map:
//! - [`cli`]: the command line; [`progress`]: `all`'s progress bar;
//! - [`setup`]: finding the launcher, Open MPI and the anchors, compiling C;
//! - [`run`]: one launch under a time limit, interleaving;
//! - [`host`]: the host-noise sentinel; [`contention`]: other jobs' CPU use;
//! - [`parse`]: the `KEY k=v` lines every measuring program prints;
//! - [`stats`]: medians, minima, ratios, per-row series over launches;
//! - [`report`]: Markdown tables and JSON rows (`--json` on stdout,
//!   `--csv FILE`, `--plot DIR`); [`rows`]: the provenance every row
//!   carries (commit, version, date, host cores, command line), CSV, saved
//!   rows read back; [`plot`]: the SVG figures drawn from rows;
//! - [`mod@bench`]: one module per benchmark (`regress`: this build against an
//!   older one), each made of [`bench::campaign`]s (variants run
//!   interleaved, read as series or tallies of judged launches);
//!   [`worker`]: the in-job side.
//!
//! The Open MPI side runs the anchors of `../shared/anchors/ompi` and, where
//! they lack a program, this crate's `c/` (ping-ping, the collective sweep,
//! error propagation).
#![forbid(unsafe_code)]

mod bench;
mod cli;
mod contention;
mod host;
mod parse;
mod plot;
mod progress;
mod report;
mod rows;
mod run;
mod setup;
mod stats;
mod worker;

use std::time::Instant;

use anyhow::Result;
use clap::{Args, Parser};

use bench::p2p::Pattern;
use bench::Context;
use cli::{
    Bench, Cli, CollOpts, Command, FtOpts, MsglogOpts, PropagateOpts, ResilientOpts, WorkerArgs,
    WorkerKind,
};

fn main() -> Result<()> {
    let started = Instant::now();
    let started_real = worker::real_s();
    let cli = Cli::parse();
    match cli.command {
        Command::Worker(w) => worker_main(&w, started, started_real),
        Command::Plot(a) => {
            let rows = rows::read(&a.input)?;
            let written = plot::all(&rows, &a.out)?;
            for p in &written {
                println!("{}", p.display());
            }
            if written.is_empty() {
                eprintln!("note: no rows to plot in {} rows read", rows.len());
            }
            Ok(())
        }
        Command::Pingpong(a) => measure(&a, None, |ctx, o| {
            bench::p2p::run(ctx, &o.reps, o.ring_bytes, Pattern::PingPong)
        }),
        Command::Pingping(a) => measure(&a, None, |ctx, o| {
            bench::p2p::run(ctx, &o.reps, o.ring_bytes, Pattern::PingPing)
        }),
        Command::Launch(a) => measure(&a, Some("launch"), |ctx, o| {
            bench::launch::run(ctx, &o.ranks)
        }),
        Command::Coll(a) => measure(&a, None, |ctx, o| bench::coll::run(ctx, &o.ranks, &o.coll)),
        Command::All(a) => measure(&a, Some("all"), all),
        Command::Ft(a) => measure(&a, None, bench::ft::run),
        Command::Propagate(a) => measure(&a, Some("propagate"), bench::propagate::run),
        Command::Offload(a) => measure(&a, Some("offload"), bench::offload::run),
        Command::Msglog(a) => measure(&a, Some("msglog"), bench::msglog::run),
        Command::Resilient(a) => measure(&a, Some("resilient"), bench::resilient::run),
        Command::Regress(a) => measure(&a, Some("regress"), |ctx, o| {
            bench::regress::run(ctx, &o.against, o.tolerance)
        }),
    }
}

/// Runs one benchmark in a fresh [`Context`] (`native`: the name of a
/// benchmark without a `--backend mpi` form, refused there), then draws
/// the `--plot` figures of whatever rows it made (also when it failed part
/// way).
fn measure<T: Args>(
    a: &Bench<T>,
    native: Option<&str>,
    f: impl FnOnce(&mut Context, &T) -> Result<()>,
) -> Result<()> {
    let mut ctx = Context::new(&a.common)?;
    let r = match native {
        Some(name) => ctx.native_only(name),
        None => Ok(()),
    };
    let r = r.and_then(|()| f(&mut ctx, &a.opts));
    let drawn = ctx.out.finish();
    r.and(drawn)
}

/// `all`: every benchmark but offload and regress, one after another,
/// with a progress bar on a terminal ([`progress`]).
fn all(ctx: &mut Context, a: &cli::AllArgs) -> Result<()> {
    // The last part needs propagate-ranks: fail now, not after an hour.
    setup::propagate_ranks(None)?;
    let msglog = MsglogOpts::default();
    bench::msglog::Programs::find(&ctx.launcher, None, &msglog.cases)?;
    let scale = ctx.launches as f64 / 5.0;
    progress::start(
        progress::ALL_PARTS
            .iter()
            .map(|&(name, s)| (name, s * scale))
            .collect(),
    );
    let r = all_parts(ctx, a, &msglog);
    progress::finish();
    r
}

/// The parts of `all`, in [`progress::ALL_PARTS`]'s order.
fn all_parts(ctx: &mut Context, a: &cli::AllArgs, msglog: &MsglogOpts) -> Result<()> {
    bench::p2p::run(ctx, &a.reps, None, Pattern::PingPong)?;
    progress::next_part();
    bench::p2p::run(ctx, &a.reps, None, Pattern::PingPing)?;
    progress::next_part();
    bench::launch::run(ctx, &a.launch.ranks)?;
    progress::next_part();
    bench::coll::run(ctx, &a.coll_ranks, &CollOpts::default())?;
    progress::next_part();
    bench::ft::run(ctx, &FtOpts::default())?;
    progress::next_part();
    bench::propagate::run(ctx, &PropagateOpts::default())?;
    progress::next_part();
    bench::resilient::run(ctx, &ResilientOpts::default())?;
    progress::next_part();
    bench::msglog::run(ctx, msglog)
}

/// The in-job side: joins the job, measures, prints `KEY k=v` lines.
fn worker_main(w: &WorkerArgs, started: Instant, started_real: f64) -> Result<()> {
    if w.kind == WorkerKind::Hello {
        return worker::hello(started);
    }
    let u = pertinax::init()?;
    let world = u.world();
    if w.kind == WorkerKind::Ft {
        worker::ft(&u, &w.ft(started_real))?;
    } else if w.kind == WorkerKind::Resilient {
        worker::resilient(&world, &w.res())?;
    } else if w.kind == WorkerKind::Repair {
        worker::repair(&world, w.repair())?;
    } else if w.kind == WorkerKind::Coll {
        let c = w.coll();
        worker::coll(&world, &c.cases(), c.counts(false))?;
    } else {
        let reps = w.reps();
        let (r, warmup, batches) = reps.counts(false);
        worker::pingpong(
            &world,
            &reps.sizes().0,
            r,
            warmup,
            batches,
            w.kind == WorkerKind::Pingping,
        )?;
    }
    u.finalize()?;
    Ok(())
}
