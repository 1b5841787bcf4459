//! The data calls with large (`MPI_Count`) counts: the `_c` forms of
//! those in `calls.rs`, over the same helpers.

use std::ffi::{c_int, c_void};

use super::calls::{begin, blocking, nonblocking, At};
use crate::consts::*;

crate::mpi! {
    /// `MPI_File_read_at_c`.
    fn PMPI_File_read_at_c(fh: MPI_File, offset: i64, buf: *mut c_void, count: i64, datatype: c_int, status: *mut MpiStatus) -> c_int as MPI_File_read_at_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { blocking(fh, "MPI_File_read_at_c", false, At::Offset(offset), buf, count, datatype, status) }
    }
}

crate::mpi! {
    /// `MPI_File_read_at_all_c`.
    fn PMPI_File_read_at_all_c(fh: MPI_File, offset: i64, buf: *mut c_void, count: i64, datatype: c_int, status: *mut MpiStatus) -> c_int as MPI_File_read_at_all_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { blocking(fh, "MPI_File_read_at_all_c", false, At::Offset(offset), buf, count, datatype, status) }
    }
}

crate::mpi! {
    /// `MPI_File_read_c`.
    fn PMPI_File_read_c(fh: MPI_File, buf: *mut c_void, count: i64, datatype: c_int, status: *mut MpiStatus) -> c_int as MPI_File_read_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { blocking(fh, "MPI_File_read_c", false, At::Individual, buf, count, datatype, status) }
    }
}

crate::mpi! {
    /// `MPI_File_read_all_c`.
    fn PMPI_File_read_all_c(fh: MPI_File, buf: *mut c_void, count: i64, datatype: c_int, status: *mut MpiStatus) -> c_int as MPI_File_read_all_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { blocking(fh, "MPI_File_read_all_c", false, At::Individual, buf, count, datatype, status) }
    }
}

crate::mpi! {
    /// `MPI_File_read_shared_c`.
    fn PMPI_File_read_shared_c(fh: MPI_File, buf: *mut c_void, count: i64, datatype: c_int, status: *mut MpiStatus) -> c_int as MPI_File_read_shared_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { blocking(fh, "MPI_File_read_shared_c", false, At::Shared, buf, count, datatype, status) }
    }
}

crate::mpi! {
    /// `MPI_File_read_ordered_c`.
    fn PMPI_File_read_ordered_c(fh: MPI_File, buf: *mut c_void, count: i64, datatype: c_int, status: *mut MpiStatus) -> c_int as MPI_File_read_ordered_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { blocking(fh, "MPI_File_read_ordered_c", false, At::Ordered, buf, count, datatype, status) }
    }
}

crate::mpi! {
    /// `MPI_File_write_at_c`.
    fn PMPI_File_write_at_c(fh: MPI_File, offset: i64, buf: *const c_void, count: i64, datatype: c_int, status: *mut MpiStatus) -> c_int as MPI_File_write_at_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { blocking(fh, "MPI_File_write_at_c", true, At::Offset(offset), buf, count, datatype, status) }
    }
}

crate::mpi! {
    /// `MPI_File_write_at_all_c`.
    fn PMPI_File_write_at_all_c(fh: MPI_File, offset: i64, buf: *const c_void, count: i64, datatype: c_int, status: *mut MpiStatus) -> c_int as MPI_File_write_at_all_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { blocking(fh, "MPI_File_write_at_all_c", true, At::Offset(offset), buf, count, datatype, status) }
    }
}

crate::mpi! {
    /// `MPI_File_write_c`.
    fn PMPI_File_write_c(fh: MPI_File, buf: *const c_void, count: i64, datatype: c_int, status: *mut MpiStatus) -> c_int as MPI_File_write_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { blocking(fh, "MPI_File_write_c", true, At::Individual, buf, count, datatype, status) }
    }
}

