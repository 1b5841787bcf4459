//! The v-variants of the collectives (`Gatherv`, `Scatterv`,
//! `Allgatherv`, `Alltoallv`), in their `int` and large-count forms:
//! counts and displacements in elements of the receive (or send) type.

use std::ffi::{c_int, c_void};

use pertinax::{Communicator, Rank};

use crate::coll::{done, in_place};
use crate::consts::*;
use crate::datatype::size_of;
use crate::large::MPI_Count;
use crate::p2p::{call, comm_of, slice, slice_mut};
use crate::MPI_Aint;

/// `n` non-negative values of a C array as `usize`s.
///
/// # Safety
/// `p` holds `n` values of `T` (or `n` is 0).
pub(crate) unsafe fn read<T: Copy + TryInto<usize>>(
    p: *const T,
    n: usize,
) -> Result<Vec<usize>, c_int> {
    if n > 0 && p.is_null() {
        return Err(MPI_ERR_ARG);
    }
    (0..n)
        .map(|i| {
            // SAFETY: `i < n`, by the caller's contract.
            let v = unsafe { *p.add(i) };
            v.try_into().map_err(|_| MPI_ERR_COUNT)
        })
        .collect()
}

/// The bytes a buffer described by `counts` and `displs` of `elem`-byte
/// elements spans.
pub(crate) fn span(counts: &[usize], displs: &[usize], elem: usize) -> usize {
    counts
        .iter()
        .zip(displs)
        .map(|(c, d)| (c + d) * elem)
        .max()
        .unwrap_or(0)
}

fn elem(ty: c_int) -> Result<usize, c_int> {
    size_of(ty).ok_or(MPI_ERR_TYPE)
}

#[allow(clippy::too_many_arguments)]
unsafe fn gatherv(
    sendbuf: *const c_void,
    sendcount: usize,
    sendtype: c_int,
    recvbuf: *mut c_void,
    counts: Option<(Vec<usize>, Vec<usize>)>,
    recvtype: c_int,
    root: c_int,
    comm: c_int,
) -> Result<(), c_int> {
    let c = comm_of(comm)?;
    let at_root = c.rank().0 == root;
    let (counts, displs) = counts.unwrap_or_default();
    let e = if at_root {
        elem(recvtype)?
    } else {
        elem(sendtype)?
    };
    let recv = if at_root {
        // SAFETY: MPI's contract: at the root `recvbuf` spans the counts.
        unsafe { slice_mut(recvbuf, span(&counts, &displs, e)) }
    } else {
        &mut []
    };
    let own;
    let send = if at_root && in_place(sendbuf) {
        let me = root as usize;
        own = recv[displs[me] * e..(displs[me] + counts[me]) * e].to_vec();
        &own[..]
    } else {
        // SAFETY: MPI's contract: `sendbuf` holds `sendcount` elements.
        unsafe { slice(sendbuf, sendcount * elem(sendtype)?) }
    };
    done(c.gatherv_bytes(send, recv, &counts, &displs, e, Rank(root)))
}

#[allow(clippy::too_many_arguments)]
unsafe fn scatterv(
    sendbuf: *const c_void,
    counts: Option<(Vec<usize>, Vec<usize>)>,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: usize,
    recvtype: c_int,
    root: c_int,
    comm: c_int,
) -> Result<(), c_int> {
    let c = comm_of(comm)?;
    let at_root = c.rank().0 == root;
    let (counts, displs) = counts.unwrap_or_default();
    let e = if at_root {
        elem(sendtype)?
    } else {
        elem(recvtype)?
    };
    let send = if at_root {
        // SAFETY: MPI's contract: at the root `sendbuf` spans the counts.
        unsafe { slice(sendbuf, span(&counts, &displs, e)) }
    } else {
        &[]
    };
    if at_root && in_place(recvbuf) {
        let mut scratch = vec![0u8; counts[root as usize] * e];
        return done(c.scatterv_bytes(send, &counts, &displs, &mut scratch, e, Rank(root)));
    }
    // SAFETY: MPI's contract: `recvbuf` holds `recvcount` elements.
    let recv = unsafe { slice_mut(recvbuf, recvcount * elem(recvtype)?) };
    done(c.scatterv_bytes(send, &counts, &displs, recv, e, Rank(root)))
}

