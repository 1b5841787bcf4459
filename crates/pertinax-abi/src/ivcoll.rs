//! The rest of the non-blocking collectives: `Igather`, `Iscatter`, the
//! v-forms (`Igatherv`, `Iscatterv`, `Iallgatherv`, `Ialltoallv`), the
//! scans (`Iscan`, `Iexscan`) and `Ireduce_scatter`,
//! `Ireduce_scatter_block`, with their large-count forms, on pertinax's
//! schedules over the C buffers (`Comm::icollective_lent`), with the
//! semantics of the blocking forms in `coll.rs`, `vcoll.rs` and
//! `reduce.rs` (`MPI_IN_PLACE` included: the input is copied, or the
//! root's own part of a scatter lands in scratch, kept with the request
//! until it completes). The w-forms (`Ialltoallw`) are not implemented.
//!
//! A v-collective's counts that do not fit at the root fail the call
//! there at once; the other ranks' requests then wait for a root that
//! never starts (MPI leaves erroneous arguments undefined).

use std::ffi::{c_int, c_void};

use pertinax::{LentCollective, Rank};
use pertinax_os::lend::{lend_mut_raw, lend_raw};

use crate::coll::in_place;
use crate::consts::*;
use crate::datatype::{bytes, size_of};
use crate::errors::code_of;
use crate::large::MPI_Count;
use crate::p2p::{call, comm_of, slice};
use crate::reduce::operation;
use crate::state::{self, ReqEntry};
use crate::vcoll::{read, span};
use crate::MPI_Aint;

/// Where an input is read or an output written: the program's buffer, or
/// a range of the copy kept with the request.
#[derive(Clone)]
enum Buf {
    User(*const c_void, usize),
    Kept(std::ops::Range<usize>),
}

