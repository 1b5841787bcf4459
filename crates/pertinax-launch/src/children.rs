//! The job's child processes: the reaper thread, and the guard that leaves
//! no child behind on any exit path.
//!
//! Every rank runs in a process group of its own (its pid is the group id),
//! so signalling "a rank" means signalling its group: the rank and whatever
//! it started. The reaper reaps with `waitpid(-1)` and reports only the
//! children registered here (any other child of the launcher process that
//! it happens to reap is ignored).
//!
//! A pid is signalled only while it is registered as live, and the reaper
//! unregisters it right after reaping it. Between the two there is a window
//! of a few instructions in which the pid is free; the kernel hands out pids
//! in increasing order, so it cannot be reused that fast in practice.

use std::collections::BTreeSet;
use std::io;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use pertinax_sys::process::{kill, kill_group, wait_any};

use crate::event::Event;

type Live = Arc<Mutex<BTreeSet<u32>>>;

fn lock(live: &Live) -> MutexGuard<'_, BTreeSet<u32>> {
    live.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The children started so far. Dropping it SIGKILLs the process group of
/// every child still alive and reaps them all before it returns.
#[derive(Debug, Default)]
pub(crate) struct Children {
    live: Live,
    reaper: Option<JoinHandle<()>>,
}

impl Children {
    /// No children yet.
    pub fn new() -> Children {
        Children::default()
    }

    /// Registers a freshly spawned child.
    pub fn add(&self, pid: u32) {
        lock(&self.live).insert(pid);
    }

    /// Sends `sig` to the process group of every child not yet reaped.
    pub fn signal_all(&self, sig: i32) {
        for &pid in lock(&self.live).iter() {
            let _ = kill_group(pid, sig);
        }
    }

    /// Starts the thread that reaps the children and reports each end as
    /// [`Event::Exited`]; it ends when every registered child is reaped.
    /// Register every child before: the reaper stops when the set is empty.
    ///
    /// # Errors
    /// When the thread cannot be created.
    pub fn start_reaper(&mut self, events: Sender<Event>) -> io::Result<()> {
        let live = self.live.clone();
        let handle = std::thread::Builder::new()
            .name("pertinax-reaper".into())
            .spawn(move || {
                reap(&live, |pid, end| {
                    let _ = events.send(Event::Exited { pid, end });
                })
            })?;
        self.reaper = Some(handle);
        Ok(())
    }
}

/// Reaps until no registered child is left, calling `report` for each.
fn reap(live: &Live, mut report: impl FnMut(u32, pertinax_sys::process::ExitKind)) {
    while !lock(live).is_empty() {
        let Some((pid, end)) = wait_any() else {
            break;
        };
        if lock(live).remove(&pid) {
            report(pid, end);
        }
    }
}

impl Drop for Children {
    fn drop(&mut self) {
        for &pid in lock(&self.live).iter() {
            let _ = kill_group(pid, libc::SIGKILL);
            let _ = kill(pid, libc::SIGKILL);
        }
        match self.reaper.take() {
            Some(reaper) => {
                let _ = reaper.join();
            }
            None => reap(&self.live, |_, _| {}),
        }
    }
}
