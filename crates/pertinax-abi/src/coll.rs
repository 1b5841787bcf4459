//! Collectives on intracommunicators, blocking, with `MPI_IN_PLACE`
//! where MPI allows it. Non-blocking, v- and w-variants, scans and
//! reduce-scatter are not implemented yet (`unsupported.rs`).

use std::borrow::Cow;
use std::ffi::{c_int, c_void};

use pertinax::{Communicator, Rank};

use crate::consts::*;
use crate::datatype::bytes;
use crate::errors::code_of;
use crate::p2p::{call, comm_of, slice, slice_mut};
use crate::reduce::operation as reduction;

pub(crate) fn in_place(p: *const c_void) -> bool {
    p as usize == IN_PLACE
}

pub(crate) fn done(r: pertinax::Result<pertinax::Outcome>) -> Result<(), c_int> {
    r.map(drop).map_err(|e| code_of(&e))
}

/// The input of a call that takes `MPI_IN_PLACE`: `len` bytes at
/// `sendbuf`, or a copy of `inplace` (the part of the receive buffer
/// that holds the input).
///
/// # Safety
/// Unless `MPI_IN_PLACE`, `sendbuf` holds `len` bytes (MPI's contract).
pub(crate) unsafe fn input<'a>(
    sendbuf: *const c_void,
    len: usize,
    inplace: &[u8],
) -> Cow<'a, [u8]> {
    if in_place(sendbuf) {
        Cow::Owned(inplace.to_vec())
    } else {
        // SAFETY: by the caller's contract.
        Cow::Borrowed(unsafe { slice(sendbuf, len) })
    }
}

fn root_of(c: &pertinax::Comm, root: c_int) -> Result<Rank, c_int> {
    match usize::try_from(root) {
        Ok(r) if r < c.size() => Ok(Rank(root)),
        _ => Err(MPI_ERR_ROOT),
    }
}

crate::mpi! {
    /// `MPI_Barrier`.
    fn PMPI_Barrier(comm: c_int) -> c_int as MPI_Barrier {
        if let Some(rc) = crate::inter::barrier(comm) { return rc; }
        call(comm, "MPI_Barrier", || done(Communicator::barrier(&comm_of(comm)?)))
    }
}

crate::mpi! {
    /// `MPI_Bcast`.
    fn PMPI_Bcast(buf: *mut c_void, count: c_int, ty: c_int, root: c_int, comm: c_int) -> c_int as MPI_Bcast {
        if let Some(rc) = crate::inter::bcast(buf, count, ty, root, comm) { return rc; }
        call(comm, "MPI_Bcast", || {
            let c = comm_of(comm)?;
            let (len, _) = bytes(count, ty)?;
            let root = root_of(&c, root)?;
            // SAFETY: MPI's contract: `buf` holds `count` elements.
            let data = unsafe { slice_mut(buf, len) };
            done(c.bcast_bytes(data, root))
        })
    }
}

crate::mpi! {
    /// `MPI_Reduce` (`MPI_IN_PLACE` at the root).
    fn PMPI_Reduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, ty: c_int, op: c_int, root: c_int, comm: c_int) -> c_int as MPI_Reduce {
        if let Some(rc) = crate::inter::reduce(sendbuf, recvbuf, count, ty, op, root, comm) { return rc; }
        call(comm, "MPI_Reduce", || {
            let c = comm_of(comm)?;
            let (len, _) = bytes(count, ty)?;
            let op = reduction(op, ty)?;
            let root = root_of(&c, root)?;
            let at_root = c.rank() == root;
            // SAFETY: MPI's contract: at the root `recvbuf` holds `count`
            // elements; `sendbuf` does unless it is MPI_IN_PLACE.
            let recv = if at_root { unsafe { slice_mut(recvbuf, len) } } else { &mut [] };
            let own;
            let send = if in_place(sendbuf) && at_root {
                own = recv.to_vec();
                &own[..]
            } else {
                // SAFETY: as above.
                unsafe { slice(sendbuf, len) }
            };
            done(c.reduce_bytes(send, recv, &op, root))
        })
    }
}

crate::mpi! {
    /// `MPI_Allreduce` (`MPI_IN_PLACE` too).
    fn PMPI_Allreduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, ty: c_int, op: c_int, comm: c_int) -> c_int as MPI_Allreduce {
        if let Some(rc) = crate::inter::allreduce(sendbuf, recvbuf, count, ty, op, comm) { return rc; }
        call(comm, "MPI_Allreduce", || {
            let c = comm_of(comm)?;
            let (len, _) = bytes(count, ty)?;
            let op = reduction(op, ty)?;
            // SAFETY: MPI's contract: `recvbuf` holds `count` elements, and
            // `sendbuf` too unless it is MPI_IN_PLACE.
            let recv = unsafe { slice_mut(recvbuf, len) };
            // SAFETY: as above.
            let send = unsafe { input(sendbuf, len, recv) };
            done(c.allreduce_bytes(&send, recv, &op))
        })
    }
}

/// The byte lengths of one rank's part on the send and the receive side,
/// which must agree.
fn parts(scount: c_int, sty: c_int, rcount: c_int, rty: c_int) -> Result<(usize, usize), c_int> {
    let (s, _) = bytes(scount, sty)?;
    let (r, _) = bytes(rcount, rty)?;
    Ok((s, r))
}

