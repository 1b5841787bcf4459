//! [`ErasedOp`]: an [`Op<T>`] working on bytes, for the collective schedules.

use std::fmt;
use std::mem::size_of;
use std::rc::Rc;

use bytemuck::Pod;

use super::Op;
use crate::error::{Error, Result};

/// Bytes of scratch per operand when a buffer is not aligned for `T`.
const SCRATCH_BYTES: usize = 4096;

/// `combine` on bytes: `(acc, rhs, acc_is_left)`.
type ByteKernel = Rc<dyn Fn(&mut [u8], &[u8], bool)>;

/// A type-erased reduction operation on byte buffers holding whole
/// elements, made by [`Op::erase`].
#[derive(Clone)]
pub struct ErasedOp {
    /// `combine` on bytes whose lengths are checked: equal, and a multiple
    /// of a nonzero `elem_size`.
    combine: ByteKernel,
    elem_size: usize,
    commutative: bool,
    name: &'static str,
    /// The element type, when it is a primitive integer or float (for a
    /// backend that maps built-in operations to its own).
    scalar: Option<Scalar>,
}

/// The primitive element types a backend may reduce natively.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
}

impl Scalar {
    /// The scalar `T` is, if it is one.
    fn of<T: 'static>() -> Option<Scalar> {
        use std::any::TypeId;
        let t = TypeId::of::<T>();
        let is = |u: TypeId| t == u;
        Some(match () {
            () if is(TypeId::of::<i8>()) => Scalar::I8,
            () if is(TypeId::of::<u8>()) => Scalar::U8,
            () if is(TypeId::of::<i16>()) => Scalar::I16,
            () if is(TypeId::of::<u16>()) => Scalar::U16,
            () if is(TypeId::of::<i32>()) => Scalar::I32,
            () if is(TypeId::of::<u32>()) => Scalar::U32,
            () if is(TypeId::of::<i64>()) => Scalar::I64,
            () if is(TypeId::of::<u64>()) => Scalar::U64,
            () if is(TypeId::of::<isize>()) && size_of::<isize>() == 8 => Scalar::I64,
            () if is(TypeId::of::<usize>()) && size_of::<usize>() == 8 => Scalar::U64,
            () if is(TypeId::of::<f32>()) => Scalar::F32,
            () if is(TypeId::of::<f64>()) => Scalar::F64,
            () => return None,
        })
    }
}

impl fmt::Debug for ErasedOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ErasedOp")
            .field("name", &self.name)
            .field("elem_size", &self.elem_size)
            .field("commutative", &self.commutative)
            .finish()
    }
}

