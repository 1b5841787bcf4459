//! The fast paths of the hottest calls (`MPI_Send`, `MPI_Recv`,
//! `MPI_Allreduce`, `MPI_Reduce`, `MPI_Bcast`, `MPI_Barrier`): the common
//! case straight to the core, as a Rust program would call it.
//!
//! A fast path runs when the call is plain (for the thread that calls
//! without the lock, at `MPI_THREAD_SINGLE`/`FUNNELED`, before any guard;
//! for another behind it: see the `mpi!` macro): no `--resilient`, no
//! fault plan (every call is then a fault point), an intracommunicator
//! for a collective, a predefined contiguous datatype (and a predefined
//! operation), arguments in range. Anything else, an invalid argument
//! included, returns `None` and the call takes its general path, which
//! checks everything and raises the error class; a send's or receive's
//! rank and tag are left to the core, whose checks give the same classes.
//! An error of the operation itself (a failed peer, a truncated message)
//! goes to the communicator's handler here, with the class the general
//! path gives it.
//!
//! Why: the general path's layers (the resilient switch, the
//! intercommunicator refusals, the buffer descriptions for derived types,
//! a new erased operation per reduction) cost more than the core's own
//! call for an 8-byte message (`bench-results/2026-11-29/abi-fast/`).

use std::cell::RefCell;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};

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

/// Whether the fast paths may run at all (see the module documentation):
/// decided once the job is joined ([`decide`]), false before.
static PLAIN: AtomicBool = AtomicBool::new(false);

/// Decides [`PLAIN`] when the job is joined, after `--resilient`'s world is
/// installed: both that and the fault plan (read by `pertinax::init`) are
/// fixed from then on.
pub(crate) fn decide() {
    let plain = !crate::resilient::on() && !pertinax::faults_planned();
    PLAIN.store(plain, Ordering::Relaxed);
}

/// Whether the fast paths may run at all: one load. (Relaxed: it is
/// read inside a call, after the joining call that wrote it, by the
/// thread that joined or one ordered after it by the entry guard's lock.)
#[inline(always)]
fn plain() -> bool {
    PLAIN.load(Ordering::Relaxed)
}

/// Runs `f` on the intracommunicator of handle `h`, if it is one (borrowed:
/// `f` runs the core's call, which never calls back into the library for
/// a predefined type and operation); `f`'s `None` is an argument the
/// general path must check.
#[inline(always)]
fn intra<R>(h: c_int, f: impl FnOnce(&Comm) -> Option<R>) -> Option<R> {
    state::on_comm(
        h,
        #[inline(always)]
        |c| if c.is_inter() { None } else { f(c) },
    )
    .flatten()
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

/// The error class of a failed operation, out of line: the fast path
/// stays small, and the error (and the failed ranks it may own) is
/// dropped here, inside the call, before the handler runs.
#[cold]
#[inline(never)]
fn class_of(e: Error) -> c_int {
    code_of(&e)
}

/// An operation's result as a class: `MPI_SUCCESS` or its error's.
#[inline(always)]
fn class<T>(r: Result<T, Error>) -> c_int {
    match r {
        // Moved out and dropped here (a `_` pattern would leave the whole
        // result to an outlined drop).
        Ok(v) => {
            drop(v);
            MPI_SUCCESS
        }
        Err(e) => class_of(e),
    }
}

/// The call's return: success, or the class through the communicator's
/// handler (after the state's borrow has ended: a handler may call MPI).
#[inline(always)]
fn result(comm: c_int, what: &str, class: c_int) -> c_int {
    if class == MPI_SUCCESS {
        MPI_SUCCESS
    } else {
        failed(comm, what, class)
    }
}

#[cold]
#[inline(never)]
fn failed(comm: c_int, what: &str, class: c_int) -> c_int {
    raise(comm, what, class)
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
    if !plain() || dest < 0 {
        return None;
    }
    let (len, _) = len_of(count, ty)?;
    // SAFETY: forwarded.
    let data = unsafe { bytes(buf, len) }?;
    // The core checks the rank (in the remote group of an
    // intercommunicator) and the tag, with the classes the general path
    // gives (`MPI_ERR_RANK`, `MPI_ERR_TAG`).
    let r = state::on_comm(
        comm,
        #[inline(always)]
        |c| class(c.send_bytes(data, Rank(dest), Tag(tag))),
    )?;
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
        t => TagMatch::from(Tag(t)),
    };
    let from = match src {
        MPI_ANY_SOURCE => ANY_SOURCE,
        r if r >= 0 => Source::from(Rank(r)),
        _ => return None,
    };
    let (len, size) = len_of(count, ty)?;
    // SAFETY: forwarded.
    let data = unsafe { bytes_mut(buf, len) }?;
    // As for a send, the core checks the rank and the tag.
    let r = state::on_comm(
        comm,
        #[inline(always)]
        |c| {
            // Checks that the message is whole elements of `size` bytes.
            match c.recv_bytes(data, size, from, tag) {
                Ok(s) => {
                    // SAFETY: MPI's contract for `st`.
                    unsafe { put_status(st, crate::resilient::of(s)) };
                    MPI_SUCCESS
                }
                Err(e) => class_of(e),
            }
        },
    )?;
    Some(result(comm, "MPI_Recv", r))
}

