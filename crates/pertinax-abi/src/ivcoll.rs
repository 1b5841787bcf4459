//! The rest of the non-blocking collectives: `Igather`, `Iscatter`, the
//! v-forms (`Igatherv`, `Iscatterv`, `Iallgatherv`, `Ialltoallv`), the
//! scans (`Iscan`, `Iexscan`) and `Ireduce_scatter`,
//! `Ireduce_scatter_block`, with their large-count forms, on pertinax's
//! schedules over the C buffers (`Comm::icollective_lent`, through
//! `icoll.rs`'s start), with the semantics of the blocking forms in
//! `coll.rs`, `vcoll.rs` and `reduce.rs`: derived datatypes as there (a
//! non-contiguous buffer goes through a temporary kept with the request),
//! `MPI_IN_PLACE` too (the input is a copy kept with the request; the
//! root's own part of a scatter lands in scratch). The w-form
//! (`Ialltoallw`) is in `wcoll.rs`.
//!
//! A v-collective's counts that do not fit at the root fail the call
//! there at once; the other ranks' requests then wait for a root that
//! never starts (MPI leaves erroneous arguments undefined).

use std::ffi::{c_int, c_void};

use pertinax::{LentCollective, Rank};

use crate::coll::{in_place, operand};
use crate::consts::*;
use crate::datatype::{usable, RecvBuf, SendBuf};
use crate::icoll::start;
use crate::inter::{inter_of, remote_size};
use crate::large::MPI_Count;
use crate::p2p::{call, comm_of};
use crate::reduce::operation;
use crate::vcoll::{elem, moved, own, read, v_recv, v_send};
use crate::MPI_Aint;

fn usize_of(n: MPI_Count) -> Result<usize, c_int> {
    usize::try_from(n).map_err(|_| MPI_ERR_COUNT)
}

fn root_ok(c: &pertinax::Comm, root: c_int) -> Result<bool, c_int> {
    match usize::try_from(root) {
        Ok(r) if r < c.size() => Ok(c.rank().0 == root),
        _ => Err(MPI_ERR_ROOT),
    }
}

/// Counts and packed displacements (in elements of `e` bytes) as bytes.
fn in_bytes(counts: &[usize], displs: &[usize], e: usize) -> (Vec<usize>, Vec<usize>) {
    (
        counts.iter().map(|c| c * e).collect(),
        displs.iter().map(|d| d * e).collect(),
    )
}

/// `Igather` (`v`: `Some((counts, displs))` at the root for `Igatherv`;
/// `is_v` picks the schedule).
///
/// # Safety
/// MPI's contract for the buffers.
#[allow(clippy::too_many_arguments)]
unsafe fn igatherv(
    sendbuf: *const c_void,
    scount: usize,
    stype: c_int,
    recvbuf: *mut c_void,
    rcount: usize,
    rtype: c_int,
    v: Option<(Vec<usize>, Vec<usize>)>,
    is_v: bool,
    root: c_int,
    comm: c_int,
    req: *mut c_int,
) -> Result<(), c_int> {
    let c = comm_of(comm)?;
    let n = c.size();
    let which = |lens: Vec<usize>, offs: Vec<usize>| {
        if is_v {
            LentCollective::Gatherv {
                root: Rank(root),
                lens,
                offs,
            }
        } else {
            LentCollective::Gather { root: Rank(root) }
        }
    };
    if !root_ok(&c, root)? {
        let st = usable(stype)?;
        // SAFETY: MPI's contract: `sendbuf` holds `scount` elements.
        let inp = unsafe { SendBuf::new(sendbuf, scount, &st) }?;
        // SAFETY: forwarded.
        return unsafe {
            start(
                comm,
                which(Vec::new(), Vec::new()),
                Some(inp),
                RecvBuf::empty(),
                req,
            )
        };
    }
    let rt = usable(rtype)?;
    let (counts, displs) =
        v.unwrap_or_else(|| (vec![rcount; n], (0..n).map(|i| i * rcount).collect()));
    // SAFETY: MPI's contract: at the root `recvbuf` spans the counts.
    let (out, pd) = unsafe { v_recv(recvbuf, &counts, &displs, &rt) }?;
    let e = elem(&rt);
    let counts = moved(counts, &rt);
    let me = root as usize;
    let inp = if in_place(sendbuf) {
        own(&out, pd[me], counts[me], e)
    } else {
        let st = usable(stype)?;
        // SAFETY: MPI's contract: `sendbuf` holds `scount` elements.
        unsafe { SendBuf::new(sendbuf, scount, &st) }?
    };
    let (lens, offs) = in_bytes(&counts, &pd, e);
    // SAFETY: forwarded.
    unsafe { start(comm, which(lens, offs), Some(inp), out, req) }
}

