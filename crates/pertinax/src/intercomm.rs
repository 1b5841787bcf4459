//! Intercommunicators from two disjoint groups: [`Comm::intercomm_create`]
//! (`MPI_Intercomm_create`), with the same outcome at every survivor of
//! both groups whoever fails during the call.
//!
//! # Protocol
//!
//! Each group calls the operation on its own intracommunicator and names
//! a *leader*; the two leaders share a third communicator, the *peer*.
//! Messages inside a group travel on the group communicator's recovery
//! context (`ctx + 2`, never revoked) with tags above [`crate::TAG_UB`];
//! the leaders talk on the peer's recovery context with the caller's tag.
//! So no user message can match them, and a revocation cannot cut them.
//!
//! 1. The leaders exchange their groups (process slots) and any error
//!    they already know of (their own arguments, a revoked group). Both
//!    see the same two groups, so both find an overlap.
//! 2. Each leader tells its members to go on or to stop (point to point,
//!    before any step that needs every member: a process that is in both
//!    groups and blocked in the other group's call cannot stall this one).
//! 3. Each member reserves a fault-tolerance entry and proposes a context
//!    id (the lowest it never used) to its leader.
//! 4. The leaders exchange the entries, the largest proposal and the
//!    status of their group. Both compute the same verdict from the same
//!    two messages; the context id is the largest proposal of both groups.
//! 5. Each leader sends the remote group and the entries to every member,
//!    waits until all of it is in the members' rings, and only then
//!    *commits*.
//! 6. *Commit*: every member that received the whole description builds
//!    the intercommunicator, writes a commit record (stamped with the new
//!    context id and sequence number 0, in the entry it reserved) and
//!    reads the commit records of every member of both groups. The result
//!    is `Ok` when all of them committed; it is `ProcFailed` as soon as one
//!    member is seen to have ended without committing.
//!
//! # Why the outcome is uniform
//!
//! A commit record is written once and stays readable after its writer
//! dies (the segment outlives every process). A member that ended without
//! committing never will. So every reader that decides sees the same
//! thing: all committed (`Ok` everywhere), or some member ended without
//! committing (`ProcFailed` everywhere). Readers never wait forever:
//!
//! - a member reads only once its leader said yes, and a leader says yes
//!   only when both leaders' verdicts are yes (the verdicts come from the
//!   same two messages); so each leader commits or dies, and while a
//!   leader is alive its messages reach its members;
//! - a leader commits only after its messages are in its members' rings,
//!   which survive its death, so after its commit every live member of its
//!   group receives the description and commits too;
//! - a member that returns an error without committing (its leader died
//!   before sending to it) is alive and silent, but then its leader ended
//!   without committing, and every reader sees that.
//!
//! A record is never overwritten while someone may still need it: every
//! committer has installed the new context in its entry, so an entry given
//! back after a `ProcFailed` is not reused until every member let go of the
//! context, and the new communicator's first agreement (such as
//! [`Comm::merge`]) uses the other record.
//!
//! # Fault points
//!
//! `comm.intercomm.enter` (every member, after the local argument checks),
//! `comm.intercomm.exchanged` (a leader, after the second exchange, before
//! its group has learned anything of the other side),
//! `comm.intercomm.distributing` (a leader with at least two other
//! members, after sending the description to half of them),
//! `comm.intercomm.received` (a member other than the leader, once it has
//! the description, before committing) and `comm.intercomm.committed`
//! (every member, after committing, before reading the other records).

use pertinax_os::lend;

use crate::backend::{Backend, MatchSpec, Record, SendBuf};
use crate::comm::Comm;
use crate::error::{Error, RecoveryCall, Result};
use crate::types::{Rank, Tag, TAG_UB};
use crate::wait::Backoff;

/// First word of every message between the leaders.
const MAGIC: u32 = 0x1C0C_4EA7;
/// The leaders' two exchanges.
const GROUPS: u32 = 1;
const ENTRIES: u32 = 2;
/// Messages from a leader to its members and back.
const GO: u32 = 1;
const PROPOSAL: u32 = 2;
const DESCRIPTION: u32 = 3;

