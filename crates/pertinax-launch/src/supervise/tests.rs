//! The event loop fed by hand: no processes, pids far above `pid_max`
//! (signals to them find nobody), and a fake [`Starter`] that records what
//! the segment looked like when it was asked to start something.

use super::spawn::{choose_slots, SPAWN_NO_ROOM, SPAWN_OK, SPAWN_REFUSED};
use super::*;
use crate::spec::HeartbeatMode;
use pertinax_os::segment::Layout;
use pertinax_wire::ctrl::read_frame;
use pertinax_wire::slot;
use std::sync::atomic::Ordering::Acquire;
use std::sync::mpsc::{self, Sender};
use std::sync::Mutex;

const PID0: u32 = 0x3fff_ff00;

/// What the fake starter saw when it was asked to start a process.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    slot: u32,
    index: u32,
    count: u32,
    /// The requester's publication (stamp, count, status) at that moment.
    publication: (u64, u32, u32),
}

/// A started fake process: the test's end of its control socket, and a
/// write handle on the launcher's end to hand over in `Joined`.
struct FakeProc {
    slot: u32,
    theirs: UnixStream,
    writer: UnixStream,
}

struct FakeStarter<'s> {
    seg: &'s Segment,
    /// Slot whose publication to record.
    requester: usize,
    seen: Mutex<Vec<Seen>>,
    procs: Mutex<Sender<FakeProc>>,
}

impl Starter for FakeStarter<'_> {
    fn start(&self, new: &NewProc<'_>) -> Result<Started, crate::LaunchError> {
        let p = &self.seg.ft_block(self.requester).publication;
        self.seen.lock().unwrap().push(Seen {
            slot: new.slot,
            index: new.index,
            count: new.count,
            publication: (
                p.stamp.load(Acquire),
                p.count.load(SeqCst),
                p.status.load(SeqCst),
            ),
        });
        let (ours, theirs) = UnixStream::pair().unwrap();
        theirs
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let writer = ours.try_clone().unwrap();
        let _ = self.procs.lock().unwrap().send(FakeProc {
            slot: new.slot,
            theirs,
            writer,
        });
        Ok(Started {
            pid: PID0 + new.slot,
            closer: ours,
            outputs: 0,
            tag: None,
        })
    }
}

struct Fixture {
    seg: Segment,
    children: Children,
    /// The processes' ends of their control sockets.
    ends: Vec<UnixStream>,
    started: Vec<Started>,
    cfg: Config,
}

/// `ranks` ranks and `spares` spares in a segment of `capacity` slots.
fn fixture_with(ranks: usize, spares: usize, capacity: usize) -> Fixture {
    let seg = Segment::create_anonymous(Layout::new(capacity, 4096)).unwrap();
    let (mut ends, mut started) = (Vec::new(), Vec::new());
    for s in 0..ranks + spares {
        let (ours, theirs) = UnixStream::pair().unwrap();
        // A test that goes wrong fails instead of hanging.
        theirs
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        ends.push(theirs);
        started.push(Started {
            pid: PID0 + s as u32,
            closer: ours,
            outputs: 0,
            tag: None,
        });
    }
    Fixture {
        seg,
        children: Children::new(),
        ends,
        started,
        cfg: Config {
            ranks,
            timeout: None,
            heartbeat: None,
            timed: Vec::new(),
            on_parent_failure: ParentFailure::Continue,
            schedule: Vec::new(),
            resilient: false,
            fail_fast: false,
        },
    }
}

fn fixture(n: usize) -> Fixture {
    fixture_with(n, 0, n)
}

