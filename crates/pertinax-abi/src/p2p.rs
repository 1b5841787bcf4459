//! Point-to-point: blocking and non-blocking sends and receives, probes,
//! and the requests' waits and tests. Buffers are `count` elements of any
//! committed datatype ([`SendBuf`]/[`RecvBuf`]: a non-contiguous one goes
//! through a packed temporary, which a non-blocking receive keeps in its
//! request until it completes). A receive into a buffer shorter than the
//! message consumes it and fails with `MPI_ERR_TRUNCATE`, as MPI says.
//! Waits, tests and the rest of a request's completion: `complete.rs`.

use std::ffi::{c_int, c_void};

use pertinax::{Comm, Communicator, Rank, Source, Status, Tag, TagMatch, ANY_SOURCE, ANY_TAG};

use crate::check;
use crate::consts::*;
use crate::datatype::{RecvBuf, SendBuf};
use crate::errors::{code_of, raise};
use crate::state::{self, ReqEntry};

mod complete;

pub(crate) use complete::{finish, is_done, progress, settle, Finished};
pub use complete::{PMPI_Wait, PMPI_Waitall};

/// The communicator of handle `comm`, or `MPI_ERR_COMM`.
pub(crate) fn comm_of(comm: c_int) -> Result<Comm, c_int> {
    // `pertinax run --resilient`: the calls without a resilient form
    // refuse a resilient communicator.
    if crate::resilient::refused(comm) {
        return Err(MPI_ERR_UNSUPPORTED_OPERATION);
    }
    entry_comm(comm)
}

/// The plain communicator of handle `comm`'s entry, resilient or not (for
/// the calls that only read it: attributes, `MPI_Comm_test_inter`).
pub(crate) fn entry_comm(comm: c_int) -> Result<Comm, c_int> {
    state::with(|s| s.comm(comm)).flatten().ok_or(MPI_ERR_COMM)
}

/// Runs a call's body; an error class goes to `comm`'s handler.
///
/// Each call is a fault point named after it: `MPI_Allreduce` is
/// `mpi.Allreduce`, `MPIX_Comm_shrink` `mpix.Comm_shrink` (`pertinax run --kill 2@mpi.Allreduce#3` kills rank 2
/// in its third `MPI_Allreduce`).
pub(crate) fn call(comm: c_int, what: &str, f: impl FnOnce() -> Result<(), c_int>) -> c_int {
    if pertinax::faults_planned() {
        let point = match what.strip_prefix("MPIX_") {
            Some(x) => format!("mpix.{x}"),
            None => format!("mpi.{}", what.strip_prefix("MPI_").unwrap_or(what)),
        };
        pertinax::fault_point(&point);
    }
    if let Some(code) = crate::inter::refuse(comm, what) {
        return raise(comm, what, code);
    }
    match f() {
        Ok(()) => MPI_SUCCESS,
        Err(code) => raise(comm, what, code),
    }
}

fn source(src: c_int) -> Result<Source, c_int> {
    match src {
        MPI_ANY_SOURCE => Ok(ANY_SOURCE),
        r if r >= 0 => Ok(Source::from(Rank(r))),
        _ => Err(MPI_ERR_RANK),
    }
}

fn tag_match(tag: c_int) -> TagMatch {
    if tag == MPI_ANY_TAG {
        ANY_TAG
    } else {
        TagMatch::from(Tag(tag))
    }
}

/// A status for `len` bytes from `source` with `tag`.
pub(crate) fn status(source: c_int, tag: c_int, len: usize, error: c_int) -> MpiStatus {
    MpiStatus {
        count_lo: len as u32 as c_int,
        count_hi_and_cancelled: ((len as u64 >> 32) as c_int) << 1,
        source,
        tag,
        error,
    }
}

pub(crate) fn of(st: &Status) -> MpiStatus {
    status(st.source.0, st.tag.0, st.len, MPI_SUCCESS)
}

