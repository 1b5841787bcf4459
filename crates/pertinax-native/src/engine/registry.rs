//! The engine's side of fault tolerance.
//!
//! - The *registry*: for every communicator this process holds, keyed by
//!   its context id, the processes that share it (slot and fault-tolerance
//!   entry of each), whether it is revoked, and which failures were
//!   acknowledged on it.
//! - The *doom rules*: which pending request can no longer complete, and
//!   with which error (see [`Engine::doom_recv`]).
//! - *Revocation* through the shared segment: every process has one
//!   [`FtEntry`](pertinax_os::segment::FtEntry) per communicator, whose key
//!   word holds the communicator's context id and a `REVOKED` bit. A revoker
//!   sets that bit in the entry of every member and bumps the member's
//!   `news` word; a member that finds the bit set forwards it to every other
//!   member before failing its requests. Since the segment outlives every
//!   process, a revocation that reached one survivor reaches all of them,
//!   even if the revoker died right after.
//! - *Agreement records*: the contributions of the API's agreement (`pertinax`'s `ulfm`),
//!   one record per process and communicator, written only by their owner.

use std::rc::Rc;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release, SeqCst};

use pertinax_os::futex;
use pertinax_os::segment::{Segment, FT_ENTRIES, PUBLISH_MAX};
use pertinax_wire::slot;

use pertinax_wire::msg::{Kind, Meta, Rts};

use std::collections::HashMap;

use super::outbox::Outbox;
use super::{Body, Engine, RecvReq, ReqKey, ReqState, SendReq};
use crate::error::{Error, Result};
use crate::types::Rank;

/// Key bit: the entry is reserved for a communicator being created.
pub(crate) const KEY_PENDING: u64 = 1 << 32;
/// Key bit: the entry belongs to the communicator in the low 32 bits.
pub(crate) const KEY_IN_USE: u64 = 1 << 33;
/// Key bit: the communicator was revoked.
pub(crate) const KEY_REVOKED: u64 = 1 << 34;
/// Key bit: the owner freed the communicator.
pub(crate) const KEY_RELEASED: u64 = 1 << 35;

/// Entries every process reserves: the world, self, and the parent
/// intercommunicator of a spawned process (the contract's
/// `TOKEN_WORLD`, `TOKEN_SELF`, `TOKEN_PARENT`: 0, 1, 2).
const FIRST_FREE_ENTRY: usize = 3;
const _: () = assert!(
    crate::backend::TOKEN_WORLD as usize == 0
        && crate::backend::TOKEN_SELF as usize == 1
        && crate::backend::TOKEN_PARENT as usize == 2
);

/// One process of a communicator, as the fault-tolerance layer sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Member {
    pub slot: u32,
    pub entry: u16,
}

/// What the engine knows of one communicator.
#[derive(Debug)]
pub(crate) struct CtxFt {
    /// Every process sharing the communicator (for an intercommunicator,
    /// the local group then the remote group).
    pub members: Rc<[Member]>,
    pub revoked: bool,
    /// Slots whose failure was acknowledged on this communicator.
    pub acked: Vec<u32>,
}

#[derive(Debug, Clone)]
enum EntryUse {
    Free,
    Reserved,
    InUse,
    /// Freed here; reusable once no member can still read it.
    Released {
        ctx: u32,
        members: Rc<[Member]>,
    },
}

/// This process's fault-tolerance entries.
#[derive(Debug)]
pub(crate) struct Entries {
    uses: Vec<EntryUse>,
}

impl Entries {
    pub fn new() -> Entries {
        let mut uses = vec![EntryUse::Free; FT_ENTRIES];
        for u in uses.iter_mut().take(FIRST_FREE_ENTRY) {
            *u = EntryUse::Reserved;
        }
        Entries { uses }
    }
}

/// The context id of the communicator a (p2p, collective or internal)
/// context belongs to.
#[inline]
pub(crate) fn base_ctx(ctx: u32) -> u32 {
    ctx & !3
}