crate::mpi! {
    /// `MPI_File_write_all_c`.
    fn PMPI_File_write_all_c(fh: MPI_File, buf: *const c_void, count: i64, datatype: c_int, status: *mut MpiStatus) -> c_int as MPI_File_write_all_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { blocking(fh, "MPI_File_write_all_c", true, At::Individual, buf, count, datatype, status) }
    }
}

crate::mpi! {
    /// `MPI_File_write_shared_c`.
    fn PMPI_File_write_shared_c(fh: MPI_File, buf: *const c_void, count: i64, datatype: c_int, status: *mut MpiStatus) -> c_int as MPI_File_write_shared_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { blocking(fh, "MPI_File_write_shared_c", true, At::Shared, buf, count, datatype, status) }
    }
}

crate::mpi! {
    /// `MPI_File_write_ordered_c`.
    fn PMPI_File_write_ordered_c(fh: MPI_File, buf: *const c_void, count: i64, datatype: c_int, status: *mut MpiStatus) -> c_int as MPI_File_write_ordered_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { blocking(fh, "MPI_File_write_ordered_c", true, At::Ordered, buf, count, datatype, status) }
    }
}

crate::mpi! {
    /// `MPI_File_iread_at_c`: complete at once.
    fn PMPI_File_iread_at_c(fh: MPI_File, offset: i64, buf: *mut c_void, count: i64, datatype: c_int, request: *mut c_int) -> c_int as MPI_File_iread_at_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { nonblocking(fh, "MPI_File_iread_at_c", false, At::Offset(offset), buf, count, datatype, request) }
    }
}

crate::mpi! {
    /// `MPI_File_iread_at_all_c`: complete at once.
    fn PMPI_File_iread_at_all_c(fh: MPI_File, offset: i64, buf: *mut c_void, count: i64, datatype: c_int, request: *mut c_int) -> c_int as MPI_File_iread_at_all_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { nonblocking(fh, "MPI_File_iread_at_all_c", false, At::Offset(offset), buf, count, datatype, request) }
    }
}

crate::mpi! {
    /// `MPI_File_iread_c`: complete at once.
    fn PMPI_File_iread_c(fh: MPI_File, buf: *mut c_void, count: i64, datatype: c_int, request: *mut c_int) -> c_int as MPI_File_iread_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { nonblocking(fh, "MPI_File_iread_c", false, At::Individual, buf, count, datatype, request) }
    }
}

crate::mpi! {
    /// `MPI_File_iread_all_c`: complete at once.
    fn PMPI_File_iread_all_c(fh: MPI_File, buf: *mut c_void, count: i64, datatype: c_int, request: *mut c_int) -> c_int as MPI_File_iread_all_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { nonblocking(fh, "MPI_File_iread_all_c", false, At::Individual, buf, count, datatype, request) }
    }
}

crate::mpi! {
    /// `MPI_File_iread_shared_c`: complete at once.
    fn PMPI_File_iread_shared_c(fh: MPI_File, buf: *mut c_void, count: i64, datatype: c_int, request: *mut c_int) -> c_int as MPI_File_iread_shared_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { nonblocking(fh, "MPI_File_iread_shared_c", false, At::Shared, buf, count, datatype, request) }
    }
}

crate::mpi! {
    /// `MPI_File_iwrite_at_c`: complete at once.
    fn PMPI_File_iwrite_at_c(fh: MPI_File, offset: i64, buf: *const c_void, count: i64, datatype: c_int, request: *mut c_int) -> c_int as MPI_File_iwrite_at_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { nonblocking(fh, "MPI_File_iwrite_at_c", true, At::Offset(offset), buf, count, datatype, request) }
    }
}

crate::mpi! {
    /// `MPI_File_iwrite_at_all_c`: complete at once.
    fn PMPI_File_iwrite_at_all_c(fh: MPI_File, offset: i64, buf: *const c_void, count: i64, datatype: c_int, request: *mut c_int) -> c_int as MPI_File_iwrite_at_all_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { nonblocking(fh, "MPI_File_iwrite_at_all_c", true, At::Offset(offset), buf, count, datatype, request) }
    }
}