/// The status of a receive from `MPI_PROC_NULL`.
pub(crate) fn empty() -> MpiStatus {
    status(MPI_PROC_NULL, MPI_ANY_TAG, 0, MPI_SUCCESS)
}

/// MPI's empty status, of a null or inactive request: `MPI_ANY_SOURCE`,
/// `MPI_ANY_TAG`, `MPI_SUCCESS`, no elements, not cancelled.
pub(crate) fn null_status() -> MpiStatus {
    status(MPI_ANY_SOURCE, MPI_ANY_TAG, 0, MPI_SUCCESS)
}

/// Writes `st` to a C status unless it is `MPI_STATUS_IGNORE` (or null).
///
/// # Safety
/// `out` is null, `MPI_STATUS_IGNORE`, or valid for a write.
pub(crate) unsafe fn put_status(out: *mut MpiStatus, st: MpiStatus) {
    if !out.is_null() && out as usize != STATUS_IGNORE {
        // SAFETY: neither null nor the ignore marker: valid by contract.
        unsafe { out.write(st) };
    }
}

/// A C buffer of `len` bytes as a slice (empty when `len` is 0).
///
/// # Safety
/// `buf` is valid for reads of `len` bytes for `'a`.
pub(crate) unsafe fn slice<'a>(buf: *const c_void, len: usize) -> &'a [u8] {
    if len == 0 || buf.is_null() {
        return &[];
    }
    // SAFETY: by the caller's contract.
    unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), len) }
}

crate::mpi! {
    /// `MPI_Send` (standard mode).
    fn PMPI_Send(buf: *const c_void, count: c_int, ty: c_int, dest: c_int, tag: c_int, comm: c_int) -> c_int as MPI_Send fast {
        // SAFETY: forwarded.
        unsafe { crate::fast::send(buf, count, ty, dest, tag, comm) }
    } else {
        if let Some(rc) = crate::resilient::send(buf, count, ty, dest, tag, comm) { return rc; }
        call(comm, "MPI_Send", || {
            let (c, t, n) = check::send(buf, count, ty, dest, tag, comm)?;
            if dest == MPI_PROC_NULL {
                return Ok(());
            }
            // SAFETY: MPI's contract: `buf` holds `count` elements of `ty`.
            let data = unsafe { SendBuf::new(buf, n, &t) }?;
            c.send_bytes(data.bytes(), Rank(dest), Tag(tag)).map(drop).map_err(|e| code_of(&e))
        })
    }
}

crate::mpi! {
    /// `MPI_Recv`.
    fn PMPI_Recv(buf: *mut c_void, count: c_int, ty: c_int, src: c_int, tag: c_int, comm: c_int, st: *mut MpiStatus) -> c_int as MPI_Recv fast {
        // SAFETY: forwarded.
        unsafe { crate::fast::recv(buf, count, ty, src, tag, comm, st) }
    } else {
        if let Some(rc) = crate::resilient::recv(buf, count, ty, src, tag, comm, st) { return rc; }
        call(comm, "MPI_Recv", || {
            let (c, t, n) = check::recv(buf, count, ty, src, tag, comm)?;
            if src == MPI_PROC_NULL {
                // SAFETY: MPI's contract for `st`.
                unsafe { put_status(st, empty()) };
                return Ok(());
            }
            // SAFETY: MPI's contract: `buf` holds `count` elements of `ty`.
            let mut data = unsafe { RecvBuf::new(buf, n, &t) }?;
            let got = c.recv_bytes(data.bytes_mut(), t.recv_elem(), source(src)?, tag_match(tag));
            match got {
                Ok(Some(s)) => {
                    data.finish(s.len);
                    // SAFETY: MPI's contract for `st`.
                    unsafe { put_status(st, of(&s)) };
                    Ok(())
                }
                Ok(None) => Err(MPI_ERR_INTERN),
                Err(e) => Err(code_of(&e)),
            }
        })
    }
}

