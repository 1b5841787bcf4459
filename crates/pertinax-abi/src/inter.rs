//! Intercommunicators: `MPI_Intercomm_create`, `MPI_Intercomm_merge`,
//! `MPI_Comm_remote_group` (`MPI_Comm_test_inter` and
//! `MPI_Comm_remote_size` are in `comm`), `MPI_Comm_dup` and
//! `MPI_Comm_split` of an intercommunicator, and the collectives MPI defines on them that are
//! implemented here: `MPI_Barrier`, `MPI_Bcast`, `MPI_Reduce`,
//! `MPI_Gather`, `MPI_Scatter`, `MPI_Gatherv`, `MPI_Scatterv` (`MPI_ROOT`,
//! `MPI_PROC_NULL`), `MPI_Allreduce`, `MPI_Allgather`, `MPI_Allgatherv`,
//! `MPI_Alltoall`, `MPI_Alltoallv`, `MPI_Alltoallw`, `MPI_Reduce_scatter` and
//! `MPI_Reduce_scatter_block`, and `MPI_Comm_split_type`.
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
//! - barrier: a barrier of the merge;
//! - bcast: the root sends to every remote process (point to point on the
//!   merge), the others of its group do nothing;
//! - gather, scatter, alltoall and their v-forms, allgatherv: one
//!   exchange on the merge
//!   (`LentCollective::Neighbor`) where each process lists what it sends
//!   to and receives from whom (nothing at `MPI_PROC_NULL`);
//! - reduce: the remote group reduces to its rank 0, which sends the
//!   result to the root in the same kind of exchange;
//! - allreduce and allgather: each group reduces (gathers) its own
//!   contributions on its local intracommunicator, the two leaders
//!   exchange the results, and each leader broadcasts what it received
//!   to its group; reduce-scatter: the same, but each leader scatters
//!   what it received over its group;
//! - dup: `Comm::intercomm_create` again over the shadow (the same two
//!   groups, a new context). Attributes are not copied;
//! - split: an allgather of colors and keys on the merge, a split of the
//!   local group, then `Comm::intercomm_create` between the parts of the
//!   same color (their leaders talk over the merge); split_type: a split
//!   with one color (shared memory: one node) or none (`MPI_UNDEFINED`).
//!
//! Every other collective on an intercommunicator (the non-blocking ones),
//! and `MPI_Comm_create` and `MPIX_Comm_shrink` of one, is
//! `MPI_ERR_UNSUPPORTED_OPERATION`
//! ([`refuse`], from `p2p::call`). `MPI_Intercomm_create_from_groups` is
//! in `session.rs` (beside `MPI_Comm_create_from_group`).

use std::cell::RefCell;
use std::ffi::{c_int, c_void};
use std::ops::Range;

use pertinax::{Comm, Communicator, LentCollective, Rank, Source, Tag, TagMatch};
use pertinax_os::lend::{lend_mut_raw, lend_raw};

use crate::comm::{add_group, register};
use crate::consts::*;
use crate::datatype::{packed_bytes as bytes, Typed};
use crate::errors::code_of;
use crate::info::{with_table, PerComm};
use crate::p2p::{call, comm_of, slice};
use crate::put;
use crate::serial::Serial;

/// What the collectives of an intercommunicator run on.
#[derive(Debug, Clone)]
struct Shadow {
    /// Both groups, merged.
    merged: Comm,
    /// The local group, as an intracommunicator.
    local: Comm,
    /// Whether the local group comes first in `merged`.
    local_first: bool,
}

