//! Non-blocking collectives: `Ibarrier`, `Ibcast`, `Ireduce`,
//! `Iallreduce`, `Iallgather`, `Ialltoall` (and their large-count
//! forms), on pertinax's schedules over the C buffers
//! (`Comm::icollective_lent`); `MPI_IN_PLACE` inputs and packed inputs
//! of non-contiguous datatypes are copies kept with the request, and a
//! non-contiguous output a temporary unpacked when it completes. The
//! others (gather, scatter, the v-forms, scans, reduce-scatter) are in
//! `ivcoll.rs`.

use std::ffi::{c_int, c_void};

use pertinax::{LentCollective, Rank};

use crate::coll::{in_place, operand};
use crate::consts::*;
use crate::datatype::{usable, RecvBuf, SendBuf};
use crate::errors::code_of;
use crate::inter::inter_of;
use crate::large::MPI_Count;
use crate::p2p::{call, comm_of};
use crate::reduce::operation;
use crate::state::{self, ReqEntry};

/// Starts `which` and registers its request (with the packed input or
/// `MPI_IN_PLACE` copy it reads, and the temporary it writes, if any).
///
/// # Safety
/// The program's buffers behind `inp` and `out` stay valid until the
/// request completes (MPI's contract).
pub(crate) unsafe fn start(
    comm: c_int,
    which: LentCollective,
    inp: Option<SendBuf>,
    out: RecvBuf,
    req: *mut c_int,
) -> Result<(), c_int> {
    let c = comm_of(comm)?;
    // SAFETY: forwarded.
    unsafe { start_on(&c, comm, which, inp, out, req) }
}

