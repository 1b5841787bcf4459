//! The v-variants of the collectives (`Gatherv`, `Scatterv`,
//! `Allgatherv`, `Alltoallv`), in their `int` and large-count forms:
//! counts and displacements in elements of the receive (or send) type;
//! block `i` is at `displs[i]` extents of the type (a non-contiguous type
//! goes through a temporary of the blocks one after the other). On an
//! intercommunicator they are `inter.rs`'s.

use std::ffi::{c_int, c_void};

use pertinax::{Communicator, Rank};

use crate::coll::{done, in_place};
use crate::consts::*;
use crate::datatype::{usable, RecvBuf, SendBuf, Ty};
use crate::large::MPI_Count;
use crate::p2p::call;
use crate::ready::Ready;
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

/// The `(byte displacement, count)` segments of a buffer described by
/// `counts` and `displs` (in extents of `t`).
fn segments(counts: &[usize], displs: &[usize], t: &Ty) -> Vec<(isize, usize)> {
    counts
        .iter()
        .zip(displs)
        .map(|(&c, &d)| (d as isize * t.extent(), c))
        .collect()
}

/// The elements a buffer described by `counts` and `displs` spans.
fn span(counts: &[usize], displs: &[usize]) -> usize {
    counts
        .iter()
        .zip(displs)
        .map(|(c, d)| c + d)
        .max()
        .unwrap_or(0)
}

/// Displacements of `counts` packed one after the other.
pub(crate) fn packed(counts: &[usize]) -> Vec<usize> {
    counts
        .iter()
        .scan(0, |at, &c| {
            let d = *at;
            *at += c;
            Some(d)
        })
        .collect()
}

/// The receive side of a v-collective: the buffer, and the displacements
/// (in elements of `t`'s size) the data goes to in it. A type whose
/// elements are packed already takes the program's displacements (zero
/// copy); any other a temporary of the parts one after the other.
///
/// # Safety
/// `buf` spans the counts (MPI's contract).
pub(crate) unsafe fn v_recv(
    buf: *mut c_void,
    counts: &[usize],
    displs: &[usize],
    t: &Ty,
) -> Result<(RecvBuf, Vec<usize>), c_int> {
    if t.packed_like() {
        // SAFETY: by the caller's contract.
        let r = unsafe { RecvBuf::new(buf, span(counts, displs), t) }?;
        Ok((r, displs.to_vec()))
    } else {
        // SAFETY: by the caller's contract.
        let r = unsafe { RecvBuf::segments(buf, &segments(counts, displs, t), t) }?;
        Ok((r, packed(counts)))
    }
}

/// The send side of a v-collective, as [`v_recv`].
///
/// # Safety
/// `buf` spans the counts (MPI's contract).
pub(crate) unsafe fn v_send(
    buf: *const c_void,
    counts: &[usize],
    displs: &[usize],
    t: &Ty,
) -> Result<(SendBuf, Vec<usize>), c_int> {
    if t.packed_like() {
        // SAFETY: by the caller's contract.
        let b = unsafe { SendBuf::new(buf, span(counts, displs), t) }?;
        Ok((b, displs.to_vec()))
    } else {
        // SAFETY: by the caller's contract.
        let b = unsafe { SendBuf::segments(buf, &segments(counts, displs, t), t) }?;
        Ok((b, packed(counts)))
    }
}

/// The element size the byte-level v-collectives take (counts of a
/// zero-size type move nothing).
pub(crate) fn elem(t: &Ty) -> usize {
    t.size().max(1)
}

/// Zero counts for a zero-size type.
pub(crate) fn moved(counts: Vec<usize>, t: &Ty) -> Vec<usize> {
    if t.size() == 0 {
        vec![0; counts.len()]
    } else {
        counts
    }
}

/// This rank's part of a receive buffer's current contents (an
/// `MPI_IN_PLACE` input).
pub(crate) fn own(recv: &RecvBuf, at: usize, count: usize, e: usize) -> SendBuf {
    let all = recv.current();
    SendBuf::from_vec(all.get(at * e..(at + count) * e).unwrap_or(&[]).to_vec())
}

