//! Neighbourhood collectives: `MPI_Neighbor_allgather`, `_allgatherv`,
//! `_alltoall`, `_alltoallv`, `_alltoallw`, their non-blocking
//! `MPI_Ineighbor_*` forms and the large-count `_c` forms of all ten, on
//! Cartesian (`topo`), graph and distributed-graph (`graph`)
//! communicators (any other is `MPI_ERR_TOPOLOGY`).
//!
//! The neighbours are MPI's: on a Cartesian grid, for each dimension the
//! source then the destination of a shift by 1, as sources and as
//! destinations alike; on a graph the node's neighbours, both ways; on a
//! distributed graph its sources (what is received, block `k` from source
//! `k`) and destinations (block `k` to destination `k`). An
//! `MPI_PROC_NULL` neighbour (the edge of a non-periodic dimension)
//! exchanges nothing: its receive block is left untouched.
//!
//! Each call is one pertinax schedule
//! (`LentCollective::Neighbor`): every send and receive in one round on
//! the communicator's collective context, so it never meets the
//! program's messages and a non-blocking one moves while the program
//! waits on anything. When a process is the neighbour of another more than
//! once (a periodic dimension of size 1 or 2, a multigraph) the k-th block
//! sent to it lands in the k-th block it receives from the sender, as in
//! MPICH. The blocks of the other forms are contiguous bytes of the
//! program's buffers (`count × size`; a type whose elements do not lie
//! packed is `MPI_ERR_UNSUPPORTED_OPERATION` there; displacements of the
//! v-forms count elements); the w-forms' blocks, each with a datatype of
//! its own and a displacement in bytes (an address with `MPI_BOTTOM`),
//! are packed into (received in) temporaries and unpacked when the
//! exchange completes. `MPI_IN_PLACE` is not allowed (MPI does not allow
//! it here either). The persistent `MPI_Neighbor_*_init` forms (and
//! `_init_c`) copy the count, displacement and type arrays at init; each
//! `MPI_Start` is the non-blocking form.

use std::ffi::{c_int, c_void};
use std::ops::Range;
use std::rc::Rc;

use pertinax::{LentCollective, Rank};

use crate::consts::*;
use crate::datatype::{packed_size, RecvBuf, SendBuf, Ty, Typed};
use crate::errors::code_of;
use crate::large::MPI_Count;
use crate::p2p::{call, comm_of};
use crate::persist::{at, coll_init, kept};
use crate::state::{self, ReqEntry};
use crate::topo::MPI_ERR_TOPOLOGY;
use crate::MPI_Aint;

/// An integer of a C count or displacement array.
trait Num: Copy {
    fn get(self) -> i64;
}
impl Num for c_int {
    fn get(self) -> i64 {
        i64::from(self)
    }
}
impl Num for i64 {
    fn get(self) -> i64 {
        self
    }
}
impl Num for isize {
    fn get(self) -> i64 {
        self as i64
    }
}

/// `n` entries of a C array, widened.
///
/// # Safety
/// `p` is null or holds `n` entries.
unsafe fn read<T: Num>(p: *const T, n: usize) -> Result<Vec<i64>, c_int> {
    if n == 0 {
        return Ok(Vec::new());
    }
    if p.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: non-null and holding `n` entries by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n) }
        .iter()
        .map(|x| x.get())
        .collect())
}

/// The byte size of a datatype's element (a type whose elements lie
/// packed; others are `MPI_ERR_UNSUPPORTED_OPERATION` here).
fn elem(ty: c_int) -> Result<i64, c_int> {
    packed_size(ty).map(|s| s as i64)
}

/// `len` bytes at byte offset `off`.
fn range(off: i64, len: i64) -> Result<Range<usize>, c_int> {
    if len < 0 {
        return Err(MPI_ERR_COUNT);
    }
    let lo = usize::try_from(off).map_err(|_| MPI_ERR_ARG)?;
    let hi = lo.checked_add(len as usize).ok_or(MPI_ERR_COUNT)?;
    Ok(lo..hi)
}

/// A communicator's sources and destinations (`MPI_ERR_TOPOLOGY` without
/// a topology).
fn neighbours(comm: c_int) -> Result<(Vec<i32>, Vec<i32>), c_int> {
    let c = comm_of(comm)?;
    let me = c.rank().0;
    if let Some(n) = crate::topo::cart_neighbors(comm, me)? {
        return Ok((n.clone(), n));
    }
    crate::graph::neighbors(comm, me)?.ok_or(MPI_ERR_TOPOLOGY)
}

