//! The sender-based payload log: every message this rank sent, and every
//! collective result it got, with the iteration it belongs to.
//!
//! The log of a checkpoint interval covers the iterations `lo..hi`: `lo`
//! is the checkpoint it starts from, `hi` the first iteration not (or not
//! wholly) logged. A replay to a rank that restarts at iteration `j` from
//! a rank at iteration `i > j` needs `lo <= j` and `hi >= i`.

use std::collections::VecDeque;
use std::rc::Rc;

use crate::LogCap;

/// One logged point-to-point send.
#[derive(Clone, Debug)]
pub(crate) struct Sent {
    pub it: u64,
    pub dest: usize,
    pub tag: i32,
    pub data: Rc<[u8]>,
}

/// One logged collective result (what the underlying collective gave,
/// the same at every rank).
#[derive(Clone, Debug)]
pub(crate) struct Got {
    pub it: u64,
    pub data: Rc<[u8]>,
}

#[derive(Debug)]
pub(crate) struct Log {
    cap: LogCap,
    sent: VecDeque<Sent>,
    got: VecDeque<Got>,
    /// First iteration covered.
    lo: u64,
    /// First iteration not wholly covered.
    hi: u64,
    /// Logging stopped in this interval (the cap was reached).
    full: bool,
    bytes: u64,
    peak: u64,
    total: u64,
}

impl Log {
    /// An empty log that starts at iteration `at`.
    pub fn new(cap: LogCap, at: u64) -> Log {
        Log {
            cap,
            sent: VecDeque::new(),
            got: VecDeque::new(),
            lo: at,
            hi: at,
            full: false,
            bytes: 0,
            peak: 0,
            total: 0,
        }
    }

    pub fn lo(&self) -> u64 {
        self.lo
    }

    pub fn hi(&self) -> u64 {
        self.hi
    }

    /// Bytes of payload held now.
    #[cfg(test)]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The most bytes held at once.
    pub fn peak(&self) -> u64 {
        self.peak
    }

    /// Bytes logged since the start.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Whether a payload of `len` bytes of iteration `it` is logged (and
    /// marks the log full when the cap says no).
    fn admit(&mut self, it: u64, len: usize) -> bool {
        if self.full || it != self.hi {
            // Past the end (the cap was reached), or an iteration that
            // does not extend the covered range.
            return false;
        }
        let ok = match self.cap {
            LogCap::Unlimited => true,
            LogCap::Iterations(n) => it < self.lo.saturating_add(n),
            LogCap::Bytes(b) => self.bytes + len as u64 <= b,
        };
        if !ok {
            self.full = true;
        }
        ok
    }

    fn grow(&mut self, len: usize) {
        self.bytes += len as u64;
        self.total += len as u64;
        self.peak = self.peak.max(self.bytes);
    }

    /// Logs a send of iteration `it` (the iteration being run, `hi`).
    pub fn send(&mut self, it: u64, dest: usize, tag: i32, data: &[u8]) {
        if self.admit(it, data.len()) {
            self.grow(data.len());
            self.sent.push_back(Sent {
                it,
                dest,
                tag,
                data: Rc::from(data),
            });
        }
    }

    /// Logs a collective result of iteration `it`.
    pub fn got(&mut self, it: u64, data: &[u8]) {
        if self.admit(it, data.len()) {
            self.grow(data.len());
            self.got.push_back(Got {
                it,
                data: Rc::from(data),
            });
        }
    }

    /// Iteration `it` completed: it is covered unless the cap stopped it.
    pub fn commit(&mut self, it: u64) {
        if !self.full && it == self.hi {
            self.hi = it + 1;
        }
    }

    /// Forgets what iterations `it..` logged (they are run again).
    pub fn truncate(&mut self, it: u64) {
        while self.sent.back().is_some_and(|s| s.it >= it) {
            if let Some(s) = self.sent.pop_back() {
                self.bytes -= s.data.len() as u64;
            }
        }
        while self.got.back().is_some_and(|g| g.it >= it) {
            if let Some(g) = self.got.pop_back() {
                self.bytes -= g.data.len() as u64;
            }
        }
        if self.hi > it {
            self.hi = it.max(self.lo);
            // What was past the cap is gone too: log again from here.
            self.full = false;
        }
    }

