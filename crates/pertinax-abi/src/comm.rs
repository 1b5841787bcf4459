//! Communicators and groups: rank and size, dup, split, free, compare,
//! the predefined attributes, and the groups of communicators with their
//! size, rank, translation and set operations.

use std::ffi::{c_int, c_void};

use pertinax::{Group, GroupRelation, Rank};

use crate::consts::*;
use crate::errors::{code_of, raise};
use crate::p2p::{call, comm_of};
use crate::put;
use crate::state;

crate::mpi! {
    /// `MPI_Comm_rank`.
    fn PMPI_Comm_rank(comm: c_int, rank: *mut c_int) -> c_int as MPI_Comm_rank {
        if let Some(rc) = crate::resilient::rank_size(comm, rank, false) { return rc; }
        match comm_of(comm) {
            // SAFETY: MPI's contract: null or writable.
            Ok(c) => unsafe { put(rank, c.rank().0, comm, "MPI_Comm_rank") },
            Err(code) => raise(MPI_COMM_WORLD, "MPI_Comm_rank", code),
        }
    }
}

crate::mpi! {
    /// `MPI_Comm_size`.
    fn PMPI_Comm_size(comm: c_int, size: *mut c_int) -> c_int as MPI_Comm_size {
        if let Some(rc) = crate::resilient::rank_size(comm, size, true) { return rc; }
        match comm_of(comm) {
            // SAFETY: MPI's contract: null or writable.
            Ok(c) => unsafe { put(size, c.size() as c_int, comm, "MPI_Comm_size") },
            Err(code) => raise(MPI_COMM_WORLD, "MPI_Comm_size", code),
        }
    }
}

/// Registers `made` with `parent`'s error handler and writes its handle.
///
/// # Safety
/// `out` is null or writable.
pub(crate) unsafe fn register(
    parent: c_int,
    made: Option<pertinax::Comm>,
    out: *mut c_int,
) -> Result<(), c_int> {
    if out.is_null() {
        return Err(MPI_ERR_ARG);
    }
    let h = match made {
        None => MPI_COMM_NULL,
        Some(c) => state::with(|s| {
            let eh = state::comm_index(parent)
                .and_then(|i| s.comms.get(i)?.as_ref())
                .map_or(MPI_ERRORS_ARE_FATAL, |e| e.errhandler);
            s.add_comm(c, eh)
        })
        .ok_or(MPI_ERR_OTHER)?,
    };
    // SAFETY: checked non-null; writable by the caller's contract.
    unsafe { *out = h };
    Ok(())
}

/// Makes a communicator creation's outcome uniform, as ULFM requires: the
/// members agree (over `parent`, which works revoked) on whether it
/// succeeded everywhere; where it did not, those that made it free it and
/// every member returns the error (`MPIX_ERR_PROC_FAILED` where it was
/// made). Without this, a failure during `MPI_Comm_dup` left some members
/// with the new communicator and others with an error (measured: the C
/// ULFM loop hung in 1 run of 10 with rank 0 killed at its first
/// collective).
pub(crate) fn uniform(
    parent: &pertinax::Comm,
    made: Result<Option<pertinax::Comm>, c_int>,
) -> Result<Option<pertinax::Comm>, c_int> {
    let agreed = parent
        .agree_detailed(u32::from(made.is_ok()))
        .map(|a| a.flags);
    match (made, agreed) {
        (Ok(c), Ok(1)) => Ok(c),
        (Ok(c), _) => {
            if let Some(c) = c {
                let _ = c.free();
            }
            Err(MPIX_ERR_PROC_FAILED)
        }
        (Err(code), _) => Err(code),
    }
}

