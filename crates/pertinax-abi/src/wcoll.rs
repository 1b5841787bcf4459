//! The w-collective `MPI_Alltoallw`, its non-blocking `MPI_Ialltoallw`
//! and persistent `MPI_Alltoallw_init`, in their `int` and large-count
//! forms: per rank a count, a displacement in bytes and a datatype of its
//! own.
//!
//! Each side goes through a temporary of its parts one after the other
//! (`SendBuf::typed`, `RecvBuf::typed`, each part with its own type), the
//! bytes move as an alltoallv's (`alltoallv_bytes`, or the
//! `LentCollective::Alltoallv` schedule for the non-blocking form), and
//! the received parts are unpacked, each with its type, when the
//! operation completes. With `MPI_IN_PLACE` the receive buffer's parts,
//! as the receive counts and types describe them, are the input (MPI's
//! rule); the send arrays are not read. A part of count 0 moves nothing
//! whatever its type (`MPI_DATATYPE_NULL` too). The neighbourhood
//! w-forms, on the same temporaries, are in `neighbor.rs`.

use std::ffi::{c_int, c_void};
use std::ops::Range;
use std::rc::Rc;

use pertinax::{Communicator, LentCollective};

use crate::coll::{done, in_place};
use crate::consts::*;
use crate::datatype::{usable, RecvBuf, SendBuf, Ty, Typed};
use crate::large::MPI_Count;
use crate::p2p::{call, comm_of, entry_comm};
use crate::persist::{at, coll_init, kept};
use crate::MPI_Aint;

/// The parts of one side of a w-collective: `n` entries of the count,
/// byte-displacement and type arrays (`MPI_ERR_ARG` for a NULL array with
/// entries, `MPI_ERR_COUNT` for a negative count, `MPI_ERR_TYPE` for an
/// unusable type of a part with data).
///
/// # Safety
/// Each array is null or holds `n` entries.
pub(crate) unsafe fn parts<C, D>(
    counts: *const C,
    displs: *const D,
    types: *const c_int,
    n: usize,
) -> Result<Vec<Typed>, c_int>
where
    C: Copy + TryInto<usize>,
    D: Copy + TryInto<isize>,
{
    if n == 0 {
        return Ok(Vec::new());
    }
    if counts.is_null() || displs.is_null() || types.is_null() {
        return Err(MPI_ERR_ARG);
    }
    (0..n)
        .map(|i| {
            // SAFETY: `i < n`, by the caller's contract.
            let (c, d, t) = unsafe { (*counts.add(i), *displs.add(i), *types.add(i)) };
            let count = c.try_into().map_err(|_| MPI_ERR_COUNT)?;
            let disp = d.try_into().map_err(|_| MPI_ERR_ARG)?;
            let ty = if count == 0 {
                usable(t).unwrap_or(Ty::Plain(MPI_BYTE, 1))
            } else {
                usable(t)?
            };
            Ok(Typed { disp, count, ty })
        })
        .collect()
}

/// The lengths and offsets of byte ranges.
pub(crate) fn lens_offs(r: &[Range<usize>]) -> (Vec<usize>, Vec<usize>) {
    r.iter().map(|r| (r.len(), r.start)).unzip()
}

/// The buffers of an alltoallw (`send` `None`: `MPI_IN_PLACE`) and the
/// schedule that moves their bytes.
///
/// # Safety
/// MPI's contract: the buffers hold the parts.
unsafe fn buffers(
    sendbuf: *const c_void,
    send: Option<Vec<Typed>>,
    recvbuf: *mut c_void,
    recv: &[Typed],
) -> Result<(SendBuf, RecvBuf, LentCollective), c_int> {
    // SAFETY: by the caller's contract.
    let (out, rr) = unsafe { RecvBuf::typed(recvbuf, recv) }?;
    let (rl, ro) = lens_offs(&rr);
    let (inp, sl, so) = match send {
        None => (SendBuf::from_vec(out.current()), rl.clone(), ro.clone()),
        Some(s) => {
            // SAFETY: by the caller's contract.
            let (b, sr) = unsafe { SendBuf::typed(sendbuf, &s) }?;
            let (sl, so) = lens_offs(&sr);
            (b, sl, so)
        }
    };
    Ok((inp, out, LentCollective::Alltoallv { sl, so, rl, ro }))
}