/// Whether requests on `ctx` are cut off by a revocation (point-to-point
/// and collective traffic; the internal context of recovery is not).
#[inline]
fn revocable(ctx: u32) -> bool {
    ctx & 3 <= 1
}

/// Whether `ctx` carries collective traffic.
#[inline]
fn collective(ctx: u32) -> bool {
    ctx & 3 == 1
}

/// Wakes `slot` and tells it to look at its fault-tolerance entries: its
/// `news`, then the job's event epoch, which is the one word every process
/// polls (`Engine::poll_events` reads the news only when the epoch moved;
/// bumped after the news, so whoever sees the epoch move sees the news).
pub(crate) fn poke(seg: &Segment, slot: usize) {
    let pb = seg.proc_block(slot);
    pb.news.fetch_add(1, SeqCst);
    seg.header().event_epoch.fetch_add(1, SeqCst);
    pb.wake.fetch_add(1, SeqCst);
    if pb.sleeping.load(SeqCst) != 0 {
        futex::wake(&pb.wake, i32::MAX);
    }
}

/// Sets the `REVOKED` bit in `m`'s entry if it still belongs to `ctx` (or
/// is not installed yet); true if this call set it.
fn mark_revoked(seg: &Segment, m: Member, ctx: u32) -> bool {
    let key = &seg.ft_block(m.slot as usize).entries[m.entry as usize].key;
    let mut k = key.load(Acquire);
    loop {
        // The entry is ours if it holds `ctx`, or if its owner has not
        // installed it yet: reserved for the communicator being created, or
        // still zero because the owner (a process that joins the job, or a
        // rank still in `init`) has not started using it. The owner keeps
        // the mark when it installs the entry.
        let ours = if k & KEY_IN_USE != 0 {
            k as u32 == ctx
        } else {
            k & KEY_RELEASED == 0
        };
        if !ours || k & KEY_REVOKED != 0 {
            return false;
        }
        match key.compare_exchange_weak(k, k | KEY_REVOKED, SeqCst, Acquire) {
            Ok(_) => return true,
            Err(now) => k = now,
        }
    }
}

/// Whether the process in `slot` has ended (failed or finalized), read from
/// the segment: once true it stays true and the process writes nothing.
pub(crate) fn ended(seg: &Segment, slot: usize) -> bool {
    let st = seg.proc_block(slot).state.load(Acquire);
    st == slot::FAILED || st == slot::FINALIZED
}

impl Engine {
    // ---- entries ------------------------------------------------------

    /// Reserves a free entry for a communicator being created.
    ///
    /// # Errors
    /// `InvalidArgument` when every entry is held by a live communicator.
    pub fn alloc_entry(&mut self) -> Result<u16> {
        let pick = self
            .entries
            .uses
            .iter()
            .position(|u| matches!(u, EntryUse::Free))
            .or_else(|| {
                self.entries.uses.iter().position(|u| match u {
                    EntryUse::Released { ctx, members } => {
                        members.iter().all(|m| self.entry_let_go(*m, *ctx))
                    }
                    _ => false,
                })
            });
        let Some(i) = pick else {
            return Err(Error::InvalidArgument(format!(
                "too many communicators: this process holds {FT_ENTRIES} (free some)"
            )));
        };
        self.entries.uses[i] = EntryUse::Reserved;
        self.seg.ft_block(self.me).entries[i]
            .key
            .store(KEY_PENDING, SeqCst);
        Ok(i as u16)
    }

    /// Whether member `m` can no longer read its entry of `ctx`.
    fn entry_let_go(&self, m: Member, ctx: u32) -> bool {
        if m.slot as usize == self.me {
            return true;
        }
        if ended(&self.seg, m.slot as usize) {
            return true;
        }
        let k = self.seg.ft_block(m.slot as usize).entries[m.entry as usize]
            .key
            .load(Acquire);
        k & KEY_IN_USE == 0 || k as u32 != ctx || k & KEY_RELEASED != 0
    }

