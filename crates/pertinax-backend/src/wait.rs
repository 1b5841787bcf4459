//! How a process waits: spin, then yield, then sleep on its futex.
//!
//! Spinning gives the lowest latency when every rank has a core. When ranks
//! outnumber cores, a spinning rank steals the CPU from the rank it waits
//! for, so the budget shrinks: after a few polls the waiter yields, and after
//! a while it sleeps on its futex word until a sender (or the launcher) wakes
//! it. Senders check the `sleeping` flag of the receiver after publishing a
//! record (a fence and one load on the fast path) and issue the wake-up only
//! if it is set.

use std::time::{Duration, Instant};

/// Waiting budget of a process.
#[derive(Clone, Copy, Debug)]
pub struct WaitPolicy {
    /// How long to poll before yielding.
    pub spin: Duration,
    /// How long to poll-and-yield before sleeping.
    pub yields: Duration,
    /// Longest single sleep (a safety net; wake-ups normally end it).
    pub sleep: Duration,
}

impl WaitPolicy {
    /// The default for `ranks` processes on `cpus` CPUs, overridable by the
    /// `PERTINAX_SPIN` and `PERTINAX_YIELDS` environment variables
    /// (microseconds).
    pub fn for_job(ranks: usize, cpus: usize) -> WaitPolicy {
        let oversubscribed = ranks > cpus;
        let mut p = if oversubscribed {
            // Yield from the first poll: the rank we wait for may need our
            // core. Sleep only after a long wait.
            WaitPolicy {
                spin: Duration::ZERO,
                yields: Duration::from_millis(10),
                sleep: Duration::from_millis(10),
            }
        } else {
            WaitPolicy {
                spin: Duration::from_micros(20),
                yields: Duration::from_millis(2),
                sleep: Duration::from_millis(10),
            }
        };
        if let Some(v) = env_u64(pertinax_wire::env::tune::SPIN) {
            p.spin = Duration::from_micros(v);
        }
        if let Some(v) = env_u64(pertinax_wire::env::tune::YIELDS) {
            p.yields = Duration::from_micros(v);
        }
        p
    }
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok()?.trim().parse().ok()
}

/// The state of one wait: how far into the budget it is.
#[derive(Debug, Default)]
pub struct Backoff {
    n: u32,
    start: Option<Instant>,
}

/// What the waiter should do next.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    Spin,
    Yield,
    Sleep,
}

impl Backoff {
    pub fn next(&mut self, p: &WaitPolicy) -> Step {
        self.n = self.n.wrapping_add(1);
        // Reading the clock costs ~20 ns: spin a few rounds between reads.
        let Some(start) = self.start else {
            self.start = Some(Instant::now());
            return Step::Spin;
        };
        if !self.n.is_multiple_of(16) && p.spin > Duration::from_micros(10) {
            return Step::Spin;
        }
        let t = start.elapsed();
        if t < p.spin {
            Step::Spin
        } else if t < p.spin + p.yields {
            Step::Yield
        } else {
            Step::Sleep
        }
    }
    /// One short idle of a wait that has no progress engine to ask (a
    /// decorator's own pending operation): spin for 20 µs, then yield for
    /// 2 ms, then sleep 50 µs per step.
    pub fn snooze(&mut self) {
        const SNOOZE: WaitPolicy = WaitPolicy {
            spin: Duration::from_micros(20),
            yields: Duration::from_millis(2),
            sleep: Duration::from_micros(50),
        };
        match self.next(&SNOOZE) {
            Step::Spin => std::hint::spin_loop(),
            Step::Yield => std::thread::yield_now(),
            Step::Sleep => std::thread::sleep(SNOOZE.sleep),
        }
    }
    /// Start over (progress was made).
    pub fn reset(&mut self) {
        self.start = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_goes_spin_yield_sleep() {
        // Budgets far from the sleeps below, so a loaded machine cannot
        // push a step into the next phase.
        let long_yield = WaitPolicy {
            spin: Duration::from_micros(1),
            yields: Duration::from_secs(600),
            sleep: Duration::from_millis(1),
        };
        let mut b = Backoff::default();
        assert_eq!(b.next(&long_yield), Step::Spin);
        std::thread::sleep(Duration::from_micros(50));
        assert_eq!(b.next(&long_yield), Step::Yield);
        let no_yield = WaitPolicy {
            yields: Duration::ZERO,
            ..long_yield
        };
        assert_eq!(b.next(&no_yield), Step::Sleep);
        b.reset();
        assert_eq!(b.next(&no_yield), Step::Spin);
        let long_spin = WaitPolicy {
            spin: Duration::from_secs(600),
            ..long_yield
        };
        for _ in 0..100 {
            assert_eq!(b.next(&long_spin), Step::Spin);
        }
    }

    #[test]
    fn oversubscribed_jobs_spin_less() {
        assert!(WaitPolicy::for_job(16, 2).spin < WaitPolicy::for_job(2, 2).spin);
    }
}