impl Shadow {
    /// The rank in `merged` of remote rank `r`.
    fn remote(&self, r: i32) -> Rank {
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
const TAG_BCAST: i32 = 1;
const TAG_LEADERS: i32 = 2;
const TAG_DUP: i32 = 3;
const TAG_SPLIT: i32 = 4;

fn err(e: &pertinax::Error) -> c_int {
    code_of(e)
}

/// The shadow of intercommunicator `comm` (made at the first call: a
/// collective over both groups).
fn shadow(comm: c_int, c: &Comm) -> Result<Shadow, c_int> {
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
fn inter_of(comm: c_int) -> Option<Comm> {
    comm_of(comm).ok().filter(Comm::is_inter)
}

/// Names of the collectives (and creations) that are refused on an
/// intercommunicator: those MPI defines there and this module lacks.
const REFUSED: &[&str] = &[
    "MPI_Igather",
    "MPI_Igatherv",
    "MPI_Iscatter",
    "MPI_Iscatterv",
    "MPI_Iallgatherv",
    "MPI_Ialltoallv",
    "MPI_Ialltoallw",
    "MPI_Ireduce_scatter",
    "MPI_Ireduce_scatter_block",
    "MPI_Ibarrier",
    "MPI_Ibcast",
    "MPI_Ireduce",
    "MPI_Iallreduce",
    "MPI_Iallgather",
    "MPI_Ialltoall",
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

/// `MPI_Barrier` on an intercommunicator; `None` for an intracommunicator.
pub(crate) fn barrier(comm: c_int) -> Option<c_int> {
    let c = inter_of(comm)?;
    Some(call(comm, "MPI_Barrier", || {
        let s = shadow(comm, &c)?;
        s.merged.barrier().map(drop).map_err(|e| err(&e))
    }))
}

/// `MPI_Bcast` on an intercommunicator; `None` for an intracommunicator.
pub(crate) fn bcast(
    buf: *mut c_void,
    count: c_int,
    ty: c_int,
    root: c_int,
    comm: c_int,
) -> Option<c_int> {
    let c = inter_of(comm)?;
    Some(call(comm, "MPI_Bcast", || {
        let (len, size) = bytes(count, ty)?;
        if root != MPI_ROOT
            && root != MPI_PROC_NULL
            && !(0..c.remote_size() as c_int).contains(&root)
        {
            return Err(MPI_ERR_ROOT);
        }
        let s = shadow(comm, &c)?;
        match root {
            MPI_PROC_NULL => Ok(()),
            MPI_ROOT => {
                // SAFETY: MPI's contract: `buf` holds `count` elements.
                let data = unsafe { slice(buf, len) };
                for r in 0..c.remote_size() as i32 {
                    s.merged
                        .send_bytes(data, s.remote(r), Tag(TAG_BCAST))
                        .map_err(|e| err(&e))?;
                }
                Ok(())
            }
            r => {
                // SAFETY: MPI's contract: `buf` holds `count` elements.
                let data = unsafe { slice_mut(buf, len) };
                s.merged
                    .recv_bytes(
                        data,
                        size,
                        Source::from(s.remote(r)),
                        TagMatch::from(Tag(TAG_BCAST)),
                    )
                    .map(drop)
                    .map_err(|e| err(&e))
            }
        }
    }))
}

/// The leaders (local rank 0) exchange `mine` for the remote leader's
/// `theirs`; then every member gets `theirs` from its leader.
fn leaders(s: &Shadow, mine: &[u8], theirs: &mut [u8]) -> Result<(), c_int> {
    if s.local.rank().0 == 0 {
        s.merged
            .sendrecv_bytes(
                mine,
                s.remote(0),
                Tag(TAG_LEADERS),
                theirs,
                1,
                Source::from(s.remote(0)),
                TagMatch::from(Tag(TAG_LEADERS)),
            )
            .map_err(|e| err(&e))?;
    }
    s.local
        .bcast_bytes(theirs, Rank(0))
        .map(drop)
        .map_err(|e| err(&e))
}

/// `MPI_Allreduce` on an intercommunicator (the reduction of the remote
/// group's contributions); `None` for an intracommunicator.
pub(crate) fn allreduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    ty: c_int,
    op: c_int,
    comm: c_int,
) -> Option<c_int> {
    let c = inter_of(comm)?;
    Some(call(comm, "MPI_Allreduce", || {
        if crate::coll::in_place(sendbuf) {
            return Err(MPI_ERR_ARG);
        }
        let (len, _) = bytes(count, ty)?;
        let o = crate::reduce::operation(op, ty)?;
        let s = shadow(comm, &c)?;
        // SAFETY: MPI's contract: `sendbuf` holds `count` elements.
        let send = unsafe { slice(sendbuf, len) };
        let mut mine = vec![0u8; len];
        s.local
            .allreduce_bytes(send, &mut mine, &o)
            .map_err(|e| err(&e))?;
        // SAFETY: MPI's contract: `recvbuf` holds `count` elements.
        let recv = unsafe { slice_mut(recvbuf, len) };
        leaders(&s, &mine, recv)
    }))
}

/// `MPI_Allgather` on an intercommunicator (the remote group's parts, in
/// its rank order); `None` for an intracommunicator.
#[allow(clippy::too_many_arguments)]
pub(crate) fn allgather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    comm: c_int,
) -> Option<c_int> {
    let c = inter_of(comm)?;
    Some(call(comm, "MPI_Allgather", || {
        if crate::coll::in_place(sendbuf) {
            return Err(MPI_ERR_ARG);
        }
        let (sl, _) = bytes(sendcount, sendtype)?;
        let (rl, _) = bytes(recvcount, recvtype)?;
        let s = shadow(comm, &c)?;
        // SAFETY: MPI's contract: `sendbuf` holds one part.
        let send = unsafe { slice(sendbuf, sl) };
        let mut mine = vec![0u8; sl * c.size()];
        s.local
            .allgather_bytes(send, &mut mine)
            .map_err(|e| err(&e))?;
        // SAFETY: MPI's contract: `recvbuf` holds a part per remote rank.
        let recv = unsafe { slice_mut(recvbuf, rl * c.remote_size()) };
        leaders(&s, &mine, recv)
    }))
}

/// One exchange on the shadow's merge (every member of both groups
/// takes part, with its own lists, possibly empty): `sends` are byte
/// ranges of `inp` to merged ranks, `recvs` byte ranges of `out` from
/// them.
fn exchange(
    s: &Shadow,
    inp: &[u8],
    out: &mut [u8],
    sends: Vec<(Rank, Range<usize>)>,
    recvs: Vec<(Rank, Range<usize>)>,
) -> Result<(), c_int> {
    // SAFETY: both buffers outlive the request, which is waited for
    // before this returns; `out` is not touched meanwhile.
    let (i, o) = unsafe {
        (
            lend_raw(inp.as_ptr(), inp.len()),
            lend_mut_raw(out.as_mut_ptr(), out.len()),
        )
    };
    s.merged
        .icollective_lent(LentCollective::Neighbor { sends, recvs }, Some(i), o)
        .and_then(|r| r.wait())
        .map(drop)
        .map_err(|e| err(&e))
}

/// Checks an intercommunicator collective's root: `MPI_ROOT`,
/// `MPI_PROC_NULL` or a remote rank.
fn check_root(c: &Comm, root: c_int) -> Result<(), c_int> {
    if root == MPI_ROOT || root == MPI_PROC_NULL || (0..c.remote_size() as c_int).contains(&root) {
        Ok(())
    } else {
        Err(MPI_ERR_ROOT)
    }
}

/// `MPI_Reduce` on an intercommunicator (the root gets the reduction of
/// the remote group's contributions); `None` for an intracommunicator.
#[allow(clippy::too_many_arguments)]
pub(crate) fn reduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    ty: c_int,
    op: c_int,
    root: c_int,
    comm: c_int,
) -> Option<c_int> {
    let c = inter_of(comm)?;
    Some(call(comm, "MPI_Reduce", || {
        check_root(&c, root)?;
        let (len, _) = bytes(count, ty)?;
        let o = crate::reduce::operation(op, ty)?;
        let s = shadow(comm, &c)?;
        match root {
            MPI_PROC_NULL => exchange(&s, &[], &mut [], vec![], vec![]),
            MPI_ROOT => {
                // SAFETY: MPI's contract: `recvbuf` holds `count` elements.
                let recv = unsafe { slice_mut(recvbuf, len) };
                exchange(&s, &[], recv, vec![], vec![(s.remote(0), 0..len)])
            }
            r => {
                if crate::coll::in_place(sendbuf) {
                    return Err(MPI_ERR_ARG);
                }
                // SAFETY: MPI's contract: `sendbuf` holds `count` elements.
                let send = unsafe { slice(sendbuf, len) };
                let mut tmp = vec![0u8; len];
                s.local
                    .reduce_bytes(send, &mut tmp, &o, Rank(0))
                    .map_err(|e| err(&e))?;
                let to = if s.local.rank().0 == 0 {
                    vec![(s.remote(r), 0..len)]
                } else {
                    vec![]
                };
                exchange(&s, &tmp, &mut [], to, vec![])
            }
        }
    }))
}

/// `MPI_Gather` (`scatter` false) and `MPI_Scatter` on an
/// intercommunicator; `None` for an intracommunicator.
#[allow(clippy::too_many_arguments)]
pub(crate) fn rooted(
    scatter: bool,
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    root: c_int,
    comm: c_int,
) -> Option<c_int> {
    let c = inter_of(comm)?;
    let what = if scatter { "MPI_Scatter" } else { "MPI_Gather" };
    Some(call(comm, what, || {
        check_root(&c, root)?;
        let s = shadow(comm, &c)?;
        let n = c.remote_size();
        match (root, scatter) {
            (MPI_PROC_NULL, _) => exchange(&s, &[], &mut [], vec![], vec![]),
            (MPI_ROOT, false) => {
                let (rl, _) = bytes(recvcount, recvtype)?;
                // SAFETY: MPI's contract: a part per remote rank.
                let recv = unsafe { slice_mut(recvbuf, rl * n) };
                let from = (0..n)
                    .map(|q| (s.remote(q as i32), q * rl..(q + 1) * rl))
                    .collect();
                exchange(&s, &[], recv, vec![], from)
            }
            (MPI_ROOT, true) => {
                let (sl, _) = bytes(sendcount, sendtype)?;
                // SAFETY: MPI's contract: a part per remote rank.
                let send = unsafe { slice(sendbuf, sl * n) };
                let to = (0..n)
                    .map(|q| (s.remote(q as i32), q * sl..(q + 1) * sl))
                    .collect();
                exchange(&s, send, &mut [], to, vec![])
            }
            (r, false) => {
                let (sl, _) = bytes(sendcount, sendtype)?;
                // SAFETY: MPI's contract: one part.
                let send = unsafe { slice(sendbuf, sl) };
                exchange(&s, send, &mut [], vec![(s.remote(r), 0..sl)], vec![])
            }
            (r, true) => {
                let (rl, _) = bytes(recvcount, recvtype)?;
                // SAFETY: MPI's contract: one part.
                let recv = unsafe { slice_mut(recvbuf, rl) };
                exchange(&s, &[], recv, vec![], vec![(s.remote(r), 0..rl)])
            }
        }
    }))
}

/// `MPI_Alltoall` on an intercommunicator (block `j` to and from remote
/// rank `j`); `None` for an intracommunicator.
#[allow(clippy::too_many_arguments)]
pub(crate) fn alltoall(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    comm: c_int,
) -> Option<c_int> {
    let c = inter_of(comm)?;
    Some(call(comm, "MPI_Alltoall", || {
        if crate::coll::in_place(sendbuf) {
            return Err(MPI_ERR_ARG);
        }
        let (sl, _) = bytes(sendcount, sendtype)?;
        let (rl, _) = bytes(recvcount, recvtype)?;
        let s = shadow(comm, &c)?;
        let n = c.remote_size();
        // SAFETY: MPI's contract: a part per remote rank each.
        let (send, recv) = unsafe { (slice(sendbuf, sl * n), slice_mut(recvbuf, rl * n)) };
        let to = (0..n)
            .map(|q| (s.remote(q as i32), q * sl..(q + 1) * sl))
            .collect();
        let from = (0..n)
            .map(|q| (s.remote(q as i32), q * rl..(q + 1) * rl))
            .collect();
        exchange(&s, send, recv, to, from)
    }))
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

/// A C buffer of `len` bytes as a mutable slice (empty when `len` is 0).
///
/// # Safety
/// `buf` is valid for reads and writes of `len` bytes for `'a`, and not
/// otherwise accessed meanwhile.
unsafe fn slice_mut<'a>(buf: *mut c_void, len: usize) -> &'a mut [u8] {
    if len == 0 || buf.is_null() {
        return &mut [];
    }
    // SAFETY: by the caller's contract.
    unsafe { std::slice::from_raw_parts_mut(buf.cast::<u8>(), len) }
}

/// The remote group's size when `comm` is an intercommunicator (the
/// length of the v-forms' count arrays there).
pub(crate) fn remote_size(comm: c_int) -> Option<usize> {
    inter_of(comm).map(|c| c.remote_size())
}

/// The byte ranges of blocks of `counts[q]` packed elements of `el` bytes
/// at `displs[q]` elements.
fn blocks(counts: &[usize], displs: &[usize], el: usize) -> Result<Vec<Range<usize>>, c_int> {
    counts
        .iter()
        .zip(displs)
        .map(|(&c, &d)| {
            let at = d.checked_mul(el).ok_or(MPI_ERR_COUNT)?;
            Ok(at..at
                .checked_add(c.checked_mul(el).ok_or(MPI_ERR_COUNT)?)
                .ok_or(MPI_ERR_COUNT)?)
        })
        .collect()
}

/// How far `ranges` reach into a buffer.
fn reach(ranges: &[Range<usize>]) -> usize {
    ranges.iter().map(|r| r.end).max().unwrap_or(0)
}

/// The bytes of `count` packed elements of `ty`, and the element size.
fn packed_len(count: usize, ty: c_int) -> Result<(usize, usize), c_int> {
    let el = crate::datatype::packed_size(ty)?;
    Ok((count.checked_mul(el).ok_or(MPI_ERR_COUNT)?, el))
}

/// `MPI_Gatherv` (`scatter` false) and `MPI_Scatterv` on an
/// intercommunicator: at `MPI_ROOT`, `vec` is the counts and
/// displacements per remote rank and `buf` the root's buffer; in the
/// remote group, `buf`/`count` is the one part; nothing at
/// `MPI_PROC_NULL`. Packed types only.
///
/// # Safety
/// MPI's contract for the buffers.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn rooted_v(
    scatter: bool,
    comm: c_int,
    root: c_int,
    root_buf: *mut c_void,
    vec: Option<(Vec<usize>, Vec<usize>)>,
    root_ty: c_int,
    part: *mut c_void,
    count: usize,
    ty: c_int,
) -> Result<(), c_int> {
    let c = comm_of(comm)?;
    check_root(&c, root)?;
    let s = shadow(comm, &c)?;
    match root {
        MPI_PROC_NULL => exchange(&s, &[], &mut [], vec![], vec![]),
        MPI_ROOT => {
            let (counts, displs) = vec.ok_or(MPI_ERR_ARG)?;
            let (_, el) = packed_len(0, root_ty)?;
            let ranges = blocks(&counts, &displs, el)?;
            let peers = (0..ranges.len()).map(|q| s.remote(q as i32));
            let lists: Vec<_> = peers.zip(ranges.iter().cloned()).collect();
            if scatter {
                // SAFETY: MPI's contract: the blocks lie in the buffer.
                let send = unsafe { slice(root_buf, reach(&ranges)) };
                exchange(&s, send, &mut [], lists, vec![])
            } else {
                // SAFETY: as above.
                let recv = unsafe { slice_mut(root_buf, reach(&ranges)) };
                exchange(&s, &[], recv, vec![], lists)
            }
        }
        r => {
            let (len, _) = packed_len(count, ty)?;
            if scatter {
                // SAFETY: MPI's contract: one part.
                let recv = unsafe { slice_mut(part, len) };
                exchange(&s, &[], recv, vec![], vec![(s.remote(r), 0..len)])
            } else {
                // SAFETY: as above.
                let send = unsafe { slice(part, len) };
                exchange(&s, send, &mut [], vec![(s.remote(r), 0..len)], vec![])
            }
        }
    }
}

/// `MPI_Allgatherv` (`sends` one part for every remote rank) and
/// `MPI_Alltoallv` on an intercommunicator: every process sends to and
/// receives from every remote process; counts and displacements are per
/// remote rank. Packed types only, no `MPI_IN_PLACE`.
///
/// # Safety
/// MPI's contract for the buffers.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn all_v(
    comm: c_int,
    sendbuf: *const c_void,
    send: (Vec<usize>, Vec<usize>),
    sendtype: c_int,
    recvbuf: *mut c_void,
    recv: (Vec<usize>, Vec<usize>),
    recvtype: c_int,
) -> Result<(), c_int> {
    // In bytes, with a type per block: the w-form.
    let typed = |(counts, displs): &(Vec<usize>, Vec<usize>), ty| {
        let t = crate::datatype::usable(ty)?;
        let el = crate::datatype::packed_size(ty)?;
        counts
            .iter()
            .zip(displs)
            .map(|(&count, &d)| {
                let disp = d
                    .checked_mul(el)
                    .and_then(|b| isize::try_from(b).ok())
                    .ok_or(MPI_ERR_COUNT)?;
                Ok(Typed {
                    disp,
                    count,
                    ty: t.clone(),
                })
            })
            .collect::<Result<Vec<_>, c_int>>()
    };
    let (st, rt) = (typed(&send, sendtype)?, typed(&recv, recvtype)?);
    // SAFETY: the same contract, forwarded.
    unsafe { all_w(comm, sendbuf, &st, recvbuf, &rt) }
}