/// Starts `which` on `inp` and `out` and registers its request, keeping
/// `keep` (the copies and scratch that `Buf::Kept` ranges name) until it
/// completes.
///
/// # Safety
/// The `Buf::User` buffers are the program's, valid for their lengths
/// until the request completes (MPI's contract); an output one writable.
unsafe fn start(
    comm: c_int,
    which: LentCollective,
    inp: Buf,
    out: Buf,
    keep: Option<Box<[u8]>>,
    req: *mut c_int,
) -> Result<(), c_int> {
    if req.is_null() {
        return Err(MPI_ERR_ARG);
    }
    let c = comm_of(comm)?;
    let mut keep = keep;
    let base = keep
        .as_mut()
        .map_or(std::ptr::null_mut(), |k| k.as_mut_ptr());
    let in_range = |b: &Buf| -> Result<(), c_int> {
        match b {
            Buf::Kept(r) if keep.as_ref().is_none_or(|k| r.end > k.len()) => Err(MPI_ERR_INTERN),
            _ => Ok(()),
        }
    };
    in_range(&inp)?;
    in_range(&out)?;
    let lent_in = match inp {
        // SAFETY: by the caller's contract.
        Buf::User(p, n) => unsafe { lend_raw(p.cast(), n) },
        // SAFETY: within `keep` (checked), which lives in the request's
        // entry until it completes; never written meanwhile.
        Buf::Kept(r) => unsafe { lend_raw(base.add(r.start), r.len()) },
    };
    let lent_out = match out {
        // SAFETY: by the caller's contract.
        Buf::User(p, n) => unsafe { lend_mut_raw(p.cast_mut().cast(), n) },
        // SAFETY: within `keep` (checked), disjoint from the input's range.
        Buf::Kept(r) => unsafe { lend_mut_raw(base.add(r.start), r.len()) },
    };
    let r = c
        .icollective_lent(which, Some(lent_in), lent_out)
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

fn usize_of(n: MPI_Count) -> Result<usize, c_int> {
    usize::try_from(n).map_err(|_| MPI_ERR_COUNT)
}

fn elem(ty: c_int) -> Result<usize, c_int> {
    size_of(ty).ok_or(MPI_ERR_TYPE)
}

fn root_ok(c: &pertinax::Comm, root: c_int) -> Result<bool, c_int> {
    match usize::try_from(root) {
        Ok(r) if r < c.size() => Ok(c.rank().0 == root),
        _ => Err(MPI_ERR_ROOT),
    }
}

/// `n` counts (or displacements) from a C array, as bytes of `e`-byte
/// elements.
///
/// # Safety
/// `p` holds `n` values.
unsafe fn scaled<T: Copy + TryInto<usize>>(
    p: *const T,
    n: usize,
    e: usize,
) -> Result<Vec<usize>, c_int> {
    // SAFETY: by the caller's contract.
    Ok(unsafe { read(p, n) }?.into_iter().map(|v| v * e).collect())
}

/// A copy of `len` bytes at `p`.
///
/// # Safety
/// `p` holds `len` bytes.
unsafe fn copy(p: *const c_void, len: usize) -> Box<[u8]> {
    // SAFETY: by the caller's contract.
    unsafe { slice(p, len) }.into()
}

/// `Igather` (`v`: `Some((counts, displs))` at the root for `Igatherv`).
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
    root: c_int,
    comm: c_int,
    req: *mut c_int,
) -> Result<(), c_int> {
    let c = comm_of(comm)?;
    let (n, me) = (c.size(), c.rank().index());
    let at_root = root_ok(&c, root)?;
    if !at_root {
        let len = scount * elem(stype)?;
        // `rcount` is `usize::MAX` for the v-form.
        let which = if rcount == usize::MAX {
            LentCollective::Gatherv {
                root: Rank(root),
                lens: Vec::new(),
                offs: Vec::new(),
            }
        } else {
            LentCollective::Gather { root: Rank(root) }
        };
        // SAFETY: forwarded.
        return unsafe {
            start(
                comm,
                which,
                Buf::User(sendbuf, len),
                Buf::User(recvbuf, 0),
                None,
                req,
            )
        };
    }
    let e = elem(rtype)?;
    let (lens, offs) = match v {
        Some((c, d)) => (
            c.iter().map(|x| x * e).collect::<Vec<_>>(),
            d.iter().map(|x| x * e).collect::<Vec<_>>(),
        ),
        None => (
            (0..n).map(|_| rcount * e).collect(),
            (0..n).map(|i| i * rcount * e).collect(),
        ),
    };
    let total = span(&lens, &offs, 1);
    let (inp, keep) = if in_place(sendbuf) {
        let (o, l) = (offs[me], lens[me]);
        // SAFETY: MPI's contract: at the root `recvbuf` spans the parts.
        let k = unsafe { copy(recvbuf.cast_const().cast::<u8>().add(o).cast(), l) };
        (Buf::Kept(0..l), Some(k))
    } else {
        (Buf::User(sendbuf, scount * elem(stype)?), None)
    };
    let which = if rcount == usize::MAX {
        LentCollective::Gatherv {
            root: Rank(root),
            lens,
            offs,
        }
    } else {
        LentCollective::Gather { root: Rank(root) }
    };
    // SAFETY: forwarded.
    unsafe { start(comm, which, inp, Buf::User(recvbuf, total), keep, req) }
}