/// Tag of step `step` of the `seq`-th creation on a group communicator:
/// above `TAG_UB`, so no user message can have it.
fn internal_tag(seq: u32, step: u32) -> i32 {
    ((TAG_UB as u32 + 1) | ((seq & 0x3_FFFF) << 12) | (step & 0xFFF)) as i32
}

/// What a leader knows of the creation so far (the first error wins).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    Ok,
    /// A process failed (its slot).
    Failed(u32),
    /// A group communicator was revoked.
    Revoked,
    /// The groups share a process.
    Overlap,
    /// A member holds too many communicators.
    NoEntry,
    /// A leader got a message it does not understand.
    Protocol,
    /// The local leader rejected its own `peer`, `remote_leader` or `tag`.
    LeaderArgs,
}

impl Verdict {
    fn words(self) -> [u32; 2] {
        match self {
            Verdict::Ok => [0, 0],
            Verdict::Failed(slot) => [1, slot],
            Verdict::Revoked => [2, 0],
            Verdict::Overlap => [3, 0],
            Verdict::NoEntry => [4, 0],
            Verdict::Protocol => [5, 0],
            Verdict::LeaderArgs => [6, 0],
        }
    }

    fn parse(w: &[u32]) -> Verdict {
        match (w.first(), w.get(1)) {
            (Some(0), Some(_)) => Verdict::Ok,
            (Some(1), Some(&slot)) => Verdict::Failed(slot),
            (Some(2), Some(_)) => Verdict::Revoked,
            (Some(3), Some(_)) => Verdict::Overlap,
            (Some(4), Some(_)) => Verdict::NoEntry,
            (Some(6), Some(_)) => Verdict::LeaderArgs,
            _ => Verdict::Protocol,
        }
    }

    fn and(self, other: Verdict) -> Verdict {
        if self == Verdict::Ok {
            other
        } else {
            self
        }
    }

    fn is_ok(self) -> bool {
        self == Verdict::Ok
    }

    /// The error this verdict means to a member whose group is `local`
    /// (slots in rank order), knowing the remote group as `remote` (empty
    /// if unknown). Failed processes are named by position in the local
    /// group, then the remote group.
    fn error(self, local: &[u32], remote: &[u32]) -> Error {
        match self {
            Verdict::Ok | Verdict::Protocol => Error::InvalidArgument(
                "intercomm_create: the leaders' messages do not match (are both groups in the same call, with the same tag?)"
                    .into(),
            ),
            Verdict::Failed(slot) => {
                let pos = local.iter().position(|&s| s == slot).or_else(|| {
                    remote
                        .iter()
                        .position(|&s| s == slot)
                        .map(|p| local.len() + p)
                });
                Error::ProcFailed {
                    ranks: pos.map(|p| Rank(p as i32)).into_iter().collect(),
                }
            }
            Verdict::Revoked => Error::Revoked,
            Verdict::Overlap => Error::InvalidArgument(
                "intercomm_create: the two groups overlap (a process is in both)".into(),
            ),
            Verdict::LeaderArgs => Error::InvalidArgument(
                "intercomm_create: the local leader rejected its peer, remote_leader or tag".into(),
            ),
            Verdict::NoEntry => Error::InvalidArgument(
                "intercomm_create: a member holds too many communicators (free some)".into(),
            ),
        }
    }
}

/// What every member learns before it commits.
#[derive(Debug)]
struct Description {
    ctx: u32,
    local_entries: Vec<u16>,
    remote_slots: Vec<u32>,
    remote_entries: Vec<u16>,
}

impl Description {
    /// `[ctx, n, local entries.., m, remote slots.., remote entries..]`.
    fn words(&self) -> Vec<u32> {
        let mut w = vec![self.ctx, self.local_entries.len() as u32];
        w.extend(self.local_entries.iter().map(|&e| u32::from(e)));
        w.push(self.remote_slots.len() as u32);
        w.extend_from_slice(&self.remote_slots);
        w.extend(self.remote_entries.iter().map(|&e| u32::from(e)));
        w
    }

