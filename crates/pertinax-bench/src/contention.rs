//! How much CPU other jobs took while a launch ran.
//!
//! This machine is shared with builds and tests, which steal CPU from the
//! ranks. A [`Meter`] scans `/proc` when a launch starts, every 200 ms
//! while it runs, and when it ends, and adds up the CPU time (user +
//! system, all threads) of every process outside this session: other
//! users' shells and tools, and kernel threads. Processes of this session
//! (the bench, the launcher, the ranks, Open MPI's helpers) are ours,
//! whoever reaps them. A process that starts and ends between two scans is
//! missed, as is the CPU a process uses between its last scan and its end,
//! so the figure is a lower bound. A scan reads one small file per process
//! (about a millisecond), so the meter itself costs well under 1% of a core.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// Clock ticks per second in `/proc/<pid>/stat` (Linux's USER_HZ, 100 on
/// every common architecture).
const USER_HZ: f64 = 100.0;

/// Time between scans.
const PERIOD: Duration = Duration::from_millis(200);

/// Measures other sessions' CPU use from [`Meter::start`] to [`Meter::finish`].
#[derive(Debug)]
pub struct Meter {
    stop: Arc<AtomicBool>,
    worker: JoinHandle<u64>,
    started: Instant,
}

impl Meter {
    /// Takes the first scan and starts scanning; `None` without `/proc`.
    pub fn start() -> Option<Meter> {
        let me = std::fs::read_to_string("/proc/self/stat").ok()?;
        let sid = session(&me)?;
        let first = scan(sid);
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let started = Instant::now();
        let worker = thread::spawn(move || {
            let mut prev = first;
            let mut total = 0;
            loop {
                let t = Instant::now();
                while t.elapsed() < PERIOD && !flag.load(Ordering::Relaxed) {
                    thread::sleep(Duration::from_millis(5));
                }
                let cur = scan(sid);
                total += used_between(&prev, &cur);
                prev = cur;
                if flag.load(Ordering::Relaxed) {
                    return total;
                }
            }
        });
        Some(Meter {
            stop,
            worker,
            started,
        })
    }

    /// Takes the last scan; returns the share of all cores' time since
    /// `start` that other sessions used (0..1).
    pub fn finish(self) -> Option<f64> {
        let (ticks, wall) = self.finish_ticks()?;
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        share(ticks, wall, cores)
    }

    /// Takes the last scan; returns the CPU ticks other sessions used since
    /// `start`, and the time since.
    fn finish_ticks(self) -> Option<(u64, Duration)> {
        self.stop.store(true, Ordering::Relaxed);
        let ticks = self.worker.join().ok()?;
        Some((ticks, self.started.elapsed()))
    }
}

/// `ticks` of CPU over `wall` on `cores` cores, as a share clamped to 0..1.
fn share(ticks: u64, wall: Duration, cores: usize) -> Option<f64> {
    let capacity = wall.as_secs_f64() * USER_HZ * cores as f64;
    (capacity > 0.0).then(|| (ticks as f64 / capacity).clamp(0.0, 1.0))
}

/// CPU ticks used between two scans: growth of the processes seen in
/// both, plus everything used by processes that appeared in between.
fn used_between(prev: &HashMap<u32, u64>, cur: &HashMap<u32, u64>) -> u64 {
    cur.iter()
        .map(|(pid, &c)| c.saturating_sub(prev.get(pid).copied().unwrap_or(0)))
        .sum()
}

/// CPU ticks of every process outside session `mine`, by pid.
fn scan(mine: u32) -> HashMap<u32, u64> {
    let mut out = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue; // gone already
        };
        if let (Some(sid), Some(ticks)) = (session(&text), cpu_ticks(&text)) {
            if sid != mine {
                out.insert(pid, ticks);
            }
        }
    }
    out
}

/// Fields 3.. of a `/proc/<pid>/stat` line (the command name, field 2,
/// may contain spaces and parentheses, so fields resume after the last ')').
fn fields(stat: &str) -> Option<Vec<&str>> {
    Some(stat[stat.rfind(')')? + 1..].split_whitespace().collect())
}

/// Field 6, the session id.
fn session(stat: &str) -> Option<u32> {
    fields(stat)?.get(6 - 3)?.parse().ok()
}

/// Fields 14 and 15, user and system ticks of all the process's threads.
fn cpu_ticks(stat: &str) -> Option<u64> {
    let f = fields(stat)?;
    let get = |k: usize| f.get(k - 3)?.parse::<u64>().ok();
    Some(get(14)? + get(15)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str =
        "13519 (a b) c) R 13511 13511 29400 0 -1 4194304 99 0 1 0 7 3 20 10 20 0 1 0 197397";

    #[test]
    fn stat_lines() {
        assert_eq!(session(LINE), Some(29400));
        assert_eq!(cpu_ticks(LINE), Some(10));
        assert_eq!(session("garbage"), None);
        let me = std::fs::read_to_string("/proc/self/stat").unwrap();
        assert!(session(&me).is_some() && cpu_ticks(&me).is_some());
    }

    #[test]
    fn accounting() {
        let prev = HashMap::from([(1, 100), (2, 50), (3, 7)]);
        let cur = HashMap::from([(1, 130), (2, 50), (4, 12)]);
        // 30 more for pid 1, nothing for 2, pid 3 gone, pid 4 new: 12.
        assert_eq!(used_between(&prev, &cur), 42);
        assert_eq!(share(100, Duration::from_secs(1), 2), Some(0.5));
        assert_eq!(share(900, Duration::from_secs(1), 2), Some(1.0));
        assert_eq!(share(1, Duration::ZERO, 2), None);
    }

    #[test]
    fn a_busy_process_in_another_session_is_seen() {
        let m = Meter::start().unwrap();
        // `setsid` puts the loop in a session of its own; it ends by itself
        // after one second of CPU (`SIGXCPU`), however long the host's
        // load makes that take. The meter misses at most what the loop
        // used after its last scan (one period, 20 ticks).
        let status = std::process::Command::new("setsid")
            .args(["-w", "sh", "-c", "ulimit -t 1; while :; do :; done"])
            .status()
            .unwrap();
        assert!(!status.success(), "the CPU limit ends the loop");
        let (ticks, wall) = m.finish_ticks().unwrap();
        assert!(ticks >= 50, "{ticks} ticks in {wall:?}");
    }
}
