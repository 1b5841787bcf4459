//! Groups and the communicators made from them.
//!
//! - Group constructors and comparison: `MPI_Group_incl`, `_excl`,
//!   `_range_incl`, `_range_excl`, `_union`, `_intersection`,
//!   `_difference`, `_compare`. Every call that takes a group takes
//!   `MPI_GROUP_EMPTY`, and a constructor whose result has no member
//!   returns `MPI_GROUP_EMPTY` (as MPICH does), which `MPI_Group_free`
//!   accepts. An invalid group handle (`MPI_GROUP_NULL`, a freed one) is
//!   `MPI_ERR_GROUP`; an invalid or repeated rank `MPI_ERR_RANK`. Errors
//!   go to `MPI_COMM_WORLD`'s handler, as groups have none.
//! - Communicators from groups: `MPI_Comm_create` (collective over the
//!   parent, made by a split so that disjoint groups work too, uniform
//!   under failures), `MPI_Comm_create_group` (collective over the group
//!   only: built pairwise from intercommunicators over the parent, see
//!   [`PMPI_Comm_create_group`] for what it guarantees under failures),
//!   `MPI_Comm_split_type`, and `MPI_Comm_idup`, which blocks.

use std::ffi::c_int;

use pertinax::{Comm, Group, GroupRelation, Rank, Tag};

use crate::comm::{add_group, group_of, register, uniform};
use crate::consts::*;
use crate::errors::{code_of, raise};
use crate::p2p::{call, comm_of};
use crate::state::{self, ReqEntry};

/// `MPI_ERR_GROUP`: an invalid group handle.
pub(crate) const MPI_ERR_GROUP: c_int = 8;
/// `MPI_Group_compare`'s and `MPI_Comm_compare`'s "same members, another
/// order".
const MPI_SIMILAR: c_int = 2;
/// The split types of `MPI_Comm_split_type` (MPICH 5's `mpi.h`).
const MPI_COMM_TYPE_SHARED: c_int = 1;
const MPI_COMM_TYPE_HW_GUIDED: c_int = 2;
const MPI_COMM_TYPE_HW_UNGUIDED: c_int = 3;
const MPI_COMM_TYPE_RESOURCE_GUIDED: c_int = 4;

