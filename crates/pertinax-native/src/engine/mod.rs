//! The progress engine of one process: shared-memory rings in and out,
//! MPI matching, eager and rendezvous protocols, requests, waiting.
//!
//! # Protocols
//!
//! - *Eager* (up to `eager_limit` bytes): the whole message is one ring
//!   record. A receive that is already posted gets it copied straight from
//!   the ring into its buffer; otherwise it is copied to the unexpected
//!   queue.
//! - *Rendezvous* (larger): the sender publishes an RTS record with the
//!   address of its buffer. When a receive matches it, the receiver either
//!   answers CTS, and the sender streams the message through the ring in
//!   fragments that both sides copy in a pipeline (fastest when both ranks
//!   run at once: the fragments stay in cache), or copies the data in one
//!   step from the sender's memory (cross-memory attach) and answers FIN
//!   (best when ranks outnumber cores, since the sender need not run).
//!
//! # Matching
//!
//! Messages are matched by (context, source, tag) with wildcards. Arrivals
//! are matched against posted receives in posting order, then queued as
//! unexpected; a new receive searches the unexpected queue in arrival order
//! first. Every sender has its own ring to every receiver and records are
//! handled in ring order, so messages from one sender on one communicator
//! never overtake each other.
//!
//! A receive that matches a message it cannot hold (too short, or a length
//! that is not a whole number of elements) completes with an error and
//! leaves the message where it was, so nothing is lost.
//!
//! # Senders that die mid-message
//!
//! Only whole messages are delivered: an eager record is published whole
//! or not at all, and a stream completes at its last fragment. A receive
//! streaming from a sender that ended fails with `ProcFailed` in the round
//! that learns of the end; one that matches a queued RTS of a sender
//! already known gone consumes it and fails at once (`irecv`): it must not
//! answer CTS to a process that will never send a fragment.

use std::collections::VecDeque;
use std::sync::atomic::{fence, Ordering};

use pertinax_os::futex;
use pertinax_os::ring::{Consumer, Producer};
use pertinax_os::segment::Segment;
use pertinax_wire::msg::{Kind, Meta};
use pertinax_wire::slot;

use crate::backend::{MatchSpec, Peers, RecvBuf, ReqKey, SendBuf, Task, TaskIo};
use crate::error::{Error, Result};
use crate::types::{Rank, Status, Tag};
use crate::wait::{Backoff, Step, WaitPolicy};

mod matcher;
mod outbox;
mod recv;
mod registry;
mod send;
#[cfg(test)]
mod tests;

use matcher::Matcher;
use outbox::Outbox;
pub(crate) use registry::{next_seq, stamp, Member};

pub(super) struct RecvReq {
    pub(super) spec: MatchSpec,
    pub(super) peers: Peers,
    pub(super) buf: RecvBuf,
    pub(super) elem: usize,
    /// Fragments expected: the status to report and bytes received so far.
    pub(super) stream: Option<(Status, usize)>,
}

pub(super) struct SendReq {
    pub(super) ctx: u32,
    /// The receiver answered the RTS with a refusal: it will never read
    /// the buffer, so the send may now fail by the usual rules.
    pub(super) nacked: bool,
    pub(super) dest: usize,
    pub(super) status: Status,
    pub(super) buf: SendBuf,
    /// Once the receiver asked for fragments: its cookie and bytes sent.
    pub(super) stream: Option<(u64, usize)>,
}

pub(super) enum ReqState {
    Free,
    Recv(RecvReq),
    Send(SendReq),
    /// A task (collective schedule) in progress.
    Task(Box<dyn Task>),
    /// A task taken out of the slab while it advances.
    Busy,
    Done(Result<Status>),
}

pub(super) struct ReqSlot {
    pub(super) gen: u32,
    pub(super) st: ReqState,
}

pub(super) enum Body {
    Eager(Vec<u8>),
    Rts { addr: u64, cookie: u64 },
}

pub(super) struct Unexp {
    pub(super) ctx: u32,
    pub(super) src: u32,
    pub(super) tag: i32,
    pub(super) slot: usize,
    pub(super) len: usize,
    pub(super) body: Body,
}

impl Unexp {
    pub(super) fn status(&self) -> Status {
        Status {
            source: Rank(self.src as i32),
            tag: Tag(self.tag),
            len: self.len,
        }
    }
}

