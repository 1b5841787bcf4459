//! Send modes beyond standard: buffered (`MPI_Bsend`, `MPI_Ibsend`, with
//! the buffers of `buffer.rs`), ready (`MPI_Rsend`, which MPI lets an
//! implementation run as a standard send), synchronous (`MPI_Ssend`,
//! `MPI_Issend`: pertinax's `CommunicatorExt::ssend` / `Comm::issend_lent`, which
//! complete only once the receiver matched the message, and fail with
//! `MPIX_ERR_PROC_FAILED` when it dies first), and `MPI_Sendrecv_replace`.

use std::ffi::{c_int, c_void};

use pertinax::CommunicatorExt as _;
use pertinax::{Rank, Tag};

use crate::check;
use crate::consts::*;
use crate::datatype::{count_of, usable, SendBuf};
use crate::errors::{code_of, raise};
use crate::p2p::{call, comm_of, empty, PMPI_Recv, PMPI_Send};
use crate::state::{self, ReqEntry};

/// A buffered send's body: `MPI_ERR_BUFFER` unless the attached buffer
/// (`comm`'s, else the process's: `buffer.rs`) could hold the message and
/// `MPI_BSEND_OVERHEAD`.
///
/// # Safety
/// MPI's contract: `buf` holds `count` elements of `ty`.
unsafe fn bsend(
    buf: *const c_void,
    count: c_int,
    ty: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
) -> Result<(), c_int> {
    let (c, t, n) = check::send(buf, count, ty, dest, tag, comm)?;
    let len = t.bytes(n)?;
    if len > crate::buffer::room(comm) {
        return Err(MPI_ERR_BUFFER);
    }
    if dest == MPI_PROC_NULL {
        return Ok(());
    }
    // SAFETY: by the caller's contract.
    let data = unsafe { SendBuf::new(buf, n, &t) }?;
    c.bsend(data.bytes(), Rank(dest), Tag(tag))
        .map(drop)
        .map_err(|e| code_of(&e))
}

/// Registers a request complete already (a send whose data is on its
/// way from a copy).
fn done_request(req: *mut c_int) -> Result<(), c_int> {
    if req.is_null() {
        return Err(MPI_ERR_ARG);
    }
    let h = state::with(|s| {
        REQUEST_DIRECT | state::insert(&mut s.requests, ReqEntry::Done(empty())) as c_int
    })
    .ok_or(MPI_ERR_OTHER)?;
    // SAFETY: checked non-null.
    unsafe { *req = h };
    Ok(())
}

crate::mpi! {
    /// `MPI_Bsend`: `MPI_ERR_BUFFER` unless an attached buffer could hold
    /// the message and `MPI_BSEND_OVERHEAD`.
    fn PMPI_Bsend(buf: *const c_void, count: c_int, ty: c_int, dest: c_int, tag: c_int, comm: c_int) -> c_int as MPI_Bsend {
        // SAFETY: MPI's contract, forwarded.
        call(comm, "MPI_Bsend", || unsafe { bsend(buf, count, ty, dest, tag, comm) })
    }
}

crate::mpi! {
    /// `MPI_Ibsend`: the buffered send, whose request is complete at once
    /// (the message leaves from a copy).
    fn PMPI_Ibsend(buf: *const c_void, count: c_int, ty: c_int, dest: c_int, tag: c_int, comm: c_int, req: *mut c_int) -> c_int as MPI_Ibsend {
        call(comm, "MPI_Ibsend", || {
            if req.is_null() {
                return Err(MPI_ERR_ARG);
            }
            // SAFETY: MPI's contract, forwarded.
            unsafe { bsend(buf, count, ty, dest, tag, comm) }?;
            done_request(req)
        })
    }
}

crate::mpi! {
    /// `MPI_Rsend`: a standard send (MPI allows it).
    fn PMPI_Rsend(buf: *const c_void, count: c_int, ty: c_int, dest: c_int, tag: c_int, comm: c_int) -> c_int as MPI_Rsend {
        // SAFETY: MPI's contract, forwarded.
        unsafe { PMPI_Send(buf, count, ty, dest, tag, comm) }
    }
}

crate::mpi! {
    /// `MPI_Sendrecv_replace`: the message goes out from a copy, the
    /// reply lands in the buffer.
    fn PMPI_Sendrecv_replace(buf: *mut c_void, count: c_int, ty: c_int, dest: c_int, sendtag: c_int, src: c_int, recvtag: c_int, comm: c_int, st: *mut MpiStatus) -> c_int as MPI_Sendrecv_replace {
        let checked = check::send(buf, count, ty, dest, sendtag, comm)
            .and_then(|_| check::recv(buf, count, ty, src, recvtag, comm));
        if let Err(code) = checked {
            return raise(comm, "MPI_Sendrecv_replace", code);
        }
        // SAFETY: MPI's contract: `buf` holds `count` elements.
        let copy = match usable(ty).and_then(|t| unsafe { SendBuf::new(buf, count_of(count)?, &t) }) {
            Ok(b) => b,
            Err(code) => return raise(comm, "MPI_Sendrecv_replace", code),
        };
        let c = match comm_of(comm) {
            Ok(c) => c,
            Err(code) => return raise(comm, "MPI_Sendrecv_replace", code),
        };
        // The copy goes out in the background, so the receive below can
        // take the reply whatever the order of the peers.
        if dest != MPI_PROC_NULL {
            if let Err(e) = c.bsend(copy.bytes(), Rank(dest), Tag(sendtag)) {
                return raise(comm, "MPI_Sendrecv_replace", code_of(&e));
            }
        }
        // SAFETY: MPI's contract, forwarded.
        unsafe { PMPI_Recv(buf, count, ty, src, recvtag, comm, st) }
    }
}

