//! Reduction operations (`sum`, `min`, `minloc`, user-defined, ...) for the
//! reducing collectives.
//!
//! # Concepts
//! - An [`Op<T>`] combines two operands of type `T` into one, elementwise
//!   over slices: [`Op::combine`] computes `acc[i] = acc[i] ⊕ rhs[i]`.
//!   The built-in operations are the ones of MPI: [`sum`](Op::sum) and
//!   [`prod`](Op::prod) ([`Arith`] types), [`min`](Op::min) and
//!   [`max`](Op::max) ([`Ordered`]), [`band`](Op::band),
//!   [`bor`](Op::bor), [`bxor`](Op::bxor) ([`Bitwise`]),
//!   [`land`](Op::land), [`lor`](Op::lor), [`lxor`](Op::lxor)
//!   ([`Logical`]), and [`minloc`](Op::minloc)/[`maxloc`](Op::maxloc) on
//!   [`ValueIndex`] pairs. [`Op::user`] wraps any associative function.
//! - **Order of operands.** `⊕` need not be commutative (matrix products
//!   are not), so `combine` says on which side the accumulator stands:
//!   `acc_is_left = true` computes `acc ⊕ rhs`, `false` computes
//!   `rhs ⊕ acc`. A collective reducing over ranks `0..n` uses this to
//!   compute `x0 ⊕ x1 ⊕ ... ⊕ x(n-1)` in rank order.
//! - **Commutativity.** Every built-in operation is commutative. A user
//!   operation says whether it is ([`Op::is_commutative`]); when it is not,
//!   collectives keep rank order, and otherwise they may combine in any
//!   order that suits their schedule.
//! - **Determinism.** Combining the same operands in the same order gives
//!   bitwise the same result (for floats, up to the payload bits of a NaN
//!   result, which Rust leaves unspecified). Float `sum` and `prod` are not
//!   associative, so a different grouping may round differently: the
//!   collective schedule fixes the grouping for a given communicator size and
//!   operation, so repeated runs agree.
//! - **Overflow and NaN.** Integer `sum` and `prod` wrap on overflow, as C
//!   MPI does in practice; nothing panics. Float `min` and `max` follow IEEE
//!   754-2019 `minimum`/`maximum`: NaN propagates and -0.0 < +0.0.
//!
//! The collective schedules work on bytes: [`Op::erase`] turns an `Op<T>`
//! into an [`ErasedOp`] that combines byte buffers, aligned or not. The
//! built-in operations run as one tight loop per type and operation, which
//! the compiler vectorizes; a user operation calls its function per
//! element.
//!
//! # Example
//! ```
//! use pertinax_backend::op::Op; // `pertinax::Op` in a program
//! let mut acc = [1.0f64, 2.0, 3.0];
//! Op::<f64>::sum().combine(&mut acc, &[10.0, 20.0, 30.0], true)?;
//! assert_eq!(acc, [11.0, 22.0, 33.0]);
//!
//! // A non-commutative operation: keep the left operand's first digit.
//! let first = Op::<u32>::user(|a, _b| *a, false);
//! let mut acc = [1u32];
//! first.combine(&mut acc, &[2], false)?; // acc = rhs ⊕ acc
//! assert_eq!(acc, [2]);
//! # Ok::<(), pertinax_backend::error::Error>(())
//! ```

mod elem;
mod erased;
#[cfg(test)]
mod tests;

use std::fmt;
use std::rc::Rc;

use bytemuck::Pod;

use crate::error::{Error, Result};

pub use elem::{Arith, Bitwise, Logical, Ordered, ValueIndex};
pub use erased::ErasedOp;
pub use erased::Scalar;

/// A reduction operation on values of type `T`.
///
/// Built-in operations come from the constructors ([`sum`](Op::sum),
/// [`min`](Op::min), [`minloc`](Op::minloc), ...), which exist only for the
/// types that support them; [`user`](Op::user) wraps a function. Cloning
/// is cheap.
///
/// [`combine`](Op::combine) says on which side the accumulator stands, so
/// non-commutative operations reduce in a defined order. Combining the
/// same operands in the same order gives bitwise the same result (for
/// floats, up to the payload bits of a NaN result); the collectives fix the
/// order and grouping for a given communicator size, so repeated runs
/// agree. Integer `sum` and `prod` wrap on overflow; float `min` and `max`
/// propagate NaN and order -0.0 before +0.0.
///
/// # Example
/// ```
/// use pertinax_backend::op::Op; // `pertinax::Op` in a program
/// let mut acc = [3i32, -7];
/// Op::max().combine(&mut acc, &[5, -9], true)?;
/// assert_eq!(acc, [5, -7]);
/// # Ok::<(), pertinax_backend::error::Error>(())
/// ```
pub struct Op<T> {
    kind: Kind<T>,
    commutative: bool,
}

