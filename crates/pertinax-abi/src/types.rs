//! The datatype calls: constructors (`constructor.rs`:
//! `MPI_Type_contiguous`, `_vector`, `_create_hvector`, `_indexed`,
//! `_create_hindexed`, `_create_indexed_block`, `_create_hindexed_block`,
//! `_create_struct`, `_create_resized`, `_create_subarray`,
//! `_create_darray`, `_dup`, and the deprecated `MPI_Type_hvector`,
//! `_hindexed`, `_struct`), `_commit`, `_free`, the queries
//! (`_get_envelope`, `_get_contents`, names, `_match_size`, the deprecated
//! `_extent`, `_lb`, `_ub`), `MPI_Pack`/`MPI_Unpack` (`pack.rs`, with
//! `"external32"`: big-endian) and the basic-element counts behind
//! `MPI_Get_elements`. More in `typeextra.rs` (the `_c` envelope and
//! contents, type attributes, the F90 types). Not implemented: the
//! `MPI_LB`/`MPI_UB` markers of the deprecated `MPI_Type_struct`.

use std::ffi::{c_char, c_int};

use crate::check::out as put;
use crate::consts::*;
use crate::datatype::{add, layout, remove, update};
use crate::errors::raise;
use crate::large::MPI_Count;
use crate::serial::Serial;
use crate::MPI_Aint;

mod constructor;
mod pack;

pub(crate) use constructor::PMPI_Type_dup;
pub(crate) use pack::{bytes_of_elements, elements_in};

/// Runs a datatype call; an error class goes to the world's handler.
fn run(what: &str, f: impl FnOnce() -> Result<(), c_int>) -> c_int {
    match f() {
        Ok(()) => MPI_SUCCESS,
        Err(code) => raise(MPI_COMM_WORLD, what, code),
    }
}

/// `n` values of a C array as `i64`s.
///
/// # Safety
/// `p` holds `n` values (or `n` is 0).
unsafe fn read<T: Copy + TryInto<i64>>(p: *const T, n: usize) -> Result<Vec<i64>, c_int> {
    if n > 0 && p.is_null() {
        return Err(MPI_ERR_ARG);
    }
    (0..n)
        // SAFETY: `i < n`, by the caller's contract.
        .map(|i| unsafe { *p.add(i) }.try_into().map_err(|_| MPI_ERR_ARG))
        .collect()
}

fn non_negative(v: i64) -> Result<usize, c_int> {
    usize::try_from(v).map_err(|_| MPI_ERR_COUNT)
}

/// Reads a handle through a pointer.
///
/// # Safety
/// `p` null or readable.
unsafe fn handle(p: *const c_int) -> Result<c_int, c_int> {
    if p.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: checked non-null; readable by the caller's contract.
    Ok(unsafe { *p })
}

crate::mpi! {
    /// `MPI_Type_commit` (of a predefined type: nothing to do).
    fn PMPI_Type_commit(ty: *mut c_int) -> c_int as MPI_Type_commit {
        run("MPI_Type_commit", || {
            // SAFETY: MPI's contract: `ty` readable.
            let h = unsafe { handle(ty) }?;
            if layout(h)?.predefined {
                return Ok(());
            }
            update(h, |l| l.committed = true)
        })
    }
}

crate::mpi! {
    /// `MPI_Type_free`: the handle becomes `MPI_DATATYPE_NULL` (types
    /// made of it, and operations under way, keep its layout). A
    /// predefined type is `MPI_ERR_TYPE`.
    fn PMPI_Type_free(ty: *mut c_int) -> c_int as MPI_Type_free {
        run("MPI_Type_free", || {
            // SAFETY: MPI's contract: `ty` readable and writable.
            let h = unsafe { handle(ty) }?;
            if layout(h)?.predefined {
                return Err(MPI_ERR_TYPE);
            }
            crate::typeextra::delete_attrs(h)?;
            remove(h)?;
            // SAFETY: as above.
            unsafe { *ty = MPI_DATATYPE_NULL };
            Ok(())
        })
    }
}

