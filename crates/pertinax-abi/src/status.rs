//! Status objects: their fields' getters and setters, the element count
//! (the basic elements of any datatype), cancellation.

use std::ffi::c_int;

use crate::consts::*;
use crate::errors::raise;
use crate::large::MPI_Count;

/// Runs `f` on a status the caller owns, or `MPI_ERR_ARG`.
///
/// # Safety
/// `st` is null, `MPI_STATUS_IGNORE`, or valid for reads and writes.
unsafe fn with(st: *mut MpiStatus, what: &str, f: impl FnOnce(&mut MpiStatus)) -> c_int {
    if st.is_null() || st as usize == STATUS_IGNORE {
        return raise(MPI_COMM_WORLD, what, MPI_ERR_ARG);
    }
    // SAFETY: checked; valid by the caller's contract.
    f(unsafe { &mut *st });
    MPI_SUCCESS
}

/// Reads a field of a status into `out`.
///
/// # Safety
/// As [`with`]; `out` null or writable.
unsafe fn get<T>(
    st: *const MpiStatus,
    out: *mut T,
    what: &str,
    f: impl FnOnce(&MpiStatus) -> T,
) -> c_int {
    if st.is_null() || st as usize == STATUS_IGNORE || out.is_null() {
        return raise(MPI_COMM_WORLD, what, MPI_ERR_ARG);
    }
    // SAFETY: checked; valid by the caller's contract.
    unsafe { out.write(f(&*st)) };
    MPI_SUCCESS
}

fn set_bytes(s: &mut MpiStatus, bytes: u64) {
    s.count_lo = bytes as u32 as c_int;
    s.count_hi_and_cancelled = (s.count_hi_and_cancelled & 1) | (((bytes >> 32) as c_int) << 1);
}

crate::mpi! {
    /// `MPI_Status_set_source`.
    fn PMPI_Status_set_source(st: *mut MpiStatus, v: c_int) -> c_int as MPI_Status_set_source {
        // SAFETY: MPI's contract for `st`.
        unsafe { with(st, "MPI_Status_set_source", |s| s.source = v) }
    }
}
crate::mpi! {
    /// `MPI_Status_set_tag`.
    fn PMPI_Status_set_tag(st: *mut MpiStatus, v: c_int) -> c_int as MPI_Status_set_tag {
        // SAFETY: MPI's contract for `st`.
        unsafe { with(st, "MPI_Status_set_tag", |s| s.tag = v) }
    }
}
crate::mpi! {
    /// `MPI_Status_set_error`.
    fn PMPI_Status_set_error(st: *mut MpiStatus, v: c_int) -> c_int as MPI_Status_set_error {
        // SAFETY: MPI's contract for `st`.
        unsafe { with(st, "MPI_Status_set_error", |s| s.error = v) }
    }
}
crate::mpi! {
    /// `MPI_Status_set_cancelled`.
    fn PMPI_Status_set_cancelled(st: *mut MpiStatus, v: c_int) -> c_int as MPI_Status_set_cancelled {
        // SAFETY: MPI's contract for `st`.
        unsafe { with(st, "MPI_Status_set_cancelled", |s| {
            s.count_hi_and_cancelled = (s.count_hi_and_cancelled & !1) | c_int::from(v != 0)
        }) }
    }
}
crate::mpi! {
    /// `MPI_Status_get_source`.
    fn PMPI_Status_get_source(st: *const MpiStatus, v: *mut c_int) -> c_int as MPI_Status_get_source {
        // SAFETY: MPI's contract for the pointers.
        unsafe { get(st, v, "MPI_Status_get_source", |s| s.source) }
    }
}
crate::mpi! {
    /// `MPI_Status_get_tag`.
    fn PMPI_Status_get_tag(st: *const MpiStatus, v: *mut c_int) -> c_int as MPI_Status_get_tag {
        // SAFETY: MPI's contract for the pointers.
        unsafe { get(st, v, "MPI_Status_get_tag", |s| s.tag) }
    }
}
crate::mpi! {
    /// `MPI_Status_get_error`.
    fn PMPI_Status_get_error(st: *const MpiStatus, v: *mut c_int) -> c_int as MPI_Status_get_error {
        // SAFETY: MPI's contract for the pointers.
        unsafe { get(st, v, "MPI_Status_get_error", |s| s.error) }
    }
}
crate::mpi! {
    /// `MPI_Test_cancelled`.
    fn PMPI_Test_cancelled(st: *const MpiStatus, v: *mut c_int) -> c_int as MPI_Test_cancelled {
        // SAFETY: MPI's contract for the pointers.
        unsafe { get(st, v, "MPI_Test_cancelled", |s| s.count_hi_and_cancelled & 1) }
    }
}