/// A combining loop over two slices of equal length; the flag is
/// `acc_is_left`.
type Kernel<T> = fn(&mut [T], &[T], bool);

enum Kind<T> {
    /// A built-in operation: one monomorphized loop per type and operation.
    Builtin {
        name: &'static str,
        kernel: Kernel<T>,
    },
    /// A user function `f(left, right)`.
    User(UserFn<T>),
}

/// A user function `f(left, right)`, shared by the clones of an `Op`.
type UserFn<T> = Rc<dyn Fn(&T, &T) -> T>;

impl<T> Clone for Op<T> {
    fn clone(&self) -> Self {
        let kind = match &self.kind {
            Kind::Builtin { name, kernel } => Kind::Builtin {
                name,
                kernel: *kernel,
            },
            Kind::User(f) => Kind::User(Rc::clone(f)),
        };
        Op {
            kind,
            commutative: self.commutative,
        }
    }
}

impl<T> fmt::Debug for Op<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Op")
            .field("name", &self.name())
            .field("commutative", &self.commutative)
            .finish()
    }
}

impl<T> Op<T> {
    fn builtin(name: &'static str, kernel: Kernel<T>) -> Self {
        Op {
            kind: Kind::Builtin { name, kernel },
            commutative: true,
        }
    }

    /// A built-in operation's kernel, as an address (`None` for a user
    /// function).
    fn builtin_kernel(&self) -> Option<usize> {
        match &self.kind {
            Kind::Builtin { kernel, .. } => Some(*kernel as usize),
            Kind::User(_) => None,
        }
    }

    /// The operation's name (`"sum"`, `"minloc"`, ..., or `"user"`), for
    /// messages and traces.
    fn name(&self) -> &'static str {
        match &self.kind {
            Kind::Builtin { name, .. } => name,
            Kind::User(_) => "user",
        }
    }

    /// `combine` without the length check: `acc` and `rhs` have the same
    /// length.
    fn apply(&self, acc: &mut [T], rhs: &[T], acc_is_left: bool) {
        match &self.kind {
            Kind::Builtin { kernel, .. } => kernel(acc, rhs, acc_is_left),
            Kind::User(f) if acc_is_left => {
                for (a, b) in acc.iter_mut().zip(rhs) {
                    *a = f(a, b);
                }
            }
            Kind::User(f) => {
                for (a, b) in acc.iter_mut().zip(rhs) {
                    *a = f(b, a);
                }
            }
        }
    }
}

impl<T: Arith> Op<T> {
    /// Sum. Integers wrap on overflow.
    pub fn sum() -> Self {
        Op::builtin("sum", |acc, rhs, _| zip_with(acc, rhs, T::op_add))
    }

    /// Product. Integers wrap on overflow.
    pub fn prod() -> Self {
        Op::builtin("prod", |acc, rhs, _| zip_with(acc, rhs, T::op_mul))
    }
}

impl<T: Ordered> Op<T> {
    /// Minimum. For floats, NaN propagates and -0.0 < +0.0 (IEEE 754-2019
    /// `minimum`).
    pub fn min() -> Self {
        Op::builtin("min", |acc, rhs, _| zip_with(acc, rhs, T::op_min))
    }

    /// Maximum. For floats, NaN propagates and -0.0 < +0.0 (IEEE 754-2019
    /// `maximum`).
    pub fn max() -> Self {
        Op::builtin("max", |acc, rhs, _| zip_with(acc, rhs, T::op_max))
    }
}

impl<T: Bitwise> Op<T> {
    /// Bitwise and.
    pub fn band() -> Self {
        Op::builtin("band", |acc, rhs, _| zip_with(acc, rhs, T::op_and))
    }

    /// Bitwise or.
    pub fn bor() -> Self {
        Op::builtin("bor", |acc, rhs, _| zip_with(acc, rhs, T::op_or))
    }

    /// Bitwise exclusive or.
    pub fn bxor() -> Self {
        Op::builtin("bxor", |acc, rhs, _| zip_with(acc, rhs, T::op_xor))
    }
}

impl<T: Logical> Op<T> {
    /// Logical and: 1 if both operands are nonzero, else 0.
    pub fn land() -> Self {
        Op::builtin("land", |acc, rhs, _| {
            zip_with(acc, rhs, |a, b| T::from_truth(a.truth() & b.truth()))
        })
    }

    /// Logical or: 1 if either operand is nonzero, else 0.
    pub fn lor() -> Self {
        Op::builtin("lor", |acc, rhs, _| {
            zip_with(acc, rhs, |a, b| T::from_truth(a.truth() | b.truth()))
        })
    }