/// `Iscatter` (`v`: `Some((counts, displs))` at the root for
/// `Iscatterv`; `is_v` picks the schedule).
///
/// # Safety
/// MPI's contract for the buffers.
#[allow(clippy::too_many_arguments)]
unsafe fn iscatterv(
    sendbuf: *const c_void,
    scount: usize,
    stype: c_int,
    v: Option<(Vec<usize>, Vec<usize>)>,
    recvbuf: *mut c_void,
    rcount: usize,
    rtype: c_int,
    root: c_int,
    comm: c_int,
    req: *mut c_int,
    is_v: bool,
) -> Result<(), c_int> {
    let c = comm_of(comm)?;
    let n = c.size();
    let which = |lens: Vec<usize>, offs: Vec<usize>| {
        if is_v {
            LentCollective::Scatterv {
                root: Rank(root),
                lens,
                offs,
            }
        } else {
            LentCollective::Scatter { root: Rank(root) }
        }
    };
    if !root_ok(&c, root)? {
        let rt = usable(rtype)?;
        // SAFETY: MPI's contract: `recvbuf` holds `rcount` elements.
        let out = unsafe { RecvBuf::new(recvbuf, rcount, &rt) }?;
        // SAFETY: forwarded.
        return unsafe { start(comm, which(Vec::new(), Vec::new()), None, out, req) };
    }
    let st = usable(stype)?;
    let (counts, displs) =
        v.unwrap_or_else(|| (vec![scount; n], (0..n).map(|i| i * scount).collect()));
    // SAFETY: MPI's contract: at the root `sendbuf` spans the counts.
    let (inp, pd) = unsafe { v_send(sendbuf, &counts, &displs, &st) }?;
    let e = elem(&st);
    let counts = moved(counts, &st);
    let out = if in_place(recvbuf) {
        // The root's own part stays where it is: it lands in scratch.
        RecvBuf::scratch(counts[root as usize] * e)
    } else {
        let rt = usable(rtype)?;
        // SAFETY: MPI's contract: `recvbuf` holds `rcount` elements.
        unsafe { RecvBuf::new(recvbuf, rcount, &rt) }?
    };
    let (lens, offs) = in_bytes(&counts, &pd, e);
    // SAFETY: forwarded.
    unsafe { start(comm, which(lens, offs), Some(inp), out, req) }
}

/// `Iallgatherv` (counts and displacements in elements of `rtype`).
///
/// # Safety
/// MPI's contract for the buffers.
#[allow(clippy::too_many_arguments)]
unsafe fn iallgatherv(
    sendbuf: *const c_void,
    scount: usize,
    stype: c_int,
    recvbuf: *mut c_void,
    counts: Vec<usize>,
    displs: Vec<usize>,
    rtype: c_int,
    comm: c_int,
    req: *mut c_int,
) -> Result<(), c_int> {
    let me = comm_of(comm)?.rank().index();
    let rt = usable(rtype)?;
    // SAFETY: MPI's contract: `recvbuf` spans the counts.
    let (out, pd) = unsafe { v_recv(recvbuf, &counts, &displs, &rt) }?;
    let e = elem(&rt);
    let counts = moved(counts, &rt);
    let inp = if in_place(sendbuf) {
        own(&out, pd[me], counts[me], e)
    } else {
        let st = usable(stype)?;
        // SAFETY: MPI's contract: `sendbuf` holds `scount` elements.
        unsafe { SendBuf::new(sendbuf, scount, &st) }?
    };
    let (lens, offs) = in_bytes(&counts, &pd, e);
    let which = LentCollective::Allgatherv { lens, offs };
    // SAFETY: forwarded.
    unsafe { start(comm, which, Some(inp), out, req) }
}