/// Sets the length of `count` basic elements of `ty`.
///
/// # Safety
/// As [`with`].
unsafe fn set_elements(st: *mut MpiStatus, ty: c_int, count: MPI_Count, what: &str) -> c_int {
    let l = match crate::datatype::layout(ty) {
        Ok(l) => l,
        Err(code) => return raise(MPI_COMM_WORLD, what, code),
    };
    let Some(n) = u64::try_from(count)
        .ok()
        .and_then(|n| crate::types::bytes_of_elements(&l, n))
    else {
        return raise(MPI_COMM_WORLD, what, MPI_ERR_COUNT);
    };
    // SAFETY: forwarded.
    unsafe { with(st, what, |s| set_bytes(s, n)) }
}

/// The basic elements of `ty` in the length `st` says
/// (`MPI_UNDEFINED` when it ends inside one).
///
/// # Safety
/// `st` readable unless null or `MPI_STATUS_IGNORE`.
unsafe fn elements(st: *const MpiStatus, ty: c_int) -> Result<MPI_Count, c_int> {
    let l = crate::datatype::layout(ty)?;
    if st.is_null() || st as usize == STATUS_IGNORE {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: checked; readable by the caller's contract.
    let s = unsafe { st.read() };
    let len = (s.count_lo as u32 as u64) | (((s.count_hi_and_cancelled >> 1) as u64) << 32);
    Ok(crate::types::elements_in(&l, len).map_or(MPI_UNDEFINED.into(), |n| n as MPI_Count))
}

crate::mpi! {
    /// `MPI_Status_set_elements`.
    fn PMPI_Status_set_elements(st: *mut MpiStatus, ty: c_int, count: c_int) -> c_int as MPI_Status_set_elements {
        // SAFETY: MPI's contract for `st`.
        unsafe { set_elements(st, ty, count.into(), "MPI_Status_set_elements") }
    }
}
crate::mpi! {
    /// `MPI_Status_set_elements_x`.
    fn PMPI_Status_set_elements_x(st: *mut MpiStatus, ty: c_int, count: MPI_Count) -> c_int as MPI_Status_set_elements_x {
        // SAFETY: MPI's contract for `st`.
        unsafe { set_elements(st, ty, count, "MPI_Status_set_elements_x") }
    }
}
crate::mpi! {
    /// `MPI_Status_set_elements_c`.
    fn PMPI_Status_set_elements_c(st: *mut MpiStatus, ty: c_int, count: MPI_Count) -> c_int as MPI_Status_set_elements_c {
        // SAFETY: MPI's contract for `st`.
        unsafe { set_elements(st, ty, count, "MPI_Status_set_elements_c") }
    }
}
crate::mpi! {
    /// `MPI_Get_elements`: the basic elements received.
    fn PMPI_Get_elements(st: *const MpiStatus, ty: c_int, count: *mut c_int) -> c_int as MPI_Get_elements {
        // SAFETY: MPI's contract for the pointers.
        match unsafe { elements(st, ty) } {
            // SAFETY: MPI's contract: null or writable.
            Ok(n) => unsafe { crate::put(count, c_int::try_from(n).unwrap_or(MPI_UNDEFINED), MPI_COMM_WORLD, "MPI_Get_elements") },
            Err(code) => raise(MPI_COMM_WORLD, "MPI_Get_elements", code),
        }
    }
}
crate::mpi! {
    /// `MPI_Get_elements_c`.
    fn PMPI_Get_elements_c(st: *const MpiStatus, ty: c_int, count: *mut MPI_Count) -> c_int as MPI_Get_elements_c {
        // SAFETY: MPI's contract for the pointers.
        match unsafe { elements(st, ty) } {
            // SAFETY: MPI's contract: null or writable.
            Ok(n) => unsafe { crate::put(count, n, MPI_COMM_WORLD, "MPI_Get_elements_c") },
            Err(code) => raise(MPI_COMM_WORLD, "MPI_Get_elements_c", code),
        }
    }
}
crate::mpi! {
    /// `MPI_Get_elements_x`.
    fn PMPI_Get_elements_x(st: *const MpiStatus, ty: c_int, count: *mut MPI_Count) -> c_int as MPI_Get_elements_x {
        // SAFETY: MPI's contract, forwarded.
        unsafe { PMPI_Get_elements_c(st, ty, count) }
    }
}
