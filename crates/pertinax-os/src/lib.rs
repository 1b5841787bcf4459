//! The one crate of pertinax that talks to the OS below the standard library
//! and holds `unsafe` code.
//!
//! Everything above it is `#![forbid(unsafe_code)]`. What lives here:
//!
//! - [`segment`]: the job's shared-memory segment (an anonymous `memfd`
//!   inherited by every process of the job, so there is no name in
//!   `/dev/shm` to leak), its layout, per-process control blocks and the
//!   per-pair rings.
//! - [`ring`]: a lock-free single-producer/single-consumer byte ring of
//!   variable-size records. The fast path is plain loads and stores: no
//!   system call, no locked instruction.
//! - [`futex`]: sleeping and waking across processes on a word of the
//!   segment.
//! - [`cma`]: single-copy transfers between processes (`process_vm_readv`),
//!   with a probe that says whether the kernel allows it.
//! - [`process`]: set-up of a child between `fork` and `exec` (keep inherited
//!   descriptors, die with the launcher, own process group), signals, and
//!   reaping.
//! - [`robust`]: death notices from the kernel through robust futexes,
//!   early in a dying process's exit.
//!
//! Every `unsafe` block carries a `// SAFETY:` comment.
//!
//! Linux only: memfd, futexes, robust futex lists, `process_vm_readv`,
//! `PR_SET_PDEATHSIG` and `/proc` have no common equivalent elsewhere.
//! Every pertinax crate depends on this one, so the build stops here, with
//! the message below, on any other OS.
#![warn(missing_docs)]
#![deny(clippy::undocumented_unsafe_blocks)]

#[cfg(not(target_os = "linux"))]
compile_error!(
    "pertinax supports Linux only (the native backend on one machine; clusters through \
     the MPI backend on Linux nodes): it needs memfd, futexes, robust futex lists, \
     process_vm_readv and PR_SET_PDEATHSIG"
);

pub mod cma;
pub mod futex;
pub mod lend;
pub mod process;
pub mod ring;
pub mod robust;
pub mod segment;
mod sync;

/// Reads `n` random bytes from the kernel (`getrandom`).
///
/// # Errors
/// The OS error if the kernel refuses.
pub fn random_bytes(buf: &mut [u8]) -> std::io::Result<()> {
    let mut filled = 0;
    while filled < buf.len() {
        match rustix::rand::getrandom(&mut buf[filled..], rustix::rand::GetRandomFlags::empty()) {
            Ok(n) => filled += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Gives up the CPU to another runnable thread (`sched_yield`).
pub fn yield_cpu() {
    rustix::thread::sched_yield();
}

/// The id of the calling process.
pub fn pid() -> u32 {
    std::process::id()
}

/// Number of CPUs this process may run on (`sched_getaffinity`), at least 1.
pub fn online_cpus() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// Number of CPUs of the machine that are online
/// (`/sys/devices/system/cpu/online`, whatever this process's mask), or
/// [`online_cpus`] if that cannot be read.
pub fn machine_cpus() -> usize {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|s| count_cpu_list(s.trim()))
        .filter(|&n| n > 0)
        .unwrap_or_else(online_cpus)
}

/// The number of CPUs in a kernel CPU list such as `0-3,8,10-11`.
fn count_cpu_list(list: &str) -> Option<usize> {
    list.split(',').try_fold(0usize, |n, part| {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (usize, usize) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
        Some(n + b.checked_sub(a)? + 1)
    })
}

#[cfg(test)]
mod cpu_tests {
    use super::*;

    #[test]
    fn cpu_lists_are_counted() {
        assert_eq!(count_cpu_list("0"), Some(1));
        assert_eq!(count_cpu_list("0-1"), Some(2));
        assert_eq!(count_cpu_list("0-3,8,10-11"), Some(7));
        assert_eq!(count_cpu_list("3-1"), None);
        assert_eq!(count_cpu_list("x"), None);
        assert!(machine_cpus() >= 1);
    }
}