pub(super) fn control(kind: Kind, cookie: u64) -> Meta {
    Meta {
        kind: kind as u8,
        flags: 0,
        _reserved: 0,
        ctx: 0,
        src: 0,
        tag: 0,
        len: cookie,
    }
}

/// The engine of one process.
pub(crate) struct Engine {
    seg: Segment,
    me: usize,
    inb: Vec<Consumer>,
    outbox: Outbox,
    m: Matcher,
    /// Slot ended without finalizing.
    failed: Vec<bool>,
    /// Slot ended (finalized or failed).
    gone: Vec<bool>,
    /// Failed slots in the order this process learned of them.
    fail_order: Vec<u32>,
    epoch_seen: u64,
    news_seen: u64,
    /// Rings from slots `0..poll_upto` are polled.
    poll_upto: usize,
    /// Some slot has ended or some communicator was revoked: the doom
    /// rules must be checked (false keeps them off the fast path).
    trouble: bool,
    /// Poll the failure epoch and revocation news (off only to measure
    /// what detection costs).
    detect: bool,
    /// Beat the heartbeat on every progress round.
    pub(crate) beat_in_progress: bool,
    /// Fault-tolerance state per communicator (by context id).
    ft: std::collections::HashMap<u32, registry::CtxFt>,
    entries: registry::Entries,
    /// Active collective schedules.
    colls: Vec<ReqKey>,
    /// Requests nobody waits for, freed once complete: receives that drop
    /// mismatched collective messages, sends a failed collective left
    /// behind, requests their owner dropped.
    discards: Vec<ReqKey>,
    eager_limit: usize,
    /// The largest payload of one ring record (buffered sends up to it go
    /// as one record).
    max_record: usize,
    /// Buffered sends past `max_record` still moving (detached requests).
    buffered: Vec<ReqKey>,
    frag: usize,
    policy: WaitPolicy,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("slot", &self.me)
            .field("posted", &self.m.posted.len())
            .field("unexpected", &self.m.unexpected.len())
            .finish()
    }
}

/// Largest message sent in one ring record by default.
const DEFAULT_EAGER: usize = 32 << 10;

/// Fragment size of streamed large messages: small enough to stay in the
/// caches of both cores while the next one is copied.
const DEFAULT_FRAG: usize = 32 << 10;

/// How long a process that is about to sleep keeps checking its rings.
const GRACE: std::time::Duration = std::time::Duration::from_micros(5);

impl Engine {
    /// An engine for slot `me` of `seg`, polling slots `0..nslots` at
    /// first (every slot of the segment can be reached; see
    /// [`Engine::watch_slots`]).
    pub fn new(
        seg: Segment,
        me: usize,
        nslots: usize,
        policy: WaitPolicy,
        eager_limit: Option<usize>,
        cma: bool,
    ) -> Engine {
        let cap = seg.layout().capacity();
        let inb = (0..cap).map(|s| seg.consumer(s, me)).collect();
        let out: Vec<Producer> = (0..cap).map(|d| seg.producer(me, d)).collect();
        let max = out.first().map_or(4096, |p| p.max_payload());
        let eager_limit = eager_limit.unwrap_or(DEFAULT_EAGER).min(max);
        let frag = std::env::var(pertinax_wire::env::tune::FRAG)
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(DEFAULT_FRAG)
            .clamp(1024, max);
        Engine {
            outbox: Outbox {
                seg: seg.clone(),
                out,
                backlog: (0..cap).map(|_| VecDeque::new()).collect(),
                backlog_bytes: 0,
                backlog_recs: 0,
            },
            m: Matcher {
                seg: seg.clone(),
                reqs: Vec::new(),
                free: Vec::new(),
                posted: Vec::new(),
                unexpected: VecDeque::new(),
                streams: Vec::new(),
                cma,
                nacked: false,
                sinks: Vec::new(),
            },
            seg,
            me,
            inb,
            failed: vec![false; cap],
            gone: vec![false; cap],
            fail_order: Vec::new(),
            epoch_seen: 0,
            news_seen: 0,
            poll_upto: nslots.min(cap),
            trouble: false,
            beat_in_progress: false,
            detect: std::env::var(pertinax_wire::env::tune::DETECT)
                .map_or(true, |v| v.trim() != "0"),
            ft: std::collections::HashMap::new(),
            entries: registry::Entries::new(),
            colls: Vec::new(),
            discards: Vec::new(),
            eager_limit,
            max_record: max,
            buffered: Vec::new(),
            frag,
            policy,
        }
    }