/// `MPI_Gatherv` ready to run (`ready.rs`); `counts` (and displacements)
/// at the root.
///
/// # Safety
/// MPI's contract for the buffers, until the operation completes.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn gatherv<C: Communicator + ?Sized>(
    c: &C,
    sendbuf: *const c_void,
    sendcount: usize,
    sendtype: c_int,
    recvbuf: *mut c_void,
    counts: Option<(Vec<usize>, Vec<usize>)>,
    recvtype: c_int,
    root: c_int,
) -> Result<impl Ready<C>, c_int> {
    crate::check::root(c, root)?;
    let at_root = c.rank().0 == root;
    let (counts, displs) = counts.unwrap_or_default();
    let (mut recv, pd, e, counts) = if at_root {
        let rt = usable(recvtype)?;
        // SAFETY: MPI's contract: at the root `recvbuf` spans the counts.
        let (r, pd) = unsafe { v_recv(recvbuf, &counts, &displs, &rt) }?;
        (r, pd, elem(&rt), moved(counts, &rt))
    } else {
        (RecvBuf::empty(), displs, 1, counts)
    };
    let send = if at_root && in_place(sendbuf) {
        let me = root as usize;
        own(&recv, pd[me], counts[me], e)
    } else {
        let st = usable(sendtype)?;
        // SAFETY: MPI's contract: `sendbuf` holds `sendcount` elements.
        unsafe { SendBuf::new(sendbuf, sendcount, &st) }?
    };
    Ok(move |c: &C| {
        let o = c.gatherv_bytes(send.bytes(), recv.bytes_mut(), &counts, &pd, e, Rank(root))?;
        recv.finish(usize::MAX);
        Ok(o)
    })
}

/// `MPI_Scatterv` ready to run (`ready.rs`); `counts` (and
/// displacements) at the root.
///
/// # Safety
/// MPI's contract for the buffers, until the operation completes.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn scatterv<C: Communicator + ?Sized>(
    c: &C,
    sendbuf: *const c_void,
    counts: Option<(Vec<usize>, Vec<usize>)>,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: usize,
    recvtype: c_int,
    root: c_int,
) -> Result<impl Ready<C>, c_int> {
    crate::check::root(c, root)?;
    let at_root = c.rank().0 == root;
    let (counts, displs) = counts.unwrap_or_default();
    let (send, pd, e, counts) = if at_root {
        let st = usable(sendtype)?;
        // SAFETY: MPI's contract: at the root `sendbuf` spans the counts.
        let (b, pd) = unsafe { v_send(sendbuf, &counts, &displs, &st) }?;
        (b, pd, elem(&st), moved(counts, &st))
    } else {
        (SendBuf::from_vec(Vec::new()), displs, 1, counts)
    };
    let (recv, e) = if at_root && in_place(recvbuf) {
        // The root's own part stays where it is.
        let own = counts.get(root as usize).copied().unwrap_or(0) * e;
        (RecvBuf::scratch(own), e)
    } else {
        let rt = usable(recvtype)?;
        // SAFETY: MPI's contract: `recvbuf` holds `recvcount` elements.
        let r = unsafe { RecvBuf::new(recvbuf, recvcount, &rt) }?;
        (r, if at_root { e } else { elem(&rt) })
    };
    Ok(move |c: &C| {
        let mut recv = recv;
        let o = c.scatterv_bytes(send.bytes(), &counts, &pd, recv.bytes_mut(), e, Rank(root))?;
        recv.finish(usize::MAX);
        Ok(o)
    })
}

/// `MPI_Allgatherv` ready to run (`ready.rs`).
///
/// # Safety
/// MPI's contract for the buffers, until the operation completes.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn allgatherv<C: Communicator + ?Sized>(
    c: &C,
    sendbuf: *const c_void,
    sendcount: usize,
    sendtype: c_int,
    recvbuf: *mut c_void,
    counts: Vec<usize>,
    displs: Vec<usize>,
    recvtype: c_int,
) -> Result<impl Ready<C>, c_int> {
    let rt = usable(recvtype)?;
    let e = elem(&rt);
    // SAFETY: MPI's contract: `recvbuf` spans the counts.
    let (mut recv, pd) = unsafe { v_recv(recvbuf, &counts, &displs, &rt) }?;
    let counts = moved(counts, &rt);
    let send = if in_place(sendbuf) {
        let me = c.rank().0 as usize;
        own(&recv, pd[me], counts[me], e)
    } else {
        let st = usable(sendtype)?;
        // SAFETY: MPI's contract: `sendbuf` holds `sendcount` elements.
        unsafe { SendBuf::new(sendbuf, sendcount, &st) }?
    };
    Ok(move |c: &C| {
        let o = c.allgatherv_bytes(send.bytes(), recv.bytes_mut(), &counts, &pd, e)?;
        recv.finish(usize::MAX);
        Ok(o)
    })
}

