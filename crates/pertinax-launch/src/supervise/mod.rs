//! The event loop that supervises a running job.
//!
//! Every helper thread (control readers, output forwarders, signal watch)
//! sends its [`Event`]s into one channel; this loop is the only owner of the
//! job's state, and the only thread that starts, signals and reaps processes
//! once the job runs. It waits on the channel with a timeout equal to the
//! nearest deadline (job time limit, SIGKILL after a grace period, the short
//! wait for a process's control socket to close after it exited, the output
//! drain, time-based kills, heartbeat sampling, a slow reaping safety net),
//! so nothing polls in a tight loop.
//!
//! The processes of a job live in *slots*: the ranks in `0..n`, the spares
//! in `n..n+K`, and the processes started by spawn requests after them, in
//! increasing order, never reused. `procs[slot]` is the loop's record of
//! each. The job ends when every *member* (every process but the idle
//! spares) has ended; the idle spares are then told to shut down.

mod spawn;
#[cfg(test)]
mod tests;
mod watch;

use std::collections::HashMap;
use std::io::Write;
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use pertinax_os::process::{kill_group, ExitKind};
use pertinax_os::segment::Segment;
use pertinax_wire::ctrl::{write_frame, ToLauncher, ToRank};

use crate::bootstrap::{Bootstrap, Release};
use crate::children::Children;
use crate::event::{CtrlEvent, Event};
use crate::fault::Kill;
use crate::notify::{notify_failure, notify_finalized, notify_shutdown};
use crate::output::{self, Tag};
use crate::panic::Panic;
use crate::report::{Cause, JobReport, ProcOutcome, Role, Stop, StopCause};
use crate::spec::{Heartbeat, ParentFailure};

pub(crate) use spawn::{NewProc, Starter};
pub use spawn::{SPAWN_NO_ROOM, SPAWN_OK, SPAWN_REFUSED};

/// After a process exits, how long to wait for its control socket to
/// close, so that a `Finalize` or `Injected` sent just before the exit is
/// not missed.
const SETTLE: Duration = Duration::from_millis(200);
/// Between SIGTERM and SIGKILL on a timeout or an abort.
const STOP_GRACE: Duration = Duration::from_secs(1);
/// Between a forwarded signal and SIGKILL.
const SIGNAL_GRACE: Duration = Duration::from_secs(2);
/// Between `Shutdown` to the idle spares at the end of the job and SIGKILL.
const SPARE_GRACE: Duration = Duration::from_secs(1);
/// After the last process ended, how long to wait for its output to drain
/// (something the process left behind may hold its pipes open).
const DRAIN: Duration = Duration::from_secs(1);
/// Reaping is driven by SIGCHLD; this safety net reaps anyway from time to
/// time, so that a lost signal cannot hang the job.
const REAP_SAFETY: Duration = Duration::from_secs(1);

/// A process as the launcher started it.
#[derive(Debug)]
pub(crate) struct Started {
    /// Its process id (also its process group id).
    pub pid: u32,
    /// A handle on the launcher's end of its control socket, shut down at
    /// the end so that the reader thread ends even if something the process
    /// left behind holds the other end.
    pub closer: UnixStream,
    /// Number of output forwarders started for it.
    pub outputs: usize,
    /// Its `--tag-output` prefix (`None` without the option).
    pub tag: Option<Tag>,
}

/// What the loop needs to know about the job besides its processes.
#[derive(Debug)]
pub(crate) struct Config {
    /// Number of ranks (slots `0..ranks`).
    pub ranks: usize,
    /// Job time limit.
    pub timeout: Option<Duration>,
    /// Heartbeat watching.
    pub heartbeat: Option<Heartbeat>,
    /// Time-based kills (point-based ones are in the ranks' environment).
    pub timed: Vec<Kill>,
    /// What happens to a failed process's spawned processes.
    pub on_parent_failure: ParentFailure,
    /// The seeded fault schedule, for the report.
    pub schedule: Vec<Kill>,
    /// The job runs resilient communicators, for the report.
    pub resilient: bool,
    /// A rank that exits with a non-zero code (not a death by a signal,
    /// not an injected fault) ends the job.
    pub fail_fast: bool,
}