crate::mpi! {
    /// `MPI_Comm_dup`: uniform under failures (see `uniform`).
    fn PMPI_Comm_dup(comm: c_int, newcomm: *mut c_int) -> c_int as MPI_Comm_dup {
        if let Some(rc) = crate::inter::dup(comm, newcomm) { return rc; }
        if let Some(rc) = crate::resilient::dup(comm, newcomm) { return rc; }
        call(comm, "MPI_Comm_dup", || {
            let c = comm_of(comm)?;
            let d = uniform(&c, c.dup().map(Some).map_err(|e| code_of(&e)))?;
            // SAFETY: MPI's contract for `newcomm`.
            unsafe { register(comm, d, newcomm)? };
            // SAFETY: registered just now.
            crate::graph::copy_topology(comm, unsafe { *newcomm })?;
            // SAFETY: registered just now.
            copy_attrs(comm, unsafe { *newcomm })
        })
    }
}

crate::mpi! {
    /// `MPI_Comm_split` (`MPI_UNDEFINED`: no communicator); uniform as
    /// `MPI_Comm_dup`.
    fn PMPI_Comm_split(comm: c_int, color: c_int, key: c_int, newcomm: *mut c_int) -> c_int as MPI_Comm_split {
        if let Some(rc) = crate::inter::split(comm, color, key, newcomm) { return rc; }
        if let Some(rc) = crate::resilient::split(comm, color, key, newcomm) { return rc; }
        call(comm, "MPI_Comm_split", || {
            let color = match color {
                MPI_UNDEFINED => None,
                c => Some(u32::try_from(c).map_err(|_| MPI_ERR_ARG)?),
            };
            let c = comm_of(comm)?;
            let made = uniform(&c, c.split(color, key).map_err(|e| code_of(&e)))?;
            // SAFETY: MPI's contract for `newcomm`.
            unsafe { register(comm, made, newcomm) }
        })
    }
}

crate::mpi! {
    /// `MPI_Comm_free`: the handle becomes `MPI_COMM_NULL` (and its error
    /// handler goes if it was the last thing holding it).
    fn PMPI_Comm_free(comm: *mut c_int) -> c_int as MPI_Comm_free {
        if comm.is_null() {
            return raise(MPI_COMM_WORLD, "MPI_Comm_free", MPI_ERR_ARG);
        }
        // SAFETY: checked non-null; MPI's contract makes it readable.
        let h = unsafe { *comm };
        if state::comm_index(h).is_some_and(|i| i >= 2) {
            let rc = delete_attrs(h);
            if rc != MPI_SUCCESS {
                return raise(h, "MPI_Comm_free", rc);
            }
        }
        let entry = match state::comm_index(h) {
            Some(i) if i >= 2 => state::with(|s| s.comms.get_mut(i).and_then(Option::take)).flatten(),
            _ => None,
        };
        let Some(e) = entry else {
            return raise(MPI_COMM_WORLD, "MPI_Comm_free", MPI_ERR_COMM);
        };
        crate::errors::detach(e.errhandler);
        // SAFETY: checked non-null.
        unsafe { *comm = MPI_COMM_NULL };
        // A resilient one's is dropped (local); its entry's `comm` is its
        // own duplicate of MPI_COMM_SELF.
        crate::resilient::forget(h);
        match e.comm.free() {
            Ok(()) => MPI_SUCCESS,
            Err(err) => raise(MPI_COMM_WORLD, "MPI_Comm_free", code_of(&err)),
        }
    }
}

crate::mpi! {
    /// `MPI_Comm_compare`.
    fn PMPI_Comm_compare(a: c_int, b: c_int, result: *mut c_int) -> c_int as MPI_Comm_compare {
        call(a, "MPI_Comm_compare", || {
            let (ca, cb) = (comm_of(a)?, comm_of(b)?);
            let r = if a == b {
                MPI_IDENT
            } else {
                match ca.group().compare(&cb.group()) {
                    GroupRelation::Identical => MPI_CONGRUENT,
                    GroupRelation::Similar => 2,
                    GroupRelation::Unequal => MPI_UNEQUAL,
                }
            };
            // SAFETY: MPI's contract for `result`.
            match unsafe { put(result, r, a, "MPI_Comm_compare") } {
                MPI_SUCCESS => Ok(()),
                c => Err(c),
            }
        })
    }
}

