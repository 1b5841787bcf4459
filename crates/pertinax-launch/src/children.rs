//! The job's child processes: reaping, signalling, and the guard that
//! leaves no child behind on any exit path.
//!
//! Every process of the job runs in a process group of its own (its pid is
//! the group id), so signalling "a process" means signalling its group: the
//! process and whatever it started.
//!
//! Children are reaped one by one (`waitpid(pid, WNOHANG)` through
//! [`std::process::Child::try_wait`]) by the event loop, when the signal
//! watch reports a `SIGCHLD`, never by a `waitpid(-1)` thread. The launcher
//! starts processes while the job runs (spawn requests); a reaper thread
//! blocked in `waitpid(-1)` would race with every start: a child that exits
//! before it is registered would be reaped and forgotten, and the standard
//! library's `Command::spawn`, which waits for a child whose `exec` failed,
//! panics when another thread reaped it first. With one thread starting,
//! reaping and signalling, a pid is only ever signalled before it is reaped,
//! so it cannot name a recycled process.

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, ExitStatus};
use std::sync::{Mutex, MutexGuard, PoisonError};

use pertinax_os::process::{kill, kill_group, ExitKind};

/// The children started so far and not yet reaped. Dropping it SIGKILLs the
/// process group of every child still alive and reaps them all before it
/// returns.
#[derive(Debug, Default)]
pub(crate) struct Children {
    live: Mutex<BTreeMap<u32, Child>>,
}

fn exit_kind(status: ExitStatus) -> ExitKind {
    match (status.code(), status.signal()) {
        (Some(c), _) => ExitKind::Code(c),
        (None, Some(s)) => ExitKind::Signal(s),
        // Neither exited nor killed: `try_wait` reports only ends.
        (None, None) => ExitKind::Code(-1),
    }
}

impl Children {
    /// No children yet.
    pub fn new() -> Children {
        Children::default()
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<u32, Child>> {
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers a freshly spawned child (its pipes already taken) and
    /// returns its pid.
    pub fn add(&self, child: Child) -> u32 {
        let pid = child.id();
        self.lock().insert(pid, child);
        pid
    }

    /// Reaps every child that has ended, without blocking.
    pub fn reap(&self) -> Vec<(u32, ExitKind)> {
        let mut live = self.lock();
        let mut ended = Vec::new();
        for (&pid, child) in live.iter_mut() {
            match child.try_wait() {
                Ok(Some(status)) => ended.push((pid, exit_kind(status))),
                Ok(None) => {}
                // Someone else reaped it (the caller broke the rule of not
                // waiting for other children): it is gone, how is unknown.
                Err(_) => ended.push((pid, ExitKind::Signal(libc::SIGKILL))),
            }
        }
        for (pid, _) in &ended {
            live.remove(pid);
        }
        ended
    }

    /// Sends `sig` to the process group of every child not yet reaped.
    pub fn signal_all(&self, sig: i32) {
        for &pid in self.lock().keys() {
            let _ = kill_group(pid, sig);
        }
    }

    /// Number of children not yet reaped.
    pub fn len(&self) -> usize {
        self.lock().len()
    }
}

impl Drop for Children {
    fn drop(&mut self) {
        let mut live = self.lock();
        for &pid in live.keys() {
            let _ = kill_group(pid, libc::SIGKILL);
            let _ = kill(pid, libc::SIGKILL);
        }
        for child in live.values_mut() {
            let _ = child.wait();
        }
        live.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    fn start(script: &str) -> Child {
        Command::new("sh")
            .args(["-c", script])
            .stdin(Stdio::null())
            .spawn()
            .unwrap()
    }

    fn reap_all(c: &Children, n: usize) -> Vec<(u32, ExitKind)> {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut got = Vec::new();
        while got.len() < n && Instant::now() < deadline {
            got.extend(c.reap());
            std::thread::sleep(Duration::from_millis(5));
        }
        got
    }

    #[test]
    fn ends_are_reaped_with_their_status() {
        let c = Children::new();
        let a = c.add(start("exit 3"));
        let b = c.add(start("kill -9 $$"));
        let mut got = reap_all(&c, 2);
        got.sort_by_key(|&(pid, _)| pid);
        let mut want = vec![(a, ExitKind::Code(3)), (b, ExitKind::Signal(libc::SIGKILL))];
        want.sort_by_key(|&(pid, _)| pid);
        assert_eq!(got, want);
        assert_eq!(c.len(), 0);
    }

    #[test]
    fn drop_kills_and_reaps() {
        let c = Children::new();
        let pid = c.add(start("exec sleep 100"));
        assert!(c.reap().is_empty());
        drop(c);
        assert!(!pertinax_os::process::is_alive(pid));
    }
}
