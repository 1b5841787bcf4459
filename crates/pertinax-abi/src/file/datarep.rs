//! Data representations: `"native"` (and `"internal"`, which is native
//! here), and those the program registers (`MPI_Register_datarep`). A
//! registered representation without conversion functions
//! (`MPI_CONVERSION_FN_NULL`) is native data under its own name; one with
//! conversions is `MPI_ERR_UNSUPPORTED_DATAREP` to `MPI_File_set_view`.
//! `"external32"` is not supported.

use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_void, CStr};

use super::raise;
use crate::consts::*;
use crate::serial::Serial;

/// A registered representation: its name, and whether it converts.
type Registered = (Vec<u8>, bool);

/// Registered representations.
static REGISTERED: Serial<RefCell<Vec<Registered>>> = Serial::new(RefCell::new(Vec::new()));

/// Whether a view may use representation `name`.
pub(crate) fn usable(name: &[u8]) -> Result<(), c_int> {
    if name == b"native" || name == b"internal" {
        return Ok(());
    }
    let converts = crate::info::with_table(&REGISTERED, |t| {
        t.iter().find(|(n, _)| n == name).map(|(_, c)| *c)
    })?;
    match converts {
        Some(false) => Ok(()),
        _ => Err(MPI_ERR_UNSUPPORTED_DATAREP),
    }
}

/// `MPI_Register_datarep`'s body.
///
/// # Safety
/// `datarep` is null or a C string.
unsafe fn register(
    datarep: *const c_char,
    read: *mut c_void,
    write: *mut c_void,
    extent: *mut c_void,
) -> c_int {
    let what = "MPI_Register_datarep";
    if datarep.is_null() || extent.is_null() {
        return raise(MPI_FILE_NULL, what, MPI_ERR_ARG);
    }
    // SAFETY: a C string by the caller's contract.
    let name = unsafe { CStr::from_ptr(datarep) }.to_bytes().to_vec();
    if name.is_empty() || name.len() >= MPI_MAX_DATAREP_STRING {
        return raise(MPI_FILE_NULL, what, MPI_ERR_ARG);
    }
    let converts = !read.is_null() || !write.is_null();
    let added = crate::info::with_table(&REGISTERED, |t| {
        let builtin = [&b"native"[..], b"internal", b"external32"].contains(&name.as_slice());
        if builtin || t.iter().any(|(n, _)| *n == name) {
            return false;
        }
        t.push((name, converts));
        true
    });
    match added {
        Ok(true) => MPI_SUCCESS,
        Ok(false) => raise(MPI_FILE_NULL, what, MPI_ERR_DUP_DATAREP),
        Err(code) => raise(MPI_FILE_NULL, what, code),
    }
}

crate::mpi! {
    /// `MPI_Register_datarep`: the name is taken (`MPI_ERR_DUP_DATAREP`
    /// the second time); see the module's doc for what a view can do
    /// with it.
    fn PMPI_Register_datarep(datarep: *const c_char, read_conversion_fn: *mut c_void, write_conversion_fn: *mut c_void, dtype_file_extent_fn: *mut c_void, _extra_state: *mut c_void) -> c_int as MPI_Register_datarep {
        // SAFETY: MPI's contract, forwarded.
        unsafe { register(datarep, read_conversion_fn, write_conversion_fn, dtype_file_extent_fn) }
    }
}

crate::mpi! {
    /// `MPI_Register_datarep_c`: as `MPI_Register_datarep`.
    fn PMPI_Register_datarep_c(datarep: *const c_char, read_conversion_fn: *mut c_void, write_conversion_fn: *mut c_void, dtype_file_extent_fn: *mut c_void, _extra_state: *mut c_void) -> c_int as MPI_Register_datarep_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { register(datarep, read_conversion_fn, write_conversion_fn, dtype_file_extent_fn) }
    }
}