/// What the loop knows about one process.
#[derive(Debug)]
struct Proc {
    pid: u32,
    closer: Option<UnixStream>,
    role: Role,
    writer: Option<UnixStream>,
    /// When its hello was accepted.
    joined_at: Option<Instant>,
    finalized: bool,
    ctrl_closed: bool,
    exited: Option<(ExitKind, Duration)>,
    /// When the early death notice came (before the reaping, which can lag
    /// on a loaded machine): the time the summary gives.
    died_at: Option<Duration>,
    settle_by: Option<Instant>,
    outcome: Option<ProcOutcome>,
    /// Its slot was published FAILED.
    failed: bool,
    /// Frames to send once it is welcomed (its assignment).
    pending: Vec<ToRank>,
    /// Why it died, when the launcher knows.
    cause: Option<Cause>,
    /// The first panic its stderr showed.
    panic: Option<Panic>,
    /// An injected fault stopped it (SIGSTOP).
    stopped: bool,
    /// The launcher killed it for its silent heartbeat.
    beat_killed: bool,
    /// Last heartbeat value seen, and when it changed.
    beat: (u64, Instant),
    /// Slots started or assigned for its spawn requests.
    children: Vec<u32>,
    /// The rank it took over (`replace_failed`), as it calls itself.
    replaces: Option<u32>,
    /// Its `--tag-output` prefix.
    tag: Option<Tag>,
}

impl Proc {
    fn new(started: Started, role: Role) -> Proc {
        let mut p = Proc::blank(started.pid, Some(started.closer), role);
        p.tag = started.tag;
        p
    }

    /// A record for `pid` (0: nothing was started).
    fn blank(pid: u32, closer: Option<UnixStream>, role: Role) -> Proc {
        Proc {
            pid,
            closer,
            role,
            writer: None,
            joined_at: None,
            finalized: false,
            ctrl_closed: false,
            exited: None,
            died_at: None,
            settle_by: None,
            outcome: None,
            failed: false,
            pending: Vec::new(),
            cause: None,
            panic: None,
            stopped: false,
            beat_killed: false,
            beat: (0, Instant::now()),
            children: Vec::new(),
            replaces: None,
            tag: None,
        }
    }

    fn is_idle_spare(&self) -> bool {
        self.role == Role::IdleSpare
    }

    /// Started and not yet reaped: its pid may be signalled.
    fn is_live(&self) -> bool {
        self.pid != 0 && self.exited.is_none()
    }

    /// Records that it takes over rank `rank` (if any), so that the
    /// summary and its output tag name it by the rank it will call itself.
    fn take_over(&mut self, rank: Option<u32>, slot: u32) {
        let Some(rank) = rank else {
            return;
        };
        self.replaces = Some(rank);
        if let Some(tag) = &self.tag {
            tag.replacement(rank, slot);
        }
    }

    /// Sends `msg` now if it was welcomed, else once it is.
    fn send_or_queue(&mut self, msg: ToRank) {
        match self.writer.as_mut() {
            Some(w) => {
                let _ = write_frame(w, &msg);
            }
            None => self.pending.push(msg),
        }
    }
}

/// Where the idle spares are at the end of the job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SpareEnd {
    /// Members still run.
    NotYet,
    /// Told to shut down; SIGKILL at this time.
    Asked(Instant),
    /// Killed (or there were none left).
    Done,
}

/// The job's state and the loop over its events.
pub(crate) struct Supervisor<'a> {
    seg: &'a Segment,
    children: &'a Children,
    starter: &'a dyn Starter,
    cfg: Config,
    procs: Vec<Proc>,
    by_pid: HashMap<u32, u32>,
    boot: Bootstrap,
    start: Instant,
    timeout: Option<(Duration, Instant)>,
    stop: Option<Stop>,
    kill_at: Option<Instant>,
    open_outputs: usize,
    drain_by: Option<Instant>,
    /// When every rank had passed the start-up fence.
    fence_at: Option<Instant>,
    /// Every rank reported single copy (cma) at the start-up fence.
    cma_all: bool,
    /// Time-based kills not fired yet.
    timed: Vec<Kill>,
    beat_next: Option<Instant>,
    spare_end: SpareEnd,
    reap_next: Instant,
    /// The job's published service names.
    names: pertinax_wire::names::Names,
}

