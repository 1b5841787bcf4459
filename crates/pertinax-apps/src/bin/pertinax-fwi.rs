//! An FWI-like nested offload (the offload paper's section 6.4, figures 13
//! and 14): `pertinax run -n M pertinax-fwi [--shots S] [--workers W]
//! [--grid G] [--freqs F] [--grads I] [--tests T] [--work K] [--spares G]
//! [--no-recover]`.
//!
//! One program in three roles. The masters allocate one *slave* per shot
//! over the world (a shared allocation: every wait is agreed among the
//! masters); master 0 runs the inversion of [`pertinax_apps::fwi::invert`]
//! (frequencies, gradient iterations, line-search tests), the other
//! masters take part in its waits. Each shot's kernel is a task on its
//! slave; the slave allocates `--workers` *workers* of its own (over its
//! self communicator: nesting, no consensus), offloads one grid slice to
//! each, and post-processes their results. A worker's failure is
//! recovered by its slave, a slave's by the masters, never above.
//!
//! Fault points, on the booster side: the library marks the start of
//! every task execution with `pertinax::fault_point("task")`; a first
//! execution (attempt 0) also marks `slave.S.N` (slave `S`, at the start
//! of its kernel number `N`, from 0, in offload order) or `worker.S.N.W`
//! (worker `W` of that kernel, at the start of its slice; only under the
//! slave's first execution). A launcher's plan reaches spawned processes
//! only without a victim (`PERTINAX_FAULTS=worker.0.1.1@1` under `pertinax
//! run` or `mpirun -x`) and strikes every process that reaches the point,
//! replacements too: these exact names strike one process once, and
//! several shots make failures in a row.
//!
//! Master 0 ends with `FWI ... verified=true|false` (the model's digest
//! against the one-process inversion); `false` exits 1.

mod offload_common;

use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use clap::Parser;
use pertinax_apps::fwi::{self, Config, Partial, Shot};
use pertinax_offload::{Boosters, Offload, Options, Registry, TaskContext, TaskFailure};
use serde::{Deserialize, Serialize};

#[derive(Debug, Parser)]
#[command(name = "pertinax-fwi", version)]
struct Args {
    /// Shots (one slave each).
    #[arg(long, default_value_t = 2)]
    shots: usize,
    /// Workers per slave.
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// Grid cells of the model.
    #[arg(long, default_value_t = 64)]
    grid: usize,
    /// Frequencies.
    #[arg(long, default_value_t = 2)]
    freqs: usize,
    /// Gradient iterations per frequency.
    #[arg(long, default_value_t = 2)]
    grads: usize,
    /// Line-search tests per gradient iteration.
    #[arg(long, default_value_t = 2)]
    tests: usize,
    /// Harmonics per datum (the cost per cell).
    #[arg(long, default_value_t = 16)]
    work: usize,
    /// Spare slave groups (a recovery among the slaves takes one instead
    /// of a spawn).
    #[arg(long, default_value_t = 0)]
    spares: usize,
    /// Offload without `recover` (the paper's original configuration).
    #[arg(long)]
    no_recover: bool,
}

/// A slave's task: one shot's kernel on `model`.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Kernel {
    model: Vec<f64>,
    freq: usize,
    shot: usize,
    workers: usize,
    work: usize,
    recover: bool,
    /// The kernel's number on its slave (for the fault points).
    seq: usize,
}

/// A kernel's result, with the recoveries its slave made among its
/// workers.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct KernelOut {
    part: Partial,
    inner: u32,
}

/// A worker's task: one slice of the grid.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Slice {
    shot: Shot,
    model: Vec<f64>,
    start: usize,
    end: usize,
    /// `worker.S.N.W`, or empty under a re-executed slave.
    point: String,
}

/// A first execution's fault point (see the module documentation).
fn mark(ctx: &TaskContext<'_>, point: &str) {
    if ctx.attempt() == 0 && !point.is_empty() {
        pertinax::fault_point(point);
    }
}

fn spec(name: &str, onto: usize, recover: bool) -> Offload {
    let o = Offload::new(name, onto);
    if recover {
        o.recover()
    } else {
        o
    }
}

fn kernel(ctx: &TaskContext<'_>, k: Kernel) -> Result<KernelOut, TaskFailure> {
    mark(ctx, &format!("slave.{}.{}", k.shot, k.seq));
    let shot = fwi::preprocess(k.freq, k.shot, k.work);
    let mut b = Boosters::alloc(&ctx.universe().self_comm(), k.workers)?;
    let mut hs = Vec::with_capacity(k.workers);
    for w in 0..k.workers {
        let r = fwi::worker_range(k.model.len(), w, k.workers);
        let s = Slice {
            shot: shot.clone(),
            model: k.model.clone(),
            start: r.start,
            end: r.end,
            point: if ctx.attempt() == 0 {
                format!("worker.{}.{}.{w}", k.shot, k.seq)
            } else {
                String::new()
            },
        };
        hs.push(b.offload::<Slice, Partial>(spec("slice", w, k.recover), &s)?);
    }
    b.taskwait()?;
    let mut parts = Vec::with_capacity(k.workers);
    for h in hs {
        parts.push(b.take(h).map_err(|e| e.error)?);
    }
    let inner = b.stats().recoveries;
    b.free()?;
    Ok(KernelOut {
        part: fwi::postprocess(&parts),
        inner,
    })
}

