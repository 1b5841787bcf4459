//! [`run`]: validate a job, create its segment, start its ranks and spares
//! and hand them to the supervisor; and the [`Launcher`] that starts every
//! process, at launch and for spawn requests.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{ChildStderr, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::Ordering::SeqCst;
use std::sync::mpsc::{self, Sender};
use std::sync::Arc;
use std::time::Instant;

use pertinax_os::process::configure_child;
use pertinax_os::segment::{Layout, Segment};
use pertinax_wire::{env, slot};

use crate::bind;
use crate::children::Children;
use crate::ctrl::{self, Expected};
use crate::deaths::DeathWatch;
use crate::event::Event;
use crate::fault::{faults_env, FaultSignal, Kill, KillWhen};
use crate::output::{self, Out, Sink};
use crate::report::JobReport;
use crate::resilient::{self, Resilient};
use crate::signal::SignalWatch;
use crate::spec::{
    default_ring_bytes, resolve_program, App, Binding, Heartbeat, JobSpec, ParentFailure, StdinTo,
};
use crate::supervise::{Config, NewProc, Started, Starter, Supervisor};
use crate::LaunchError;

/// Largest number of ranks of one job. The segment holds a ring per ordered
/// pair of slots; beyond this its size stops making sense on one machine.
pub const MAX_RANKS: usize = 4096;

/// Largest number of process slots (ranks + spares + room for spawned
/// processes) of one job's segment.
pub const MAX_SLOTS: usize = 4096;

/// Largest ring size (bytes) a job may ask for.
pub const MAX_RING_BYTES: usize = 1 << 30;

fn os(what: &'static str) -> impl FnOnce(io::Error) -> LaunchError {
    move |source| LaunchError::Os { what, source }
}

/// A job specification, checked and completed.
#[derive(Debug, PartialEq, Eq)]
struct Plan {
    /// Slots of the segment: ranks, spares, room for spawned processes.
    capacity: usize,
    ring_bytes: usize,
    /// The job's program, resolved.
    program: PathBuf,
    /// Every kill: the `--kill` ones, then the seeded ones.
    kills: Vec<Kill>,
    /// The seeded kills alone.
    schedule: Vec<Kill>,
    /// Ranks of the first application context (all of them unless MIMD).
    first: usize,
    /// The further contexts' programs, resolved.
    apps: Vec<PathBuf>,
}

