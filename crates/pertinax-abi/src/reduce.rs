//! User reduction operations (`MPI_Op_create`, and `MPI_Op_create_c`
//! whose function takes an `MPI_Count` length) and the reductions beyond
//! `Reduce`/`Allreduce`: `Reduce_local`, `Scan`, `Exscan`,
//! `Reduce_scatter_block`, `Reduce_scatter`.

use std::cell::RefCell;
use std::ffi::{c_int, c_void};

use pertinax::ErasedOp;

use crate::coll::done;
use crate::consts::*;
use crate::datatype::{count_of, layout, pack, reduction, unpack, usable, RecvBuf, SendBuf};
use crate::errors::{code_of, raise};
use crate::large::MPI_Count;
use crate::p2p::call;
use crate::serial::Serial;

/// `void f(void *in, void *inout, int *len, MPI_Datatype *type)`:
/// `inout[i] = in[i] op inout[i]`.
type IntFn = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_int, *mut c_int);

/// `MPI_User_function_c`: as [`IntFn`] with an `MPI_Count *len`.
type LargeFn = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut MPI_Count, *mut c_int);

/// A program's reduction function (`MPI_Op_create` or `MPI_Op_create_c`).
#[derive(Clone, Copy)]
enum UserFn {
    Int(IntFn),
    Large(LargeFn),
}

impl UserFn {
    /// `inout[i] = in[i] op inout[i]` for `n` elements of type `ty`.
    ///
    /// # Safety
    /// `inp` and `inout` hold `n` elements of `ty`, as the function
    /// expects.
    unsafe fn call(self, inp: *mut c_void, inout: *mut c_void, n: usize, ty: c_int) {
        let mut t = ty;
        match self {
            UserFn::Int(f) => {
                // A reduction's pieces of more than `int` elements are the
                // program's to avoid with `MPI_Op_create_c`.
                let mut len = c_int::try_from(n).unwrap_or(c_int::MAX);
                // SAFETY: by the caller's contract.
                unsafe { f(inp, inout, &mut len, &mut t) }
            }
            UserFn::Large(f) => {
                let mut len = n as MPI_Count;
                // SAFETY: by the caller's contract.
                unsafe { f(inp, inout, &mut len, &mut t) }
            }
        }
    }
}

/// A user operation: this prefix and its index.
const OP_DIRECT: c_int = 0x9800_0000_u32 as c_int;

/// A user operation: the function and whether it commutes.
type UserOp = (UserFn, bool);

/// User operations by index.
static OPS: Serial<RefCell<Vec<Option<UserOp>>>> = Serial::new(RefCell::new(Vec::new()));

fn user(op: c_int) -> Option<(UserFn, bool)> {
    if op & !0x03ff_ffff != OP_DIRECT {
        return None;
    }
    let i = (op & 0x03ff_ffff) as usize;
    OPS.with(|o| o.borrow().get(i).copied().flatten())
}

/// The operation `op` on packed elements of `ty`: a user one, or a
/// predefined one ([`reduction`]) on the one predefined type `ty` is
/// built of (`MPI_ERR_OP` for a type of mixed elements).
pub(crate) fn operation(op: c_int, ty: c_int) -> Result<ErasedOp, c_int> {
    let Some((f, commutes)) = user(op) else {
        let base = usable(ty)?.base().ok_or(MPI_ERR_OP)?;
        return reduction(op, base);
    };
    let l = layout(ty)?;
    let size = l.size;
    // A type whose elements are not packed already: the function gets
    // them unpacked into scratch buffers laid out as the type says.
    let plain = l.blocks.len() <= 1
        && l.blocks.first().is_none_or(|b| b.0 == 0)
        && l.extent == size as isize;
    Ok(ErasedOp::from_bytes(
        size,
        commutes,
        move |acc, rhs, acc_is_left| {
            let n = acc.len() / size.max(1);
            // `in` and `inout` of the program's function, packed.
            let (mut left, mut right) = if acc_is_left {
                (acc.to_vec(), rhs.to_vec())
            } else {
                (rhs.to_vec(), acc.to_vec())
            };
            if plain {
                // SAFETY: both buffers hold `n` elements of `ty`, as the
                // program's function expects.
                unsafe { f.call(left.as_mut_ptr().cast(), right.as_mut_ptr().cast(), n, ty) };
            } else {
                let span = if n == 0 {
                    0
                } else {
                    (n as isize - 1) * l.extent.max(0) + l.true_extent
                };
                let span = span.max(0) as usize;
                let mut a = vec![0u8; span];
                let mut b = vec![0u8; span];
                let origin = -l.true_lb;
                let (pa, pb) = (
                    a.as_mut_ptr().wrapping_offset(origin),
                    b.as_mut_ptr().wrapping_offset(origin),
                );
                // SAFETY: the scratch buffers span `n` elements of the type
                // from their origins.
                unsafe {
                    unpack(&l, &left, pa, n);
                    unpack(&l, &right, pb, n);
                    f.call(pa.cast(), pb.cast(), n, ty);
                    right.clear();
                    pack(&l, pb, n, &mut right);
                }
            }
            acc.copy_from_slice(&right);
        },
    ))
}

