//! The MPI backend's fault reports: no launcher of ours hears a rank's
//! injected death under `mpirun`, so the rank writes the native launcher's
//! line itself on stderr, just before it dies:
//!
//! ```text
//! pertinax: rank 3 (pid 4243) killed by SIGKILL (injected at hit 6 of point chunk)
//! ```
//!
//! (`panicked` for a panic), so the job's stderr names every injected death
//! on both backends alike.

use pertinax_mpi_sys as sys;

/// The line of an injected death at the `hit`-th hit of `point`, by
/// `signal` (0: a panic), of the world's rank `rank` with process id `pid`.
pub(super) fn injection_line(rank: i32, pid: u32, point: &str, hit: u64, signal: i32) -> String {
    let how = match signal {
        0 => "panicked".to_string(),
        libc::SIGKILL => "killed by SIGKILL".to_string(),
        libc::SIGSEGV => "killed by SIGSEGV".to_string(),
        libc::SIGSTOP => "stopped by SIGSTOP".to_string(),
        s => format!("killed by signal {s}"),
    };
    format!("pertinax: rank {rank} (pid {pid}) {how} (injected at hit {hit} of point {point})")
}

/// Writes the line of an injected death on stderr.
pub(super) fn report_injection(point: &str, hit: u64, signal: i32) {
    let rank = sys::Comm::world().rank().unwrap_or(-1);
    eprintln!(
        "{}",
        injection_line(rank, std::process::id(), point, hit, signal)
    );
}

#[cfg(test)]
mod tests {
    #[test]
    fn lines_read_like_the_launcher_s() {
        assert_eq!(
            super::injection_line(3, 42, "chunk", 6, libc::SIGKILL),
            "pertinax: rank 3 (pid 42) killed by SIGKILL (injected at hit 6 of point chunk)"
        );
        assert!(super::injection_line(1, 7, "x", 1, 0).contains(" panicked (injected at hit 1"));
    }
}