crate::mpi! {
    /// `MPI_Gather` (`MPI_IN_PLACE` at the root).
    fn PMPI_Gather(sendbuf: *const c_void, sendcount: c_int, sendtype: c_int, recvbuf: *mut c_void, recvcount: c_int, recvtype: c_int, root: c_int, comm: c_int) -> c_int as MPI_Gather {
        if let Some(rc) = crate::inter::rooted(false, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm) { return rc; }
        call(comm, "MPI_Gather", || {
            let c = comm_of(comm)?;
            let root = root_of(&c, root)?;
            let at_root = c.rank() == root;
            let n = c.size();
            let (s, r) = if at_root {
                parts(sendcount, sendtype, recvcount, recvtype)?
            } else {
                let (s, _) = bytes(sendcount, sendtype)?;
                (s, s)
            };
            // SAFETY: MPI's contract: at the root `recvbuf` holds `size`
            // parts.
            let recv = if at_root { unsafe { slice_mut(recvbuf, r * n) } } else { &mut [] };
            let own;
            let send = if at_root && in_place(sendbuf) {
                let me = root.0 as usize;
                own = recv[me * r..(me + 1) * r].to_vec();
                &own[..]
            } else {
                // SAFETY: MPI's contract: `sendbuf` holds one part.
                unsafe { slice(sendbuf, s) }
            };
            done(c.gather_bytes(send, recv, root))
        })
    }
}

crate::mpi! {
    /// `MPI_Scatter` (`MPI_IN_PLACE` at the root).
    fn PMPI_Scatter(sendbuf: *const c_void, sendcount: c_int, sendtype: c_int, recvbuf: *mut c_void, recvcount: c_int, recvtype: c_int, root: c_int, comm: c_int) -> c_int as MPI_Scatter {
        if let Some(rc) = crate::inter::rooted(true, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm) { return rc; }
        call(comm, "MPI_Scatter", || {
            let c = comm_of(comm)?;
            let root = root_of(&c, root)?;
            let at_root = c.rank() == root;
            let n = c.size();
            let (s, _) = if at_root { bytes(sendcount, sendtype)? } else { (0, 1) };
            // SAFETY: MPI's contract: at the root `sendbuf` holds `size`
            // parts.
            let send = if at_root { unsafe { slice(sendbuf, s * n) } } else { &[] };
            if at_root && in_place(recvbuf) {
                let mut scratch = vec![0u8; s];
                return done(c.scatter_bytes(send, &mut scratch, root));
            }
            let (r, _) = bytes(recvcount, recvtype)?;
            // SAFETY: MPI's contract: `recvbuf` holds one part.
            let recv = unsafe { slice_mut(recvbuf, r) };
            done(c.scatter_bytes(send, recv, root))
        })
    }
}

crate::mpi! {
    /// `MPI_Allgather` (`MPI_IN_PLACE` too).
    fn PMPI_Allgather(sendbuf: *const c_void, sendcount: c_int, sendtype: c_int, recvbuf: *mut c_void, recvcount: c_int, recvtype: c_int, comm: c_int) -> c_int as MPI_Allgather {
        if let Some(rc) = crate::inter::allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm) { return rc; }
        call(comm, "MPI_Allgather", || {
            let c = comm_of(comm)?;
            let n = c.size();
            let (r, _) = bytes(recvcount, recvtype)?;
            // SAFETY: MPI's contract: `recvbuf` holds `size` parts.
            let recv = unsafe { slice_mut(recvbuf, r * n) };
            let own;
            let send = if in_place(sendbuf) {
                let me = c.rank().0 as usize;
                own = recv[me * r..(me + 1) * r].to_vec();
                &own[..]
            } else {
                let (s, _) = bytes(sendcount, sendtype)?;
                // SAFETY: MPI's contract: `sendbuf` holds one part.
                unsafe { slice(sendbuf, s) }
            };
            done(c.allgather_bytes(send, recv))
        })
    }
}

crate::mpi! {
    /// `MPI_Alltoall` (`MPI_IN_PLACE` too).
    fn PMPI_Alltoall(sendbuf: *const c_void, sendcount: c_int, sendtype: c_int, recvbuf: *mut c_void, recvcount: c_int, recvtype: c_int, comm: c_int) -> c_int as MPI_Alltoall {
        if let Some(rc) = crate::inter::alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm) { return rc; }
        call(comm, "MPI_Alltoall", || {
            let c = comm_of(comm)?;
            let n = c.size();
            let (r, _) = bytes(recvcount, recvtype)?;
            // SAFETY: MPI's contract: `recvbuf` holds `size` parts.
            let recv = unsafe { slice_mut(recvbuf, r * n) };
            let own;
            let send = if in_place(sendbuf) {
                own = recv.to_vec();
                &own[..]
            } else {
                let (s, _) = bytes(sendcount, sendtype)?;
                // SAFETY: MPI's contract: `sendbuf` holds `size` parts.
                unsafe { slice(sendbuf, s * n) }
            };
            done(c.alltoall_bytes(send, recv))
        })
    }
}
