//! Files' error handlers: `MPI_File_create_errhandler`,
//! `_set_errhandler`, `_get_errhandler`, `_call_errhandler`. The
//! handlers are the library's reference-counted ones (`errors.rs`); the
//! one set on `MPI_FILE_NULL` is the default of the files opened next.

use std::cell::Cell;
use std::ffi::c_int;

use super::{entry, raise, DEFAULT_EH};
use crate::consts::*;
use crate::errors;
use crate::state::UserErrhandler;

crate::mpi! {
    /// `MPI_File_create_errhandler`: a user function
    /// `void f(MPI_File *, int *, ...)`.
    fn PMPI_File_create_errhandler(file_errhandler_fn: Option<UserErrhandler>, errhandler: *mut c_int) -> c_int as MPI_File_create_errhandler {
        let (Some(f), false) = (file_errhandler_fn, errhandler.is_null()) else {
            return raise(MPI_FILE_NULL, "MPI_File_create_errhandler", MPI_ERR_ARG);
        };
        let Some(h) = errors::create(f) else {
            return raise(MPI_FILE_NULL, "MPI_File_create_errhandler", MPI_ERR_OTHER);
        };
        // SAFETY: checked non-null; MPI's contract makes it writable.
        unsafe { *errhandler = h };
        MPI_SUCCESS
    }
}

crate::mpi! {
    /// `MPI_File_set_errhandler`: of a file, or (`MPI_FILE_NULL`) the
    /// default of the files opened next.
    fn PMPI_File_set_errhandler(file: MPI_File, errhandler: c_int) -> c_int as MPI_File_set_errhandler {
        if !errors::usable(errhandler) {
            return raise(file, "MPI_File_set_errhandler", MPI_ERR_ERRHANDLER);
        }
        let old = if file.is_null() {
            DEFAULT_EH.with(|d| d.replace(errhandler))
        } else {
            let Ok(e) = entry(file) else {
                return raise(MPI_FILE_NULL, "MPI_File_set_errhandler", MPI_ERR_FILE);
            };
            let Ok(mut g) = e.try_borrow_mut() else {
                return raise(file, "MPI_File_set_errhandler", MPI_ERR_INTERN);
            };
            std::mem::replace(&mut g.errhandler, errhandler)
        };
        errors::attach(errhandler);
        errors::detach(old);
        MPI_SUCCESS
    }
}

crate::mpi! {
    /// `MPI_File_get_errhandler`: a new handle of the file's handler (or
    /// of the default, for `MPI_FILE_NULL`).
    fn PMPI_File_get_errhandler(file: MPI_File, errhandler: *mut c_int) -> c_int as MPI_File_get_errhandler {
        let h = if file.is_null() {
            DEFAULT_EH.with(Cell::get)
        } else {
            match entry(file).ok().and_then(|e| e.try_borrow().ok().map(|g| g.errhandler)) {
                Some(h) => h,
                None => return raise(MPI_FILE_NULL, "MPI_File_get_errhandler", MPI_ERR_FILE),
            }
        };
        if errhandler.is_null() {
            return raise(file, "MPI_File_get_errhandler", MPI_ERR_ARG);
        }
        errors::new_handle(h);
        // SAFETY: checked non-null; MPI's contract makes it writable.
        unsafe { *errhandler = h };
        MPI_SUCCESS
    }
}

crate::mpi! {
    /// `MPI_File_call_errhandler`: hands `errorcode` to the file's handler
    /// (`MPI_FILE_NULL`: the default one); `MPI_SUCCESS` when it returns.
    fn PMPI_File_call_errhandler(fh: MPI_File, errorcode: c_int) -> c_int as MPI_File_call_errhandler {
        if !fh.is_null() && entry(fh).is_err() {
            return raise(MPI_FILE_NULL, "MPI_File_call_errhandler", MPI_ERR_FILE);
        }
        raise(fh, "MPI_File_call_errhandler", errorcode);
        MPI_SUCCESS
    }
}