    /// This process's slot.
    pub fn slot(&self) -> usize {
        self.me
    }

    /// Largest message sent eagerly.
    pub fn eager_limit(&self) -> usize {
        self.eager_limit
    }

    /// Whether large messages move by cross-memory attach.
    pub fn uses_cma(&self) -> bool {
        self.m.cma
    }

    // ---- requests -------------------------------------------------------

    /// The result of a completed request (freeing it), or `None` if pending.
    ///
    /// # Errors
    /// `RequestInactive` for a request whose result was already taken.
    pub fn take(&mut self, k: ReqKey) -> Result<Option<Result<Status>>> {
        let Some(slot) = self.m.reqs.get_mut(k.idx as usize) else {
            return Err(Error::RequestInactive);
        };
        if slot.gen != k.gen || matches!(slot.st, ReqState::Free) {
            return Err(Error::RequestInactive);
        }
        if !matches!(slot.st, ReqState::Done(_)) {
            return Ok(None);
        }
        let ReqState::Done(r) = std::mem::replace(&mut slot.st, ReqState::Free) else {
            return Ok(None);
        };
        slot.gen = slot.gen.wrapping_add(1).max(1);
        self.m.free.push(k.idx);
        Ok(Some(r))
    }

    /// Whether the request completed with an error (false while pending).
    pub fn failed(&self, k: ReqKey) -> bool {
        self.m
            .reqs
            .get(k.idx as usize)
            .is_some_and(|s| s.gen == k.gen && matches!(s.st, ReqState::Done(Err(_))))
    }

