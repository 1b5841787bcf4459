//! The MPI backend's fast paths: when nothing of the backend's own is
//! pending ([`Mpi::quiet`]: no receive waiting to be matched here, no
//! task), a blocking call goes straight to a blocking MPI call, as a C
//! program would, instead of a request in the slab and progress rounds.
//!
//! - A blocking receive naming its source ([`DirectP2p::recv_now`], which
//!   the core asks before anything else): one call into the shim,
//!   `MPI_Recv` into the caller's buffer ([`sys::recv`]), and a second
//!   `MPI_Recv` for the payload when the message was an envelope
//!   ([`sys::SMALL`]). A message too long for the buffer (or not whole
//!   elements) is consumed and fails the receive with `Truncated` /
//!   `LengthNotMultiple`, as MPI's `MPI_ERR_TRUNCATE` does: a first
//!   message is eager, which Open MPI truncates inside the buffer and
//!   reports whole (`pertinax-mpi-sys/checks/truncate_eager.c`); a payload
//!   too long is received into scratch, so Open MPI 5.0.x's single copy
//!   cannot write a rendezvous message past the buffer
//!   (`pertinax-mpi-sys/checks/truncate.c`).
//!   Ordering is MPI's: no receive of ours is waiting unmatched and no
//!   probed envelope waits for its payload, so none posted earlier could
//!   have claimed the message. Any-source receives
//!   always take the general path (ULFM's `MPIX_ERR_PROC_FAILED_PENDING`
//!   leaves those pending).
//! - A blocking send of at most [`FAST_SEND_MAX`] bytes
//!   ([`DirectP2p::send_now`], and the core's eager send): `MPI_Send`, which
//!   for a message this small copies it out and returns (every transport
//!   of Open MPI sends it eagerly), so the call still returns at once as
//!   [`crate::backend::Backend::eager_limit`] promises, without the copy into an
//!   owned buffer and the request that `MPI_Isend` needs.
//!
//! - Waiting for a send or a named-source receive that MPI already holds
//!   ([`Mpi::wait_fast`]): `MPI_Wait`, not a loop of `MPI_Test` and
//!   progress rounds with this backend's backoff.
//!
//! Why only when quiet: while a thread blocks inside MPI, MPI progresses
//! its own requests but not this backend's matching or tasks; a peer
//! waiting for one of those (a receive of ours it sends a rendezvous
//! message to, a collective schedule's step) would wait for us while we
//! wait for it.

use pertinax_mpi_sys::{self as sys, Kind};

use super::{error_of, received, Mpi, Slot};
use crate::backend::{DirectP2p, MatchSpec, Now, ReqKey};
use crate::error::{Error, Result};
use crate::types::{Rank, Status, Tag};

/// Largest blocking send handed to `MPI_Send` (well under the eager limit
/// of Open MPI's transports: 4 KiB for shared memory, 64 KiB for TCP,
/// less their headers).
pub(super) const FAST_SEND_MAX: usize = 1024;

impl Mpi {
    /// Whether no receive waits to be matched here, no task runs and no
    /// agreement is under way, so a blocking MPI call cannot hold up
    /// anything MPI does not progress. One load while nothing was added
    /// since the last time it was quiet ([`Mpi::stir`]).
    #[inline(always)]
    pub(super) fn quiet(&self) -> bool {
        !self.stirred.get() || self.settled()
    }

    /// [`Mpi::quiet`] after something was added: looks, and remembers a
    /// quiet answer until the next [`Mpi::stir`].
    #[cold]
    #[inline(never)]
    fn settled(&self) -> bool {
        let quiet = self.tasks.get() == 0
            && self.posted.try_borrow().is_ok_and(|p| p.is_empty())
            && self.taken.try_borrow().is_ok_and(|t| t.is_empty())
            && self
                .agreed
                .try_borrow()
                .is_ok_and(|a| a.iter().all(|(_, a)| !a.running()));
        if quiet {
            self.stirred.set(false);
        }
        quiet
    }

    /// Notes that a task, a posted receive, a taken envelope or an
    /// agreement was added: [`Mpi::quiet`] looks again. Called by every
    /// place that adds one (an agreement only ever leaves `Running`, a
    /// task or receive only ever ends, so nothing else makes a quiet
    /// backend busy).
    #[inline(always)]
    pub(super) fn stir(&self) {
        self.stirred.set(true);
    }

    /// A blocking receive into `buf` straight through MPI (`MPI_Recv`) if
    /// it names its source and nothing of this backend's own is pending
    /// (see the module documentation); `None` for the general path, with
    /// nothing done: [`DirectP2p::recv_now`] for a receive the core has
    /// already made a match specification of
    /// ([`crate::backend::Backend::recv_direct`]).
    #[inline(always)]
    pub(super) fn recv_now(
        &self,
        spec: &MatchSpec,
        buf: &mut [u8],
        elem: usize,
    ) -> Option<Result<Status>> {
        let mut st = Status {
            source: Rank(0),
            tag: Tag(0),
            len: 0,
        };
        match DirectP2p::recv_now(self, spec.ctx, spec.src?, spec.tag, buf, elem, &mut st) {
            Now::Done => Some(Ok(st)),
            Now::Failed(e) => Some(Err(*e)),
            Now::General => None,
        }
    }