    /// Checks a description against a group of `n` members.
    fn parse(b: &impl Backend, w: &[u32], n: usize) -> Option<Description> {
        let (&ctx, rest) = w.split_first()?;
        let (&nl, rest) = rest.split_first()?;
        if nl as usize != n || rest.len() < n + 1 {
            return None;
        }
        let (local, rest) = rest.split_at(n);
        let (&m, rest) = rest.split_first()?;
        let m = m as usize;
        if m == 0 || rest.len() != 2 * m || ctx % 4 != 0 {
            return None;
        }
        let (slots, remote) = rest.split_at(m);
        Some(Description {
            ctx,
            local_entries: entry_numbers(b, local)?,
            remote_slots: slots.to_vec(),
            remote_entries: entry_numbers(b, remote)?,
        })
    }
}

/// Tokens from words, if they are all valid.
fn entry_numbers(b: &impl Backend, w: &[u32]) -> Option<Vec<u16>> {
    w.iter().map(|&e| b.token_from(e)).collect()
}

/// A message between the leaders: `[MAGIC, step, verdict (2), body..]`.
fn leader_message(step: u32, v: Verdict, body: impl IntoIterator<Item = u32>) -> Vec<u32> {
    let mut w = vec![MAGIC, step];
    w.extend(v.words());
    w.extend(body);
    w
}

/// The verdict and body of a leader's message of step `step`.
fn open_leader_message(w: &[u32], step: u32) -> (Verdict, &[u32]) {
    match w {
        [MAGIC, s, v0, v1, body @ ..] if *s == step => (Verdict::parse(&[*v0, *v1]), body),
        _ => (Verdict::Protocol, &[]),
    }
}

/// Entry numbers as words.
fn words_of(entries: &[u16]) -> impl Iterator<Item = u32> + '_ {
    entries.iter().map(|&e| u32::from(e))
}

impl Comm {
    /// Makes an intercommunicator between this group and another, disjoint
    /// one (`MPI_Intercomm_create`; collective over this intracommunicator
    /// in both groups). Each group names a leader, `local_leader` (the same
    /// at every member); `peer` and `remote_leader` matter only at the
    /// leader: `peer` is any communicator that holds both leaders (an
    /// intracommunicator, or an intercommunicator whose remote group holds
    /// the other leader), `remote_leader` the other leader's rank in it
    /// (in its remote group for an intercommunicator), and `tag` tags the
    /// leaders' exchange on `peer` (both leaders pass the same tag; user
    /// messages on `peer` never match it).
    ///
    /// The result's group is this communicator's group in the same rank
    /// order; its remote group is the other group in that group's rank
    /// order. Point-to-point ranks name the remote group;
    /// [`Comm::merge`], [`Comm::agree`], [`Comm::revoke`] and
    /// [`get_failed`](crate::Communicator::get_failed) work on it as on the intercommunicator of
    /// [`Comm::spawn`].
    ///
    /// # Failures
    ///
    /// The outcome is uniform: whoever dies during the call (a member, a
    /// leader, at any point, including a leader that dies after the
    /// leaders' exchange and before its group heard of the other side),
    /// either every surviving member of both groups returns `Ok` with the
    /// same intercommunicator, or every one returns an error, and nobody
    /// waits for a dead process. The last step is a commit through the
    /// shared segment (see the `intercomm` module's source): `Ok` means
    /// that every member of both groups committed, even if some died right
    /// after (later operations on the result report them, and a
    /// [`Comm::merge`] right after fails with `ProcFailed` at every
    /// survivor). A member dead before committing makes the call fail at
    /// every survivor. The error kind is the same fault kind on both sides
    /// when a process failed (`ProcFailed`), but which ranks it names can
    /// differ: members name the failed processes they know of, by their
    /// position in the local group and then the remote group (the
    /// convention of [`crate::Agreement`]); the list can be empty when the
    /// failed process belongs to the other group and this member never
    /// learned it.
    ///
    /// A revocation of this communicator that the local leader has seen
    /// when it starts fails the call with `Revoked` at every member of
    /// both groups; a later one does not stop the creation.
    ///
    /// # Errors
    ///
    /// At every member of both groups: `InvalidArgument` when the groups
    /// overlap (a process in both; a process that is in both groups and
    /// calls the operation in turn on each of them gets the error from
    /// each call) or a member holds too many communicators; `ProcFailed`
    /// or `Revoked` as above. Local argument errors: `InvalidArgument` on
    /// an intercommunicator; `InvalidRank` for `local_leader` (at every
    /// member, which all pass the same); at the leader, `InvalidRank` for
    /// `remote_leader`, `InvalidTag`, or `CommFreed` for `peer`, which its
    /// members also get as `InvalidArgument`. As in MPI, the other group
    /// cannot be told of those leader-only errors (its leader waits for a
    /// message that never comes), nor of members that disagree on
    /// `local_leader`: those programs are erroneous. `CommFreed`,
    /// `Finalized`.
    ///
    /// # Example
    ///
    /// A job of one process cannot have two disjoint groups, so this
    /// example only shows the call and the overlap check: the single
    /// process is its own remote leader, hence in both groups. A real
    /// program splits its world into two halves, and each half calls
    /// `half.intercomm_create(Rank(0), &world, Rank(other_leader), tag)`,
    /// where `other_leader` is the world rank of the other half's rank 0.
    ///
    /// ```
    /// use pertinax::{Error, Rank, Tag};
    /// let u = pertinax::init()?;
    /// let r = u.self_comm().intercomm_create(Rank(0), &u.world(), Rank(0), Tag(7));
    /// assert!(matches!(r, Err(Error::InvalidArgument(_))));
    /// # Ok::<(), pertinax::Error>(())
    /// ```
    pub fn intercomm_create(
        &self,
        local_leader: Rank,
        peer: &Comm,
        remote_leader: Rank,
        tag: Tag,
    ) -> Result<Comm> {
        self.live_ft()?;
        if self.is_inter() {
            return Err(Error::InvalidArgument(
                "intercomm_create needs an intracommunicator for the local group".into(),
            ));
        }
        let leader = self.check_rank(local_leader)?;
        let seq = self.inner.coll_seq.get();
        self.inner.coll_seq.set(seq.wrapping_add(1));
        crate::fault_point("comm.intercomm.enter");
        if leader == self.inner.rank {
            self.lead(peer, remote_leader, tag, seq)
        } else {
            self.follow(leader, seq)
        }
    }

