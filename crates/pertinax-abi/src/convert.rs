//! Handle conversions (`MPI_X_c2f`, `_f2c`, `_toint`, `_fromint`: the
//! identity, handles being `int`s here, but for `MPI_File`, a pointer:
//! its index + 1, see `file.rs`), address arithmetic, `MPI_Pcontrol`,
//! and the few `MPIX_` queries that answer with a value.

use std::ffi::{c_int, c_void};

use crate::consts::*;
use crate::MPI_Aint;

macro_rules! identity {
    ($($c2f:ident $pc2f:ident $f2c:ident $pf2c:ident $to:ident $pto:ident $from:ident $pfrom:ident;)*) => {$(
        crate::mpi! {
            #[doc = concat!("`", stringify!($c2f), "`: the same `int`.")]
            any_thread fn $pc2f(h: c_int) -> c_int as $c2f { h }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($f2c), "`: the same `int`.")]
            any_thread fn $pf2c(h: c_int) -> c_int as $f2c { h }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($to), "`: the same `int`.")]
            any_thread fn $pto(h: c_int) -> c_int as $to { h }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($from), "`: the same `int`.")]
            any_thread fn $pfrom(h: c_int) -> c_int as $from { h }
        }
    )*};
}

identity! {
    MPI_Comm_c2f PMPI_Comm_c2f MPI_Comm_f2c PMPI_Comm_f2c MPI_Comm_toint PMPI_Comm_toint MPI_Comm_fromint PMPI_Comm_fromint;
    MPI_Errhandler_c2f PMPI_Errhandler_c2f MPI_Errhandler_f2c PMPI_Errhandler_f2c MPI_Errhandler_toint PMPI_Errhandler_toint MPI_Errhandler_fromint PMPI_Errhandler_fromint;
    MPI_Group_c2f PMPI_Group_c2f MPI_Group_f2c PMPI_Group_f2c MPI_Group_toint PMPI_Group_toint MPI_Group_fromint PMPI_Group_fromint;
    MPI_Info_c2f PMPI_Info_c2f MPI_Info_f2c PMPI_Info_f2c MPI_Info_toint PMPI_Info_toint MPI_Info_fromint PMPI_Info_fromint;
    MPI_Message_c2f PMPI_Message_c2f MPI_Message_f2c PMPI_Message_f2c MPI_Message_toint PMPI_Message_toint MPI_Message_fromint PMPI_Message_fromint;
    MPI_Op_c2f PMPI_Op_c2f MPI_Op_f2c PMPI_Op_f2c MPI_Op_toint PMPI_Op_toint MPI_Op_fromint PMPI_Op_fromint;
    MPI_Request_c2f PMPI_Request_c2f MPI_Request_f2c PMPI_Request_f2c MPI_Request_toint PMPI_Request_toint MPI_Request_fromint PMPI_Request_fromint;
    MPI_Session_c2f PMPI_Session_c2f MPI_Session_f2c PMPI_Session_f2c MPI_Session_toint PMPI_Session_toint MPI_Session_fromint PMPI_Session_fromint;
    MPI_Type_c2f PMPI_Type_c2f MPI_Type_f2c PMPI_Type_f2c MPI_Type_toint PMPI_Type_toint MPI_Type_fromint PMPI_Type_fromint;
    MPI_Win_c2f PMPI_Win_c2f MPI_Win_f2c PMPI_Win_f2c MPI_Win_toint PMPI_Win_toint MPI_Win_fromint PMPI_Win_fromint;
}

crate::mpi! {
    /// `MPI_File_c2f`: the file's index + 1 (0 for `MPI_FILE_NULL`).
    any_thread fn PMPI_File_c2f(h: *mut c_void) -> c_int as MPI_File_c2f { crate::file::c2f(h) }
}
crate::mpi! {
    /// `MPI_File_f2c`: the handle of `MPI_File_c2f`'s value.
    any_thread fn PMPI_File_f2c(h: c_int) -> *mut c_void as MPI_File_f2c { crate::file::f2c(h) }
}
crate::mpi! {
    /// `MPI_File_toint`: as `MPI_File_c2f`.
    any_thread fn PMPI_File_toint(h: *mut c_void) -> c_int as MPI_File_toint { crate::file::c2f(h) }
}
crate::mpi! {
    /// `MPI_File_fromint`: as `MPI_File_f2c`.
    any_thread fn PMPI_File_fromint(h: c_int) -> *mut c_void as MPI_File_fromint { crate::file::f2c(h) }
}

