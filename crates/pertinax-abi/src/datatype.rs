//! Predefined datatypes (their sizes) and the reduction operations on
//! them. Derived datatypes are not implemented yet: their constructors
//! return `MPI_ERR_UNSUPPORTED_OPERATION`, and a handle that is not a
//! predefined type is `MPI_ERR_TYPE`.

use std::ffi::c_int;

use pertinax::{ErasedOp, Op, ValueIndex};

use crate::consts::*;
use crate::errors::raise;

/// The size in bytes of predefined datatype `ty`, if it is one.
pub fn size_of(ty: c_int) -> Option<usize> {
    match ty {
        // `{float, int}` and `{short, int}` as C lays them out.
        MPI_FLOAT_INT | MPI_SHORT_INT => Some(8),
        MPI_DOUBLE_INT | MPI_LONG_INT => Some(16),
        MPI_LONG_DOUBLE_INT => Some(32),
        // A builtin (bits 30-31 = 1, type 0x0c): size in bits 8-15.
        t if (t as u32) & 0xfc00_0000 == 0x4c00_0000 => {
            let n = ((t as u32) >> 8) & 0xff;
            (n > 0).then_some(n as usize)
        }
        _ => None,
    }
}

/// The byte length of `count` elements of `ty`, or the error class.
pub(crate) fn bytes(count: c_int, ty: c_int) -> Result<(usize, usize), c_int> {
    let size = size_of(ty).ok_or(MPI_ERR_TYPE)?;
    let n = usize::try_from(count).map_err(|_| MPI_ERR_COUNT)?;
    Ok((n.checked_mul(size).ok_or(MPI_ERR_COUNT)?, size))
}

macro_rules! arith {
    ($op:expr, $t:ty) => {
        match $op {
            MPI_SUM => Some(Op::<$t>::sum().erase()),
            MPI_PROD => Some(Op::<$t>::prod().erase()),
            MPI_MAX => Some(Op::<$t>::max().erase()),
            MPI_MIN => Some(Op::<$t>::min().erase()),
            _ => None,
        }
    };
}

macro_rules! integer {
    ($op:expr, $t:ty) => {
        match $op {
            MPI_BAND => Some(Op::<$t>::band().erase()),
            MPI_BOR => Some(Op::<$t>::bor().erase()),
            MPI_BXOR => Some(Op::<$t>::bxor().erase()),
            MPI_LAND => Some(Op::<$t>::land().erase()),
            MPI_LOR => Some(Op::<$t>::lor().erase()),
            MPI_LXOR => Some(Op::<$t>::lxor().erase()),
            o => arith!(o, $t),
        }
    };
}

/// The reduction `op` on elements of `ty`, or the error class (`MPI_ERR_OP`
/// for a pair MPI does not define or this library does not run yet).
pub(crate) fn reduction(op: c_int, ty: c_int) -> Result<ErasedOp, c_int> {
    let found = match ty {
        MPI_SIGNED_CHAR | MPI_INT8_T => integer!(op, i8),
        MPI_UNSIGNED_CHAR | MPI_UINT8_T | MPI_BYTE | MPI_C_BOOL => integer!(op, u8),
        MPI_SHORT | MPI_INT16_T => integer!(op, i16),
        MPI_UNSIGNED_SHORT | MPI_UINT16_T => integer!(op, u16),
        MPI_INT | MPI_INT32_T => integer!(op, i32),
        MPI_UNSIGNED | MPI_UINT32_T => integer!(op, u32),
        MPI_LONG | MPI_LONG_LONG_INT | MPI_INT64_T | MPI_AINT | MPI_OFFSET | MPI_COUNT => {
            integer!(op, i64)
        }
        MPI_UNSIGNED_LONG | MPI_UNSIGNED_LONG_LONG | MPI_UINT64_T => integer!(op, u64),
        MPI_FLOAT => arith!(op, f32),
        MPI_DOUBLE => arith!(op, f64),
        MPI_2INT => match op {
            MPI_MINLOC => Some(Op::<ValueIndex<i32>>::minloc().erase()),
            MPI_MAXLOC => Some(Op::<ValueIndex<i32>>::maxloc().erase()),
            _ => None,
        },
        MPI_FLOAT_INT => match op {
            MPI_MINLOC => Some(Op::<ValueIndex<f32>>::minloc().erase()),
            MPI_MAXLOC => Some(Op::<ValueIndex<f32>>::maxloc().erase()),
            _ => None,
        },
        t if size_of(t).is_none() => return Err(MPI_ERR_TYPE),
        _ => None,
    };
    found.ok_or(MPI_ERR_OP)
}