/// `Ialltoallv` (`send` `None`: `MPI_IN_PLACE`); counts and
/// displacements in elements of each side's type.
///
/// # Safety
/// MPI's contract for the buffers.
#[allow(clippy::too_many_arguments)]
unsafe fn ialltoallv(
    sendbuf: *const c_void,
    send: Option<(Vec<usize>, Vec<usize>)>,
    stype: c_int,
    recvbuf: *mut c_void,
    (rcounts, rdispls): (Vec<usize>, Vec<usize>),
    rtype: c_int,
    comm: c_int,
    req: *mut c_int,
) -> Result<(), c_int> {
    let rt = usable(rtype)?;
    // SAFETY: MPI's contract: `recvbuf` spans the receive counts.
    let (out, rpd) = unsafe { v_recv(recvbuf, &rcounts, &rdispls, &rt) }?;
    // In bytes: the two sides' types may differ.
    let (rl, ro) = in_bytes(&rcounts, &rpd, rt.size());
    let (inp, sl, so) = match send {
        None => (SendBuf::from_vec(out.current()), rl.clone(), ro.clone()),
        Some((sc, sd)) => {
            let st = usable(stype)?;
            // SAFETY: MPI's contract: `sendbuf` spans the send counts.
            let (b, spd) = unsafe { v_send(sendbuf, &sc, &sd, &st) }?;
            let (sl, so) = in_bytes(&sc, &spd, st.size());
            (b, sl, so)
        }
    };
    let which = LentCollective::Alltoallv { sl, so, rl, ro };
    // SAFETY: forwarded.
    unsafe { start(comm, which, Some(inp), out, req) }
}

/// `Iscan`, `Iexscan`.
///
/// # Safety
/// MPI's contract for the buffers.
#[allow(clippy::too_many_arguments)]
unsafe fn iscan(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    n: MPI_Count,
    ty: c_int,
    op: c_int,
    comm: c_int,
    req: *mut c_int,
    exclusive: bool,
) -> Result<(), c_int> {
    let n = usize_of(n)?;
    if let Some(r) = crate::resilient::lookup(comm) {
        // SAFETY: forwarded.
        let run = unsafe { crate::ready::scan(&*r, exclusive, sendbuf, recvbuf, n, ty, op) }?;
        return crate::resilient_icoll::start(&r, run, comm, req);
    }
    let t = usable(ty)?;
    let op = operation(op, ty)?;
    // SAFETY: MPI's contract: `recvbuf` holds `count` elements.
    let mut out = unsafe { RecvBuf::new(recvbuf, n, &t) }?;
    // SAFETY: MPI's contract: `sendbuf` holds them unless MPI_IN_PLACE.
    let inp = unsafe { operand(sendbuf, n, &t, &out) }?;
    // Rank 0 of an exclusive scan leaves its buffer as it was.
    out.load();
    let which = LentCollective::Scan { op, exclusive };
    // SAFETY: forwarded.
    unsafe { start(comm, which, Some(inp), out, req) }
}

