//! Communicators: a group of processes plus a private context for their
//! messages.
//!
//! Every communicator owns two context ids, an even one for point-to-point
//! traffic and the odd one above it for collective traffic, so a program's
//! messages can never match a collective's. New ids are agreed on by the
//! members when a communicator is made: each proposes the lowest id it has
//! never used and all take the largest proposal. Ids are therefore unique
//! within every process, which is all matching needs (a message only ever
//! meets the contexts of the process receiving it).

use std::cell::Cell;
use std::rc::Rc;

use crate::engine::Peers;
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
}

impl Comm {
    pub(crate) fn from_parts(rt: Rc<Runtime>, ctx: u32, rank: u32, peers: Peers) -> Comm {
        rt.use_ctx(ctx);
        Comm {
            inner: Rc::new(CommInner {
                rt,
                ctx,
                rank,
                peers,
                freed: Cell::new(false),
                coll_seq: Cell::new(0),
            }),
        }
    }

    /// This process's rank.
    pub fn rank(&self) -> Rank {
        Rank(self.inner.rank as i32)
    }

    /// Number of ranks.
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

    /// The point-to-point context id (for diagnostics).
    pub fn context_id(&self) -> u32 {
        self.inner.ctx
    }

    /// Fails if the communicator or the runtime can no longer be used.
    pub(crate) fn live(&self) -> Result<()> {
        if self.inner.freed.get() {
            return Err(Error::CommFreed);
        }
        self.inner.rt.check()
    }

    pub(crate) fn check_rank(&self, r: Rank) -> Result<u32> {
        if r.0 < 0 || r.index() >= self.size() {
            return Err(Error::InvalidRank {
                rank: r,
                size: self.size(),
            });
        }
        Ok(r.0 as u32)
    }

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
        Ok(())
    }

    /// Whether [`Comm::free`] was called.
    pub fn is_freed(&self) -> bool {
        self.inner.freed.get()
    }

    /// Agrees on a fresh context id with every member (collective).
    fn agree_ctx(&self) -> Result<u32> {
        let mine = self.inner.rt.next_ctx();
        let all = self.allgather_internal(&mine.to_le_bytes())?;
        let ctx = all
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .max()
            .unwrap_or(mine);
        self.inner.rt.use_ctx(ctx);
        Ok(ctx)
    }

    /// A new communicator with the same group and a new context
    /// (collective over this communicator).
    ///
    /// # Errors
    /// `CommFreed`, `Finalized`, or a communication error.
    pub fn dup(&self) -> Result<Comm> {
        self.live()?;
        let ctx = self.agree_ctx()?;
        Ok(Comm::from_parts(
            self.inner.rt.clone(),
            ctx,
            self.inner.rank,
            self.inner.peers.clone(),
        ))
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
        self.live()?;
        let c = match color {
            Some(c) if c > i32::MAX as u32 => {
                return Err(Error::InvalidArgument(format!(
                    "color {c} is above i32::MAX"
                )));
            }
            Some(c) => c as i32,
            None => -1,
        };
        let mine = self.inner.rt.next_ctx();
        let mut rec = Vec::with_capacity(12);
        rec.extend_from_slice(&c.to_le_bytes());
        rec.extend_from_slice(&key.to_le_bytes());
        rec.extend_from_slice(&mine.to_le_bytes());
        let all = self.allgather_internal(&rec)?;
        let rows: Vec<(i32, i32, u32)> = all
            .chunks_exact(12)
            .map(|r| {
                let w = |i: usize| [r[i], r[i + 1], r[i + 2], r[i + 3]];
                (
                    i32::from_le_bytes(w(0)),
                    i32::from_le_bytes(w(4)),
                    u32::from_le_bytes(w(8)),
                )
            })
            .collect();
        let ctx = rows.iter().map(|r| r.2).max().unwrap_or(mine);
        self.inner.rt.use_ctx(ctx);
        if c < 0 {
            return Ok(None);
        }
        let mut members: Vec<(i32, usize)> = rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r.0 == c)
            .map(|(rank, r)| (r.1, rank))
            .collect();
        members.sort_unstable();
        let peers: Peers = members.iter().map(|&(_, r)| self.inner.peers[r]).collect();
        let my = members
            .iter()
            .position(|&(_, r)| r == self.inner.rank as usize)
            .unwrap_or(0);
        Ok(Some(Comm::from_parts(
            self.inner.rt.clone(),
            ctx,
            my as u32,
            peers,
        )))
    }

    /// A communicator of the processes in `group`, a subset of this
    /// communicator's (collective over this communicator; every member
    /// passes the same group). Processes outside the group get `None`.
    ///
    /// # Errors
    /// `InvalidArgument` if the group holds a process outside this
    /// communicator; `CommFreed`, `Finalized`, or a communication error.
    pub fn create(&self, group: &Group) -> Result<Option<Comm>> {
        self.live()?;
        if group
            .members()
            .iter()
            .any(|m| !self.inner.peers.contains(m))
        {
            return Err(Error::InvalidArgument(
                "the group holds a process that is not in the communicator".into(),
            ));
        }
        let ctx = self.agree_ctx()?;
        let me = self.inner.peers[self.inner.rank as usize];
        Ok(group.members().iter().position(|&m| m == me).map(|r| {
            Comm::from_parts(
                self.inner.rt.clone(),
                ctx,
                r as u32,
                group.members().clone(),
            )
        }))
    }

    /// The process slot of rank `r` (checked by the caller).
    pub(crate) fn slot_of(&self, r: u32) -> usize {
        self.inner.peers[r as usize] as usize
    }
}
