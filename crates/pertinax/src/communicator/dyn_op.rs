//! [`DynOp`]: an [`Op<T>`] with its element type erased, for the
//! object-safe reductions of [`Communicator`](super::Communicator).

use std::fmt;
use std::rc::Rc;

use bytemuck::Pod;

use super::{bytes, bytes_mut};
use crate::{Comm, Error, Op, Rank, Request, Scope};

/// An [`Op<T>`] seen through bytes (private: reached through [`DynOp`]).
trait OpObj {
    fn elem_size(&self) -> usize;
    fn commutative(&self) -> bool;
    fn combine(&self, acc: &mut [u8], rhs: &[u8], acc_is_left: bool) -> Result<(), Error>;
    fn reduce_on(
        &self,
        comm: &Comm,
        send: &[u8],
        recv: &mut [u8],
        root: Option<Rank>,
    ) -> Result<(), Error>;
    fn ireduce_on<'s>(
        &self,
        comm: &Comm,
        scope: &'s Scope<'s, '_>,
        send: &'s [u8],
        recv: &'s mut [u8],
        root: Option<Rank>,
    ) -> Result<Request<'s>, Error>;
    fn owned(&self) -> Rc<dyn OpObj>;
}

/// `b` as `T`s: borrowed when aligned, else copied.
fn typed<T: Pod>(b: &[u8]) -> Result<std::borrow::Cow<'_, [T]>, Error> {
    whole::<T>(b.len())?;
    Ok(match bytemuck::try_cast_slice(b) {
        Ok(t) => std::borrow::Cow::Borrowed(t),
        Err(_) => std::borrow::Cow::Owned(copied(b)?),
    })
}

/// `b` (whole `T`s) copied into a vector of `T`.
fn copied<T: Pod>(b: &[u8]) -> Result<Vec<T>, Error> {
    let mut v = vec![T::zeroed(); b.len() / std::mem::size_of::<T>().max(1)];
    bytes_mut(&mut v)?.copy_from_slice(b);
    Ok(v)
}

/// Checks that `len` bytes are whole `T`s.
fn whole<T>(len: usize) -> Result<(), Error> {
    let s = std::mem::size_of::<T>();
    if s == 0 {
        return Err(Error::InvalidArgument(
            "reduction of a zero-sized element type".into(),
        ));
    }
    if !len.is_multiple_of(s) {
        return Err(Error::InvalidArgument(format!(
            "{len} bytes are not a whole number of {s}-byte elements"
        )));
    }
    Ok(())
}

/// Runs `f` on `b` as `T`s, through an aligned copy when it is not
/// aligned.
fn typed_mut<T: Pod, R>(
    b: &mut [u8],
    f: impl FnOnce(&mut [T]) -> Result<R, Error>,
) -> Result<R, Error> {
    whole::<T>(b.len())?;
    match bytemuck::try_cast_slice_mut::<u8, T>(b) {
        Ok(t) => f(t),
        Err(_) => {
            let mut v: Vec<T> = copied(b)?;
            let r = f(&mut v)?;
            b.copy_from_slice(bytes(&v)?);
            Ok(r)
        }
    }
}

/// `b` as `T`s, which must be aligned (a buffer lent to a non-blocking
/// operation cannot be copied).
fn aligned<T: Pod>(b: &[u8]) -> Result<&[T], Error> {
    whole::<T>(b.len())?;
    bytemuck::try_cast_slice(b).map_err(|e| {
        Error::InvalidArgument(format!(
            "a non-blocking reduction's buffer is not aligned for its element type: {e}"
        ))
    })
}

/// See [`aligned`].
fn aligned_mut<T: Pod>(b: &mut [u8]) -> Result<&mut [T], Error> {
    whole::<T>(b.len())?;
    bytemuck::try_cast_slice_mut(b).map_err(|e| {
        Error::InvalidArgument(format!(
            "a non-blocking reduction's buffer is not aligned for its element type: {e}"
        ))
    })
}

impl<T: Pod> OpObj for Op<T> {
    fn elem_size(&self) -> usize {
        std::mem::size_of::<T>()
    }
    fn commutative(&self) -> bool {
        self.is_commutative()
    }
    fn combine(&self, acc: &mut [u8], rhs: &[u8], acc_is_left: bool) -> Result<(), Error> {
        let rhs = typed::<T>(rhs)?;
        typed_mut::<T, ()>(acc, |acc| Op::combine(self, acc, &rhs, acc_is_left))
    }
    fn reduce_on(
        &self,
        comm: &Comm,
        send: &[u8],
        recv: &mut [u8],
        root: Option<Rank>,
    ) -> Result<(), Error> {
        let send = typed::<T>(send)?;
        if recv.is_empty() {
            // A non-root's receive: nothing to cast.
            return match root {
                Some(r) => comm.reduce(&send, &mut [], self, r),
                None => comm.allreduce(&send, &mut [], self),
            };
        }
        typed_mut::<T, ()>(recv, |recv| match root {
            Some(r) => comm.reduce(&send, recv, self, r),
            None => comm.allreduce(&send, recv, self),
        })
    }
    fn ireduce_on<'s>(
        &self,
        comm: &Comm,
        scope: &'s Scope<'s, '_>,
        send: &'s [u8],
        recv: &'s mut [u8],
        root: Option<Rank>,
    ) -> Result<Request<'s>, Error> {
        let send = aligned::<T>(send)?;
        let recv: &'s mut [T] = if recv.is_empty() {
            &mut []
        } else {
            aligned_mut::<T>(recv)?
        };
        match root {
            Some(r) => comm.ireduce(scope, send, recv, self, r),
            None => comm.iallreduce(scope, send, recv, self),
        }
    }
    fn owned(&self) -> Rc<dyn OpObj> {
        Rc::new(self.clone())
    }
}

