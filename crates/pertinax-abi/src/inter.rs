//! Intercommunicators: `MPI_Intercomm_create`, `MPI_Intercomm_merge`,
//! `MPI_Comm_remote_group` (`MPI_Comm_test_inter` and
//! `MPI_Comm_remote_size` are in `comm`), `MPI_Comm_dup` and
//! `MPI_Comm_split` of an intercommunicator, `MPI_Comm_split_type`, and
//! the shadow that their collectives (`intercoll.rs`) run on.
//!
//! Point-to-point on an intercommunicator is pertinax's own: ranks name
//! the remote group, a status's source is the sender's rank in its group.
//!
//! pertinax's collectives need an intracommunicator, so the first
//! collective on an intercommunicator (it is collective over both groups,
//! as its creation was) makes a *shadow*: the merge of both groups
//! (`Comm::merge`, which is deterministic: the group holding the lower
//! process comes first) and, split from it, an intracommunicator of the
//! local group. The shadow lives as long as the handle (`info::PerComm`);
//! the program never sees it, so its messages cannot meet the program's.
//! On it:
//!
//! - dup: `Comm::intercomm_create` again over the shadow (the same two
//!   groups, a new context). Attributes are not copied;
//! - split: an allgather of colors and keys on the merge, a split of the
//!   local group, then `Comm::intercomm_create` between the parts of the
//!   same color (their leaders talk over the merge); split_type: a split
//!   with one color (shared memory: one node) or none (`MPI_UNDEFINED`).
//!
//! `MPI_Comm_create`, `MPI_Comm_create_group` and `MPIX_Comm_shrink` of
//! an intercommunicator are `MPI_ERR_UNSUPPORTED_OPERATION`
//! ([`refuse`], from `p2p::call`). `MPI_Intercomm_create_from_groups` is
//! in `session.rs` (beside `MPI_Comm_create_from_group`).

use std::cell::RefCell;
use std::ffi::c_int;

use pertinax::{Comm, Communicator, Rank, Tag};

use crate::comm::{add_group, register};
use crate::consts::*;
use crate::errors::code_of;
use crate::info::{with_table, PerComm};
use crate::p2p::{call, comm_of};
use crate::put;
use crate::serial::Serial;

/// What the collectives of an intercommunicator run on.
#[derive(Debug, Clone)]
pub(crate) struct Shadow {
    /// Both groups, merged.
    pub(crate) merged: Comm,
    /// The local group, as an intracommunicator.
    local: Comm,
    /// Whether the local group comes first in `merged`.
    local_first: bool,
}

impl Shadow {
    /// The rank in `merged` of remote rank `r`.
    pub(crate) fn remote(&self, r: i32) -> Rank {
        let nl = self.local.size() as i32;
        if self.local_first {
            Rank(nl + r)
        } else {
            Rank(r)
        }
    }
}

static SHADOWS: Serial<RefCell<PerComm<Shadow>>> = Serial::new(RefCell::new(PerComm::new()));

/// Tags on the shadow's merge (private to this module).
const TAG_DUP: i32 = 3;
const TAG_SPLIT: i32 = 4;

fn err(e: &pertinax::Error) -> c_int {
    code_of(e)
}

/// The shadow of intercommunicator `comm` (made at the first call: a
/// collective over both groups).
pub(crate) fn shadow(comm: c_int, c: &Comm) -> Result<Shadow, c_int> {
    if let Some(s) = with_table(&SHADOWS, |t| t.get(comm).cloned())? {
        return Ok(s);
    }
    let merged = c.merge(false).map_err(|e| err(&e))?;
    // Merged first, the local group keeps its ranks.
    let local_first = merged.rank() == c.rank();
    let side = u32::from(!local_first);
    let local = merged
        .split(Some(side), merged.rank().0)
        .map_err(|e| err(&e))?
        .ok_or(MPI_ERR_INTERN)?;
    let s = Shadow {
        merged,
        local,
        local_first,
    };
    with_table(&SHADOWS, |t| t.set(comm, c, s.clone()))?;
    Ok(s)
}

/// The communicator of `comm` if it is an intercommunicator.
pub(crate) fn inter_of(comm: c_int) -> Option<Comm> {
    comm_of(comm).ok().filter(Comm::is_inter)
}

/// Names of the collectives (and creations) that are refused on an
/// intercommunicator: those MPI defines there and this module lacks.
const REFUSED: &[&str] = &[
    "MPI_Comm_create",
    "MPI_Comm_create_group",
    "MPIX_Comm_shrink",
];

/// `MPI_ERR_UNSUPPORTED_OPERATION` for a call named in [`REFUSED`] on an
/// intercommunicator (called by `p2p::call`, which returns it through
/// the error handler).
pub(crate) fn refuse(comm: c_int, what: &str) -> Option<c_int> {
    let base = what.strip_suffix("_c").unwrap_or(what);
    (REFUSED.contains(&base) && inter_of(comm).is_some()).then_some(MPI_ERR_UNSUPPORTED_OPERATION)
}