crate::mpi! {
    /// `MPI_Aint_add`.
    any_thread fn PMPI_Aint_add(base: MPI_Aint, disp: MPI_Aint) -> MPI_Aint as MPI_Aint_add {
        base.wrapping_add(disp)
    }
}
crate::mpi! {
    /// `MPI_Aint_diff`.
    any_thread fn PMPI_Aint_diff(a: MPI_Aint, b: MPI_Aint) -> MPI_Aint as MPI_Aint_diff {
        a.wrapping_sub(b)
    }
}

crate::mpi! {
    /// `MPI_Pcontrol` (variadic in C; the level is all it reads): does
    /// nothing, as MPI allows.
    any_thread fn PMPI_Pcontrol(_level: c_int) -> c_int as MPI_Pcontrol { MPI_SUCCESS }
}

crate::mpi! {
    /// `MPIX_Query_cuda_support`: no.
    any_thread fn PMPIX_Query_cuda_support() -> c_int as MPIX_Query_cuda_support { 0 }
}
crate::mpi! {
    /// `MPIX_Query_hip_support`: no.
    any_thread fn PMPIX_Query_hip_support() -> c_int as MPIX_Query_hip_support { 0 }
}
crate::mpi! {
    /// `MPIX_Query_ze_support`: no.
    any_thread fn PMPIX_Query_ze_support() -> c_int as MPIX_Query_ze_support { 0 }
}
crate::mpi! {
    /// `MPIX_Async_get_state`: no asynchronous things here.
    any_thread fn PMPIX_Async_get_state(_thing: *mut c_void) -> *mut c_void as MPIX_Async_get_state {
        std::ptr::null_mut()
    }
}
crate::mpi! {
    /// `MPIX_Request_is_complete`: 1 for `MPI_REQUEST_NULL` or a request
    /// known complete, else 0 (it does not drive progress).
    fn PMPIX_Request_is_complete(req: c_int) -> c_int as MPIX_Request_is_complete {
        c_int::from(req == MPI_REQUEST_NULL || crate::p2p::is_done(req))
    }
}

/// `MPIR_Dup_fn`, which `mpi.h`'s `MPI_DUP_FN` (and `MPI_COMM_DUP_FN`,
/// ...) names: copies the attribute's value.
///
/// # Safety
/// MPI's contract for an attribute copy function.
#[no_mangle]
pub unsafe extern "C" fn MPIR_Dup_fn(
    _comm: c_int,
    _keyval: c_int,
    _extra: *mut c_void,
    value_in: *mut c_void,
    value_out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    if value_out.is_null() || flag.is_null() {
        return MPI_ERR_ARG;
    }
    // SAFETY: MPI's contract: `value_out` is a `void **`, `flag` an int.
    unsafe {
        *value_out.cast::<*mut c_void>() = value_in;
        *flag = 1;
    }
    MPI_SUCCESS
}

/// A pointer-valued variable of the ABI (`extern int * const ...` in
/// `mpi.h`).
#[repr(transparent)]
#[derive(Debug)]
pub struct CPointer(pub(crate) *const c_int);

// SAFETY: the pointers are constants (addresses of statics, or null) that
// nothing writes through.
unsafe impl Sync for CPointer {}

static UNWEIGHTED: c_int = 0;
static WEIGHTS_EMPTY: c_int = 0;

/// `MPI_UNWEIGHTED`: a marker address.
#[no_mangle]
pub static MPI_UNWEIGHTED: CPointer = CPointer(&UNWEIGHTED);
/// `MPI_WEIGHTS_EMPTY`: a marker address.
#[no_mangle]
pub static MPI_WEIGHTS_EMPTY: CPointer = CPointer(&WEIGHTS_EMPTY);
/// `MPI_F_STATUS_IGNORE` (no Fortran here: null, as MPICH's is before
/// its Fortran layer sets it).
#[no_mangle]
pub static MPI_F_STATUS_IGNORE: CPointer = CPointer(std::ptr::null());
/// `MPI_F_STATUSES_IGNORE`.
#[no_mangle]
pub static MPI_F_STATUSES_IGNORE: CPointer = CPointer(std::ptr::null());
/// `MPI_F08_STATUS_IGNORE`.
#[no_mangle]
pub static MPI_F08_STATUS_IGNORE: CPointer = CPointer(std::ptr::null());
/// `MPI_F08_STATUSES_IGNORE`.
#[no_mangle]
pub static MPI_F08_STATUSES_IGNORE: CPointer = CPointer(std::ptr::null());

static PVAR_ALL_HANDLES: c_int = 0;

/// `MPI_T_PVAR_ALL_HANDLES`: a marker address (the tool interface is not
/// implemented; its calls return `MPI_ERR_UNSUPPORTED_OPERATION`).
#[no_mangle]
pub static MPI_T_PVAR_ALL_HANDLES: CPointer = CPointer(&PVAR_ALL_HANDLES);