/// What a call sends and receives: per destination (source), its block
/// of the send (receive) buffer.
struct Blocks {
    sends: Vec<Range<usize>>,
    recvs: Vec<Range<usize>>,
}

/// The buffers of an exchange: the program's own, in which the blocks
/// are contiguous bytes, or temporaries of parts with types of their own
/// (the w-forms), the blocks' ranges in them.
enum Bufs {
    Raw(*const c_void, *mut c_void),
    Typed(SendBuf, RecvBuf),
}

/// Runs (`req` null) or starts the exchange of `b` with the neighbours.
///
/// # Safety
/// MPI's contract: the buffers hold the blocks, and stay valid until the
/// request completes.
unsafe fn exchange(
    comm: c_int,
    (srcs, dsts): (Vec<i32>, Vec<i32>),
    bufs: Bufs,
    b: Blocks,
    req: *mut c_int,
    blocking: bool,
) -> Result<(), c_int> {
    if !blocking && req.is_null() {
        return Err(MPI_ERR_ARG);
    }
    let c = comm_of(comm)?;
    let pick = |ranks: &[i32], blocks: Vec<Range<usize>>| -> Vec<(Rank, Range<usize>)> {
        ranks
            .iter()
            .zip(blocks)
            .filter(|(&r, _)| r != MPI_PROC_NULL)
            .map(|(&r, b)| (Rank(r), b))
            .collect()
    };
    let sends = pick(&dsts, b.sends);
    let recvs = pick(&srcs, b.recvs);
    let (inp, mut out) = match bufs {
        Bufs::Typed(inp, out) => (inp, out),
        Bufs::Raw(sendbuf, recvbuf) => {
            if crate::coll::in_place(sendbuf) {
                return Err(MPI_ERR_ARG);
            }
            let in_len = sends.iter().map(|(_, r)| r.end).max().unwrap_or(0);
            let out_len = recvs.iter().map(|(_, r)| r.end).max().unwrap_or(0);
            let byte = Ty::Plain(MPI_BYTE, 1);
            // SAFETY: by the caller's contract: bytes, used in place.
            unsafe {
                (
                    SendBuf::new(sendbuf, in_len, &byte)?,
                    RecvBuf::new(recvbuf, out_len, &byte)?,
                )
            }
        }
    };
    let (lent_in, keep) = inp.lend();
    let lent_out = out.lend();
    let r = c
        .icollective_lent(
            LentCollective::Neighbor { sends, recvs },
            Some(lent_in),
            lent_out,
        )
        .map_err(|e| code_of(&e))?;
    if blocking {
        r.wait().map_err(|e| code_of(&e))?;
        drop(keep);
        out.finish(usize::MAX);
        return Ok(());
    }
    let e = ReqEntry::Pending {
        req: r,
        comm,
        recv: false,
        keep,
        unpack: out.staged().then_some(out),
    };
    let h = state::with(|s| REQUEST_DIRECT | state::insert(&mut s.requests, e) as c_int)
        .ok_or(MPI_ERR_OTHER)?;
    // SAFETY: checked non-null.
    unsafe { *req = h };
    Ok(())
}

/// Uniform blocks: `k × len` for block `k` of `n`.
fn uniform(n: usize, len: i64) -> Result<Vec<Range<usize>>, c_int> {
    (0..n as i64).map(|k| range(k * len, len)).collect()
}

/// Blocks of `counts[k] × size` bytes at `displs[k] × unit`.
fn varied(
    counts: &[i64],
    displs: &[i64],
    size: i64,
    unit: i64,
) -> Result<Vec<Range<usize>>, c_int> {
    counts
        .iter()
        .zip(displs)
        .map(|(&c, &d)| range(d * unit, c * size))
        .collect()
}

