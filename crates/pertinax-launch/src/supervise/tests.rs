//! The event loop fed by hand: no processes, pids far above `pid_max`
//! (signals to them find nobody), and a fake [`Starter`] that records what
//! the segment looked like when it was asked to start something.
//!
//! The tests, by what the loop does: [`ends`] (how processes end and how
//! the job ends), [`spawn`](mod@spawn) (spawn requests, spares, replacements),
//! [`watch`] (heartbeats and time-based kills).

mod ends;
mod spawn;
mod watch;

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

/// A throwaway socket end for `Joined`.
fn stray_socket() -> UnixStream {
    UnixStream::pair().unwrap().0
}

fn wait_until(cond: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !cond() {
        assert!(Instant::now() < deadline, "condition never held");
        std::thread::sleep(Duration::from_millis(2));
    }
}