/// Counts and displacements in bytes.
fn in_bytes(counts: &[usize], displs: &[usize], size: usize) -> (Vec<usize>, Vec<usize>) {
    (
        counts.iter().map(|c| c * size).collect(),
        displs.iter().map(|d| d * size).collect(),
    )
}

/// `MPI_Alltoallv` ready to run (`ready.rs`).
///
/// # Safety
/// MPI's contract for the buffers, until the operation completes.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn alltoallv<C: Communicator + ?Sized>(
    _on: &C,
    sendbuf: *const c_void,
    scounts: Vec<usize>,
    sdispls: Vec<usize>,
    sendtype: c_int,
    recvbuf: *mut c_void,
    rcounts: Vec<usize>,
    rdispls: Vec<usize>,
    recvtype: c_int,
) -> Result<impl Ready<C>, c_int> {
    let rt = usable(recvtype)?;
    // SAFETY: MPI's contract: `recvbuf` spans the receive counts.
    let (mut recv, rpd) = unsafe { v_recv(recvbuf, &rcounts, &rdispls, &rt) }?;
    // Counts and displacements in bytes: the two sides' types may differ.
    let (rc, rd) = in_bytes(&rcounts, &rpd, rt.size());
    let (send, sc, sd) = if in_place(sendbuf) {
        (SendBuf::from_vec(recv.current()), rc.clone(), rd.clone())
    } else {
        let st = usable(sendtype)?;
        // SAFETY: MPI's contract: `sendbuf` spans the send counts.
        let (send, spd) = unsafe { v_send(sendbuf, &scounts, &sdispls, &st) }?;
        let (sc, sd) = in_bytes(&scounts, &spd, st.size());
        (send, sc, sd)
    };
    Ok(move |c: &C| {
        let o = c.alltoallv_bytes(send.bytes(), &sc, &sd, recv.bytes_mut(), &rc, &rd, 1)?;
        recv.finish(usize::MAX);
        Ok(o)
    })
}

/// The communicator's size, for the length of the count arrays.
fn size(comm: c_int) -> Result<usize, c_int> {
    crate::on_comm!(comm, |c| { Ok(c.size()) })
}

/// Whether this process is `root` of `comm`.
fn is_root(comm: c_int, root: c_int) -> Result<bool, c_int> {
    crate::on_comm!(comm, |c| { Ok(c.rank().0 == root) })
}