/// `MPI_Reduce_scatter` on an intercommunicator: the reduction of the
/// remote group's contributions (`sum(counts)` elements there, `counts`
/// per local rank here), block `i` to local rank `i`. Each group reduces
/// its own to its leader, the leaders swap, and each leader scatters what
/// it got over its group. Packed types only, no `MPI_IN_PLACE`.
///
/// # Safety
/// MPI's contract for the buffers.
pub(crate) unsafe fn reduce_scatter(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    counts: &[usize],
    ty: c_int,
    op: c_int,
    comm: c_int,
) -> Result<(), c_int> {
    if crate::coll::in_place(sendbuf) {
        return Err(MPI_ERR_ARG);
    }
    let c = comm_of(comm)?;
    let o = crate::reduce::operation(op, ty)?;
    let (_, el) = packed_len(0, ty)?;
    let total = counts
        .iter()
        .try_fold(0usize, |a, &k| a.checked_add(k))
        .ok_or(MPI_ERR_COUNT)?;
    let (len, _) = packed_len(total, ty)?;
    let s = shadow(comm, &c)?;
    // The remote group's total is this group's too (MPI requires the
    // two sums to agree).
    // SAFETY: MPI's contract: `sendbuf` holds the whole vector.
    let send = unsafe { slice(sendbuf, len) };
    let mut mine = vec![0u8; len];
    s.local
        .reduce_bytes(send, &mut mine, &o, Rank(0))
        .map_err(|e| err(&e))?;
    let mut theirs = vec![0u8; len];
    if s.local.rank().0 == 0 {
        s.merged
            .sendrecv_bytes(
                &mine,
                s.remote(0),
                Tag(TAG_LEADERS),
                &mut theirs,
                1,
                Source::from(s.remote(0)),
                TagMatch::from(Tag(TAG_LEADERS)),
            )
            .map_err(|e| err(&e))?;
    }
    let me = s.local.rank().index();
    let (mine_len, _) = packed_len(counts.get(me).copied().unwrap_or(0), ty)?;
    // SAFETY: MPI's contract: `recvbuf` holds this rank's block.
    let recv = unsafe { slice_mut(recvbuf, mine_len) };
    let bytes: Vec<usize> = counts.iter().map(|k| k * el).collect();
    let displs = crate::vcoll::packed(&bytes);
    s.local
        .scatterv_bytes(&theirs, &bytes, &displs, recv, 1, Rank(0))
        .map(drop)
        .map_err(|e| err(&e))
}

