//! User reduction operations (`MPI_Op_create`) and the reductions beyond
//! `Reduce`/`Allreduce`: `Reduce_local`, `Scan`, `Exscan`,
//! `Reduce_scatter_block`, `Reduce_scatter`.

use std::cell::RefCell;
use std::ffi::{c_int, c_void};

use pertinax::{Communicator, ErasedOp};

use crate::coll::{done, in_place, input};
use crate::consts::*;
use crate::datatype::{bytes, reduction, size_of};
use crate::errors::{code_of, raise};
use crate::p2p::{call, comm_of, slice, slice_mut};

/// `void f(void *in, void *inout, int *len, MPI_Datatype *type)`:
/// `inout[i] = in[i] op inout[i]`.
type UserFn = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_int, *mut c_int);

/// A user operation: this prefix and its index.
const OP_DIRECT: c_int = 0x9800_0000_u32 as c_int;

std::thread_local! {
    /// User operations by index: the function and whether it commutes.
    static OPS: RefCell<Vec<Option<(UserFn, bool)>>> = const { RefCell::new(Vec::new()) };
}

fn user(op: c_int) -> Option<(UserFn, bool)> {
    if op & !0x03ff_ffff != OP_DIRECT {
        return None;
    }
    let i = (op & 0x03ff_ffff) as usize;
    OPS.with(|o| o.borrow().get(i).copied().flatten())
}

/// The operation `op` on elements of `ty`: a user one, or a predefined
/// one ([`reduction`]).
pub(crate) fn operation(op: c_int, ty: c_int) -> Result<ErasedOp, c_int> {
    let Some((f, commutes)) = user(op) else {
        return reduction(op, ty);
    };
    let size = size_of(ty).ok_or(MPI_ERR_TYPE)?;
    Ok(ErasedOp::from_bytes(
        size,
        commutes,
        move |acc, rhs, acc_is_left| {
            let mut n = (acc.len() / size.max(1)) as c_int;
            let mut t = ty;
            if acc_is_left {
                // acc = acc op rhs: `in` is acc, `inout` a copy of rhs.
                let mut right = rhs.to_vec();
                let mut left = acc.to_vec();
                // SAFETY: both buffers hold `n` elements of `ty`, as the
                // program's function expects.
                unsafe {
                    f(
                        left.as_mut_ptr().cast(),
                        right.as_mut_ptr().cast(),
                        &mut n,
                        &mut t,
                    )
                };
                acc.copy_from_slice(&right);
            } else {
                // acc = rhs op acc: `in` is rhs, `inout` acc.
                let mut left = rhs.to_vec();
                // SAFETY: as above.
                unsafe {
                    f(
                        left.as_mut_ptr().cast(),
                        acc.as_mut_ptr().cast(),
                        &mut n,
                        &mut t,
                    )
                };
            }
        },
    ))
}

crate::mpi! {
    /// `MPI_Op_create`.
    fn PMPI_Op_create(f: Option<UserFn>, commute: c_int, op: *mut c_int) -> c_int as MPI_Op_create {
        let (Some(f), false) = (f, op.is_null()) else {
            return raise(MPI_COMM_WORLD, "MPI_Op_create", MPI_ERR_ARG);
        };
        let i = OPS.with(|o| crate::state::insert(&mut o.borrow_mut(), (f, commute != 0)));
        // SAFETY: checked non-null; writable by MPI's contract.
        unsafe { *op = OP_DIRECT | i as c_int };
        MPI_SUCCESS
    }
}

crate::mpi! {
    /// `MPI_Op_free`: the handle becomes `MPI_OP_NULL`.
    fn PMPI_Op_free(op: *mut c_int) -> c_int as MPI_Op_free {
        if op.is_null() {
            return raise(MPI_COMM_WORLD, "MPI_Op_free", MPI_ERR_ARG);
        }
        // SAFETY: checked non-null; readable and writable by contract.
        let h = unsafe { *op };
        if user(h).is_none() {
            return raise(MPI_COMM_WORLD, "MPI_Op_free", MPI_ERR_OP);
        }
        OPS.with(|o| o.borrow_mut()[(h & 0x03ff_ffff) as usize] = None);
        // SAFETY: as above.
        unsafe { *op = MPI_OP_NULL };
        MPI_SUCCESS
    }
}

crate::mpi! {
    /// `MPI_Op_commutative`.
    fn PMPI_Op_commutative(op: c_int, commute: *mut c_int) -> c_int as MPI_Op_commutative {
        let c = match user(op) {
            Some((_, c)) => c,
            None if (MPI_MAX..=MPI_MAXLOC).contains(&op) => true,
            None => return raise(MPI_COMM_WORLD, "MPI_Op_commutative", MPI_ERR_OP),
        };
        // SAFETY: MPI's contract: null or writable.
        unsafe { crate::put(commute, c_int::from(c), MPI_COMM_WORLD, "MPI_Op_commutative") }
    }
}

