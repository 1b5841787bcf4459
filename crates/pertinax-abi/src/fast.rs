//! The fast paths of the hottest calls (`MPI_Send`, `MPI_Recv`,
//! `MPI_Allreduce`, `MPI_Reduce`, `MPI_Bcast`, `MPI_Barrier`): the common
//! case straight to the core, as a Rust program would call it.
//!
//! A fast path runs when the call is plain: no `--resilient`, no fault
//! plan (every call is then a fault point), an intracommunicator, a
//! predefined contiguous datatype (and a predefined operation), arguments
//! in range. Anything else, an invalid argument included, returns `None`
//! and the call takes its general path, which checks everything and
//! raises the error class. An error of the operation itself (a failed
//! peer, a truncated message) goes to the communicator's handler here,
//! with the class the general path gives it.
//!
//! Why: the general path's layers (the resilient switch, the
//! intercommunicator refusals, the buffer descriptions for derived types,
//! a new erased operation per reduction) cost more than the core's own
//! call for an 8-byte message (`bench-results/2026-11-29/abi-fast/`).

use pertinax::CommunicatorExt as _;
use std::cell::RefCell;
use std::ffi::{c_int, c_void};

use pertinax::{
    Comm, Communicator, ErasedOp, Error, Rank, Source, Tag, TagMatch, ANY_SOURCE, ANY_TAG,
};

use crate::coll::in_place;
use crate::consts::*;
use crate::datatype::{builtin_size, reduction};
use crate::errors::{code_of, raise};
use crate::p2p::put_status;
use crate::serial::Serial;
use crate::state;

/// Largest `MPI_IN_PLACE` reduction input copied on the stack, and the
/// smaller copy for a few words.
const STACK: usize = 256;
const SMALL: usize = 32;

/// Whether the fast paths may run at all (see the module documentation).
#[inline(always)]
fn plain() -> bool {
    !crate::resilient::on() && !pertinax::faults_planned()
}

/// Runs `f` on the intracommunicator of handle `h`, if it is one (borrowed:
/// `f` runs the core's call, which never calls back into the library for
/// a predefined type and operation); `f`'s `None` is an argument the
/// general path must check.
#[inline(always)]
fn intra<R>(h: c_int, f: impl FnOnce(&Comm) -> Option<R>) -> Option<R> {
    state::on_comm(h, |c| if c.is_inter() { None } else { f(c) }).flatten()
}

/// `count` elements of predefined contiguous type `ty`: their byte length.
#[inline(always)]
fn len_of(count: c_int, ty: c_int) -> Option<(usize, usize)> {
    let size = builtin_size(ty)?;
    let n = usize::try_from(count).ok()?;
    Some((n.checked_mul(size)?, size))
}

/// `len` bytes at `buf` (NULL only when empty).
///
/// # Safety
/// MPI's contract: `buf` holds them.
#[inline(always)]
unsafe fn bytes<'a>(buf: *const c_void, len: usize) -> Option<&'a [u8]> {
    if len == 0 {
        return Some(&[]);
    }
    if buf.is_null() {
        return None;
    }
    // SAFETY: by the caller's contract.
    Some(unsafe { std::slice::from_raw_parts(buf.cast(), len) })
}

/// As [`bytes`], writable.
///
/// # Safety
/// MPI's contract: `buf` holds them, and nothing else reads or writes
/// them during the call.
#[inline(always)]
unsafe fn bytes_mut<'a>(buf: *mut c_void, len: usize) -> Option<&'a mut [u8]> {
    if len == 0 {
        return Some(&mut []);
    }
    if buf.is_null() {
        return None;
    }
    // SAFETY: by the caller's contract.
    Some(unsafe { std::slice::from_raw_parts_mut(buf.cast(), len) })
}

/// The call's return: success, or the operation's error through the
/// communicator's handler.
#[inline(always)]
fn result<T>(comm: c_int, what: &str, r: Result<T, Error>) -> c_int {
    match r {
        Ok(_) => MPI_SUCCESS,
        Err(e) => raise(comm, what, code_of(&e)),
    }
}

