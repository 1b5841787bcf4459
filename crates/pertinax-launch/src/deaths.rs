//! The early death notice: threads that wait on the robust futex words of
//! every slot (see [`pertinax_os::robust`]) and publish a death the moment
//! the kernel marks one, about a millisecond before `SIGCHLD` (the dying
//! process's memory is still being unmapped then).
//!
//! With `--on-parent-failure continue` (the default) they publish at once
//! (`FAILED`, epoch, wake-up) and tell the event loop; with `end` they only
//! tell the loop, which kills the dead process's children before it
//! publishes, so that no child acts on the news. The loop reaps and reports
//! the process when `SIGCHLD` comes; publishing twice is harmless.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use pertinax_os::robust::{self, OWNER_DIED, WAIT_MAX};
use pertinax_os::segment::Segment;

use crate::event::Event;
use crate::notify::notify_failure;

/// How often a watcher looks for newly started processes.
const RESCAN: Duration = Duration::from_millis(20);

/// The running watchers; they stop when this is dropped.
pub(crate) struct DeathWatch {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl DeathWatch {
    /// Starts one watcher per [`WAIT_MAX`] slots of `seg`; `publish`: publish
    /// deaths directly (else only through `events`).
    pub fn start(
        seg: &Segment,
        publish: bool,
        events: &std::sync::mpsc::Sender<Event>,
    ) -> std::io::Result<DeathWatch> {
        let stop = Arc::new(AtomicBool::new(false));
        let cap = seg.layout().capacity();
        let mut threads = Vec::new();
        for first in (0..cap).step_by(WAIT_MAX) {
            let (seg, stop, events) = (seg.clone(), stop.clone(), events.clone());
            let slots = first..(first + WAIT_MAX).min(cap);
            threads.push(
                std::thread::Builder::new()
                    .name("pertinax-deaths".into())
                    .spawn(move || watch(&seg, slots, &stop, publish, &events))?,
            );
        }
        Ok(DeathWatch { stop, threads })
    }
}

impl Drop for DeathWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

fn watch(
    seg: &Segment,
    slots: std::ops::Range<usize>,
    stop: &AtomicBool,
    publish: bool,
    events: &std::sync::mpsc::Sender<Event>,
) {
    // Run the moment a death wakes us, ahead of busy ranks (best effort:
    // without the privilege the thread keeps normal scheduling).
    let _ = pertinax_os::process::prefer_realtime();
    let mut told = vec![false; slots.len()];
    while !stop.load(Ordering::SeqCst) {
        let words: Vec<_> = slots
            .clone()
            .zip(&told)
            .filter(|(_, &t)| !t)
            .map(|(s, _)| &seg.proc_block(s).alive)
            .collect();
        if robust::wait_for_death(&words, RESCAN).is_err() {
            // futex_waitv is missing (kernels before 5.16): SIGCHLD alone
            // tells of deaths.
            return;
        }
        for (i, s) in slots.clone().enumerate() {
            if !told[i] && seg.proc_block(s).alive.load(Ordering::SeqCst) & OWNER_DIED != 0 {
                told[i] = true;
                if publish {
                    notify_failure(seg, s);
                }
                let _ = events.send(Event::Died(s as u32));
            }
        }
    }
}
