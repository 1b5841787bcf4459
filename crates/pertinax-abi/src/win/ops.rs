//! The RMA calls: `MPI_Put`, `MPI_Get`, `MPI_Accumulate`,
//! `MPI_Get_accumulate`, `MPI_Fetch_and_op`, `MPI_Compare_and_swap`, their
//! request-based forms (done requests: the copies are complete when the
//! call returns) and the `_c` forms. Each checks its arguments (types,
//! counts, the target rank), then that an epoch is open to the target
//! (`MPI_ERR_RMA_SYNC`); a target `MPI_PROC_NULL` does nothing.

use std::ffi::{c_int, c_void};

use super::sync::target;
use super::xfer::{self, Buf, Target};
use super::{call, with, WinEntry};
use crate::consts::*;
use crate::datatype::usable;
use crate::large::MPI_Count;
use crate::MPI_Aint;

/// The target `rank` of an RMA call on `g`, if not `MPI_PROC_NULL`:
/// `MPI_ERR_RANK` outside the window, `MPI_ERR_RMA_SYNC` outside an
/// epoch to it.
fn open(g: &WinEntry, rank: c_int) -> Result<Option<usize>, c_int> {
    let Some(t) = target(rank, g.size)? else {
        return Ok(None);
    };
    if !g.epoch.may_access(t) {
        return Err(MPI_ERR_RMA_SYNC);
    }
    Ok(Some(t))
}

/// A done request to `req` (if asked for).
fn request(req: Option<*mut c_int>) -> Result<(), c_int> {
    let Some(req) = req else { return Ok(()) };
    let h = crate::state::with(|s| {
        REQUEST_DIRECT
            | crate::state::insert(
                &mut s.requests,
                crate::state::ReqEntry::Done(crate::p2p::empty()),
            ) as c_int
    })
    .ok_or(MPI_ERR_INTERN)?;
    // SAFETY: checked non-null by the caller; MPI's contract.
    unsafe { *req = h };
    Ok(())
}

/// A request pointer: null is `MPI_ERR_ARG`.
fn req_ptr(req: Option<*mut c_int>) -> Result<(), c_int> {
    match req {
        Some(r) if r.is_null() => Err(MPI_ERR_ARG),
        _ => Ok(()),
    }
}

/// The origin (or result) buffer of a call.
fn buf(buf: *mut c_void, count: Result<usize, c_int>, ty: c_int) -> Result<Buf, c_int> {
    Ok(Buf {
        buf,
        count: count?,
        ty: usable(ty)?,
    })
}

/// A count as a `usize` (`MPI_ERR_COUNT` when negative).
fn n<T: TryInto<usize>>(c: T) -> Result<usize, c_int> {
    crate::check::count(c)
}

/// `MPI_Put` and `MPI_Get` (`get`), and their request forms.
#[allow(clippy::too_many_arguments)]
fn put_get(
    what: &str,
    get: bool,
    o: (*mut c_void, Result<usize, c_int>, c_int),
    rank: c_int,
    disp: MPI_Aint,
    tcount: Result<usize, c_int>,
    ttype: c_int,
    win: c_int,
    req: Option<*mut c_int>,
) -> c_int {
    call(win, what, |e| {
        let o = buf(o.0, o.1, o.2)?;
        let (count, ty) = (tcount?, usable(ttype)?);
        req_ptr(req)?;
        with(e, |g| {
            let Some(t) = open(g, rank)? else {
                return Ok(());
            };
            let t = Target {
                rank: t,
                disp,
                count,
                ty,
            };
            if get {
                // SAFETY: MPI's contract for the origin buffer.
                unsafe { xfer::get(g, &o, &t) }
            } else {
                // SAFETY: as above.
                unsafe { xfer::put(g, &o, &t) }
            }
        })?;
        request(req)
    })
}

