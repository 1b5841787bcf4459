//! Child processes: set-up between `fork` and `exec`, signals, reaping.

use std::io;
use std::os::fd::RawFd;
use std::os::unix::process::CommandExt;
use std::process::Command;

use rustix::io::Errno;
use rustix::process::{Pid, Signal, WaitOptions};

/// How a child ended, as `waitpid` reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitKind {
    /// Exited with this status code.
    Code(i32),
    /// Killed by this signal.
    Signal(i32),
}

/// Prepares `cmd` so that the child:
/// - inherits the descriptors `keep` (close-on-exec cleared in the child
///   only; the same numbers are valid there);
/// - is killed with SIGKILL if the process that spawned it dies
///   (`PR_SET_PDEATHSIG`), even if that happened during the fork;
/// - runs in a process group of its own, so that a terminal's Ctrl-C reaches
///   the launcher alone and the launcher can signal the child's descendants.
pub fn configure_child(cmd: &mut Command, keep: Vec<RawFd>) {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs in the child between fork and exec and calls
    // only async-signal-safe functions (fcntl, setpgid, prctl, getppid,
    // _exit); it allocates nothing (`keep` was allocated before the fork).
    unsafe {
        cmd.pre_exec(move || {
            for &fd in &keep {
                if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            libc::setpgid(0, 0);
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                libc::_exit(127);
            }
            Ok(())
        });
    }
}

/// Sends `sig` to process `pid` (0: checks that it exists). A process that
/// is already gone is not an error.
///
/// # Errors
/// Other OS errors (e.g. `EPERM`); `EINVAL` for a signal number that is
/// not a named signal.
pub fn kill(pid: u32, sig: i32) -> io::Result<()> {
    let pid = as_pid(pid)?;
    let sent = match sig {
        0 => rustix::process::test_kill_process(pid),
        _ => rustix::process::kill_process(pid, as_signal(sig)?),
    };
    match sent {
        Ok(()) | Err(Errno::SRCH) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Makes this process receive `sig` with its default action (terminate,
/// stop, ...): any handler installed for it (the Rust runtime handles
/// SIGSEGV to report stack overflows) is removed first.
///
/// # Errors
/// The OS error of `sigaction` or `kill`.
pub fn raise_default(sig: i32) -> io::Result<()> {
    // SIGKILL and SIGSTOP cannot be handled (nor their action changed).
    if sig != libc::SIGKILL && sig != libc::SIGSTOP {
        // SAFETY: installing SIG_DFL has no memory-safety preconditions;
        // the previous handler is not needed.
        if unsafe { libc::signal(sig, libc::SIG_DFL) } == libc::SIG_ERR {
            return Err(io::Error::last_os_error());
        }
    }
    kill(std::process::id(), sig)
}

/// Asks for real-time scheduling (`SCHED_FIFO`, lowest priority) for the
/// calling thread, so that it runs as soon as it wakes instead of waiting
/// for the running tasks' time slices. Only for threads that sleep almost
/// all the time.
///
/// # Errors
/// `EPERM` without the privilege (`CAP_SYS_NICE` or an `RLIMIT_RTPRIO`).
pub fn prefer_realtime() -> io::Result<()> {
    let p = libc::sched_param { sched_priority: 1 };
    // SAFETY: `p` is a valid sched_param; pid 0 is the calling thread.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Sends `sig` to every process of process group `pgid`.
///
/// # Errors
/// As [`kill`].
pub fn kill_group(pgid: u32, sig: i32) -> io::Result<()> {
    let pgid = as_pid(pgid)?;
    let sent = match sig {
        0 => rustix::process::test_kill_process_group(pgid),
        _ => rustix::process::kill_process_group(pgid, as_signal(sig)?),
    };
    match sent {
        Ok(()) | Err(Errno::SRCH) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// `pid` as a process id: positive (0 and values past `i32::MAX` would
/// name a group or every process).
fn as_pid(pid: u32) -> io::Result<Pid> {
    i32::try_from(pid)
        .ok()
        .and_then(Pid::from_raw)
        .ok_or_else(|| io::Error::from_raw_os_error(libc::ESRCH))
}

/// `sig` as one of the named signals (the real-time ones are the C
/// library's to use, and pertinax sends none; 0, the existence check, is
/// not a signal).
fn as_signal(sig: i32) -> io::Result<Signal> {
    Signal::from_named_raw(sig).ok_or_else(|| io::Error::from_raw_os_error(libc::EINVAL))
}

/// Waits for any child of this process to end and reaps it.
/// Returns `None` when there are no children left.
pub fn wait_any() -> Option<(u32, ExitKind)> {
    loop {
        let (pid, status) = match rustix::process::wait(WaitOptions::empty()) {
            Ok(Some(got)) => got,
            Err(Errno::INTR) => continue,
            Ok(None) | Err(_) => return None,
        };
        let pid = pid.as_raw_nonzero().get() as u32;
        if let Some(code) = status.exit_status() {
            return Some((pid, ExitKind::Code(code)));
        }
        if let Some(sig) = status.terminating_signal() {
            return Some((pid, ExitKind::Signal(sig)));
        }
    }
}

/// The usual name of a signal number ("SIGKILL"), or "signal N".
pub fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGSTOP => "SIGSTOP",
        libc::SIGCONT => "SIGCONT",
        _ => return format!("signal {sig}"),
    };
    name.to_string()
}

/// Whether `pid` names a live process (zombies count as live).
pub fn is_alive(pid: u32) -> bool {
    as_pid(pid).is_ok_and(|pid| rustix::process::test_kill_process(pid).is_ok())
}

/// Asks the kernel to send `sig` (a named signal; others are ignored) to
/// this process when its parent dies.
pub fn die_with_parent(sig: i32) {
    if let Some(sig) = Signal::from_named_raw(sig) {
        let _ = rustix::process::set_parent_process_death_signal(Some(sig));
    }
}

/// Ends the process at once with `code`, running no destructors or
/// `atexit` handlers (used when the launcher is gone).
pub fn exit_now(code: i32) -> ! {
    // SAFETY: _exit never returns and has no preconditions.
    unsafe { libc::_exit(code) }
}

/// Takes ownership of a descriptor inherited from the launcher, after
/// checking that it is open, and marks it close-on-exec so that programs the
/// process starts do not inherit it.
///
/// Call it at most once per descriptor number (the runtime does so during
/// initialization, which it guards against running twice).
///
/// # Errors
/// `EBADF` if the descriptor is not open.
pub fn adopt_inherited_fd(fd: RawFd) -> io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: fcntl on an arbitrary number only queries or sets flags.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
    if flags < 0 || fd < 3 {
        return Err(io::Error::from_raw_os_error(libc::EBADF));
    }
    // SAFETY: as above.
    unsafe { libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC) };
    // SAFETY: the descriptor is open (checked) and was handed to this
    // process by the launcher for the runtime alone; the runtime adopts it
    // once, so no other owner exists.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(signal_name(9), "SIGKILL");
        assert_eq!(signal_name(63), "signal 63");
    }

    #[test]
    fn kill_of_missing_process_is_ok() {
        // pid_max is far below this.
        assert!(kill(0x3fff_fff0, 0).is_ok());
        assert!(!is_alive(0x3fff_fff0));
    }
}