/// `Iscatter` (`v`: `Some((counts, displs))` at the root for
/// `Iscatterv`).
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
    let (n, me) = (c.size(), c.rank().index());
    let at_root = root_ok(&c, root)?;
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
    if !at_root {
        let len = rcount * elem(rtype)?;
        let w = which(Vec::new(), Vec::new());
        // SAFETY: forwarded.
        return unsafe {
            start(
                comm,
                w,
                Buf::User(sendbuf, 0),
                Buf::User(recvbuf, len),
                None,
                req,
            )
        };
    }
    let e = elem(stype)?;
    let (lens, offs) = match v {
        Some((c, d)) => (
            c.iter().map(|x| x * e).collect::<Vec<_>>(),
            d.iter().map(|x| x * e).collect::<Vec<_>>(),
        ),
        None => (
            (0..n).map(|_| scount * e).collect(),
            (0..n).map(|i| i * scount * e).collect(),
        ),
    };
    let total = span(&lens, &offs, 1);
    let (out, keep) = if in_place(recvbuf) {
        // The root's own part stays where it is: it lands in scratch.
        let l = lens[me];
        (Buf::Kept(0..l), Some(vec![0u8; l].into_boxed_slice()))
    } else {
        (Buf::User(recvbuf, rcount * elem(rtype)?), None)
    };
    // SAFETY: forwarded.
    unsafe {
        start(
            comm,
            which(lens, offs),
            Buf::User(sendbuf, total),
            out,
            keep,
            req,
        )
    }
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
    lens: Vec<usize>,
    offs: Vec<usize>,
    comm: c_int,
    req: *mut c_int,
) -> Result<(), c_int> {
    let me = comm_of(comm)?.rank().index();
    let total = span(&lens, &offs, 1);
    let (inp, keep) = if in_place(sendbuf) {
        let (o, l) = (
            offs.get(me).copied().unwrap_or(0),
            lens.get(me).copied().unwrap_or(0),
        );
        // SAFETY: MPI's contract: `recvbuf` spans the parts.
        let k = unsafe { copy(recvbuf.cast_const().cast::<u8>().add(o).cast(), l) };
        (Buf::Kept(0..l), Some(k))
    } else {
        (Buf::User(sendbuf, scount * elem(stype)?), None)
    };
    let which = LentCollective::Allgatherv { lens, offs };
    // SAFETY: forwarded.
    unsafe { start(comm, which, inp, Buf::User(recvbuf, total), keep, req) }
}

/// `Ialltoallv` (`send` `None`: `MPI_IN_PLACE`).
///
/// # Safety
/// MPI's contract for the buffers.
unsafe fn ialltoallv(
    sendbuf: *const c_void,
    send: Option<(Vec<usize>, Vec<usize>)>,
    recvbuf: *mut c_void,
    (rl, ro): (Vec<usize>, Vec<usize>),
    comm: c_int,
    req: *mut c_int,
) -> Result<(), c_int> {
    let total = span(&rl, &ro, 1);
    let (inp, keep, sl, so) = match send {
        None => {
            // SAFETY: MPI's contract: `recvbuf` spans the receive parts.
            let k = unsafe { copy(recvbuf, total) };
            (Buf::Kept(0..total), Some(k), rl.clone(), ro.clone())
        }
        Some((sl, so)) => (Buf::User(sendbuf, span(&sl, &so, 1)), None, sl, so),
    };
    let which = LentCollective::Alltoallv { sl, so, rl, ro };
    // SAFETY: forwarded.
    unsafe { start(comm, which, inp, Buf::User(recvbuf, total), keep, req) }
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
    let (len, _) = bytes(c_int::try_from(n).map_err(|_| MPI_ERR_COUNT)?, ty)?;
    let op = operation(op, ty)?;
    let (inp, keep) = if in_place(sendbuf) {
        // SAFETY: MPI's contract: `recvbuf` holds the input.
        (Buf::Kept(0..len), Some(unsafe { copy(recvbuf, len) }))
    } else {
        (Buf::User(sendbuf, len), None)
    };
    let which = LentCollective::Scan { op, exclusive };
    // SAFETY: forwarded.
    unsafe { start(comm, which, inp, Buf::User(recvbuf, len), keep, req) }
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
    let me = comm_of(comm)?.rank().index();
    let e = elem(ty)?;
    let op = operation(op, ty)?;
    let lens: Vec<usize> = counts.iter().map(|c| c * e).collect();
    let total: usize = lens.iter().sum();
    let mine = lens.get(me).copied().unwrap_or(0);
    let (inp, keep) = if in_place(sendbuf) {
        // SAFETY: MPI's contract: with MPI_IN_PLACE, `recvbuf` holds the
        // whole input and gets this rank's part at its start.
        (Buf::Kept(0..total), Some(unsafe { copy(recvbuf, total) }))
    } else {
        (Buf::User(sendbuf, total), None)
    };
    let which = LentCollective::ReduceScatter { op, lens };
    // SAFETY: forwarded.
    unsafe { start(comm, which, inp, Buf::User(recvbuf, mine), keep, req) }
}

fn size(comm: c_int) -> Result<usize, c_int> {
    comm_of(comm).map(|c| c.size())
}