/// The accumulates, and their request forms: `o` the origin (none for
/// `MPI_Fetch_and_op`'s `MPI_NO_OP` with a null buffer), `r` the result.
#[allow(clippy::too_many_arguments)]
fn acc(
    what: &str,
    o: (*mut c_void, Result<usize, c_int>, c_int),
    r: Option<(*mut c_void, Result<usize, c_int>, c_int)>,
    rank: c_int,
    disp: MPI_Aint,
    tcount: Result<usize, c_int>,
    ttype: c_int,
    op: c_int,
    win: c_int,
    req: Option<*mut c_int>,
) -> c_int {
    call(win, what, |e| {
        let ob = if op == MPI_NO_OP && o.0.is_null() {
            None
        } else {
            Some(buf(o.0, o.1, o.2)?)
        };
        let rb = match r {
            Some(r) => Some(buf(r.0, r.1, r.2)?),
            None => None,
        };
        let (count, ty) = (tcount?, usable(ttype)?);
        if !matches!(op, MPI_REPLACE | MPI_NO_OP) {
            crate::datatype::reduction(op, ty.base().ok_or(MPI_ERR_TYPE)?)?;
        }
        req_ptr(req)?;
        with(e, |g| {
            let Some(t) = open(g, rank)? else {
                return Ok(());
            };
            let t = Target {
                rank: t,
                disp,
                count,
                ty,
            };
            // SAFETY: MPI's contract for the buffers.
            unsafe { xfer::accumulate(g, ob.as_ref(), rb.as_ref(), &t, op) }
        })?;
        request(req)
    })
}

macro_rules! put_get_fns {
    ($($pmpi:ident $mpi:ident $get:literal $cnt:ty, $name:literal;)*) => {$(
        crate::mpi! {
            #[doc = concat!("`", $name, "`.")]
            fn $pmpi(origin_addr: *mut c_void, origin_count: $cnt, origin_datatype: c_int, target_rank: c_int, target_disp: MPI_Aint, target_count: $cnt, target_datatype: c_int, win: c_int) -> c_int as $mpi {
                put_get($name, $get, (origin_addr, n(origin_count), origin_datatype), target_rank, target_disp, n(target_count), target_datatype, win, None)
            }
        }
    )*};
}

put_get_fns! {
    PMPI_Put MPI_Put false c_int, "MPI_Put";
    PMPI_Put_c MPI_Put_c false MPI_Count, "MPI_Put_c";
    PMPI_Get MPI_Get true c_int, "MPI_Get";
    PMPI_Get_c MPI_Get_c true MPI_Count, "MPI_Get_c";
}

macro_rules! rput_rget_fns {
    ($($pmpi:ident $mpi:ident $get:literal $cnt:ty, $name:literal;)*) => {$(
        crate::mpi! {
            #[doc = concat!("`", $name, "`: complete at once (a done request).")]
            fn $pmpi(origin_addr: *mut c_void, origin_count: $cnt, origin_datatype: c_int, target_rank: c_int, target_disp: MPI_Aint, target_count: $cnt, target_datatype: c_int, win: c_int, request: *mut c_int) -> c_int as $mpi {
                put_get($name, $get, (origin_addr, n(origin_count), origin_datatype), target_rank, target_disp, n(target_count), target_datatype, win, Some(request))
            }
        }
    )*};
}

rput_rget_fns! {
    PMPI_Rput MPI_Rput false c_int, "MPI_Rput";
    PMPI_Rput_c MPI_Rput_c false MPI_Count, "MPI_Rput_c";
    PMPI_Rget MPI_Rget true c_int, "MPI_Rget";
    PMPI_Rget_c MPI_Rget_c true MPI_Count, "MPI_Rget_c";
}

macro_rules! accumulate_fns {
    ($($pmpi:ident $mpi:ident $cnt:ty, $name:literal;)*) => {$(
        crate::mpi! {
            #[doc = concat!("`", $name, "`: atomic per target (its mutex).")]
            fn $pmpi(origin_addr: *mut c_void, origin_count: $cnt, origin_datatype: c_int, target_rank: c_int, target_disp: MPI_Aint, target_count: $cnt, target_datatype: c_int, op: c_int, win: c_int) -> c_int as $mpi {
                acc($name, (origin_addr, n(origin_count), origin_datatype), None, target_rank, target_disp, n(target_count), target_datatype, op, win, None)
            }
        }
    )*};
}

accumulate_fns! {
    PMPI_Accumulate MPI_Accumulate c_int, "MPI_Accumulate";
    PMPI_Accumulate_c MPI_Accumulate_c MPI_Count, "MPI_Accumulate_c";
}

