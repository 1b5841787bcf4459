//! [`run`]: validate a job, create its segment, start its ranks and hand
//! them to the supervisor.

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{ChildStderr, ChildStdout, Command, Stdio};
use std::sync::atomic::Ordering::SeqCst;
use std::sync::mpsc::{self, Sender};
use std::sync::Arc;
use std::time::Instant;

use pertinax_sys::process::configure_child;
use pertinax_sys::segment::{Layout, Segment};
use pertinax_wire::{env, slot};

use crate::children::Children;
use crate::event::Event;
use crate::output::{self, Sink};
use crate::report::JobReport;
use crate::signal::SignalWatch;
use crate::spec::{default_ring_bytes, resolve_program, JobSpec};
use crate::supervise::{Started, Supervisor};
use crate::{ctrl, LaunchError};

/// Largest number of ranks of one job. The segment holds a ring per ordered
/// pair of ranks; beyond this its size stops making sense on one machine.
pub const MAX_RANKS: usize = 4096;

/// Largest ring size (bytes) a job may ask for.
pub const MAX_RING_BYTES: usize = 1 << 30;

fn os(what: &'static str) -> impl FnOnce(io::Error) -> LaunchError {
    move |source| LaunchError::Os { what, source }
}

/// Runs a job: starts `spec.ranks` processes of `spec.program`, serves
/// their bootstrap, forwards their output, publishes their failures to the
/// others through the shared segment, and returns when every rank has
/// ended.
///
/// Each rank runs in a process group of its own and is killed by the kernel
/// if the thread that called `run` dies. `run` reaps with `waitpid(-1)`:
/// while it runs, the calling process must not wait for other children of
/// its own. Whatever the way out (normal end, error half-way through the
/// start, timeout, signal, panic), every process it started is killed and
/// reaped before it returns.
///
/// A failed rank does not end the job: the others learn of it through the
/// segment and go on. The launcher ends the job itself on a timeout, on
/// SIGINT/SIGTERM/SIGHUP (forwarded to the ranks; SIGKILL follows on a
/// second signal or 2 s later) and when a rank sends `Abort`.
///
/// # Errors
/// [`LaunchError::NoRanks`] for zero ranks, [`LaunchError::TooManyRanks`]
/// beyond [`MAX_RANKS`], [`LaunchError::RingTooLarge`] beyond
/// [`MAX_RING_BYTES`],
/// [`LaunchError::Program`] when the program cannot be run,
/// [`LaunchError::Spawn`] when a rank cannot be started, and
/// [`LaunchError::Segment`] or [`LaunchError::Os`] when the machine refuses
/// a resource. How the ranks ended is not an error: see [`JobReport`].
pub fn run(spec: &JobSpec) -> Result<JobReport, LaunchError> {
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
    let program =
        resolve_program(&spec.program, std::env::var_os("PATH").as_deref()).map_err(|problem| {
            LaunchError::Program {
                program: spec.program.clone(),
                problem,
            }
        })?;
    let mut job_id = [0u8; 16];
    let mut secret = [0u8; 32];
    pertinax_sys::random_bytes(&mut job_id).map_err(os("draw random bytes"))?;
    pertinax_sys::random_bytes(&mut secret).map_err(os("draw random bytes"))?;
    let ring_bytes = spec.ring_bytes.unwrap_or_else(|| default_ring_bytes(n));
    if ring_bytes > MAX_RING_BYTES {
        return Err(LaunchError::RingTooLarge {
            ring_bytes,
            max: MAX_RING_BYTES,
        });
    }
    let (seg, shm_fd) = Segment::create(Layout::new(n, ring_bytes))
        .map_err(|source| LaunchError::Segment { ring_bytes, source })?;

    let (events, rx) = mpsc::channel();
    let signals = SignalWatch::start(events.clone()).map_err(os("watch signals"))?;
    // Declared after `signals` so that it is dropped first: the children
    // are killed and reaped while the launcher still catches its signals.
    let mut children = Children::new();
    let launcher = Launcher {
        spec,
        program: &program,
        seg: &seg,
        shm_fd: shm_fd.as_raw_fd(),
        job_id: env::to_hex(&job_id),
        secret_hex: env::to_hex(&secret),
        secret: Arc::from(&secret[..]),
        events: &events,
    };
    let start = Instant::now();
    // All processes first, then their helper threads: the ranks start up
    // (exec, dynamic loading) while the launcher creates the threads.
    let mut spawned = Vec::with_capacity(n);
    for rank in 0..n as u32 {
        spawned.push(launcher.spawn(rank, &children)?);
    }
    children
        .start_reaper(events.clone())
        .map_err(os("start the reaper thread"))?;
    let started = spawned
        .into_iter()
        .map(|s| launcher.attend(s))
        .collect::<Result<Vec<_>, _>>()?;
    drop(events);
    let report = Supervisor::new(&seg, &children, started, spec.timeout, start).run(&rx);
    drop(children);
    drop(signals);
    Ok(report)
}