    /// Waits for `k` inside MPI (`MPI_Wait`) if it is a send or a
    /// named-source receive MPI holds and nothing of ours is pending;
    /// `None` for the general loop.
    pub(super) fn wait_fast(&self, k: ReqKey) -> Option<Result<Status>> {
        if !self.quiet() {
            return None;
        }
        let mut slab = self.slab.borrow_mut();
        let e = slab.get_mut(k.idx as usize)?;
        if e.0 != k.gen {
            return None;
        }
        let result = match &mut e.1 {
            Slot::Send { op, dest_rank, .. } => {
                let (st, _) = op.wait()?;
                if st.error != 0 {
                    Err(error_of(sys::Code(st.error), None, Some(*dest_rank)))
                } else {
                    Ok(Status {
                        source: Rank(0),
                        tag: Tag(0),
                        len: 0,
                    })
                }
            }
            Slot::Recv {
                op,
                part,
                elem,
                ctx,
                src: Some(src),
                ..
            } => {
                let comm = self.comm(*ctx).map(|c| c.0);
                let (st, data) = op.wait()?;
                received(st, data, part.take(), *elem, comm, Some(*src))
            }
            _ => return None,
        };
        e.1 = Slot::Free;
        drop(slab);
        self.free.borrow_mut().push(k.idx);
        Some(result)
    }

    /// A small blocking send straight through `MPI_Send` if it can be;
    /// [`Now::General`] for the general path. `to_self`: the destination
    /// may be this process.
    #[inline(always)]
    pub(super) fn send_fast(
        &self,
        comm: sys::Comm,
        to_self: bool,
        dest_rank: u32,
        tag: i32,
        data: &[u8],
    ) -> Now {
        // Not to this process: Open MPI's `self` transport sends eagerly
        // only up to 1 KiB with its header, so `MPI_Send` to self could
        // wait for a receive this process has not posted.
        if data.len() > FAST_SEND_MAX || to_self || !self.quiet() {
            return Now::General;
        }
        match sys::send(data, dest_rank as i32, tag, comm) {
            Ok(()) => Now::Done,
            Err(c) => failed(error_of(c, Some(comm), Some(dest_rank))),
        }
    }
}

/// The user's blocking calls ([`crate::backend::Capabilities::direct_p2p`]):
/// the fast paths above, asked before the core builds a match
/// specification or a result of the general path, each one frame from the
/// user's call to the shim's.
impl DirectP2p for Mpi {
    #[inline(always)]
    fn send_now(&self, ctx: u32, dest_rank: u32, tag: i32, data: &[u8]) -> Now {
        let Some((comm, me)) = self.comm(ctx) else {
            return Now::General;
        };
        // `me == dest_rank`: perhaps to itself (on an intercommunicator a
        // remote rank, which the general path sends all the same).
        self.send_fast(comm, me == dest_rank, dest_rank, tag, data)
    }

    #[inline(always)]
    fn recv_now(
        &self,
        ctx: u32,
        src: u32,
        tag: Option<i32>,
        buf: &mut [u8],
        elem: usize,
        st: &mut Status,
    ) -> Now {
        if !self.quiet() {
            return Now::General;
        }
        let Some((comm, _)) = self.comm(ctx) else {
            return Now::General;
        };
        let capacity = buf.len();
        let tag = tag.unwrap_or_else(sys::any_tag);
        match sys::recv(buf, elem, src as i32, tag, comm) {
            Ok(s) if s.error == 0 => {
                *st = Status {
                    source: Rank(s.source),
                    tag: Tag(s.tag),
                    len: usize::try_from(s.bytes).unwrap_or(0),
                };
                Now::Done
            }
            r => match received_now(r, capacity, elem, comm, src) {
                Ok(s) => {
                    *st = s;
                    Now::Done
                }
                Err(e) => failed(e),
            },
        }
    }
}

/// [`Now::Failed`] of `e`, out of line.
#[cold]
#[inline(never)]
fn failed(e: Error) -> Now {
    Now::Failed(Box::new(e))
}

/// [`Mpi::recv_now`]'s outcome other than a whole message received: the
/// receive failed (`r` an error), or MPI consumed a message too long for
/// the buffer or not whole elements (`MPI_ERR_TRUNCATE` in the status).
#[cold]
#[inline(never)]
fn received_now(
    r: std::result::Result<sys::Status, sys::Code>,
    capacity: usize,
    elem: usize,
    comm: sys::Comm,
    src: u32,
) -> Result<Status> {
    let st = r.map_err(|c| error_of(c, Some(comm), Some(src)))?;
    let len = usize::try_from(st.bytes).unwrap_or(0);
    if st.error == 0 {
        return Ok(Status {
            source: Rank(st.source),
            tag: Tag(st.tag),
            len,
        });
    }
    Err(if sys::Code(st.error).kind() == Kind::Truncated {
        if len > capacity {
            Error::Truncated {
                sent: len,
                capacity,
            }
        } else {
            Error::LengthNotMultiple { len, elem }
        }
    } else {
        error_of(sys::Code(st.error), Some(comm), Some(src))
    })
}
