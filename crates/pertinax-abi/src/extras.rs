//! Calls beside the others: `MPI_Alloc_mem`/`MPI_Free_mem` (the C
//! allocator; the info is accepted), `MPI_Comm_dup_with_info` and
//! `MPI_Comm_idup_with_info` (the dup, whose hints are then the info's),
//! `MPI_Comm_call_errhandler`, and the status conversions between C and
//! Fortran (`MPI_Status_c2f`, `_f2c`, `_c2f08`, `_f082c`, `_f2f08`,
//! `_f082f`: in MPICH's ABI all three are the same five integers).

use std::ffi::{c_int, c_void};

use crate::consts::*;
use crate::errors::raise;
use crate::p2p::comm_of;
use crate::MPI_Aint;

crate::mpi! {
    /// `MPI_Alloc_mem`: `malloc` (`MPI_ERR_NO_MEM` when it fails); the
    /// address through `baseptr`, a `void **`.
    fn PMPI_Alloc_mem(size: MPI_Aint, _info: c_int, baseptr: *mut c_void) -> c_int as MPI_Alloc_mem {
        if size < 0 || baseptr.is_null() {
            return raise(MPI_COMM_WORLD, "MPI_Alloc_mem", MPI_ERR_ARG);
        }
        // SAFETY: a plain allocation (of at least one byte, so a size of
        // 0 gives a pointer `MPI_Free_mem` takes too).
        let p = unsafe { libc::malloc((size as usize).max(1)) };
        if p.is_null() {
            return raise(MPI_COMM_WORLD, "MPI_Alloc_mem", MPI_ERR_NO_MEM);
        }
        // SAFETY: checked non-null; MPI's contract: a `void **`.
        unsafe { *baseptr.cast::<*mut c_void>() = p };
        MPI_SUCCESS
    }
}

crate::mpi! {
    /// `MPI_Free_mem`: `free` (a null pointer: nothing).
    fn PMPI_Free_mem(base: *mut c_void) -> c_int as MPI_Free_mem {
        // SAFETY: MPI's contract: `base` came from `MPI_Alloc_mem` (or is
        // null), freed once.
        unsafe { libc::free(base) };
        MPI_SUCCESS
    }
}

/// Replaces the hints of new communicator `new` with `info`'s.
fn hints(new: c_int, info: c_int) -> c_int {
    if info == crate::info::MPI_INFO_NULL {
        return MPI_SUCCESS;
    }
    // SAFETY: no pointers.
    unsafe { crate::info::PMPI_Comm_set_info(new, info) }
}

crate::mpi! {
    /// `MPI_Comm_dup_with_info`: `MPI_Comm_dup`, the hints `info`'s.
    fn PMPI_Comm_dup_with_info(comm: c_int, info: c_int, newcomm: *mut c_int) -> c_int as MPI_Comm_dup_with_info {
        // SAFETY: the same contract as `MPI_Comm_dup`'s.
        let rc = unsafe { crate::comm::PMPI_Comm_dup(comm, newcomm) };
        if rc != MPI_SUCCESS {
            return rc;
        }
        // SAFETY: written by the dup.
        hints(unsafe { *newcomm }, info)
    }
}

crate::mpi! {
    /// `MPI_Comm_idup_with_info`: `MPI_Comm_idup` (which blocks), the
    /// hints `info`'s.
    fn PMPI_Comm_idup_with_info(comm: c_int, info: c_int, newcomm: *mut c_int, request: *mut c_int) -> c_int as MPI_Comm_idup_with_info {
        // SAFETY: the same contract as `MPI_Comm_idup`'s.
        let rc = unsafe { crate::groups::PMPI_Comm_idup(comm, newcomm, request) };
        if rc != MPI_SUCCESS {
            return rc;
        }
        // SAFETY: written by the idup (valid on its return).
        hints(unsafe { *newcomm }, info)
    }
}

crate::mpi! {
    /// `MPI_Comm_call_errhandler`: hands `code` to the communicator's
    /// error handler; `MPI_SUCCESS` when the handler returns.
    fn PMPI_Comm_call_errhandler(comm: c_int, code: c_int) -> c_int as MPI_Comm_call_errhandler {
        if let Err(e) = comm_of(comm) {
            return raise(MPI_COMM_WORLD, "MPI_Comm_call_errhandler", e);
        }
        raise(comm, "MPI_Comm_call_errhandler", code);
        MPI_SUCCESS
    }
}

/// Copies a status's five integers from `from` to `to`.
///
/// # Safety
/// Each null, `MPI_STATUS_IGNORE`, or valid for five `int`s.
unsafe fn copy_status(from: *const c_int, to: *mut c_int, what: &str) -> c_int {
    let bad = |p: usize| p == 0 || p == STATUS_IGNORE;
    if bad(from as usize) || bad(to as usize) {
        return raise(MPI_COMM_WORLD, what, MPI_ERR_ARG);
    }
    // SAFETY: checked; five `int`s each by the caller's contract
    // (`MPI_F_STATUS_SIZE`, `MPI_Status`'s and `MPI_F08_status`'s size).
    unsafe { std::ptr::copy(from, to, MPI_F_STATUS_SIZE as usize) };
    MPI_SUCCESS
}

macro_rules! status_conversions {
    ($($p:ident $m:ident ($f:ty => $t:ty);)*) => {$(
        crate::mpi! {
            #[doc = concat!("`", stringify!($m), "`: the same five integers.")]
            fn $p(from: *const $f, to: *mut $t) -> c_int as $m {
                // SAFETY: MPI's contract for the statuses, forwarded.
                unsafe { copy_status(from.cast(), to.cast(), stringify!($m)) }
            }
        }
    )*};
}

status_conversions! {
    PMPI_Status_c2f MPI_Status_c2f (MpiStatus => c_int);
    PMPI_Status_f2c MPI_Status_f2c (c_int => MpiStatus);
    PMPI_Status_c2f08 MPI_Status_c2f08 (MpiStatus => MpiStatus);
    PMPI_Status_f082c MPI_Status_f082c (MpiStatus => MpiStatus);
    PMPI_Status_f2f08 MPI_Status_f2f08 (c_int => MpiStatus);
    PMPI_Status_f082f MPI_Status_f082f (MpiStatus => c_int);
}