/// Checks `spec` and works out the segment's shape and the faults.
fn plan(spec: &JobSpec) -> Result<Plan, LaunchError> {
    let n = spec.ranks;
    if n == 0 {
        return Err(LaunchError::NoRanks);
    }
    if n > MAX_RANKS {
        return Err(LaunchError::TooManyRanks {
            ranks: n,
            max: MAX_RANKS,
        });
    }
    // By default as many slots for spawned processes as ranks, but a big
    // job is not refused for want of them.
    let max_spawn = spec
        .max_spawn
        .unwrap_or_else(|| n.min(MAX_SLOTS.saturating_sub(n + spec.spares)));
    let capacity = n
        .checked_add(spec.spares)
        .and_then(|c| c.checked_add(max_spawn))
        .filter(|&c| c <= MAX_SLOTS)
        .ok_or(LaunchError::TooManySlots {
            ranks: n,
            spares: spec.spares,
            max_spawn,
            max: MAX_SLOTS,
        })?;
    if let Some(Heartbeat {
        period, timeout, ..
    }) = spec.heartbeat
    {
        if period.as_millis() == 0 || timeout <= period {
            return Err(LaunchError::Heartbeat { period, timeout });
        }
    }
    for k in &spec.kills {
        if k.rank as usize >= n {
            return Err(LaunchError::KillRank {
                rank: k.rank,
                ranks: n,
            });
        }
        if matches!(k.when, KillWhen::After(_)) && k.signal == FaultSignal::Panic {
            return Err(LaunchError::TimedPanic { rank: k.rank });
        }
        // SIGSTOP neither ends the process nor tells anyone: only a silent
        // heartbeat gives it away (in both heartbeat modes).
        if k.signal == FaultSignal::Stop && spec.heartbeat.is_none() {
            return Err(LaunchError::StopWithoutHeartbeat {
                kill: k.to_string(),
            });
        }
    }
    let schedule = match &spec.random_faults {
        Some(r) => r.schedule(n).map_err(|e| LaunchError::FaultVictims {
            count: e.count,
            eligible: e.eligible,
        })?,
        None => Vec::new(),
    };
    let asked = spec.apps.iter().try_fold(1usize, |sum, a| {
        (a.ranks > 0).then(|| sum.checked_add(a.ranks)).flatten()
    });
    let first = match asked {
        Some(asked) if asked <= n => n - (asked - 1),
        _ => {
            return Err(LaunchError::Apps {
                ranks: n,
                asked: asked.unwrap_or(usize::MAX),
            })
        }
    };
    if let Some(dir) = &spec.wdir {
        if !dir.is_dir() {
            return Err(LaunchError::Wdir { dir: dir.clone() });
        }
    }
    let resolve = |program: &Path| {
        let path = std::env::var_os("PATH");
        resolve_program(program, path.as_deref())
            .map_err(|problem| LaunchError::Program {
                program: program.to_path_buf(),
                problem,
            })
            // Absolute, so that --wdir does not change which file runs.
            .map(|p| match std::env::current_dir() {
                Ok(cwd) if p.is_relative() => cwd.join(p),
                _ => p,
            })
    };
    let program = resolve(&spec.program)?;
    let apps = spec
        .apps
        .iter()
        .map(|a| resolve(&a.program))
        .collect::<Result<Vec<_>, _>>()?;
    // Sized by the ranks, not the capacity: the slots for spares and
    // spawned processes are mostly never used, and their rings cost nothing
    // until touched (pages appear on first use), while smaller rings slow
    // every large message of the ranks.
    let ring_bytes = spec.ring_bytes.unwrap_or_else(|| default_ring_bytes(n));
    if ring_bytes > MAX_RING_BYTES {
        return Err(LaunchError::RingTooLarge {
            ring_bytes,
            max: MAX_RING_BYTES,
        });
    }
    if let Some(r) = &spec.resilient {
        resilient::validate(r)?;
    }
    let kills = spec.kills.iter().chain(&schedule).cloned().collect();
    Ok(Plan {
        capacity,
        ring_bytes,
        program,
        kills,
        schedule,
        first,
        apps,
    })
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

/// The application context of rank `rank` after the first (its spec and
/// resolved program), or `None` for the first context.
fn context_of<'s>(rank: usize, plan: &'s Plan, spec: &'s JobSpec) -> Option<(&'s App, &'s Path)> {
    let mut end = plan.first;
    for (app, program) in spec.apps.iter().zip(&plan.apps) {
        if rank < end {
            return None;
        }
        end += app.ranks;
        if rank < end {
            return Some((app, program));
        }
    }
    None
}

/// What a process is when it starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Rank R of the job (slot R).
    Rank(u32),
    /// An idle spare: rank 0 of 1 until it is assigned.
    Spare,
    /// Process `index` of a spawn request for `count`.
    Spawned { index: u32, count: u32 },
}

impl Kind {
    fn role(self) -> &'static str {
        match self {
            Kind::Rank(_) => "rank",
            Kind::Spare => "spare",
            Kind::Spawned { .. } => "spawned",
        }
    }

    /// Its `PERTINAX_RANK` and `PERTINAX_SIZE`.
    fn rank_and_size(self, ranks: usize) -> (u32, usize) {
        match self {
            Kind::Rank(r) => (r, ranks),
            Kind::Spare => (0, 1),
            Kind::Spawned { index, count } => (index, count as usize),
        }
    }
}

/// One process to start.
#[derive(Debug)]
struct Launch<'p> {
    slot: u32,
    kind: Kind,
    /// Resolved path of the program.
    program: &'p Path,
    /// Its name as the user (or the requester) gave it.
    arg0: &'p OsStr,
    args: &'p [OsString],
    /// Variables of its application context (MIMD), after the job's.
    env: &'p [(OsString, OsString)],
    cma_all: bool,
}