fn slice(ctx: &TaskContext<'_>, s: Slice) -> Result<Partial, TaskFailure> {
    mark(ctx, &s.point);
    Ok(fwi::worker(&s.shot, &s.model, s.start..s.end))
}

fn registry() -> Registry {
    let mut r = Registry::new();
    r.register("kernel", kernel).register("slice", slice);
    r
}

/// Offloads one kernel per shot onto its slave for each model, waits, and
/// returns the results by model then shot (master 0; the other masters
/// pass no models and only take part in the wait).
fn kernels(
    b: &mut Boosters,
    c: &Config,
    models: &[Vec<f64>],
    freq: usize,
    recover: bool,
    inner: &mut u32,
    seq: &mut usize,
) -> anyhow::Result<Vec<Vec<Partial>>> {
    let mut hs = Vec::new();
    for m in models {
        *seq += 1;
        let mut row = Vec::with_capacity(c.shots);
        for s in 0..c.shots {
            let k = Kernel {
                model: m.clone(),
                freq,
                shot: s,
                workers: c.workers,
                work: c.work,
                recover,
                seq: *seq - 1,
            };
            row.push(b.offload::<Kernel, KernelOut>(spec("kernel", s, recover), &k)?);
        }
        hs.push(row);
    }
    b.taskwait().context("taskwait")?;
    let mut out = Vec::with_capacity(hs.len());
    for row in hs {
        let mut parts = Vec::with_capacity(row.len());
        for h in row {
            let k = b.take(h).map_err(|e| anyhow::anyhow!("{}", e.error))?;
            *inner += k.inner;
            parts.push(k.part);
        }
        out.push(parts);
    }
    Ok(out)
}

fn run(universe: &pertinax::Universe, a: &Args) -> anyhow::Result<bool> {
    let world = universe.world();
    let me = world.rank().index();
    let c = Config {
        grid: a.grid,
        shots: a.shots,
        workers: a.workers,
        freqs: a.freqs,
        grads: a.grads,
        tests: a.tests,
        work: a.work,
    };
    anyhow::ensure!(
        c.shots > 0 && c.workers > 0 && c.grid >= c.workers,
        "need shots, workers and at least a cell per worker"
    );
    let recover = !a.no_recover;
    let t0 = Instant::now();
    let opts = Options::new().spares(a.spares);
    let mut b = Boosters::alloc_with(&world, c.shots, opts).context("alloc")?;
    let mut model = fwi::initial_model(c.grid);
    let mut inner = 0u32;
    let mut seq = 0usize;
    let lead = me == 0;
    for f in 0..c.freqs {
        for _ in 0..c.grads {
            let ms: &[Vec<f64>] = if lead {
                std::slice::from_ref(&model)
            } else {
                &[]
            };
            let g = kernels(&mut b, &c, ms, f, recover, &mut inner, &mut seq)?;
            if c.tests == 0 {
                continue;
            }
            let g = if lead {
                fwi::combine(&g[0])
            } else {
                Partial::default()
            };
            let trials: Vec<Vec<f64>> = if lead {
                (0..c.tests)
                    .map(|t| fwi::trial(&model, &g.grad, t))
                    .collect()
            } else {
                Vec::new()
            };
            let res = kernels(&mut b, &c, &trials, f, recover, &mut inner, &mut seq)?;
            if lead {
                let misfits: Vec<f64> = res
                    .iter()
                    .map(|shots| shots.iter().map(|p| p.misfit).sum())
                    .collect();
                model = fwi::trial(&model, &g.grad, fwi::best_trial(&misfits));
            }
        }
    }
    let elapsed = t0.elapsed();
    let st = b.stats();
    b.free().context("free")?;
    if !lead {
        return Ok(true);
    }
    let (want, _) = fwi::invert(&c);
    let ok = fwi::digest(&model) == fwi::digest(&want);
    println!(
        "FWI masters={} slaves={} workers={} grid={} freqs={} grads={} tests={} work={} \
         recover={recover} spares={} recoveries={} spares_used={} reexec={} inner_recoveries={inner} \
         elapsed_ms={:.3} digest={:016x} verified={ok}",
        world.size(),
        c.shots,
        c.workers,
        c.grid,
        c.freqs,
        c.grads,
        c.tests,
        c.work,
        a.spares,
        st.recoveries,
        st.spares_used,
        st.reexecutions,
        elapsed.as_secs_f64() * 1e3,
        fwi::digest(&model),
    );
    Ok(ok)
}

fn main() -> ExitCode {
    offload_common::offload_main("pertinax-fwi", registry, run)
}
