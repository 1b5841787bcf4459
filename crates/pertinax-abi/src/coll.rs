//! Collectives on intracommunicators, blocking, with `MPI_IN_PLACE`
//! where MPI allows it, on any committed datatype (through
//! [`SendBuf`]/[`RecvBuf`]). The v-variants are in `vcoll.rs`, the
//! non-blocking ones in `icoll.rs`, scans and reduce-scatter in
//! `reduce.rs`, the w-variant (`MPI_Alltoallw`) in `wcoll.rs`. Their
//! buffers are described in `ready.rs`, shared with the resilient
//! non-blocking forms.

use std::ffi::{c_int, c_void};

use pertinax::{Communicator, Rank};

use crate::consts::*;
use crate::datatype::{count_of, RecvBuf, SendBuf};
use crate::p2p::call;
use crate::ready;

pub(crate) fn in_place(p: *const c_void) -> bool {
    p as usize == IN_PLACE
}

/// A collective's result as the call's (the plain communicator's errors,
/// or the resilient one's: see `resilient::Class`).
pub(crate) fn done<E: crate::resilient::Class>(
    r: Result<pertinax::Outcome, E>,
) -> Result<(), c_int> {
    crate::resilient::done(r)
}

/// The largest of every member's `v` (an error class: any failure): how
/// the library's own collective steps (a window's or a file's creation)
/// agree on an outcome.
pub(crate) fn allreduce_max(comm: c_int, v: c_int) -> Result<c_int, c_int> {
    let mut r = 0;
    // SAFETY: one int in, one out.
    crate::errors::ok(unsafe {
        PMPI_Allreduce(
            (&raw const v).cast(),
            (&raw mut r).cast(),
            1,
            MPI_INT,
            MPI_MAX,
            comm,
        )
    })?;
    Ok(r)
}

/// `MPI_Barrier` on `comm` as a `Result` (the library's own collective
/// steps).
pub(crate) fn barrier_of(comm: c_int) -> Result<(), c_int> {
    // SAFETY: a communicator handle; no buffers.
    crate::errors::ok(unsafe { PMPI_Barrier(comm) })
}

pub(crate) fn root_of<C: Communicator + ?Sized>(c: &C, root: c_int) -> Result<Rank, c_int> {
    crate::check::root(c, root)
}

crate::mpi! {
    /// `MPI_Barrier`.
    fn PMPI_Barrier(comm: c_int) -> c_int as MPI_Barrier fast {
        crate::fast::barrier(comm)
    } else {
        if let Some(rc) = crate::intercoll::on_inter(comm, "MPI_Barrier", |c| crate::intercoll::barrier(comm, c, None)) { return rc; }
        call(comm, "MPI_Barrier", || crate::on_comm!(comm, |c| { done(ready::barrier(c)(c)) }))
    }
}

crate::mpi! {
    /// `MPI_Bcast`.
    fn PMPI_Bcast(buf: *mut c_void, count: c_int, ty: c_int, root: c_int, comm: c_int) -> c_int as MPI_Bcast fast {
        // SAFETY: forwarded.
        unsafe { crate::fast::bcast(buf, count, ty, root, comm) }
    } else {
        // SAFETY: MPI's contract, forwarded.
        if let Some(rc) = crate::intercoll::on_inter(comm, "MPI_Bcast", |c| unsafe { crate::intercoll::bcast(buf, count_of(count)?, ty, root, comm, c, None) }) { return rc; }
        call(comm, "MPI_Bcast", || {
            crate::on_comm!(comm, |c| {
            // SAFETY: MPI's contract, forwarded.
            done(unsafe { ready::bcast(c, buf, count_of(count)?, ty, root) }?(c))
            })
        })
    }
}

/// The input of a reduction into `recv`: `count` elements at `sendbuf`,
/// or (`MPI_IN_PLACE`) `recv`'s contents.
///
/// # Safety
/// Unless `MPI_IN_PLACE`, `sendbuf` holds `count` elements of `t`.
pub(crate) unsafe fn operand(
    sendbuf: *const c_void,
    count: usize,
    t: &crate::datatype::Ty,
    recv: &RecvBuf,
) -> Result<SendBuf, c_int> {
    if in_place(sendbuf) {
        Ok(SendBuf::from_vec(recv.current()))
    } else {
        // SAFETY: by the caller's contract.
        unsafe { SendBuf::new(sendbuf, count, t) }
    }
}

crate::mpi! {
    /// `MPI_Reduce` (`MPI_IN_PLACE` at the root).
    fn PMPI_Reduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, ty: c_int, op: c_int, root: c_int, comm: c_int) -> c_int as MPI_Reduce fast {
        // SAFETY: forwarded.
        unsafe { crate::fast::reduce(sendbuf, recvbuf, count, ty, op, root, comm) }
    } else {
        // SAFETY: MPI's contract, forwarded.
        if let Some(rc) = crate::intercoll::on_inter(comm, "MPI_Reduce", |c| unsafe { crate::intercoll::reduce(sendbuf, recvbuf, count_of(count)?, ty, op, root, comm, c, None) }) { return rc; }
        call(comm, "MPI_Reduce", || {
            crate::on_comm!(comm, |c| {
            // SAFETY: MPI's contract, forwarded.
            done(unsafe { ready::reduce(c, sendbuf, recvbuf, count_of(count)?, ty, op, Some(root)) }?(c))
            })
        })
    }
}