/// A reduction operation with its element type erased: what the object-safe
/// reductions of [`Communicator`](crate::Communicator) take. Made from an [`Op<T>`] by
/// [`DynOp::new`] (the typed methods of
/// [`CommunicatorExt`](super::CommunicatorExt) do it).
#[derive(Clone, Copy)]
pub struct DynOp<'a>(&'a dyn OpObj);

impl fmt::Debug for DynOp<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DynOp")
            .field("elem_size", &self.0.elem_size())
            .field("commutative", &self.0.commutative())
            .finish()
    }
}

impl<'a> DynOp<'a> {
    /// The erased form of `op`.
    pub fn new<T: Pod>(op: &'a Op<T>) -> DynOp<'a> {
        DynOp(op)
    }

    /// Bytes of one element.
    pub fn elem_size(&self) -> usize {
        self.0.elem_size()
    }

    /// Whether the operation is commutative.
    pub fn is_commutative(&self) -> bool {
        self.0.commutative()
    }

    /// [`Op::combine`] on bytes holding whole elements (they need not be
    /// aligned).
    ///
    /// # Errors
    /// `InvalidArgument` if the lengths differ or are not whole elements.
    pub fn combine(&self, acc: &mut [u8], rhs: &[u8], acc_is_left: bool) -> Result<(), Error> {
        self.0.combine(acc, rhs, acc_is_left)
    }

    /// [`Comm::reduce`] of these bytes on `comm` (`recv` is used at the
    /// root only; a non-root may pass an empty one).
    ///
    /// # Errors
    /// As [`Comm::reduce`]; `InvalidArgument` for bytes that are not whole
    /// elements.
    pub fn reduce_on(
        &self,
        comm: &Comm,
        send: &[u8],
        recv: &mut [u8],
        root: impl Into<Rank>,
    ) -> Result<(), Error> {
        self.0.reduce_on(comm, send, recv, Some(root.into()))
    }

    /// [`Comm::allreduce`] of these bytes on `comm`.
    ///
    /// # Errors
    /// As [`Comm::allreduce`]; `InvalidArgument` for bytes that are not
    /// whole elements.
    pub fn allreduce_on(&self, comm: &Comm, send: &[u8], recv: &mut [u8]) -> Result<(), Error> {
        self.0.reduce_on(comm, send, recv, None)
    }

    /// [`Comm::ireduce`] (`root` given) or [`Comm::iallreduce`] of these
    /// bytes on `comm`; the buffers must be aligned for the element type.
    ///
    /// # Errors
    /// As those; `InvalidArgument` for bytes that are not whole, aligned
    /// elements.
    pub fn ireduce_on<'s>(
        &self,
        comm: &Comm,
        scope: &'s Scope<'s, '_>,
        send: &'s [u8],
        recv: &'s mut [u8],
        root: Option<Rank>,
    ) -> Result<Request<'s>, Error> {
        self.0.ireduce_on(comm, scope, send, recv, root)
    }

    /// An owned copy (for a decorator that replays the reduction later).
    pub fn to_owned(&self) -> OwnedOp {
        OwnedOp(self.0.owned())
    }
}

/// An owned [`DynOp`].
#[derive(Clone)]
pub struct OwnedOp(Rc<dyn OpObj>);

impl fmt::Debug for OwnedOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_dyn().fmt(f)
    }
}

impl OwnedOp {
    /// The borrowed form.
    pub fn as_dyn(&self) -> DynOp<'_> {
        DynOp(&*self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erased_ops_combine_unaligned_bytes() {
        let op = Op::<u32>::sum();
        let d = DynOp::new(&op);
        // Words seen from their second byte: never aligned for u32.
        let mut words = [0u32; 3];
        let acc = &mut bytes_mut(&mut words).unwrap()[1..9];
        let rhs: Vec<u8> = [1u32, 2].iter().flat_map(|v| v.to_ne_bytes()).collect();
        acc.copy_from_slice(&rhs);
        d.combine(acc, &rhs, true).unwrap();
        let got: Vec<u32> = copied(acc).unwrap();
        assert_eq!(got, [2, 4]);
        assert!(d.combine(&mut acc[..7], &rhs[..7], true).is_err());
        assert_eq!(d.to_owned().as_dyn().elem_size(), 4);
    }
}