crate::mpi! {
    /// `MPI_Type_get_envelope` (`MPI_ERR_TYPE` for a type with large
    /// counts: `MPI_Type_get_envelope_c` gives them).
    fn PMPI_Type_get_envelope(ty: c_int, ni: *mut c_int, na: *mut c_int, nd: *mut c_int, combiner: *mut c_int) -> c_int as MPI_Type_get_envelope {
        run("MPI_Type_get_envelope", || {
            let l = layout(ty)?;
            let c = &l.contents;
            if !c.large.is_empty() {
                return Err(MPI_ERR_TYPE);
            }
            // SAFETY: MPI's contract: the out-pointers are writable.
            unsafe {
                put(ni, c.ints.len() as c_int)?;
                put(na, c.addrs.len() as c_int)?;
                put(nd, c.types.len() as c_int)?;
                put(combiner, c.combiner)
            }
        })
    }
}

/// Writes `ty`'s contents: `max` bounds the ints, addresses, large counts
/// and types (`large` null: the `int` form, for a type without large
/// counts); a derived type among the types is a new handle (the program
/// frees it), as MPI says.
///
/// # Safety
/// Each array holds its `max` values.
pub(crate) unsafe fn contents(
    ty: c_int,
    max: [MPI_Count; 4],
    ints: *mut c_int,
    addrs: *mut MPI_Aint,
    large: *mut MPI_Count,
    types: *mut c_int,
) -> Result<(), c_int> {
    let l = layout(ty)?;
    let c = l.contents.clone();
    if c.combiner == MPI_COMBINER_NAMED || (large.is_null() && !c.large.is_empty()) {
        return Err(MPI_ERR_TYPE);
    }
    let lens = [c.ints.len(), c.addrs.len(), c.large.len(), c.types.len()];
    if max
        .iter()
        .zip(lens)
        .any(|(&m, n)| m < 0 || (m as u64) < n as u64)
    {
        return Err(MPI_ERR_ARG);
    }
    for (i, &v) in c.ints.iter().enumerate() {
        // SAFETY: by the caller's contract: `ints` holds `max[0]` values.
        unsafe { put(ints.add(i), v) }?;
    }
    for (i, &v) in c.addrs.iter().enumerate() {
        // SAFETY: as above, `addrs`.
        unsafe { put(addrs.add(i), v) }?;
    }
    for (i, &v) in c.large.iter().enumerate() {
        // SAFETY: as above, `large`.
        unsafe { put(large.add(i), v) }?;
    }
    for (i, (h, derived)) in c.types.iter().enumerate() {
        let h = match derived {
            Some(d) => add((**d).clone())?,
            None => *h,
        };
        // SAFETY: as above, `types`.
        unsafe { put(types.add(i), h) }?;
    }
    Ok(())
}

crate::mpi! {
    /// `MPI_Type_get_contents`.
    fn PMPI_Type_get_contents(ty: c_int, max_ints: c_int, max_addrs: c_int, max_types: c_int,
        ints: *mut c_int, addrs: *mut MPI_Aint, types: *mut c_int) -> c_int as MPI_Type_get_contents {
        let max = [max_ints.into(), max_addrs.into(), 0, max_types.into()];
        // SAFETY: MPI's contract: each array holds its `max_` values.
        run("MPI_Type_get_contents", || unsafe { contents(ty, max, ints, addrs, std::ptr::null_mut(), types) })
    }
}

/// The names the program gave predefined types.
static RENAMED: Serial<std::cell::RefCell<std::collections::BTreeMap<c_int, Vec<u8>>>> =
    Serial::new(std::cell::RefCell::new(std::collections::BTreeMap::new()));

crate::mpi! {
    /// `MPI_Type_set_name` (cut to `MPI_MAX_OBJECT_NAME - 1` bytes; a
    /// predefined type's new name is this process's, as MPICH allows).
    fn PMPI_Type_set_name(ty: c_int, name: *const c_char) -> c_int as MPI_Type_set_name {
        run("MPI_Type_set_name", || {
            // SAFETY: MPI's contract: a C string.
            let n = unsafe { crate::info::c_bytes(name) }?;
            let n = n[..n.len().min(crate::info::MPI_MAX_OBJECT_NAME - 1)].to_vec();
            if layout(ty)?.predefined {
                RENAMED.with(|r| r.borrow_mut().insert(ty, n));
                return Ok(());
            }
            update(ty, |l| l.name = n)
        })
    }
}