/// `MPI_Neighbor_allgather` and its forms.
///
/// # Safety
/// MPI's contract.
#[allow(clippy::too_many_arguments)]
unsafe fn allgather(
    what: &str,
    sendbuf: *const c_void,
    scount: i64,
    stype: c_int,
    recvbuf: *mut c_void,
    rcount: i64,
    rtype: c_int,
    comm: c_int,
    req: *mut c_int,
    blocking: bool,
) -> c_int {
    call(comm, what, || {
        let n = neighbours(comm)?;
        let s = range(0, scount * elem(stype)?)?;
        let b = Blocks {
            sends: vec![s; n.1.len()],
            recvs: uniform(n.0.len(), rcount * elem(rtype)?)?,
        };
        // SAFETY: forwarded.
        unsafe { exchange(comm, n, Bufs::Raw(sendbuf, recvbuf), b, req, blocking) }
    })
}

/// `MPI_Neighbor_allgatherv` and its forms.
///
/// # Safety
/// MPI's contract.
#[allow(clippy::too_many_arguments)]
unsafe fn allgatherv<C: Num, D: Num>(
    what: &str,
    sendbuf: *const c_void,
    scount: i64,
    stype: c_int,
    recvbuf: *mut c_void,
    rcounts: *const C,
    displs: *const D,
    rtype: c_int,
    comm: c_int,
    req: *mut c_int,
    blocking: bool,
) -> c_int {
    call(comm, what, || {
        let n = neighbours(comm)?;
        let k = n.0.len();
        let s = range(0, scount * elem(stype)?)?;
        let size = elem(rtype)?;
        // SAFETY: MPI's contract: a count and a displacement per source.
        let (rc, rd) = unsafe { (read(rcounts, k)?, read(displs, k)?) };
        let b = Blocks {
            sends: vec![s; n.1.len()],
            recvs: varied(&rc, &rd, size, size)?,
        };
        // SAFETY: forwarded.
        unsafe { exchange(comm, n, Bufs::Raw(sendbuf, recvbuf), b, req, blocking) }
    })
}

/// `MPI_Neighbor_alltoall` and its forms.
///
/// # Safety
/// MPI's contract.
#[allow(clippy::too_many_arguments)]
unsafe fn alltoall(
    what: &str,
    sendbuf: *const c_void,
    scount: i64,
    stype: c_int,
    recvbuf: *mut c_void,
    rcount: i64,
    rtype: c_int,
    comm: c_int,
    req: *mut c_int,
    blocking: bool,
) -> c_int {
    call(comm, what, || {
        let n = neighbours(comm)?;
        let b = Blocks {
            sends: uniform(n.1.len(), scount * elem(stype)?)?,
            recvs: uniform(n.0.len(), rcount * elem(rtype)?)?,
        };
        // SAFETY: forwarded.
        unsafe { exchange(comm, n, Bufs::Raw(sendbuf, recvbuf), b, req, blocking) }
    })
}

/// `MPI_Neighbor_alltoallv` and its forms.
///
/// # Safety
/// MPI's contract.
#[allow(clippy::too_many_arguments)]
unsafe fn alltoallv<C: Num, D: Num>(
    what: &str,
    sendbuf: *const c_void,
    scounts: *const C,
    sdispls: *const D,
    stype: c_int,
    recvbuf: *mut c_void,
    rcounts: *const C,
    rdispls: *const D,
    rtype: c_int,
    comm: c_int,
    req: *mut c_int,
    blocking: bool,
) -> c_int {
    call(comm, what, || {
        let n = neighbours(comm)?;
        let (ki, ko) = (n.0.len(), n.1.len());
        let (ss, rs) = (elem(stype)?, elem(rtype)?);
        // SAFETY: MPI's contract: an entry per destination (source).
        let (sc, sd, rc, rd) = unsafe {
            (
                read(scounts, ko)?,
                read(sdispls, ko)?,
                read(rcounts, ki)?,
                read(rdispls, ki)?,
            )
        };
        let b = Blocks {
            sends: varied(&sc, &sd, ss, ss)?,
            recvs: varied(&rc, &rd, rs, rs)?,
        };
        // SAFETY: forwarded.
        unsafe { exchange(comm, n, Bufs::Raw(sendbuf, recvbuf), b, req, blocking) }
    })
}

/// The parts of one side of a w-form, those of `MPI_PROC_NULL`
/// neighbours emptied (their blocks are neither read nor written).
///
/// # Safety
/// Each array is null or holds an entry per neighbour.
unsafe fn w_parts<C: Copy + TryInto<usize>>(
    counts: *const C,
    displs: *const MPI_Aint,
    types: *const c_int,
    ranks: &[i32],
) -> Result<Vec<Typed>, c_int> {
    // SAFETY: by the caller's contract.
    let mut p = unsafe { crate::wcoll::parts(counts, displs, types, ranks.len()) }?;
    for (p, &r) in p.iter_mut().zip(ranks) {
        if r == MPI_PROC_NULL {
            p.count = 0;
        }
    }
    Ok(p)
}