/// `MPI_Alltoallw` (`req` null) or `MPI_Ialltoallw`.
///
/// # Safety
/// MPI's contract for the arrays and the buffers.
#[allow(clippy::too_many_arguments)]
unsafe fn alltoallw<C, D>(
    sendbuf: *const c_void,
    scounts: *const C,
    sdispls: *const D,
    stypes: *const c_int,
    recvbuf: *mut c_void,
    rcounts: *const C,
    rdispls: *const D,
    rtypes: *const c_int,
    comm: c_int,
    req: Option<*mut c_int>,
) -> Result<(), c_int>
where
    C: Copy + TryInto<usize>,
    D: Copy + TryInto<isize>,
{
    if let Some(n) = crate::inter::remote_size(comm) {
        // SAFETY: MPI's contract: the arrays hold the remote group's size.
        let (send, recv) = unsafe {
            (
                parts(scounts, sdispls, stypes, n)?,
                parts(rcounts, rdispls, rtypes, n)?,
            )
        };
        // SAFETY: MPI's contract for the buffers.
        return unsafe { crate::intercoll::all_w(comm, sendbuf, &send, recvbuf, &recv, req) };
    }
    let n = entry_comm(comm)?.size();
    let send = if in_place(sendbuf) {
        None
    } else {
        // SAFETY: MPI's contract: the send arrays hold `size` entries
        // unless MPI_IN_PLACE.
        Some(unsafe { parts(scounts, sdispls, stypes, n) }?)
    };
    // SAFETY: as above.
    let recv = unsafe { parts(rcounts, rdispls, rtypes, n) }?;
    // SAFETY: MPI's contract for the buffers.
    let (inp, mut out, which) = unsafe { buffers(sendbuf, send, recvbuf, &recv) }?;
    if let Some(req) = req {
        // SAFETY: MPI's contract: the buffers stay valid until the
        // request completes.
        return unsafe { crate::icoll::start(comm, which, Some(inp), out, req) };
    }
    let LentCollective::Alltoallv { sl, so, rl, ro } = which else {
        return Err(MPI_ERR_INTERN);
    };
    let moved: Result<(), c_int> = crate::on_comm!(comm, |c| {
        done(c.alltoallv_bytes(inp.bytes(), &sl, &so, out.bytes_mut(), &rl, &ro, 1))
    });
    moved?;
    out.finish(usize::MAX);
    Ok(())
}

macro_rules! w_forms {
    ($cnt:ty, $disp:ty, $pa:ident $a:ident, $pia:ident $ia:ident, $pai:ident $ai:ident) => {
        crate::mpi! {
            #[doc = concat!("`", stringify!($a), "` (`MPI_IN_PLACE` too).")]
            fn $pa(sendbuf: *const c_void, scounts: *const $cnt, sdispls: *const $disp, stypes: *const c_int, recvbuf: *mut c_void, rcounts: *const $cnt, rdispls: *const $disp, rtypes: *const c_int, comm: c_int) -> c_int as $a {
                // SAFETY: MPI's contract, forwarded.
                call(comm, stringify!($a), || unsafe { alltoallw(sendbuf, scounts, sdispls, stypes, recvbuf, rcounts, rdispls, rtypes, comm, None) })
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($ia), "` (`MPI_IN_PLACE` too).")]
            fn $pia(sendbuf: *const c_void, scounts: *const $cnt, sdispls: *const $disp, stypes: *const c_int, recvbuf: *mut c_void, rcounts: *const $cnt, rdispls: *const $disp, rtypes: *const c_int, comm: c_int, req: *mut c_int) -> c_int as $ia {
                // SAFETY: MPI's contract, forwarded.
                call(comm, stringify!($ia), || unsafe { alltoallw(sendbuf, scounts, sdispls, stypes, recvbuf, rcounts, rdispls, rtypes, comm, Some(req)) })
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($ai), "`: each start is an `", stringify!($ia), "` (the arrays are copied at init).")]
            fn $pai(sendbuf: *const c_void, scounts: *const $cnt, sdispls: *const $disp, stypes: *const c_int, recvbuf: *mut c_void, rcounts: *const $cnt, rdispls: *const $disp, rtypes: *const c_int, comm: c_int, _info: c_int, req: *mut c_int) -> c_int as $ai {
                // The remote group's size on an intercommunicator.
                let n = crate::inter::remote_size(comm).unwrap_or_else(|| comm_of(comm).map_or(0, |c| c.size()));
                let send = if in_place(sendbuf) {
                    (None, None, None)
                } else {
                    // SAFETY: MPI's contract: the arrays hold `size` entries.
                    unsafe { (kept(scounts, n), kept(sdispls, n), kept(stypes, n)) }
                };
                // SAFETY: as above.
                let recv = unsafe { (kept(rcounts, n), kept(rdispls, n), kept(rtypes, n)) };
                // SAFETY: MPI's contract: the init's buffers stay valid
                // while the request lives.
                coll_init(stringify!($ai), comm, req, comm_of(comm).map(drop), Rc::new(move |r| unsafe { $pia(sendbuf, at(&send.0), at(&send.1), at(&send.2), recvbuf, at(&recv.0), at(&recv.1), at(&recv.2), comm, r) }))
            }
        }
    };
}

w_forms!(c_int, c_int, PMPI_Alltoallw MPI_Alltoallw, PMPI_Ialltoallw MPI_Ialltoallw,
    PMPI_Alltoallw_init MPI_Alltoallw_init);
w_forms!(MPI_Count, MPI_Aint, PMPI_Alltoallw_c MPI_Alltoallw_c, PMPI_Ialltoallw_c MPI_Ialltoallw_c,
    PMPI_Alltoallw_init_c MPI_Alltoallw_init_c);