impl<'a> Supervisor<'a> {
    /// Takes over the processes that `run` started at `start`: the ranks,
    /// then the spares, in slot order.
    pub fn new(
        seg: &'a Segment,
        children: &'a Children,
        starter: &'a dyn Starter,
        cfg: Config,
        started: Vec<Started>,
        start: Instant,
    ) -> Supervisor<'a> {
        let by_pid = started
            .iter()
            .enumerate()
            .map(|(s, p)| (p.pid, s as u32))
            .collect();
        let open_outputs = started.iter().map(|s| s.outputs).sum();
        let ranks = cfg.ranks;
        let procs = started
            .into_iter()
            .enumerate()
            .map(|(s, started)| {
                let role = if s < ranks {
                    Role::Rank
                } else {
                    Role::IdleSpare
                };
                Proc::new(started, role)
            })
            .collect();
        let beat_next = cfg.heartbeat.map(|h| start + h.period);
        Supervisor {
            seg,
            children,
            starter,
            boot: Bootstrap::new(ranks),
            by_pid,
            procs,
            start,
            // A limit too far away to be represented is no limit.
            timeout: cfg.timeout.and_then(|t| Some((t, start.checked_add(t)?))),
            stop: None,
            kill_at: None,
            open_outputs,
            drain_by: None,
            fence_at: None,
            cma_all: false,
            timed: cfg.timed.clone(),
            beat_next,
            spare_end: SpareEnd::NotYet,
            reap_next: start + REAP_SAFETY,
            names: pertinax_wire::names::Names::default(),
            cfg,
        }
    }

    /// Handles events until every process has ended and its output is
    /// drained.
    pub fn run(mut self, events: &Receiver<Event>) -> JobReport {
        loop {
            if self.members_ended() {
                self.shut_spares_down();
            }
            if self.all_ended() {
                if self.open_outputs == 0 {
                    break;
                }
                let by = *self.drain_by.get_or_insert_with(|| Instant::now() + DRAIN);
                if Instant::now() >= by {
                    break;
                }
            }
            let event = match self.next_deadline() {
                Some(d) => match events.recv_timeout(d.saturating_duration_since(Instant::now())) {
                    Ok(e) => Some(e),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => break,
                },
                None => match events.recv() {
                    Ok(e) => Some(e),
                    Err(_) => break,
                },
            };
            if let Some(e) = event {
                self.handle(e);
            }
            self.on_time(Instant::now());
        }
        self.finish()
    }

    fn all_ended(&self) -> bool {
        self.procs.iter().all(|p| p.outcome.is_some())
    }

    fn members_ended(&self) -> bool {
        self.procs
            .iter()
            .filter(|p| !p.is_idle_spare())
            .all(|p| p.outcome.is_some())
    }

    fn next_deadline(&self) -> Option<Instant> {
        let timeout_at = match (self.stop.is_none(), self.timeout) {
            (true, Some((_, at))) => Some(at),
            _ => None,
        };
        let spares_at = match self.spare_end {
            SpareEnd::Asked(at) => Some(at),
            _ => None,
        };
        let reap_at = (self.children.len() > 0).then_some(self.reap_next);
        [
            timeout_at,
            self.kill_at,
            self.drain_by,
            spares_at,
            reap_at,
            self.next_timed_kill(),
            self.next_beat(),
        ]
        .into_iter()
        .chain(self.procs.iter().map(|p| p.settle_by))
        .flatten()
        .min()
    }

    fn on_time(&mut self, now: Instant) {
        if let (None, Some((limit, at))) = (&self.stop, self.timeout) {
            if now >= at {
                self.begin_stop(
                    StopCause::Timeout { limit },
                    libc::SIGTERM,
                    STOP_GRACE,
                    None,
                );
            }
        }
        if self.kill_at.is_some_and(|t| now >= t) {
            self.kill_at = None;
            self.children.signal_all(libc::SIGKILL);
        }
        if now >= self.reap_next {
            self.reap_next = now + REAP_SAFETY;
            self.reap();
        }
        for s in 0..self.procs.len() {
            if self.procs[s].settle_by.is_some_and(|t| now >= t) {
                self.decide(s);
            }
        }
        self.fire_timed_kills(now);
        self.sample_beats(now);
        if let SpareEnd::Asked(at) = self.spare_end {
            if now >= at {
                self.spare_end = SpareEnd::Done;
                for p in self
                    .procs
                    .iter()
                    .filter(|p| p.is_idle_spare() && p.is_live())
                {
                    let _ = kill_group(p.pid, libc::SIGKILL);
                }
            }
        }
    }

    fn handle(&mut self, event: Event) {
        match event {
            Event::ChildChanged => self.reap(),
            // The early death notice (see deaths.rs): publish and apply
            // --on-parent-failure now; the exit is reported when reaped.
            Event::Died(s) if (s as usize) < self.procs.len() => {
                let at = self.start.elapsed();
                self.procs[s as usize].died_at.get_or_insert(at);
                self.fail(s as usize)
            }
            Event::Died(_) => {}
            #[cfg(test)]
            Event::Exited { pid, end } => self.on_exit(pid, end),
            Event::Ctrl { slot, what } => self.ctrl(slot as usize, what),
            Event::Panicked { slot, panic } => self.panicked(slot as usize, panic),
            Event::OutputClosed => self.open_outputs = self.open_outputs.saturating_sub(1),
            // Every process has ended: nothing left to interrupt.
            Event::Signal(_) if self.all_ended() => {}
            // The job is over; only idle spares remain: no more grace.
            Event::Signal(_) if self.members_ended() => {
                self.spare_end = SpareEnd::Done;
                for p in self.procs.iter().filter(|p| p.is_live()) {
                    let _ = kill_group(p.pid, libc::SIGKILL);
                }
            }
            Event::Signal(sig) => {
                if self.stop.is_none() {
                    self.begin_stop(StopCause::Signal(sig), sig, SIGNAL_GRACE, None);
                } else {
                    // A second signal: no more grace.
                    self.kill_at = None;
                    self.children.signal_all(libc::SIGKILL);
                }
            }
        }
    }

    /// Records the first panic of process `s`, in its outcome too if that
    /// is already decided: the forwarder may see the panic's lines after
    /// the exit was reaped (but always before its stream's end, which the
    /// loop waits for).
    fn panicked(&mut self, s: usize, panic: Panic) {
        let Some(p) = self.procs.get_mut(s) else {
            return;
        };
        if p.panic.is_some() {
            return;
        }
        if let Some(outcome) = &mut p.outcome {
            outcome.panic = Some(panic.clone());
        }
        p.panic = Some(panic);
    }

    fn reap(&mut self) {
        for (pid, end) in self.children.reap() {
            self.on_exit(pid, end);
        }
    }

    fn on_exit(&mut self, pid: u32, end: ExitKind) {
        if let Some(&slot) = self.by_pid.get(&pid) {
            self.exited(slot as usize, end);
        }
    }

    fn exited(&mut self, s: usize, end: ExitKind) {
        let p = &mut self.procs[s];
        let at = p.died_at.unwrap_or_else(|| self.start.elapsed());
        if p.exited.is_some() {
            return;
        }
        p.exited = Some((end, at));
        // Whatever the process left behind in its process group goes with it.
        let _ = kill_group(p.pid, libc::SIGKILL);
        let closed = p.ctrl_closed;
        if !closed {
            p.settle_by = Some(Instant::now() + SETTLE);
        }
        if end != ExitKind::Code(0) {
            self.fail(s);
        }
        if closed {
            self.decide(s);
        }
        if let Some(release) = self.boot.ended(s as u32) {
            self.release(&release);
        }
    }

    /// Publishes slot `s` as FAILED (once), and applies
    /// `--on-parent-failure` to what it spawned.
    fn fail(&mut self, s: usize) {
        if std::mem::replace(&mut self.procs[s].failed, true) {
            return;
        }
        // Children to end die before anyone hears of the failure, so none
        // of them acts on it.
        if self.cfg.on_parent_failure == ParentFailure::End {
            for c in self.procs[s].children.clone() {
                let child = &mut self.procs[c as usize];
                if child.is_live() {
                    let _ = kill_group(child.pid, libc::SIGKILL);
                    child
                        .cause
                        .get_or_insert(Cause::ParentFailed { parent: s as u32 });
                }
            }
        }
        notify_failure(self.seg, s);
    }

    /// Records process `s`'s outcome once its exit is known and its control
    /// socket has closed (or [`SETTLE`] passed), and publishes the slot's
    /// final state.
    fn decide(&mut self, s: usize) {
        let p = &mut self.procs[s];
        p.settle_by = None;
        let Some((end, at)) = p.exited else {
            return;
        };
        if p.outcome.is_some() {
            return;
        }
        match (end, p.finalized) {
            (ExitKind::Code(0), true) => notify_finalized(self.seg, s),
            (ExitKind::Code(0), false) => self.fail(s),
            // Published when the exit was seen.
            _ => {}
        }
        let p = &mut self.procs[s];
        let injected = matches!(
            p.cause,
            Some(Cause::Injected { .. } | Cause::Launcher { .. } | Cause::Heartbeat { .. })
        );
        // The fail-fast rule: a rank that ended on its own with a non-zero
        // code (an error return, or a panic outside fault injection) ends
        // the job, as mpirun does. Deaths by a signal do not: survivors
        // recover from those.
        if let (true, ExitKind::Code(code), Role::Rank, None, false) =
            (self.cfg.fail_fast, end, &p.role, &self.stop, injected)
        {
            if code != 0 {
                let cause = StopCause::RankExited {
                    rank: s as u32,
                    code,
                };
                self.begin_stop(cause, libc::SIGTERM, STOP_GRACE, Some(at));
            }
        }
        let p = &mut self.procs[s];
        p.outcome = Some(ProcOutcome {
            slot: s as u32,
            role: p.role.clone(),
            pid: p.pid,
            end,
            at,
            finalized: p.finalized,
            joined: p.joined_at.is_some(),
            cause: p.cause.clone(),
            panic: p.panic.clone(),
            replaces: p.replaces,
        });
    }

    fn ctrl(&mut self, s: usize, what: CtrlEvent) {
        let Some(p) = self.procs.get_mut(s) else {
            return;
        };
        match what {
            CtrlEvent::Joined(mut writer) => {
                let now = Instant::now();
                p.joined_at = Some(now);
                p.beat = (self.seg.proc_block(s).beat.load(SeqCst), now);
                for msg in p.pending.drain(..) {
                    let _ = write_frame(&mut writer, &msg);
                }
                // Welcomed after the broadcast that concerned it.
                let late = self.stop.is_some()
                    || (p.is_idle_spare() && self.spare_end != SpareEnd::NotYet);
                if late {
                    let _ = write_frame(&mut writer, &ToRank::Shutdown);
                }
                p.writer = Some(writer);
            }
            CtrlEvent::Closed => {
                p.ctrl_closed = true;
                p.writer = None;
                if p.exited.is_some() {
                    self.decide(s);
                }
            }
            CtrlEvent::Msg(msg) => self.message(s, msg),
        }
    }

    fn message(&mut self, s: usize, msg: ToLauncher) {
        match msg {
            ToLauncher::Hello { .. } => {}
            ToLauncher::Put { key, value } => self.boot.put(key, value),
            // Only the ranks fence (the bootstrap ignores other slots).
            ToLauncher::Fence => {
                if let Some(release) = self.boot.fence(s as u32) {
                    self.release(&release);
                }
            }
            ToLauncher::Finalize => self.procs[s].finalized = true,
            ToLauncher::Spawn {
                stamp,
                program,
                args,
                count,
                use_spares,
                payload,
                replaces,
            } => self.spawn_request(
                s,
                spawn::Request {
                    stamp,
                    program,
                    args,
                    count,
                    use_spares,
                    payload,
                    replaces,
                },
            ),
            ToLauncher::Injected {
                point, hit, signal, ..
            } => {
                let p = &mut self.procs[s];
                if signal == libc::SIGSTOP {
                    p.stopped = true;
                } else {
                    p.cause
                        .get_or_insert(Cause::Injected { point, hit, signal });
                }
            }
            ToLauncher::Abort { code, message } => {
                output::say(format_args!(
                    "pertinax: {} aborted the job (code {code}): {message}",
                    self.who(s)
                ));
                if self.stop.is_none() {
                    // If it already exited, its exit is part of the abort.
                    let at = self.procs[s].exited.map(|(_, at)| at);
                    let cause = StopCause::Abort {
                        slot: s as u32,
                        code,
                        message,
                    };
                    self.begin_stop(cause, libc::SIGTERM, STOP_GRACE, at);
                }
            }
            ToLauncher::Publish { id, service, port } => {
                let answer = self.names.publish(service, port);
                self.procs[s].send_or_queue(ToRank::Name { id, answer });
            }
            ToLauncher::Unpublish { id, service, port } => {
                let answer = self.names.unpublish(&service, &port);
                self.procs[s].send_or_queue(ToRank::Name { id, answer });
            }
            ToLauncher::Lookup { id, service } => {
                let answer = self.names.lookup(&service);
                self.procs[s].send_or_queue(ToRank::Name { id, answer });
            }
        }
    }

    /// `rank S` for a rank, `rank R (replacement, slot S)` for a process
    /// that took over rank `R`, `slot S` for any other process.
    fn who(&self, s: usize) -> String {
        match self.procs.get(s).and_then(|p| p.replaces) {
            _ if s < self.cfg.ranks => format!("rank {s}"),
            Some(rank) => format!("rank {rank} (replacement, slot {s})"),
            None => format!("slot {s}"),
        }
    }

    /// Answers the ranks waiting in a completed fence; the first one is
    /// the start-up fence.
    fn release(&mut self, release: &Release) {
        if release.generation == 0 && self.fence_at.is_none() {
            self.fence_at = Some(Instant::now());
            // The runtime publishes `cma/SLOT` = [1] when it may use single
            // copy; spares and spawned processes learn the verdict in
            // PERTINAX_CMA_ALL.
            self.cma_all = (0..self.cfg.ranks).all(|s| {
                let key = format!("cma/{s}");
                release
                    .entries
                    .iter()
                    .any(|(k, v)| *k == key && v.first() == Some(&1))
            });
        }
        let mut frame = Vec::new();
        let msg = ToRank::FenceDone {
            entries: release.entries.clone(),
        };
        if write_frame(&mut frame, &msg).is_err() {
            return;
        }
        for &r in &release.ranks {
            if let Some(w) = self
                .procs
                .get_mut(r as usize)
                .and_then(|p| p.writer.as_mut())
            {
                let _ = w.write_all(&frame);
            }
        }
    }

    /// Ends the job: tells every process, signals the ones still running
    /// with `sig`, and schedules SIGKILL after `grace`.
    fn begin_stop(&mut self, cause: StopCause, sig: i32, grace: Duration, at: Option<Duration>) {
        let at = at.unwrap_or_else(|| self.start.elapsed());
        self.stop = Some(Stop { at, cause });
        self.broadcast_shutdown(|_| true);
        self.children.signal_all(sig);
        self.kill_at = Some(Instant::now() + grace);
    }

    /// Sends `Shutdown` to the welcomed processes that `to` selects and
    /// wakes every process.
    fn broadcast_shutdown(&mut self, to: impl Fn(&Proc) -> bool) {
        let mut frame = Vec::new();
        if write_frame(&mut frame, &ToRank::Shutdown).is_ok() {
            for p in self.procs.iter_mut().filter(|p| to(p)) {
                if let Some(w) = p.writer.as_mut() {
                    let _ = w.write_all(&frame);
                }
            }
        }
        notify_shutdown(self.seg);
    }

    /// Every member has ended: the idle spares are told to shut down, and
    /// killed after [`SPARE_GRACE`].
    fn shut_spares_down(&mut self) {
        if self.spare_end != SpareEnd::NotYet {
            return;
        }
        if !self.procs.iter().any(|p| p.is_idle_spare() && p.is_live()) {
            self.spare_end = SpareEnd::Done;
            return;
        }
        self.broadcast_shutdown(|p| p.is_idle_spare() && p.is_live());
        self.spare_end = SpareEnd::Asked(Instant::now() + SPARE_GRACE);
    }

    /// Closes the control sockets and builds the report.
    fn finish(self) -> JobReport {
        let elapsed = self.start.elapsed();
        let mut outcomes: Vec<ProcOutcome> = self
            .procs
            .into_iter()
            .enumerate()
            .map(|(s, p)| {
                if let Some(closer) = &p.closer {
                    let _ = closer.shutdown(Shutdown::Both);
                }
                // Only when the channel broke before every process was
                // reaped (it cannot while the signal watch holds a sender):
                // the guard in `run` kills it.
                p.outcome.unwrap_or(ProcOutcome {
                    slot: s as u32,
                    role: p.role,
                    pid: p.pid,
                    end: p.exited.map_or(ExitKind::Signal(libc::SIGKILL), |(e, _)| e),
                    at: p.exited.map_or(elapsed, |(_, at)| at),
                    finalized: p.finalized,
                    joined: p.joined_at.is_some(),
                    cause: p.cause,
                    panic: p.panic,
                    replaces: p.replaces,
                })
            })
            .collect();
        let others = outcomes.split_off(self.cfg.ranks.min(outcomes.len()));
        JobReport {
            ranks: outcomes,
            others,
            stop: self.stop,
            elapsed,
            schedule: self.cfg.schedule,
            resilient: self.cfg.resilient,
        }
    }
}
