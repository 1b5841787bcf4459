//! The data calls with `int` counts: explicit offsets, the individual
//! and the shared pointer, ordered, their `_all`, split (`_begin`/`_end`)
//! and non-blocking forms (complete at once: a done request). Each is one
//! line over [`blocking`], [`nonblocking`], [`begin`] or [`end`]; the
//! `_c` forms are in `calls_c.rs`.

use std::ffi::{c_int, c_void};

use super::access::{allgather, bcast, done_request, may, status, transfer};
use super::{call, with, Entry};
use crate::consts::*;
use crate::datatype::usable;
use crate::p2p::put_status;

/// Where an access is in the file.
#[derive(Debug, Clone, Copy)]
pub(crate) enum At {
    /// An explicit offset, in etypes.
    Offset(i64),
    Individual,
    Shared,
    /// The shared pointer, the processes in rank order (collective).
    Ordered,
}

/// Runs an access: `count` elements of `ty` at `buf`; its status.
///
/// # Safety
/// `buf` holds `count` elements of `ty` (MPI's contract).
unsafe fn run(
    e: &Entry,
    write: bool,
    at: At,
    buf: *mut c_void,
    count: i64,
    ty: c_int,
) -> Result<MpiStatus, c_int> {
    let checked = usable(ty).and_then(|t| Ok((crate::check::count(count)?, t)));
    if let At::Ordered = at {
        // SAFETY: forwarded.
        return unsafe { ordered(e, write, buf, checked) };
    }
    let (n, t) = checked?;
    with(e, |g| {
        let sequential = g.amode & MPI_MODE_SEQUENTIAL != 0;
        let moved = match at {
            At::Offset(_) | At::Individual if sequential => {
                return Err(MPI_ERR_UNSUPPORTED_OPERATION)
            }
            // SAFETY: forwarded.
            At::Offset(off) => unsafe { transfer(g, write, off, buf, n, &t) }?,
            At::Individual => {
                let off = g.pos;
                // SAFETY: forwarded.
                let moved = unsafe { transfer(g, write, off, buf, n, &t) }?;
                g.pos = off + (moved / g.view.esize) as i64;
                moved
            }
            At::Shared | At::Ordered => {
                may(g, write)?;
                let want = (t.bytes(n)? as u64 / g.view.esize) as i64;
                let off = g.shared.fetch_add(want)?;
                // SAFETY: forwarded.
                unsafe { transfer(g, write, off, buf, n, &t) }?
            }
        };
        Ok(status(moved))
    })
}

/// An ordered access: every process's size in etypes (0 for one whose
/// arguments are wrong), rank 0 moves the shared pointer past them all
/// and sends where it was, each accesses its part in rank order.
///
/// # Safety
/// As [`run`].
unsafe fn ordered(
    e: &Entry,
    write: bool,
    buf: *mut c_void,
    checked: Result<(usize, crate::datatype::Ty), c_int>,
) -> Result<MpiStatus, c_int> {
    let (comm, rank, esize) = with(e, |g| Ok((g.comm, g.rank, g.view.esize)))?;
    let mine = checked.and_then(|(n, t)| {
        with(e, |g| may(g, write))?;
        let want = (t.bytes(n)? as u64 / esize) as i64;
        Ok((n, t, want))
    });
    let all = allgather(comm, mine.as_ref().map_or(0, |m| m.2))?;
    let mut msg = [0u8; 12];
    if rank == 0 {
        let total: i64 = all.iter().sum();
        let (code, base) = match with(e, |g| g.shared.fetch_add(total)) {
            Ok(b) => (MPI_SUCCESS, b),
            Err(c) => (c, 0),
        };
        msg[..4].copy_from_slice(&code.to_ne_bytes());
        msg[4..].copy_from_slice(&base.to_ne_bytes());
    }
    bcast(comm, &mut msg)?;
    super::ok(c_int::from_ne_bytes([msg[0], msg[1], msg[2], msg[3]]))?;
    let mut b8 = [0u8; 8];
    b8.copy_from_slice(&msg[4..]);
    let base = i64::from_ne_bytes(b8);
    let (n, t, _) = mine?;
    let off = base + all[..rank as usize].iter().sum::<i64>();
    // SAFETY: forwarded.
    let moved = with(e, |g| unsafe { transfer(g, write, off, buf, n, &t) })?;
    Ok(status(moved))
}

