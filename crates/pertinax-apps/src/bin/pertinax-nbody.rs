//! N-body on offloaded boosters (the offload paper's section 6.3, figures 8
//! and 9): `pertinax run -n M pertinax-nbody [--version global|partial]
//! [--bodies N] [--steps S] [--spares G] [--no-recover]`.
//!
//! One program in both roles. The masters (the job's ranks) allocate one
//! booster per master over the world (a shared allocation: every wait is
//! agreed among the masters); master `m` owns block `m` of the bodies and
//! offloads its work onto booster `m`. The blocks travel around a ring of
//! boosters over the boosters' communicator
//! ([`pertinax_offload::TaskContext::comm`]), in the order of
//! [`pertinax_apps::nbody::simulate`].
//!
//! - `global` (figure 8): one task per master runs every time step; the
//!   tasks talk to each other, so they are in one recover domain.
//! - `partial` (figure 9): per step and master, `forces` tasks (one per
//!   ring step), `exchange` tasks (the ring's shift, one named domain per
//!   shift, since they talk) and an `update` task; the bodies flow through
//!   the masters between tasks.
//!
//! Every task is offloaded with `recover` (unless `--no-recover`: the
//! paper's *original*), so a booster's death is repaired by the library.
//!
//! Fault points, on the booster side: the library marks the start of
//! every task execution with `pertinax::fault_point("task")`; a first
//! execution (attempt 0) also marks `booster.B.T`: booster `B`, at time
//! step `T` of a `global` task, or at the start of the master's task
//! number `T` (from 0, in offload order) for `partial`. A launcher's plan
//! reaches spawned processes only without a victim
//! (`PERTINAX_FAULTS=booster.1.3@1` under `pertinax run` or `mpirun -x`),
//! and such a plan strikes every process that reaches the point, the
//! replacements too: these exact names strike one booster once
//! (re-executions do not mark them), and several shots make failures in a
//! row. `task@K` strikes every booster at its K-th execution.
//!
//! Rank 0 ends with `NBODY ... verified=true|false`: every master compares
//! its block's digest with the one-process reference, and the verdicts
//! are reduced over the masters; `false` exits 1.

mod offload_common;

use pertinax::CommunicatorExt as _;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context};
use clap::{Parser, ValueEnum};
use pertinax::{Comm, Op};
use pertinax_apps::nbody::{self, Bodies};
use pertinax_offload::{Boosters, Offload, Options, Registry, TaskContext, TaskFailure};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Version {
    Global,
    Partial,
}

#[derive(Debug, Parser)]
#[command(name = "pertinax-nbody", disable_version_flag = true)]
struct Args {
    /// One task per master for every step (global) or separate tasks per
    /// step (partial).
    #[arg(long, value_enum, default_value_t = Version::Global)]
    version: Version,
    /// Bodies in total.
    #[arg(long, default_value_t = 256)]
    bodies: u64,
    /// Time steps.
    #[arg(long, default_value_t = 10)]
    steps: usize,
    /// Spare booster groups (a recovery takes one instead of a spawn).
    #[arg(long, default_value_t = 0)]
    spares: usize,
    /// Offload without `recover` (the paper's original configuration).
    #[arg(long)]
    no_recover: bool,
}

const DT: f64 = 0.01;

/// Input of a `global` task.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Global {
    total: u64,
    steps: usize,
    block: Bodies,
}

/// Input of a `forces` task: accelerations so far, local and remote block.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Forces {
    local: Bodies,
    remote: Remote,
    acc: Vec<[f64; 3]>,
    /// The task's number at its master (for the fault point).
    seq: usize,
}

/// What travels around the ring: positions and masses (all the forces
/// read of a remote block).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Remote {
    pos: Vec<[f64; 3]>,
    mass: Vec<f64>,
}