#[allow(clippy::too_many_arguments)]
unsafe fn allgatherv(
    sendbuf: *const c_void,
    sendcount: usize,
    sendtype: c_int,
    recvbuf: *mut c_void,
    counts: Vec<usize>,
    displs: Vec<usize>,
    recvtype: c_int,
    comm: c_int,
) -> Result<(), c_int> {
    let c = comm_of(comm)?;
    let e = elem(recvtype)?;
    // SAFETY: MPI's contract: `recvbuf` spans the counts.
    let recv = unsafe { slice_mut(recvbuf, span(&counts, &displs, e)) };
    let own;
    let send = if in_place(sendbuf) {
        let me = c.rank().0 as usize;
        own = recv[displs[me] * e..(displs[me] + counts[me]) * e].to_vec();
        &own[..]
    } else {
        // SAFETY: MPI's contract: `sendbuf` holds `sendcount` elements.
        unsafe { slice(sendbuf, sendcount * elem(sendtype)?) }
    };
    done(c.allgatherv_bytes(send, recv, &counts, &displs, e))
}

#[allow(clippy::too_many_arguments)]
unsafe fn alltoallv(
    sendbuf: *const c_void,
    scounts: Vec<usize>,
    sdispls: Vec<usize>,
    sendtype: c_int,
    recvbuf: *mut c_void,
    rcounts: Vec<usize>,
    rdispls: Vec<usize>,
    recvtype: c_int,
    comm: c_int,
) -> Result<(), c_int> {
    let c = comm_of(comm)?;
    let e = elem(recvtype)?;
    // SAFETY: MPI's contract: `recvbuf` spans the receive counts.
    let recv = unsafe { slice_mut(recvbuf, span(&rcounts, &rdispls, e)) };
    if in_place(sendbuf) {
        let own = recv.to_vec();
        return done(c.alltoallv_bytes(&own, &rcounts, &rdispls, recv, &rcounts, &rdispls, e));
    }
    if elem(sendtype)? != e {
        return Err(MPI_ERR_TYPE);
    }
    // SAFETY: MPI's contract: `sendbuf` spans the send counts.
    let send = unsafe { slice(sendbuf, span(&scounts, &sdispls, e)) };
    done(c.alltoallv_bytes(send, &scounts, &sdispls, recv, &rcounts, &rdispls, e))
}

/// The communicator's size, for the length of the count arrays.
fn size(comm: c_int) -> Result<usize, c_int> {
    comm_of(comm).map(|c| c.size())
}

/// Whether this process is `root` of `comm`.
fn is_root(comm: c_int, root: c_int) -> Result<bool, c_int> {
    comm_of(comm).map(|c| c.rank().0 == root)
}