    /// Gives back an entry reserved for a communicator this process did not
    /// join.
    pub fn unreserve_entry(&mut self, entry: u16) {
        let i = entry as usize;
        if i >= FIRST_FREE_ENTRY && matches!(self.entries.uses[i], EntryUse::Reserved) {
            self.seg.ft_block(self.me).entries[i].key.store(0, SeqCst);
            self.entries.uses[i] = EntryUse::Free;
        }
    }

    /// Registers a communicator: installs `ctx` in this process's entry and
    /// remembers the members. A revocation that arrived while the entry was
    /// reserved is kept.
    pub fn register(&mut self, ctx: u32, entry: u16, members: Rc<[Member]>) {
        let key = &self.seg.ft_block(self.me).entries[entry as usize].key;
        let prev = key
            .fetch_update(SeqCst, Acquire, |k| {
                Some(ctx as u64 | KEY_IN_USE | (k & KEY_REVOKED))
            })
            .unwrap_or(0);
        if let Some(u) = self.entries.uses.get_mut(entry as usize) {
            *u = EntryUse::InUse;
        }
        self.ft.insert(
            ctx,
            CtxFt {
                members,
                revoked: false,
                acked: Vec::new(),
            },
        );
        if prev & KEY_REVOKED != 0 {
            self.revoke_local(ctx);
        }
    }

    /// Forgets a freed communicator; its entry is reused once no member
    /// can read it any more.
    pub fn release(&mut self, ctx: u32, entry: u16) {
        let Some(c) = self.ft.remove(&ctx) else {
            return;
        };
        self.seg.ft_block(self.me).entries[entry as usize]
            .key
            .fetch_or(KEY_RELEASED, SeqCst);
        if (entry as usize) >= FIRST_FREE_ENTRY {
            self.entries.uses[entry as usize] = EntryUse::Released {
                ctx,
                members: c.members,
            };
        }
    }

    /// Slots this process should poll: at least `upto`.
    pub fn watch_slots(&mut self, upto: usize) {
        self.poll_upto = self.poll_upto.max(upto.min(self.inb.len()));
    }

    // ---- revocation -----------------------------------------------------

    /// Revokes communicator `ctx` everywhere.
    pub fn revoke(&mut self, ctx: u32) {
        self.revoke_local(ctx);
    }

    /// Whether `ctx` is known here to be revoked.
    #[inline]
    pub fn is_revoked(&self, ctx: u32) -> bool {
        self.trouble && self.ft.get(&base_ctx(ctx)).is_some_and(|c| c.revoked)
    }

    /// Marks `ctx` revoked, spreads the mark to every member, and fails the
    /// requests it cuts off.
    fn revoke_local(&mut self, ctx: u32) {
        let Some(c) = self.ft.get_mut(&ctx) else {
            return;
        };
        if c.revoked {
            return;
        }
        c.revoked = true;
        self.trouble = true;
        let members = c.members.clone();
        for (i, &m) in members.iter().enumerate() {
            if i == members.len() / 2 {
                crate::inject::fault_point("ft.revoke.partial");
            }
            if mark_revoked(&self.seg, m, ctx) && m.slot as usize != self.me {
                poke(&self.seg, m.slot as usize);
            }
        }
        // Messages already here on the revoked contexts can never be
        // received: drop them (refusing RTSs, so their senders finish).
        self.refuse_hopeless();
        self.fail_doomed();
    }

    /// Looks at this process's entries after someone bumped its news.
    pub(super) fn on_news(&mut self) {
        let fb = self.seg.ft_block(self.me);
        let newly: Vec<u32> = self
            .ft
            .iter()
            .filter(|(_, c)| !c.revoked)
            .filter_map(|(&ctx, c)| {
                let entry = c
                    .members
                    .iter()
                    .find(|m| m.slot as usize == self.me)
                    .map(|m| m.entry)?;
                let k = fb.entries[entry as usize].key.load(Acquire);
                (k & KEY_REVOKED != 0 && k as u32 == ctx).then_some(ctx)
            })
            .collect();
        for ctx in newly {
            self.revoke_local(ctx);
        }
    }

    // ---- failures -------------------------------------------------------