/// `MPI_Alltoallw` on an intercommunicator: part `q` of each side is
/// `count` elements of its type at its byte displacement, to and from
/// remote rank `q`. Packed types only, no `MPI_IN_PLACE`.
///
/// # Safety
/// MPI's contract for the buffers.
pub(crate) unsafe fn all_w(
    comm: c_int,
    sendbuf: *const c_void,
    send: &[Typed],
    recvbuf: *mut c_void,
    recv: &[Typed],
) -> Result<(), c_int> {
    if crate::coll::in_place(sendbuf) {
        return Err(MPI_ERR_ARG);
    }
    let ranges = |parts: &[Typed]| {
        parts
            .iter()
            .map(|p| {
                if !p.ty.packed_like() {
                    return Err(MPI_ERR_UNSUPPORTED_OPERATION);
                }
                let at = usize::try_from(p.disp).map_err(|_| MPI_ERR_ARG)?;
                let len = p.count.checked_mul(p.ty.size()).ok_or(MPI_ERR_COUNT)?;
                Ok(at..at.checked_add(len).ok_or(MPI_ERR_COUNT)?)
            })
            .collect::<Result<Vec<_>, c_int>>()
    };
    let (sr, rr) = (ranges(send)?, ranges(recv)?);
    let c = comm_of(comm)?;
    let s = shadow(comm, &c)?;
    // SAFETY: MPI's contract: the parts lie in the buffers.
    let (inp, out) = unsafe { (slice(sendbuf, reach(&sr)), slice_mut(recvbuf, reach(&rr))) };
    let to = sr
        .into_iter()
        .enumerate()
        .map(|(q, r)| (s.remote(q as i32), r))
        .collect();
    let from = rr
        .into_iter()
        .enumerate()
        .map(|(q, r)| (s.remote(q as i32), r))
        .collect();
    exchange(&s, inp, out, to, from)
}
