//! Communicators: a group of processes plus a private context for their
//! messages.
//!
//! Every communicator owns two context ids, an even one for point-to-point
//! traffic and the odd one above it for collective traffic, so a program's
//! messages can never match a collective's. New ids are agreed on by the
//! members when a communicator is made: each proposes the lowest id it has
//! never used and all take the largest proposal. Ids are therefore unique
//! within every process, which is all matching needs (a message only ever
//! meets the contexts of the process receiving it). A communicator takes
//! four ids: point-to-point (`ctx`), collectives (`ctx + 1`), the internal
//! traffic of recovery, which a revocation does not cut (`ctx + 2`), and
//! one spare.
//!
//! Every member also reserves a backend token for a communicator being made
//! (native: its fault-tolerance entry in the shared segment); the members
//! learn each other's tokens when the communicator is made and hand them
//! to the backend (see `crate::backend`).

use std::cell::Cell;
use std::rc::Rc;

use crate::backend::{
    attach_derived, Active, Backend, Capabilities, Derived, OwnCommunicators, Peers, Token,
};
use crate::error::{Error, Result};
use crate::group::Group;
use crate::runtime::Runtime;
use crate::types::{Rank, Tag, TAG_UB};

/// A communicator. Cheap to clone; clones are the same communicator.
///
/// Communicators are tied to the thread that initialized the runtime (they
/// are neither `Send` nor `Sync`).
#[derive(Clone, Debug)]
pub struct Comm {
    pub(crate) inner: Rc<CommInner>,
}

#[derive(Debug)]
pub(crate) struct CommInner {
    pub rt: Rc<Runtime>,
    pub ctx: u32,
    pub rank: u32,
    pub peers: Peers,
    pub freed: Cell<bool>,
    /// Number of collectives started on this communicator (the same at
    /// every rank, since collectives are called in the same order).
    pub coll_seq: Cell<u32>,
    /// What the backend keeps for it (native: this process's
    /// fault-tolerance entry, every member's slot and entry).
    pub st: <Active as Backend>::CommState,
    /// The remote group of an intercommunicator.
    pub remote: Option<Peers>,
    /// Number of agreements (agree, shrink, ...) started on it.
    pub ft_seq: Cell<u32>,
    /// A non-blocking agreement on it has not completed yet.
    pub agree_pending: Cell<bool>,
    /// What the backend offers beyond the required set, read once.
    pub caps: Capabilities,
}

impl Drop for CommInner {
    fn drop(&mut self) {
        if !self.freed.get() {
            self.rt.b.release(self.ctx, &self.st);
        }
    }
}

impl Comm {
    /// A communicator of `peers` with context `ctx`, where this process is
    /// `rank`; `tokens[r]` is rank r's backend token, and `remote` the
    /// remote group of an intercommunicator with its tokens.
    pub(crate) fn from_parts(
        rt: Rc<Runtime>,
        ctx: u32,
        rank: u32,
        peers: Peers,
        tokens: &[Token],
        remote: Option<(Peers, Vec<Token>)>,
    ) -> Comm {
        let st = rt.b.attach(
            ctx,
            rank,
            &peers,
            tokens,
            remote.as_ref().map(|(p, t)| (p, &t[..])),
        );
        Comm::with_state(rt, ctx, rank, peers, st, remote.map(|(p, _)| p))
    }

    /// A communicator whose backend state is made already.
    pub(crate) fn with_state(
        rt: Rc<Runtime>,
        ctx: u32,
        rank: u32,
        peers: Peers,
        st: <Active as Backend>::CommState,
        remote: Option<Peers>,
    ) -> Comm {
        let caps = rt.b.capabilities();
        Comm {
            inner: Rc::new(CommInner {
                caps,
                rt,
                ctx,
                rank,
                peers,
                freed: Cell::new(false),
                coll_seq: Cell::new(0),
                st,
                remote,
                ft_seq: Cell::new(0),
                agree_pending: Cell::new(false),
            }),
        }
    }