    /// Logical exclusive or: 1 if exactly one operand is nonzero, else 0.
    pub fn lxor() -> Self {
        Op::builtin("lxor", |acc, rhs, _| {
            zip_with(acc, rhs, |a, b| T::from_truth(a.truth() ^ b.truth()))
        })
    }
}

impl<T: Ordered> Op<ValueIndex<T>> {
    /// The smaller value with its index (`MPI_MINLOC`). Equal values keep
    /// the smaller index. For floats, the order is that of [`Op::min`]: NaN
    /// wins over every number (two NaNs are equal), and -0.0 over +0.0.
    pub fn minloc() -> Self {
        Op::builtin("minloc", |acc, rhs, acc_is_left| {
            zip_with(acc, rhs, |a, b| pick_loc(a, b, acc_is_left, T::wins_min))
        })
    }

    /// The larger value with its index (`MPI_MAXLOC`). Equal values keep
    /// the smaller index. For floats, the order is that of [`Op::max`]: NaN
    /// wins over every number (two NaNs are equal), and +0.0 over -0.0.
    pub fn maxloc() -> Self {
        Op::builtin("maxloc", |acc, rhs, acc_is_left| {
            zip_with(acc, rhs, |a, b| pick_loc(a, b, acc_is_left, T::wins_max))
        })
    }
}

impl<T: Pod> Op<T> {
    /// A user-defined operation: `f(a, b)` combines a left operand `a` and
    /// a right operand `b`.
    ///
    /// MPI requires `f` to be associative. With `commutative: false`,
    /// every collective combines in rank order; with `true`, it may combine
    /// in any order.
    ///
    /// # Example
    /// ```
    /// use pertinax_backend::op::Op; // `pertinax::Op` in a program
    /// // 2x2 matrix product, row-major: not commutative.
    /// let matmul = Op::<[f64; 4]>::user(
    ///     |a, b| {
    ///         [
    ///             a[0] * b[0] + a[1] * b[2],
    ///             a[0] * b[1] + a[1] * b[3],
    ///             a[2] * b[0] + a[3] * b[2],
    ///             a[2] * b[1] + a[3] * b[3],
    ///         ]
    ///     },
    ///     false,
    /// );
    /// assert!(!matmul.is_commutative());
    /// ```
    pub fn user(f: impl Fn(&T, &T) -> T + 'static, commutative: bool) -> Self {
        Op {
            kind: Kind::User(Rc::new(f)),
            commutative,
        }
    }

    /// Whether the operation is commutative (every built-in one is).
    pub fn is_commutative(&self) -> bool {
        self.commutative
    }

    /// Combines elementwise: `acc[i] = acc[i] ⊕ rhs[i]` if `acc_is_left`,
    /// else `acc[i] = rhs[i] ⊕ acc[i]`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if `acc` and `rhs` differ in length;
    /// `acc` is then unchanged.
    ///
    /// # Panics
    /// Only if a user function panics.
    pub fn combine(&self, acc: &mut [T], rhs: &[T], acc_is_left: bool) -> Result<()> {
        if acc.len() != rhs.len() {
            return Err(Error::InvalidArgument(format!(
                "reduction operands differ in length: {} and {} elements",
                acc.len(),
                rhs.len()
            )));
        }
        self.apply(acc, rhs, acc_is_left);
        Ok(())
    }
}

/// `acc[i] = f(acc[i], rhs[i])` as one loop the compiler can vectorize
/// (`f` is inlined: every call site passes its own closure or function).
#[inline(always)]
fn zip_with<T: Copy>(acc: &mut [T], rhs: &[T], f: impl Fn(T, T) -> T) {
    for (a, &b) in acc.iter_mut().zip(rhs) {
        *a = f(*a, b);
    }
}

/// The `minloc`/`maxloc` winner of `a` (the accumulator) and `b`: the
/// value that `wins`, else the smaller index, else (same value, same
/// index) the left operand.
#[inline(always)]
fn pick_loc<T: Copy>(
    a: ValueIndex<T>,
    b: ValueIndex<T>,
    a_is_left: bool,
    wins: impl Fn(T, T) -> bool,
) -> ValueIndex<T> {
    // Copy the fields out: they may be unaligned (packed struct).
    let (av, bv, ai, bi) = (a.value, b.value, a.index, b.index);
    if wins(av, bv) {
        a
    } else if wins(bv, av) {
        b
    } else if ai != bi {
        if ai < bi {
            a
        } else {
            b
        }
    } else if a_is_left {
        a
    } else {
        b
    }
}