/// `MPI_Comm_split` of an intercommunicator: each group splits by color
/// and key, and the parts of the same color in both groups are joined by
/// a new intercommunicator (`MPI_COMM_NULL` where the other group has no
/// process of that color, and for `MPI_UNDEFINED`); `None` for an
/// intracommunicator.
pub(crate) fn split(comm: c_int, color: c_int, key: c_int, newcomm: *mut c_int) -> Option<c_int> {
    let c = inter_of(comm)?;
    Some(call(comm, "MPI_Comm_split", || {
        if newcomm.is_null() || (color < 0 && color != MPI_UNDEFINED) {
            return Err(MPI_ERR_ARG);
        }
        let s = shadow(comm, &c)?;
        // Everyone's color and key, in the merge's order.
        let mine: Vec<u8> = [color, key].iter().flat_map(|x| x.to_ne_bytes()).collect();
        let mut all = vec![0u8; 8 * s.merged.size()];
        s.merged
            .allgather_bytes(&mine, &mut all)
            .map_err(|e| err(&e))?;
        let word = |i: usize| i32::from_ne_bytes([all[i], all[i + 1], all[i + 2], all[i + 3]]);
        let ck: Vec<(i32, i32)> = (0..s.merged.size())
            .map(|m| (word(8 * m), word(8 * m + 4)))
            .collect();
        let made = s
            .local
            .split((color != MPI_UNDEFINED).then_some(color as u32), key)
            .map_err(|e| err(&e))?;
        let Some(part) = made else {
            // SAFETY: checked non-null; writable by MPI's contract.
            return unsafe { register(comm, None, newcomm) };
        };
        // The other group's leader of this color: its lowest (key, rank).
        let leader = (0..c.remote_size() as i32)
            .map(|q| (q, ck[s.remote(q).0 as usize]))
            .filter(|(_, (col, _))| *col == color)
            .min_by_key(|&(q, (_, k))| (k, q))
            .map(|(q, _)| q);
        let joined = match leader {
            None => None,
            Some(q) => Some(
                part.intercomm_create(Rank(0), &s.merged, s.remote(q), Tag(TAG_SPLIT))
                    .map_err(|e| err(&e))?,
            ),
        };
        let _ = part.free();
        // SAFETY: checked non-null; writable by MPI's contract.
        unsafe { register(comm, joined, newcomm) }
    }))
}

/// `MPI_Comm_dup` of an intercommunicator; `None` for an
/// intracommunicator.
pub(crate) fn dup(comm: c_int, newcomm: *mut c_int) -> Option<c_int> {
    let c = inter_of(comm)?;
    Some(call(comm, "MPI_Comm_dup", || {
        let s = shadow(comm, &c)?;
        let d = s
            .local
            .intercomm_create(Rank(0), &s.merged, s.remote(0), Tag(TAG_DUP))
            .map_err(|e| err(&e))?;
        // SAFETY: MPI's contract for `newcomm`.
        unsafe { register(comm, Some(d), newcomm) }
    }))
}

crate::mpi! {
    /// `MPI_Intercomm_create`: `peer_comm` and `remote_leader` matter at
    /// the local leader only (elsewhere any value is taken).
    fn PMPI_Intercomm_create(local_comm: c_int, local_leader: c_int, peer_comm: c_int, remote_leader: c_int, tag: c_int, newintercomm: *mut c_int) -> c_int as MPI_Intercomm_create {
        call(local_comm, "MPI_Intercomm_create", || {
            let c = comm_of(local_comm)?;
            if newintercomm.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let leader = c.rank().0 == local_leader;
            let peer = if leader { comm_of(peer_comm)? } else { comm_of(peer_comm).unwrap_or_else(|_| c.clone()) };
            let made = c
                .intercomm_create(Rank(local_leader), &peer, Rank(if leader { remote_leader } else { 0 }), Tag(tag))
                .map_err(|e| err(&e))?;
            // SAFETY: checked non-null; writable by MPI's contract.
            unsafe { register(local_comm, Some(made), newintercomm) }
        })
    }
}

crate::mpi! {
    /// `MPI_Intercomm_merge`: the group passing `high` false comes first;
    /// when both pass the same, the group holding the lower process.
    fn PMPI_Intercomm_merge(intercomm: c_int, high: c_int, newintracomm: *mut c_int) -> c_int as MPI_Intercomm_merge {
        call(intercomm, "MPI_Intercomm_merge", || {
            let c = comm_of(intercomm)?;
            if !c.is_inter() {
                return Err(MPI_ERR_COMM);
            }
            if newintracomm.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let m = c.merge(high != 0).map_err(|e| err(&e))?;
            // SAFETY: checked non-null; writable by MPI's contract.
            unsafe { register(intercomm, Some(m), newintracomm) }
        })
    }
}

crate::mpi! {
    /// `MPI_Comm_remote_group` (`MPI_ERR_COMM` on an intracommunicator).
    fn PMPI_Comm_remote_group(comm: c_int, group: *mut c_int) -> c_int as MPI_Comm_remote_group {
        call(comm, "MPI_Comm_remote_group", || {
            let g = comm_of(comm)?.remote_group().ok_or(MPI_ERR_COMM)?;
            let h = add_group(g)?;
            // SAFETY: MPI's contract for `group`.
            match unsafe { put(group, h, comm, "MPI_Comm_remote_group") } {
                MPI_SUCCESS => Ok(()),
                code => Err(code),
            }
        })
    }
}

/// The remote group's size when `comm` is an intercommunicator (the
/// length of the v-forms' count arrays there).
pub(crate) fn remote_size(comm: c_int) -> Option<usize> {
    inter_of(comm).map(|c| c.remote_size())
}