/// `MPI_Neighbor_alltoallw` and its forms: each block packed (sent) or
/// received (unpacked) with its own type, through temporaries.
///
/// # Safety
/// MPI's contract.
#[allow(clippy::too_many_arguments)]
unsafe fn alltoallw<C: Copy + TryInto<usize>>(
    what: &str,
    sendbuf: *const c_void,
    scounts: *const C,
    sdispls: *const MPI_Aint,
    stypes: *const c_int,
    recvbuf: *mut c_void,
    rcounts: *const C,
    rdispls: *const MPI_Aint,
    rtypes: *const c_int,
    comm: c_int,
    req: *mut c_int,
    blocking: bool,
) -> c_int {
    call(comm, what, || {
        if crate::coll::in_place(sendbuf) {
            return Err(MPI_ERR_ARG);
        }
        let n = neighbours(comm)?;
        // SAFETY: MPI's contract: an entry per destination (source), and
        // the buffers hold the parts.
        let ((inp, sends), (out, recvs)) = unsafe {
            let sp = w_parts(scounts, sdispls, stypes, &n.1)?;
            let rp = w_parts(rcounts, rdispls, rtypes, &n.0)?;
            (SendBuf::typed(sendbuf, &sp)?, RecvBuf::typed(recvbuf, &rp)?)
        };
        let b = Blocks { sends, recvs };
        // SAFETY: forwarded.
        unsafe { exchange(comm, n, Bufs::Typed(inp, out), b, req, blocking) }
    })
}

const NO_REQ: *mut c_int = std::ptr::null_mut();

crate::mpi! {
    /// `MPI_Neighbor_allgather`.
    fn PMPI_Neighbor_allgather(sendbuf: *const c_void, sendcount: c_int, sendtype: c_int, recvbuf: *mut c_void, recvcount: c_int, recvtype: c_int, comm: c_int) -> c_int as MPI_Neighbor_allgather {
        // SAFETY: MPI's contract, forwarded.
        unsafe { allgather("MPI_Neighbor_allgather", sendbuf, sendcount.into(), sendtype, recvbuf, recvcount.into(), recvtype, comm, NO_REQ, true) }
    }
}

crate::mpi! {
    /// `MPI_Neighbor_allgather_c`.
    fn PMPI_Neighbor_allgather_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: c_int, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: c_int, comm: c_int) -> c_int as MPI_Neighbor_allgather_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { allgather("MPI_Neighbor_allgather_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, NO_REQ, true) }
    }
}

crate::mpi! {
    /// `MPI_Ineighbor_allgather`.
    fn PMPI_Ineighbor_allgather(sendbuf: *const c_void, sendcount: c_int, sendtype: c_int, recvbuf: *mut c_void, recvcount: c_int, recvtype: c_int, comm: c_int, req: *mut c_int) -> c_int as MPI_Ineighbor_allgather {
        // SAFETY: MPI's contract, forwarded.
        unsafe { allgather("MPI_Ineighbor_allgather", sendbuf, sendcount.into(), sendtype, recvbuf, recvcount.into(), recvtype, comm, req, false) }
    }
}

crate::mpi! {
    /// `MPI_Ineighbor_allgather_c`.
    fn PMPI_Ineighbor_allgather_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: c_int, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: c_int, comm: c_int, req: *mut c_int) -> c_int as MPI_Ineighbor_allgather_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { allgather("MPI_Ineighbor_allgather_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, req, false) }
    }
}

crate::mpi! {
    /// `MPI_Neighbor_allgatherv`.
    fn PMPI_Neighbor_allgatherv(sendbuf: *const c_void, sendcount: c_int, sendtype: c_int, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: c_int, comm: c_int) -> c_int as MPI_Neighbor_allgatherv {
        // SAFETY: MPI's contract, forwarded.
        unsafe { allgatherv("MPI_Neighbor_allgatherv", sendbuf, sendcount.into(), sendtype, recvbuf, recvcounts, displs, recvtype, comm, NO_REQ, true) }
    }
}