    /// A member's part (not the leader's).
    fn follow(&self, leader: u32, seq: u32) -> Result<Comm> {
        let ictx = self.inner.ctx + 2;
        let go = self.recv_words(ictx, leader, internal_tag(seq, GO))?;
        let v = Verdict::parse(&go);
        if !v.is_ok() {
            return Err(v.error(&self.inner.peers, &[]));
        }
        let rt = self.inner.rt.clone();
        let entry = rt.b.reserve().ok();
        let code = if entry.is_some() { 0 } else { 1 };
        let fail = |err: Error| {
            if let Some(e) = entry {
                rt.b.unreserve(e);
            }
            Err(err)
        };
        let mine = [code, rt.next_ctx(), entry.map_or(0, u32::from)];
        let tag = internal_tag(seq, PROPOSAL);
        if let Err(err) = self.raw_send(ictx, bytemuck::cast_slice(&mine), leader, tag) {
            return fail(err);
        }
        let w = match self.recv_words(ictx, leader, internal_tag(seq, DESCRIPTION)) {
            Ok(w) => w,
            Err(err) => return fail(err),
        };
        let v = Verdict::parse(&w);
        if !v.is_ok() {
            return fail(v.error(&self.inner.peers, &[]));
        }
        let me = self.inner.rank as usize;
        let d = match Description::parse(&self.inner.rt.b, &w[2..], self.size()) {
            Some(d) if entry == Some(d.local_entries[me]) => d,
            _ => return fail(Verdict::Protocol.error(&[], &[])),
        };
        crate::fault_point("comm.intercomm.received");
        self.commit(d)
    }