/// `Ireduce_scatter` with `counts` (elements per rank).
///
/// # Safety
/// MPI's contract for the buffers.
unsafe fn ireduce_scatter(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    counts: &[usize],
    ty: c_int,
    op: c_int,
    comm: c_int,
    req: *mut c_int,
) -> Result<(), c_int> {
    if let Some(r) = crate::resilient::lookup(comm) {
        // SAFETY: forwarded.
        let run = unsafe { crate::ready::reduce_scatter(&*r, sendbuf, recvbuf, counts, ty, op) }?;
        return crate::resilient_icoll::start(&r, run, comm, req);
    }
    if remote_size(comm).is_some() {
        // SAFETY: forwarded.
        return unsafe {
            crate::intercoll::reduce_scatter(sendbuf, recvbuf, counts, ty, op, comm, Some(req))
        };
    }
    let me = comm_of(comm)?.rank().index();
    let t = usable(ty)?;
    let op = operation(op, ty)?;
    let total: usize = counts.iter().sum();
    let mine = counts.get(me).copied().unwrap_or(0);
    let lens: Vec<usize> = counts.iter().map(|c| c * t.size()).collect();
    let inp = if in_place(sendbuf) {
        // With MPI_IN_PLACE `recvbuf` holds the whole input and gets this
        // rank's part at its start.
        // SAFETY: MPI's contract: `recvbuf` holds `total` elements.
        let whole = unsafe { RecvBuf::new(recvbuf, total, &t) }?;
        SendBuf::from_vec(whole.current())
    } else {
        // SAFETY: MPI's contract: `sendbuf` holds `total` elements.
        unsafe { SendBuf::new(sendbuf, total, &t) }?
    };
    // SAFETY: MPI's contract: `recvbuf` holds this rank's part.
    let out = unsafe { RecvBuf::new(recvbuf, mine, &t) }?;
    let which = LentCollective::ReduceScatter { op, lens };
    // SAFETY: forwarded.
    unsafe { start(comm, which, Some(inp), out, req) }
}

/// The size of `comm` (resilient or not).
fn size(comm: c_int) -> Result<usize, c_int> {
    if let Some(r) = crate::resilient::lookup(comm) {
        return Ok(r.size());
    }
    comm_of(comm).map(|c| c.size())
}

/// Whether this process is `root` of `comm` (resilient or not; a bad
/// root is `MPI_ERR_ROOT`).
fn is_root(comm: c_int, root: c_int) -> Result<bool, c_int> {
    if let Some(r) = crate::resilient::lookup(comm) {
        return crate::check::root(&*r, root).map(|at| at == r.rank());
    }
    comm_of(comm).and_then(|c| root_ok(&c, root))
}