/// [`start`] on communicator `c` (an intercommunicator's shadow), the
/// request registered under handle `comm` (for its error handler).
///
/// # Safety
/// As [`start`].
pub(crate) unsafe fn start_on(
    c: &pertinax::Comm,
    comm: c_int,
    which: LentCollective,
    inp: Option<SendBuf>,
    mut out: RecvBuf,
    req: *mut c_int,
) -> Result<(), c_int> {
    if req.is_null() {
        return Err(MPI_ERR_ARG);
    }
    let (lent_in, keep) = match inp {
        Some(b) => {
            let (l, k) = b.lend();
            (Some(l), k)
        }
        None => (None, None),
    };
    let lent_out = out.lend();
    let r = c
        .icollective_lent(which, lent_in, lent_out)
        .map_err(|e| code_of(&e))?;
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

fn count(n: MPI_Count) -> Result<usize, c_int> {
    usize::try_from(n).map_err(|_| MPI_ERR_COUNT)
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
    let n = count(n)?;
    if let Some(r) = crate::resilient::lookup(comm) {
        // SAFETY: forwarded.
        let run = unsafe { crate::ready::reduce(&*r, sendbuf, recvbuf, n, ty, op, root) }?;
        return crate::resilient_icoll::start(&r, run, comm, req);
    }
    if let Some(c) = inter_of(comm) {
        // SAFETY: forwarded.
        return unsafe {
            match root {
                Some(r) => {
                    crate::intercoll::reduce(sendbuf, recvbuf, n, ty, op, r, comm, &c, Some(req))
                }
                None => {
                    crate::intercoll::allreduce(sendbuf, recvbuf, n, ty, op, comm, &c, Some(req))
                }
            }
        };
    }
    let t = usable(ty)?;
    let o = operation(op, ty)?;
    let c = comm_of(comm)?;
    if let Some(r) = root {
        crate::check::root(&c, r)?;
    }
    let at_root = root.is_none_or(|r| c.rank().0 == r);
    let out = if at_root {
        // SAFETY: MPI's contract: `recvbuf` holds `count` elements.
        unsafe { RecvBuf::new(recvbuf, n, &t) }?
    } else {
        RecvBuf::empty()
    };
    let inp = if at_root {
        // SAFETY: MPI's contract: `sendbuf` holds `count` elements unless
        // MPI_IN_PLACE.
        unsafe { operand(sendbuf, n, &t, &out) }?
    } else {
        // SAFETY: as above.
        unsafe { SendBuf::new(sendbuf, n, &t) }?
    };
    let which = match root {
        Some(r) => LentCollective::Reduce {
            op: o,
            root: Rank(r),
        },
        None => LentCollective::Allreduce { op: o },
    };
    // SAFETY: forwarded.
    unsafe { start(comm, which, Some(inp), out, req) }
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
    if let Some(r) = crate::resilient::lookup(comm) {
        let (sc, rc) = (count(scount)?, count(rcount)?);
        // SAFETY: forwarded.
        let run = unsafe {
            crate::ready::all(
                &*r, all_to_all, sendbuf, sc, sendtype, recvbuf, rc, recvtype,
            )
        }?;
        return crate::resilient_icoll::start(&r, run, comm, req);
    }
    if let Some(c) = inter_of(comm) {
        let (sc, rc) = (count(scount)?, count(rcount)?);
        // SAFETY: forwarded.
        return unsafe {
            crate::intercoll::all(
                all_to_all,
                sendbuf,
                sc,
                sendtype,
                recvbuf,
                rc,
                recvtype,
                comm,
                &c,
                Some(req),
            )
        };
    }
    let c = comm_of(comm)?;
    let n = c.size();
    let rt = usable(recvtype)?;
    let k = count(rcount)?.checked_mul(n).ok_or(MPI_ERR_COUNT)?;
    // SAFETY: MPI's contract: `recvbuf` holds `size` parts.
    let out = unsafe { RecvBuf::new(recvbuf, k, &rt) }?;
    let part = out.len() / n.max(1);
    let (which, in_len) = if all_to_all {
        (LentCollective::Alltoall, out.len())
    } else {
        (LentCollective::Allgather, part)
    };
    let inp = if in_place(sendbuf) {
        let all = out.current();
        let me = c.rank().0 as usize;
        SendBuf::from_vec(if all_to_all {
            all
        } else {
            all.get(me * part..(me + 1) * part).unwrap_or(&[]).to_vec()
        })
    } else {
        let st = usable(sendtype)?;
        let k = count(scount)?
            .checked_mul(if all_to_all { n } else { 1 })
            .ok_or(MPI_ERR_COUNT)?;
        // SAFETY: MPI's contract: `sendbuf` holds one part (`size` for
        // alltoall).
        let b = unsafe { SendBuf::new(sendbuf, k, &st) }?;
        if b.bytes().len() != in_len {
            return Err(MPI_ERR_TRUNCATE);
        }
        b
    };
    // SAFETY: forwarded.
    unsafe { start(comm, which, Some(inp), out, req) }
}

crate::mpi! {
    /// `MPI_Ibarrier`.
    fn PMPI_Ibarrier(comm: c_int, req: *mut c_int) -> c_int as MPI_Ibarrier {
        call(comm, "MPI_Ibarrier", || {
            if let Some(r) = crate::resilient::lookup(comm) {
                return crate::resilient_icoll::start(&r, crate::ready::barrier(&*r), comm, req);
            }
            if let Some(c) = inter_of(comm) {
                return crate::intercoll::barrier(comm, &c, Some(req));
            }
            // SAFETY: no buffers.
            unsafe { start(comm, LentCollective::Barrier, None, RecvBuf::empty(), req) }
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
    if let Some(r) = crate::resilient::lookup(comm) {
        // SAFETY: forwarded.
        let run = unsafe { crate::ready::bcast(&*r, buf, count(n)?, ty, root) }?;
        return crate::resilient_icoll::start(&r, run, comm, req);
    }
    if let Some(c) = inter_of(comm) {
        // SAFETY: forwarded.
        return unsafe { crate::intercoll::bcast(buf, count(n)?, ty, root, comm, &c, Some(req)) };
    }
    let t = usable(ty)?;
    let c = comm_of(comm)?;
    crate::check::root(&c, root)?;
    // SAFETY: MPI's contract: `buf` holds `count` elements.
    let mut data = unsafe { RecvBuf::new(buf, count(n)?, &t) }?;
    if c.rank().0 == root {
        data.load();
    }
    // SAFETY: forwarded.
    unsafe {
        start(
            comm,
            LentCollective::Bcast { root: Rank(root) },
            None,
            data,
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
