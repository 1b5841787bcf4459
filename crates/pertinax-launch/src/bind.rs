//! CPU binding of the ranks (`--bind-to core`).
//!
//! A child inherits the CPU mask of the thread that forks it, so the
//! launcher pins its own starting thread to the rank's CPU just around the
//! `fork` ([`on_cpu`]) and restores the mask at once: no code runs in the
//! child between `fork` and `exec` for it (the crate has no unsafe code),
//! and the program starts on its CPU, with every thread it creates.
//!
//! Rank R gets the R-th CPU of the launcher's own mask (as `taskset` or a
//! batch system left it), wrapping around when ranks outnumber CPUs.

use std::io;

use rustix::thread::{sched_getaffinity, sched_setaffinity, CpuSet};

/// The CPUs the launcher may run on, in increasing order.
///
/// # Errors
/// The OS error of `sched_getaffinity`.
pub(crate) fn allowed_cpus() -> io::Result<Vec<usize>> {
    let set = sched_getaffinity(None)?;
    Ok((0..CpuSet::MAX_CPU).filter(|&c| set.is_set(c)).collect())
}

/// The CPU of rank `rank` among `cpus` (`None` if there are none).
pub(crate) fn cpu_of(rank: u32, cpus: &[usize]) -> Option<usize> {
    (!cpus.is_empty()).then(|| cpus[rank as usize % cpus.len()])
}

/// Runs `f` with the calling thread pinned to `cpu`, then gives the thread
/// its mask back (even if `f` fails).
///
/// # Errors
/// The OS error of `sched_getaffinity` or `sched_setaffinity`.
pub(crate) fn on_cpu<T>(cpu: usize, f: impl FnOnce() -> T) -> io::Result<T> {
    let before = sched_getaffinity(None)?;
    let mut one = CpuSet::new();
    one.set(cpu);
    sched_setaffinity(None, &one)?;
    let out = f();
    sched_setaffinity(None, &before)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_take_the_allowed_cpus_in_turn() {
        assert_eq!(cpu_of(0, &[2, 5]), Some(2));
        assert_eq!(cpu_of(1, &[2, 5]), Some(5));
        assert_eq!(cpu_of(2, &[2, 5]), Some(2));
        assert_eq!(cpu_of(0, &[]), None);
    }

    #[test]
    fn a_child_started_on_a_cpu_runs_there_and_the_thread_gets_its_mask_back() {
        let cpus = allowed_cpus().unwrap();
        let cpu = *cpus.last().unwrap();
        let out = on_cpu(cpu, || {
            std::process::Command::new("sh")
                .args(["-c", "grep Cpus_allowed_list /proc/self/status"])
                .output()
                .unwrap()
        })
        .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            text.split_whitespace().last(),
            Some(&*cpu.to_string()),
            "{text}"
        );
        assert_eq!(allowed_cpus().unwrap(), cpus);
    }
}
