//! The predefined reduction operations on packed elements of the
//! predefined types.

use std::ffi::c_int;

use pertinax::{ErasedOp, Op, ValueIndex};

use crate::consts::*;

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

macro_rules! loc {
    ($op:expr, $t:ty) => {
        match $op {
            MPI_MINLOC => Some(Op::<ValueIndex<$t>>::minloc().erase()),
            MPI_MAXLOC => Some(Op::<ValueIndex<$t>>::maxloc().erase()),
            _ => None,
        }
    };
}

/// The predefined reduction `op` on packed elements of predefined type
/// `ty`, or `MPI_ERR_OP` (a pair MPI does not define or this library does
/// not run: `MPI_LONG_DOUBLE` and `MPI_LONG_DOUBLE_INT` have no Rust
/// type).
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
        // Packed pairs: `ValueIndex` is `{value; i32}` without padding.
        MPI_2INT => loc!(op, i32),
        MPI_FLOAT_INT => loc!(op, f32),
        MPI_DOUBLE_INT => loc!(op, f64),
        MPI_LONG_INT => loc!(op, i64),
        MPI_SHORT_INT => loc!(op, i16),
        _ => None,
    };
    found.ok_or(MPI_ERR_OP)
}

#[cfg(test)]
mod tests {
    use super::super::size_of;
    use super::*;

    #[test]
    fn reductions_exist_where_mpi_defines_them() {
        assert!(reduction(MPI_SUM, MPI_DOUBLE).is_ok());
        assert!(reduction(MPI_BXOR, MPI_INT).is_ok());
        assert_eq!(reduction(MPI_BXOR, MPI_DOUBLE).err(), Some(MPI_ERR_OP));
        assert!(reduction(MPI_MINLOC, MPI_2INT).is_ok());
        for t in [MPI_DOUBLE_INT, MPI_LONG_INT, MPI_SHORT_INT, MPI_FLOAT_INT] {
            let op = reduction(MPI_MAXLOC, t).expect("a pair's maxloc");
            assert_eq!(Some(op.elem_size()), size_of(t));
        }
        assert_eq!(
            reduction(MPI_MINLOC, MPI_LONG_DOUBLE_INT).err(),
            Some(MPI_ERR_OP)
        );
    }
}