/// A blocking access; its status to `st`.
///
/// # Safety
/// MPI's contract for the arguments.
#[allow(clippy::too_many_arguments)] // the C call's arguments, and which call
pub(crate) unsafe fn blocking(
    fh: MPI_File,
    what: &str,
    write: bool,
    at: At,
    buf: *const c_void,
    count: i64,
    ty: c_int,
    st: *mut MpiStatus,
) -> c_int {
    call(fh, what, |e| {
        // SAFETY: forwarded.
        let s = unsafe { run(e, write, at, buf.cast_mut(), count, ty) }?;
        // SAFETY: MPI's contract for `st`.
        unsafe { put_status(st, s) };
        Ok(())
    })
}

/// A non-blocking access: done at once, a complete request to `req`.
///
/// # Safety
/// MPI's contract for the arguments.
#[allow(clippy::too_many_arguments)] // the C call's arguments, and which call
pub(crate) unsafe fn nonblocking(
    fh: MPI_File,
    what: &str,
    write: bool,
    at: At,
    buf: *const c_void,
    count: i64,
    ty: c_int,
    req: *mut c_int,
) -> c_int {
    call(fh, what, |e| {
        if req.is_null() {
            return Err(MPI_ERR_ARG);
        }
        // SAFETY: forwarded.
        let s = unsafe { run(e, write, at, buf.cast_mut(), count, ty) }?;
        // SAFETY: MPI's contract for `req`.
        unsafe { done_request(req, s) }
    })
}

/// The first half of a split collective: the access, its status kept
/// for the end (one split collective at a time per file).
///
/// # Safety
/// MPI's contract for the arguments.
pub(crate) unsafe fn begin(
    fh: MPI_File,
    what: &str,
    write: bool,
    at: At,
    buf: *const c_void,
    count: i64,
    ty: c_int,
) -> c_int {
    call(fh, what, |e| {
        if with(e, |g| Ok(g.split.is_some()))? {
            return Err(MPI_ERR_OTHER);
        }
        // SAFETY: forwarded.
        let s = unsafe { run(e, write, at, buf.cast_mut(), count, ty) }?;
        with(e, |g| {
            g.split = Some(s);
            Ok(())
        })
    })
}

/// The second half: the status kept by [`begin`].
///
/// # Safety
/// MPI's contract for `st`.
pub(crate) unsafe fn end(fh: MPI_File, what: &str, st: *mut MpiStatus) -> c_int {
    call(fh, what, |e| {
        let s = with(e, |g| g.split.take().ok_or(MPI_ERR_OTHER))?;
        // SAFETY: MPI's contract for `st`.
        unsafe { put_status(st, s) };
        Ok(())
    })
}

crate::mpi! {
    /// `MPI_File_read_at`.
    fn PMPI_File_read_at(fh: MPI_File, offset: i64, buf: *mut c_void, count: c_int, datatype: c_int, status: *mut MpiStatus) -> c_int as MPI_File_read_at {
        // SAFETY: MPI's contract, forwarded.
        unsafe { blocking(fh, "MPI_File_read_at", false, At::Offset(offset), buf, i64::from(count), datatype, status) }
    }
}

crate::mpi! {
    /// `MPI_File_read_at_all`.
    fn PMPI_File_read_at_all(fh: MPI_File, offset: i64, buf: *mut c_void, count: c_int, datatype: c_int, status: *mut MpiStatus) -> c_int as MPI_File_read_at_all {
        // SAFETY: MPI's contract, forwarded.
        unsafe { blocking(fh, "MPI_File_read_at_all", false, At::Offset(offset), buf, i64::from(count), datatype, status) }
    }
}

crate::mpi! {
    /// `MPI_File_read`.
    fn PMPI_File_read(fh: MPI_File, buf: *mut c_void, count: c_int, datatype: c_int, status: *mut MpiStatus) -> c_int as MPI_File_read {
        // SAFETY: MPI's contract, forwarded.
        unsafe { blocking(fh, "MPI_File_read", false, At::Individual, buf, i64::from(count), datatype, status) }
    }
}

crate::mpi! {
    /// `MPI_File_read_all`.
    fn PMPI_File_read_all(fh: MPI_File, buf: *mut c_void, count: c_int, datatype: c_int, status: *mut MpiStatus) -> c_int as MPI_File_read_all {
        // SAFETY: MPI's contract, forwarded.
        unsafe { blocking(fh, "MPI_File_read_all", false, At::Individual, buf, i64::from(count), datatype, status) }
    }
}