/// Runs the loop on `events` sent by `feed` (which may sleep between
/// events; the channel stays open until it returns); `feed` gets the fake
/// processes the loop starts. Returns the report and what the starter saw
/// (its publications are those of slot `requester`).
fn supervise_spawning(
    f: &mut Fixture,
    requester: usize,
    feed: impl FnOnce(&Sender<Event>, &mpsc::Receiver<FakeProc>) + Send,
) -> (JobReport, Vec<Seen>) {
    let (tx, rx) = mpsc::channel();
    let (proc_tx, proc_rx) = mpsc::channel();
    let started = std::mem::take(&mut f.started);
    let cfg = std::mem::replace(
        &mut f.cfg,
        Config {
            ranks: 0,
            timeout: None,
            heartbeat: None,
            timed: Vec::new(),
            on_parent_failure: ParentFailure::Continue,
            schedule: Vec::new(),
            resilient: false,
            fail_fast: false,
        },
    );
    let (seg, children) = (&f.seg, &f.children);
    let starter = FakeStarter {
        seg,
        requester,
        seen: Mutex::new(Vec::new()),
        procs: Mutex::new(proc_tx),
    };
    let report = std::thread::scope(|s| {
        let feeder = s.spawn(move || {
            feed(&tx, &proc_rx);
            // Keep the channel open long enough for any deadline.
            std::thread::sleep(Duration::from_millis(600));
        });
        let report =
            Supervisor::new(seg, children, &starter, cfg, started, Instant::now()).run(&rx);
        drop(feeder);
        report
    });
    let seen = starter.seen.into_inner().unwrap();
    (report, seen)
}

fn supervise(f: &mut Fixture, feed: impl FnOnce(&Sender<Event>) + Send) -> JobReport {
    supervise_spawning(f, 0, |tx, _| feed(tx)).0
}

impl Fixture {
    /// A write handle on the launcher's end of process `s`'s socket, as
    /// the control reader hands it over in `Joined`.
    fn writer(&self, s: usize) -> UnixStream {
        self.started[s].closer.try_clone().unwrap()
    }

    fn publication(&self, s: usize) -> (u64, u32, u32, Vec<u32>) {
        let p = &self.seg.ft_block(s).publication;
        let count = p.count.load(SeqCst);
        let slots = (0..count as usize)
            .map(|i| p.slots[i].load(SeqCst))
            .collect();
        (p.stamp.load(Acquire), count, p.status.load(SeqCst), slots)
    }
}

fn exited(s: u32, end: ExitKind) -> Event {
    Event::Exited { pid: PID0 + s, end }
}

fn ctrl(slot: u32, what: CtrlEvent) -> Event {
    Event::Ctrl { slot, what }
}

fn msg(slot: u32, m: ToLauncher) -> Event {
    ctrl(slot, CtrlEvent::Msg(m))
}

/// Process `s` finalizes, closes its socket and exits 0.
fn finish_cleanly(tx: &Sender<Event>, s: u32) {
    tx.send(msg(s, ToLauncher::Finalize)).unwrap();
    tx.send(ctrl(s, CtrlEvent::Closed)).unwrap();
    tx.send(exited(s, ExitKind::Code(0))).unwrap();
}

fn spawn(stamp: u64, count: u32, use_spares: bool) -> ToLauncher {
    ToLauncher::Spawn {
        stamp,
        program: None,
        args: Vec::new(),
        count,
        use_spares,
        payload: b"job".to_vec(),
        replaces: Vec::new(),
    }
}

fn state(f: &Fixture, s: usize) -> u32 {
    f.seg.proc_block(s).state.load(SeqCst)
}

#[test]
fn a_finalized_rank_is_published_finalized_and_everyone_is_woken() {
    let mut f = fixture(1);
    let writer = f.writer(0);
    let report = supervise(&mut f, |tx| {
        tx.send(ctrl(0, CtrlEvent::Joined(writer))).unwrap();
        finish_cleanly(tx, 0);
    });
    assert_eq!(report.exit_code(), 0);
    assert!(report.ranks[0].finalized && report.ranks[0].joined);
    assert_eq!(state(&f, 0), slot::FINALIZED);
    // An operation still waiting for it must end.
    assert_eq!(f.seg.header().event_epoch.load(SeqCst), 1);
}

