//! How a process waits: spin, then yield, then sleep on its futex.
//!
//! Spinning gives the lowest latency when every rank has a core. When ranks
//! outnumber cores, a spinning rank steals the CPU from the rank it waits
//! for, so the budget shrinks: after a few polls the waiter yields, and after
//! a while it sleeps on its futex word until a sender (or the launcher) wakes
//! it. Senders check the `sleeping` flag of the receiver after publishing a
//! record (a fence and one load on the fast path) and issue the wake-up only
//! if it is set.

use std::time::Duration;

/// Waiting budget of a process.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WaitPolicy {
    /// Polls before yielding.
    pub spins: u32,
    /// Yields before sleeping.
    pub yields: u32,
    /// Longest single sleep (a safety net; wake-ups normally end it).
    pub sleep: Duration,
}

impl WaitPolicy {
    /// The default for `ranks` processes on `cpus` CPUs, overridable by the
    /// `PERTINAX_SPIN` and `PERTINAX_YIELDS` environment variables.
    pub fn for_job(ranks: usize, cpus: usize) -> WaitPolicy {
        let oversubscribed = ranks > cpus;
        let mut p = if oversubscribed {
            WaitPolicy {
                spins: 64,
                yields: 400,
                sleep: Duration::from_millis(10),
            }
        } else {
            WaitPolicy {
                spins: 200_000,
                yields: 2_000,
                sleep: Duration::from_millis(10),
            }
        };
        if let Some(v) = env_u32(pertinax_wire::env::tune::SPIN) {
            p.spins = v;
        }
        if let Some(v) = env_u32(pertinax_wire::env::tune::YIELDS) {
            p.yields = v;
        }
        p
    }
}

fn env_u32(name: &str) -> Option<u32> {
    std::env::var(name).ok()?.trim().parse().ok()
}

/// The state of one wait: how far into the budget it is.
#[derive(Debug, Default)]
pub(crate) struct Backoff {
    n: u64,
}

/// What the waiter should do next.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Step {
    Spin,
    Yield,
    Sleep,
}

impl Backoff {
    pub fn next(&mut self, p: &WaitPolicy) -> Step {
        self.n += 1;
        if self.n <= p.spins as u64 {
            Step::Spin
        } else if self.n <= p.spins as u64 + p.yields as u64 {
            Step::Yield
        } else {
            Step::Sleep
        }
    }
    /// Start over (progress was made).
    pub fn reset(&mut self) {
        self.n = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_goes_spin_yield_sleep() {
        let p = WaitPolicy {
            spins: 2,
            yields: 1,
            sleep: Duration::from_millis(1),
        };
        let mut b = Backoff::default();
        assert_eq!(b.next(&p), Step::Spin);
        assert_eq!(b.next(&p), Step::Spin);
        assert_eq!(b.next(&p), Step::Yield);
        assert_eq!(b.next(&p), Step::Sleep);
        b.reset();
        assert_eq!(b.next(&p), Step::Spin);
    }

    #[test]
    fn oversubscribed_jobs_spin_less() {
        assert!(WaitPolicy::for_job(16, 2).spins < WaitPolicy::for_job(2, 2).spins);
    }
}