    /// The leader's part.
    fn lead(&self, peer: &Comm, remote_leader: Rank, tag: Tag, seq: u32) -> Result<Comm> {
        let ictx = self.inner.ctx + 2;
        let me = self.inner.rank;
        let n = self.size();
        let others: Vec<u32> = (0..n as u32).filter(|&r| r != me).collect();
        let tell = |step: u32, words: &[u32]| {
            for &r in &others {
                // A member that died is reported by the commit.
                let _ = self.raw_send(
                    ictx,
                    bytemuck::cast_slice(words),
                    r,
                    internal_tag(seq, step),
                );
            }
        };
        let checked = peer.live_ft().and_then(|()| {
            let rl = peer.check_rank(remote_leader)?;
            Ok((rl, Comm::check_tag(tag)?))
        });
        let (rl, tag) = match checked {
            Ok(x) => x,
            Err(err) => {
                // The members must not wait; the other group cannot be told.
                tell(GO, &Verdict::LeaderArgs.words());
                return Err(err);
            }
        };
        let pctx = peer.inner.ctx + 2;
        let remote_leader_slot = peer.slot_of(rl) as u32;
        let local: &[u32] = &self.inner.peers;
        let mut v = if self.is_revoked() {
            Verdict::Revoked
        } else {
            Verdict::Ok
        };

        // 1. Groups.
        let mine = leader_message(
            GROUPS,
            v,
            std::iter::once(n as u32).chain(local.iter().copied()),
        );
        let theirs = match peer.exchange_words(pctx, rl, tag, &mine) {
            Ok(w) => w,
            Err(_) => {
                // The other leader died: its group stops without us.
                let v = Verdict::Failed(remote_leader_slot);
                tell(GO, &v.words());
                return Err(v.error(local, &[]));
            }
        };
        let (rv, body) = open_leader_message(&theirs, GROUPS);
        let remote: Vec<u32> = match body.split_first() {
            Some((&m, slots)) if m as usize == slots.len() && m > 0 => slots.to_vec(),
            _ => Vec::new(),
        };
        v = v.and(rv);
        if remote.is_empty() {
            v = v.and(Verdict::Protocol);
        }
        if remote.iter().any(|s| local.contains(s)) {
            v = v.and(Verdict::Overlap);
        }
        tell(GO, &v.words());
        let went = v.is_ok();

        // 3. Proposals of the members, when going on.
        let rt = self.inner.rt.clone();
        let mut entry = None;
        let mut entries = vec![0u16; n];
        let mut top = rt.next_ctx();
        if v.is_ok() {
            match rt.b.reserve() {
                Ok(e) => entry = Some(e),
                Err(_) => v = v.and(Verdict::NoEntry),
            }
            entries[me as usize] = entry.unwrap_or(0);
            for &r in &others {
                match self.recv_words(ictx, r, internal_tag(seq, PROPOSAL)) {
                    Ok(w) if w.len() == 3 && rt.b.token_from(w[2]).is_some() => {
                        if w[0] != 0 {
                            v = v.and(Verdict::NoEntry);
                        }
                        top = top.max(w[1]);
                        entries[r as usize] = w[2] as u16;
                    }
                    Ok(_) => v = v.and(Verdict::Protocol),
                    Err(_) => v = v.and(Verdict::Failed(local[r as usize])),
                }
            }
        }

        // 4. Entries and verdicts. Both leaders get here unless one died,
        // so neither waits for a message the other will not send.
        let mine = leader_message(
            ENTRIES,
            v,
            [top, n as u32].into_iter().chain(words_of(&entries)),
        );
        let theirs = peer.exchange_words(pctx, rl, tag, &mine);
        let mut desc = None;
        match theirs {
            Err(_) => v = v.and(Verdict::Failed(remote_leader_slot)),
            Ok(w) => {
                let (rv, body) = open_leader_message(&w, ENTRIES);
                v = v.and(rv);
                match body {
                    [rtop, m, re @ ..]
                        if *m as usize == remote.len() && re.len() == remote.len() =>
                    {
                        match entry_numbers(&rt.b, re) {
                            Some(re) => {
                                desc = Some(Description {
                                    ctx: top.max(*rtop),
                                    local_entries: entries.clone(),
                                    remote_slots: remote.clone(),
                                    remote_entries: re,
                                })
                            }
                            None => v = v.and(Verdict::Protocol),
                        }
                    }
                    _ => v = v.and(Verdict::Protocol),
                }
            }
        }
        crate::fault_point("comm.intercomm.exchanged");
        let fail = |v: Verdict| {
            if let Some(e) = entry {
                rt.b.unreserve(e);
            }
            Err(v.error(local, &remote))
        };
        let d = match (v, desc) {
            (Verdict::Ok, Some(d)) if d.ctx % 4 == 0 => d,
            (v, _) => {
                let v = v.and(Verdict::Protocol);
                // Members told to stop at step 2 wait for nothing more.
                if went {
                    tell(DESCRIPTION, &v.words());
                }
                return fail(v);
            }
        };

        // 5. The description, then the commit once it is in every ring.
        let mut msg = Verdict::Ok.words().to_vec();
        msg.extend(d.words());
        for (i, &r) in others.iter().enumerate() {
            if others.len() >= 2 && i == others.len() / 2 {
                crate::fault_point("comm.intercomm.distributing");
            }
            // A member that died is reported by the commit.
            let _ = self.raw_send(
                ictx,
                bytemuck::cast_slice(&msg),
                r,
                internal_tag(seq, DESCRIPTION),
            );
        }
        rt.b.flush();
        self.commit(d)
    }

