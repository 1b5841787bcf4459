//! Intracommunicator collectives with their buffers ready: each function
//! checks a call's arguments and describes its buffers ([`SendBuf`],
//! [`RecvBuf`]; an `MPI_IN_PLACE` input is a copy), and returns the
//! operation as a closure that runs it on a communicator and unpacks its
//! output. The blocking call runs it at once on the communicator it was
//! prepared on (plain or resilient: `on_comm!`); a non-blocking one on a
//! resilient communicator keeps it until the request is completed
//! (`resilient_icoll.rs`). One description of each call's buffers for
//! both.
//!
//! The closures own everything they use (the buffers' descriptions, the
//! reduction), nothing borrowed from the call: by MPI's contract the
//! program's buffers stay valid and untouched until the operation
//! completes.

use std::ffi::{c_int, c_void};

use pertinax::{Communicator, Outcome};

use crate::coll::{in_place, operand, root_of};
use crate::consts::*;
use crate::datatype::{usable, RecvBuf, SendBuf};
use crate::reduce::operation;

/// A collective ready to run on a communicator of type `C`.
pub(crate) trait Ready<C: Communicator + ?Sized>:
    FnOnce(&C) -> Result<Outcome, C::Error> + 'static
{
}

impl<C, F> Ready<C> for F
where
    C: Communicator + ?Sized,
    F: FnOnce(&C) -> Result<Outcome, C::Error> + 'static,
{
}

/// This rank's part (`part` bytes, the `me`-th) of a receive buffer's
/// current contents: the input of an `MPI_IN_PLACE` gather.
fn own_part(recv: &RecvBuf, me: usize, part: usize) -> SendBuf {
    let all = recv.current();
    SendBuf::from_vec(all.get(me * part..(me + 1) * part).unwrap_or(&[]).to_vec())
}

/// `MPI_Barrier` (`_on`: the communicator's type).
pub(crate) fn barrier<C: Communicator + ?Sized>(_on: &C) -> impl Ready<C> {
    |c: &C| c.barrier()
}

/// `MPI_Bcast` of `n` elements.
///
/// # Safety
/// MPI's contract: `buf` holds `n` elements of `ty` until the operation
/// completes.
pub(crate) unsafe fn bcast<C: Communicator + ?Sized>(
    c: &C,
    buf: *mut c_void,
    n: usize,
    ty: c_int,
    root: c_int,
) -> Result<impl Ready<C>, c_int> {
    let t = usable(ty)?;
    let root = root_of(c, root)?;
    // SAFETY: by the caller's contract.
    let mut data = unsafe { RecvBuf::new(buf, n, &t) }?;
    if c.rank() == root {
        data.load();
    }
    Ok(move |c: &C| {
        let mut data = data;
        let o = c.bcast_bytes(data.bytes_mut(), root)?;
        data.finish(usize::MAX);
        Ok(o)
    })
}

/// `MPI_Reduce` (`root` `Some`) and `MPI_Allreduce` of `n` elements
/// (`MPI_IN_PLACE` where MPI allows it).
///
/// # Safety
/// MPI's contract for the buffers, until the operation completes.
pub(crate) unsafe fn reduce<C: Communicator + ?Sized>(
    c: &C,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    n: usize,
    ty: c_int,
    op: c_int,
    root: Option<c_int>,
) -> Result<impl Ready<C>, c_int> {
    let t = usable(ty)?;
    let op = operation(op, ty)?;
    let root = root.map(|r| root_of(c, r)).transpose()?;
    let at_root = root.is_none_or(|r| c.rank() == r);
    let mut recv = if at_root {
        // SAFETY: by the caller's contract `recvbuf` holds `n` elements
        // where the result goes.
        unsafe { RecvBuf::new(recvbuf, n, &t) }?
    } else {
        RecvBuf::empty()
    };
    let send = if at_root {
        // SAFETY: as above; `sendbuf` holds `n` elements unless
        // MPI_IN_PLACE.
        unsafe { operand(sendbuf, n, &t, &recv) }?
    } else {
        // SAFETY: as above.
        unsafe { SendBuf::new(sendbuf, n, &t) }?
    };
    Ok(move |c: &C| {
        let o = match root {
            Some(r) => c.reduce_bytes(send.bytes(), recv.bytes_mut(), &op, r)?,
            None => c.allreduce_bytes(send.bytes(), recv.bytes_mut(), &op)?,
        };
        recv.finish(usize::MAX);
        Ok(o)
    })
}

