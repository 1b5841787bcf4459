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

use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::atomic::{fence, Ordering};

use pertinax_sys::lend::{Lent, LentMut};
use pertinax_sys::ring::{Consumer, Producer};
use pertinax_sys::segment::Segment;
use pertinax_sys::{cma, futex};
use pertinax_wire::msg::{Kind, Meta, Rts};
use pertinax_wire::slot;

use crate::error::{Error, Result};
use crate::types::{Rank, Status, Tag};
use crate::wait::{Backoff, Step, WaitPolicy};

/// A request's key: slab index and generation, also its wire cookie.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ReqKey {
    idx: u32,
    gen: u32,
}

impl ReqKey {
    fn cookie(self) -> u64 {
        ((self.gen as u64) << 32) | self.idx as u64
    }
    fn from_cookie(c: u64) -> ReqKey {
        ReqKey {
            idx: c as u32,
            gen: (c >> 32) as u32,
        }
    }
}

/// What a receive accepts.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MatchSpec {
    pub ctx: u32,
    pub src: Option<u32>,
    pub tag: Option<i32>,
}

impl MatchSpec {
    #[inline]
    fn matches(&self, ctx: u32, src: u32, tag: i32) -> bool {
        self.ctx == ctx && self.src.is_none_or(|s| s == src) && self.tag.is_none_or(|t| t == tag)
    }
}

/// The peers of the communicator an operation runs on: rank → slot.
pub(crate) type Peers = Rc<[u32]>;

struct RecvReq {
    spec: MatchSpec,
    peers: Peers,
    buf: LentMut,
    elem: usize,
    /// Fragments expected: the status to report and bytes received so far.
    stream: Option<(Status, usize)>,
}

struct SendReq {
    dest: usize,
    status: Status,
    buf: Lent,
    /// Once the receiver asked for fragments: its cookie and bytes sent.
    stream: Option<(u64, usize)>,
}

enum ReqState {
    Free,
    Recv(RecvReq),
    Send(SendReq),
    Done(Result<Status>),
}

struct ReqSlot {
    gen: u32,
    st: ReqState,
}

enum Body {
    Eager(Vec<u8>),
    Rts { addr: u64, cookie: u64 },
}

struct Unexp {
    ctx: u32,
    src: u32,
    tag: i32,
    slot: usize,
    len: usize,
    body: Body,
}

impl Unexp {
    fn status(&self) -> Status {
        Status {
            source: Rank(self.src as i32),
            tag: Tag(self.tag),
            len: self.len,
        }
    }
}

struct OutRec {
    meta: Meta,
    data: Vec<u8>,
}