/// Registers user operation `f` (`None`: the program's NULL) as `*op`.
///
/// # Safety
/// `op` null or writable.
unsafe fn create(f: Option<UserFn>, commute: c_int, op: *mut c_int, what: &str) -> c_int {
    let (Some(f), false) = (f, op.is_null()) else {
        return raise(MPI_COMM_WORLD, what, MPI_ERR_ARG);
    };
    let i = OPS.with(|o| crate::state::insert(&mut o.borrow_mut(), (f, commute != 0)));
    if i > 0x03ff_ffff {
        return raise(MPI_COMM_WORLD, what, MPI_ERR_INTERN);
    }
    // SAFETY: checked non-null; writable by the caller's contract.
    unsafe { *op = OP_DIRECT | i as c_int };
    MPI_SUCCESS
}

crate::mpi! {
    /// `MPI_Op_create`.
    fn PMPI_Op_create(f: Option<IntFn>, commute: c_int, op: *mut c_int) -> c_int as MPI_Op_create {
        // SAFETY: MPI's contract: `op` null or writable.
        unsafe { create(f.map(UserFn::Int), commute, op, "MPI_Op_create") }
    }
}

crate::mpi! {
    /// `MPI_Op_create_c`: the function gets an `MPI_Count` length.
    fn PMPI_Op_create_c(f: Option<LargeFn>, commute: c_int, op: *mut c_int) -> c_int as MPI_Op_create_c {
        // SAFETY: MPI's contract: `op` null or writable.
        unsafe { create(f.map(UserFn::Large), commute, op, "MPI_Op_create_c") }
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
            // Every predefined op, `MPI_REPLACE` and `MPI_NO_OP` too (as
            // MPICH answers).
            None if (MPI_MAX..=MPI_MAXLOC).contains(&op) || op == MPI_REPLACE || op == MPI_NO_OP => true,
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
            let t = usable(ty)?;
            let n = count_of(count)?;
            let o = operation(op, ty)?;
            // SAFETY: MPI's contract: both hold `count` elements.
            let (i, mut io) = unsafe { (SendBuf::new(inbuf, n, &t)?, RecvBuf::new(inoutbuf, n, &t)?) };
            io.load();
            o.combine_bytes(io.bytes_mut(), i.bytes(), false).map_err(|e| code_of(&e))?;
            io.finish(usize::MAX);
            Ok(())
        })
    }
}

crate::mpi! {
    /// `MPI_Scan` (`MPI_IN_PLACE` too).
    fn PMPI_Scan(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, ty: c_int, op: c_int, comm: c_int) -> c_int as MPI_Scan {
        call(comm, "MPI_Scan", || {
            crate::on_comm!(comm, |c| {
            // SAFETY: MPI's contract, forwarded.
            done(unsafe { crate::ready::scan(c, false, sendbuf, recvbuf, count_of(count)?, ty, op) }?(c))
            })
        })
    }
}

crate::mpi! {
    /// `MPI_Exscan` (`MPI_IN_PLACE` too; rank 0's buffer is untouched).
    fn PMPI_Exscan(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, ty: c_int, op: c_int, comm: c_int) -> c_int as MPI_Exscan {
        call(comm, "MPI_Exscan", || {
            crate::on_comm!(comm, |c| {
            // SAFETY: MPI's contract, forwarded.
            done(unsafe { crate::ready::scan(c, true, sendbuf, recvbuf, count_of(count)?, ty, op) }?(c))
            })
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
    if crate::inter::remote_size(comm).is_some() {
        // SAFETY: the same contract, forwarded.
        return unsafe {
            crate::intercoll::reduce_scatter(sendbuf, recvbuf, counts, ty, op, comm, None)
        };
    }
    crate::on_comm!(comm, |c| {
        // SAFETY: MPI's contract, forwarded.
        done(unsafe {
            crate::ready::reduce_scatter(c, sendbuf, recvbuf, counts, ty, op)
        }?(c))
    })
}

crate::mpi! {
    /// `MPI_Reduce_scatter_block`.
    fn PMPI_Reduce_scatter_block(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, ty: c_int, op: c_int, comm: c_int) -> c_int as MPI_Reduce_scatter_block {
        call(comm, "MPI_Reduce_scatter_block", || {
            let n = crate::on_comm!(comm, |c| { c.size() });
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
            let n = crate::on_comm!(comm, |c| { c.size() });
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