macro_rules! raccumulate_fns {
    ($($pmpi:ident $mpi:ident $cnt:ty, $name:literal;)*) => {$(
        crate::mpi! {
            #[doc = concat!("`", $name, "`: complete at once (a done request).")]
            fn $pmpi(origin_addr: *mut c_void, origin_count: $cnt, origin_datatype: c_int, target_rank: c_int, target_disp: MPI_Aint, target_count: $cnt, target_datatype: c_int, op: c_int, win: c_int, request: *mut c_int) -> c_int as $mpi {
                acc($name, (origin_addr, n(origin_count), origin_datatype), None, target_rank, target_disp, n(target_count), target_datatype, op, win, Some(request))
            }
        }
    )*};
}

raccumulate_fns! {
    PMPI_Raccumulate MPI_Raccumulate c_int, "MPI_Raccumulate";
    PMPI_Raccumulate_c MPI_Raccumulate_c MPI_Count, "MPI_Raccumulate_c";
}

macro_rules! get_accumulate_fns {
    ($($pmpi:ident $mpi:ident $cnt:ty, $name:literal;)*) => {$(
        crate::mpi! {
            #[doc = concat!("`", $name, "`: the target's data before, to the result buffer; atomic per target.")]
            fn $pmpi(origin_addr: *mut c_void, origin_count: $cnt, origin_datatype: c_int, result_addr: *mut c_void, result_count: $cnt, result_datatype: c_int, target_rank: c_int, target_disp: MPI_Aint, target_count: $cnt, target_datatype: c_int, op: c_int, win: c_int) -> c_int as $mpi {
                acc($name, (origin_addr, n(origin_count), origin_datatype), Some((result_addr, n(result_count), result_datatype)), target_rank, target_disp, n(target_count), target_datatype, op, win, None)
            }
        }
    )*};
}

get_accumulate_fns! {
    PMPI_Get_accumulate MPI_Get_accumulate c_int, "MPI_Get_accumulate";
    PMPI_Get_accumulate_c MPI_Get_accumulate_c MPI_Count, "MPI_Get_accumulate_c";
}

macro_rules! rget_accumulate_fns {
    ($($pmpi:ident $mpi:ident $cnt:ty, $name:literal;)*) => {$(
        crate::mpi! {
            #[doc = concat!("`", $name, "`: complete at once (a done request).")]
            fn $pmpi(origin_addr: *mut c_void, origin_count: $cnt, origin_datatype: c_int, result_addr: *mut c_void, result_count: $cnt, result_datatype: c_int, target_rank: c_int, target_disp: MPI_Aint, target_count: $cnt, target_datatype: c_int, op: c_int, win: c_int, request: *mut c_int) -> c_int as $mpi {
                acc($name, (origin_addr, n(origin_count), origin_datatype), Some((result_addr, n(result_count), result_datatype)), target_rank, target_disp, n(target_count), target_datatype, op, win, Some(request))
            }
        }
    )*};
}

rget_accumulate_fns! {
    PMPI_Rget_accumulate MPI_Rget_accumulate c_int, "MPI_Rget_accumulate";
    PMPI_Rget_accumulate_c MPI_Rget_accumulate_c MPI_Count, "MPI_Rget_accumulate_c";
}

crate::mpi! {
    /// `MPI_Fetch_and_op`: `MPI_Get_accumulate` of one element.
    fn PMPI_Fetch_and_op(origin_addr: *mut c_void, result_addr: *mut c_void, datatype: c_int, target_rank: c_int, target_disp: MPI_Aint, op: c_int, win: c_int) -> c_int as MPI_Fetch_and_op {
        acc("MPI_Fetch_and_op", (origin_addr, Ok(1), datatype), Some((result_addr, Ok(1), datatype)), target_rank, target_disp, Ok(1), datatype, op, win, None)
    }
}

crate::mpi! {
    /// `MPI_Compare_and_swap`: one element of a predefined type, atomic
    /// per target.
    fn PMPI_Compare_and_swap(origin_addr: *mut c_void, compare_addr: *mut c_void, result_addr: *mut c_void, datatype: c_int, target_rank: c_int, target_disp: MPI_Aint, win: c_int) -> c_int as MPI_Compare_and_swap {
        call(win, "MPI_Compare_and_swap", |e| {
            let ty = usable(datatype)?;
            with(e, |g| {
                let Some(t) = open(g, target_rank)? else {
                    return Ok(());
                };
                let t = Target { rank: t, disp: target_disp, count: 1, ty: ty.clone() };
                // SAFETY: MPI's contract: one element at each address.
                unsafe { xfer::compare_and_swap(g, origin_addr, compare_addr, result_addr, &ty, &t) }
            })
        })
    }
}