    /// Whether this is an intercommunicator.
    pub fn is_inter(&self) -> bool {
        self.inner.remote.is_some()
    }

    /// Size of the remote group of an intercommunicator (0 for an
    /// intracommunicator).
    pub fn remote_size(&self) -> usize {
        self.inner.remote.as_ref().map_or(0, |r| r.len())
    }

    /// The remote group of an intercommunicator.
    pub fn remote_group(&self) -> Option<Group> {
        self.inner
            .remote
            .as_ref()
            .map(|r| Group::new(r.clone(), self.inner.peers[self.inner.rank as usize]))
    }

    /// The processes that point-to-point ranks name: the remote group of
    /// an intercommunicator, else the group.
    #[inline]
    pub(crate) fn targets(&self) -> &Peers {
        self.inner.remote.as_ref().unwrap_or(&self.inner.peers)
    }

    /// This process's rank.
    #[inline]
    pub fn rank(&self) -> Rank {
        Rank(self.inner.rank as i32)
    }

    /// Number of ranks.
    #[inline]
    pub fn size(&self) -> usize {
        self.inner.peers.len()
    }

    /// The group of this communicator's processes, in rank order.
    pub fn group(&self) -> Group {
        Group::new(
            self.inner.peers.clone(),
            self.inner.peers[self.inner.rank as usize],
        )
    }

    /// Fails if the communicator or the runtime can no longer be used, or
    /// the communicator was revoked.
    #[inline]
    pub(crate) fn live(&self) -> Result<()> {
        self.live_ft()?;
        if self.inner.rt.b.is_revoked(self.inner.ctx) {
            return Err(Error::Revoked);
        }
        Ok(())
    }

    /// [`Comm::live`] for a blocking send or receive: the revocation is
    /// left to the backend when its calls check it themselves.
    #[inline]
    pub(crate) fn live_p2p(&self) -> Result<()> {
        if self.inner.caps.calls_check_revocation {
            self.live_ft()
        } else {
            self.live()
        }
    }

    /// As [`Comm::live`] but a revoked communicator passes (for the
    /// operations of recovery).
    #[inline]
    pub(crate) fn live_ft(&self) -> Result<()> {
        if self.inner.freed.get() {
            return Err(Error::CommFreed);
        }
        self.inner.rt.check()
    }

    /// As [`Comm::live`], and the communicator must be an intracommunicator.
    pub(crate) fn coll_live(&self) -> Result<()> {
        if self.is_inter() {
            return Err(Error::InvalidArgument(
                "collective operations need an intracommunicator (merge the intercommunicator first)"
                    .into(),
            ));
        }
        // The backend's own collectives check the revocation themselves
        // when its calls do (MPI's: ULFM fails them with `Revoked`).
        if self.inner.caps.own_collectives && self.inner.caps.calls_check_revocation {
            return self.live_ft();
        }
        self.live()
    }

    /// Checks a rank that point-to-point operations name (in the remote
    /// group of an intercommunicator).
    #[inline]
    pub(crate) fn check_rank(&self, r: Rank) -> Result<u32> {
        let n = self.targets().len();
        if r.0 < 0 || r.index() >= n {
            return Err(Error::InvalidRank { rank: r, size: n });
        }
        Ok(r.0 as u32)
    }

    #[inline]
    pub(crate) fn check_tag(t: Tag) -> Result<i32> {
        if t.0 < 0 || t.0 > TAG_UB {
            return Err(Error::InvalidTag {
                tag: t,
                max: TAG_UB,
            });
        }
        Ok(t.0)
    }

    /// Frees the communicator: later calls on it or its clones fail with
    /// `CommFreed`. Local; messages already delivered are dropped with it.
    ///
    /// # Errors
    /// `CommFreed` if it was already freed.
    pub fn free(&self) -> Result<()> {
        if self.inner.freed.replace(true) {
            return Err(Error::CommFreed);
        }
        self.inner.rt.b.release(self.inner.ctx, &self.inner.st);
        Ok(())
    }