/// `MPI_Gather` of `sendcount` elements per rank (`MPI_IN_PLACE` at the
/// root).
///
/// # Safety
/// MPI's contract for the buffers, until the operation completes.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn gather<C: Communicator + ?Sized>(
    c: &C,
    sendbuf: *const c_void,
    sendcount: usize,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: usize,
    recvtype: c_int,
    root: c_int,
) -> Result<impl Ready<C>, c_int> {
    let root = root_of(c, root)?;
    let at_root = c.rank() == root;
    let n = c.size();
    let mut recv = if at_root {
        let rt = usable(recvtype)?;
        let k = recvcount.checked_mul(n).ok_or(MPI_ERR_COUNT)?;
        // SAFETY: MPI's contract: at the root `recvbuf` holds `size` parts.
        unsafe { RecvBuf::new(recvbuf, k, &rt) }?
    } else {
        RecvBuf::empty()
    };
    let send = if at_root && in_place(sendbuf) {
        own_part(&recv, root.0 as usize, recv.len() / n)
    } else {
        let st = usable(sendtype)?;
        // SAFETY: MPI's contract: `sendbuf` holds one part.
        unsafe { SendBuf::new(sendbuf, sendcount, &st) }?
    };
    Ok(move |c: &C| {
        let o = c.gather_bytes(send.bytes(), recv.bytes_mut(), root)?;
        recv.finish(usize::MAX);
        Ok(o)
    })
}

/// `MPI_Scatter` of `recvcount` elements per rank (`MPI_IN_PLACE` at the
/// root).
///
/// # Safety
/// MPI's contract for the buffers, until the operation completes.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn scatter<C: Communicator + ?Sized>(
    c: &C,
    sendbuf: *const c_void,
    sendcount: usize,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: usize,
    recvtype: c_int,
    root: c_int,
) -> Result<impl Ready<C>, c_int> {
    let root = root_of(c, root)?;
    let at_root = c.rank() == root;
    let n = c.size();
    let send = if at_root {
        let st = usable(sendtype)?;
        let k = sendcount.checked_mul(n).ok_or(MPI_ERR_COUNT)?;
        // SAFETY: MPI's contract: at the root `sendbuf` holds `size` parts.
        unsafe { SendBuf::new(sendbuf, k, &st) }?
    } else {
        SendBuf::from_vec(Vec::new())
    };
    // The root's own part stays where it is with MPI_IN_PLACE.
    let recv = if at_root && in_place(recvbuf) {
        RecvBuf::scratch(send.bytes().len() / n)
    } else {
        let rt = usable(recvtype)?;
        // SAFETY: MPI's contract: `recvbuf` holds one part.
        unsafe { RecvBuf::new(recvbuf, recvcount, &rt) }?
    };
    Ok(move |c: &C| {
        let mut recv = recv;
        let o = c.scatter_bytes(send.bytes(), recv.bytes_mut(), root)?;
        recv.finish(usize::MAX);
        Ok(o)
    })
}