macro_rules! forms {
    ($cnt:ty, $disp:ty, $pg:ident $g:ident, $ps:ident $s:ident, $pgv:ident $gv:ident, $psv:ident $sv:ident,
     $pagv:ident $agv:ident, $pav:ident $av:ident, $psc:ident $sc:ident, $pex:ident $ex:ident,
     $prs:ident $rs:ident, $prsb:ident $rsb:ident) => {
        crate::mpi! {
            #[doc = concat!("`", stringify!($g), "` (`MPI_IN_PLACE` at the root).")]
            fn $pg(sendbuf: *const c_void, scount: $cnt, stype: c_int, recvbuf: *mut c_void, rcount: $cnt, rtype: c_int, root: c_int, comm: c_int, req: *mut c_int) -> c_int as $g {
                call(comm, stringify!($g), || {
                    let (sc, rc) = (usize_of(scount.into())?, usize_of(rcount.into())?);
                    if let Some(r) = crate::resilient::lookup(comm) {
                        // SAFETY: MPI's contract, forwarded.
                        let run = unsafe { crate::ready::gather(&*r, sendbuf, sc, stype, recvbuf, rc, rtype, root) }?;
                        return crate::resilient_icoll::start(&r, run, comm, req);
                    }
                    if let Some(c) = inter_of(comm) {
                        // SAFETY: MPI's contract, forwarded.
                        return unsafe { crate::intercoll::rooted(false, sendbuf, sc, stype, recvbuf, rc, rtype, root, comm, &c, Some(req)) };
                    }
                    // SAFETY: MPI's contract, forwarded.
                    unsafe { igatherv(sendbuf, sc, stype, recvbuf, rc, rtype, None, false, root, comm, req) }
                })
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($s), "` (`MPI_IN_PLACE` at the root).")]
            fn $ps(sendbuf: *const c_void, scount: $cnt, stype: c_int, recvbuf: *mut c_void, rcount: $cnt, rtype: c_int, root: c_int, comm: c_int, req: *mut c_int) -> c_int as $s {
                call(comm, stringify!($s), || {
                    let (sc, rc) = (usize_of(scount.into())?, usize_of(rcount.into())?);
                    if let Some(r) = crate::resilient::lookup(comm) {
                        // SAFETY: MPI's contract, forwarded.
                        let run = unsafe { crate::ready::scatter(&*r, sendbuf, sc, stype, recvbuf, rc, rtype, root) }?;
                        return crate::resilient_icoll::start(&r, run, comm, req);
                    }
                    if let Some(c) = inter_of(comm) {
                        // SAFETY: MPI's contract, forwarded.
                        return unsafe { crate::intercoll::rooted(true, sendbuf, sc, stype, recvbuf, rc, rtype, root, comm, &c, Some(req)) };
                    }
                    // SAFETY: MPI's contract, forwarded.
                    unsafe { iscatterv(sendbuf, sc, stype, None, recvbuf, rc, rtype, root, comm, req, false) }
                })
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($gv), "` (`MPI_IN_PLACE` at the root).")]
            fn $pgv(sendbuf: *const c_void, scount: $cnt, stype: c_int, recvbuf: *mut c_void, rcounts: *const $cnt, displs: *const $disp, rtype: c_int, root: c_int, comm: c_int, req: *mut c_int) -> c_int as $gv {
                call(comm, stringify!($gv), || {
                    let sc = usize_of(scount.into())?;
                    if let Some(n) = remote_size(comm) {
                        // SAFETY: MPI's contract: at the root the arrays
                        // hold the remote group's size.
                        let v = if root == MPI_ROOT { Some(unsafe { (read(rcounts, n)?, read(displs, n)?) }) } else { None };
                        // SAFETY: MPI's contract, forwarded.
                        return unsafe { crate::intercoll::rooted_v(false, comm, root, recvbuf, v, rtype, sendbuf.cast_mut(), sc, stype, Some(req)) };
                    }
                    let v = if is_root(comm, root)? {
                        let n = size(comm)?;
                        // SAFETY: MPI's contract: at the root the arrays
                        // hold `size` entries.
                        Some(unsafe { (read(rcounts, n)?, read(displs, n)?) })
                    } else {
                        None
                    };
                    if let Some(r) = crate::resilient::lookup(comm) {
                        // SAFETY: MPI's contract, forwarded.
                        let run = unsafe { crate::vcoll::gatherv(&*r, sendbuf, sc, stype, recvbuf, v, rtype, root) }?;
                        return crate::resilient_icoll::start(&r, run, comm, req);
                    }
                    // SAFETY: MPI's contract, forwarded.
                    unsafe { igatherv(sendbuf, sc, stype, recvbuf, 0, rtype, v, true, root, comm, req) }
                })
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($sv), "` (`MPI_IN_PLACE` at the root).")]
            fn $psv(sendbuf: *const c_void, scounts: *const $cnt, displs: *const $disp, stype: c_int, recvbuf: *mut c_void, rcount: $cnt, rtype: c_int, root: c_int, comm: c_int, req: *mut c_int) -> c_int as $sv {
                call(comm, stringify!($sv), || {
                    let rc = usize_of(rcount.into())?;
                    if let Some(n) = remote_size(comm) {
                        // SAFETY: MPI's contract: at the root the arrays
                        // hold the remote group's size.
                        let v = if root == MPI_ROOT { Some(unsafe { (read(scounts, n)?, read(displs, n)?) }) } else { None };
                        // SAFETY: MPI's contract, forwarded.
                        return unsafe { crate::intercoll::rooted_v(true, comm, root, sendbuf.cast_mut(), v, stype, recvbuf, rc, rtype, Some(req)) };
                    }
                    let v = if is_root(comm, root)? {
                        let n = size(comm)?;
                        // SAFETY: MPI's contract: at the root the arrays
                        // hold `size` entries.
                        Some(unsafe { (read(scounts, n)?, read(displs, n)?) })
                    } else {
                        None
                    };
                    if let Some(r) = crate::resilient::lookup(comm) {
                        // SAFETY: MPI's contract, forwarded.
                        let run = unsafe { crate::vcoll::scatterv(&*r, sendbuf, v, stype, recvbuf, rc, rtype, root) }?;
                        return crate::resilient_icoll::start(&r, run, comm, req);
                    }
                    // SAFETY: MPI's contract, forwarded.
                    unsafe { iscatterv(sendbuf, 0, stype, v, recvbuf, rc, rtype, root, comm, req, true) }
                })
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($agv), "` (`MPI_IN_PLACE` too).")]
            fn $pagv(sendbuf: *const c_void, scount: $cnt, stype: c_int, recvbuf: *mut c_void, rcounts: *const $cnt, displs: *const $disp, rtype: c_int, comm: c_int, req: *mut c_int) -> c_int as $agv {
                call(comm, stringify!($agv), || {
                    let sc = usize_of(scount.into())?;
                    if let Some(n) = remote_size(comm) {
                        // SAFETY: MPI's contract: the arrays hold the
                        // remote group's size.
                        let recv = unsafe { (read(rcounts, n)?, read(displs, n)?) };
                        // SAFETY: MPI's contract, forwarded.
                        return unsafe { crate::intercoll::all_v(comm, sendbuf, (vec![sc; n], vec![0; n]), stype, recvbuf, recv, rtype, Some(req)) };
                    }
                    let n = size(comm)?;
                    // SAFETY: MPI's contract: the arrays hold `size` entries.
                    let (l, o) = unsafe { (read(rcounts, n)?, read(displs, n)?) };
                    if let Some(r) = crate::resilient::lookup(comm) {
                        // SAFETY: MPI's contract, forwarded.
                        let run = unsafe { crate::vcoll::allgatherv(&*r, sendbuf, sc, stype, recvbuf, l, o, rtype) }?;
                        return crate::resilient_icoll::start(&r, run, comm, req);
                    }
                    // SAFETY: MPI's contract, forwarded.
                    unsafe { iallgatherv(sendbuf, sc, stype, recvbuf, l, o, rtype, comm, req) }
                })
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($av), "` (`MPI_IN_PLACE` too).")]
            fn $pav(sendbuf: *const c_void, scounts: *const $cnt, sdispls: *const $disp, stype: c_int, recvbuf: *mut c_void, rcounts: *const $cnt, rdispls: *const $disp, rtype: c_int, comm: c_int, req: *mut c_int) -> c_int as $av {
                call(comm, stringify!($av), || {
                    if let Some(n) = remote_size(comm) {
                        // SAFETY: MPI's contract: the arrays hold the
                        // remote group's size.
                        let (send, recv) = unsafe { ((read(scounts, n)?, read(sdispls, n)?), (read(rcounts, n)?, read(rdispls, n)?)) };
                        // SAFETY: MPI's contract, forwarded.
                        return unsafe { crate::intercoll::all_v(comm, sendbuf, send, stype, recvbuf, recv, rtype, Some(req)) };
                    }
                    let n = size(comm)?;
                    let send = if in_place(sendbuf) {
                        None
                    } else {
                        // SAFETY: MPI's contract: the send arrays hold
                        // `size` entries unless MPI_IN_PLACE.
                        Some(unsafe { (read(scounts, n)?, read(sdispls, n)?) })
                    };
                    // SAFETY: as above.
                    let recv = unsafe { (read(rcounts, n)?, read(rdispls, n)?) };
                    if let Some(r) = crate::resilient::lookup(comm) {
                        let (sc, sd) = send.unwrap_or_default();
                        // SAFETY: MPI's contract, forwarded.
                        let run = unsafe { crate::vcoll::alltoallv(&*r, sendbuf, sc, sd, stype, recvbuf, recv.0, recv.1, rtype) }?;
                        return crate::resilient_icoll::start(&r, run, comm, req);
                    }
                    // SAFETY: MPI's contract, forwarded.
                    unsafe { ialltoallv(sendbuf, send, stype, recvbuf, recv, rtype, comm, req) }
                })
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($sc), "` (`MPI_IN_PLACE` too).")]
            fn $psc(sendbuf: *const c_void, recvbuf: *mut c_void, count: $cnt, ty: c_int, op: c_int, comm: c_int, req: *mut c_int) -> c_int as $sc {
                // SAFETY: MPI's contract, forwarded.
                call(comm, stringify!($sc), || unsafe { iscan(sendbuf, recvbuf, count.into(), ty, op, comm, req, false) })
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($ex), "` (`MPI_IN_PLACE` too; rank 0's buffer is untouched).")]
            fn $pex(sendbuf: *const c_void, recvbuf: *mut c_void, count: $cnt, ty: c_int, op: c_int, comm: c_int, req: *mut c_int) -> c_int as $ex {
                // SAFETY: MPI's contract, forwarded.
                call(comm, stringify!($ex), || unsafe { iscan(sendbuf, recvbuf, count.into(), ty, op, comm, req, true) })
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($rs), "` (`MPI_IN_PLACE` too).")]
            fn $prs(sendbuf: *const c_void, recvbuf: *mut c_void, counts: *const $cnt, ty: c_int, op: c_int, comm: c_int, req: *mut c_int) -> c_int as $rs {
                call(comm, stringify!($rs), || {
                    let n = size(comm)?;
                    // SAFETY: MPI's contract: `counts` holds `size` entries.
                    let counts = unsafe { read(counts, n)? };
                    // SAFETY: MPI's contract, forwarded.
                    unsafe { ireduce_scatter(sendbuf, recvbuf, &counts, ty, op, comm, req) }
                })
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($rsb), "` (`MPI_IN_PLACE` too).")]
            fn $prsb(sendbuf: *const c_void, recvbuf: *mut c_void, count: $cnt, ty: c_int, op: c_int, comm: c_int, req: *mut c_int) -> c_int as $rsb {
                call(comm, stringify!($rsb), || {
                    let n = size(comm)?;
                    let k = usize_of(count.into())?;
                    // SAFETY: MPI's contract, forwarded.
                    unsafe { ireduce_scatter(sendbuf, recvbuf, &vec![k; n], ty, op, comm, req) }
                })
            }
        }
    };
}