crate::mpi! {
    /// `MPI_Neighbor_allgatherv_c`.
    fn PMPI_Neighbor_allgatherv_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: c_int, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: c_int, comm: c_int) -> c_int as MPI_Neighbor_allgatherv_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { allgatherv("MPI_Neighbor_allgatherv_c", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, NO_REQ, true) }
    }
}

crate::mpi! {
    /// `MPI_Ineighbor_allgatherv`.
    fn PMPI_Ineighbor_allgatherv(sendbuf: *const c_void, sendcount: c_int, sendtype: c_int, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: c_int, comm: c_int, req: *mut c_int) -> c_int as MPI_Ineighbor_allgatherv {
        // SAFETY: MPI's contract, forwarded.
        unsafe { allgatherv("MPI_Ineighbor_allgatherv", sendbuf, sendcount.into(), sendtype, recvbuf, recvcounts, displs, recvtype, comm, req, false) }
    }
}

crate::mpi! {
    /// `MPI_Ineighbor_allgatherv_c`.
    fn PMPI_Ineighbor_allgatherv_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: c_int, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: c_int, comm: c_int, req: *mut c_int) -> c_int as MPI_Ineighbor_allgatherv_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { allgatherv("MPI_Ineighbor_allgatherv_c", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, req, false) }
    }
}

crate::mpi! {
    /// `MPI_Neighbor_alltoall`.
    fn PMPI_Neighbor_alltoall(sendbuf: *const c_void, sendcount: c_int, sendtype: c_int, recvbuf: *mut c_void, recvcount: c_int, recvtype: c_int, comm: c_int) -> c_int as MPI_Neighbor_alltoall {
        // SAFETY: MPI's contract, forwarded.
        unsafe { alltoall("MPI_Neighbor_alltoall", sendbuf, sendcount.into(), sendtype, recvbuf, recvcount.into(), recvtype, comm, NO_REQ, true) }
    }
}

crate::mpi! {
    /// `MPI_Neighbor_alltoall_c`.
    fn PMPI_Neighbor_alltoall_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: c_int, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: c_int, comm: c_int) -> c_int as MPI_Neighbor_alltoall_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { alltoall("MPI_Neighbor_alltoall_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, NO_REQ, true) }
    }
}

crate::mpi! {
    /// `MPI_Ineighbor_alltoall`.
    fn PMPI_Ineighbor_alltoall(sendbuf: *const c_void, sendcount: c_int, sendtype: c_int, recvbuf: *mut c_void, recvcount: c_int, recvtype: c_int, comm: c_int, req: *mut c_int) -> c_int as MPI_Ineighbor_alltoall {
        // SAFETY: MPI's contract, forwarded.
        unsafe { alltoall("MPI_Ineighbor_alltoall", sendbuf, sendcount.into(), sendtype, recvbuf, recvcount.into(), recvtype, comm, req, false) }
    }
}

crate::mpi! {
    /// `MPI_Ineighbor_alltoall_c`.
    fn PMPI_Ineighbor_alltoall_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: c_int, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: c_int, comm: c_int, req: *mut c_int) -> c_int as MPI_Ineighbor_alltoall_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { alltoall("MPI_Ineighbor_alltoall_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, req, false) }
    }
}

crate::mpi! {
    /// `MPI_Neighbor_alltoallv`.
    fn PMPI_Neighbor_alltoallv(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: c_int, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: c_int, comm: c_int) -> c_int as MPI_Neighbor_alltoallv {
        // SAFETY: MPI's contract, forwarded.
        unsafe { alltoallv("MPI_Neighbor_alltoallv", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, NO_REQ, true) }
    }
}

crate::mpi! {
    /// `MPI_Neighbor_alltoallv_c`.
    fn PMPI_Neighbor_alltoallv_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtype: c_int, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtype: c_int, comm: c_int) -> c_int as MPI_Neighbor_alltoallv_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { alltoallv("MPI_Neighbor_alltoallv_c", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, NO_REQ, true) }
    }
}

crate::mpi! {
    /// `MPI_Ineighbor_alltoallv`.
    fn PMPI_Ineighbor_alltoallv(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: c_int, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: c_int, comm: c_int, req: *mut c_int) -> c_int as MPI_Ineighbor_alltoallv {
        // SAFETY: MPI's contract, forwarded.
        unsafe { alltoallv("MPI_Ineighbor_alltoallv", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, req, false) }
    }
}