crate::mpi! {
    /// `MPI_Sendrecv`.
    fn PMPI_Sendrecv(sendbuf: *const c_void, sendcount: c_int, sendtype: c_int, dest: c_int, sendtag: c_int,
        recvbuf: *mut c_void, recvcount: c_int, recvtype: c_int, src: c_int, recvtag: c_int,
        comm: c_int, st: *mut MpiStatus) -> c_int as MPI_Sendrecv {
        if let Some(rc) = crate::resilient::sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, src, recvtag, comm, st) { return rc; }
        let checked = check::send(sendbuf, sendcount, sendtype, dest, sendtag, comm)
            .and_then(|_| check::recv(recvbuf, recvcount, recvtype, src, recvtag, comm));
        if let Err(code) = checked {
            return raise(comm, "MPI_Sendrecv", code);
        }
        let mut r = MPI_REQUEST_NULL;
        // SAFETY: MPI's contract for the receive buffer, forwarded.
        let rc = unsafe { PMPI_Irecv(recvbuf, recvcount, recvtype, src, recvtag, comm, &mut r) };
        if rc != MPI_SUCCESS {
            return rc;
        }
        // SAFETY: MPI's contract for the send buffer, forwarded.
        let rc = unsafe { PMPI_Send(sendbuf, sendcount, sendtype, dest, sendtag, comm) };
        // SAFETY: `r` is the request just made; `st` is the caller's.
        let rw = unsafe { PMPI_Wait(&mut r, st) };
        if rc != MPI_SUCCESS { rc } else { rw }
    }
}

crate::mpi! {
    /// `MPI_Probe`.
    fn PMPI_Probe(src: c_int, tag: c_int, comm: c_int, st: *mut MpiStatus) -> c_int as MPI_Probe {
        if let Some(rc) = crate::resilient::probe(src, tag, comm, std::ptr::null_mut(), st, true) { return rc; }
        call(comm, "MPI_Probe", || {
            let c = check::probe(src, tag, comm)?;
            if src == MPI_PROC_NULL {
                // SAFETY: MPI's contract for `st`.
                unsafe { put_status(st, empty()) };
                return Ok(());
            }
            match Communicator::probe(&c, source(src)?, tag_match(tag)) {
                Ok(Some(s)) => {
                    // SAFETY: MPI's contract for `st`.
                    unsafe { put_status(st, of(&s)) };
                    Ok(())
                }
                Ok(None) => Err(MPI_ERR_INTERN),
                Err(e) => Err(code_of(&e)),
            }
        })
    }
}

crate::mpi! {
    /// `MPI_Iprobe`.
    fn PMPI_Iprobe(src: c_int, tag: c_int, comm: c_int, flag: *mut c_int, st: *mut MpiStatus) -> c_int as MPI_Iprobe {
        if let Some(rc) = crate::resilient::probe(src, tag, comm, flag, st, false) { return rc; }
        call(comm, "MPI_Iprobe", || {
            let c = check::probe(src, tag, comm)?;
            if flag.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let found = if src == MPI_PROC_NULL {
                Some(empty())
            } else {
                Communicator::iprobe(&c, source(src)?, tag_match(tag))
                    .map_err(|e| code_of(&e))?
                    .map(|s| of(&s))
            };
            // SAFETY: checked non-null; MPI's contract for `flag` and `st`.
            unsafe {
                *flag = c_int::from(found.is_some());
                if let Some(s) = found {
                    put_status(st, s);
                }
            }
            Ok(())
        })
    }
}