#[test]
fn a_finalize_just_before_the_exit_is_not_missed() {
    let mut f = fixture(1);
    let report = supervise(&mut f, |tx| {
        tx.send(ctrl(0, CtrlEvent::Joined(stray_socket()))).unwrap();
        // The reaper is faster than the control reader.
        tx.send(exited(0, ExitKind::Code(0))).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        tx.send(msg(0, ToLauncher::Finalize)).unwrap();
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
    let report = supervise(&mut f, |tx| {
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
    let mut rank0 = f.ends[0].try_clone().unwrap();
    let seg = f.seg.clone();
    let report = supervise(&mut f, |tx| {
        tx.send(ctrl(0, CtrlEvent::Joined(writer))).unwrap();
        let put = ToLauncher::Put {
            key: "k0".into(),
            value: b"v".to_vec(),
        };
        tx.send(msg(0, put)).unwrap();
        tx.send(msg(0, ToLauncher::Fence)).unwrap();
        tx.send(exited(1, ExitKind::Signal(libc::SIGKILL))).unwrap();
        // Rank 0 is answered without rank 1.
        let done = read_frame::<_, ToRank>(&mut rank0).unwrap();
        assert_eq!(
            done,
            Some(ToRank::FenceDone {
                entries: vec![("k0".into(), b"v".to_vec())]
            })
        );
        // Published before the control socket closed.
        assert_eq!(seg.proc_block(1).state.load(SeqCst), slot::FAILED);
        finish_cleanly(tx, 0);
    });
    assert_eq!(state(&f, 1), slot::FAILED);
    assert_eq!(state(&f, 0), slot::FINALIZED);
    assert_eq!(report.exit_code(), 128 + libc::SIGKILL);
}

#[test]
fn timeout_stops_the_job_and_tells_the_processes() {
    let mut f = fixture(1);
    let writer = f.writer(0);
    let mut rank0 = f.ends[0].try_clone().unwrap();
    f.cfg.timeout = Some(Duration::from_millis(50));
    let report = supervise(&mut f, |tx| {
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
    let report = supervise(&mut f, |tx| {
        tx.send(exited(1, ExitKind::Code(1))).unwrap();
        let abort = ToLauncher::Abort {
            code: 9,
            message: "test".into(),
        };
        tx.send(msg(1, abort)).unwrap();
        tx.send(ctrl(1, CtrlEvent::Closed)).unwrap();
        tx.send(exited(0, ExitKind::Signal(libc::SIGTERM))).unwrap();
    });
    assert_eq!(report.exit_code(), 9);
    assert_eq!(report.stop.as_ref().map(|s| s.at), Some(report.ranks[1].at));
}

/// A death is dated by its early notice, not by the reaping, which can
/// come later: the summary's order is the order of the deaths.
#[test]
fn a_death_is_dated_by_its_early_notice() {
    let mut f = fixture(3);
    let report = supervise(&mut f, |tx| {
        tx.send(Event::Died(1)).unwrap();
        std::thread::sleep(Duration::from_millis(150));
        tx.send(ctrl(2, CtrlEvent::Closed)).unwrap();
        tx.send(exited(2, ExitKind::Code(4))).unwrap();
        tx.send(ctrl(1, CtrlEvent::Closed)).unwrap();
        tx.send(exited(1, ExitKind::Signal(libc::SIGKILL))).unwrap();
        finish_cleanly(tx, 0);
    });
    let (one, two) = (report.ranks[1].at, report.ranks[2].at);
    assert!(one + Duration::from_millis(100) < two, "{one:?} {two:?}");
    let summary = report.summary().unwrap();
    let lines: Vec<&str> = summary.lines().collect();
    assert!(
        lines.len() == 2
            && lines[0].starts_with("pertinax: rank 1 ")
            && lines[1].starts_with("pertinax: rank 2 "),
        "{summary}"
    );
}

#[test]
fn slots_go_to_idle_spares_first_then_fresh_slots_in_order() {
    assert_eq!(choose_slots(3, &[2, 3], 5, 8), Ok(vec![2, 3, 5]));
    assert_eq!(choose_slots(1, &[2, 3], 5, 8), Ok(vec![2]));
    assert_eq!(choose_slots(3, &[], 5, 8), Ok(vec![5, 6, 7]));
    assert_eq!(choose_slots(4, &[], 5, 8), Err(SPAWN_NO_ROOM));
    assert_eq!(choose_slots(4, &[2], 5, 8), Ok(vec![2, 5, 6, 7]));
    assert_eq!(choose_slots(0, &[2], 5, 8), Err(SPAWN_REFUSED));
    let max = pertinax_os::segment::PUBLISH_MAX as u32;
    assert_eq!(choose_slots(max + 1, &[], 0, 4096), Err(SPAWN_REFUSED));
    assert_eq!(
        choose_slots(max, &[], 0, 4096).map(|v| v.len()),
        Ok(max as usize)
    );
}

#[test]
fn a_spawn_is_published_before_anything_starts_and_assigned_after_the_welcome() {
    // Two ranks, room for two spawned processes.
    let mut f = fixture_with(2, 0, 4);
    let writer = f.writer(0);
    let (report, seen) = supervise_spawning(&mut f, 0, |tx, procs| {
        tx.send(ctrl(0, CtrlEvent::Joined(writer))).unwrap();
        tx.send(msg(0, spawn(7, 2, false))).unwrap();
        for index in 0..2u32 {
            let mut p = procs.recv_timeout(Duration::from_secs(5)).unwrap();
            assert_eq!(p.slot, 2 + index);
            tx.send(ctrl(p.slot, CtrlEvent::Joined(p.writer))).unwrap();
            assert_eq!(
                read_frame::<_, ToRank>(&mut p.theirs).unwrap(),
                Some(ToRank::Assign {
                    slots: vec![2, 3],
                    index,
                    payload: b"job".to_vec()
                })
            );
            finish_cleanly(tx, p.slot);
        }
        finish_cleanly(tx, 0);
        finish_cleanly(tx, 1);
    });
    let published = (7, 2, SPAWN_OK);
    assert_eq!(
        seen,
        [
            Seen {
                slot: 2,
                index: 0,
                count: 2,
                publication: published
            },
            Seen {
                slot: 3,
                index: 1,
                count: 2,
                publication: published
            },
        ],
        "the answer was published before the first start"
    );
    assert_eq!(f.publication(0), (7, 2, SPAWN_OK, vec![2, 3]));
    assert_eq!(report.exit_code(), 0, "{:?}", report.summary());
    assert_eq!(report.others.len(), 2);
    assert_eq!(
        report.others[1].role,
        Role::Spawned {
            parent: 0,
            index: 1
        }
    );
    assert_eq!(
        (state(&f, 2), state(&f, 3)),
        (slot::FINALIZED, slot::FINALIZED)
    );
}

#[test]
fn a_request_from_a_slot_published_failed_is_ignored() {
    let mut f = fixture_with(2, 0, 4);
    let (report, seen) = supervise_spawning(&mut f, 1, |tx, _| {
        // The reaper saw the death before the reader delivered the request.
        tx.send(exited(1, ExitKind::Signal(libc::SIGKILL))).unwrap();
        tx.send(msg(1, spawn(3, 1, false))).unwrap();
        tx.send(ctrl(1, CtrlEvent::Closed)).unwrap();
        finish_cleanly(tx, 0);
    });
    assert!(seen.is_empty());
    assert_eq!(f.publication(1), (0, 0, 0, vec![]), "never answered");
    assert!(report.others.is_empty());
}

#[test]
fn impossible_requests_publish_an_error_and_start_nothing() {
    // One slot left for spawned processes.
    let mut f = fixture_with(2, 0, 3);
    let (report, seen) = supervise_spawning(&mut f, 0, |tx, _| {
        tx.send(msg(0, spawn(1, 2, true))).unwrap();
        let bad_program = ToLauncher::Spawn {
            stamp: 2,
            program: Some("/nonexistent/pertinax-program".into()),
            args: Vec::new(),
            count: 1,
            use_spares: false,
            payload: Vec::new(),
            replaces: Vec::new(),
        };
        tx.send(msg(1, bad_program)).unwrap();
        finish_cleanly(tx, 0);
        finish_cleanly(tx, 1);
    });
    assert!(seen.is_empty());
    assert_eq!(f.publication(0), (1, 0, SPAWN_NO_ROOM, vec![]));
    assert_eq!(f.publication(1), (2, 0, SPAWN_REFUSED, vec![]));
    assert_eq!(report.exit_code(), 0);
}

#[test]
fn spares_are_assigned_at_once_and_idle_ones_shut_down_at_the_end() {
    // One rank, two spares (slots 1 and 2), one slot to spawn into.
    let mut f = fixture_with(1, 2, 4);
    let writers: Vec<UnixStream> = (0..3).map(|s| f.writer(s)).collect();
    let mut spare1 = f.ends[1].try_clone().unwrap();
    let mut spare2 = f.ends[2].try_clone().unwrap();
    let (report, seen) = supervise_spawning(&mut f, 0, |tx, _| {
        for (s, w) in writers.into_iter().enumerate() {
            tx.send(ctrl(s as u32, CtrlEvent::Joined(w))).unwrap();
        }
        tx.send(msg(0, spawn(5, 1, true))).unwrap();
        assert_eq!(
            read_frame::<_, ToRank>(&mut spare1).unwrap(),
            Some(ToRank::Assign {
                slots: vec![1],
                index: 0,
                payload: b"job".to_vec()
            })
        );
        finish_cleanly(tx, 1);
        finish_cleanly(tx, 0);
        // Every member ended: the idle spare is told to go.
        assert_eq!(
            read_frame::<_, ToRank>(&mut spare2).unwrap(),
            Some(ToRank::Shutdown)
        );
        tx.send(ctrl(2, CtrlEvent::Closed)).unwrap();
        tx.send(exited(2, ExitKind::Code(0))).unwrap();
    });
    assert!(seen.is_empty(), "no fresh process");
    assert_eq!(f.publication(0), (5, 1, SPAWN_OK, vec![1]));
    assert_eq!(report.exit_code(), 0);
    assert_eq!(report.summary(), None, "an idle spare is never a failure");
    assert_eq!(
        report.others[0].role,
        Role::Spare {
            parent: 0,
            index: 0
        }
    );
    assert_eq!(report.others[1].role, Role::IdleSpare);
}

#[test]
fn an_idle_spare_that_ignores_shutdown_is_killed_and_not_reported() {
    let mut f = fixture_with(1, 1, 2);
    let t = Instant::now();
    let report = supervise(&mut f, |tx| {
        tx.send(ctrl(0, CtrlEvent::Joined(stray_socket()))).unwrap();
        finish_cleanly(tx, 0);
        // The loop kills it after the grace period; here is its death.
        std::thread::sleep(SPARE_GRACE + Duration::from_millis(100));
        tx.send(ctrl(1, CtrlEvent::Closed)).unwrap();
        tx.send(exited(1, ExitKind::Signal(libc::SIGKILL))).unwrap();
    });
    assert!(t.elapsed() >= SPARE_GRACE);
    assert_eq!(report.exit_code(), 0);
    assert_eq!(report.summary(), None);
}

#[test]
fn on_parent_failure_end_kills_what_the_parent_spawned() {
    let mut f = fixture_with(2, 0, 4);
    f.cfg.on_parent_failure = ParentFailure::End;
    let (report, _) = supervise_spawning(&mut f, 1, |tx, procs| {
        tx.send(msg(1, spawn(1, 1, false))).unwrap();
        let p = procs.recv_timeout(Duration::from_secs(5)).unwrap();
        tx.send(ctrl(p.slot, CtrlEvent::Joined(p.writer))).unwrap();
        tx.send(exited(1, ExitKind::Code(3))).unwrap();
        tx.send(ctrl(1, CtrlEvent::Closed)).unwrap();
        // The launcher's SIGKILL, as the child's end.
        tx.send(ctrl(2, CtrlEvent::Closed)).unwrap();
        tx.send(exited(2, ExitKind::Signal(libc::SIGKILL))).unwrap();
        finish_cleanly(tx, 0);
    });
    assert_eq!(
        report.others[0].cause,
        Some(Cause::ParentFailed { parent: 1 })
    );
    assert_eq!(
        report.exit_code(),
        3,
        "the parent's failure gives the status"
    );
}

#[test]
fn a_spawned_process_failure_is_only_published() {
    let mut f = fixture_with(1, 0, 2);
    let seg = f.seg.clone();
    let (report, _) = supervise_spawning(&mut f, 0, |tx, procs| {
        tx.send(msg(0, spawn(1, 1, false))).unwrap();
        let p = procs.recv_timeout(Duration::from_secs(5)).unwrap();
        tx.send(ctrl(1, CtrlEvent::Closed)).unwrap();
        tx.send(exited(p.slot, ExitKind::Code(4))).unwrap();
        wait_until(|| seg.proc_block(1).state.load(SeqCst) == slot::FAILED);
        finish_cleanly(tx, 0);
    });
    assert_eq!(report.ranks[0].end, ExitKind::Code(0));
    assert_eq!(report.exit_code(), 4);
    assert!(report
        .summary()
        .unwrap()
        .starts_with("pertinax: slot 1 (spawned by rank 0) (pid "));
}

fn wait_until(cond: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !cond() {
        assert!(Instant::now() < deadline, "condition never held");
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn a_silent_heartbeat_is_killed_and_a_beating_one_is_not() {
    let mut f = fixture(2);
    let ms = Duration::from_millis;
    f.cfg.heartbeat = Some(Heartbeat {
        period: ms(10),
        timeout: ms(80),
        mode: HeartbeatMode::Thread,
    });
    let seg = f.seg.clone();
    let report = supervise(&mut f, |tx| {
        tx.send(ctrl(0, CtrlEvent::Joined(stray_socket()))).unwrap();
        tx.send(ctrl(1, CtrlEvent::Joined(stray_socket()))).unwrap();
        for _ in 0..30 {
            seg.proc_block(1).beat.fetch_add(1, SeqCst);
            std::thread::sleep(ms(10));
        }
        // Rank 0 was killed by now: here is its death.
        tx.send(ctrl(0, CtrlEvent::Closed)).unwrap();
        tx.send(exited(0, ExitKind::Signal(libc::SIGKILL))).unwrap();
        finish_cleanly(tx, 1);
    });
    assert_eq!(
        report.ranks[0].cause,
        Some(Cause::Heartbeat { injected: false })
    );
    assert_eq!(report.ranks[1].cause, None);
    assert_eq!(report.exit_code(), 137);
}

#[test]
fn a_timed_kill_strikes_after_the_fence_and_is_injected() {
    let mut f = fixture(2);
    f.cfg.timed = vec!["1@60ms".parse().unwrap()];
    let writers = [f.writer(0), f.writer(1)];
    let t = Instant::now();
    let report = supervise(&mut f, |tx| {
        let [w0, w1] = writers;
        tx.send(ctrl(0, CtrlEvent::Joined(w0))).unwrap();
        tx.send(ctrl(1, CtrlEvent::Joined(w1))).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        // Nothing fired before the fence.
        tx.send(msg(0, ToLauncher::Fence)).unwrap();
        tx.send(msg(1, ToLauncher::Fence)).unwrap();
        std::thread::sleep(Duration::from_millis(120));
        tx.send(ctrl(1, CtrlEvent::Closed)).unwrap();
        tx.send(exited(1, ExitKind::Signal(libc::SIGKILL))).unwrap();
        finish_cleanly(tx, 0);
    });
    assert!(t.elapsed() >= Duration::from_millis(220));
    assert_eq!(
        report.ranks[1].cause,
        Some(Cause::Launcher {
            signal: libc::SIGKILL
        })
    );
    assert_eq!(report.exit_code(), 0, "an injected death");
    assert!(report
        .summary()
        .unwrap()
        .contains("(injected: SIGKILL from the launcher)"));
}

#[test]
fn an_announced_injection_is_recorded_even_if_the_exit_comes_first() {
    let mut f = fixture(2);
    let report = supervise(&mut f, |tx| {
        tx.send(exited(1, ExitKind::Signal(libc::SIGSEGV))).unwrap();
        let injected = ToLauncher::Injected {
            point: "send".into(),
            hit: 2,
            signal: libc::SIGSEGV,
        };
        tx.send(msg(1, injected)).unwrap();
        tx.send(ctrl(1, CtrlEvent::Closed)).unwrap();
        finish_cleanly(tx, 0);
    });
    assert!(report.ranks[1].is_injected());
    assert_eq!(report.exit_code(), 0);
}

#[test]
fn a_spare_welcomed_after_the_end_is_told_to_shut_down_at_once() {
    let mut f = fixture_with(1, 1, 2);
    let writer = f.writer(1);
    let mut spare = f.ends[1].try_clone().unwrap();
    let t = Instant::now();
    let report = supervise(&mut f, |tx| {
        finish_cleanly(tx, 0);
        std::thread::sleep(Duration::from_millis(50));
        tx.send(ctrl(1, CtrlEvent::Joined(writer))).unwrap();
        assert_eq!(
            read_frame::<_, ToRank>(&mut spare).unwrap(),
            Some(ToRank::Shutdown)
        );
        tx.send(ctrl(1, CtrlEvent::Closed)).unwrap();
        tx.send(exited(1, ExitKind::Code(0))).unwrap();
    });
    assert!(t.elapsed() < SPARE_GRACE, "{:?}", t.elapsed());
    assert_eq!(report.summary(), None);
}

#[test]
fn a_signal_after_every_member_ended_is_no_interruption() {
    let mut f = fixture_with(1, 1, 2);
    let report = supervise(&mut f, |tx| {
        finish_cleanly(tx, 0);
        tx.send(Event::Signal(libc::SIGINT)).unwrap();
        tx.send(ctrl(1, CtrlEvent::Closed)).unwrap();
        tx.send(exited(1, ExitKind::Signal(libc::SIGKILL))).unwrap();
    });
    assert_eq!(report.interrupted(), None);
    assert_eq!(report.exit_code(), 0);
}

#[test]
fn a_finalized_process_is_no_longer_judged_by_its_heartbeat() {
    let mut f = fixture(1);
    let ms = Duration::from_millis;
    f.cfg.heartbeat = Some(Heartbeat {
        period: ms(10),
        timeout: ms(50),
        mode: HeartbeatMode::Progress,
    });
    let report = supervise(&mut f, |tx| {
        tx.send(ctrl(0, CtrlEvent::Joined(stray_socket()))).unwrap();
        tx.send(msg(0, ToLauncher::Finalize)).unwrap();
        // Writes its results, outside the library, for a while.
        std::thread::sleep(ms(200));
        tx.send(ctrl(0, CtrlEvent::Closed)).unwrap();
        tx.send(exited(0, ExitKind::Code(0))).unwrap();
    });
    assert_eq!(report.ranks[0].cause, None);
    assert_eq!(report.summary(), None);
}

#[test]
fn a_panic_seen_before_or_after_the_exit_reaches_the_report() {
    let mut f = fixture(3);
    f.started[2].outputs = 1;
    let panic = |place: &str| Panic {
        thread: "main".into(),
        place: place.into(),
        message: "boom".into(),
    };
    let (early, late) = (panic("a.rs:1:1"), panic("b.rs:2:2"));
    let sent = (early.clone(), late.clone());
    let report = supervise(&mut f, move |tx| {
        finish_cleanly(tx, 0);
        tx.send(Event::Panicked {
            slot: 1,
            panic: sent.0,
        })
        .unwrap();
        tx.send(ctrl(1, CtrlEvent::Closed)).unwrap();
        tx.send(exited(1, ExitKind::Code(101))).unwrap();
        tx.send(ctrl(2, CtrlEvent::Closed)).unwrap();
        tx.send(exited(2, ExitKind::Code(101))).unwrap();
        // The stderr forwarder is slower than the reaper; the loop waits
        // for the stream's end.
        std::thread::sleep(Duration::from_millis(50));
        tx.send(Event::Panicked {
            slot: 2,
            panic: sent.1,
        })
        .unwrap();
        tx.send(Event::OutputClosed).unwrap();
    });
    assert_eq!(report.ranks[1].panic, Some(early));
    assert_eq!(report.ranks[2].panic, Some(late));
    let summary = report.summary().unwrap();
    assert!(
        summary.contains(&format!(
            "rank 2 (pid {}) panicked at b.rs:2:2 at ",
            PID0 + 2
        )),
        "{summary}"
    );
}

/// A request of `replace_failed` names the ranks its processes take over:
/// a spare is renamed (report and output tag) before it gets its
/// assignment, a fresh process from its start, and the summary names each
/// by the rank it calls itself and its slot.
#[test]
fn replacements_are_named_by_the_rank_they_take_over() {
    let mut f = fixture_with(2, 1, 4);
    let tag = Tag::new(2, 2);
    f.started[2].tag = Some(tag.clone());
    let writers: Vec<UnixStream> = (0..3).map(|s| f.writer(s)).collect();
    let mut spare = f.ends[2].try_clone().unwrap();
    let seen_tag = tag.clone();
    let (report, _) = supervise_spawning(&mut f, 0, |tx, procs| {
        for (s, w) in writers.into_iter().enumerate() {
            tx.send(ctrl(s as u32, CtrlEvent::Joined(w))).unwrap();
        }
        let mut req = spawn(9, 2, true);
        if let ToLauncher::Spawn { replaces, .. } = &mut req {
            *replaces = vec![1, 0];
        }
        tx.send(msg(0, req)).unwrap();
        assert!(matches!(
            read_frame::<_, ToRank>(&mut spare).unwrap(),
            Some(ToRank::Assign { index: 0, .. })
        ));
        // Renamed before the assignment was sent.
        assert_eq!(seen_tag.get().as_str(), "[1 (replacement, slot 2)] ");
        let p = procs.recv_timeout(Duration::from_secs(5)).unwrap();
        assert_eq!(p.slot, 3);
        tx.send(ctrl(3, CtrlEvent::Joined(p.writer))).unwrap();
        tx.send(ctrl(2, CtrlEvent::Closed)).unwrap();
        tx.send(exited(2, ExitKind::Code(3))).unwrap();
        let abort = ToLauncher::Abort {
            code: 4,
            message: "replacement gives up".into(),
        };
        tx.send(msg(3, abort)).unwrap();
        tx.send(ctrl(3, CtrlEvent::Closed)).unwrap();
        tx.send(exited(3, ExitKind::Code(4))).unwrap();
        finish_cleanly(tx, 0);
        finish_cleanly(tx, 1);
    });
    assert_eq!(
        report.others.iter().map(|p| p.replaces).collect::<Vec<_>>(),
        [Some(1), Some(0)]
    );
    let summary = report.summary().unwrap();
    assert!(
        summary.contains("pertinax: rank 1 (replacement, slot 2) (pid ")
            && summary.contains(") exited with code 3 at ")
            && summary
                .contains("pertinax: rank 0 (replacement, slot 3) aborted the job (code 4) at "),
        "{summary}"
    );
}

/// The fail-fast rule: a rank's non-zero exit code ends the job, the
/// others are told to shut down, and the status is that code.
#[test]
fn a_rank_that_exits_non_zero_ends_the_job_when_failing_fast() {
    let mut f = fixture(3);
    f.cfg.fail_fast = true;
    let writer = f.writer(0);
    let mut rank0 = f.ends[0].try_clone().unwrap();
    let report = supervise(&mut f, |tx| {
        tx.send(ctrl(0, CtrlEvent::Joined(writer))).unwrap();
        tx.send(ctrl(1, CtrlEvent::Closed)).unwrap();
        tx.send(exited(1, ExitKind::Code(3))).unwrap();
        assert_eq!(
            read_frame::<_, ToRank>(&mut rank0).unwrap(),
            Some(ToRank::Shutdown)
        );
        tx.send(exited(0, ExitKind::Signal(libc::SIGTERM))).unwrap();
        tx.send(exited(2, ExitKind::Signal(libc::SIGTERM))).unwrap();
    });
    assert_eq!(report.exit_code(), 3);
    assert_eq!(
        report.stop.as_ref().map(|s| &s.cause),
        Some(&StopCause::RankExited { rank: 1, code: 3 })
    );
    let summary = report.summary().unwrap();
    let lines: Vec<&str> = summary.lines().collect();
    assert_eq!(lines.len(), 2, "{summary}");
    assert!(lines[0].starts_with("pertinax: rank 1 (pid "), "{summary}");
    assert!(lines[0].contains(") exited with code 3 at "), "{summary}");
    assert!(
        lines[1].starts_with("pertinax: rank 1 exited with code 3 at ")
            && lines[1].ends_with(
                "which ends the job (--keep-going lets the others run); \
                 ranks still running were terminated"
            ),
        "{summary}"
    );
}

/// Deaths by a signal, injected panics, and any exit when failing fast is
/// off leave the others running.
#[test]
fn kills_and_injected_panics_do_not_end_the_job() {
    for fail_fast in [true, false] {
        let mut f = fixture(3);
        f.cfg.fail_fast = fail_fast;
        let report = supervise(&mut f, |tx| {
            tx.send(exited(1, ExitKind::Signal(libc::SIGKILL))).unwrap();
            let injected = ToLauncher::Injected {
                point: "step".into(),
                hit: 2,
                signal: 0,
            };
            tx.send(msg(2, injected)).unwrap();
            tx.send(ctrl(2, CtrlEvent::Closed)).unwrap();
            tx.send(exited(2, ExitKind::Code(101))).unwrap();
            std::thread::sleep(Duration::from_millis(20));
            finish_cleanly(tx, 0);
        });
        assert_eq!(report.stop, None, "fail_fast {fail_fast}");
        assert_eq!(report.exit_code(), 128 + libc::SIGKILL);
    }
    let mut f = fixture(2);
    let report = supervise(&mut f, |tx| {
        tx.send(ctrl(1, CtrlEvent::Closed)).unwrap();
        tx.send(exited(1, ExitKind::Code(4))).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        finish_cleanly(tx, 0);
    });
    assert_eq!((&report.stop, report.exit_code()), (&None, 4), "keep going");
}