crate::mpi! {
    /// `MPI_File_read_shared`.
    fn PMPI_File_read_shared(fh: MPI_File, buf: *mut c_void, count: c_int, datatype: c_int, status: *mut MpiStatus) -> c_int as MPI_File_read_shared {
        // SAFETY: MPI's contract, forwarded.
        unsafe { blocking(fh, "MPI_File_read_shared", false, At::Shared, buf, i64::from(count), datatype, status) }
    }
}

crate::mpi! {
    /// `MPI_File_read_ordered`.
    fn PMPI_File_read_ordered(fh: MPI_File, buf: *mut c_void, count: c_int, datatype: c_int, status: *mut MpiStatus) -> c_int as MPI_File_read_ordered {
        // SAFETY: MPI's contract, forwarded.
        unsafe { blocking(fh, "MPI_File_read_ordered", false, At::Ordered, buf, i64::from(count), datatype, status) }
    }
}

crate::mpi! {
    /// `MPI_File_write_at`.
    fn PMPI_File_write_at(fh: MPI_File, offset: i64, buf: *const c_void, count: c_int, datatype: c_int, status: *mut MpiStatus) -> c_int as MPI_File_write_at {
        // SAFETY: MPI's contract, forwarded.
        unsafe { blocking(fh, "MPI_File_write_at", true, At::Offset(offset), buf, i64::from(count), datatype, status) }
    }
}

crate::mpi! {
    /// `MPI_File_write_at_all`.
    fn PMPI_File_write_at_all(fh: MPI_File, offset: i64, buf: *const c_void, count: c_int, datatype: c_int, status: *mut MpiStatus) -> c_int as MPI_File_write_at_all {
        // SAFETY: MPI's contract, forwarded.
        unsafe { blocking(fh, "MPI_File_write_at_all", true, At::Offset(offset), buf, i64::from(count), datatype, status) }
    }
}

crate::mpi! {
    /// `MPI_File_write`.
    fn PMPI_File_write(fh: MPI_File, buf: *const c_void, count: c_int, datatype: c_int, status: *mut MpiStatus) -> c_int as MPI_File_write {
        // SAFETY: MPI's contract, forwarded.
        unsafe { blocking(fh, "MPI_File_write", true, At::Individual, buf, i64::from(count), datatype, status) }
    }
}

crate::mpi! {
    /// `MPI_File_write_all`.
    fn PMPI_File_write_all(fh: MPI_File, buf: *const c_void, count: c_int, datatype: c_int, status: *mut MpiStatus) -> c_int as MPI_File_write_all {
        // SAFETY: MPI's contract, forwarded.
        unsafe { blocking(fh, "MPI_File_write_all", true, At::Individual, buf, i64::from(count), datatype, status) }
    }
}

crate::mpi! {
    /// `MPI_File_write_shared`.
    fn PMPI_File_write_shared(fh: MPI_File, buf: *const c_void, count: c_int, datatype: c_int, status: *mut MpiStatus) -> c_int as MPI_File_write_shared {
        // SAFETY: MPI's contract, forwarded.
        unsafe { blocking(fh, "MPI_File_write_shared", true, At::Shared, buf, i64::from(count), datatype, status) }
    }
}

crate::mpi! {
    /// `MPI_File_write_ordered`.
    fn PMPI_File_write_ordered(fh: MPI_File, buf: *const c_void, count: c_int, datatype: c_int, status: *mut MpiStatus) -> c_int as MPI_File_write_ordered {
        // SAFETY: MPI's contract, forwarded.
        unsafe { blocking(fh, "MPI_File_write_ordered", true, At::Ordered, buf, i64::from(count), datatype, status) }
    }
}

crate::mpi! {
    /// `MPI_File_iread_at`: complete at once.
    fn PMPI_File_iread_at(fh: MPI_File, offset: i64, buf: *mut c_void, count: c_int, datatype: c_int, request: *mut c_int) -> c_int as MPI_File_iread_at {
        // SAFETY: MPI's contract, forwarded.
        unsafe { nonblocking(fh, "MPI_File_iread_at", false, At::Offset(offset), buf, i64::from(count), datatype, request) }
    }
}

crate::mpi! {
    /// `MPI_File_iread_at_all`: complete at once.
    fn PMPI_File_iread_at_all(fh: MPI_File, offset: i64, buf: *mut c_void, count: c_int, datatype: c_int, request: *mut c_int) -> c_int as MPI_File_iread_at_all {
        // SAFETY: MPI's contract, forwarded.
        unsafe { nonblocking(fh, "MPI_File_iread_at_all", false, At::Offset(offset), buf, i64::from(count), datatype, request) }
    }
}