    /// Whether [`Comm::free`] was called.
    pub fn is_freed(&self) -> bool {
        self.inner.freed.get()
    }

    /// Agrees with every member on a fresh context id and learns their
    /// fault-tolerance entries for the new communicator (collective). The
    /// caller owns the token reserved here (`entries[rank]`).
    fn agree_ctx(&self) -> Result<(u32, Vec<u16>)> {
        let rows = self.exchange_new(&[])?;
        let ctx = rows.iter().map(|r| r.0).max().unwrap_or(0);
        self.inner.rt.use_ctx(ctx);
        Ok((ctx, rows.iter().map(|r| r.1).collect()))
    }

    /// Reserves a token, then allgathers (context proposal, token, extra
    /// words) with every member. On error the token is given back.
    pub(crate) fn exchange_new(&self, extra: &[i32]) -> Result<Vec<(u32, u16, Vec<i32>)>> {
        let entry = self.inner.rt.b.reserve()?;
        let mine = self.inner.rt.next_ctx();
        let mut rec = Vec::with_capacity(8 + 4 * extra.len());
        rec.extend_from_slice(&mine.to_le_bytes());
        rec.extend_from_slice(&(entry as u32).to_le_bytes());
        for x in extra {
            rec.extend_from_slice(&x.to_le_bytes());
        }
        let all = match self.allgather_internal(&rec) {
            Ok(a) => a,
            Err(e) => {
                self.inner.rt.b.unreserve(entry);
                return Err(e);
            }
        };
        let w = |r: &[u8], i: usize| {
            u32::from_le_bytes([r[4 * i], r[4 * i + 1], r[4 * i + 2], r[4 * i + 3]])
        };
        Ok(all
            .chunks_exact(rec.len())
            .map(|r| {
                (
                    w(r, 0),
                    w(r, 1) as u16,
                    (0..extra.len()).map(|i| w(r, 2 + i) as i32).collect(),
                )
            })
            .collect())
    }

    /// Gives back this process's token after a creation it is not part of.
    pub(crate) fn unreserve(&self, entries: &[u16]) {
        if let Some(&e) = entries.get(self.inner.rank as usize) {
            self.inner.rt.b.unreserve(e);
        }
    }

    /// A new communicator with the same group and a new context
    /// (collective over this communicator).
    ///
    /// # Errors
    /// `CommFreed`, `Finalized`, or a communication error.
    pub fn dup(&self) -> Result<Comm> {
        self.coll_live()?;
        let (ctx, entries) = self.agree_ctx()?;
        let peers = self.inner.peers.clone();
        Ok(self.derived(ctx, 0, self.inner.rank, peers, &entries))
    }

    /// This process's communicator `ctx` derived from this one (see
    /// [`OwnCommunicators::derive`](crate::backend::OwnCommunicators::derive); every member calls it or [`Comm::not_derived`]).
    pub(crate) fn derived(
        &self,
        ctx: u32,
        color: u32,
        rank: u32,
        peers: Peers,
        tokens: &[Token],
    ) -> Comm {
        let rt = &self.inner.rt;
        let mine = Derived {
            color,
            rank,
            peers: &peers,
            tokens,
        };
        let made = if self.inner.caps.own_communicators {
            OwnCommunicators::derive(&rt.b, &self.inner.st, ctx, Some(mine))
        } else {
            attach_derived(&rt.b, ctx, Some(mine))
        };
        match made {
            Some(st) => Comm::with_state(rt.clone(), ctx, rank, peers, st, None),
            // Not a backend's answer to `Some`; made as a plain attach.
            None => Comm::from_parts(rt.clone(), ctx, rank, peers, tokens, None),
        }
    }