forms!(c_int, c_int, PMPI_Igather MPI_Igather, PMPI_Iscatter MPI_Iscatter,
    PMPI_Igatherv MPI_Igatherv, PMPI_Iscatterv MPI_Iscatterv,
    PMPI_Iallgatherv MPI_Iallgatherv, PMPI_Ialltoallv MPI_Ialltoallv,
    PMPI_Iscan MPI_Iscan, PMPI_Iexscan MPI_Iexscan,
    PMPI_Ireduce_scatter MPI_Ireduce_scatter, PMPI_Ireduce_scatter_block MPI_Ireduce_scatter_block);
forms!(MPI_Count, MPI_Aint, PMPI_Igather_c MPI_Igather_c, PMPI_Iscatter_c MPI_Iscatter_c,
    PMPI_Igatherv_c MPI_Igatherv_c, PMPI_Iscatterv_c MPI_Iscatterv_c,
    PMPI_Iallgatherv_c MPI_Iallgatherv_c, PMPI_Ialltoallv_c MPI_Ialltoallv_c,
    PMPI_Iscan_c MPI_Iscan_c, PMPI_Iexscan_c MPI_Iexscan_c,
    PMPI_Ireduce_scatter_c MPI_Ireduce_scatter_c, PMPI_Ireduce_scatter_block_c MPI_Ireduce_scatter_block_c);