/// `MPI_Allgather` (`all_to_all` false) and `MPI_Alltoall`
/// (`MPI_IN_PLACE` too).
///
/// # Safety
/// MPI's contract for the buffers, until the operation completes.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn all<C: Communicator + ?Sized>(
    c: &C,
    all_to_all: bool,
    sendbuf: *const c_void,
    sendcount: usize,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: usize,
    recvtype: c_int,
) -> Result<impl Ready<C>, c_int> {
    let n = c.size();
    let rt = usable(recvtype)?;
    let k = recvcount.checked_mul(n).ok_or(MPI_ERR_COUNT)?;
    // SAFETY: MPI's contract: `recvbuf` holds `size` parts.
    let mut recv = unsafe { RecvBuf::new(recvbuf, k, &rt) }?;
    let send = match (in_place(sendbuf), all_to_all) {
        (true, false) => own_part(&recv, c.rank().0 as usize, recv.len() / n.max(1)),
        (true, true) => SendBuf::from_vec(recv.current()),
        (false, _) => {
            let st = usable(sendtype)?;
            let k = sendcount
                .checked_mul(if all_to_all { n } else { 1 })
                .ok_or(MPI_ERR_COUNT)?;
            // SAFETY: MPI's contract: `sendbuf` holds one part (`size`
            // for an all-to-all).
            unsafe { SendBuf::new(sendbuf, k, &st) }?
        }
    };
    Ok(move |c: &C| {
        let o = if all_to_all {
            c.alltoall_bytes(send.bytes(), recv.bytes_mut(), 1)?
        } else {
            c.allgather_bytes(send.bytes(), recv.bytes_mut())?
        };
        recv.finish(usize::MAX);
        Ok(o)
    })
}

/// `MPI_Scan` and (`exclusive`) `MPI_Exscan` of `n` elements
/// (`MPI_IN_PLACE` too; an exclusive scan leaves rank 0's buffer as it
/// is).
///
/// # Safety
/// MPI's contract for the buffers, until the operation completes.
pub(crate) unsafe fn scan<C: Communicator + ?Sized>(
    _on: &C,
    exclusive: bool,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    n: usize,
    ty: c_int,
    op: c_int,
) -> Result<impl Ready<C>, c_int> {
    let t = usable(ty)?;
    let o = operation(op, ty)?;
    // SAFETY: MPI's contract: `recvbuf` (and `sendbuf` unless
    // MPI_IN_PLACE) hold `n` elements.
    let mut recv = unsafe { RecvBuf::new(recvbuf, n, &t) }?;
    if exclusive {
        // Rank 0's buffer is left as it is.
        recv.load();
    }
    // SAFETY: as above.
    let send = unsafe { operand(sendbuf, n, &t, &recv) }?;
    Ok(move |c: &C| {
        let r = if exclusive {
            c.exscan_bytes(send.bytes(), recv.bytes_mut(), &o)?
        } else {
            c.scan_bytes(send.bytes(), recv.bytes_mut(), &o)?
        };
        recv.finish(usize::MAX);
        Ok(r)
    })
}

/// `MPI_Reduce_scatter` with `counts` (elements per rank;
/// `MPI_Reduce_scatter_block`'s are all equal).
///
/// # Safety
/// MPI's contract for the buffers, until the operation completes.
pub(crate) unsafe fn reduce_scatter<C: Communicator + ?Sized>(
    c: &C,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    counts: &[usize],
    ty: c_int,
    op: c_int,
) -> Result<impl Ready<C>, c_int> {
    let t = usable(ty)?;
    let o = operation(op, ty)?;
    let total: usize = counts.iter().sum();
    let mine = counts.get(c.rank().0 as usize).copied().unwrap_or(0);
    // The counts in the operation's elements (a derived type's base
    // elements).
    let per = t.size() / o.elem_size().max(1);
    let scaled: Vec<usize> = counts.iter().map(|k| k * per).collect();
    let send = if in_place(sendbuf) {
        // SAFETY: MPI's contract: with MPI_IN_PLACE, `recvbuf` holds the
        // whole input and gets this rank's part at its start.
        SendBuf::from_vec(unsafe { RecvBuf::new(recvbuf, total, &t) }?.current())
    } else {
        // SAFETY: MPI's contract: `sendbuf` holds every part.
        unsafe { SendBuf::new(sendbuf, total, &t) }?
    };
    // SAFETY: MPI's contract: `recvbuf` holds this rank's part.
    let mut recv = unsafe { RecvBuf::new(recvbuf, mine, &t) }?;
    Ok(move |c: &C| {
        let r = c.reduce_scatter_bytes(send.bytes(), recv.bytes_mut(), &scaled, &o)?;
        recv.finish(usize::MAX);
        Ok(r)
    })
}