    /// A checkpoint of iteration `at` is committed everywhere: the log
    /// starts again there.
    pub fn restart_at(&mut self, at: u64) {
        while self.sent.front().is_some_and(|s| s.it < at) {
            if let Some(s) = self.sent.pop_front() {
                self.bytes -= s.data.len() as u64;
            }
        }
        while self.got.front().is_some_and(|g| g.it < at) {
            if let Some(g) = self.got.pop_front() {
                self.bytes -= g.data.len() as u64;
            }
        }
        self.lo = at;
        if self.hi < at {
            self.hi = at;
        }
        // The entries kept (iterations at..hi) were admitted under the
        // old start; count them against the new one.
        self.full = false;
        self.refill();
    }

    /// Rolls the whole log back to iteration `at` (a global rollback or
    /// a restarted rank).
    pub fn reset(&mut self, at: u64) {
        self.sent.clear();
        self.got.clear();
        self.bytes = 0;
        self.lo = at;
        self.hi = at;
        self.full = false;
    }

    /// After the start moved, marks the log full again if what it holds
    /// already reaches the cap.
    fn refill(&mut self) {
        self.full = match self.cap {
            LogCap::Unlimited => false,
            LogCap::Iterations(n) => self.hi >= self.lo.saturating_add(n),
            LogCap::Bytes(b) => self.bytes >= b,
        };
    }

    /// Whether the log holds every iteration of `from..to`.
    #[cfg(test)]
    pub fn covers(&self, from: u64, to: u64) -> bool {
        from >= to || (self.lo <= from && self.hi >= to)
    }

    /// The sends to `dest` of iterations `from..to`, in order.
    pub fn sends_to(&self, dest: usize, from: u64, to: u64) -> Vec<Sent> {
        self.sent
            .iter()
            .filter(|s| s.dest == dest && s.it >= from && s.it < to)
            .cloned()
            .collect()
    }

    /// The collective results of iteration `it`, in order.
    pub fn got_in(&self, it: u64) -> Vec<Got> {
        self.got.iter().filter(|g| g.it == it).cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unlimited_log_covers_what_it_committed() {
        let mut l = Log::new(LogCap::Unlimited, 10);
        for it in 10..14 {
            l.send(it, 1, 7, &[it as u8; 4]);
            l.got(it, &[1, 2]);
            l.commit(it);
        }
        assert!(l.covers(10, 14));
        assert!(!l.covers(9, 14));
        assert!(!l.covers(10, 15));
        assert_eq!(l.sends_to(1, 11, 13).len(), 2);
        assert_eq!(l.sends_to(2, 10, 14).len(), 0);
        assert_eq!(l.bytes(), 4 * 6);
        l.truncate(12);
        assert_eq!((l.lo(), l.hi()), (10, 12));
        assert_eq!(l.bytes(), 2 * 6);
        l.restart_at(11);
        assert_eq!((l.lo(), l.hi(), l.bytes()), (11, 12, 6));
    }

    #[test]
    fn an_iteration_cap_stops_logging_until_the_next_checkpoint() {
        let mut l = Log::new(LogCap::Iterations(2), 0);
        for it in 0..5 {
            l.send(it, 0, 0, &[0; 8]);
            l.commit(it);
        }
        assert_eq!((l.lo(), l.hi(), l.bytes()), (0, 2, 16));
        assert!(l.covers(0, 2) && !l.covers(0, 3));
        l.restart_at(5);
        assert_eq!((l.lo(), l.hi(), l.bytes()), (5, 5, 0));
        l.send(5, 0, 0, &[0; 8]);
        l.commit(5);
        assert_eq!(l.hi(), 6);
    }

    #[test]
    fn a_byte_cap_marks_the_iteration_it_cut_as_not_covered() {
        let mut l = Log::new(LogCap::Bytes(20), 0);
        l.send(0, 0, 0, &[0; 8]);
        l.commit(0);
        l.send(1, 0, 0, &[0; 8]);
        l.send(1, 1, 0, &[0; 8]); // over the cap: iteration 1 is cut
        l.commit(1);
        assert_eq!(l.hi(), 1);
        assert!(!l.covers(0, 2));
        // An aborted iteration 1 run again logs again.
        l.truncate(1);
        assert_eq!((l.hi(), l.bytes()), (1, 8));
    }
}