crate::mpi! {
    /// `MPI_File_iread`: complete at once.
    fn PMPI_File_iread(fh: MPI_File, buf: *mut c_void, count: c_int, datatype: c_int, request: *mut c_int) -> c_int as MPI_File_iread {
        // SAFETY: MPI's contract, forwarded.
        unsafe { nonblocking(fh, "MPI_File_iread", false, At::Individual, buf, i64::from(count), datatype, request) }
    }
}

crate::mpi! {
    /// `MPI_File_iread_all`: complete at once.
    fn PMPI_File_iread_all(fh: MPI_File, buf: *mut c_void, count: c_int, datatype: c_int, request: *mut c_int) -> c_int as MPI_File_iread_all {
        // SAFETY: MPI's contract, forwarded.
        unsafe { nonblocking(fh, "MPI_File_iread_all", false, At::Individual, buf, i64::from(count), datatype, request) }
    }
}

crate::mpi! {
    /// `MPI_File_iread_shared`: complete at once.
    fn PMPI_File_iread_shared(fh: MPI_File, buf: *mut c_void, count: c_int, datatype: c_int, request: *mut c_int) -> c_int as MPI_File_iread_shared {
        // SAFETY: MPI's contract, forwarded.
        unsafe { nonblocking(fh, "MPI_File_iread_shared", false, At::Shared, buf, i64::from(count), datatype, request) }
    }
}

crate::mpi! {
    /// `MPI_File_iwrite_at`: complete at once.
    fn PMPI_File_iwrite_at(fh: MPI_File, offset: i64, buf: *const c_void, count: c_int, datatype: c_int, request: *mut c_int) -> c_int as MPI_File_iwrite_at {
        // SAFETY: MPI's contract, forwarded.
        unsafe { nonblocking(fh, "MPI_File_iwrite_at", true, At::Offset(offset), buf, i64::from(count), datatype, request) }
    }
}

crate::mpi! {
    /// `MPI_File_iwrite_at_all`: complete at once.
    fn PMPI_File_iwrite_at_all(fh: MPI_File, offset: i64, buf: *const c_void, count: c_int, datatype: c_int, request: *mut c_int) -> c_int as MPI_File_iwrite_at_all {
        // SAFETY: MPI's contract, forwarded.
        unsafe { nonblocking(fh, "MPI_File_iwrite_at_all", true, At::Offset(offset), buf, i64::from(count), datatype, request) }
    }
}

crate::mpi! {
    /// `MPI_File_iwrite`: complete at once.
    fn PMPI_File_iwrite(fh: MPI_File, buf: *const c_void, count: c_int, datatype: c_int, request: *mut c_int) -> c_int as MPI_File_iwrite {
        // SAFETY: MPI's contract, forwarded.
        unsafe { nonblocking(fh, "MPI_File_iwrite", true, At::Individual, buf, i64::from(count), datatype, request) }
    }
}

crate::mpi! {
    /// `MPI_File_iwrite_all`: complete at once.
    fn PMPI_File_iwrite_all(fh: MPI_File, buf: *const c_void, count: c_int, datatype: c_int, request: *mut c_int) -> c_int as MPI_File_iwrite_all {
        // SAFETY: MPI's contract, forwarded.
        unsafe { nonblocking(fh, "MPI_File_iwrite_all", true, At::Individual, buf, i64::from(count), datatype, request) }
    }
}

crate::mpi! {
    /// `MPI_File_iwrite_shared`: complete at once.
    fn PMPI_File_iwrite_shared(fh: MPI_File, buf: *const c_void, count: c_int, datatype: c_int, request: *mut c_int) -> c_int as MPI_File_iwrite_shared {
        // SAFETY: MPI's contract, forwarded.
        unsafe { nonblocking(fh, "MPI_File_iwrite_shared", true, At::Shared, buf, i64::from(count), datatype, request) }
    }
}

crate::mpi! {
    /// `MPI_File_read_all_begin`: the access; its status for the end.
    fn PMPI_File_read_all_begin(fh: MPI_File, buf: *mut c_void, count: c_int, datatype: c_int) -> c_int as MPI_File_read_all_begin {
        // SAFETY: MPI's contract, forwarded.
        unsafe { begin(fh, "MPI_File_read_all_begin", false, At::Individual, buf, i64::from(count), datatype) }
    }
}

crate::mpi! {
    /// `MPI_File_read_all_end`: the status of the begin.
    fn PMPI_File_read_all_end(fh: MPI_File, _buf: *mut c_void, status: *mut MpiStatus) -> c_int as MPI_File_read_all_end {
        // SAFETY: MPI's contract, forwarded.
        unsafe { end(fh, "MPI_File_read_all_end", status) }
    }
}

