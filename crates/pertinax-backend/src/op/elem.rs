//! Element types of the built-in operations: the marker traits saying which
//! operations a type supports, and [`ValueIndex`] for `minloc`/`maxloc`.
//!
//! The traits are sealed: the arithmetic behind them (wrapping integers,
//! NaN handling) is part of the operations' contract, so only this module
//! implements them. User types reduce through [`Op::user`](super::Op::user).

use bytemuck::{Pod, Zeroable};

/// The element-level arithmetic behind the marker traits. Private: users
/// cannot name these traits, so they can neither implement nor call them.
pub(super) mod sealed {
    use bytemuck::Pod;

    pub trait Arith: Pod {
        fn op_add(a: Self, b: Self) -> Self;
        fn op_mul(a: Self, b: Self) -> Self;
    }

    pub trait Ordered: Pod {
        /// The smaller operand; for floats IEEE 754-2019 `minimum`.
        fn op_min(a: Self, b: Self) -> Self;
        /// The larger operand; for floats IEEE 754-2019 `maximum`.
        fn op_max(a: Self, b: Self) -> Self;
        /// `a` strictly wins over `b` under `min` (NaN first, -0 before +0).
        fn wins_min(a: Self, b: Self) -> bool;
        /// `a` strictly wins over `b` under `max` (NaN first, +0 before -0).
        fn wins_max(a: Self, b: Self) -> bool;
    }

    pub trait Bitwise: Pod {
        fn op_and(a: Self, b: Self) -> Self;
        fn op_or(a: Self, b: Self) -> Self;
        fn op_xor(a: Self, b: Self) -> Self;
    }

    pub trait Logical: Pod {
        fn truth(self) -> bool;
        fn from_truth(b: bool) -> Self;
    }
}

/// Types with `sum` and `prod`: every primitive integer and float.
///
/// Integer arithmetic wraps on overflow (as C MPI does in practice), so a
/// reduction never panics, in debug builds either.
pub trait Arith: sealed::Arith {}

/// Types with `min`, `max`, `minloc` and `maxloc`: every primitive integer
/// and float.
///
/// Floats follow IEEE 754-2019 `minimum`/`maximum`: a NaN operand makes the
/// result NaN (NaN propagates), and -0.0 is smaller than +0.0. Both are
/// then commutative and associative, so every reduction order gives the
/// same value (a NaN result's payload bits are unspecified).
pub trait Ordered: sealed::Ordered {}

/// Types with `band`, `bor` and `bxor`: every primitive integer.
pub trait Bitwise: sealed::Bitwise {}

/// Types with `land`, `lor` and `lxor`: every primitive integer. A nonzero
/// operand is true; the result is 1 (true) or 0 (false).
pub trait Logical: sealed::Logical {}

macro_rules! int_impls {
    ($($t:ty),*) => {$(
        impl sealed::Arith for $t {
            #[inline(always)]
            fn op_add(a: Self, b: Self) -> Self { a.wrapping_add(b) }
            #[inline(always)]
            fn op_mul(a: Self, b: Self) -> Self { a.wrapping_mul(b) }
        }
        impl sealed::Ordered for $t {
            #[inline(always)]
            fn op_min(a: Self, b: Self) -> Self { if b < a { b } else { a } }
            #[inline(always)]
            fn op_max(a: Self, b: Self) -> Self { if b > a { b } else { a } }
            #[inline(always)]
            fn wins_min(a: Self, b: Self) -> bool { a < b }
            #[inline(always)]
            fn wins_max(a: Self, b: Self) -> bool { a > b }
        }
        impl sealed::Bitwise for $t {
            #[inline(always)]
            fn op_and(a: Self, b: Self) -> Self { a & b }
            #[inline(always)]
            fn op_or(a: Self, b: Self) -> Self { a | b }
            #[inline(always)]
            fn op_xor(a: Self, b: Self) -> Self { a ^ b }
        }
        impl sealed::Logical for $t {
            #[inline(always)]
            fn truth(self) -> bool { self != 0 }
            #[inline(always)]
            fn from_truth(b: bool) -> Self { Self::from(b) }
        }
        impl Arith for $t {}
        impl Ordered for $t {}
        impl Bitwise for $t {}
        impl Logical for $t {}
    )*};
}

int_impls!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize);