    /// Cancels a receive that has not matched a message: it completes
    /// with `Cancelled` and gives its buffer back. True if cancelled;
    /// false if the request is complete, or cannot be cancelled (a send, a
    /// collective, or a receive whose message is arriving in fragments:
    /// the engine writes its buffer until the last one).
    ///
    /// # Errors
    /// `RequestInactive` for a request whose result was already taken.
    pub fn cancel(&mut self, k: ReqKey) -> Result<bool> {
        let Some(st) = self.m.get(k) else {
            return Err(Error::RequestInactive);
        };
        match st {
            ReqState::Free => Err(Error::RequestInactive),
            ReqState::Recv(r) if r.stream.is_none() => {
                self.m.posted.retain(|&p| p != k);
                self.m.complete(k, Err(Error::Cancelled));
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Lets go of a request nobody will wait for: a receive that has not
    /// matched is cancelled; anything else completes in the background
    /// and its slot is freed then.
    pub fn forget(&mut self, k: ReqKey) {
        if self.cancel(k).is_err() {
            return;
        }
        if self.is_done(k) {
            let _ = self.take(k);
        } else {
            self.discards.push(k);
        }
    }

    /// Whether the request is complete (or already taken).
    pub fn is_done(&self, k: ReqKey) -> bool {
        self.m
            .reqs
            .get(k.idx as usize)
            .is_none_or(|s| s.gen != k.gen || matches!(s.st, ReqState::Done(_) | ReqState::Free))
    }

    /// Waits for a request and takes its result.
    ///
    /// # Errors
    /// The request's error, or `RequestInactive`.
    pub fn wait(&mut self, k: ReqKey) -> Result<Status> {
        if !self.is_done(k) {
            self.wait_until(|e| e.is_done(k));
        }
        match self.take(k)? {
            Some(r) => r,
            None => Err(Error::RequestInactive),
        }
    }

    // ---- progress -------------------------------------------------------

    /// One round of progress; true if anything happened.
    pub fn progress(&mut self) -> bool {
        if self.beat_in_progress {
            self.beat();
        }
        let mut moved = self.outbox.flush();
        if !self.m.streams.is_empty() {
            moved |= self.m.pump_streams(&mut self.outbox, self.frag);
        }
        for s in 0..self.poll_upto {
            while let Some((meta, payload)) = self.inb[s].peek::<Meta>() {
                let refusal = if self.trouble {
                    registry::rts_refusal(&self.ft, &self.failed, &meta, payload)
                } else {
                    None
                };
                match refusal {
                    Some(cookie) => registry::refuse(&mut self.outbox, s, cookie),
                    None => self.m.on_record(&mut self.outbox, s, meta, payload),
                }
                self.inb[s].pop();
                moved = true;
            }
        }
        if self.m.nacked {
            self.m.nacked = false;
            self.fail_doomed();
        }
        moved |= self.poll_events();
        if !self.colls.is_empty() || !self.discards.is_empty() || !self.m.sinks.is_empty() {
            moved |= self.advance_colls();
        }
        moved
    }

    /// Reads the failure epoch and, when it moved, the slot states and this
    /// process's revocation news, applying what changed (failing the
    /// requests that can no longer complete); true if the epoch moved. One
    /// load when nothing did: the launcher bumps the epoch for every
    /// failure or finalization it announces, and a revoker bumps it after
    /// poking the members (`registry::poke`), so this runs whenever an
    /// operation is posted, and a post sees a failure or revocation that
    /// happened while this process was busy elsewhere.
    fn poll_events(&mut self) -> bool {
        if !self.detect {
            return false;
        }
        let epoch = self.seg.header().event_epoch.load(Ordering::Acquire);
        if epoch == self.epoch_seen {
            return false;
        }
        self.epoch_seen = epoch;
        self.refresh_failures();
        let news = self.seg.proc_block(self.me).news.load(Ordering::Acquire);
        if news != self.news_seen {
            self.news_seen = news;
            self.on_news();
        }
        true
    }

    // ---- collectives ----------------------------------------------------

    /// Starts a task (a collective schedule); it advances with every
    /// progress round.
    pub fn start_task(&mut self, task: Box<dyn Task>) -> ReqKey {
        let key = self.m.alloc(ReqState::Task(task));
        self.advance_task(key);
        if !self.is_done(key) {
            self.colls.push(key);
        }
        key
    }

    fn advance_colls(&mut self) -> bool {
        self.discards.append(&mut self.m.sinks);
        if !self.discards.is_empty() {
            let ds = std::mem::take(&mut self.discards);
            for k in ds {
                if self.is_done(k) {
                    let _ = self.take(k);
                } else {
                    self.discards.push(k);
                }
            }
        }
        let keys = std::mem::take(&mut self.colls);
        let mut moved = false;
        for k in keys {
            moved |= self.advance_task(k);
            if !self.is_done(k) {
                self.colls.push(k);
            }
        }
        moved
    }

    /// Ends a request early with `Cancelled`-like failure, returning its
    /// buffers (used when a collective fails midway).
    pub fn abandon(&mut self, k: ReqKey) {
        if let Some(ReqState::Send(sr)) = self.m.get(k) {
            if sr.stream.is_none() && !sr.nacked {
                // The receiver may be reading the buffer right now (single
                // copy): keep the request, and the buffer, until it answers
                // or dies, then drop it.
                self.discards.push(k);
                return;
            }
        }
        self.m.posted.retain(|&p| p != k);
        self.m.streams.retain(|&p| p != k);
        self.m.complete(k, Err(Error::Finalized));
        let _ = self.take(k);
    }

    /// Moves task `key` as far as it can go now.
    fn advance_task(&mut self, key: ReqKey) -> bool {
        let Some(st) = self.m.get(key) else {
            return false;
        };
        let ReqState::Task(mut t) = std::mem::replace(st, ReqState::Busy) else {
            // Not a task (or already done): put nothing back.
            return false;
        };
        let (moved, outcome) = t.advance(self);
        if let Some(st) = self.m.get(key) {
            *st = match outcome {
                None => ReqState::Task(t),
                Some(r) => ReqState::Done(r),
            };
        }
        moved
    }

    /// Reads slot states after the launcher announced news, drains what
    /// dead peers sent before dying, then fails what can no longer complete.
    fn refresh_failures(&mut self) {
        let mut changed = false;
        for s in 0..self.gone.len() {
            let st = self.seg.proc_block(s).state.load(Ordering::Acquire);
            let (gone, failed) = (
                st == slot::FINALIZED || st == slot::FAILED,
                st == slot::FAILED,
            );
            if gone && !self.gone[s] {
                self.gone[s] = true;
                self.failed[s] = failed;
                if failed {
                    self.fail_order.push(s as u32);
                }
                changed = true;
                self.trouble = true;
            }
        }
        if changed {
            for s in 0..self.poll_upto {
                while let Some((meta, payload)) = self.inb[s].peek::<Meta>() {
                    match registry::rts_refusal(&self.ft, &self.failed, &meta, payload) {
                        Some(cookie) => registry::refuse(&mut self.outbox, s, cookie),
                        None => self.m.on_record(&mut self.outbox, s, meta, payload),
                    }
                    self.inb[s].pop();
                }
            }
            // Records queued for dead slots can never be delivered.
            for s in 0..self.gone.len() {
                if self.gone[s] {
                    let q = std::mem::take(&mut self.outbox.backlog[s]);
                    self.outbox.backlog_recs -= q.len();
                    self.outbox.backlog_bytes -= q.iter().map(|r| r.data.len()).sum::<usize>();
                }
            }
            // A revocation already marked in the segment explains a pending
            // operation's end better than a peer that left after seeing it.
            self.on_news();
            self.fail_doomed();
            self.refuse_hopeless();
        }
    }

    fn anything_ready(&self) -> bool {
        self.inb[..self.poll_upto].iter().any(|c| c.ready())
            || self.seg.header().event_epoch.load(Ordering::Acquire) != self.epoch_seen
            || self.seg.proc_block(self.me).news.load(Ordering::Acquire) != self.news_seen
    }

    /// Progresses until `done` holds, spinning, yielding, then sleeping.
    pub fn wait_until(&mut self, mut done: impl FnMut(&mut Engine) -> bool) {
        let mut b = Backoff::default();
        loop {
            let moved = self.progress();
            if done(self) {
                return;
            }
            if moved {
                b.reset();
                continue;
            }
            self.idle(&mut b);
        }
    }

    /// One idle step of a wait.
    pub fn idle(&mut self, b: &mut Backoff) {
        let step = b.next(&self.policy);
        self.idle_step(step);
    }

    /// Does what a wait's `step` says.
    fn idle_step(&mut self, step: Step) {
        match step {
            Step::Spin => std::hint::spin_loop(),
            Step::Yield => pertinax_os::yield_cpu(),
            Step::Sleep => {
                if self.outbox.backlog_recs > 0 || !self.m.streams.is_empty() {
                    // Waiting for ring space: receivers do not wake us.
                    pertinax_os::yield_cpu();
                    return;
                }
                let pb = self.seg.proc_block(self.me);
                pb.sleeping.store(1, Ordering::SeqCst);
                fence(Ordering::SeqCst);
                let w = pb.wake.load(Ordering::SeqCst);
                // Grace period: a sender that read `sleeping == 0` just
                // before our store may still have its record in flight.
                let t = std::time::Instant::now();
                let mut ready = false;
                while t.elapsed() < GRACE {
                    if self.anything_ready() {
                        ready = true;
                        break;
                    }
                    std::hint::spin_loop();
                }
                if !ready {
                    futex::wait(&pb.wake, w, Some(self.policy.sleep));
                }
                pb.sleeping.store(0, Ordering::Relaxed);
            }
        }
    }

    /// Ends every pending request with `Finalized`, returning lent buffers.
    pub fn cancel_all(&mut self) {
        self.colls.clear();
        for slot in self.m.reqs.iter_mut() {
            if matches!(slot.st, ReqState::Task(_) | ReqState::Busy) {
                slot.st = ReqState::Done(Err(Error::Finalized));
            }
        }
        for i in 0..self.m.reqs.len() {
            let key = ReqKey {
                idx: i as u32,
                gen: self.m.reqs[i].gen,
            };
            self.m.complete(key, Err(Error::Finalized));
        }
        self.m.posted.clear();
        self.m.streams.clear();
    }

    /// Sends everything still queued (used at finalization).
    pub fn drain_outbox(&mut self) {
        self.wait_until(|e| e.outbox.backlog_recs == 0 && e.m.streams.is_empty());
    }
}

impl TaskIo for Engine {
    #[inline]
    fn isend(
        &mut self,
        dest: usize,
        dest_rank: u32,
        ctx: u32,
        src: u32,
        tag: i32,
        buf: SendBuf,
    ) -> Result<ReqKey> {
        Engine::isend(self, dest, dest_rank, ctx, src, tag, buf)
    }
    #[inline]
    fn irecv(&mut self, spec: MatchSpec, peers: Peers, buf: RecvBuf, elem: usize) -> ReqKey {
        Engine::irecv(self, spec, peers, buf, elem)
    }
    #[inline]
    fn is_done(&self, k: ReqKey) -> bool {
        Engine::is_done(self, k)
    }
    #[inline]
    fn take(&mut self, k: ReqKey) -> Result<Option<Result<Status>>> {
        Engine::take(self, k)
    }
    fn abandon(&mut self, k: ReqKey) {
        Engine::abandon(self, k)
    }
}