crate::mpi! {
    /// `MPI_Ssend`: returns once the receiver matched the message.
    fn PMPI_Ssend(buf: *const c_void, count: c_int, ty: c_int, dest: c_int, tag: c_int, comm: c_int) -> c_int as MPI_Ssend {
        call(comm, "MPI_Ssend", || {
            let (c, t, n) = check::send(buf, count, ty, dest, tag, comm)?;
            if dest == MPI_PROC_NULL {
                return Ok(());
            }
            // SAFETY: MPI's contract: `buf` holds `count` elements.
            let data = unsafe { SendBuf::new(buf, n, &t) }?;
            c.ssend(data.bytes(), Rank(dest), Tag(tag))
                .map(drop)
                .map_err(|e| code_of(&e))
        })
    }
}

crate::mpi! {
    /// `MPI_Issend`: the request completes once the receiver matched the
    /// message.
    fn PMPI_Issend(buf: *const c_void, count: c_int, ty: c_int, dest: c_int, tag: c_int, comm: c_int, req: *mut c_int) -> c_int as MPI_Issend {
        call(comm, "MPI_Issend", || {
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
                let r = c.issend_lent(lent, Rank(dest), Tag(tag)).map_err(|e| code_of(&e))?;
                ReqEntry::Pending { req: r, comm, recv: false, keep, unpack: None }
            };
            let h = state::with(|s| REQUEST_DIRECT | state::insert(&mut s.requests, e) as c_int)
                .ok_or(MPI_ERR_OTHER)?;
            // SAFETY: checked non-null.
            unsafe { *req = h };
            Ok(())
        })
    }
}

crate::mpi! {
    /// `MPI_Irsend`: a standard non-blocking send (MPI allows it).
    fn PMPI_Irsend(buf: *const c_void, count: c_int, ty: c_int, dest: c_int, tag: c_int, comm: c_int, req: *mut c_int) -> c_int as MPI_Irsend {
        // SAFETY: MPI's contract, forwarded.
        unsafe { crate::p2p::PMPI_Isend(buf, count, ty, dest, tag, comm, req) }
    }
}

/// The send half of `MPI_Isendrecv(_replace)`: the data leaves from a
/// copy (so the request is the receive's alone, and a peer that sends
/// and receives in either order cannot deadlock).
///
/// # Safety
/// MPI's contract: `buf` holds `count` elements of `ty`.
unsafe fn send_copy(
    buf: *const c_void,
    count: c_int,
    ty: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
) -> Result<(), c_int> {
    let (c, t, n) = check::send(buf, count, ty, dest, tag, comm)?;
    if dest == MPI_PROC_NULL {
        return Ok(());
    }
    // SAFETY: by the caller's contract.
    let data = unsafe { SendBuf::new(buf, n, &t) }?;
    c.bsend(data.bytes(), Rank(dest), Tag(tag))
        .map(drop)
        .map_err(|e| code_of(&e))
}

crate::mpi! {
    /// `MPI_Isendrecv`: the send leaves from a copy; the request completes
    /// with the receive (its status is the receive's).
    fn PMPI_Isendrecv(sendbuf: *const c_void, sendcount: c_int, sendtype: c_int, dest: c_int, sendtag: c_int,
        recvbuf: *mut c_void, recvcount: c_int, recvtype: c_int, src: c_int, recvtag: c_int,
        comm: c_int, req: *mut c_int) -> c_int as MPI_Isendrecv {
        call(comm, "MPI_Isendrecv", || {
            if req.is_null() {
                return Err(MPI_ERR_ARG);
            }
            // The receive's arguments first, so a bad one sends nothing.
            check::recv(recvbuf, recvcount, recvtype, src, recvtag, comm)?;
            // SAFETY: MPI's contract, forwarded.
            unsafe { send_copy(sendbuf, sendcount, sendtype, dest, sendtag, comm) }?;
            // SAFETY: MPI's contract, forwarded.
            match unsafe { crate::p2p::PMPI_Irecv(recvbuf, recvcount, recvtype, src, recvtag, comm, req) } {
                MPI_SUCCESS => Ok(()),
                rc => Err(rc),
            }
        })
    }
}

crate::mpi! {
    /// `MPI_Isendrecv_replace`: the buffer's contents leave from a copy,
    /// the reply lands in the buffer.
    fn PMPI_Isendrecv_replace(buf: *mut c_void, count: c_int, ty: c_int, dest: c_int, sendtag: c_int,
        src: c_int, recvtag: c_int, comm: c_int, req: *mut c_int) -> c_int as MPI_Isendrecv_replace {
        call(comm, "MPI_Isendrecv_replace", || {
            if req.is_null() {
                return Err(MPI_ERR_ARG);
            }
            // SAFETY: MPI's contract, forwarded.
            unsafe { send_copy(buf, count, ty, dest, sendtag, comm) }?;
            // SAFETY: MPI's contract, forwarded.
            match unsafe { crate::p2p::PMPI_Irecv(buf, count, ty, src, recvtag, comm, req) } {
                MPI_SUCCESS => Ok(()),
                rc => Err(rc),
            }
        })
    }
}