    /// This process's part, as a member left out, of a derivation of
    /// communicator `ctx` from this one.
    fn not_derived(&self, ctx: u32) {
        if self.inner.caps.own_communicators {
            let _ = OwnCommunicators::derive(&self.inner.rt.b, &self.inner.st, ctx, None);
        }
    }

    /// Splits into one communicator per `color` (collective); ranks are
    /// ordered by `key`, then by rank here. `None` as color (MPI's
    /// `MPI_UNDEFINED`) takes part but gets no communicator.
    ///
    /// # Errors
    /// `InvalidArgument` for a color above `i32::MAX`; `CommFreed`,
    /// `Finalized`, or a communication error.
    ///
    /// # Example
    /// ```
    /// let u = pertinax::init()?;
    /// let world = u.world();
    /// let half = world.split(Some(world.rank().0 as u32 % 2), 0)?.expect("has a color");
    /// assert_eq!(half.size(), 1);
    /// # Ok::<(), pertinax::Error>(())
    /// ```
    pub fn split(&self, color: Option<u32>, key: i32) -> Result<Option<Comm>> {
        self.coll_live()?;
        let c = match color {
            Some(c) if c > i32::MAX as u32 => {
                return Err(Error::InvalidArgument(format!(
                    "color {c} is above i32::MAX"
                )));
            }
            Some(c) => c as i32,
            None => -1,
        };
        let rows = self.exchange_new(&[c, key])?;
        let ctx = rows.iter().map(|r| r.0).max().unwrap_or(0);
        self.inner.rt.use_ctx(ctx);
        if c < 0 {
            let entries: Vec<u16> = rows.iter().map(|r| r.1).collect();
            self.unreserve(&entries);
            self.not_derived(ctx);
            return Ok(None);
        }
        let mut members: Vec<(i32, usize)> = rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r.2[0] == c)
            .map(|(rank, r)| (r.2[1], rank))
            .collect();
        members.sort_unstable();
        let peers: Peers = members.iter().map(|&(_, r)| self.inner.peers[r]).collect();
        let entries: Vec<u16> = members.iter().map(|&(_, r)| rows[r].1).collect();
        let my = members
            .iter()
            .position(|&(_, r)| r == self.inner.rank as usize)
            .unwrap_or(0);
        Ok(Some(
            self.derived(ctx, c as u32, my as u32, peers, &entries),
        ))
    }

    /// A communicator of the processes in `group`, a subset of this
    /// communicator's (collective over this communicator; every member
    /// passes the same group). Processes outside the group get `None`.
    ///
    /// # Errors
    /// `InvalidArgument` if the group holds a process outside this
    /// communicator; `CommFreed`, `Finalized`, or a communication error.
    pub fn create(&self, group: &Group) -> Result<Option<Comm>> {
        self.coll_live()?;
        if group
            .members()
            .iter()
            .any(|m| !self.inner.peers.contains(m))
        {
            return Err(Error::InvalidArgument(
                "the group holds a process that is not in the communicator".into(),
            ));
        }
        let (ctx, entries) = self.agree_ctx()?;
        let me = self.inner.peers[self.inner.rank as usize];
        let Some(r) = group.members().iter().position(|&m| m == me) else {
            self.unreserve(&entries);
            self.not_derived(ctx);
            return Ok(None);
        };
        let sub: Vec<u16> = group
            .members()
            .iter()
            .map(|m| {
                let i = self.inner.peers.iter().position(|p| p == m).unwrap_or(0);
                entries[i]
            })
            .collect();
        Ok(Some(self.derived(
            ctx,
            0,
            r as u32,
            group.members().clone(),
            &sub,
        )))
    }

    /// The process slot of rank `r` (checked by the caller; in the remote
    /// group of an intercommunicator).
    #[inline]
    pub(crate) fn slot_of(&self, r: u32) -> usize {
        self.targets()[r as usize] as usize
    }
}