/// `MPI_Barrier`.
#[inline(always)]
pub(crate) fn barrier(comm: c_int) -> Option<c_int> {
    if !plain() {
        return None;
    }
    let r = intra(
        comm,
        #[inline(always)]
        |c| Some(class(c.barrier())),
    )?;
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
    let r = intra(
        comm,
        #[inline(always)]
        |c| ((root as usize) < c.size()).then(|| class(c.bcast_bytes(data, Rank(root)))),
    )?;
    Some(result(comm, "MPI_Bcast", r))
}

/// Keys of [`Ops::slot`]: a predefined operation's index (the low 4
/// bits of its handle, `0x5800_000i` in MPICH's encoding) by a predefined
/// type's (the low 7 bits of `0x4c00_SSII`: every one is below `0x80`).
const OP_KEYS: usize = 16 << 7;

/// The erased form of the predefined operations used so far, made once,
/// not per call: `made` in the order made, `slot` their places by
/// (operation, type) key (`0`: none yet; `i`: `made[i - 1]`).
struct Ops {
    slot: [u16; OP_KEYS],
    made: Vec<(c_int, ErasedOp)>,
}

static OPS: Serial<RefCell<Ops>> = Serial::new(RefCell::new(Ops {
    slot: [0; OP_KEYS],
    made: Vec::new(),
}));

/// Runs `f` with predefined operation `op` on predefined type `ty`
/// (`None`: a user operation, or one MPI does not define on `ty`).
#[inline(always)]
fn with_op<R>(op: c_int, ty: c_int, f: impl FnOnce(&ErasedOp) -> R) -> Option<R> {
    if (op as u32) & !0xf != 0x5800_0000 {
        return None;
    }
    let key = ((op as usize & 0xf) << 7) | (ty as usize & 0x7f);
    OPS.with(
        #[inline(always)]
        |ops| {
            let mut made = false;
            loop {
                let found = ops.try_borrow().ok()?;
                // Slot 0 (none yet) wraps to an index past the end.
                if let Some((t, e)) = found.made.get(usize::from(found.slot[key]).wrapping_sub(1)) {
                    // Another type with the same low bits is no predefined
                    // one (their indices differ): the general path refuses it.
                    return (*t == ty).then(|| f(e));
                }
                drop(found);
                if made {
                    return None;
                }
                make_op(ops, op, ty, key)?;
                made = true;
            }
        },
    )
}

/// Makes the erased form of `op` on `ty` and gives it slot `key`; `None`
/// if MPI does not define it (or the table is full).
#[cold]
#[inline(never)]
fn make_op(ops: &RefCell<Ops>, op: c_int, ty: c_int, key: usize) -> Option<()> {
    let e = reduction(op, ty).ok()?;
    let mut ops = ops.try_borrow_mut().ok()?;
    let slot = u16::try_from(ops.made.len() + 1).ok()?;
    ops.made.push((ty, e));
    ops.slot[key] = slot;
    Some(())
}

/// Runs `f` with predefined operation `op` on predefined type `ty` and
/// the intracommunicator of handle `comm`; `None` if either is not for
/// the fast path (see [`with_op`], [`intra`]), or `f` declines.
#[inline(always)]
fn with_op_on<R>(
    op: c_int,
    ty: c_int,
    comm: c_int,
    f: impl FnOnce(&ErasedOp, &Comm) -> Option<R>,
) -> Option<R> {
    with_op(
        op,
        ty,
        #[inline(always)]
        |e| {
            intra(
                comm,
                #[inline(always)]
                |c| f(e, c),
            )
        },
    )?
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
        // One `int` or `double`: a move, not a call of `memcpy`.
        if len == 4 {
            return Some(copied::<4, R>(recv, f));
        }
        if len == 8 {
            return Some(copied::<8, R>(recv, f));
        }
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

/// `f(copy, recv)` with a copy of `recv`'s `N` bytes.
///
/// # Panics
/// If `recv` does not hold `N` bytes (the callers check).
#[inline(always)]
fn copied<const N: usize, R>(recv: &mut [u8], f: impl FnOnce(&[u8], &mut [u8]) -> R) -> R {
    let mut copy = [0u8; N];
    copy.copy_from_slice(recv);
    f(&copy, recv)
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
    let r = with_op_on(
        op,
        ty,
        comm,
        #[inline(always)]
        |e, c| {
            // SAFETY: forwarded.
            unsafe {
                operand(
                    sendbuf,
                    recv,
                    #[inline(always)]
                    |s, r| class(c.allreduce_bytes(s, r, e)),
                )
            }
        },
    )?;
    Some(result(comm, "MPI_Allreduce", r))
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
    let r = with_op_on(
        op,
        ty,
        comm,
        #[inline(always)]
        |e, c| {
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
                return Some(class(c.reduce_bytes(send, &mut [], e, Rank(root))));
            }
            // SAFETY: forwarded.
            let recv = unsafe { bytes_mut(recvbuf, len) }?;
            // SAFETY: forwarded.
            unsafe {
                operand(
                    sendbuf,
                    recv,
                    #[inline(always)]
                    |s, r| class(c.reduce_bytes(s, r, e, Rank(root))),
                )
            }
        },
    )?;
    Some(result(comm, "MPI_Reduce", r))
}