/// A built-in operation's erased form, by element type, kernel and name.
type Made = ((std::any::TypeId, usize, &'static str), ErasedOp);

thread_local! {
    /// The built-in operations erased so far on this thread: erasing one
    /// again (`c.allreduce(.., &Op::sum())` in a loop) costs a lookup, not
    /// an allocation.
    static BUILTINS: std::cell::RefCell<Vec<Made>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl<T: Pod> Op<T> {
    /// The type-erased form of this operation, for the collective schedules.
    pub fn erase(&self) -> ErasedOp {
        let Some(kernel) = self.builtin_kernel() else {
            return self.make_erased();
        };
        let key = (std::any::TypeId::of::<T>(), kernel, self.name());
        BUILTINS.with(|made| {
            let Ok(mut made) = made.try_borrow_mut() else {
                return self.make_erased();
            };
            // The name by address (a literal's, so one per kernel up to a
            // copy per codegen unit): no string comparison per entry.
            let same = |k: &(std::any::TypeId, usize, &'static str)| {
                k.0 == key.0 && k.1 == key.1 && std::ptr::eq(k.2, key.2)
            };
            if let Some((_, e)) = made.iter().find(|(k, _)| same(k)) {
                return e.clone();
            }
            let e = self.make_erased();
            made.push((key, e.clone()));
            e
        })
    }

    /// A new erased form (see [`Op::erase`]).
    fn make_erased(&self) -> ErasedOp {
        let op = self.clone();
        ErasedOp {
            combine: Rc::new(move |acc, rhs, acc_is_left| {
                combine_bytes_as(&op, acc, rhs, acc_is_left)
            }),
            elem_size: size_of::<T>(),
            commutative: self.commutative,
            name: self.name(),
            scalar: Scalar::of::<T>(),
        }
    }
}

impl ErasedOp {
    /// A user operation on bytes, for a foreign caller (the C ABI's
    /// `MPI_Op_create`): `combine(acc, rhs, acc_is_left)` gets equal
    /// lengths, whole `elem_size`-byte elements, and must leave the result
    /// in `acc` (`left op right`, `acc` being left when `acc_is_left`).
    pub fn from_bytes(
        elem_size: usize,
        commutative: bool,
        combine: impl Fn(&mut [u8], &[u8], bool) + 'static,
    ) -> ErasedOp {
        ErasedOp {
            combine: Rc::new(combine),
            elem_size,
            commutative,
            name: "user",
            scalar: None,
        }
    }

    /// Size in bytes of one element.
    pub fn elem_size(&self) -> usize {
        self.elem_size
    }

    /// Whether the operation is commutative.
    pub fn is_commutative(&self) -> bool {
        self.commutative
    }

    /// The operation's name (`"sum"`, ..., `"user"`) and, for a primitive
    /// element type, which one: what a backend needs to run a built-in
    /// operation as its own (MPI's `MPI_SUM` on `MPI_DOUBLE`, ...).
    pub fn builtin(&self) -> (&'static str, Option<Scalar>) {
        (self.name, self.scalar)
    }

    /// [`Op::combine`] on byte buffers holding whole elements, which need
    /// not be aligned for the element type.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if the buffers differ in length or do not
    /// hold a whole number of elements; `acc` is then unchanged.
    pub fn combine_bytes(&self, acc: &mut [u8], rhs: &[u8], acc_is_left: bool) -> Result<()> {
        if acc.len() != rhs.len() {
            return Err(Error::InvalidArgument(format!(
                "reduction operands differ in length: {} and {} bytes",
                acc.len(),
                rhs.len()
            )));
        }
        if self.elem_size == 0 {
            // Zero-sized elements: only empty buffers hold whole elements.
            return match acc.len() {
                0 => Ok(()),
                len => Err(Error::InvalidArgument(format!(
                    "{len} bytes do not hold zero-sized elements"
                ))),
            };
        }
        if !acc.len().is_multiple_of(self.elem_size) {
            return Err(Error::InvalidArgument(format!(
                "reduction operands of {} bytes are not a whole number of {}-byte elements",
                acc.len(),
                self.elem_size
            )));
        }
        (self.combine)(acc, rhs, acc_is_left);
        Ok(())
    }
}

/// Combines byte buffers as `T`s. The caller checked that the lengths are
/// equal and a multiple of `size_of::<T>() > 0`.
fn combine_bytes_as<T: Pod>(op: &Op<T>, acc: &mut [u8], rhs: &[u8], acc_is_left: bool) {
    if let Ok(acc_t) = bytemuck::try_cast_slice_mut::<u8, T>(acc) {
        if let Ok(rhs_t) = bytemuck::try_cast_slice::<u8, T>(rhs) {
            op.apply(acc_t, rhs_t, acc_is_left);
            return;
        }
    }
    combine_unaligned(op, acc, rhs, acc_is_left);
}

/// The fallback when a buffer is not aligned for `T`: copy chunks of both
/// operands into aligned scratch, run the same loop as the aligned path,
/// and copy the result back. The operations and their order are those of
/// the aligned path, so the results are the same.
fn combine_unaligned<T: Pod>(op: &Op<T>, acc: &mut [u8], rhs: &[u8], acc_is_left: bool) {
    let size = size_of::<T>();
    if size == 0 {
        return;
    }
    let per_chunk = (SCRATCH_BYTES / size).max(1);
    let scratch_len = per_chunk.min(acc.len() / size);
    let mut acc_buf = vec![T::zeroed(); scratch_len];
    let mut rhs_buf = vec![T::zeroed(); scratch_len];
    for (acc_bytes, rhs_bytes) in acc
        .chunks_mut(per_chunk * size)
        .zip(rhs.chunks(per_chunk * size))
    {
        let n = acc_bytes.len() / size;
        let (acc_t, rhs_t) = (&mut acc_buf[..n], &mut rhs_buf[..n]);
        // Casting `[T]` to bytes cannot fail: `u8` has alignment 1 and the
        // byte length is `n * size`, as for the chunks.
        bytemuck::cast_slice_mut::<T, u8>(acc_t).copy_from_slice(acc_bytes);
        bytemuck::cast_slice_mut::<T, u8>(rhs_t).copy_from_slice(rhs_bytes);
        op.apply(acc_t, rhs_t, acc_is_left);
        acc_bytes.copy_from_slice(bytemuck::cast_slice::<T, u8>(acc_t));
    }
}
