//! [`run`]: validate a job ([`plan()`]), create its segment, start its
//! ranks and spares and hand them to the supervisor; the [`Launcher`] that
//! starts every process, at launch and for spawn requests, is in
//! [`launcher`].

mod launcher;
mod plan;

use std::io;
use std::os::fd::AsRawFd;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Instant;

use pertinax_os::segment::{Layout, Segment};
use pertinax_wire::env;

use crate::bind;
use crate::children::Children;
use crate::deaths::DeathWatch;
use crate::fault::KillWhen;
use crate::output;
use crate::report::JobReport;
use crate::resilient::Resilient;
use crate::signal::SignalWatch;
use crate::spec::{Binding, JobSpec, ParentFailure};
use crate::supervise::{Config, Supervisor};
use crate::LaunchError;
use launcher::{Kind, Launch, Launcher};
use plan::{context_of, plan};
pub use plan::{MAX_RANKS, MAX_RING_BYTES, MAX_SLOTS};

fn os(what: &'static str) -> impl FnOnce(io::Error) -> LaunchError {
    move |source| LaunchError::Os { what, source }
}

/// Runs a job: starts `spec.ranks` processes of `spec.program` (and
/// `spec.spares` idle spares), serves their bootstrap and their spawn
/// requests, forwards their output, publishes their failures to the others
/// through the shared segment, injects the faults asked for, watches
/// heartbeats, and returns when every member of the job has ended.
///
/// Each process runs in a process group of its own and is killed by the
/// kernel if the thread that called `run` dies. `run` catches SIGCHLD and
/// reaps its children one by one; while it runs, the calling process must
/// not reap children it does not own (`waitpid(-1)`). Whatever the way out
/// (normal end, error half-way through the start, timeout, signal, panic),
/// every process it started is killed and reaped before it returns.
///
/// A failed process does not end the job: the others learn of it through
/// the segment and go on; except that, failing fast (the default, see
/// [`JobSpec::keep_going`]), a rank that exits with a non-zero code ends
/// it. The launcher ends the job itself on a timeout, on
/// SIGINT/SIGTERM/SIGHUP (forwarded to the processes; SIGKILL follows on a
/// second signal or 2 s later) and when a process sends `Abort`. A seeded
/// fault schedule is printed on stderr before the start.
///
/// # Errors
/// [`LaunchError::NoRanks`] for zero ranks, [`LaunchError::TooManyRanks`]
/// beyond [`MAX_RANKS`], [`LaunchError::TooManySlots`] beyond
/// [`MAX_SLOTS`], [`LaunchError::KillRank`], [`LaunchError::TimedPanic`],
/// [`LaunchError::StopWithoutHeartbeat`],
/// [`LaunchError::FaultVictims`] and [`LaunchError::Heartbeat`] for
/// impossible fault or heartbeat options, [`LaunchError::ResilientK`],
/// [`LaunchError::ResilientThreshold`] and [`LaunchError::ResilientFlat`]
/// for impossible settings of resilient communicators, [`LaunchError::Apps`]
/// for application contexts that leave the first one no rank,
/// [`LaunchError::Wdir`] for a working directory that is not one,
/// [`LaunchError::OutputFile`] when an output file cannot be created,
/// [`LaunchError::RingTooLarge`]
/// beyond [`MAX_RING_BYTES`], [`LaunchError::Program`] when the program
/// cannot be run, [`LaunchError::Spawn`] when a process cannot be started
/// at launch, and [`LaunchError::Segment`] or [`LaunchError::Os`] when the
/// machine refuses a resource. How the processes ended is not an error: see
/// [`JobReport`].
pub fn run(spec: &JobSpec) -> Result<JobReport, LaunchError> {
    let plan = plan(spec)?;
    let n = spec.ranks;
    if !plan.schedule.is_empty() {
        for k in &plan.schedule {
            output::say(format_args!("pertinax: fault schedule: {k}"));
        }
    }
    let mut job_id = [0u8; 16];
    let mut secret = [0u8; 32];
    pertinax_os::random_bytes(&mut job_id).map_err(os("draw random bytes"))?;
    pertinax_os::random_bytes(&mut secret).map_err(os("draw random bytes"))?;
    let ring_bytes = plan.ring_bytes;
    let (seg, shm_fd) = Segment::create(Layout::new(plan.capacity, ring_bytes))
        .map_err(|source| LaunchError::Segment { ring_bytes, source })?;

    let (events, rx) = mpsc::channel();
    let signals = SignalWatch::start(events.clone()).map_err(os("watch signals"))?;
    let publish = spec.on_parent_failure != ParentFailure::End;
    let deaths = DeathWatch::start(&seg, publish, &events).map_err(os("watch for deaths"))?;
    // Declared after `signals` so that it is dropped first: the children
    // are killed and reaped while the launcher still catches its signals.
    let children = Children::new();
    let allowed = bind::allowed_cpus().map_err(os("read the launcher's CPU mask"))?;
    let launcher = Launcher {
        cpus: allowed.len().max(1),
        spec,
        program: &plan.program,
        seg: &seg,
        children: &children,
        shm_fd: shm_fd.as_raw_fd(),
        job_id: env::to_hex(&job_id),
        secret_hex: env::to_hex(&secret),
        secret: Arc::from(&secret[..]),
        events,
        kills: &plan.kills,
        heartbeat: spec.heartbeat.map(|h| h.env()),
        resilient: spec
            .resilient
            .as_ref()
            .map(Resilient::to_env)
            .unwrap_or_default(),
    };
    let cpus = match spec.bind {
        Binding::Core => allowed,
        Binding::None => Vec::new(),
    };
    let start = Instant::now();
    // All processes first, then their helper threads: the processes start
    // up (exec, dynamic loading) while the launcher creates the threads.
    let total = n + spec.spares;
    let mut spawned = Vec::with_capacity(total);
    for s in 0..total as u32 {
        let kind = if (s as usize) < n {
            Kind::Rank(s)
        } else {
            Kind::Spare
        };
        let (program, arg0, args, env) = match context_of(s as usize, &plan, spec) {
            Some((app, program)) => (program, app.program.as_os_str(), &app.args, &app.env[..]),
            None => (
                plan.program.as_path(),
                spec.program.as_os_str(),
                &spec.args,
                &[][..],
            ),
        };
        let cpu = match kind {
            Kind::Rank(r) => bind::cpu_of(r, &cpus),
            Kind::Spare | Kind::Spawned { .. } => None,
        };
        let launch = Launch {
            slot: s,
            kind,
            program,
            arg0,
            args,
            env,
            // Nobody has fenced yet.
            cma_all: false,
        };
        let one = match cpu {
            Some(cpu) => bind::on_cpu(cpu, || launcher.spawn(&launch))
                .map_err(os("bind a rank to its CPU"))??,
            None => launcher.spawn(&launch)?,
        };
        if spec.report_bindings {
            if let Kind::Rank(r) = kind {
                match cpu {
                    Some(cpu) => output::say(format_args!(
                        "pertinax: rank {r} (pid {}) bound to CPU {cpu}",
                        one.pid
                    )),
                    None => output::say(format_args!(
                        "pertinax: rank {r} (pid {}) not bound",
                        one.pid
                    )),
                }
            }
        }
        spawned.push(one);
    }
    let started = spawned
        .into_iter()
        .map(|s| launcher.attend(s, None))
        .collect::<Result<Vec<_>, _>>()?;
    let cfg = Config {
        ranks: n,
        timeout: spec.timeout,
        heartbeat: spec.heartbeat,
        timed: plan
            .kills
            .iter()
            .filter(|k| matches!(k.when, KillWhen::After(_)))
            .cloned()
            .collect(),
        on_parent_failure: spec.on_parent_failure,
        schedule: plan.schedule.clone(),
        resilient: spec.resilient.is_some(),
        // Survivors are meant to outlive failures in resilient jobs and
        // in jobs with injected faults.
        fail_fast: !spec.keep_going
            && spec.resilient.is_none()
            && spec.kills.is_empty()
            && spec.random_faults.is_none(),
    };
    let report = Supervisor::new(&seg, &children, &launcher, cfg, started, start).run(&rx);
    drop(deaths);
    drop(launcher);
    drop(children);
    drop(signals);
    Ok(report)
}