/// A process that runs, before its helper threads start.
#[derive(Debug)]
struct Spawned {
    who: Expected,
    pid: u32,
    ctrl: UnixStream,
    stdout: Option<ChildStdout>,
    stderr: Option<ChildStderr>,
    stdin: Option<ChildStdin>,
}

/// What every process's start needs.
#[derive(Debug)]
struct Launcher<'a> {
    spec: &'a JobSpec,
    program: &'a Path,
    seg: &'a Segment,
    children: &'a Children,
    shm_fd: RawFd,
    job_id: String,
    secret_hex: String,
    secret: Arc<[u8]>,
    events: Sender<Event>,
    kills: &'a [Kill],
    heartbeat: Option<String>,
    /// The resilient communicators' variables (empty when off).
    resilient: Vec<(&'static str, String)>,
    /// How many CPUs the launcher may use: the job's, told to every
    /// process ([`env::CPUS`]) for its wait policy.
    cpus: usize,
}

impl Launcher<'_> {
    /// Starts one process: its slot is RUNNING before it runs, and holds
    /// its pid before its control reader can welcome it.
    fn spawn(&self, l: &Launch<'_>) -> Result<Spawned, LaunchError> {
        let (ours, theirs) = UnixStream::pair().map_err(os("create a control socket"))?;
        let mut cmd = Command::new(l.program);
        // Without `--resilient` the program must not find the layer's
        // variables, even in the launcher's own environment; `-x` may
        // still set them.
        for var in resilient::VARS {
            cmd.env_remove(var);
        }
        // Rank 0's input is the launcher's (copied by a thread: rank 0 runs
        // in a process group of its own, so reading a terminal itself would
        // stop it with SIGTTIN); the others read /dev/null.
        let stdin =
            if self.spec.stdin == StdinTo::Rank0 && l.kind == Kind::Rank(0) && stdin_is_ours() {
                Stdio::piped()
            } else {
                Stdio::null()
            };
        cmd.arg0(l.arg0)
            .args(l.args)
            .envs(self.spec.env.iter().map(|(k, v)| (k, v)))
            .envs(l.env.iter().map(|(k, v)| (k, v)))
            .envs(self.env(l, theirs.as_raw_fd()))
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(dir) = &self.spec.wdir {
            cmd.current_dir(dir);
        }
        configure_child(&mut cmd, vec![self.shm_fd, theirs.as_raw_fd()]);

        let block = self.seg.proc_block(l.slot as usize);
        block.state.store(slot::RUNNING, SeqCst);
        let mut child = cmd.spawn().map_err(|source| {
            block.state.store(slot::EMPTY, SeqCst);
            LaunchError::Spawn {
                slot: l.slot,
                ranks: self.spec.ranks,
                source,
            }
        })?;
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let stdin = child.stdin.take();
        let pid = self.children.add(child);
        // Before the control reader starts, hence before `Welcome`: a
        // process that was welcomed finds its pid in its slot.
        block.pid.store(pid, SeqCst);
        drop(theirs);
        let (rank, _) = l.kind.rank_and_size(self.spec.ranks);
        Ok(Spawned {
            who: Expected { slot: l.slot, rank },
            pid,
            ctrl: ours,
            stdout,
            stderr,
            stdin,
        })
    }

    /// Starts the control reader and output forwarders of a spawned
    /// process. The reader answers `Welcome` only from here on, after the
    /// process's pid was stored in its slot.
    fn attend(&self, spawned: Spawned, replaces: Option<u32>) -> Result<Started, LaunchError> {
        let Spawned {
            who,
            pid,
            ctrl: ours,
            stdout,
            stderr,
            stdin,
        } = spawned;
        let slot = who.slot;
        let tag = self
            .spec
            .tag_output
            .then(|| output::Tag::new(slot, self.spec.ranks));
        // Named from the start: even what it prints before it learns its
        // rank carries the rank.
        if let (Some(tag), Some(rank)) = (&tag, replaces) {
            tag.replacement(rank, slot);
        }
        if let Some(mut to) = stdin {
            // Ends at end of file (dropping `to` closes rank 0's input), or
            // when rank 0 is gone (a broken pipe).
            thread("pertinax-stdin".into(), move || {
                let _ = std::io::copy(&mut std::io::stdin().lock(), &mut to);
            })?;
        }
        let mut outputs = 0;
        if let Some(out) = stdout {
            let (events, tag) = (self.events.clone(), tag.clone());
            let to = self.out(Sink::Stdout, slot, "stdout")?;
            thread(format!("pertinax-out-{slot}"), move || {
                output::forward(out, to, tag, None, &events);
            })?;
            outputs += 1;
        }
        if let Some(err) = stderr {
            let (events, tag) = (self.events.clone(), tag.clone());
            let to = self.out(Sink::Stderr, slot, "stderr")?;
            thread(format!("pertinax-err-{slot}"), move || {
                output::forward(err, to, tag, Some(slot), &events);
            })?;
            outputs += 1;
        }
        let closer = ours.try_clone().map_err(os("create a control socket"))?;
        let events = self.events.clone();
        let secret = self.secret.clone();
        thread(format!("pertinax-ctrl-{slot}"), move || {
            ctrl::serve(who, ours, &secret, &events);
        })?;
        Ok(Started {
            pid,
            closer,
            outputs,
            tag,
        })
    }

    /// Where the stream `name` (stdout, stderr) of the process in `slot`
    /// goes: `sink`, and its file under `--output-filename`.
    fn out(&self, sink: Sink, slot: u32, name: &str) -> Result<Out, LaunchError> {
        let mut out = Out {
            sink: Some(sink),
            file: None,
            timestamp: self.spec.timestamp_output,
        };
        if let Some(files) = &self.spec.output_files {
            let path = output_path(&files.dir, slot, self.spec.ranks).join(name);
            let file = path
                .parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|()| std::fs::File::create(&path))
                .map_err(|source| LaunchError::OutputFile { path, source })?;
            out.file = Some(file);
            if !files.copy {
                out.sink = None;
            }
        }
        Ok(out)
    }

    /// The `PERTINAX_*` variables of a process.
    fn env(&self, l: &Launch<'_>, ctrl_fd: RawFd) -> Vec<(&'static str, OsString)> {
        let (rank, size) = l.kind.rank_and_size(self.spec.ranks);
        let mut vars = vec![
            (env::RANK, rank.to_string().into()),
            (env::SIZE, size.to_string().into()),
            (env::CPUS, self.cpus.to_string().into()),
            (env::SLOT, l.slot.to_string().into()),
            (env::ROLE, l.kind.role().into()),
            (env::JOB_ID, self.job_id.clone().into()),
            (env::SECRET, self.secret_hex.clone().into()),
            (env::SHM_FD, self.shm_fd.to_string().into()),
            (env::CTRL_FD, ctrl_fd.to_string().into()),
        ];
        match l.kind {
            Kind::Rank(r) => {
                if let Some(faults) = faults_env(self.kills, r) {
                    vars.push((env::FAULTS, faults.into()));
                }
            }
            Kind::Spare | Kind::Spawned { .. } => {
                let cma = if l.cma_all { "1" } else { "0" };
                vars.push((env::CMA_ALL, cma.into()));
            }
        }
        if let Some(hb) = &self.heartbeat {
            vars.push((env::HEARTBEAT, hb.into()));
        }
        for (var, value) in &self.resilient {
            vars.push((var, value.into()));
        }
        vars
    }
}