crate::mpi! {
    /// `MPI_Ineighbor_alltoallv_c`.
    fn PMPI_Ineighbor_alltoallv_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtype: c_int, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtype: c_int, comm: c_int, req: *mut c_int) -> c_int as MPI_Ineighbor_alltoallv_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { alltoallv("MPI_Ineighbor_alltoallv_c", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, req, false) }
    }
}

crate::mpi! {
    /// `MPI_Neighbor_alltoallw`.
    fn PMPI_Neighbor_alltoallw(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const MPI_Aint, sendtypes: *const c_int, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const MPI_Aint, recvtypes: *const c_int, comm: c_int) -> c_int as MPI_Neighbor_alltoallw {
        // SAFETY: MPI's contract, forwarded.
        unsafe { alltoallw("MPI_Neighbor_alltoallw", sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, NO_REQ, true) }
    }
}

crate::mpi! {
    /// `MPI_Neighbor_alltoallw_c`.
    fn PMPI_Neighbor_alltoallw_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtypes: *const c_int, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtypes: *const c_int, comm: c_int) -> c_int as MPI_Neighbor_alltoallw_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { alltoallw("MPI_Neighbor_alltoallw_c", sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, NO_REQ, true) }
    }
}

crate::mpi! {
    /// `MPI_Ineighbor_alltoallw`.
    fn PMPI_Ineighbor_alltoallw(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const MPI_Aint, sendtypes: *const c_int, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const MPI_Aint, recvtypes: *const c_int, comm: c_int, req: *mut c_int) -> c_int as MPI_Ineighbor_alltoallw {
        // SAFETY: MPI's contract, forwarded.
        unsafe { alltoallw("MPI_Ineighbor_alltoallw", sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, req, false) }
    }
}

crate::mpi! {
    /// `MPI_Ineighbor_alltoallw_c`.
    fn PMPI_Ineighbor_alltoallw_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtypes: *const c_int, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtypes: *const c_int, comm: c_int, req: *mut c_int) -> c_int as MPI_Ineighbor_alltoallw_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { alltoallw("MPI_Ineighbor_alltoallw_c", sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, req, false) }
    }
}

/// The numbers of sources and destinations of `comm` (0 without a
/// topology: the start reports it).
fn degrees(comm: c_int) -> (usize, usize) {
    neighbours(comm).map_or((0, 0), |(s, d)| (s.len(), d.len()))
}

/// A persistent neighbourhood collective's init: `comm` has a topology.
fn init_args(comm: c_int) -> Result<(), c_int> {
    neighbours(comm).map(drop)
}

