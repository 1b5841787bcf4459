//! Telling every process of a job, through the shared segment, that
//! something happened: the fast path of failure detection.
//!
//! The launcher is the only writer of slot states. To publish news it
//! changes the state first, then bumps the header's `event_epoch`, then bumps
//! and futex-wakes every slot's `wake` word, so that a process that sleeps on
//! its own `wake` word (after reading it, then re-checking the states and the
//! epoch) cannot miss the news.

use std::sync::atomic::Ordering::SeqCst;

use pertinax_os::futex;
use pertinax_os::segment::Segment;
use pertinax_wire::slot;

/// Marks `slot` as [`FAILED`](pertinax_wire::slot::FAILED) and wakes every
/// process of the job so that it looks.
///
/// # Panics
/// If `slot` is not below the segment's capacity.
pub fn notify_failure(seg: &Segment, slot: usize) {
    seg.proc_block(slot).state.store(slot::FAILED, SeqCst);
    announce(seg);
}

/// Marks `slot` as [`FINALIZED`](pertinax_wire::slot::FINALIZED) and wakes
/// every process, so that an operation still waiting for it ends (a
/// finalized process takes part in nothing any more).
///
/// # Panics
/// If `slot` is not below the segment's capacity.
pub fn notify_finalized(seg: &Segment, slot: usize) {
    seg.proc_block(slot).state.store(slot::FINALIZED, SeqCst);
    announce(seg);
}

/// Wakes every process of the job without changing any slot (the launcher
/// is shutting the job down; the processes also get `Shutdown` on their
/// control sockets).
pub fn notify_shutdown(seg: &Segment) {
    announce(seg);
}

fn announce(seg: &Segment) {
    seg.header().event_epoch.fetch_add(1, SeqCst);
    for s in 0..seg.layout().capacity() {
        let wake = &seg.proc_block(s).wake;
        wake.fetch_add(1, SeqCst);
        futex::wake(wake, i32::MAX);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pertinax_os::segment::Layout;
    use std::time::Duration;

    #[test]
    fn failure_is_published_and_sleepers_wake() {
        let seg = Segment::create_anonymous(Layout::new(3, 4096)).unwrap();
        let watcher = seg.clone();
        let sleeper = std::thread::spawn(move || {
            let me = watcher.proc_block(0);
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            loop {
                let seen = me.wake.load(SeqCst);
                if watcher.proc_block(2).state.load(SeqCst) == slot::FAILED {
                    return true;
                }
                if std::time::Instant::now() > deadline {
                    return false;
                }
                futex::wait(&me.wake, seen, Some(Duration::from_secs(1)));
            }
        });
        let epoch = seg.header().event_epoch.load(SeqCst);
        notify_failure(&seg, 2);
        assert!(sleeper.join().unwrap());
        assert_eq!(seg.header().event_epoch.load(SeqCst), epoch + 1);
        for s in 0..3 {
            assert_eq!(seg.proc_block(s).wake.load(SeqCst), 1);
        }
        notify_shutdown(&seg);
        assert_eq!(seg.header().event_epoch.load(SeqCst), epoch + 2);
        assert_eq!(seg.proc_block(1).state.load(SeqCst), slot::EMPTY);
        notify_finalized(&seg, 1);
        assert_eq!(seg.header().event_epoch.load(SeqCst), epoch + 3);
        assert_eq!(seg.proc_block(1).state.load(SeqCst), slot::FINALIZED);
        assert_eq!(seg.proc_block(0).wake.load(SeqCst), 3);
    }
}