crate::mpi! {
    /// `MPI_Type_get_name`: the empty string for a type never named
    /// (`MPI_DATATYPE_NULL` is named so, as in MPICH).
    fn PMPI_Type_get_name(ty: c_int, name: *mut c_char, len: *mut c_int) -> c_int as MPI_Type_get_name {
        run("MPI_Type_get_name", || {
            if ty == MPI_DATATYPE_NULL {
                // SAFETY: as below.
                return unsafe {
                    crate::info::write_c(b"MPI_DATATYPE_NULL", name, crate::info::MPI_MAX_OBJECT_NAME)?;
                    put(len, 17)
                };
            }
            let l = layout(ty)?;
            let n = RENAMED.with(|r| r.borrow().get(&ty).cloned()).unwrap_or_else(|| l.name.clone());
            // SAFETY: MPI's contract: `name` holds MPI_MAX_OBJECT_NAME
            // bytes, `len` is writable.
            unsafe {
                crate::info::write_c(&n, name, crate::info::MPI_MAX_OBJECT_NAME)?;
                put(len, n.len() as c_int)
            }
        })
    }
}

crate::mpi! {
    /// `MPI_Type_match_size`: a C type of the class and size.
    fn PMPI_Type_match_size(class: c_int, size: c_int, ty: *mut c_int) -> c_int as MPI_Type_match_size {
        run("MPI_Type_match_size", || {
            let t = match (class, size) {
                (MPI_TYPECLASS_INTEGER, 1) => MPI_SIGNED_CHAR,
                (MPI_TYPECLASS_INTEGER, 2) => MPI_SHORT,
                (MPI_TYPECLASS_INTEGER, 4) => MPI_INT,
                (MPI_TYPECLASS_INTEGER, 8) => MPI_LONG,
                (MPI_TYPECLASS_REAL, 4) => MPI_FLOAT,
                (MPI_TYPECLASS_REAL, 8) => MPI_DOUBLE,
                (MPI_TYPECLASS_REAL, 16) => MPI_LONG_DOUBLE,
                (MPI_TYPECLASS_COMPLEX, 8) => MPI_C_FLOAT_COMPLEX,
                (MPI_TYPECLASS_COMPLEX, 16) => MPI_C_DOUBLE_COMPLEX,
                (MPI_TYPECLASS_COMPLEX, 32) => MPI_C_LONG_DOUBLE_COMPLEX,
                _ => return Err(MPI_ERR_ARG),
            };
            // SAFETY: MPI's contract: `ty` writable.
            unsafe { put(ty, t) }
        })
    }
}

/// The deprecated bound queries: which of lb, ub, extent.
///
/// # Safety
/// `out` null or writable.
unsafe fn old_bound(ty: c_int, out: *mut MPI_Aint, which: u8, what: &str) -> c_int {
    run(what, || {
        let l = layout(ty)?;
        let v = match which {
            0 => l.lb,
            1 => l.lb + l.extent,
            _ => l.extent,
        };
        // SAFETY: by the caller's contract.
        unsafe { put(out, v) }
    })
}

crate::mpi! {
    /// `MPI_Type_lb` (deprecated).
    fn PMPI_Type_lb(ty: c_int, lb: *mut MPI_Aint) -> c_int as MPI_Type_lb {
        // SAFETY: MPI's contract for `lb`.
        unsafe { old_bound(ty, lb, 0, "MPI_Type_lb") }
    }
}
crate::mpi! {
    /// `MPI_Type_ub` (deprecated).
    fn PMPI_Type_ub(ty: c_int, ub: *mut MPI_Aint) -> c_int as MPI_Type_ub {
        // SAFETY: MPI's contract for `ub`.
        unsafe { old_bound(ty, ub, 1, "MPI_Type_ub") }
    }
}
crate::mpi! {
    /// `MPI_Type_extent` (deprecated).
    fn PMPI_Type_extent(ty: c_int, extent: *mut MPI_Aint) -> c_int as MPI_Type_extent {
        // SAFETY: MPI's contract for `extent`.
        unsafe { old_bound(ty, extent, 2, "MPI_Type_extent") }
    }
}