impl Starter for Launcher<'_> {
    fn start(&self, new: &NewProc<'_>) -> Result<Started, LaunchError> {
        let requested: Vec<OsString>;
        let (program, arg0, args) = match new.program {
            Some((path, name, args)) => {
                requested = args.iter().map(OsString::from).collect();
                (path, OsStr::new(name), &requested[..])
            }
            None => (
                self.program,
                self.spec.program.as_os_str(),
                &self.spec.args[..],
            ),
        };
        let spawned = self.spawn(&Launch {
            slot: new.slot,
            kind: Kind::Spawned {
                index: new.index,
                count: new.count,
            },
            program,
            arg0,
            args,
            env: &[],
            cma_all: new.cma_all,
        })?;
        self.attend(spawned, new.replaces)
    }
}

/// Whether the launcher may read its standard input without being stopped:
/// it is not a terminal, or the launcher's process group is the terminal's
/// foreground group. A launcher started in the background (`pertinax run
/// ... &`) would be stopped by SIGTTIN at its first read, with the whole
/// job; its rank 0 reads `/dev/null` instead.
fn stdin_is_ours() -> bool {
    use std::io::IsTerminal;
    let stdin = std::io::stdin();
    !stdin.is_terminal()
        || rustix::termios::tcgetpgrp(&stdin).is_ok_and(|fg| fg == rustix::process::getpgrp())
}