crate::mpi! {
    /// `MPI_Reduce_local`: `inout = in op inout`.
    fn PMPI_Reduce_local(inbuf: *const c_void, inoutbuf: *mut c_void, count: c_int, ty: c_int, op: c_int) -> c_int as MPI_Reduce_local {
        call(MPI_COMM_WORLD, "MPI_Reduce_local", || {
            let (len, _) = bytes(count, ty)?;
            let o = operation(op, ty)?;
            // SAFETY: MPI's contract: both hold `count` elements.
            let (i, io) = unsafe { (slice(inbuf, len), slice_mut(inoutbuf, len)) };
            o.combine_bytes(io, i, false).map_err(|e| code_of(&e))
        })
    }
}

crate::mpi! {
    /// `MPI_Scan` (`MPI_IN_PLACE` too).
    fn PMPI_Scan(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, ty: c_int, op: c_int, comm: c_int) -> c_int as MPI_Scan {
        call(comm, "MPI_Scan", || {
            let c = comm_of(comm)?;
            let (len, _) = bytes(count, ty)?;
            let o = operation(op, ty)?;
            // SAFETY: MPI's contract: `recvbuf` (and `sendbuf` unless
            // MPI_IN_PLACE) hold `count` elements.
            let recv = unsafe { slice_mut(recvbuf, len) };
            // SAFETY: as above.
            let send = unsafe { input(sendbuf, len, recv) };
            done(c.scan_bytes(&send, recv, &o))
        })
    }
}

crate::mpi! {
    /// `MPI_Exscan` (`MPI_IN_PLACE` too; rank 0's buffer is untouched).
    fn PMPI_Exscan(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, ty: c_int, op: c_int, comm: c_int) -> c_int as MPI_Exscan {
        call(comm, "MPI_Exscan", || {
            let c = comm_of(comm)?;
            let (len, _) = bytes(count, ty)?;
            let o = operation(op, ty)?;
            // SAFETY: as in `MPI_Scan`.
            let recv = unsafe { slice_mut(recvbuf, len) };
            // SAFETY: as above.
            let send = unsafe { input(sendbuf, len, recv) };
            done(c.exscan_bytes(&send, recv, &o))
        })
    }
}

/// `Reduce_scatter` with `counts` (elements per rank).
///
/// # Safety
/// MPI's contract for the buffers.
unsafe fn reduce_scatter(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    counts: &[usize],
    ty: c_int,
    op: c_int,
    comm: c_int,
) -> Result<(), c_int> {
    let c = comm_of(comm)?;
    let size = size_of(ty).ok_or(MPI_ERR_TYPE)?;
    let o = operation(op, ty)?;
    let total: usize = counts.iter().sum::<usize>() * size;
    let me = c.rank().0 as usize;
    let mine = counts.get(me).copied().unwrap_or(0) * size;
    if in_place(sendbuf) {
        // SAFETY: MPI's contract: with MPI_IN_PLACE, `recvbuf` holds the
        // whole input and gets this rank's part at its start.
        let all = unsafe { slice_mut(recvbuf, total) };
        let input = all.to_vec();
        return done(c.reduce_scatter_bytes(&input, &mut all[..mine], counts, &o));
    }
    // SAFETY: MPI's contract: `sendbuf` holds every part, `recvbuf` this
    // rank's.
    let (send, recv) = unsafe { (slice(sendbuf, total), slice_mut(recvbuf, mine)) };
    done(c.reduce_scatter_bytes(send, recv, counts, &o))
}

crate::mpi! {
    /// `MPI_Reduce_scatter_block`.
    fn PMPI_Reduce_scatter_block(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, ty: c_int, op: c_int, comm: c_int) -> c_int as MPI_Reduce_scatter_block {
        call(comm, "MPI_Reduce_scatter_block", || {
            let n = comm_of(comm)?.size();
            let k = usize::try_from(count).map_err(|_| MPI_ERR_COUNT)?;
            // SAFETY: MPI's contract, forwarded.
            unsafe { reduce_scatter(sendbuf, recvbuf, &vec![k; n], ty, op, comm) }
        })
    }
}

crate::mpi! {
    /// `MPI_Reduce_scatter`.
    fn PMPI_Reduce_scatter(sendbuf: *const c_void, recvbuf: *mut c_void, counts: *const c_int, ty: c_int, op: c_int, comm: c_int) -> c_int as MPI_Reduce_scatter {
        call(comm, "MPI_Reduce_scatter", || {
            let n = comm_of(comm)?.size();
            if counts.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let counts: Vec<usize> = (0..n)
                // SAFETY: MPI's contract: `counts` holds `size` entries.
                .map(|i| usize::try_from(unsafe { *counts.add(i) }).map_err(|_| MPI_ERR_COUNT))
                .collect::<Result<_, _>>()?;
            // SAFETY: MPI's contract, forwarded.
            unsafe { reduce_scatter(sendbuf, recvbuf, &counts, ty, op, comm) }
        })
    }
}