impl Remote {
    fn of(b: &Bodies) -> Remote {
        Remote {
            pos: b.pos.clone(),
            mass: b.mass.clone(),
        }
    }
    fn bodies(&self) -> Bodies {
        Bodies {
            pos: self.pos.clone(),
            vel: Vec::new(),
            mass: self.mass.clone(),
        }
    }
}

/// Input of an `exchange` task: the block to pass right, the length of
/// the one coming from the left, and the tag of this shift.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Exchange {
    remote: Remote,
    incoming: usize,
    tag: i32,
    seq: usize,
}

/// Input of an `update` task.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Update {
    local: Bodies,
    acc: Vec<[f64; 3]>,
    seq: usize,
}

/// The first execution's fault point `booster.B.T` (see the module
/// documentation).
fn mark(ctx: &TaskContext<'_>, t: usize) {
    if ctx.attempt() == 0 {
        pertinax::fault_point(&format!("booster.{}.{t}", ctx.booster()));
    }
}

/// Passes `out` to the right neighbour on the boosters' communicator and
/// returns the left one's (`incoming` bodies).
fn shift(c: &Comm, out: &Remote, incoming: usize, tag: i32) -> Result<Remote, TaskFailure> {
    let (me, n) = (c.rank().index(), c.size());
    let mut send: Vec<f64> = out.pos.iter().flat_map(|p| p.iter().copied()).collect();
    send.extend_from_slice(&out.mass);
    let mut recv = vec![0.0f64; 4 * incoming];
    c.sendrecv(&send, (me + 1) % n, tag, &mut recv, (me + n - 1) % n, tag)?;
    let (pos, mass) = recv.split_at(3 * incoming);
    Ok(Remote {
        pos: pos.chunks_exact(3).map(|p| [p[0], p[1], p[2]]).collect(),
        mass: mass.to_vec(),
    })
}

/// Bodies of block `part` of `parts`.
fn block_len(total: u64, part: usize, parts: usize) -> usize {
    let (q, r) = (total / parts as u64, total % parts as u64);
    (q + u64::from((part as u64) < r)) as usize
}

fn global(ctx: &TaskContext<'_>, g: Global) -> Result<Bodies, TaskFailure> {
    let c = ctx.comm();
    let (me, n) = (c.rank().index(), c.size());
    let mut local = g.block;
    for step in 0..g.steps {
        mark(ctx, step);
        let mut acc = vec![[0.0; 3]; local.len()];
        let mut remote = Remote::of(&local);
        for s in 0..n {
            nbody::forces(&local, &remote.bodies(), &mut acc);
            if s + 1 < n {
                let incoming = block_len(g.total, nbody::ring_block(me, s + 1, n), n);
                remote = shift(c, &remote, incoming, (step * n + s + 1) as i32)?;
            }
        }
        nbody::update(&mut local, &acc, DT);
    }
    Ok(local)
}

fn forces(ctx: &TaskContext<'_>, mut f: Forces) -> Result<Vec<[f64; 3]>, TaskFailure> {
    mark(ctx, f.seq);
    nbody::forces(&f.local, &f.remote.bodies(), &mut f.acc);
    Ok(f.acc)
}

fn exchange(ctx: &TaskContext<'_>, e: Exchange) -> Result<Remote, TaskFailure> {
    mark(ctx, e.seq);
    shift(ctx.comm(), &e.remote, e.incoming, e.tag)
}

fn update(ctx: &TaskContext<'_>, mut u: Update) -> Result<Bodies, TaskFailure> {
    mark(ctx, u.seq);
    nbody::update(&mut u.local, &u.acc, DT);
    Ok(u.local)
}

fn registry() -> Registry {
    let mut r = Registry::new();
    r.register("global", global)
        .register("forces", forces)
        .register("exchange", exchange)
        .register("update", update);
    r
}

fn spec(name: &str, onto: usize, recover: bool) -> Offload {
    let o = Offload::new(name, onto);
    if recover {
        o.recover()
    } else {
        o
    }
}