fn is_root(comm: c_int, root: c_int) -> Result<bool, c_int> {
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
                    // SAFETY: MPI's contract, forwarded.
                    unsafe { igatherv(sendbuf, sc, stype, recvbuf, rc, rtype, None, root, comm, req) }
                })
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($s), "` (`MPI_IN_PLACE` at the root).")]
            fn $ps(sendbuf: *const c_void, scount: $cnt, stype: c_int, recvbuf: *mut c_void, rcount: $cnt, rtype: c_int, root: c_int, comm: c_int, req: *mut c_int) -> c_int as $s {
                call(comm, stringify!($s), || {
                    let (sc, rc) = (usize_of(scount.into())?, usize_of(rcount.into())?);
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
                    let v = if is_root(comm, root)? {
                        let n = size(comm)?;
                        // SAFETY: MPI's contract: at the root the arrays
                        // hold `size` entries.
                        Some(unsafe { (read(rcounts, n)?, read(displs, n)?) })
                    } else {
                        None
                    };
                    // SAFETY: MPI's contract, forwarded (`usize::MAX`: the v-form).
                    unsafe { igatherv(sendbuf, sc, stype, recvbuf, usize::MAX, rtype, v, root, comm, req) }
                })
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($sv), "` (`MPI_IN_PLACE` at the root).")]
            fn $psv(sendbuf: *const c_void, scounts: *const $cnt, displs: *const $disp, stype: c_int, recvbuf: *mut c_void, rcount: $cnt, rtype: c_int, root: c_int, comm: c_int, req: *mut c_int) -> c_int as $sv {
                call(comm, stringify!($sv), || {
                    let rc = usize_of(rcount.into())?;
                    let v = if is_root(comm, root)? {
                        let n = size(comm)?;
                        // SAFETY: MPI's contract: at the root the arrays
                        // hold `size` entries.
                        Some(unsafe { (read(scounts, n)?, read(displs, n)?) })
                    } else {
                        None
                    };
                    // SAFETY: MPI's contract, forwarded.
                    unsafe { iscatterv(sendbuf, 0, stype, v, recvbuf, rc, rtype, root, comm, req, true) }
                })
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($agv), "` (`MPI_IN_PLACE` too).")]
            fn $pagv(sendbuf: *const c_void, scount: $cnt, stype: c_int, recvbuf: *mut c_void, rcounts: *const $cnt, displs: *const $disp, rtype: c_int, comm: c_int, req: *mut c_int) -> c_int as $agv {
                call(comm, stringify!($agv), || {
                    let (n, e) = (size(comm)?, elem(rtype)?);
                    let sc = usize_of(scount.into())?;
                    // SAFETY: MPI's contract: the arrays hold `size` entries.
                    let (l, o) = unsafe { (scaled(rcounts, n, e)?, scaled(displs, n, e)?) };
                    // SAFETY: MPI's contract, forwarded.
                    unsafe { iallgatherv(sendbuf, sc, stype, recvbuf, l, o, comm, req) }
                })
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($av), "` (`MPI_IN_PLACE` too).")]
            fn $pav(sendbuf: *const c_void, scounts: *const $cnt, sdispls: *const $disp, stype: c_int, recvbuf: *mut c_void, rcounts: *const $cnt, rdispls: *const $disp, rtype: c_int, comm: c_int, req: *mut c_int) -> c_int as $av {
                call(comm, stringify!($av), || {
                    let (n, e) = (size(comm)?, elem(rtype)?);
                    let send = if in_place(sendbuf) {
                        None
                    } else {
                        if elem(stype)? != e {
                            return Err(MPI_ERR_TYPE);
                        }
                        // SAFETY: MPI's contract: the send arrays hold
                        // `size` entries unless MPI_IN_PLACE.
                        Some(unsafe { (scaled(scounts, n, e)?, scaled(sdispls, n, e)?) })
                    };
                    // SAFETY: as above.
                    let recv = unsafe { (scaled(rcounts, n, e)?, scaled(rdispls, n, e)?) };
                    // SAFETY: MPI's contract, forwarded.
                    unsafe { ialltoallv(sendbuf, send, recvbuf, recv, comm, req) }
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