fn control(kind: Kind, cookie: u64) -> Meta {
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

/// The sending side: one producer per destination slot, and a backlog per
/// destination for records that did not fit (order is kept: once a backlog
/// is non-empty, later records queue behind it).
struct Outbox {
    seg: Segment,
    out: Vec<Producer>,
    backlog: Vec<VecDeque<OutRec>>,
    backlog_bytes: usize,
    backlog_recs: usize,
}

impl Outbox {
    /// Wakes `dest` if it sleeps. No fence here (it would stall every
    /// send until the record's cache line is written back): the sleeper
    /// publishes its flag with a full barrier and then keeps re-checking
    /// its rings for a grace period before it sleeps, which covers a record
    /// whose store was still in this core's store buffer when we read the
    /// flag (see `Engine::idle`); its futex timeout is the safety net.
    #[inline]
    fn wake(&self, dest: usize) {
        let pb = self.seg.proc_block(dest);
        if pb.sleeping.load(Ordering::Relaxed) != 0 {
            pb.wake.fetch_add(1, Ordering::SeqCst);
            futex::wake(&pb.wake, 1);
        }
    }

    /// Sends a record now or queues it; never fails.
    #[inline]
    fn send(&mut self, dest: usize, meta: &Meta, payload: &[u8]) {
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
    fn flush(&mut self) -> bool {
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

/// Matching state and requests.
struct Matcher {
    seg: Segment,
    reqs: Vec<ReqSlot>,
    free: Vec<u32>,
    posted: Vec<ReqKey>,
    unexpected: VecDeque<Unexp>,
    /// Send requests streaming fragments (no cross-memory attach).
    streams: Vec<ReqKey>,
    cma: bool,
}

impl Matcher {
    fn alloc(&mut self, st: ReqState) -> ReqKey {
        if let Some(idx) = self.free.pop() {
            let s = &mut self.reqs[idx as usize];
            s.st = st;
            ReqKey { idx, gen: s.gen }
        } else {
            self.reqs.push(ReqSlot { gen: 1, st });
            ReqKey {
                idx: (self.reqs.len() - 1) as u32,
                gen: 1,
            }
        }
    }

    fn get(&mut self, k: ReqKey) -> Option<&mut ReqState> {
        let s = self.reqs.get_mut(k.idx as usize)?;
        (s.gen == k.gen).then_some(&mut s.st)
    }

    /// Completes a request; dropping its old state returns the lent buffer.
    fn complete(&mut self, k: ReqKey, r: Result<Status>) {
        if let Some(st) = self.get(k) {
            if !matches!(st, ReqState::Free | ReqState::Done(_)) {
                *st = ReqState::Done(r);
            }
        }
    }

    /// Checks a message against a receive buffer.
    fn fits(len: usize, cap: usize, elem: usize) -> Result<()> {
        if len > cap {
            return Err(Error::Truncated {
                sent: len,
                capacity: cap,
            });
        }
        if elem > 1 && len % elem != 0 {
            return Err(Error::LengthNotMultiple { len, elem });
        }
        Ok(())
    }

    /// Delivers unexpected message `i` to receive `key` (not posted).
    fn deliver_unexpected(&mut self, out: &mut Outbox, key: ReqKey, i: usize) {
        let Some(ReqState::Recv(r)) = self.get(key) else {
            return;
        };
        let (cap, elem) = (r.buf.len(), r.elem);
        if let Err(e) = Self::fits(self.unexpected[i].len, cap, elem) {
            self.complete(key, Err(e));
            return;
        }
        let Some(u) = self.unexpected.remove(i) else {
            return;
        };
        let status = u.status();
        match u.body {
            Body::Eager(data) => {
                if let Some(ReqState::Recv(r)) = self.get(key) {
                    r.buf.as_mut_slice()[..data.len()].copy_from_slice(&data);
                }
                self.complete(key, Ok(status));
            }
            Body::Rts { addr, cookie } => self.pull(out, key, u.slot, status, addr, cookie),
        }
    }

    /// Fetches a rendezvous message for receive `key` (already matched).
    fn pull(
        &mut self,
        out: &mut Outbox,
        key: ReqKey,
        from: usize,
        status: Status,
        addr: u64,
        cookie: u64,
    ) {
        if self.cma && status.len > 0 {
            let pid = self.seg.proc_block(from).pid.load(Ordering::Acquire);
            let Some(ReqState::Recv(r)) = self.get(key) else {
                return;
            };
            match cma::read_from(pid, addr, &mut r.buf.as_mut_slice()[..status.len]) {
                Ok(()) => {
                    self.complete(key, Ok(status));
                    out.send(from, &control(Kind::Fin, cookie), &[]);
                    return;
                }
                // EPERM or ENOSYS: the kernel forbids it; stream instead.
                Err(e) if matches!(e.raw_os_error(), Some(1) | Some(38)) => self.cma = false,
                Err(_) => {
                    self.complete(
                        key,
                        Err(Error::ProcFailed {
                            ranks: vec![status.source],
                        }),
                    );
                    return;
                }
            }
        }
        if status.len == 0 {
            self.complete(key, Ok(status));
            out.send(from, &control(Kind::Fin, cookie), &[]);
            return;
        }
        if let Some(ReqState::Recv(r)) = self.get(key) {
            r.stream = Some((status, 0));
        }
        out.send(
            from,
            &control(Kind::Cts, cookie),
            &key.cookie().to_le_bytes(),
        );
    }

    /// Handles one record that arrived from slot `from`.
    fn on_record(&mut self, out: &mut Outbox, from: usize, meta: Meta, payload: &[u8]) {
        match Kind::from_u8(meta.kind) {
            Some(Kind::Eager) => {
                let hit = self.posted.iter().position(|&k| {
                    matches!(&self.reqs[k.idx as usize].st, ReqState::Recv(r) if r.spec.matches(meta.ctx, meta.src, meta.tag))
                });
                let status = Status {
                    source: Rank(meta.src as i32),
                    tag: Tag(meta.tag),
                    len: payload.len(),
                };
                if let Some(i) = hit {
                    let key = self.posted.remove(i);
                    let Some(ReqState::Recv(r)) = self.get(key) else {
                        return;
                    };
                    match Self::fits(payload.len(), r.buf.len(), r.elem) {
                        Ok(()) => {
                            r.buf.as_mut_slice()[..payload.len()].copy_from_slice(payload);
                            self.complete(key, Ok(status));
                            return;
                        }
                        Err(e) => self.complete(key, Err(e)),
                    }
                }
                self.unexpected.push_back(Unexp {
                    ctx: meta.ctx,
                    src: meta.src,
                    tag: meta.tag,
                    slot: from,
                    len: payload.len(),
                    body: Body::Eager(payload.to_vec()),
                });
            }
            Some(Kind::Rts) => {
                let Ok(rts) = bytemuck::try_pod_read_unaligned::<Rts>(payload) else {
                    return;
                };
                let u = Unexp {
                    ctx: meta.ctx,
                    src: meta.src,
                    tag: meta.tag,
                    slot: from,
                    len: meta.len as usize,
                    body: Body::Rts {
                        addr: rts.addr,
                        cookie: rts.cookie,
                    },
                };
                let hit = self.posted.iter().position(|&k| {
                    matches!(&self.reqs[k.idx as usize].st, ReqState::Recv(r) if r.spec.matches(meta.ctx, meta.src, meta.tag))
                });
                self.unexpected.push_back(u);
                if let Some(i) = hit {
                    let key = self.posted.remove(i);
                    let last = self.unexpected.len() - 1;
                    self.deliver_unexpected(out, key, last);
                }
            }
            Some(Kind::Fin) => {
                let key = ReqKey::from_cookie(meta.len);
                if let Some(ReqState::Send(s)) = self.get(key) {
                    let st = s.status;
                    self.complete(key, Ok(st));
                }
            }
            Some(Kind::Cts) => {
                let key = ReqKey::from_cookie(meta.len);
                let Ok(rc) = <[u8; 8]>::try_from(payload) else {
                    return;
                };
                if let Some(ReqState::Send(s)) = self.get(key) {
                    s.stream = Some((u64::from_le_bytes(rc), 0));
                    self.streams.push(key);
                }
            }
            Some(Kind::Frag) => {
                let key = ReqKey::from_cookie(meta.len);
                let Some(ReqState::Recv(r)) = self.get(key) else {
                    return;
                };
                let Some((status, got)) = r.stream else {
                    return;
                };
                let end = (got + payload.len()).min(status.len);
                r.buf.as_mut_slice()[got..end].copy_from_slice(&payload[..end - got]);
                r.stream = Some((status, end));
                if end == status.len {
                    self.complete(key, Ok(status));
                }
            }
            None => {}
        }
    }

    /// Sends fragments of streaming sends while the rings have room.
    fn pump_streams(&mut self, out: &mut Outbox, frag: usize) -> bool {
        let mut moved = false;
        let mut i = 0;
        while i < self.streams.len() {
            let key = self.streams[i];
            let Some(ReqState::Send(s)) = self.get(key) else {
                self.streams.swap_remove(i);
                continue;
            };
            let Some((rc, mut sent)) = s.stream else {
                self.streams.swap_remove(i);
                continue;
            };
            let dest = s.dest;
            let data = s.buf.as_slice();
            let meta = control(Kind::Frag, rc);
            while sent < data.len() && out.backlog[dest].is_empty() {
                let n = frag.min(data.len() - sent);
                if !out.out[dest].try_push(&meta, &data[sent..sent + n]) {
                    break;
                }
                sent += n;
                moved = true;
            }
            if moved {
                out.wake(dest);
            }
            let total = data.len();
            s.stream = Some((rc, sent));
            if sent == total {
                let st = s.status;
                self.complete(key, Ok(st));
                self.streams.swap_remove(i);
            } else {
                i += 1;
            }
        }
        moved
    }

    /// Fails pending requests that can no longer complete because of dead
    /// slots. `gone`: ended in any way; `failed`: ended without finalizing.
    fn fail_doomed(&mut self, gone: &[bool], failed: &[bool]) {
        let mut doomed = Vec::new();
        for (i, s) in self.reqs.iter().enumerate() {
            let key = ReqKey {
                idx: i as u32,
                gen: s.gen,
            };
            match &s.st {
                ReqState::Recv(r) => match r.spec.src {
                    Some(src) => {
                        let slot = r.peers.get(src as usize).copied().unwrap_or(0) as usize;
                        if gone.get(slot).copied().unwrap_or(false) {
                            doomed.push((
                                key,
                                Error::ProcFailed {
                                    ranks: vec![Rank(src as i32)],
                                },
                            ));
                        }
                    }
                    None if r.stream.is_none() => {
                        let dead: Vec<Rank> = r
                            .peers
                            .iter()
                            .enumerate()
                            .filter(|(_, &sl)| failed.get(sl as usize).copied().unwrap_or(false))
                            .map(|(rk, _)| Rank(rk as i32))
                            .collect();
                        if !dead.is_empty() {
                            doomed.push((key, Error::ProcFailedPending { ranks: dead }));
                        }
                    }
                    None => {}
                },
                ReqState::Send(sr) if gone.get(sr.dest).copied().unwrap_or(false) => {
                    doomed.push((
                        key,
                        Error::ProcFailed {
                            ranks: vec![sr.status.source],
                        },
                    ));
                }
                _ => {}
            }
        }
        for (key, e) in doomed {
            self.posted.retain(|&k| k != key);
            self.streams.retain(|&k| k != key);
            self.complete(key, Err(e));
        }
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
    epoch_seen: u64,
    eager_limit: usize,
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

/// Largest backlog a blocking send lets build up before it waits.
const BACKLOG_CAP: usize = 8 << 20;

impl Engine {
    /// An engine for slot `me` of `seg`, talking to slots `0..nslots`.
    pub fn new(
        seg: Segment,
        me: usize,
        nslots: usize,
        policy: WaitPolicy,
        eager_limit: Option<usize>,
        cma: bool,
    ) -> Engine {
        let inb = (0..nslots).map(|s| seg.consumer(s, me)).collect();
        let out: Vec<Producer> = (0..nslots).map(|d| seg.producer(me, d)).collect();
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
                backlog: (0..nslots).map(|_| VecDeque::new()).collect(),
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
            },
            seg,
            me,
            inb,
            failed: vec![false; nslots],
            gone: vec![false; nslots],
            epoch_seen: 0,
            eager_limit,
            frag,
            policy,
        }
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

    // ---- sending --------------------------------------------------------

    fn check_dest(&self, dest: usize, dest_rank: u32) -> Result<()> {
        if self.gone[dest] {
            return Err(Error::ProcFailed {
                ranks: vec![Rank(dest_rank as i32)],
            });
        }
        Ok(())
    }

    /// Sends a message of at most the eager limit; the data is out of the
    /// caller's buffer when this returns.
    pub fn send_eager(
        &mut self,
        dest: usize,
        dest_rank: u32,
        ctx: u32,
        src: u32,
        tag: i32,
        data: &[u8],
    ) -> Result<()> {
        self.check_dest(dest, dest_rank)?;
        let meta = Meta {
            kind: Kind::Eager as u8,
            flags: 0,
            _reserved: 0,
            ctx,
            src,
            tag,
            len: data.len() as u64,
        };
        self.outbox.send(dest, &meta, data);
        if self.outbox.backlog_bytes > BACKLOG_CAP {
            self.wait_until(|e| e.outbox.backlog_bytes <= BACKLOG_CAP / 2 || e.gone[dest]);
        }
        Ok(())
    }

    /// Starts a send; messages up to the eager limit complete at once.
    ///
    /// # Errors
    /// `ProcFailed` if the destination is known to be gone.
    pub fn isend(
        &mut self,
        dest: usize,
        dest_rank: u32,
        ctx: u32,
        src: u32,
        tag: i32,
        buf: Lent,
    ) -> Result<ReqKey> {
        let status = Status {
            source: Rank(dest_rank as i32),
            tag: Tag(tag),
            len: buf.len(),
        };
        if buf.len() <= self.eager_limit {
            let r = self
                .send_eager(dest, dest_rank, ctx, src, tag, buf.as_slice())
                .map(|_| status);
            return Ok(self.m.alloc(ReqState::Done(r)));
        }
        self.check_dest(dest, dest_rank)?;
        let meta = Meta {
            kind: Kind::Rts as u8,
            flags: 0,
            _reserved: 0,
            ctx,
            src,
            tag,
            len: buf.len() as u64,
        };
        let addr = buf.addr();
        let key = self.m.alloc(ReqState::Send(SendReq {
            dest,
            status,
            buf,
            stream: None,
        }));
        let rts = Rts {
            addr,
            cookie: key.cookie(),
        };
        self.outbox.send(dest, &meta, bytemuck::bytes_of(&rts));
        Ok(key)
    }

    // ---- receiving ------------------------------------------------------

    /// Posts a receive into a lent buffer of `elem`-byte elements.
    pub fn irecv(&mut self, spec: MatchSpec, peers: Peers, buf: LentMut, elem: usize) -> ReqKey {
        let key = self.m.alloc(ReqState::Recv(RecvReq {
            spec,
            peers,
            buf,
            elem,
            stream: None,
        }));
        if let Some(i) = self
            .m
            .unexpected
            .iter()
            .position(|u| spec.matches(u.ctx, u.src, u.tag))
        {
            self.m.deliver_unexpected(&mut self.outbox, key, i);
        } else {
            self.m.posted.push(key);
            if self.gone.iter().any(|&g| g) {
                self.m.fail_doomed(&self.gone, &self.failed);
            }
        }
        key
    }

    /// A matching message already here, without receiving it.
    pub fn find(&self, spec: &MatchSpec) -> Option<Status> {
        self.m
            .unexpected
            .iter()
            .find(|u| spec.matches(u.ctx, u.src, u.tag))
            .map(Unexp::status)
    }

    /// Why a probe for `spec` on `peers` can never succeed, if so.
    pub fn probe_doomed(&self, spec: &MatchSpec, peers: &[u32]) -> Option<Error> {
        match spec.src {
            Some(src) => {
                let slot = peers.get(src as usize).copied()? as usize;
                self.gone[slot].then(|| Error::ProcFailed {
                    ranks: vec![Rank(src as i32)],
                })
            }
            None => {
                let dead: Vec<Rank> = peers
                    .iter()
                    .enumerate()
                    .filter(|(_, &s)| self.failed[s as usize])
                    .map(|(r, _)| Rank(r as i32))
                    .collect();
                (!dead.is_empty()).then_some(Error::ProcFailedPending { ranks: dead })
            }
        }
    }

    // ---- progress -------------------------------------------------------

    /// One round of progress; true if anything happened.
    pub fn progress(&mut self) -> bool {
        let mut moved = self.outbox.flush();
        if !self.m.streams.is_empty() {
            moved |= self.m.pump_streams(&mut self.outbox, self.frag);
        }
        for s in 0..self.inb.len() {
            while let Some((meta, payload)) = self.inb[s].peek::<Meta>() {
                self.m.on_record(&mut self.outbox, s, meta, payload);
                self.inb[s].pop();
                moved = true;
            }
        }
        let epoch = self.seg.header().event_epoch.load(Ordering::Acquire);
        if epoch != self.epoch_seen {
            self.epoch_seen = epoch;
            self.refresh_failures();
            moved = true;
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
                changed = true;
            }
        }
        if changed {
            for s in 0..self.inb.len() {
                while let Some((meta, payload)) = self.inb[s].peek::<Meta>() {
                    self.m.on_record(&mut self.outbox, s, meta, payload);
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
            self.m.fail_doomed(&self.gone, &self.failed);
        }
    }

    fn anything_ready(&self) -> bool {
        self.inb.iter().any(|c| c.ready())
            || self.seg.header().event_epoch.load(Ordering::Acquire) != self.epoch_seen
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
        match b.next(&self.policy) {
            Step::Spin => std::hint::spin_loop(),
            Step::Yield => pertinax_sys::yield_cpu(),
            Step::Sleep => {
                if self.outbox.backlog_recs > 0 || !self.m.streams.is_empty() {
                    // Waiting for ring space: receivers do not wake us.
                    pertinax_sys::yield_cpu();
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

#[cfg(test)]
mod tests {
    //! Matching and protocol logic without processes: two engines on two
    //! slots of one segment, in one thread.
    use super::*;
    use pertinax_sys::lend;
    use pertinax_sys::segment::Layout;

    fn pair(ring: usize, cma: bool) -> (Engine, Engine) {
        let seg = Segment::create_anonymous(Layout::new(2, ring)).unwrap();
        for s in 0..2 {
            seg.proc_block(s)
                .pid
                .store(std::process::id(), Ordering::Release);
        }
        let p = WaitPolicy {
            spin: std::time::Duration::from_micros(1),
            yields: std::time::Duration::ZERO,
            sleep: std::time::Duration::from_millis(1),
        };
        (
            Engine::new(seg.clone(), 0, 2, p, Some(1000), cma),
            Engine::new(seg, 1, 2, p, Some(1000), cma),
        )
    }

    fn peers() -> Peers {
        Rc::from([0u32, 1])
    }

    fn spec(src: Option<u32>, tag: Option<i32>) -> MatchSpec {
        MatchSpec { ctx: 0, src, tag }
    }

    /// Drives both engines until `k` on `b` completes.
    fn finish(a: &mut Engine, b: &mut Engine, k: ReqKey) -> Result<Status> {
        for _ in 0..100_000 {
            a.progress();
            b.progress();
            if let Some(r) = b.take(k).unwrap() {
                return r;
            }
        }
        panic!("request never completed");
    }

    #[test]
    fn posted_and_unexpected_match_in_order_with_wildcards() {
        let (mut a, mut b) = pair(4096, false);
        for (tag, v) in [(1, 10u8), (2, 20), (1, 11)] {
            a.send_eager(1, 1, 0, 0, tag, &[v]).unwrap();
        }
        b.progress(); // all three are now unexpected
        let mut bufs = [[0u8; 1]; 3];
        lend::scope(
            |s| {
                let [x, y, z] = &mut bufs;
                let k1 = b.irecv(spec(Some(0), Some(1)), peers(), s.lend_mut(x), 1);
                let k2 = b.irecv(spec(None, None), peers(), s.lend_mut(y), 1);
                let k3 = b.irecv(spec(None, Some(1)), peers(), s.lend_mut(z), 1);
                for k in [k1, k2, k3] {
                    finish(&mut a, &mut b, k).unwrap();
                }
            },
            || {},
        );
        // First tag-1 message, then the first remaining (tag 2), then tag 1.
        assert_eq!(bufs, [[10], [20], [11]]);
    }

    #[test]
    fn truncation_leaves_the_message_for_a_later_receive() {
        let (mut a, mut b) = pair(4096, false);
        let mut small = [0u8; 2];
        let mut big = [0u8; 8];
        lend::scope(
            |s| {
                let k = b.irecv(spec(Some(0), Some(3)), peers(), s.lend_mut(&mut small), 1);
                a.send_eager(1, 1, 0, 0, 3, b"hello").unwrap();
                assert_eq!(
                    finish(&mut a, &mut b, k),
                    Err(Error::Truncated {
                        sent: 5,
                        capacity: 2
                    })
                );
                let k = b.irecv(spec(Some(0), Some(3)), peers(), s.lend_mut(&mut big), 1);
                let st = finish(&mut a, &mut b, k).unwrap();
                assert_eq!(st.len, 5);
            },
            || {},
        );
        assert_eq!(&big[..5], b"hello");
    }

    #[test]
    fn element_size_mismatch_is_reported_and_kept() {
        let (mut a, mut b) = pair(4096, false);
        let mut words = [0u8; 16];
        lend::scope(
            |s| {
                a.send_eager(1, 1, 0, 0, 0, &[1, 2, 3]).unwrap();
                let k = b.irecv(spec(None, None), peers(), s.lend_mut(&mut words), 4);
                assert_eq!(
                    finish(&mut a, &mut b, k),
                    Err(Error::LengthNotMultiple { len: 3, elem: 4 })
                );
                assert!(b.find(&spec(None, None)).is_some());
            },
            || {},
        );
    }

    #[test]
    fn rendezvous_streams_through_a_small_ring() {
        let (mut a, mut b) = pair(4096, false);
        let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let mut got = vec![0u8; 100_000];
        lend::scope(
            |s| {
                let ks = a.isend(1, 1, 0, 0, 9, s.lend(&data)).unwrap();
                let kr = b.irecv(spec(Some(0), Some(9)), peers(), s.lend_mut(&mut got), 1);
                let st = finish(&mut a, &mut b, kr).unwrap();
                assert_eq!(st.len, 100_000);
                // The sender completes once every fragment is out.
                finish(&mut b, &mut a, ks).unwrap();
            },
            || {},
        );
        assert_eq!(got, data);
    }

    #[test]
    fn rendezvous_by_single_copy_when_allowed() {
        if !cma::probe() {
            return;
        }
        let (mut a, mut b) = pair(4096, true);
        let data = vec![7u8; 50_000];
        let mut got = vec![0u8; 50_000];
        lend::scope(
            |s| {
                let ks = a.isend(1, 1, 0, 0, 9, s.lend(&data)).unwrap();
                let kr = b.irecv(spec(Some(0), None), peers(), s.lend_mut(&mut got), 1);
                finish(&mut a, &mut b, kr).unwrap();
                finish(&mut b, &mut a, ks).unwrap();
            },
            || {},
        );
        assert_eq!(got, data);
    }

    #[test]
    fn full_ring_backlogs_in_order() {
        let (mut a, mut b) = pair(4096, false);
        for i in 0..200u32 {
            a.send_eager(1, 1, 0, 0, 0, &i.to_le_bytes()).unwrap();
        }
        let mut x = [0u8; 4];
        for i in 0..200u32 {
            lend::scope(
                |s| {
                    let k = b.irecv(spec(Some(0), Some(0)), peers(), s.lend_mut(&mut x), 1);
                    finish(&mut a, &mut b, k).unwrap();
                },
                || {},
            );
            assert_eq!(u32::from_le_bytes(x), i);
        }
    }

    #[test]
    fn taking_a_result_twice_is_an_error() {
        let (mut a, _b) = pair(4096, false);
        let k = lend::scope(|s| a.isend(1, 1, 0, 0, 0, s.lend(&[1u8])).unwrap(), || {});
        assert!(a.take(k).unwrap().is_some());
        assert_eq!(a.take(k), Err(Error::RequestInactive));
    }

    #[test]
    fn a_failed_peer_fails_pending_receives() {
        let (a, mut b) = pair(4096, false);
        let mut x = [0u8; 4];
        let mut y = [0u8; 4];
        lend::scope(
            |s| {
                let k1 = b.irecv(spec(Some(0), None), peers(), s.lend_mut(&mut x), 1);
                let k2 = b.irecv(spec(None, None), peers(), s.lend_mut(&mut y), 1);
                a.seg
                    .proc_block(0)
                    .state
                    .store(slot::FAILED, Ordering::SeqCst);
                a.seg.header().event_epoch.fetch_add(1, Ordering::SeqCst);
                b.progress();
                assert_eq!(
                    b.take(k1).unwrap(),
                    Some(Err(Error::ProcFailed {
                        ranks: vec![Rank(0)]
                    }))
                );
                assert_eq!(
                    b.take(k2).unwrap(),
                    Some(Err(Error::ProcFailedPending {
                        ranks: vec![Rank(0)]
                    }))
                );
            },
            || {},
        );
        assert_eq!(
            b.send_eager(0, 0, 0, 1, 0, &[1]),
            Err(Error::ProcFailed {
                ranks: vec![Rank(0)]
            })
        );
    }
}