/// The directory of the output files of the process in `slot`, in Open
/// MPI's layout (`DIR/1/rank.N`; `DIR/1/slot.S` for a spare or spawned
/// process).
fn output_path(dir: &Path, slot: u32, ranks: usize) -> PathBuf {
    let leaf = if (slot as usize) < ranks {
        format!("rank.{slot}")
    } else {
        format!("slot.{slot}")
    };
    dir.join("1").join(leaf)
}

/// Starts a named helper thread; its handle is dropped: the helpers end on
/// their own (end of file, or the launcher's channel closing).
fn thread(name: String, f: impl FnOnce() + Send + 'static) -> Result<(), LaunchError> {
    std::thread::Builder::new()
        .name(name)
        .spawn(f)
        .map(drop)
        .map_err(os("start a thread"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fault::RandomFaults;
    use crate::spec::HeartbeatMode;
    use std::time::Duration;

    fn spec(n: usize) -> JobSpec {
        JobSpec::new(n, "true")
    }

    #[test]
    fn capacity_is_ranks_spares_and_room_to_spawn() {
        let p = plan(&spec(4)).unwrap();
        assert_eq!(p.capacity, 8, "max-spawn defaults to the rank count");
        assert_eq!(p.ring_bytes, default_ring_bytes(4));
        let mut s = spec(4);
        s.spares = 2;
        s.max_spawn = Some(0);
        assert_eq!(plan(&s).unwrap().capacity, 6);
        s.max_spawn = Some(20);
        let p = plan(&s).unwrap();
        assert_eq!(p.capacity, 26);
        assert_eq!(p.ring_bytes, default_ring_bytes(4), "sized by the ranks");
    }

    #[test]
    fn big_jobs_get_less_room_to_spawn_by_default_but_are_not_refused() {
        assert_eq!(plan(&spec(MAX_RANKS)).unwrap().capacity, MAX_SLOTS);
        assert_eq!(plan(&spec(3000)).unwrap().capacity, MAX_SLOTS);
        let mut s = spec(3000);
        s.max_spawn = Some(2000);
        assert!(matches!(plan(&s), Err(LaunchError::TooManySlots { .. })));
        let mut s = spec(4000);
        s.spares = 200;
        assert!(matches!(plan(&s), Err(LaunchError::TooManySlots { .. })));
    }

    #[test]
    fn fault_and_heartbeat_options_are_checked() {
        let mut s = spec(2);
        s.kills = vec!["2@1s".parse().unwrap()];
        assert!(matches!(
            plan(&s),
            Err(LaunchError::KillRank { rank: 2, ranks: 2 })
        ));
        s.kills = vec![Kill {
            rank: 1,
            when: KillWhen::After(Duration::ZERO),
            signal: FaultSignal::Panic,
        }];
        assert!(matches!(plan(&s), Err(LaunchError::TimedPanic { rank: 1 })));
        // A stop is refused without heartbeats, by time or at a point, and
        // accepted with them.
        for stop in ["1@1s:stop", "1@x#2:stop", "1@*#1:STOP"] {
            s.kills = vec![stop.parse().unwrap()];
            s.heartbeat = None;
            match plan(&s) {
                Err(e @ LaunchError::StopWithoutHeartbeat { .. }) => {
                    assert!(e.is_usage());
                    let m = e.to_string();
                    assert!(
                        m.starts_with("--kill for rank 1 at ")
                            && m.contains(
                                "(stop): a stopped process is only detected by heartbeats"
                            )
                            && m.contains("add --heartbeat MS")
                            && !m.contains('\n'),
                        "{m}"
                    );
                }
                other => panic!("{stop} without heartbeats: {other:?}"),
            }
            s.heartbeat = Some(Heartbeat::new(
                Duration::from_millis(50),
                HeartbeatMode::Progress,
            ));
            assert!(plan(&s).is_ok(), "{stop} with heartbeats");
        }
        s.heartbeat = None;
        s.kills = vec!["1@x#2".parse().unwrap()];
        s.random_faults = Some(RandomFaults {
            seed: 1,
            count: 1,
            max_hit: 4,
        });
        let p = plan(&s).unwrap();
        assert_eq!(p.schedule.len(), 1);
        assert_eq!(p.kills.len(), 2);
        s.random_faults = Some(RandomFaults {
            seed: 1,
            count: 2,
            max_hit: 4,
        });
        assert!(matches!(
            plan(&s),
            Err(LaunchError::FaultVictims {
                count: 2,
                eligible: 1
            })
        ));
        let mut s = spec(2);
        let ms = Duration::from_millis;
        s.heartbeat = Some(Heartbeat {
            period: ms(100),
            timeout: ms(100),
            mode: HeartbeatMode::Thread,
        });
        assert!(matches!(plan(&s), Err(LaunchError::Heartbeat { .. })));
        s.heartbeat = Some(Heartbeat::new(ms(100), HeartbeatMode::Progress));
        assert!(plan(&s).is_ok());
        assert_eq!(s.heartbeat.unwrap().env(), "progress:100");
        assert_eq!(s.heartbeat.unwrap().timeout, ms(1000));
    }

    #[test]
    fn application_contexts_number_their_ranks_in_order() {
        let app = |ranks| App {
            ranks,
            program: "true".into(),
            args: Vec::new(),
            env: Vec::new(),
        };
        let mut s = spec(6);
        s.apps = vec![app(3), app(1)];
        let p = plan(&s).unwrap();
        assert_eq!(p.first, 2);
        let ctx: Vec<Option<usize>> = (0..6)
            .map(|r| context_of(r, &p, &s).map(|(a, _)| a.ranks))
            .collect();
        assert_eq!(ctx, [None, None, Some(3), Some(3), Some(3), Some(1)]);
        assert!(p.apps.iter().all(|a| a.is_absolute()));
        // The first context needs a rank, and every other one too.
        s.apps = vec![app(6)];
        assert!(matches!(
            plan(&s),
            Err(LaunchError::Apps { ranks: 6, asked: 7 })
        ));
        s.apps = vec![app(0)];
        let e = plan(&s).unwrap_err();
        assert!(e.is_usage() && e.to_string().contains("at least 1"), "{e}");
    }

    #[test]
    fn a_working_directory_must_be_one() {
        let mut s = spec(1);
        s.wdir = Some("/no/such/dir/pertinax".into());
        let e = plan(&s).unwrap_err();
        assert!(e.is_usage(), "{e}");
        assert_eq!(
            e.to_string(),
            "--wdir /no/such/dir/pertinax: not a directory"
        );
        s.wdir = Some("/".into());
        assert!(plan(&s).is_ok());
    }

    #[test]
    fn output_files_follow_open_mpis_layout() {
        let d = Path::new("out");
        assert_eq!(output_path(d, 3, 4), Path::new("out/1/rank.3"));
        assert_eq!(output_path(d, 4, 4), Path::new("out/1/slot.4"));
    }

    #[test]
    fn ranks_spares_and_spawned_processes_have_their_own_identity() {
        assert_eq!(Kind::Rank(3).rank_and_size(8), (3, 8));
        assert_eq!(Kind::Spare.rank_and_size(8), (0, 1));
        let k = Kind::Spawned { index: 1, count: 2 };
        assert_eq!((k.rank_and_size(8), k.role()), ((1, 2), "spawned"));
    }
}
