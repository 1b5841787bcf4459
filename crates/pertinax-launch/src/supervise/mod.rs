//! The event loop that supervises a running job.
//!
//! Every helper thread (reaper, control readers, output forwarders, signal
//! watch) sends its [`Event`]s into one channel; this loop is the only owner
//! of the job's state. It waits on the channel with a timeout equal to the
//! nearest deadline (job time limit, SIGKILL after a grace period, the short
//! wait for a rank's control socket to close after it exited 0, the output
//! drain), so nothing polls.

use std::collections::HashMap;
use std::io::{self, Write};
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use pertinax_sys::process::{kill_group, ExitKind};
use pertinax_sys::segment::Segment;
use pertinax_wire::ctrl::{write_frame, ToLauncher, ToRank};
use pertinax_wire::slot;

use crate::bootstrap::{Bootstrap, Release};
use crate::children::Children;
use crate::event::{CtrlEvent, Event};
use crate::notify::{notify_failure, notify_shutdown};
use crate::report::{JobReport, RankOutcome, Stop, StopCause};

/// After a rank exits 0, how long to wait for its control socket to close,
/// so that a `Finalize` sent just before the exit is not missed.
const SETTLE: Duration = Duration::from_millis(200);
/// Between SIGTERM and SIGKILL on a timeout or an abort.
const STOP_GRACE: Duration = Duration::from_secs(1);
/// Between a forwarded signal and SIGKILL.
const SIGNAL_GRACE: Duration = Duration::from_secs(2);
/// After the last rank ended, how long to wait for its output to drain
/// (something the rank left behind may hold its pipes open).
const DRAIN: Duration = Duration::from_secs(1);

/// A rank as the launcher started it.
#[derive(Debug)]
pub(crate) struct Started {
    /// Its process id (also its process group id).
    pub pid: u32,
    /// A handle on the launcher's end of its control socket, shut down at
    /// the end so that the reader thread ends even if something the rank
    /// left behind holds the other end.
    pub closer: UnixStream,
    /// Number of output forwarders started for it.
    pub outputs: usize,
}

/// What the loop knows about one rank.
#[derive(Debug)]
struct RankState {
    started: Started,
    writer: Option<UnixStream>,
    joined: bool,
    finalized: bool,
    ctrl_closed: bool,
    exited: Option<(ExitKind, Duration)>,
    settle_by: Option<Instant>,
    outcome: Option<RankOutcome>,
}

/// The job's state and the loop over its events.
pub(crate) struct Supervisor<'a> {
    seg: &'a Segment,
    children: &'a Children,
    ranks: Vec<RankState>,
    by_pid: HashMap<u32, u32>,
    boot: Bootstrap,
    start: Instant,
    timeout: Option<(Duration, Instant)>,
    stop: Option<Stop>,
    kill_at: Option<Instant>,
    open_outputs: usize,
    drain_by: Option<Instant>,
}