macro_rules! v_forms {
    ($cnt:ty, $disp:ty, $scount:ty,
     $pg:ident $g:ident, $ps:ident $s:ident, $pag:ident $ag:ident, $pa:ident $a:ident) => {
        crate::mpi! {
            #[doc = concat!("`", stringify!($g), "` (`MPI_IN_PLACE` at the root).")]
            fn $pg(sendbuf: *const c_void, sendcount: $scount, sendtype: c_int, recvbuf: *mut c_void, recvcounts: *const $cnt, displs: *const $disp, recvtype: c_int, root: c_int, comm: c_int) -> c_int as $g {
                call(comm, stringify!($g), || {
                    let sc = usize::try_from(sendcount).map_err(|_| MPI_ERR_COUNT)?;
                    if let Some(n) = crate::inter::remote_size(comm) {
                        let counts = if root == MPI_ROOT {
                            // SAFETY: MPI's contract: at the root the
                            // arrays hold the remote group's size.
                            Some(unsafe { (read(recvcounts, n)?, read(displs, n)?) })
                        } else {
                            None
                        };
                        // SAFETY: MPI's contract for the buffers.
                        return unsafe { crate::intercoll::rooted_v(false, comm, root, recvbuf, counts, recvtype, sendbuf.cast_mut(), sc, sendtype, None) };
                    }
                    let n = size(comm)?;
                    let counts = if is_root(comm, root)? {
                        // SAFETY: MPI's contract: at the root the arrays
                        // hold `size` entries.
                        Some(unsafe { (read(recvcounts, n)?, read(displs, n)?) })
                    } else {
                        None
                    };
                    // SAFETY: MPI's contract for the buffers.
                    crate::on_comm!(comm, |c| { done(unsafe { gatherv(c, sendbuf, sc, sendtype, recvbuf, counts, recvtype, root) }?(c)) })
                })
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($s), "` (`MPI_IN_PLACE` at the root).")]
            fn $ps(sendbuf: *const c_void, sendcounts: *const $cnt, displs: *const $disp, sendtype: c_int, recvbuf: *mut c_void, recvcount: $scount, recvtype: c_int, root: c_int, comm: c_int) -> c_int as $s {
                call(comm, stringify!($s), || {
                    let rc = usize::try_from(recvcount).map_err(|_| MPI_ERR_COUNT)?;
                    if let Some(n) = crate::inter::remote_size(comm) {
                        let counts = if root == MPI_ROOT {
                            // SAFETY: MPI's contract: at the root the
                            // arrays hold the remote group's size.
                            Some(unsafe { (read(sendcounts, n)?, read(displs, n)?) })
                        } else {
                            None
                        };
                        // SAFETY: MPI's contract for the buffers.
                        return unsafe { crate::intercoll::rooted_v(true, comm, root, sendbuf.cast_mut(), counts, sendtype, recvbuf, rc, recvtype, None) };
                    }
                    let n = size(comm)?;
                    let counts = if is_root(comm, root)? {
                        // SAFETY: MPI's contract: at the root the arrays
                        // hold `size` entries.
                        Some(unsafe { (read(sendcounts, n)?, read(displs, n)?) })
                    } else {
                        None
                    };
                    // SAFETY: MPI's contract for the buffers.
                    crate::on_comm!(comm, |c| { done(unsafe { scatterv(c, sendbuf, counts, sendtype, recvbuf, rc, recvtype, root) }?(c)) })
                })
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($ag), "` (`MPI_IN_PLACE` too).")]
            fn $pag(sendbuf: *const c_void, sendcount: $scount, sendtype: c_int, recvbuf: *mut c_void, recvcounts: *const $cnt, displs: *const $disp, recvtype: c_int, comm: c_int) -> c_int as $ag {
                call(comm, stringify!($ag), || {
                    let sc = usize::try_from(sendcount).map_err(|_| MPI_ERR_COUNT)?;
                    if let Some(n) = crate::inter::remote_size(comm) {
                        // SAFETY: MPI's contract: the arrays hold the
                        // remote group's size.
                        let recv = unsafe { (read(recvcounts, n)?, read(displs, n)?) };
                        // SAFETY: MPI's contract for the buffers.
                        return unsafe { crate::intercoll::all_v(comm, sendbuf, (vec![sc; n], vec![0; n]), sendtype, recvbuf, recv, recvtype, None) };
                    }
                    let n = size(comm)?;
                    // SAFETY: MPI's contract: the arrays hold `size` entries.
                    let (counts, d) = unsafe { (read(recvcounts, n)?, read(displs, n)?) };
                    // SAFETY: MPI's contract for the buffers.
                    crate::on_comm!(comm, |c| { done(unsafe { allgatherv(c, sendbuf, sc, sendtype, recvbuf, counts, d, recvtype) }?(c)) })
                })
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($a), "` (`MPI_IN_PLACE` too).")]
            fn $pa(sendbuf: *const c_void, sendcounts: *const $cnt, sdispls: *const $disp, sendtype: c_int, recvbuf: *mut c_void, recvcounts: *const $cnt, rdispls: *const $disp, recvtype: c_int, comm: c_int) -> c_int as $a {
                call(comm, stringify!($a), || {
                    if let Some(n) = crate::inter::remote_size(comm) {
                        // SAFETY: MPI's contract: the arrays hold the
                        // remote group's size.
                        let (send, recv) = unsafe { ((read(sendcounts, n)?, read(sdispls, n)?), (read(recvcounts, n)?, read(rdispls, n)?)) };
                        // SAFETY: MPI's contract for the buffers.
                        return unsafe { crate::intercoll::all_v(comm, sendbuf, send, sendtype, recvbuf, recv, recvtype, None) };
                    }
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
                    crate::on_comm!(comm, |c| { done(unsafe { alltoallv(c, sendbuf, sc, sd, sendtype, recvbuf, rc, rd, recvtype) }?(c)) })
                })
            }
        }
    };
}

v_forms!(c_int, c_int, c_int,
    PMPI_Gatherv MPI_Gatherv, PMPI_Scatterv MPI_Scatterv, PMPI_Allgatherv MPI_Allgatherv, PMPI_Alltoallv MPI_Alltoallv);
v_forms!(MPI_Count, MPI_Aint, MPI_Count,
    PMPI_Gatherv_c MPI_Gatherv_c, PMPI_Scatterv_c MPI_Scatterv_c, PMPI_Allgatherv_c MPI_Allgatherv_c, PMPI_Alltoallv_c MPI_Alltoallv_c);