    /// Builds the intercommunicator, commits, and waits until every member
    /// of both groups has committed (`Ok`) or one is seen to have ended
    /// without committing (`ProcFailed`, the communicator is freed).
    fn commit(&self, d: Description) -> Result<Comm> {
        let rt = self.inner.rt.clone();
        let ctx = d.ctx;
        let comm = Comm::from_parts(
            rt.clone(),
            ctx,
            self.inner.rank,
            self.inner.peers.clone(),
            &d.local_entries,
            Some((d.remote_slots.into(), d.remote_entries)),
        );
        let cst = &comm.inner.st;
        rt.b.contribute(ctx, 0, RecoveryCall::IntercommCreate, [1, 0, 0, 0], cst);
        crate::fault_point("comm.intercomm.committed");
        let mut got = vec![None; comm.size() + comm.remote_size()];
        let mut dead: Vec<Rank> = Vec::new();
        rt.b.wait_until(|b| {
            let all = b.poll_agreement(ctx, 0, cst, &mut got);
            dead = got
                .iter()
                .enumerate()
                .filter(|(_, g)| matches!(g, Some(Record::Failed | Record::Finalized)))
                .map(|(i, _)| Rank(i as i32))
                .collect();
            !dead.is_empty() || all
        });
        if dead.is_empty() {
            Ok(comm)
        } else {
            let _ = comm.free();
            Err(Error::ProcFailed { ranks: dead })
        }
    }

    /// Receives a message of `u32` words of any length from `src` on
    /// context `ctx`.
    fn recv_words(&self, ctx: u32, src: u32, tag: i32) -> Result<Vec<u32>> {
        let spec = MatchSpec {
            ctx,
            src: Some(src),
            tag: Some(tag),
        };
        let st = self.probe_spec(spec)?;
        if st.len % 4 != 0 {
            let mut sink = vec![0u8; st.len];
            self.raw_recv(spec, &mut sink, 1)?;
            return Ok(Vec::new());
        }
        let mut w = vec![0u32; st.len / 4];
        self.raw_recv(spec, bytemuck::cast_slice_mut(&mut w), 4)?;
        Ok(w)
    }

    /// Sends `mine` to `dest` and receives its message, both on context
    /// `ctx` with `tag`, without deadlock when `dest` does the same.
    fn exchange_words(&self, ctx: u32, dest: u32, tag: i32, mine: &[u32]) -> Result<Vec<u32>> {
        let rt = &self.inner.rt;
        let slot = self.slot_of(dest);
        let mut b = Backoff::default();
        lend::scope(
            |s| {
                let k = rt.b.isend(
                    slot,
                    dest,
                    ctx,
                    self.inner.rank,
                    tag,
                    SendBuf::Lent(s.lend(bytemuck::cast_slice(mine))),
                )?;
                let got = self.recv_words(ctx, dest, tag);
                let sent = rt.b.wait(k);
                let got = got?;
                sent?;
                Ok(got)
            },
            || rt.drain_step(&mut b),
        )
    }
}