macro_rules! v_forms {
    ($cnt:ty, $disp:ty, $scount:ty,
     $pg:ident $g:ident, $ps:ident $s:ident, $pag:ident $ag:ident, $pa:ident $a:ident) => {
        crate::mpi! {
            #[doc = concat!("`", stringify!($g), "` (`MPI_IN_PLACE` at the root).")]
            fn $pg(sendbuf: *const c_void, sendcount: $scount, sendtype: c_int, recvbuf: *mut c_void, recvcounts: *const $cnt, displs: *const $disp, recvtype: c_int, root: c_int, comm: c_int) -> c_int as $g {
                call(comm, stringify!($g), || {
                    let n = size(comm)?;
                    let sc = usize::try_from(sendcount).map_err(|_| MPI_ERR_COUNT)?;
                    let counts = if is_root(comm, root)? {
                        // SAFETY: MPI's contract: at the root the arrays
                        // hold `size` entries.
                        Some(unsafe { (read(recvcounts, n)?, read(displs, n)?) })
                    } else {
                        None
                    };
                    // SAFETY: MPI's contract for the buffers.
                    unsafe { gatherv(sendbuf, sc, sendtype, recvbuf, counts, recvtype, root, comm) }
                })
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($s), "` (`MPI_IN_PLACE` at the root).")]
            fn $ps(sendbuf: *const c_void, sendcounts: *const $cnt, displs: *const $disp, sendtype: c_int, recvbuf: *mut c_void, recvcount: $scount, recvtype: c_int, root: c_int, comm: c_int) -> c_int as $s {
                call(comm, stringify!($s), || {
                    let n = size(comm)?;
                    let rc = usize::try_from(recvcount).map_err(|_| MPI_ERR_COUNT)?;
                    let counts = if is_root(comm, root)? {
                        // SAFETY: MPI's contract: at the root the arrays
                        // hold `size` entries.
                        Some(unsafe { (read(sendcounts, n)?, read(displs, n)?) })
                    } else {
                        None
                    };
                    // SAFETY: MPI's contract for the buffers.
                    unsafe { scatterv(sendbuf, counts, sendtype, recvbuf, rc, recvtype, root, comm) }
                })
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($ag), "` (`MPI_IN_PLACE` too).")]
            fn $pag(sendbuf: *const c_void, sendcount: $scount, sendtype: c_int, recvbuf: *mut c_void, recvcounts: *const $cnt, displs: *const $disp, recvtype: c_int, comm: c_int) -> c_int as $ag {
                call(comm, stringify!($ag), || {
                    let n = size(comm)?;
                    let sc = usize::try_from(sendcount).map_err(|_| MPI_ERR_COUNT)?;
                    // SAFETY: MPI's contract: the arrays hold `size` entries.
                    let (counts, d) = unsafe { (read(recvcounts, n)?, read(displs, n)?) };
                    // SAFETY: MPI's contract for the buffers.
                    unsafe { allgatherv(sendbuf, sc, sendtype, recvbuf, counts, d, recvtype, comm) }
                })
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($a), "` (`MPI_IN_PLACE` too).")]
            fn $pa(sendbuf: *const c_void, sendcounts: *const $cnt, sdispls: *const $disp, sendtype: c_int, recvbuf: *mut c_void, recvcounts: *const $cnt, rdispls: *const $disp, recvtype: c_int, comm: c_int) -> c_int as $a {
                call(comm, stringify!($a), || {
                    let n = size(comm)?;
                    let (sc, sd) = if in_place(sendbuf) {
                        (Vec::new(), Vec::new())
                    } else {
                        // SAFETY: MPI's contract: the send arrays hold
                        // `size` entries unless MPI_IN_PLACE.
                        unsafe { (read(sendcounts, n)?, read(sdispls, n)?) }
                    };
                    // SAFETY: as above.
                    let (rc, rd) = unsafe { (read(recvcounts, n)?, read(rdispls, n)?) };
                    // SAFETY: MPI's contract for the buffers.
                    unsafe { alltoallv(sendbuf, sc, sd, sendtype, recvbuf, rc, rd, recvtype, comm) }
                })
            }
        }
    };
}

v_forms!(c_int, c_int, c_int,
    PMPI_Gatherv MPI_Gatherv, PMPI_Scatterv MPI_Scatterv, PMPI_Allgatherv MPI_Allgatherv, PMPI_Alltoallv MPI_Alltoallv);
v_forms!(MPI_Count, MPI_Aint, MPI_Count,
    PMPI_Gatherv_c MPI_Gatherv_c, PMPI_Scatterv_c MPI_Scatterv_c, PMPI_Allgatherv_c MPI_Allgatherv_c, PMPI_Alltoallv_c MPI_Alltoallv_c);