/// The values of the predefined attributes, where `MPI_Comm_get_attr`
/// points.
static TAG_UB: c_int = pertinax::TAG_UB;
static WTIME_IS_GLOBAL: c_int = 0;
static UNIVERSE_SIZE: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);
static APPNUM: c_int = 0;
static HOST: c_int = MPI_PROC_NULL;
static IO: c_int = MPI_ANY_SOURCE;

crate::mpi! {
    /// `MPI_Comm_get_attr` of the predefined attributes (`MPI_TAG_UB`,
    /// `MPI_UNIVERSE_SIZE`, `MPI_APPNUM`, `MPI_WTIME_IS_GLOBAL`,
    /// `MPI_HOST`, `MPI_IO`, `MPI_LASTUSEDCODE`) and of user keyvals.
    fn PMPI_Comm_get_attr(comm: c_int, keyval: c_int, value: *mut c_void, flag: *mut c_int) -> c_int as MPI_Comm_get_attr {
        call(comm, "MPI_Comm_get_attr", || {
            let c = crate::p2p::entry_comm(comm)?;
            if value.is_null() || flag.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let p: *const c_int = match keyval {
                MPI_TAG_UB => &TAG_UB,
                MPI_WTIME_IS_GLOBAL => &WTIME_IS_GLOBAL,
                MPI_UNIVERSE_SIZE => {
                    let world = crate::p2p::entry_comm(MPI_COMM_WORLD).map_or(c.size(), |w| w.size());
                    UNIVERSE_SIZE.store(world as i32, std::sync::atomic::Ordering::Relaxed);
                    UNIVERSE_SIZE.as_ptr()
                }
                MPI_APPNUM => &APPNUM,
                MPI_HOST => &HOST,
                MPI_IO => &IO,
                MPI_LASTUSEDCODE => crate::errclass::LAST_USED.as_ptr(),
                k => {
                    keyval_of(k)?;
                    let v = attr(comm, k)?;
                    // SAFETY: checked non-null; MPI's contract: `value` is
                    // a `void **`.
                    unsafe {
                        *flag = c_int::from(v.is_some());
                        if let Some(v) = v {
                            *value.cast::<*mut c_void>() = v;
                        }
                    }
                    return Ok(());
                }
            };
            // SAFETY: checked non-null; MPI's contract: `value` is a
            // `void **` for a predefined attribute's pointer.
            unsafe {
                *flag = c_int::from(!p.is_null());
                if !p.is_null() {
                    *value.cast::<*const c_int>() = p;
                }
            }
            Ok(())
        })
    }
}

/// Registers group `g`; its handle.
pub(crate) fn add_group(g: Group) -> Result<c_int, c_int> {
    state::with(|s| GROUP_DIRECT | state::insert(&mut s.groups, g) as c_int).ok_or(MPI_ERR_OTHER)
}

/// A clone of the group of handle `h` (`MPI_GROUP_EMPTY` too).
pub(crate) fn group_of(h: c_int) -> Result<Group, c_int> {
    if h == MPI_GROUP_EMPTY {
        return comm_of(MPI_COMM_SELF)
            .and_then(|c| c.group().excl(&[Rank(0)]).map_err(|e| code_of(&e)));
    }
    let i = state::group_index(h).ok_or(8)?;
    state::with(|s| s.groups.get(i).cloned().flatten())
        .flatten()
        .ok_or(8)
}

crate::mpi! {
    /// `MPI_Comm_group`.
    fn PMPI_Comm_group(comm: c_int, group: *mut c_int) -> c_int as MPI_Comm_group {
        call(comm, "MPI_Comm_group", || {
            let g = add_group(comm_of(comm)?.group())?;
            // SAFETY: MPI's contract for `group`.
            match unsafe { put(group, g, comm, "MPI_Comm_group") } {
                MPI_SUCCESS => Ok(()),
                c => Err(c),
            }
        })
    }
}

crate::mpi! {
    /// `MPI_Group_size`.
    fn PMPI_Group_size(group: c_int, size: *mut c_int) -> c_int as MPI_Group_size {
        match group_of(group) {
            // SAFETY: MPI's contract for `size`.
            Ok(g) => unsafe { put(size, g.size() as c_int, MPI_COMM_WORLD, "MPI_Group_size") },
            Err(code) => raise(MPI_COMM_WORLD, "MPI_Group_size", code),
        }
    }
}