    /// Slots of `members` that failed, in the order this process learned of
    /// them.
    pub fn failed_among(&self, peers: &[u32]) -> Vec<u32> {
        self.fail_order
            .iter()
            .copied()
            .filter(|s| peers.contains(s))
            .collect()
    }

    /// Acknowledges on `ctx` the first `n` failures of `peers` (all when
    /// `n` exceeds them); returns how many are acknowledged now.
    pub fn ack_failed(&mut self, ctx: u32, peers: &[u32], n: usize) -> usize {
        let failed = self.failed_among(peers);
        let Some(c) = self.ft.get_mut(&ctx) else {
            return 0;
        };
        for s in failed.into_iter().take(n) {
            if !c.acked.contains(&s) {
                c.acked.push(s);
            }
        }
        c.acked.len()
    }

    /// The slots whose failure was acknowledged on `ctx`, in order.
    pub fn acked(&self, ctx: u32) -> Vec<u32> {
        self.ft
            .get(&ctx)
            .map(|c| c.acked.clone())
            .unwrap_or_default()
    }

    /// Ranks (positions in `peers`) whose slot satisfies `pred`.
    fn ranks_where(peers: &[u32], pred: impl Fn(usize) -> bool) -> Vec<Rank> {
        peers
            .iter()
            .enumerate()
            .filter(|(_, &s)| pred(s as usize))
            .map(|(r, _)| Rank(r as i32))
            .collect()
    }

    /// `ProcFailed` naming the failed members of `peers`, if any. (A member
    /// that finalized dooms only what waits for it by name: everything it
    /// sent before finalizing is delivered.)
    fn members_down(&self, peers: &[u32]) -> Option<Error> {
        let dead = Self::ranks_where(peers, |s| self.failed[s]);
        (!dead.is_empty()).then_some(Error::ProcFailed { ranks: dead })
    }

    /// The error every operation on `ctx` must end with, if any: `Revoked`
    /// for a revoked communicator, `ProcFailed` for collective traffic on
    /// a communicator with a failed member (among `peers`, or the
    /// registered members).
    fn doom_comm(&self, ctx: u32, peers: Option<&[u32]>) -> Option<Error> {
        let info = self.ft.get(&base_ctx(ctx));
        if revocable(ctx) && info.is_some_and(|c| c.revoked) {
            return Some(Error::Revoked);
        }
        if !collective(ctx) {
            return None;
        }
        match peers {
            Some(p) => self.members_down(p),
            None => {
                let slots: Vec<u32> = info?.members.iter().map(|m| m.slot).collect();
                self.members_down(&slots)
            }
        }
    }

    /// The error a receive can no longer escape, if any.
    pub(super) fn doom_recv(&self, r: &RecvReq) -> Option<Error> {
        let src = r
            .spec
            .src
            .or_else(|| r.stream.map(|(st, _)| st.source.0 as u32));
        self.doom_match(r.spec.ctx, src, &r.peers)
    }

    /// The error a receive or probe on `ctx` from `src` (any source when
    /// `None`) among `peers` must end with, if any.
    pub(super) fn doom_match(&self, ctx: u32, src: Option<u32>, peers: &[u32]) -> Option<Error> {
        if !self.trouble {
            return None;
        }
        if let Some(e) = self.doom_comm(ctx, Some(peers)) {
            return Some(e);
        }
        let info = self.ft.get(&base_ctx(ctx));
        match src {
            Some(src) => {
                let slot = peers.get(src as usize).copied()? as usize;
                self.gone[slot].then(|| Error::ProcFailed {
                    ranks: vec![Rank(src as i32)],
                })
            }
            None => {
                let acked: &[u32] = info.map_or(&[], |c| &c.acked);
                let dead =
                    Self::ranks_where(peers, |s| self.failed[s] && !acked.contains(&(s as u32)));
                (!dead.is_empty()).then_some(Error::ProcFailedPending { ranks: dead })
            }
        }
    }