crate::mpi! {
    /// `MPI_Get_count`: `MPI_UNDEFINED` when the length is not a whole
    /// number of elements.
    fn PMPI_Get_count(st: *const MpiStatus, ty: c_int, count: *mut c_int) -> c_int as MPI_Get_count {
        let size = match crate::datatype::layout(ty) {
            Ok(l) => l.size,
            Err(code) => return raise(MPI_COMM_WORLD, "MPI_Get_count", code),
        };
        if st.is_null() || st as usize == STATUS_IGNORE || count.is_null() {
            return raise(MPI_COMM_WORLD, "MPI_Get_count", MPI_ERR_ARG);
        }
        // SAFETY: checked; MPI's contract makes `st` readable.
        let s = unsafe { st.read() };
        let len = (s.count_lo as u32 as u64) | (((s.count_hi_and_cancelled >> 1) as u64) << 32);
        let n = if size == 0 {
            0
        } else if len.is_multiple_of(size as u64) {
            c_int::try_from(len / size as u64).unwrap_or(MPI_UNDEFINED)
        } else {
            MPI_UNDEFINED
        };
        // SAFETY: checked non-null; MPI's contract makes it writable.
        unsafe { *count = n };
        MPI_SUCCESS
    }
}

/// Registers `e`; its handle.
fn add_request(e: ReqEntry) -> Result<c_int, c_int> {
    state::with(|s| REQUEST_DIRECT | state::insert(&mut s.requests, e) as c_int)
        .ok_or(MPI_ERR_OTHER)
}

crate::mpi! {
    /// `MPI_Isend`.
    fn PMPI_Isend(buf: *const c_void, count: c_int, ty: c_int, dest: c_int, tag: c_int, comm: c_int, req: *mut c_int) -> c_int as MPI_Isend {
        if let Some(r) = crate::resilient::lookup(comm) {
            // SAFETY: MPI's contract, forwarded.
            return call(comm, "MPI_Isend", || unsafe { crate::resilient_req::isend(&r, buf, count, ty, dest, tag, comm, req) });
        }
        call(comm, "MPI_Isend", || {
            let (c, t, n) = check::send(buf, count, ty, dest, tag, comm)?;
            if req.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let e = if dest == MPI_PROC_NULL {
                ReqEntry::Done(empty())
            } else {
                // SAFETY: MPI's contract: `buf` stays valid and unwritten
                // until the request completes.
                let (lent, keep) = unsafe { SendBuf::new(buf, n, &t) }?.lend();
                let r = c.isend_lent(lent, Rank(dest), Tag(tag)).map_err(|e| code_of(&e))?;
                ReqEntry::Pending { req: r, comm, recv: false, keep, unpack: None }
            };
            // SAFETY: checked non-null.
            unsafe { *req = add_request(e)? };
            Ok(())
        })
    }
}

crate::mpi! {
    /// `MPI_Irecv`.
    fn PMPI_Irecv(buf: *mut c_void, count: c_int, ty: c_int, src: c_int, tag: c_int, comm: c_int, req: *mut c_int) -> c_int as MPI_Irecv {
        if let Some(r) = crate::resilient::lookup(comm) {
            // SAFETY: MPI's contract, forwarded.
            return call(comm, "MPI_Irecv", || unsafe { crate::resilient_req::irecv(&r, buf, count, ty, src, tag, comm, req) });
        }
        call(comm, "MPI_Irecv", || {
            let (c, t, n) = check::recv(buf, count, ty, src, tag, comm)?;
            if req.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let e = if src == MPI_PROC_NULL {
                ReqEntry::Done(empty())
            } else {
                let src = source(src)?;
                // SAFETY: MPI's contract: `buf` stays valid and untouched
                // until the request completes.
                let mut into = unsafe { RecvBuf::new(buf, n, &t) }?;
                let lent = into.lend();
                let r = c.irecv_lent(lent, t.recv_elem(), src, tag_match(tag)).map_err(|e| code_of(&e))?;
                let unpack = into.staged().then_some(into);
                ReqEntry::Pending { req: r, comm, recv: true, keep: None, unpack }
            };
            // SAFETY: checked non-null.
            unsafe { *req = add_request(e)? };
            Ok(())
        })
    }
}
