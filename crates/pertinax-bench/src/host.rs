//! The state of the host around a launch: the `c2c` sentinel.
//!
//! The host flips between a fast and a slow state between (and sometimes
//! during) launches: the cache-line one-way latency between the two vCPUs
//! goes from about 26–55 ns to about 170–250 ns, and message passing slows
//! down with it. The sentinel `c2c.c` of the Open MPI baselines, run right
//! before and right after every launch, recognises the state. The other
//! source of noise, other jobs on the machine, is measured by
//! [`crate::contention`].

use std::path::PathBuf;
use std::time::Duration;

use crate::parse::parse_output;
use crate::run::{run, Cmd};

/// Cache-line one-way latency (ns) at or below which the host counts as
/// being in its fast state (the Open MPI baselines' threshold).
pub const FAST_ONEWAY_NS: f64 = 60.0;

/// One sentinel reading: the state of the host just before a launch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// Median cache-line one-way latency between CPU 0 and CPU 1, ns.
    pub oneway_ns: f64,
    /// Median single-thread 1 MiB memcpy bandwidth, GB/s.
    pub memcpy_gbps: f64,
    /// One-minute load average, if readable.
    pub load1: Option<f64>,
}

impl Sample {
    /// Whether the host was in its fast state.
    pub fn fast(&self) -> bool {
        self.oneway_ns <= FAST_ONEWAY_NS
    }
}

/// The host-noise sentinel (`c2c.c` of the Open MPI baselines), if built.
#[derive(Clone, Debug)]
pub struct Sentinel {
    exe: Option<PathBuf>,
}

impl Sentinel {
    /// A sentinel running the compiled `c2c` at `exe`, or none.
    pub fn new(exe: Option<PathBuf>) -> Sentinel {
        Sentinel { exe }
    }

    /// Takes one sample; `None` without a sentinel or if it failed.
    pub fn sample(&self) -> Option<Sample> {
        let exe = self.exe.as_ref()?;
        let out = run(&Cmd::new(exe), Duration::from_secs(30)).ok()?;
        let rec = parse_output(&out.stdout)
            .into_iter()
            .find(|r| r.key == "C2C")?;
        Some(Sample {
            oneway_ns: rec.f64("oneway_ns")?,
            memcpy_gbps: rec.f64("memcpy_GBps")?,
            load1: load_average(),
        })
    }
}

fn load_average() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// A sentinel reading for humans: `c2c 26.6 ns (fast) memcpy 47.4 GB/s load 0.12`.
pub fn describe(s: Option<Sample>) -> String {
    match s {
        None => "c2c n/a".into(),
        Some(s) => format!(
            "c2c {:.1} ns ({}) memcpy {:.1} GB/s load {}",
            s.oneway_ns,
            if s.fast() { "fast" } else { "slow" },
            s.memcpy_gbps,
            s.load1.map_or("?".into(), |l| format!("{l:.2}")),
        ),
    }
}

/// A share 0..1 as a whole percentage, or `?`.
pub fn percent(share: Option<f64>) -> String {
    share.map_or("?".into(), |s| format!("{:.0}%", s * 100.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentinel_threshold() {
        let s = |ns| Sample {
            oneway_ns: ns,
            memcpy_gbps: 40.0,
            load1: None,
        };
        assert!(s(26.6).fast());
        assert!(s(60.0).fast());
        assert!(!s(170.0).fast());
        assert_eq!(describe(None), "c2c n/a");
        assert!(describe(Some(s(26.6))).contains("(fast)"));
        assert_eq!(percent(Some(0.123)), "12%");
        assert_eq!(percent(None), "?");
    }
}