    /// The error a send can no longer escape, if any. A rendezvous send
    /// whose receiver may be reading the buffer by single copy (its RTS
    /// is out, neither streamed nor refused) ends only with the receiver's
    /// death, or with the receiver's answer: the buffer must outlive any
    /// read.
    pub(super) fn doom_send(&self, s: &SendReq) -> Option<Error> {
        if s.stream.is_none() && !s.nacked {
            return self.gone[s.dest].then(|| Error::ProcFailed {
                ranks: vec![s.status.source],
            });
        }
        self.doom_send_to(s.ctx, s.dest, s.status.source)
    }

    /// Whether a message on `ctx` can never be received here.
    fn hopeless(&self, ctx: u32) -> bool {
        hopeless(&self.ft, &self.failed, ctx)
    }

    /// Drops queued messages that can never be received, refusing RTSs.
    pub(super) fn refuse_hopeless(&mut self) {
        let mut keep = std::collections::VecDeque::with_capacity(self.m.unexpected.len());
        let mut refused = Vec::new();
        for u in std::mem::take(&mut self.m.unexpected) {
            if self.hopeless(u.ctx) {
                if let Body::Rts { cookie, .. } = u.body {
                    refused.push((u.slot, cookie));
                }
            } else {
                keep.push_back(u);
            }
        }
        self.m.unexpected = keep;
        for (slot, cookie) in refused {
            refuse(&mut self.outbox, slot, cookie);
        }
    }

    /// The error a send on `ctx` to `dest` (rank `rank`) must end with.
    #[inline]
    pub(super) fn doom_send_to(&self, ctx: u32, dest: usize, rank: Rank) -> Option<Error> {
        if !self.trouble {
            return None;
        }
        if let Some(e) = self.doom_comm(ctx, None) {
            return Some(e);
        }
        self.gone[dest].then(|| Error::ProcFailed { ranks: vec![rank] })
    }

    /// Fails every request that can no longer complete.
    pub(super) fn fail_doomed(&mut self) {
        let mut doomed: Vec<(ReqKey, Error)> = Vec::new();
        for (i, s) in self.m.reqs.iter().enumerate() {
            let key = ReqKey {
                idx: i as u32,
                gen: s.gen,
            };
            let e = match &s.st {
                ReqState::Recv(r) => self.doom_recv(r),
                ReqState::Send(sr) => self.doom_send(sr),
                _ => None,
            };
            if let Some(e) = e {
                doomed.push((key, e));
            }
        }
        for (key, e) in doomed {
            self.m.posted.retain(|&k| k != key);
            self.m.streams.retain(|&k| k != key);
            self.m.complete(key, Err(e));
        }
    }

    // ---- agreement records ----------------------------------------------

    /// Publishes this process's contribution to agreement `seq` on `ctx`,
    /// made by a recovery call of kind `kind`, in `entry`, then wakes the
    /// other members.
    pub fn contribute(
        &self,
        entry: u16,
        ctx: u32,
        seq: u32,
        kind: u8,
        words: [u32; 4],
        members: &[Member],
    ) {
        let rec = &self.seg.ft_block(self.me).entries[entry as usize].rec[(seq & 1) as usize];
        for (w, v) in rec.words.iter().zip(words) {
            w.store(v, Relaxed);
        }
        rec.stamp.store(record_stamp(ctx, seq, kind), Release);
        for m in members {
            if m.slot as usize != self.me {
                poke(&self.seg, m.slot as usize);
            }
        }
    }

    /// What `m` did in agreement `seq` on `ctx`: `Some(..)` once it is
    /// final (it contributed, with the kind of call it made, or it ended
    /// without contributing), `None` while it may still contribute.
    pub fn contribution(&self, m: Member, ctx: u32, seq: u32) -> Option<Record> {
        // Read the state first: once a process has ended, its record no
        // longer changes, so a miss after that is final.
        let st = self.seg.proc_block(m.slot as usize).state.load(Acquire);
        let rec =
            &self.seg.ft_block(m.slot as usize).entries[m.entry as usize].rec[(seq & 1) as usize];
        let got = rec.stamp.load(Acquire);
        if got & !KIND_BITS == record_stamp(ctx, seq, 0) {
            let words = [0, 1, 2, 3].map(|i| rec.words[i].load(Relaxed));
            let kind = ((got & KIND_BITS) >> KIND_SHIFT) as u8;
            return Some(Record::Contributed { kind, words });
        }
        match st {
            slot::FAILED => Some(Record::Failed),
            slot::FINALIZED => Some(Record::Finalized),
            _ => None,
        }
    }
}