crate::mpi! {
    /// `MPI_Type_size` of a predefined datatype.
    fn PMPI_Type_size(ty: c_int, size: *mut c_int) -> c_int as MPI_Type_size {
        match size_of(ty) {
            // SAFETY: MPI's contract: `size` is null or writable.
            Some(n) => unsafe { crate::put(size, n as c_int, MPI_COMM_WORLD, "MPI_Type_size") },
            None => raise(MPI_COMM_WORLD, "MPI_Type_size", MPI_ERR_TYPE),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_the_handles() {
        assert_eq!(size_of(MPI_INT), Some(4));
        assert_eq!(size_of(MPI_DOUBLE), Some(8));
        assert_eq!(size_of(MPI_CHAR), Some(1));
        assert_eq!(size_of(MPI_2INT), Some(8));
        assert_eq!(size_of(MPI_DOUBLE_INT), Some(16));
        assert_eq!(size_of(MPI_DATATYPE_NULL), None);
        assert_eq!(size_of(0x4c00_0010), None, "MPI_LB has no size");
        assert_eq!(bytes(-1, MPI_INT), Err(MPI_ERR_COUNT));
        assert_eq!(bytes(3, MPI_INT), Ok((12, 4)));
    }

    #[test]
    fn reductions_exist_where_mpi_defines_them() {
        assert!(reduction(MPI_SUM, MPI_DOUBLE).is_ok());
        assert!(reduction(MPI_BXOR, MPI_INT).is_ok());
        assert_eq!(reduction(MPI_BXOR, MPI_DOUBLE).err(), Some(MPI_ERR_OP));
        assert_eq!(
            reduction(MPI_SUM, MPI_DATATYPE_NULL).err(),
            Some(MPI_ERR_TYPE)
        );
        assert!(reduction(MPI_MINLOC, MPI_2INT).is_ok());
    }
}

/// Writes lower bound 0 and the size of predefined `ty` as its extent.
///
/// # Safety
/// `lb` and `extent` null or writable.
unsafe fn extent(
    ty: c_int,
    lb: *mut crate::MPI_Aint,
    extent: *mut crate::MPI_Aint,
    what: &str,
) -> c_int {
    let Some(n) = size_of(ty) else {
        return raise(MPI_COMM_WORLD, what, MPI_ERR_TYPE);
    };
    if lb.is_null() || extent.is_null() {
        return raise(MPI_COMM_WORLD, what, MPI_ERR_ARG);
    }
    // SAFETY: checked non-null; writable by the caller's contract.
    unsafe {
        *lb = 0;
        *extent = n as crate::MPI_Aint;
    }
    MPI_SUCCESS
}

crate::mpi! {
    /// `MPI_Type_get_extent` of a predefined datatype (its lower bound is
    /// 0, its extent its size).
    fn PMPI_Type_get_extent(ty: c_int, lb: *mut crate::MPI_Aint, ext: *mut crate::MPI_Aint) -> c_int as MPI_Type_get_extent {
        // SAFETY: MPI's contract for the out-pointers.
        unsafe { extent(ty, lb, ext, "MPI_Type_get_extent") }
    }
}

crate::mpi! {
    /// `MPI_Type_get_true_extent` of a predefined datatype.
    fn PMPI_Type_get_true_extent(ty: c_int, lb: *mut crate::MPI_Aint, ext: *mut crate::MPI_Aint) -> c_int as MPI_Type_get_true_extent {
        // SAFETY: MPI's contract for the out-pointers.
        unsafe { extent(ty, lb, ext, "MPI_Type_get_true_extent") }
    }
}