crate::mpi! {
    /// `MPI_File_iwrite_c`: complete at once.
    fn PMPI_File_iwrite_c(fh: MPI_File, buf: *const c_void, count: i64, datatype: c_int, request: *mut c_int) -> c_int as MPI_File_iwrite_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { nonblocking(fh, "MPI_File_iwrite_c", true, At::Individual, buf, count, datatype, request) }
    }
}

crate::mpi! {
    /// `MPI_File_iwrite_all_c`: complete at once.
    fn PMPI_File_iwrite_all_c(fh: MPI_File, buf: *const c_void, count: i64, datatype: c_int, request: *mut c_int) -> c_int as MPI_File_iwrite_all_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { nonblocking(fh, "MPI_File_iwrite_all_c", true, At::Individual, buf, count, datatype, request) }
    }
}

crate::mpi! {
    /// `MPI_File_iwrite_shared_c`: complete at once.
    fn PMPI_File_iwrite_shared_c(fh: MPI_File, buf: *const c_void, count: i64, datatype: c_int, request: *mut c_int) -> c_int as MPI_File_iwrite_shared_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { nonblocking(fh, "MPI_File_iwrite_shared_c", true, At::Shared, buf, count, datatype, request) }
    }
}

crate::mpi! {
    /// `MPI_File_read_all_begin_c`: the access; its status for the end.
    fn PMPI_File_read_all_begin_c(fh: MPI_File, buf: *mut c_void, count: i64, datatype: c_int) -> c_int as MPI_File_read_all_begin_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { begin(fh, "MPI_File_read_all_begin_c", false, At::Individual, buf, count, datatype) }
    }
}

crate::mpi! {
    /// `MPI_File_read_at_all_begin_c`: the access; its status for the end.
    fn PMPI_File_read_at_all_begin_c(fh: MPI_File, offset: i64, buf: *mut c_void, count: i64, datatype: c_int) -> c_int as MPI_File_read_at_all_begin_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { begin(fh, "MPI_File_read_at_all_begin_c", false, At::Offset(offset), buf, count, datatype) }
    }
}

crate::mpi! {
    /// `MPI_File_read_ordered_begin_c`: the access; its status for the end.
    fn PMPI_File_read_ordered_begin_c(fh: MPI_File, buf: *mut c_void, count: i64, datatype: c_int) -> c_int as MPI_File_read_ordered_begin_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { begin(fh, "MPI_File_read_ordered_begin_c", false, At::Ordered, buf, count, datatype) }
    }
}

crate::mpi! {
    /// `MPI_File_write_all_begin_c`: the access; its status for the end.
    fn PMPI_File_write_all_begin_c(fh: MPI_File, buf: *const c_void, count: i64, datatype: c_int) -> c_int as MPI_File_write_all_begin_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { begin(fh, "MPI_File_write_all_begin_c", true, At::Individual, buf, count, datatype) }
    }
}

crate::mpi! {
    /// `MPI_File_write_at_all_begin_c`: the access; its status for the end.
    fn PMPI_File_write_at_all_begin_c(fh: MPI_File, offset: i64, buf: *const c_void, count: i64, datatype: c_int) -> c_int as MPI_File_write_at_all_begin_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { begin(fh, "MPI_File_write_at_all_begin_c", true, At::Offset(offset), buf, count, datatype) }
    }
}

crate::mpi! {
    /// `MPI_File_write_ordered_begin_c`: the access; its status for the end.
    fn PMPI_File_write_ordered_begin_c(fh: MPI_File, buf: *const c_void, count: i64, datatype: c_int) -> c_int as MPI_File_write_ordered_begin_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { begin(fh, "MPI_File_write_ordered_begin_c", true, At::Ordered, buf, count, datatype) }
    }
}