impl<'a> Supervisor<'a> {
    /// Takes over the ranks that `run` started at `start`.
    pub fn new(
        seg: &'a Segment,
        children: &'a Children,
        started: Vec<Started>,
        timeout: Option<Duration>,
        start: Instant,
    ) -> Supervisor<'a> {
        let size = started.len();
        let by_pid = started
            .iter()
            .enumerate()
            .map(|(r, s)| (s.pid, r as u32))
            .collect();
        let open_outputs = started.iter().map(|s| s.outputs).sum();
        let ranks = started
            .into_iter()
            .map(|started| RankState {
                started,
                writer: None,
                joined: false,
                finalized: false,
                ctrl_closed: false,
                exited: None,
                settle_by: None,
                outcome: None,
            })
            .collect();
        Supervisor {
            seg,
            children,
            boot: Bootstrap::new(size),
            by_pid,
            ranks,
            start,
            // A limit too far away to be represented is no limit.
            timeout: timeout.and_then(|t| Some((t, start.checked_add(t)?))),
            stop: None,
            kill_at: None,
            open_outputs,
            drain_by: None,
        }
    }

    /// Handles events until every rank has ended and its output is drained.
    pub fn run(mut self, events: &Receiver<Event>) -> JobReport {
        loop {
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
        self.ranks.iter().all(|r| r.outcome.is_some())
    }

    fn next_deadline(&self) -> Option<Instant> {
        let timeout_at = match (self.stop.is_none(), self.timeout) {
            (true, Some((_, at))) => Some(at),
            _ => None,
        };
        [timeout_at, self.kill_at, self.drain_by]
            .into_iter()
            .chain(self.ranks.iter().map(|r| r.settle_by))
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
        for r in 0..self.ranks.len() {
            if self.ranks[r].settle_by.is_some_and(|t| now >= t) {
                self.decide(r);
            }
        }
    }

    fn handle(&mut self, event: Event) {
        match event {
            Event::Exited { pid, end } => {
                if let Some(&rank) = self.by_pid.get(&pid) {
                    self.exited(rank as usize, end);
                }
            }
            Event::Ctrl { rank, what } => self.ctrl(rank as usize, what),
            Event::OutputClosed => self.open_outputs = self.open_outputs.saturating_sub(1),
            // Every rank has ended: nothing left to interrupt.
            Event::Signal(_) if self.all_ended() => {}
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

    fn exited(&mut self, r: usize, end: ExitKind) {
        let at = self.start.elapsed();
        let state = &mut self.ranks[r];
        state.exited = Some((end, at));
        // Whatever the rank left behind in its process group goes with it.
        let _ = kill_group(state.started.pid, libc::SIGKILL);
        if end != ExitKind::Code(0) {
            notify_failure(self.seg, r);
            self.decide(r);
        } else if state.ctrl_closed {
            self.decide(r);
        } else {
            state.settle_by = Some(Instant::now() + SETTLE);
        }
        if let Some(release) = self.boot.ended(r as u32) {
            self.release(&release);
        }
    }

    /// Records rank `r`'s outcome once its exit is known and its control
    /// socket has closed (or [`SETTLE`] passed), and publishes the slot's
    /// final state.
    fn decide(&mut self, r: usize) {
        let state = &mut self.ranks[r];
        state.settle_by = None;
        let Some((end, at)) = state.exited else {
            return;
        };
        if state.outcome.is_some() {
            return;
        }
        match (end, state.finalized) {
            (ExitKind::Code(0), true) => {
                self.seg.proc_block(r).state.store(slot::FINALIZED, SeqCst)
            }
            (ExitKind::Code(0), false) => notify_failure(self.seg, r),
            // Published when the exit was seen.
            _ => {}
        }
        state.outcome = Some(RankOutcome {
            rank: r as u32,
            pid: state.started.pid,
            end,
            at,
            finalized: state.finalized,
            joined: state.joined,
        });
    }

    fn ctrl(&mut self, r: usize, what: CtrlEvent) {
        let Some(state) = self.ranks.get_mut(r) else {
            return;
        };
        match what {
            CtrlEvent::Joined(writer) => {
                state.joined = true;
                state.writer = Some(writer);
            }
            CtrlEvent::Closed => {
                state.ctrl_closed = true;
                state.writer = None;
                if state.exited.is_some() {
                    self.decide(r);
                }
            }
            CtrlEvent::Msg(msg) => self.message(r, msg),
        }
    }

    fn message(&mut self, r: usize, msg: ToLauncher) {
        match msg {
            ToLauncher::Hello { .. } => {}
            ToLauncher::Put { key, value } => self.boot.put(key, value),
            ToLauncher::Fence => {
                if let Some(release) = self.boot.fence(r as u32) {
                    self.release(&release);
                }
            }
            ToLauncher::Finalize => self.ranks[r].finalized = true,
            // Not served yet: the requester's publication stays unanswered.
            ToLauncher::Spawn { .. } | ToLauncher::Injected { .. } => {}
            ToLauncher::Abort { code, message } => {
                let _ = writeln!(
                    io::stderr().lock(),
                    "pertinax: rank {r} aborted the job (code {code}): {message}"
                );
                if self.stop.is_none() {
                    // If the rank already exited, its exit is part of the abort.
                    let at = self.ranks[r].exited.map(|(_, at)| at);
                    let cause = StopCause::Abort {
                        rank: r as u32,
                        code,
                        message,
                    };
                    self.begin_stop(cause, libc::SIGTERM, STOP_GRACE, at);
                }
            }
        }
    }

    /// Answers the ranks waiting in a completed fence.
    fn release(&mut self, release: &Release) {
        let mut frame = Vec::new();
        let msg = ToRank::FenceDone {
            entries: release.entries.clone(),
        };
        if write_frame(&mut frame, &msg).is_err() {
            return;
        }
        for &r in &release.ranks {
            if let Some(w) = self
                .ranks
                .get_mut(r as usize)
                .and_then(|s| s.writer.as_mut())
            {
                let _ = w.write_all(&frame);
            }
        }
    }

    /// Ends the job: tells every rank, signals the ones still running with
    /// `sig`, and schedules SIGKILL after `grace`.
    fn begin_stop(&mut self, cause: StopCause, sig: i32, grace: Duration, at: Option<Duration>) {
        let at = at.unwrap_or_else(|| self.start.elapsed());
        self.stop = Some(Stop { at, cause });
        let mut frame = Vec::new();
        if write_frame(&mut frame, &ToRank::Shutdown).is_ok() {
            for w in self.ranks.iter_mut().filter_map(|s| s.writer.as_mut()) {
                let _ = w.write_all(&frame);
            }
        }
        notify_shutdown(self.seg);
        self.children.signal_all(sig);
        self.kill_at = Some(Instant::now() + grace);
    }

    /// Closes the control sockets and builds the report.
    fn finish(self) -> JobReport {
        let elapsed = self.start.elapsed();
        let ranks = self
            .ranks
            .into_iter()
            .enumerate()
            .map(|(r, s)| {
                let _ = s.started.closer.shutdown(Shutdown::Both);
                // Only when the channel broke before every rank was reaped
                // (it cannot while the signal watch holds a sender): the
                // guard in `run` kills it.
                s.outcome.unwrap_or(RankOutcome {
                    rank: r as u32,
                    pid: s.started.pid,
                    end: s.exited.map_or(ExitKind::Signal(libc::SIGKILL), |(e, _)| e),
                    at: s.exited.map_or(elapsed, |(_, at)| at),
                    finalized: s.finalized,
                    joined: s.joined,
                })
            })
            .collect();
        JobReport {
            ranks,
            stop: self.stop,
            elapsed,
        }
    }
}

#[cfg(test)]
mod tests {
    //! The event loop fed by hand: no processes, pids far above `pid_max`.

    use super::*;
    use pertinax_sys::segment::Layout;
    use pertinax_wire::ctrl::read_frame;
    use std::sync::mpsc::{self, Sender};

    const PID0: u32 = 0x3fff_ff00;

    struct Fixture {
        seg: Segment,
        children: Children,
        /// The ranks' ends of their control sockets.
        rank_ends: Vec<UnixStream>,
        started: Vec<Started>,
    }

    fn fixture(n: usize) -> Fixture {
        let seg = Segment::create_anonymous(Layout::new(n, 4096)).unwrap();
        let (mut rank_ends, mut started) = (Vec::new(), Vec::new());
        for r in 0..n {
            let (ours, theirs) = UnixStream::pair().unwrap();
            // A test that goes wrong fails instead of hanging.
            theirs
                .set_read_timeout(Some(Duration::from_secs(5)))
                .unwrap();
            rank_ends.push(theirs);
            started.push(Started {
                pid: PID0 + r as u32,
                closer: ours,
                outputs: 0,
            });
        }
        Fixture {
            seg,
            children: Children::new(),
            rank_ends,
            started,
        }
    }

    /// Runs the loop on `events` sent by `feed` (which may sleep between
    /// events; the channel stays open until it returns).
    fn supervise(
        f: &mut Fixture,
        timeout: Option<Duration>,
        feed: impl FnOnce(&Sender<Event>) + Send,
    ) -> JobReport {
        let (tx, rx) = mpsc::channel();
        let started = std::mem::take(&mut f.started);
        let (seg, children) = (&f.seg, &f.children);
        std::thread::scope(|s| {
            let feeder = s.spawn(move || {
                feed(&tx);
                // Keep the channel open long enough for any deadline.
                std::thread::sleep(Duration::from_millis(600));
            });
            let report = Supervisor::new(seg, children, started, timeout, Instant::now()).run(&rx);
            drop(feeder);
            report
        })
    }

    impl Fixture {
        /// A write handle on the launcher's end of rank `r`'s socket, as
        /// the control reader hands it over in `Joined`.
        fn writer(&self, r: usize) -> UnixStream {
            self.started[r].closer.try_clone().unwrap()
        }
    }

    fn exited(r: u32, end: ExitKind) -> Event {
        Event::Exited { pid: PID0 + r, end }
    }

    fn ctrl(rank: u32, what: CtrlEvent) -> Event {
        Event::Ctrl { rank, what }
    }

    fn state(f: &Fixture, r: usize) -> u32 {
        f.seg.proc_block(r).state.load(SeqCst)
    }

    #[test]
    fn a_finalized_rank_is_finalized_and_nobody_is_woken() {
        let mut f = fixture(1);
        let writer = f.writer(0);
        let report = supervise(&mut f, None, |tx| {
            tx.send(ctrl(0, CtrlEvent::Joined(writer))).unwrap();
            tx.send(ctrl(0, CtrlEvent::Msg(ToLauncher::Finalize)))
                .unwrap();
            tx.send(ctrl(0, CtrlEvent::Closed)).unwrap();
            tx.send(exited(0, ExitKind::Code(0))).unwrap();
        });
        assert_eq!(report.exit_code(), 0);
        assert!(report.ranks[0].finalized && report.ranks[0].joined);
        assert_eq!(state(&f, 0), slot::FINALIZED);
        assert_eq!(f.seg.header().event_epoch.load(SeqCst), 0);
    }

    #[test]
    fn a_finalize_just_before_the_exit_is_not_missed() {
        let mut f = fixture(1);
        let report = supervise(&mut f, None, |tx| {
            tx.send(ctrl(0, CtrlEvent::Joined(stray_socket()))).unwrap();
            // The reaper is faster than the control reader.
            tx.send(exited(0, ExitKind::Code(0))).unwrap();
            std::thread::sleep(Duration::from_millis(50));
            tx.send(ctrl(0, CtrlEvent::Msg(ToLauncher::Finalize)))
                .unwrap();
            tx.send(ctrl(0, CtrlEvent::Closed)).unwrap();
        });
        assert!(report.ranks[0].finalized);
        assert_eq!(report.summary(), None);
        assert_eq!(state(&f, 0), slot::FINALIZED);
    }

    /// A throwaway socket end for `Joined`.
    fn stray_socket() -> UnixStream {
        UnixStream::pair().unwrap().0
    }

    #[test]
    fn exit_0_without_finalize_is_published_after_the_settle_time() {
        let mut f = fixture(2);
        let t = Instant::now();
        let report = supervise(&mut f, None, |tx| {
            tx.send(ctrl(0, CtrlEvent::Joined(stray_socket()))).unwrap();
            // The control socket never closes (something inherited it).
            tx.send(exited(0, ExitKind::Code(0))).unwrap();
            tx.send(ctrl(1, CtrlEvent::Closed)).unwrap();
            tx.send(exited(1, ExitKind::Code(0))).unwrap();
        });
        assert!(t.elapsed() >= SETTLE);
        assert_eq!(state(&f, 0), slot::FAILED);
        assert_eq!(
            state(&f, 1),
            slot::FAILED,
            "never joined: nobody can talk to it"
        );
        assert_eq!(f.seg.header().event_epoch.load(SeqCst), 2);
        assert_eq!(report.exit_code(), 0);
        let summary = report.summary().unwrap();
        assert!(
            summary.contains("rank 0") && summary.contains("without finalizing"),
            "{summary}"
        );
        assert!(!summary.contains("rank 1"), "{summary}");
    }

    #[test]
    fn a_crash_is_published_at_once_and_completes_the_fence() {
        let mut f = fixture(2);
        let writer = f.writer(0);
        let mut rank0 = f.rank_ends[0].try_clone().unwrap();
        let report = supervise(&mut f, None, |tx| {
            tx.send(ctrl(0, CtrlEvent::Joined(writer))).unwrap();
            let put = ToLauncher::Put {
                key: "k0".into(),
                value: b"v".to_vec(),
            };
            tx.send(ctrl(0, CtrlEvent::Msg(put))).unwrap();
            tx.send(ctrl(0, CtrlEvent::Msg(ToLauncher::Fence))).unwrap();
            tx.send(exited(1, ExitKind::Signal(libc::SIGKILL))).unwrap();
            // Rank 0 is answered without rank 1.
            let done = read_frame::<_, ToRank>(&mut rank0).unwrap();
            assert_eq!(
                done,
                Some(ToRank::FenceDone {
                    entries: vec![("k0".into(), b"v".to_vec())]
                })
            );
            tx.send(ctrl(0, CtrlEvent::Msg(ToLauncher::Finalize)))
                .unwrap();
            tx.send(ctrl(0, CtrlEvent::Closed)).unwrap();
            tx.send(exited(0, ExitKind::Code(0))).unwrap();
        });
        assert_eq!(state(&f, 1), slot::FAILED);
        assert_eq!(state(&f, 0), slot::FINALIZED);
        assert_eq!(report.exit_code(), 128 + libc::SIGKILL);
    }

    #[test]
    fn timeout_stops_the_job_and_tells_the_ranks() {
        let mut f = fixture(1);
        let writer = f.writer(0);
        let mut rank0 = f.rank_ends[0].try_clone().unwrap();
        let report = supervise(&mut f, Some(Duration::from_millis(50)), |tx| {
            tx.send(ctrl(0, CtrlEvent::Joined(writer))).unwrap();
            assert_eq!(
                read_frame::<_, ToRank>(&mut rank0).unwrap(),
                Some(ToRank::Shutdown)
            );
            tx.send(exited(0, ExitKind::Signal(libc::SIGTERM))).unwrap();
        });
        assert!(report.timed_out());
        assert_eq!(report.exit_code(), 124);
        assert_eq!(
            f.seg.header().event_epoch.load(SeqCst),
            2,
            "shutdown, then the failure"
        );
    }

    #[test]
    fn abort_after_the_exit_takes_the_exit_time() {
        let mut f = fixture(2);
        let report = supervise(&mut f, None, |tx| {
            tx.send(exited(1, ExitKind::Code(1))).unwrap();
            let abort = ToLauncher::Abort {
                code: 9,
                message: "test".into(),
            };
            tx.send(ctrl(1, CtrlEvent::Msg(abort))).unwrap();
            tx.send(ctrl(1, CtrlEvent::Closed)).unwrap();
            tx.send(exited(0, ExitKind::Signal(libc::SIGTERM))).unwrap();
        });
        assert_eq!(report.exit_code(), 9);
        assert_eq!(report.stop.as_ref().map(|s| s.at), Some(report.ranks[1].at));
    }
}