macro_rules! neighbor_inits {
    ($cnt:ty, $disp:ty, $pag:ident $ag:ident => $iag:ident, $pagv:ident $agv:ident => $iagv:ident,
     $pa:ident $a:ident => $ia:ident, $pav:ident $av:ident => $iav:ident, $paw:ident $aw:ident => $iaw:ident) => {
        crate::mpi! {
            #[doc = concat!("`", stringify!($ag), "`: each start is an `", stringify!($iag), "`.")]
            fn $pag(sendbuf: *const c_void, scount: $cnt, stype: c_int, recvbuf: *mut c_void, rcount: $cnt, rtype: c_int, comm: c_int, _info: c_int, req: *mut c_int) -> c_int as $ag {
                // SAFETY: MPI's contract: the init's buffers stay valid
                // while the request lives.
                coll_init(stringify!($ag), comm, req, init_args(comm), Rc::new(move |r| unsafe { $iag(sendbuf, scount, stype, recvbuf, rcount, rtype, comm, r) }))
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($agv), "`: each start is an `", stringify!($iagv), "` (the arrays are copied at init).")]
            fn $pagv(sendbuf: *const c_void, scount: $cnt, stype: c_int, recvbuf: *mut c_void, rcounts: *const $cnt, displs: *const $disp, rtype: c_int, comm: c_int, _info: c_int, req: *mut c_int) -> c_int as $agv {
                let (ki, _) = degrees(comm);
                // SAFETY: MPI's contract: an entry per source.
                let (rc, d) = unsafe { (kept(rcounts, ki), kept(displs, ki)) };
                // SAFETY: as above.
                coll_init(stringify!($agv), comm, req, init_args(comm), Rc::new(move |r| unsafe { $iagv(sendbuf, scount, stype, recvbuf, at(&rc), at(&d), rtype, comm, r) }))
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($a), "`: each start is an `", stringify!($ia), "`.")]
            fn $pa(sendbuf: *const c_void, scount: $cnt, stype: c_int, recvbuf: *mut c_void, rcount: $cnt, rtype: c_int, comm: c_int, _info: c_int, req: *mut c_int) -> c_int as $a {
                // SAFETY: as above.
                coll_init(stringify!($a), comm, req, init_args(comm), Rc::new(move |r| unsafe { $ia(sendbuf, scount, stype, recvbuf, rcount, rtype, comm, r) }))
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($av), "`: each start is an `", stringify!($iav), "` (the arrays are copied at init).")]
            fn $pav(sendbuf: *const c_void, scounts: *const $cnt, sdispls: *const $disp, stype: c_int, recvbuf: *mut c_void, rcounts: *const $cnt, rdispls: *const $disp, rtype: c_int, comm: c_int, _info: c_int, req: *mut c_int) -> c_int as $av {
                let (ki, ko) = degrees(comm);
                // SAFETY: MPI's contract: an entry per destination (source).
                let (sc, sd, rc, rd) = unsafe { (kept(scounts, ko), kept(sdispls, ko), kept(rcounts, ki), kept(rdispls, ki)) };
                // SAFETY: as above.
                coll_init(stringify!($av), comm, req, init_args(comm), Rc::new(move |r| unsafe { $iav(sendbuf, at(&sc), at(&sd), stype, recvbuf, at(&rc), at(&rd), rtype, comm, r) }))
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($aw), "`: each start is an `", stringify!($iaw), "` (the arrays are copied at init).")]
            fn $paw(sendbuf: *const c_void, scounts: *const $cnt, sdispls: *const MPI_Aint, stypes: *const c_int, recvbuf: *mut c_void, rcounts: *const $cnt, rdispls: *const MPI_Aint, rtypes: *const c_int, comm: c_int, _info: c_int, req: *mut c_int) -> c_int as $aw {
                let (ki, ko) = degrees(comm);
                // SAFETY: MPI's contract: an entry per destination (source).
                let (s, r) = unsafe { ((kept(scounts, ko), kept(sdispls, ko), kept(stypes, ko)), (kept(rcounts, ki), kept(rdispls, ki), kept(rtypes, ki))) };
                // SAFETY: as above.
                coll_init(stringify!($aw), comm, req, init_args(comm), Rc::new(move |q| unsafe { $iaw(sendbuf, at(&s.0), at(&s.1), at(&s.2), recvbuf, at(&r.0), at(&r.1), at(&r.2), comm, q) }))
            }
        }
    };
}

neighbor_inits!(c_int, c_int,
    PMPI_Neighbor_allgather_init MPI_Neighbor_allgather_init => PMPI_Ineighbor_allgather,
    PMPI_Neighbor_allgatherv_init MPI_Neighbor_allgatherv_init => PMPI_Ineighbor_allgatherv,
    PMPI_Neighbor_alltoall_init MPI_Neighbor_alltoall_init => PMPI_Ineighbor_alltoall,
    PMPI_Neighbor_alltoallv_init MPI_Neighbor_alltoallv_init => PMPI_Ineighbor_alltoallv,
    PMPI_Neighbor_alltoallw_init MPI_Neighbor_alltoallw_init => PMPI_Ineighbor_alltoallw);
neighbor_inits!(MPI_Count, MPI_Aint,
    PMPI_Neighbor_allgather_init_c MPI_Neighbor_allgather_init_c => PMPI_Ineighbor_allgather_c,
    PMPI_Neighbor_allgatherv_init_c MPI_Neighbor_allgatherv_init_c => PMPI_Ineighbor_allgatherv_c,
    PMPI_Neighbor_alltoall_init_c MPI_Neighbor_alltoall_init_c => PMPI_Ineighbor_alltoall_c,
    PMPI_Neighbor_alltoallv_init_c MPI_Neighbor_alltoallv_init_c => PMPI_Ineighbor_alltoallv_c,
    PMPI_Neighbor_alltoallw_init_c MPI_Neighbor_alltoallw_init_c => PMPI_Ineighbor_alltoallw_c);