/// `MPI_Send`.
///
/// # Safety
/// MPI's contract for the arguments.
#[inline(always)]
pub(crate) unsafe fn send(
    buf: *const c_void,
    count: c_int,
    ty: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
) -> Option<c_int> {
    if !plain() || !(0..=pertinax::TAG_UB).contains(&tag) || dest < 0 {
        return None;
    }
    let (len, _) = len_of(count, ty)?;
    // SAFETY: forwarded.
    let data = unsafe { bytes(buf, len) }?;
    let r = intra(comm, |c| {
        ((dest as usize) < c.size()).then(|| c.send(data, Rank(dest), Tag(tag)))
    })?;
    Some(result(comm, "MPI_Send", r))
}

/// `MPI_Recv`.
///
/// # Safety
/// MPI's contract for the arguments.
#[inline(always)]
pub(crate) unsafe fn recv(
    buf: *mut c_void,
    count: c_int,
    ty: c_int,
    src: c_int,
    tag: c_int,
    comm: c_int,
    st: *mut MpiStatus,
) -> Option<c_int> {
    if !plain() {
        return None;
    }
    let tag = match tag {
        MPI_ANY_TAG => ANY_TAG,
        t if (0..=pertinax::TAG_UB).contains(&t) => TagMatch::from(Tag(t)),
        _ => return None,
    };
    let (len, size) = len_of(count, ty)?;
    // SAFETY: forwarded.
    let data = unsafe { bytes_mut(buf, len) }?;
    let got = intra(comm, |c| {
        let from = match src {
            MPI_ANY_SOURCE => ANY_SOURCE,
            r if r >= 0 && (r as usize) < c.size() => Source::from(Rank(r)),
            _ => return None,
        };
        // Checks that the message is whole elements of `size` bytes.
        Some(c.recv_bytes(data, size, from, tag))
    })?;
    Some(match got {
        Ok(s) => {
            // SAFETY: MPI's contract for `st`.
            unsafe { put_status(st, crate::resilient::of(s)) };
            MPI_SUCCESS
        }
        Err(e) => raise(comm, "MPI_Recv", code_of(&e)),
    })
}

/// `MPI_Barrier`.
#[inline(always)]
pub(crate) fn barrier(comm: c_int) -> Option<c_int> {
    if !plain() {
        return None;
    }
    let r = intra(comm, |c| Some(c.barrier()))?;
    Some(result(comm, "MPI_Barrier", r))
}

/// `MPI_Bcast`.
///
/// # Safety
/// MPI's contract for the arguments.
#[inline(always)]
pub(crate) unsafe fn bcast(
    buf: *mut c_void,
    count: c_int,
    ty: c_int,
    root: c_int,
    comm: c_int,
) -> Option<c_int> {
    if !plain() || root < 0 {
        return None;
    }
    let (len, _) = len_of(count, ty)?;
    // SAFETY: forwarded.
    let data = unsafe { bytes_mut(buf, len) }?;
    let r = intra(comm, |c| {
        ((root as usize) < c.size()).then(|| c.bcast(data, Rank(root)))
    })?;
    Some(result(comm, "MPI_Bcast", r))
}

/// The erased form of the predefined operations used so far, by
/// (operation, datatype): made once, not per call.
static OPS: Serial<RefCell<Vec<(c_int, c_int, ErasedOp)>>> = Serial::new(RefCell::new(Vec::new()));