// Float min/max are branch-free bit masks so that LLVM vectorizes them
// (the obvious `if a < b { a } else if ...` stays scalar). `min` keeps a's
// bits unless b is strictly smaller, keeps b's bits unless a is strictly
// smaller, and ORs what it kept. So a strict winner comes out alone; equal
// operands come out as themselves, except {-0, +0}, which ORs to -0; and
// when either is NaN nothing is strictly smaller, and the OR of a NaN with
// anything is a NaN (all-ones exponent and nonzero mantissa survive). `max`
// is `-min(-a, -b)`, negation being a flip of the sign bit.
macro_rules! float_impls {
    ($($t:ty: $bits:ty),*) => {$(
        impl sealed::Arith for $t {
            #[inline(always)]
            fn op_add(a: Self, b: Self) -> Self { a + b }
            #[inline(always)]
            fn op_mul(a: Self, b: Self) -> Self { a * b }
        }
        impl sealed::Ordered for $t {
            #[inline(always)]
            fn op_min(a: Self, b: Self) -> Self {
                let a_less = <$bits>::from(a < b).wrapping_neg(); // all ones if a < b
                let b_less = <$bits>::from(b < a).wrapping_neg();
                <$t>::from_bits((a.to_bits() & !b_less) | (b.to_bits() & !a_less))
            }
            #[inline(always)]
            fn op_max(a: Self, b: Self) -> Self {
                -<Self as sealed::Ordered>::op_min(-a, -b)
            }
            #[inline(always)]
            fn wins_min(a: Self, b: Self) -> bool {
                match (a.is_nan(), b.is_nan()) {
                    (true, nan_b) => !nan_b,
                    (false, true) => false,
                    (false, false) => {
                        a < b || (a == b && a.is_sign_negative() && b.is_sign_positive())
                    }
                }
            }
            #[inline(always)]
            fn wins_max(a: Self, b: Self) -> bool {
                match (a.is_nan(), b.is_nan()) {
                    (true, nan_b) => !nan_b,
                    (false, true) => false,
                    (false, false) => {
                        a > b || (a == b && a.is_sign_positive() && b.is_sign_negative())
                    }
                }
            }
        }
        impl Arith for $t {}
        impl Ordered for $t {}
    )*};
}

float_impls!(f32: u32, f64: u64);

/// A value with an index, the element type of `minloc` and `maxloc`
/// (MPI's `MPI_DOUBLE_INT`, `MPI_2INT`, ...).
///
/// `index` is an `i32`, like MPI's `int` and like a [`Rank`](crate::types::Rank).
///
/// # Layout
/// The struct is `#[repr(C, packed)]`: `value` then `index`, no padding,
/// alignment 1, `size_of::<T>() + 4` bytes. A plain `#[repr(C)]` pair would
/// have padding for most `T` (4 bytes after an `f64`'s index, 3 before an
/// `i8`'s), and padding bytes are uninitialized, so such a pair could not
/// be [`Pod`] and could not travel as bytes. Packing makes one generic type
/// sound for every `T`. The cost: fields may be unaligned, so read them by
/// value (`let v = pair.value;`, or the [`value`](Self::value) and
/// [`index`](Self::index) methods), not by reference (`&pair.value` does not
/// compile).
///
/// # Example
/// ```
/// // `pertinax::{Op, ValueIndex}` in a program
/// use pertinax_backend::op::{Op, ValueIndex};
/// let mut acc = [ValueIndex::new(2.5f64, 0), ValueIndex::new(1.0, 0)];
/// let rhs = [ValueIndex::new(2.5f64, 1), ValueIndex::new(0.5, 1)];
/// Op::minloc().combine(&mut acc, &rhs, true)?;
/// assert_eq!(acc, [ValueIndex::new(2.5, 0), ValueIndex::new(0.5, 1)]);
/// # Ok::<(), pertinax_backend::error::Error>(())
/// ```
#[repr(C, packed)]
#[derive(Clone, Copy, Debug, PartialEq, Default, Pod, Zeroable)]
pub struct ValueIndex<T> {
    /// The value compared by `minloc`/`maxloc`.
    pub value: T,
    /// Where the value came from (a rank, an array position, ...).
    pub index: i32,
}

impl<T: Copy> ValueIndex<T> {
    /// A pair of `value` and `index`.
    pub fn new(value: T, index: i32) -> Self {
        ValueIndex { value, index }
    }

    /// The value (a copy: the field may be unaligned).
    pub fn value(self) -> T {
        self.value
    }

    /// The index.
    pub fn index(self) -> i32 {
        self.index
    }
}