crate::mpi! {
    /// `MPI_Allreduce` (`MPI_IN_PLACE` too).
    fn PMPI_Allreduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, ty: c_int, op: c_int, comm: c_int) -> c_int as MPI_Allreduce fast {
        // SAFETY: forwarded.
        unsafe { crate::fast::allreduce(sendbuf, recvbuf, count, ty, op, comm) }
    } else {
        // SAFETY: MPI's contract, forwarded.
        if let Some(rc) = crate::intercoll::on_inter(comm, "MPI_Allreduce", |c| unsafe { crate::intercoll::allreduce(sendbuf, recvbuf, count_of(count)?, ty, op, comm, c, None) }) { return rc; }
        call(comm, "MPI_Allreduce", || {
            crate::on_comm!(comm, |c| {
            // SAFETY: MPI's contract, forwarded.
            done(unsafe { ready::reduce(c, sendbuf, recvbuf, count_of(count)?, ty, op, None) }?(c))
            })
        })
    }
}

crate::mpi! {
    /// `MPI_Gather` (`MPI_IN_PLACE` at the root).
    fn PMPI_Gather(sendbuf: *const c_void, sendcount: c_int, sendtype: c_int, recvbuf: *mut c_void, recvcount: c_int, recvtype: c_int, root: c_int, comm: c_int) -> c_int as MPI_Gather {
        // SAFETY: MPI's contract, forwarded.
        if let Some(rc) = crate::intercoll::on_inter(comm, "MPI_Gather", |c| unsafe { crate::intercoll::rooted(false, sendbuf, count_of(sendcount)?, sendtype, recvbuf, count_of(recvcount)?, recvtype, root, comm, c, None) }) { return rc; }
        call(comm, "MPI_Gather", || {
            crate::on_comm!(comm, |c| {
            // SAFETY: MPI's contract, forwarded.
            done(unsafe { ready::gather(c, sendbuf, count_of(sendcount)?, sendtype, recvbuf, count_of(recvcount)?, recvtype, root) }?(c))
            })
        })
    }
}

crate::mpi! {
    /// `MPI_Scatter` (`MPI_IN_PLACE` at the root).
    fn PMPI_Scatter(sendbuf: *const c_void, sendcount: c_int, sendtype: c_int, recvbuf: *mut c_void, recvcount: c_int, recvtype: c_int, root: c_int, comm: c_int) -> c_int as MPI_Scatter {
        // SAFETY: MPI's contract, forwarded.
        if let Some(rc) = crate::intercoll::on_inter(comm, "MPI_Scatter", |c| unsafe { crate::intercoll::rooted(true, sendbuf, count_of(sendcount)?, sendtype, recvbuf, count_of(recvcount)?, recvtype, root, comm, c, None) }) { return rc; }
        call(comm, "MPI_Scatter", || {
            crate::on_comm!(comm, |c| {
            // SAFETY: MPI's contract, forwarded.
            done(unsafe { ready::scatter(c, sendbuf, count_of(sendcount)?, sendtype, recvbuf, count_of(recvcount)?, recvtype, root) }?(c))
            })
        })
    }
}

crate::mpi! {
    /// `MPI_Allgather` (`MPI_IN_PLACE` too).
    fn PMPI_Allgather(sendbuf: *const c_void, sendcount: c_int, sendtype: c_int, recvbuf: *mut c_void, recvcount: c_int, recvtype: c_int, comm: c_int) -> c_int as MPI_Allgather {
        // SAFETY: MPI's contract, forwarded.
        if let Some(rc) = crate::intercoll::on_inter(comm, "MPI_Allgather", |c| unsafe { crate::intercoll::all(false, sendbuf, count_of(sendcount)?, sendtype, recvbuf, count_of(recvcount)?, recvtype, comm, c, None) }) { return rc; }
        call(comm, "MPI_Allgather", || {
            crate::on_comm!(comm, |c| {
            // SAFETY: MPI's contract, forwarded.
            done(unsafe { ready::all(c, false, sendbuf, count_of(sendcount)?, sendtype, recvbuf, count_of(recvcount)?, recvtype) }?(c))
            })
        })
    }
}

crate::mpi! {
    /// `MPI_Alltoall` (`MPI_IN_PLACE` too).
    fn PMPI_Alltoall(sendbuf: *const c_void, sendcount: c_int, sendtype: c_int, recvbuf: *mut c_void, recvcount: c_int, recvtype: c_int, comm: c_int) -> c_int as MPI_Alltoall {
        // SAFETY: MPI's contract, forwarded.
        if let Some(rc) = crate::intercoll::on_inter(comm, "MPI_Alltoall", |c| unsafe { crate::intercoll::all(true, sendbuf, count_of(sendcount)?, sendtype, recvbuf, count_of(recvcount)?, recvtype, comm, c, None) }) { return rc; }
        call(comm, "MPI_Alltoall", || {
            crate::on_comm!(comm, |c| {
            // SAFETY: MPI's contract, forwarded.
            done(unsafe { ready::all(c, true, sendbuf, count_of(sendcount)?, sendtype, recvbuf, count_of(recvcount)?, recvtype) }?(c))
            })
        })
    }
}