/// A rank whose process runs, before its helper threads start.
struct Spawned {
    rank: u32,
    pid: u32,
    ctrl: UnixStream,
    stdout: Option<ChildStdout>,
    stderr: Option<ChildStderr>,
}

/// What every rank's start needs.
struct Launcher<'a> {
    spec: &'a JobSpec,
    program: &'a Path,
    seg: &'a Segment,
    shm_fd: RawFd,
    job_id: String,
    secret_hex: String,
    secret: Arc<[u8]>,
    events: &'a Sender<Event>,
}

impl Launcher<'_> {
    /// Starts rank `rank`'s process.
    fn spawn(&self, rank: u32, children: &Children) -> Result<Spawned, LaunchError> {
        let (ours, theirs) = UnixStream::pair().map_err(os("create a control socket"))?;
        let mut cmd = Command::new(self.program);
        cmd.arg0(&self.spec.program)
            .args(&self.spec.args)
            .envs(self.spec.env.iter().map(|(k, v)| (k, v)))
            .envs(self.rank_env(rank, theirs.as_raw_fd()))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        configure_child(&mut cmd, vec![self.shm_fd, theirs.as_raw_fd()]);

        let block = self.seg.proc_block(rank as usize);
        block.state.store(slot::RUNNING, SeqCst);
        let mut child = cmd.spawn().map_err(|source| {
            block.state.store(slot::EMPTY, SeqCst);
            LaunchError::Spawn { rank, source }
        })?;
        let pid = child.id();
        children.add(pid);
        // Before the control reader starts, hence before `Welcome`: a rank
        // that was welcomed finds its pid in its slot.
        block.pid.store(pid, SeqCst);
        drop(theirs);
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        // The reaper waits for it, not `Child::wait`.
        drop(child);
        Ok(Spawned {
            rank,
            pid,
            ctrl: ours,
            stdout,
            stderr,
        })
    }

    /// Starts the control reader and output forwarders of a spawned rank.
    /// The reader answers `Welcome` only from here on, after the rank's pid
    /// was stored in its slot.
    fn attend(&self, spawned: Spawned) -> Result<Started, LaunchError> {
        let Spawned {
            rank,
            pid,
            ctrl: ours,
            stdout,
            stderr,
        } = spawned;
        let tag = self.spec.tag_output.then_some(rank);
        let mut outputs = 0;
        if let Some(out) = stdout {
            let events = self.events.clone();
            thread(format!("pertinax-out-{rank}"), move || {
                output::forward(out, Sink::Stdout, tag, &events);
            })?;
            outputs += 1;
        }
        if let Some(err) = stderr {
            let events = self.events.clone();
            thread(format!("pertinax-err-{rank}"), move || {
                output::forward(err, Sink::Stderr, tag, &events);
            })?;
            outputs += 1;
        }
        let closer = ours.try_clone().map_err(os("create a control socket"))?;
        let events = self.events.clone();
        let secret = self.secret.clone();
        thread(format!("pertinax-ctrl-{rank}"), move || {
            ctrl::serve(rank, ours, &secret, &events);
        })?;
        Ok(Started {
            pid,
            closer,
            outputs,
        })
    }

    /// The `PERTINAX_*` variables of rank `rank`.
    fn rank_env(&self, rank: u32, ctrl_fd: RawFd) -> Vec<(&'static str, OsString)> {
        vec![
            (env::RANK, rank.to_string().into()),
            (env::SIZE, self.spec.ranks.to_string().into()),
            (env::SLOT, rank.to_string().into()),
            (env::JOB_ID, self.job_id.clone().into()),
            (env::SECRET, self.secret_hex.clone().into()),
            (env::SHM_FD, self.shm_fd.to_string().into()),
            (env::CTRL_FD, ctrl_fd.to_string().into()),
        ]
    }
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