pub(crate) use crate::backend::Record;

/// Agreement sequence numbers use the low 24 bits of a record's stamp;
/// the kind of recovery call takes the 8 bits above them.
pub(crate) const SEQ_MASK: u32 = (1 << 24) - 1;
const KIND_SHIFT: u32 = 24;
const KIND_BITS: u64 = 0xff << KIND_SHIFT;

/// The stamp of a record: the context id, the call's kind and the
/// sequence number.
fn record_stamp(ctx: u32, seq: u32, kind: u8) -> u64 {
    stamp(ctx, (seq & SEQ_MASK) | (u32::from(kind) << KIND_SHIFT))
}

/// The sequence number after `seq`: nonzero (a zero stamp is an unwritten
/// record) and of the other parity (records alternate by parity).
pub(crate) fn next_seq(seq: u32) -> u32 {
    match (seq.wrapping_add(1)) & SEQ_MASK {
        0 => 2,
        s => s,
    }
}

impl Engine {
    /// The launcher's answer in `slot`'s publication, if it carries
    /// `stamp`: the slots it started, or its error status.
    pub fn publication(
        &self,
        slot: usize,
        stamp: u64,
    ) -> Option<std::result::Result<Vec<u32>, u32>> {
        let p = &self.seg.ft_block(slot).publication;
        if p.stamp.load(Acquire) != stamp {
            return None;
        }
        let status = p.status.load(Relaxed);
        if status != 0 {
            return Some(Err(status));
        }
        let n = (p.count.load(Relaxed) as usize).min(PUBLISH_MAX);
        Some(Ok((0..n).map(|i| p.slots[i].load(Relaxed)).collect()))
    }

    /// Whether the process in `slot` has ended, as the segment says now.
    pub fn slot_ended(&self, slot: usize) -> bool {
        ended(&self.seg, slot)
    }

    /// Gives back the robust futex word that reports this process's death.
    pub fn release_death_notice(&self) {
        pertinax_os::robust::release(&self.seg.proc_block(self.me).alive);
    }

    /// Bumps this process's heartbeat counter.
    #[inline]
    pub fn beat(&self) {
        self.seg.proc_block(self.me).beat.fetch_add(1, Relaxed);
    }
}

/// Whether a message on `ctx` can never be received: its communicator was
/// revoked, or it is collective traffic on a communicator with a failed
/// member.
fn hopeless(ft: &HashMap<u32, CtxFt>, failed: &[bool], ctx: u32) -> bool {
    let Some(c) = ft.get(&base_ctx(ctx)) else {
        return false;
    };
    (revocable(ctx) && c.revoked)
        || (collective(ctx) && c.members.iter().any(|m| failed[m.slot as usize]))
}

/// The cookie of an arriving RTS that can never be matched (its sender
/// must be refused), if it is one.
pub(super) fn rts_refusal(
    ft: &HashMap<u32, CtxFt>,
    failed: &[bool],
    meta: &Meta,
    payload: &[u8],
) -> Option<u64> {
    if Kind::from_u8(meta.kind) != Some(Kind::Rts) || !hopeless(ft, failed, meta.ctx) {
        return None;
    }
    bytemuck::try_pod_read_unaligned::<Rts>(payload)
        .ok()
        .map(|r| r.cookie)
}

/// Tells the sender of RTS `cookie` that its buffer will never be read.
pub(super) fn refuse(out: &mut Outbox, to: usize, cookie: u64) {
    let mut m = super::control(Kind::Fin, cookie);
    m.flags = 1;
    out.send(to, &m, &[]);
}

pub(crate) fn stamp(ctx: u32, seq: u32) -> u64 {
    ((ctx as u64) << 32) | seq as u64
}