/// The `n` ints at `p` (empty when `n` is 0).
///
/// # Safety
/// `p` holds `n` ints when `n > 0`; checked non-null here.
unsafe fn ints<'a>(p: *const c_int, n: c_int) -> Result<&'a [c_int], c_int> {
    let n = usize::try_from(n).map_err(|_| MPI_ERR_ARG)?;
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: non-null, and `n` ints by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// Registers group `g` (`MPI_GROUP_EMPTY` when it has no member) and
/// writes its handle to `out`.
///
/// # Safety
/// `out` is null or writable.
unsafe fn give(g: Group, out: *mut c_int) -> Result<(), c_int> {
    if out.is_null() {
        return Err(MPI_ERR_ARG);
    }
    let h = if g.size() == 0 {
        MPI_GROUP_EMPTY
    } else {
        add_group(g)?
    };
    // SAFETY: checked non-null; writable by the caller's contract.
    unsafe { *out = h };
    Ok(())
}

/// `ranks` as pertinax ranks.
fn ranks_of(ranks: &[c_int]) -> Vec<Rank> {
    ranks.iter().map(|&r| Rank(r)).collect()
}

/// The ranks a `ranges[n][3]` argument names (`first`, `last`, `stride`
/// triples) in a group of `size`: `MPI_ERR_RANK` for a first or last
/// outside the group, `MPI_ERR_ARG` for a zero stride or one that leads
/// away from `last` (as MPICH). Repeats are left to the caller's check.
fn expand(ranges: &[c_int], size: usize) -> Result<Vec<Rank>, c_int> {
    let valid = |r: c_int| usize::try_from(r).is_ok_and(|r| r < size);
    let mut out = Vec::new();
    for t in ranges.chunks_exact(3) {
        let (first, last, stride) = (t[0], t[1], t[2]);
        if !valid(first) || !valid(last) {
            return Err(MPI_ERR_RANK);
        }
        if stride == 0 || (stride > 0 && first > last) || (stride < 0 && first < last) {
            return Err(MPI_ERR_ARG);
        }
        // Both in the group: `steps` is at most `size`.
        let steps = (i64::from(last) - i64::from(first)) / i64::from(stride);
        for k in 0..=steps {
            let r = i64::from(first) + k * i64::from(stride);
            out.push(Rank(i32::try_from(r).map_err(|_| MPI_ERR_RANK)?));
        }
        if out.len() > size {
            // More ranks than members: some repeat.
            return Err(MPI_ERR_RANK);
        }
    }
    Ok(out)
}

crate::mpi! {
    /// `MPI_Group_incl`: the listed ranks, in that order (`MPI_ERR_RANK`
    /// for one outside the group or listed twice).
    fn PMPI_Group_incl(group: c_int, n: c_int, ranks: *const c_int, newgroup: *mut c_int) -> c_int as MPI_Group_incl {
        call(MPI_COMM_WORLD, "MPI_Group_incl", || {
            let g = group_of(group)?;
            // SAFETY: MPI's contract: `ranks` holds `n` ints.
            let rs = unsafe { ints(ranks, n)? };
            let made = g.incl(&ranks_of(rs)).map_err(|_| MPI_ERR_RANK)?;
            // SAFETY: MPI's contract for `newgroup`.
            unsafe { give(made, newgroup) }
        })
    }
}

crate::mpi! {
    /// `MPI_Group_excl`: the group without the listed ranks, in its order.
    fn PMPI_Group_excl(group: c_int, n: c_int, ranks: *const c_int, newgroup: *mut c_int) -> c_int as MPI_Group_excl {
        call(MPI_COMM_WORLD, "MPI_Group_excl", || {
            let g = group_of(group)?;
            // SAFETY: MPI's contract: `ranks` holds `n` ints.
            let rs = unsafe { ints(ranks, n)? };
            let made = g.excl(&ranks_of(rs)).map_err(|_| MPI_ERR_RANK)?;
            // SAFETY: MPI's contract for `newgroup`.
            unsafe { give(made, newgroup) }
        })
    }
}

crate::mpi! {
    /// `MPI_Group_range_incl`: the ranks of `n` (first, last, stride)
    /// triples, in that order.
    fn PMPI_Group_range_incl(group: c_int, n: c_int, ranges: *const [c_int; 3], newgroup: *mut c_int) -> c_int as MPI_Group_range_incl {
        call(MPI_COMM_WORLD, "MPI_Group_range_incl", || {
            let g = group_of(group)?;
            let n3 = n.checked_mul(3).ok_or(MPI_ERR_ARG)?;
            // SAFETY: MPI's contract: `ranges` holds `n` triples of ints.
            let rs = unsafe { ints(ranges.cast(), n3)? };
            let made = g.incl(&expand(rs, g.size())?).map_err(|_| MPI_ERR_RANK)?;
            // SAFETY: MPI's contract for `newgroup`.
            unsafe { give(made, newgroup) }
        })
    }
}

crate::mpi! {
    /// `MPI_Group_range_excl`: the group without the ranks of `n` (first,
    /// last, stride) triples.
    fn PMPI_Group_range_excl(group: c_int, n: c_int, ranges: *const [c_int; 3], newgroup: *mut c_int) -> c_int as MPI_Group_range_excl {
        call(MPI_COMM_WORLD, "MPI_Group_range_excl", || {
            let g = group_of(group)?;
            let n3 = n.checked_mul(3).ok_or(MPI_ERR_ARG)?;
            // SAFETY: MPI's contract: `ranges` holds `n` triples of ints.
            let rs = unsafe { ints(ranges.cast(), n3)? };
            let made = g.excl(&expand(rs, g.size())?).map_err(|_| MPI_ERR_RANK)?;
            // SAFETY: MPI's contract for `newgroup`.
            unsafe { give(made, newgroup) }
        })
    }
}

/// A set operation on two groups (`MPI_Group_union` and the others).
///
/// # Safety
/// `out` is null or writable.
unsafe fn set_op(
    what: &str,
    a: c_int,
    b: c_int,
    out: *mut c_int,
    op: fn(&Group, &Group) -> Group,
) -> c_int {
    call(MPI_COMM_WORLD, what, || {
        let (ga, gb) = (group_of(a)?, group_of(b)?);
        // SAFETY: by the caller's contract.
        unsafe { give(op(&ga, &gb), out) }
    })
}

crate::mpi! {
    /// `MPI_Group_union`: the members of the first group, then those of
    /// the second not in it.
    fn PMPI_Group_union(a: c_int, b: c_int, newgroup: *mut c_int) -> c_int as MPI_Group_union {
        // SAFETY: MPI's contract for `newgroup`.
        unsafe { set_op("MPI_Group_union", a, b, newgroup, Group::union) }
    }
}

crate::mpi! {
    /// `MPI_Group_intersection`: the members of the first group that are
    /// in the second, in the first's order.
    fn PMPI_Group_intersection(a: c_int, b: c_int, newgroup: *mut c_int) -> c_int as MPI_Group_intersection {
        // SAFETY: MPI's contract for `newgroup`.
        unsafe { set_op("MPI_Group_intersection", a, b, newgroup, Group::intersection) }
    }
}

crate::mpi! {
    /// `MPI_Group_difference`: the members of the first group that are
    /// not in the second, in the first's order.
    fn PMPI_Group_difference(a: c_int, b: c_int, newgroup: *mut c_int) -> c_int as MPI_Group_difference {
        // SAFETY: MPI's contract for `newgroup`.
        unsafe { set_op("MPI_Group_difference", a, b, newgroup, Group::difference) }
    }
}

crate::mpi! {
    /// `MPI_Group_compare`: `MPI_IDENT` (same members, same order),
    /// `MPI_SIMILAR` (same members), `MPI_UNEQUAL`.
    fn PMPI_Group_compare(a: c_int, b: c_int, result: *mut c_int) -> c_int as MPI_Group_compare {
        call(MPI_COMM_WORLD, "MPI_Group_compare", || {
            let (ga, gb) = (group_of(a)?, group_of(b)?);
            if result.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let r = match ga.compare(&gb) {
                GroupRelation::Identical => MPI_IDENT,
                GroupRelation::Similar => MPI_SIMILAR,
                GroupRelation::Unequal => MPI_UNEQUAL,
            };
            // SAFETY: checked non-null; writable by MPI's contract.
            unsafe { *result = r };
            Ok(())
        })
    }
}

/// This process's (color, key) in the split that makes `MPI_Comm_create`'s
/// communicator of `g` from `parent`: the color is the lowest parent rank
/// of the group's members (the same for every member of one group, and
/// different for disjoint groups), the key its rank in the group; `None`
/// outside the group. `MPI_ERR_GROUP` if a member is not in `parent`.
fn create_color(parent: &Comm, g: &Group) -> Result<Option<(u32, i32)>, c_int> {
    let lowest = parent_ranks(parent, g)?.iter().map(|r| r.0).min();
    Ok(match (g.rank(), lowest) {
        (Some(me), Some(l)) => Some((u32::try_from(l).map_err(|_| MPI_ERR_INTERN)?, me.0)),
        _ => None,
    })
}

crate::mpi! {
    /// `MPI_Comm_create`: a communicator of the members of `group`, in its
    /// order; `MPI_COMM_NULL` outside it. Collective over `comm`; as MPI
    /// allows since 2.2, members may pass disjoint groups, each getting a
    /// communicator of its own group (a split whose color is the group's
    /// lowest rank in `comm` and whose key is the rank in the group).
    ///
    /// Uniform under failures like `MPI_Comm_dup` (an agreement over
    /// `comm`): either every surviving member of `comm` returns its new
    /// communicator (or `MPI_COMM_NULL`), or every one returns an error.
    /// A member whose own arguments are wrong (a group with a process
    /// outside `comm`: `MPI_ERR_GROUP`) still takes part, so that the
    /// others do not wait for it; they return `MPIX_ERR_PROC_FAILED`, as
    /// for a failed creation. Intercommunicators are not supported.
    fn PMPI_Comm_create(comm: c_int, group: c_int, newcomm: *mut c_int) -> c_int as MPI_Comm_create {
        if comm_of(comm).is_ok_and(|c| c.is_inter()) {
            return crate::errors::unsupported("MPI_Comm_create (intercommunicator)", comm);
        }
        call(comm, "MPI_Comm_create", || {
            let c = comm_of(comm)?;
            let plan = if newcomm.is_null() {
                Err(MPI_ERR_ARG)
            } else {
                group_of(group).and_then(|g| create_color(&c, &g))
            };
            let (color, key) = match plan {
                Ok(Some((color, key))) => (Some(color), key),
                _ => (None, 0),
            };
            let split = c.split(color, key).map_err(|e| code_of(&e));
            let made = match plan {
                Ok(_) => split,
                Err(code) => {
                    if let Ok(Some(made)) = split {
                        let _ = made.free();
                    }
                    Err(code)
                }
            };
            let made = uniform(&c, made)?;
            // SAFETY: MPI's contract for `newcomm`.
            unsafe { register(comm, made, newcomm) }
        })
    }
}

/// The parent ranks of `g`'s members, or `MPI_ERR_GROUP` if one is not in
/// `parent`.
pub(crate) fn parent_ranks(parent: &Comm, g: &Group) -> Result<Vec<Rank>, c_int> {
    let all: Vec<Rank> = (0..g.size() as i32).map(Rank).collect();
    g.translate_ranks(&all, &parent.group())
        .map_err(|e| code_of(&e))?
        .into_iter()
        .map(|r| r.ok_or(MPI_ERR_GROUP))
        .collect()
}

/// `MPI_Comm_create_group`'s construction at group rank `me` of `n`
/// (see [`PMPI_Comm_create_group`]).
pub(crate) fn create_group(
    parent: &Comm,
    ranks: &[Rank],
    me: usize,
    tag: Tag,
) -> Result<Comm, c_int> {
    let n = ranks.len();
    let self_comm = comm_of(MPI_COMM_SELF)?;
    if n == 1 {
        return self_comm.dup().map_err(|e| code_of(&e));
    }
    // The block's communicator (this process's at first) and whether it
    // is one made here (to free).
    let (mut cur, mut owned) = (self_comm, false);
    let mut failed: Option<c_int> = None;
    let mut step = 1;
    while step < n {
        let block = me / step;
        let (partner, high) = if block.is_multiple_of(2) {
            ((block + 1) * step, false)
        } else {
            ((block - 1) * step, true)
        };
        if partner < n {
            let merged = cur
                .intercomm_create(Rank(0), parent, ranks[partner], tag)
                .and_then(|ic| {
                    let m = ic.merge(high);
                    let _ = ic.free();
                    m
                });
            match merged {
                Ok(m) => {
                    if owned {
                        let _ = cur.free();
                    }
                    (cur, owned) = (m, true);
                }
                Err(e) => {
                    let code = *failed.get_or_insert(code_of(&e));
                    if high {
                        // The right block is done: nobody waits for it.
                        if owned {
                            let _ = cur.free();
                        }
                        return Err(code);
                    }
                    // The left block goes on (its leader is the next
                    // round's partner of another block), marked failed.
                }
            }
        }
        step *= 2;
    }
    // Every member still here agrees on whether all went well.
    let all_ok = cur
        .agree_detailed(u32::from(failed.is_none()))
        .map(|a| a.flags == 1);
    match (failed, all_ok) {
        (None, Ok(true)) => Ok(cur),
        (code, _) => {
            if owned {
                let _ = cur.free();
            }
            Err(code.unwrap_or(MPIX_ERR_PROC_FAILED))
        }
    }
}

crate::mpi! {
    /// `MPI_Comm_create_group`: a communicator of the members of `group`
    /// (a subgroup of `comm`'s, `MPI_ERR_GROUP` otherwise), in its order,
    /// collective over the group's members only; `tag` (0 to
    /// `MPI_TAG_UB`) tells concurrent calls on `comm` apart. A caller
    /// outside the group gets `MPI_COMM_NULL` at once (as MPICH).
    ///
    /// It is built without the other members of `comm`: blocks of the
    /// group, from single processes up, join pairwise in rounds (block
    /// `2k` with block `2k + 1`): an intercommunicator between the two
    /// (`comm` carries the leaders' exchange, tagged `tag` on a context
    /// user messages never match), merged; the last round gives the whole
    /// group. Cost: about log2 of the group's size rounds of two
    /// operations each.
    ///
    /// Failures: the outcome is uniform among the surviving members of the
    /// group, and no member waits for a dead one. Each round's outcome is
    /// uniform between its two blocks (pertinax's intercommunicator
    /// creation and merge are). After a failed round the right block
    /// returns its error; the left one goes on, marked failed, so that the
    /// blocks it meets later are not left waiting; a last agreement over
    /// the communicator that results turns any mark into an error at every
    /// member. So either every survivor returns the communicator (a member
    /// that died after the last merge is reported by later operations), or
    /// every survivor returns an error (the error of its failed round, else
    /// `MPIX_ERR_PROC_FAILED`). The error class may differ between members.
    fn PMPI_Comm_create_group(comm: c_int, group: c_int, tag: c_int, newcomm: *mut c_int) -> c_int as MPI_Comm_create_group {
        call(comm, "MPI_Comm_create_group", || {
            let c = comm_of(comm)?;
            if c.is_inter() {
                return Err(MPI_ERR_COMM);
            }
            if !(0..=pertinax::TAG_UB).contains(&tag) {
                return Err(MPI_ERR_TAG);
            }
            if newcomm.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let g = group_of(group)?;
            let ranks = parent_ranks(&c, &g)?;
            let made = match g.rank() {
                None => None,
                Some(me) => Some(create_group(&c, &ranks, me.index(), Tag(tag))?),
            };
            // SAFETY: MPI's contract for `newcomm`.
            unsafe { register(comm, made, newcomm) }
        })
    }
}

crate::mpi! {
    /// `MPI_Comm_split_type`, ranks ordered by `key` then by rank in
    /// `comm`; collective, uniform under failures as `MPI_Comm_split`.
    ///
    /// - `MPI_COMM_TYPE_SHARED`: every process of a pertinax job is on one
    ///   node and can share memory, so one communicator of every caller.
    /// - `MPI_UNDEFINED`: takes part, gets `MPI_COMM_NULL`.
    /// - `MPI_COMM_TYPE_HW_GUIDED`, `MPI_COMM_TYPE_RESOURCE_GUIDED`: as
    ///   `MPI_COMM_TYPE_SHARED` when `info`'s `mpi_hw_resource_type` is
    ///   `mpi_shared_memory` (the one resource type MPI names, and the
    ///   one level a pertinax job has); otherwise (no info, no such key,
    ///   another type) `MPI_COMM_NULL`, as MPICH returns for a type it
    ///   does not know. `info` is read, not changed.
    /// - `MPI_COMM_TYPE_HW_UNGUIDED`: `MPI_COMM_NULL`, what MPICH returns
    ///   when no hardware level splits the communicator into strict
    ///   subsets; pertinax does not bind processes to parts of the node.
    /// - Other types (MPICH's `MPIX_COMM_TYPE_NEIGHBORHOOD`): `MPI_ERR_ARG`.
    fn PMPI_Comm_split_type(comm: c_int, split_type: c_int, key: c_int, info: c_int, newcomm: *mut c_int) -> c_int as MPI_Comm_split_type {
        if comm_of(comm).is_ok_and(|c| c.is_inter()) {
            // Each group splits as an intracommunicator would; the parts
            // are joined as `MPI_Comm_split` of an intercommunicator does.
            let color = match split_type {
                MPI_COMM_TYPE_SHARED => 0,
                MPI_UNDEFINED
                | MPI_COMM_TYPE_HW_GUIDED
                | MPI_COMM_TYPE_HW_UNGUIDED
                | MPI_COMM_TYPE_RESOURCE_GUIDED => MPI_UNDEFINED,
                _ => return crate::errors::raise(comm, "MPI_Comm_split_type", MPI_ERR_ARG),
            };
            if let Some(rc) = crate::inter::split(comm, color, key, newcomm) {
                return rc;
            }
        }
        call(comm, "MPI_Comm_split_type", || {
            let color = match split_type {
                MPI_COMM_TYPE_SHARED => Some(0),
                MPI_COMM_TYPE_HW_GUIDED | MPI_COMM_TYPE_RESOURCE_GUIDED => {
                    let shared = info != crate::info::MPI_INFO_NULL
                        && crate::info::info_of(info)?.get(b"mpi_hw_resource_type") == Some(b"mpi_shared_memory".as_slice());
                    shared.then_some(0)
                }
                MPI_UNDEFINED | MPI_COMM_TYPE_HW_UNGUIDED => None,
                _ => return Err(MPI_ERR_ARG),
            };
            if newcomm.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let c = comm_of(comm)?;
            let made = uniform(&c, c.split(color, key).map_err(|e| code_of(&e)))?;
            // SAFETY: MPI's contract for `newcomm`.
            unsafe { register(comm, made, newcomm) }
        })
    }
}

crate::mpi! {
    /// `MPI_Comm_idup`: blocks. It is `MPI_Comm_dup` (collective, uniform
    /// under failures, attributes copied), then a request that is already
    /// complete (its status empty), so `*newcomm` is valid on return, not
    /// only after the request completes. A program that relies on the
    /// call returning before the other members enter it (an `MPI_Comm_idup`
    /// overlapped with communication they must do first) waits forever.
    fn PMPI_Comm_idup(comm: c_int, newcomm: *mut c_int, request: *mut c_int) -> c_int as MPI_Comm_idup {
        pertinax::fault_point("MPI_Comm_idup");
        if request.is_null() || newcomm.is_null() {
            return raise(comm, "MPI_Comm_idup", MPI_ERR_ARG);
        }
        // SAFETY: `newcomm` checked non-null; writable by MPI's contract.
        let rc = unsafe { crate::comm::PMPI_Comm_dup(comm, newcomm) };
        if rc != MPI_SUCCESS {
            // Raised already, through `comm`'s handler.
            return rc;
        }
        let done = ReqEntry::Done(crate::p2p::status(MPI_ANY_SOURCE, MPI_ANY_TAG, 0, MPI_SUCCESS));
        match state::with(|s| REQUEST_DIRECT | state::insert(&mut s.requests, done) as c_int) {
            Some(h) => {
                // SAFETY: checked non-null; writable by MPI's contract.
                unsafe { *request = h };
                MPI_SUCCESS
            }
            None => raise(comm, "MPI_Comm_idup", MPI_ERR_OTHER),
        }
    }
}