fn run(universe: &pertinax::Universe, a: &Args) -> anyhow::Result<bool> {
    let world = universe.world();
    let (me, n) = (world.rank().index(), world.size());
    if a.bodies < n as u64 {
        bail!("--bodies {} is fewer than the {n} blocks", a.bodies);
    }
    let recover = !a.no_recover;
    let t0 = Instant::now();
    let opts = Options::new().spares(a.spares);
    let mut b = Boosters::alloc_with(&world, n, opts).context("alloc")?;
    let t_alloc = t0.elapsed();
    let mut local = nbody::initial(a.bodies, me, n);
    let mut tasks = 0u64;
    match a.version {
        Version::Global => {
            let d = b.domain("ring");
            let g = Global {
                total: a.bodies,
                steps: a.steps,
                block: local.clone(),
            };
            let h = b.offload::<Global, Bodies>(spec("global", me, recover).domain(d), &g)?;
            tasks += 1;
            b.wait_domain(d).context("wait")?;
            local = b.take(h).map_err(|e| anyhow::anyhow!("{}", e.error))?;
        }
        Version::Partial => {
            for step in 0..a.steps {
                let mut acc = vec![[0.0; 3]; local.len()];
                let mut remote = Remote::of(&local);
                for s in 0..n {
                    let f = Forces {
                        local: local.clone(),
                        remote: remote.clone(),
                        acc,
                        seq: tasks as usize,
                    };
                    let h = b.offload::<Forces, Vec<[f64; 3]>>(spec("forces", me, recover), &f)?;
                    tasks += 1;
                    b.taskwait().context("wait forces")?;
                    acc = b.take(h).map_err(|e| anyhow::anyhow!("{}", e.error))?;
                    if s + 1 < n {
                        let d = b.domain("exchange");
                        let e = Exchange {
                            incoming: block_len(a.bodies, nbody::ring_block(me, s + 1, n), n),
                            remote,
                            tag: (step * n + s + 1) as i32,
                            seq: tasks as usize,
                        };
                        let h = b.offload::<Exchange, Remote>(
                            spec("exchange", me, recover).domain(d),
                            &e,
                        )?;
                        tasks += 1;
                        b.wait_domain(d).context("wait exchange")?;
                        remote = b.take(h).map_err(|e| anyhow::anyhow!("{}", e.error))?;
                    }
                }
                let u = Update {
                    local,
                    acc,
                    seq: tasks as usize,
                };
                let h = b.offload::<Update, Bodies>(spec("update", me, recover), &u)?;
                tasks += 1;
                b.taskwait().context("wait update")?;
                local = b.take(h).map_err(|e| anyhow::anyhow!("{}", e.error))?;
            }
        }
    }
    let elapsed = t0.elapsed();
    let st = b.stats();
    b.free().context("free")?;
    let want = nbody::simulate(a.bodies, n, a.steps, DT);
    let mine = u64::from(local.digest() == want[me].digest());
    let mut all = [0u64];
    world.allreduce(&[mine], &mut all, &Op::min())?;
    let ok = all[0] == 1;
    if me == 0 {
        let digest = want.iter().fold(0u64, |h, b| h.rotate_left(7) ^ b.digest());
        println!(
            "NBODY version={:?} masters={n} boosters={n} bodies={} steps={} tasks_per_master={tasks} \
             recover={recover} spares={} recoveries={} spares_used={} reexec={} alloc_ms={:.3} \
             elapsed_ms={:.3} digest={digest:016x} verified={ok}",
            a.version,
            a.bodies,
            a.steps,
            a.spares,
            st.recoveries,
            st.spares_used,
            st.reexecutions,
            t_alloc.as_secs_f64() * 1e3,
            elapsed.as_secs_f64() * 1e3,
        )
    }
    Ok(ok)
}

fn main() -> ExitCode {
    offload_common::offload_main("pertinax-nbody", registry, run)
}
