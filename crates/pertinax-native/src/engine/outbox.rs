//! The sending side of the engine: producers and per-destination backlogs.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;

use pertinax_os::futex;
use pertinax_os::ring::Producer;
use pertinax_os::segment::Segment;
use pertinax_wire::msg::Meta;

pub(super) struct OutRec {
    pub(super) meta: Meta,
    pub(super) data: Vec<u8>,
}

/// The sending side: one producer per destination slot, and a backlog per
/// destination for records that did not fit (order is kept: once a backlog
/// is non-empty, later records queue behind it).
pub(super) struct Outbox {
    pub(super) seg: Segment,
    pub(super) out: Vec<Producer>,
    pub(super) backlog: Vec<VecDeque<OutRec>>,
    pub(super) backlog_bytes: usize,
    pub(super) backlog_recs: usize,
}

impl Outbox {
    /// Wakes `dest` if it sleeps. No fence here (it would stall every
    /// send until the record's cache line is written back): the sleeper
    /// publishes its flag with a full barrier and then keeps re-checking
    /// its rings for a grace period before it sleeps, which covers a record
    /// whose store was still in this core's store buffer when we read the
    /// flag (see `Engine::idle`); its futex timeout is the safety net.
    #[inline]
    pub(super) fn wake(&self, dest: usize) {
        let pb = self.seg.proc_block(dest);
        if pb.sleeping.load(Ordering::Relaxed) != 0 {
            pb.wake.fetch_add(1, Ordering::SeqCst);
            futex::wake(&pb.wake, 1);
        }
    }

    /// Sends a record now or queues it; never fails.
    #[inline]
    pub(super) fn send(&mut self, dest: usize, meta: &Meta, payload: &[u8]) {
        if self.backlog[dest].is_empty() && self.out[dest].try_push(meta, payload) {
            self.wake(dest);
            return;
        }
        self.backlog_bytes += payload.len();
        self.backlog_recs += 1;
        self.backlog[dest].push_back(OutRec {
            meta: *meta,
            data: payload.to_vec(),
        });
    }

    /// Moves queued records into the rings; true if any moved.
    pub(super) fn flush(&mut self) -> bool {
        if self.backlog_recs == 0 {
            return false;
        }
        let mut moved = false;
        for dest in 0..self.backlog.len() {
            let mut any = false;
            while let Some(r) = self.backlog[dest].front() {
                if !self.out[dest].try_push(&r.meta, &r.data) {
                    break;
                }
                self.backlog_bytes -= r.data.len();
                self.backlog_recs -= 1;
                self.backlog[dest].pop_front();
                any = true;
            }
            if any {
                self.wake(dest);
                moved = true;
            }
        }
        moved
    }
}
