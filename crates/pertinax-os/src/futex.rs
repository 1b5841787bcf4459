//! Process-shared futex wait and wake on a 32-bit word of shared memory.

use std::sync::atomic::AtomicU32;
use std::time::Duration;

use rustix::thread::futex;
use rustix::time::Timespec;

/// Sleeps while `*word == expected`, for at most `timeout`.
///
/// Returns on a wake-up, on a timeout, on a signal, or at once if the word
/// no longer holds `expected`. Callers re-check their condition in every
/// case. The word must live in memory shared with the waker (the futex is
/// not process-private).
pub fn wait(word: &AtomicU32, expected: u32, timeout: Option<Duration>) {
    let ts = timeout.map(|d| Timespec {
        tv_sec: d.as_secs().min(i64::MAX as u64) as i64,
        tv_nsec: d.subsec_nanos().into(),
    });
    // Every outcome (woken, timed out, interrupted, the word changed) is
    // the caller's to tell apart by re-checking its condition.
    let _ = futex::wait(word, futex::Flags::empty(), expected, ts.as_ref());
}

/// Wakes up to `n` waiters sleeping on `word` (in any process).
pub fn wake(word: &AtomicU32, n: i32) {
    let _ = futex::wake(word, futex::Flags::empty(), n.max(0) as u32);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;
    use std::sync::Arc;

    #[test]
    fn wait_returns_on_mismatch_and_timeout() {
        let w = AtomicU32::new(5);
        wait(&w, 4, None); // value differs: returns at once
        let t = std::time::Instant::now();
        wait(&w, 5, Some(Duration::from_millis(20)));
        assert!(t.elapsed() >= Duration::from_millis(10));
    }

    #[test]
    fn wake_releases_a_sleeper() {
        let w = Arc::new(AtomicU32::new(0));
        let w2 = w.clone();
        let h = std::thread::spawn(move || {
            while w2.load(Ordering::Acquire) == 0 {
                wait(&w2, 0, Some(Duration::from_secs(5)));
            }
        });
        std::thread::sleep(Duration::from_millis(20));
        w.store(1, Ordering::Release);
        wake(&w, 1);
        h.join().unwrap();
    }
}
