//! Non-blocking collectives: `Ibarrier`, `Ibcast`, `Ireduce`,
//! `Iallreduce`, `Iallgather`, `Ialltoall` (and their large-count
//! forms), on pertinax's schedules over the C buffers
//! (`Comm::icollective_lent`); `MPI_IN_PLACE` inputs are copied and the
//! copy kept with the request. The others (gather, scatter, the v-forms,
//! scans, reduce-scatter) are in `ivcoll.rs`.

use std::ffi::{c_int, c_void};

use pertinax::{LentCollective, Rank};
use pertinax_os::lend::{lend_mut_raw, lend_raw};

use crate::coll::in_place;
use crate::consts::*;
use crate::datatype::bytes;
use crate::errors::code_of;
use crate::large::MPI_Count;
use crate::p2p::{call, comm_of};
use crate::reduce::operation;
use crate::state::{self, ReqEntry};

/// Starts `which` and registers its request (with `keep`, the copy it
/// reads, if any).
///
/// # Safety
/// `inp` (unless `keep` holds the input) and `out` are the program's
/// buffers of `in_len` and `out_len` bytes, valid until the request
/// completes (MPI's contract).
#[allow(clippy::too_many_arguments)]
unsafe fn start(
    comm: c_int,
    which: LentCollective,
    inp: Option<(*const c_void, usize)>,
    keep: Option<Box<[u8]>>,
    out: (*mut c_void, usize),
    req: *mut c_int,
) -> Result<(), c_int> {
    if req.is_null() {
        return Err(MPI_ERR_ARG);
    }
    let c = comm_of(comm)?;
    let lent_in = match (&keep, inp) {
        // SAFETY: the copy lives in the request's entry until it completes.
        (Some(k), _) => Some(unsafe { lend_raw(k.as_ptr(), k.len()) }),
        // SAFETY: by the caller's contract.
        (None, Some((p, n))) => Some(unsafe { lend_raw(p.cast(), n) }),
        (None, None) => None,
    };
    // SAFETY: by the caller's contract.
    let lent_out = unsafe { lend_mut_raw(out.0.cast(), out.1) };
    let r = c
        .icollective_lent(which, lent_in, lent_out)
        .map_err(|e| code_of(&e))?;
    let e = ReqEntry::Pending {
        req: r,
        comm,
        recv: false,
        keep,
    };
    let h = state::with(|s| REQUEST_DIRECT | state::insert(&mut s.requests, e) as c_int)
        .ok_or(MPI_ERR_OTHER)?;
    // SAFETY: checked non-null.
    unsafe { *req = h };
    Ok(())
}

fn count(n: MPI_Count) -> Result<c_int, c_int> {
    c_int::try_from(n).map_err(|_| MPI_ERR_COUNT)
}

/// `Iallreduce` and `Ireduce` (`root` `Some`).
///
/// # Safety
/// MPI's contract for the buffers.
#[allow(clippy::too_many_arguments)]
unsafe fn ireduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    n: MPI_Count,
    ty: c_int,
    op: c_int,
    root: Option<c_int>,
    comm: c_int,
    req: *mut c_int,
) -> Result<(), c_int> {
    let (len, _) = bytes(count(n)?, ty)?;
    let o = operation(op, ty)?;
    let c = comm_of(comm)?;
    let at_root = root.is_none_or(|r| c.rank().0 == r);
    let out_len = if at_root { len } else { 0 };
    let keep = (in_place(sendbuf) && at_root).then(|| {
        // SAFETY: MPI's contract: with MPI_IN_PLACE the input is `recvbuf`.
        unsafe { crate::p2p::slice(recvbuf, len) }.into()
    });
    let which = match root {
        Some(r) => LentCollective::Reduce {
            op: o,
            root: Rank(r),
        },
        None => LentCollective::Allreduce { op: o },
    };
    // SAFETY: forwarded.
    unsafe {
        start(
            comm,
            which,
            Some((sendbuf, len)),
            keep,
            (recvbuf, out_len),
            req,
        )
    }
}

/// `Iallgather` and `Ialltoall`.
///
/// # Safety
/// MPI's contract for the buffers.
#[allow(clippy::too_many_arguments)]
unsafe fn igather(
    sendbuf: *const c_void,
    scount: MPI_Count,
    sendtype: c_int,
    recvbuf: *mut c_void,
    rcount: MPI_Count,
    recvtype: c_int,
    comm: c_int,
    req: *mut c_int,
    all_to_all: bool,
) -> Result<(), c_int> {
    let n = comm_of(comm)?.size();
    let (part, _) = bytes(count(rcount)?, recvtype)?;
    let out_len = part * n;
    let (which, in_len) = if all_to_all {
        (LentCollective::Alltoall, out_len)
    } else {
        (LentCollective::Allgather, part)
    };
    let keep = if in_place(sendbuf) {
        // SAFETY: MPI's contract: `recvbuf` holds `size` parts.
        let all = unsafe { crate::p2p::slice(recvbuf, out_len) };
        let me = comm_of(comm)?.rank().0 as usize;
        Some(if all_to_all {
            all.into()
        } else {
            all[me * part..(me + 1) * part].into()
        })
    } else {
        let (s, _) = bytes(count(scount)?, sendtype)?;
        if s * if all_to_all { n } else { 1 } != in_len {
            return Err(MPI_ERR_TRUNCATE);
        }
        None
    };
    // SAFETY: forwarded.
    unsafe {
        start(
            comm,
            which,
            Some((sendbuf, in_len)),
            keep,
            (recvbuf, out_len),
            req,
        )
    }
}