crate::mpi! {
    /// `MPI_Group_rank` (`MPI_UNDEFINED` for a non-member).
    fn PMPI_Group_rank(group: c_int, rank: *mut c_int) -> c_int as MPI_Group_rank {
        match group_of(group) {
            Ok(g) => {
                let r = g.rank().map_or(MPI_UNDEFINED, |r| r.0);
                // SAFETY: MPI's contract for `rank`.
                unsafe { put(rank, r, MPI_COMM_WORLD, "MPI_Group_rank") }
            }
            Err(code) => raise(MPI_COMM_WORLD, "MPI_Group_rank", code),
        }
    }
}

crate::mpi! {
    /// `MPI_Group_translate_ranks`: `MPI_PROC_NULL` translates to itself,
    /// a rank not in `b` to `MPI_UNDEFINED`.
    fn PMPI_Group_translate_ranks(a: c_int, n: c_int, ranks: *const c_int, b: c_int, out: *mut c_int) -> c_int as MPI_Group_translate_ranks {
        call(MPI_COMM_WORLD, "MPI_Group_translate_ranks", || {
            let (ga, gb) = (group_of(a)?, group_of(b)?);
            let n = usize::try_from(n).map_err(|_| MPI_ERR_ARG)?;
            if n > 0 && (ranks.is_null() || out.is_null()) {
                return Err(MPI_ERR_ARG);
            }
            // SAFETY: MPI's contract: `ranks` and `out` hold `n` ints.
            let input = unsafe { crate::p2p::slice(ranks.cast(), n * 4) };
            let all: Vec<c_int> = input
                .chunks_exact(4)
                .map(|c| i32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            // `MPI_PROC_NULL` translates to itself.
            let rs: Vec<Rank> = all.iter().filter(|&&r| r != MPI_PROC_NULL).map(|&r| Rank(r)).collect();
            let mut t = ga.translate_ranks(&rs, &gb).map_err(|e| code_of(&e))?.into_iter();
            for (i, &r) in all.iter().enumerate() {
                let v = if r == MPI_PROC_NULL {
                    MPI_PROC_NULL
                } else {
                    t.next().flatten().map_or(MPI_UNDEFINED, |r| r.0)
                };
                // SAFETY: as above.
                unsafe { *out.add(i) = v };
            }
            Ok(())
        })
    }
}

crate::mpi! {
    /// `MPI_Group_free`.
    fn PMPI_Group_free(group: *mut c_int) -> c_int as MPI_Group_free {
        if group.is_null() {
            return raise(MPI_COMM_WORLD, "MPI_Group_free", MPI_ERR_ARG);
        }
        // SAFETY: checked non-null; MPI's contract makes it readable.
        let h = unsafe { *group };
        if h != MPI_GROUP_EMPTY {
            let freed = state::group_index(h)
                .and_then(|i| state::with(|s| s.groups.get_mut(i).and_then(Option::take)))
                .flatten();
            if freed.is_none() {
                return raise(MPI_COMM_WORLD, "MPI_Group_free", 8);
            }
        }
        // SAFETY: checked non-null.
        unsafe { *group = MPI_GROUP_NULL };
        MPI_SUCCESS
    }
}

crate::mpi! {
    /// `MPI_Comm_test_inter`.
    fn PMPI_Comm_test_inter(comm: c_int, flag: *mut c_int) -> c_int as MPI_Comm_test_inter {
        match crate::p2p::entry_comm(comm) {
            // SAFETY: MPI's contract for `flag`.
            Ok(c) => unsafe { put(flag, c_int::from(c.is_inter()), comm, "MPI_Comm_test_inter") },
            Err(code) => raise(MPI_COMM_WORLD, "MPI_Comm_test_inter", code),
        }
    }
}

crate::mpi! {
    /// `MPI_Comm_remote_size` (`MPI_ERR_COMM` on an intracommunicator).
    fn PMPI_Comm_remote_size(comm: c_int, size: *mut c_int) -> c_int as MPI_Comm_remote_size {
        match comm_of(comm) {
            Ok(c) if c.is_inter() => {
                // SAFETY: MPI's contract for `size`.
                unsafe { put(size, c.remote_size() as c_int, comm, "MPI_Comm_remote_size") }
            }
            Ok(_) => raise(comm, "MPI_Comm_remote_size", MPI_ERR_COMM),
            Err(code) => raise(MPI_COMM_WORLD, "MPI_Comm_remote_size", code),
        }
    }
}

/// The value of user keyval `k` on communicator `comm`, if set.
fn attr(comm: c_int, k: c_int) -> Result<Option<*mut c_void>, c_int> {
    state::with(|s| {
        let e = state::comm_index(comm).and_then(|i| s.comms.get(i)?.as_ref())?;
        Some(e.attrs.iter().find(|(key, _)| *key == k).map(|(_, v)| *v))
    })
    .flatten()
    .ok_or(MPI_ERR_COMM)
}

/// Keyval `k`, freed or not (for its attributes' functions).
fn keyval_entry(k: c_int) -> Result<state::Keyval, c_int> {
    state::keyval_index(k)
        .and_then(|i| state::with(|s| s.keyvals.get(i).copied().flatten()).flatten())
        .ok_or(MPI_ERR_KEYVAL)
}

/// Keyval `k` as a program's argument: `MPI_ERR_KEYVAL` once freed.
fn keyval_of(k: c_int) -> Result<state::Keyval, c_int> {
    keyval_entry(k).and_then(|e| if e.freed { Err(MPI_ERR_KEYVAL) } else { Ok(e) })
}

/// Runs keyval `k`'s delete function on `value` (no state borrowed).
fn run_delete(comm: c_int, k: c_int, value: *mut c_void) -> c_int {
    match keyval_entry(k) {
        Ok(state::Keyval {
            delete: Some(f),
            extra,
            ..
        }) => {
            // SAFETY: the program registered `f` for this signature.
            unsafe { f(comm, k, value, extra) }
        }
        _ => MPI_SUCCESS,
    }
}

/// Runs the delete functions of every attribute of `comm` and clears them
/// (`MPI_Comm_free`, and `MPI_COMM_SELF`'s at `MPI_Finalize`).
pub(crate) fn delete_attrs(comm: c_int) -> c_int {
    let attrs = state::with(|s| {
        state::comm_index(comm)
            .and_then(|i| s.comms.get_mut(i)?.as_mut())
            .map(|e| std::mem::take(&mut e.attrs))
    })
    .flatten()
    .unwrap_or_default();
    // In the reverse order of setting, as MPICH does.
    for (k, v) in attrs.into_iter().rev() {
        let rc = run_delete(comm, k, v);
        if rc != MPI_SUCCESS {
            return rc;
        }
    }
    MPI_SUCCESS
}

/// Copies the attributes of `from` to `to` through their copy functions
/// (`MPI_Comm_dup`).
fn copy_attrs(from: c_int, to: c_int) -> Result<(), c_int> {
    let attrs = state::with(|s| {
        state::comm_index(from)
            .and_then(|i| s.comms.get(i)?.as_ref())
            .map(|e| e.attrs.clone())
    })
    .flatten()
    .unwrap_or_default();
    for (k, v) in attrs {
        let Ok(state::Keyval {
            copy: Some(f),
            extra,
            ..
        }) = keyval_entry(k)
        else {
            continue;
        };
        let mut out: *mut c_void = std::ptr::null_mut();
        let mut flag: c_int = 0;
        // SAFETY: the program registered `f` for this signature.
        let rc = unsafe {
            f(
                from,
                k,
                extra,
                v,
                (&mut out as *mut *mut c_void).cast(),
                &mut flag,
            )
        };
        if rc != MPI_SUCCESS {
            return Err(rc);
        }
        if flag != 0 {
            set(to, k, out)?;
        }
    }
    Ok(())
}

/// Sets (or replaces, deleting the old value first) attribute `k`.
fn set(comm: c_int, k: c_int, value: *mut c_void) -> Result<(), c_int> {
    keyval_of(k)?;
    if let Some(old) = attr(comm, k)? {
        let rc = run_delete(comm, k, old);
        if rc != MPI_SUCCESS {
            return Err(rc);
        }
    }
    state::with(|s| {
        let e = state::comm_index(comm).and_then(|i| s.comms.get_mut(i)?.as_mut())?;
        match e.attrs.iter_mut().find(|(key, _)| *key == k) {
            Some(slot) => slot.1 = value,
            None => e.attrs.push((k, value)),
        }
        Some(())
    })
    .flatten()
    .ok_or(MPI_ERR_COMM)
}

crate::mpi! {
    /// `MPI_Comm_create_keyval` (null functions: `MPI_COMM_NULL_COPY_FN`,
    /// `MPI_COMM_NULL_DELETE_FN`).
    fn PMPI_Comm_create_keyval(copy: Option<state::CopyFn>, delete: Option<state::DeleteFn>, keyval: *mut c_int, extra: *mut c_void) -> c_int as MPI_Comm_create_keyval {
        call(MPI_COMM_WORLD, "MPI_Comm_create_keyval", || {
            if keyval.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let i = state::with(|s| state::insert(&mut s.keyvals, state::Keyval { copy, delete, extra, freed: false }))
                .ok_or(MPI_ERR_OTHER)?;
            // SAFETY: checked non-null; writable by MPI's contract.
            unsafe { *keyval = KEYVAL_DIRECT | i as c_int };
            Ok(())
        })
    }
}

crate::mpi! {
    /// `MPI_Comm_free_keyval`: the handle becomes `MPI_KEYVAL_INVALID`;
    /// attributes set with it keep their delete function.
    fn PMPI_Comm_free_keyval(keyval: *mut c_int) -> c_int as MPI_Comm_free_keyval {
        call(MPI_COMM_WORLD, "MPI_Comm_free_keyval", || {
            if keyval.is_null() {
                return Err(MPI_ERR_ARG);
            }
            // SAFETY: checked non-null; readable and writable by contract.
            unsafe {
                let k = *keyval;
                keyval_of(k)?;
                let used = state::with(|s| s.comms.iter().flatten().any(|e| e.attrs.iter().any(|(a, _)| *a == k)))
                    .unwrap_or(true);
                state::with(|s| {
                    if let Some(slot) = state::keyval_index(k).and_then(|i| s.keyvals.get_mut(i)) {
                        match slot {
                            // Unused: the slot is free again.
                            Some(_) if !used => *slot = None,
                            Some(e) => e.freed = true,
                            None => {}
                        }
                    }
                });
                *keyval = MPI_KEYVAL_INVALID;
            }
            Ok(())
        })
    }
}

crate::mpi! {
    /// `MPI_Comm_set_attr`.
    fn PMPI_Comm_set_attr(comm: c_int, keyval: c_int, value: *mut c_void) -> c_int as MPI_Comm_set_attr {
        call(comm, "MPI_Comm_set_attr", || set(comm, keyval, value))
    }
}

crate::mpi! {
    /// `MPI_Comm_delete_attr`.
    fn PMPI_Comm_delete_attr(comm: c_int, keyval: c_int) -> c_int as MPI_Comm_delete_attr {
        call(comm, "MPI_Comm_delete_attr", || {
            comm_of(comm)?;
            keyval_of(keyval)?;
            let old = attr(comm, keyval)?.ok_or(MPI_ERR_KEYVAL)?;
            let rc = run_delete(comm, keyval, old);
            if rc != MPI_SUCCESS {
                return Err(rc);
            }
            state::with(|s| {
                if let Some(e) = state::comm_index(comm).and_then(|i| s.comms.get_mut(i)?.as_mut()) {
                    e.attrs.retain(|(k, _)| *k != keyval);
                }
            });
            Ok(())
        })
    }
}