/// Runs `f` with predefined operation `op` on predefined type `ty`
/// (`None`: a user operation, or one MPI does not define on `ty`).
#[inline(always)]
fn with_op<R>(op: c_int, ty: c_int, f: impl FnOnce(&ErasedOp) -> R) -> Option<R> {
    // Predefined operations are `0x58000000 | index` (MPICH's encoding).
    if (op as u32) & 0xfc00_0000 != 0x5800_0000 {
        return None;
    }
    OPS.with(|ops| {
        let known = ops
            .try_borrow()
            .ok()?
            .iter()
            .any(|(o, t, _)| *o == op && *t == ty);
        if !known {
            let e = reduction(op, ty).ok()?;
            ops.try_borrow_mut().ok()?.push((op, ty, e));
        }
        let ops = ops.try_borrow().ok()?;
        let (_, _, e) = ops.iter().find(|(o, t, _)| *o == op && *t == ty)?;
        Some(f(e))
    })
}

/// The input of a reduction: `sendbuf`, or with `MPI_IN_PLACE` a copy of
/// `recv`'s contents (on the stack when small), handed to `f`.
///
/// # Safety
/// Unless `MPI_IN_PLACE`, `sendbuf` holds `len` bytes.
#[inline(always)]
unsafe fn operand<R>(
    sendbuf: *const c_void,
    recv: &mut [u8],
    f: impl FnOnce(&[u8], &mut [u8]) -> R,
) -> Option<R> {
    let len = recv.len();
    if in_place(sendbuf) {
        // Two sizes on the stack: zeroing the copy costs as much as the
        // call for a word or two.
        if len <= SMALL {
            let mut copy = [0u8; SMALL];
            copy[..len].copy_from_slice(recv);
            return Some(f(&copy[..len], recv));
        }
        if len <= STACK {
            let mut copy = [0u8; STACK];
            copy[..len].copy_from_slice(recv);
            return Some(f(&copy[..len], recv));
        }
        let copy = recv.to_vec();
        return Some(f(&copy, recv));
    }
    // SAFETY: by the caller's contract.
    let send = unsafe { bytes(sendbuf, len) }?;
    Some(f(send, recv))
}

/// `MPI_Allreduce`.
///
/// # Safety
/// MPI's contract for the arguments.
#[inline(always)]
pub(crate) unsafe fn allreduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    ty: c_int,
    op: c_int,
    comm: c_int,
) -> Option<c_int> {
    if !plain() {
        return None;
    }
    let (len, _) = len_of(count, ty)?;
    // SAFETY: forwarded.
    let recv = unsafe { bytes_mut(recvbuf, len) }?;
    let r = with_op(op, ty, |e| {
        intra(comm, |c| {
            // SAFETY: forwarded.
            unsafe { operand(sendbuf, recv, |s, r| c.allreduce_bytes(s, r, e)) }
        })
    })??;
    Some(result(comm, "MPI_Allreduce", r.map(drop)))
}

/// `MPI_Reduce`.
///
/// # Safety
/// MPI's contract for the arguments.
#[inline(always)]
pub(crate) unsafe fn reduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    ty: c_int,
    op: c_int,
    root: c_int,
    comm: c_int,
) -> Option<c_int> {
    if !plain() || root < 0 {
        return None;
    }
    let (len, _) = len_of(count, ty)?;
    let r = with_op(op, ty, |e| {
        intra(comm, |c| {
            if root as usize >= c.size() {
                return None;
            }
            if c.rank().0 != root {
                // Only the root's receive buffer is significant.
                if in_place(sendbuf) {
                    return None;
                }
                // SAFETY: forwarded.
                let send = unsafe { bytes(sendbuf, len) }?;
                return Some(c.reduce_bytes(send, &mut [], e, Rank(root)));
            }
            // SAFETY: forwarded.
            let recv = unsafe { bytes_mut(recvbuf, len) }?;
            // SAFETY: forwarded.
            unsafe { operand(sendbuf, recv, |s, r| c.reduce_bytes(s, r, e, Rank(root))) }
        })
    })??;
    Some(result(comm, "MPI_Reduce", r.map(drop)))
}

/// A call's general path, kept out of line so that the fast path before
/// it stays a small function.
#[inline(never)]
pub(crate) fn general<R>(f: impl FnOnce() -> R) -> R {
    f()
}