crate::mpi! {
    /// `MPI_Ibarrier`.
    fn PMPI_Ibarrier(comm: c_int, req: *mut c_int) -> c_int as MPI_Ibarrier {
        call(comm, "MPI_Ibarrier", || {
            // SAFETY: no buffers.
            unsafe { start(comm, LentCollective::Barrier, None, None, (std::ptr::null_mut(), 0), req) }
        })
    }
}

/// `Ibcast` of `n` elements.
///
/// # Safety
/// MPI's contract for the buffer.
unsafe fn ibcast(
    buf: *mut c_void,
    n: MPI_Count,
    ty: c_int,
    root: c_int,
    comm: c_int,
    req: *mut c_int,
) -> Result<(), c_int> {
    let (len, _) = bytes(count(n)?, ty)?;
    // SAFETY: forwarded.
    unsafe {
        start(
            comm,
            LentCollective::Bcast { root: Rank(root) },
            None,
            None,
            (buf, len),
            req,
        )
    }
}

macro_rules! forms {
    ($cnt:ty, $pb:ident $b:ident, $pr:ident $r:ident, $par:ident $ar:ident, $pag:ident $ag:ident, $pa:ident $a:ident) => {
        crate::mpi! {
            #[doc = concat!("`", stringify!($b), "`.")]
            fn $pb(buf: *mut c_void, count: $cnt, ty: c_int, root: c_int, comm: c_int, req: *mut c_int) -> c_int as $b {
                // SAFETY: MPI's contract, forwarded.
                call(comm, stringify!($b), || unsafe { ibcast(buf, count.into(), ty, root, comm, req) })
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($r), "` (`MPI_IN_PLACE` at the root).")]
            fn $pr(sendbuf: *const c_void, recvbuf: *mut c_void, count: $cnt, ty: c_int, op: c_int, root: c_int, comm: c_int, req: *mut c_int) -> c_int as $r {
                // SAFETY: MPI's contract, forwarded.
                call(comm, stringify!($r), || unsafe { ireduce(sendbuf, recvbuf, count.into(), ty, op, Some(root), comm, req) })
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($ar), "` (`MPI_IN_PLACE` too).")]
            fn $par(sendbuf: *const c_void, recvbuf: *mut c_void, count: $cnt, ty: c_int, op: c_int, comm: c_int, req: *mut c_int) -> c_int as $ar {
                // SAFETY: MPI's contract, forwarded.
                call(comm, stringify!($ar), || unsafe { ireduce(sendbuf, recvbuf, count.into(), ty, op, None, comm, req) })
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($ag), "` (`MPI_IN_PLACE` too).")]
            fn $pag(sendbuf: *const c_void, sendcount: $cnt, sendtype: c_int, recvbuf: *mut c_void, recvcount: $cnt, recvtype: c_int, comm: c_int, req: *mut c_int) -> c_int as $ag {
                // SAFETY: MPI's contract, forwarded.
                call(comm, stringify!($ag), || unsafe { igather(sendbuf, sendcount.into(), sendtype, recvbuf, recvcount.into(), recvtype, comm, req, false) })
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($a), "` (`MPI_IN_PLACE` too).")]
            fn $pa(sendbuf: *const c_void, sendcount: $cnt, sendtype: c_int, recvbuf: *mut c_void, recvcount: $cnt, recvtype: c_int, comm: c_int, req: *mut c_int) -> c_int as $a {
                // SAFETY: MPI's contract, forwarded.
                call(comm, stringify!($a), || unsafe { igather(sendbuf, sendcount.into(), sendtype, recvbuf, recvcount.into(), recvtype, comm, req, true) })
            }
        }
    };
}

forms!(c_int, PMPI_Ibcast MPI_Ibcast, PMPI_Ireduce MPI_Ireduce, PMPI_Iallreduce MPI_Iallreduce,
    PMPI_Iallgather MPI_Iallgather, PMPI_Ialltoall MPI_Ialltoall);
forms!(MPI_Count, PMPI_Ibcast_c MPI_Ibcast_c, PMPI_Ireduce_c MPI_Ireduce_c, PMPI_Iallreduce_c MPI_Iallreduce_c,
    PMPI_Iallgather_c MPI_Iallgather_c, PMPI_Ialltoall_c MPI_Ialltoall_c);