crate::mpi! {
    /// `MPI_File_read_at_all_begin`: the access; its status for the end.
    fn PMPI_File_read_at_all_begin(fh: MPI_File, offset: i64, buf: *mut c_void, count: c_int, datatype: c_int) -> c_int as MPI_File_read_at_all_begin {
        // SAFETY: MPI's contract, forwarded.
        unsafe { begin(fh, "MPI_File_read_at_all_begin", false, At::Offset(offset), buf, i64::from(count), datatype) }
    }
}

crate::mpi! {
    /// `MPI_File_read_at_all_end`: the status of the begin.
    fn PMPI_File_read_at_all_end(fh: MPI_File, _buf: *mut c_void, status: *mut MpiStatus) -> c_int as MPI_File_read_at_all_end {
        // SAFETY: MPI's contract, forwarded.
        unsafe { end(fh, "MPI_File_read_at_all_end", status) }
    }
}

crate::mpi! {
    /// `MPI_File_read_ordered_begin`: the access; its status for the end.
    fn PMPI_File_read_ordered_begin(fh: MPI_File, buf: *mut c_void, count: c_int, datatype: c_int) -> c_int as MPI_File_read_ordered_begin {
        // SAFETY: MPI's contract, forwarded.
        unsafe { begin(fh, "MPI_File_read_ordered_begin", false, At::Ordered, buf, i64::from(count), datatype) }
    }
}

crate::mpi! {
    /// `MPI_File_read_ordered_end`: the status of the begin.
    fn PMPI_File_read_ordered_end(fh: MPI_File, _buf: *mut c_void, status: *mut MpiStatus) -> c_int as MPI_File_read_ordered_end {
        // SAFETY: MPI's contract, forwarded.
        unsafe { end(fh, "MPI_File_read_ordered_end", status) }
    }
}

crate::mpi! {
    /// `MPI_File_write_all_begin`: the access; its status for the end.
    fn PMPI_File_write_all_begin(fh: MPI_File, buf: *const c_void, count: c_int, datatype: c_int) -> c_int as MPI_File_write_all_begin {
        // SAFETY: MPI's contract, forwarded.
        unsafe { begin(fh, "MPI_File_write_all_begin", true, At::Individual, buf, i64::from(count), datatype) }
    }
}

crate::mpi! {
    /// `MPI_File_write_all_end`: the status of the begin.
    fn PMPI_File_write_all_end(fh: MPI_File, _buf: *const c_void, status: *mut MpiStatus) -> c_int as MPI_File_write_all_end {
        // SAFETY: MPI's contract, forwarded.
        unsafe { end(fh, "MPI_File_write_all_end", status) }
    }
}

crate::mpi! {
    /// `MPI_File_write_at_all_begin`: the access; its status for the end.
    fn PMPI_File_write_at_all_begin(fh: MPI_File, offset: i64, buf: *const c_void, count: c_int, datatype: c_int) -> c_int as MPI_File_write_at_all_begin {
        // SAFETY: MPI's contract, forwarded.
        unsafe { begin(fh, "MPI_File_write_at_all_begin", true, At::Offset(offset), buf, i64::from(count), datatype) }
    }
}

crate::mpi! {
    /// `MPI_File_write_at_all_end`: the status of the begin.
    fn PMPI_File_write_at_all_end(fh: MPI_File, _buf: *const c_void, status: *mut MpiStatus) -> c_int as MPI_File_write_at_all_end {
        // SAFETY: MPI's contract, forwarded.
        unsafe { end(fh, "MPI_File_write_at_all_end", status) }
    }
}

crate::mpi! {
    /// `MPI_File_write_ordered_begin`: the access; its status for the end.
    fn PMPI_File_write_ordered_begin(fh: MPI_File, buf: *const c_void, count: c_int, datatype: c_int) -> c_int as MPI_File_write_ordered_begin {
        // SAFETY: MPI's contract, forwarded.
        unsafe { begin(fh, "MPI_File_write_ordered_begin", true, At::Ordered, buf, i64::from(count), datatype) }
    }
}

crate::mpi! {
    /// `MPI_File_write_ordered_end`: the status of the begin.
    fn PMPI_File_write_ordered_end(fh: MPI_File, _buf: *const c_void, status: *mut MpiStatus) -> c_int as MPI_File_write_ordered_end {
        // SAFETY: MPI's contract, forwarded.
        unsafe { end(fh, "MPI_File_write_ordered_end", status) }
    }
}
