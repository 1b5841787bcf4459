//! The reducing collectives: `reduce`, `allreduce`, `scan`, `exscan`,
//! `reduce_scatter` and their in-place and non-blocking forms.
//!
//! Each has one body over bytes and an operation that combines bytes
//! ([`Combine`]): the typed method passes its [`Op<T>`], the
//! [`Communicator`](crate::Communicator) trait's erased one its
//! [`ErasedOp`], so both run the same code, fast path included. An
//! `Op<T>` is erased (for a schedule or the MPI backend) only where one is
//! built, never on the straight-line path.

use bytemuck::Pod;

use super::{algo, bad, bytes_mut, fast, run, Builder};
use crate::backend::{Backend, Coll, CollKind, CollOut, OwnCollectives, Store};
use crate::comm::Comm;
use crate::error::Result;
use crate::op::{ErasedOp, Op};
use crate::request::{Request, Scope};
use crate::types::Rank;

/// A reduction operation as the collectives use it: it combines byte
/// buffers holding whole elements, and gives its erased form for a
/// schedule or a backend's own collective.
pub(crate) trait Combine {
    /// Bytes of one element.
    fn elem(&self) -> usize;
    /// `acc = acc ⊕ rhs` (`acc_is_left`) or `rhs ⊕ acc`, on bytes.
    fn combine(&self, acc: &mut [u8], rhs: &[u8], acc_is_left: bool) -> Result<()>;
    /// The erased form, for a schedule or the backend.
    fn erased(&self) -> ErasedOp;
}

impl<T: Pod> Combine for Op<T> {
    fn elem(&self) -> usize {
        std::mem::size_of::<T>()
    }
    fn combine(&self, acc: &mut [u8], rhs: &[u8], acc_is_left: bool) -> Result<()> {
        // The fast path's buffers are the caller's `[T]` and aligned
        // scratch: the casts succeed.
        match (
            bytemuck::try_cast_slice_mut::<u8, T>(acc),
            bytemuck::try_cast_slice::<u8, T>(rhs),
        ) {
            (Ok(a), Ok(b)) => Op::combine(self, a, b, acc_is_left),
            _ => self.erase().combine_bytes(acc, rhs, acc_is_left),
        }
    }
    fn erased(&self) -> ErasedOp {
        self.erase()
    }
}

impl Combine for ErasedOp {
    fn elem(&self) -> usize {
        self.elem_size()
    }
    fn combine(&self, acc: &mut [u8], rhs: &[u8], acc_is_left: bool) -> Result<()> {
        self.combine_bytes(acc, rhs, acc_is_left)
    }
    fn erased(&self) -> ErasedOp {
        self.clone()
    }
}

/// `len` bytes as a number of `elem`-byte elements.
// Inlined: `elem` is then the caller's constant and the divisions
// shifts, not a `div` per call (about 10 ns of an 8 B allreduce).
#[inline(always)]
fn elems(what: &str, len: usize, elem: usize) -> Result<usize> {
    if elem == 0 {
        return Err(bad(what, "a zero-sized element type".into()));
    }
    if !len.is_multiple_of(elem) {
        return Err(bad(
            what,
            format!("{len} bytes are not a whole number of {elem}-byte elements"),
        ));
    }
    Ok(len / elem)
}

impl Comm {
    #[inline]
    fn check_reduce(&self, what: &str, send: usize, recv: usize, root: Option<u32>) -> Result<()> {
        let at_root = root.is_none_or(|r| r == self.inner.rank);
        if at_root && send != recv {
            return Err(bad(
                what,
                format!("send has {send} elements, receive has {recv}"),
            ));
        }
        Ok(())
    }

    /// [`CommunicatorExt::reduce`] over bytes.
    pub(crate) fn reduce_with(
        &self,
        send: &[u8],
        recv: &mut [u8],
        op: &impl Combine,
        root: Rank,
    ) -> Result<()> {
        let root = self.check_root(root)?;
        let elem = op.elem();
        let (ns, nr) = (elems("reduce", send.len(), elem)?, recv.len() / elem);
        if let Err(err) = self.check_reduce("reduce", ns, nr, Some(root)) {
            // Take part with a scratch result so that nobody is left
            // waiting, then report the error.
            let mut scratch = vec![0u8; send.len()];
            self.reduce_with(send, &mut scratch, op, Rank(root as i32))?;
            return Err(err);
        }
        let len = send.len();
        if self.own() {
            return self.run_coll(
                Some(send),
                recv,
                Some(op.erased()),
                CollKind::Reduce { root },
                |_, _, _| {},
            );
        }
        if self.fast_path(len) {
            self.coll_live()?;
            let seq = self.next_seq();
            if self.inner.rank == root {
                recv.copy_from_slice(send);
                return self.fast_reduce(recv, op, root, seq);
            }
            let mut scratch = fast::Scratch::new(len);
            let acc = scratch.bytes(len);
            acc.copy_from_slice(send);
            return self.fast_reduce(acc, op, root, seq);
        }
        crate::request::scope(|s| {
            self.ireduce_with(s, send, recv, op, Rank(root as i32))?
                .wait()
                .map(|_| ())
        })
    }

    /// [`CommunicatorExt::reduce`](crate::CommunicatorExt::reduce) in place: `buf` is the contribution, and at the root
    /// the result.
    ///
    /// # Errors
    /// `InvalidRank` for a bad root.
    pub(crate) fn reduce_in_place<T: Pod>(
        &self,
        buf: &mut [T],
        op: &Op<T>,
        root: impl Into<Rank>,
    ) -> Result<()> {
        let root = self.check_root(root.into())?;
        let len = std::mem::size_of_val(buf);
        self.run_coll(
            None,
            bytes_mut(buf),
            Some(op.erase()),
            CollKind::Reduce { root },
            |b, i, o| algo::reduce(b, i, o, len, std::mem::size_of::<T>(), root),
        )
    }

    /// [`Comm::ireduce`] over bytes.
    pub(crate) fn ireduce_with<'s>(
        &self,
        s: &'s Scope<'s, '_>,
        send: &'s [u8],
        recv: &'s mut [u8],
        op: &impl Combine,
        root: Rank,
    ) -> Result<Request<'s>> {
        let root = self.check_root(root)?;
        let len = send.len();
        let elem = op.elem();
        let (ns, nr) = (elems("reduce", len, elem)?, recv.len() / elem);
        if let Err(err) = self.check_reduce("reduce", ns, nr, Some(root)) {
            // Take part with a scratch result (the schedule runs on; the
            // scope waits for it), so that nobody is left waiting.
            self.coll_live()?;
            if self.own() {
                let k = self.inner.rt.b.start_coll(Coll {
                    ctx: self.inner.ctx + 1,
                    kind: CollKind::Reduce { root },
                    inp: Some(s.lend(send)),
                    out: CollOut::Scratch(len),
                    op: Some(op.erased()),
                })?;
                drop(Request::new(self.inner.rt.clone(), k));
                return Err(err);
            }
            let mut b = Builder::new(self.inner.rank, self.size() as u32);
            let o = b.scratch(len);
            let i = b.buf(Store::In(s.lend(send)));
            b.set_op(op.erased());
            algo::reduce(&mut b, i, o, len, elem, root);
            let sched = b.finish(
                self.inner.ctx + 1,
                self.inner.peers.clone(),
                self.next_seq(),
            );
            let k = self
                .inner
                .rt
                .b
                .start_task(Box::new(run::Running::new(sched)));
            drop(Request::new(self.inner.rt.clone(), k));
            return Err(err);
        }
        self.nonblocking(
            s,
            Some(send),
            recv,
            Some(op.erased()),
            CollKind::Reduce { root },
            |b, i, o| algo::reduce(b, i, o, len, elem, root),
        )
    }

    /// [`CommunicatorExt::allreduce`] over bytes.
    pub(crate) fn allreduce_with(
        &self,
        send: &[u8],
        recv: &mut [u8],
        op: &impl Combine,
    ) -> Result<()> {
        let elem = op.elem();
        let n = elems("allreduce", send.len(), elem)?;
        self.check_reduce("allreduce", n, recv.len() / elem, None)?;
        if self.own() {
            return self.run_coll(
                Some(send),
                recv,
                Some(op.erased()),
                CollKind::Allreduce,
                |_, _, _| {},
            );
        }
        if self.fast_path(send.len()) {
            self.coll_live()?;
            let seq = self.next_seq();
            recv.copy_from_slice(send);
            return self.fast_allreduce(recv, op, seq);
        }
        crate::request::scope(|s| self.iallreduce_with(s, send, recv, op)?.wait().map(|_| ()))
    }

    /// [`CommunicatorExt::allreduce`](crate::CommunicatorExt::allreduce) in place.
    ///
    /// # Errors
    /// `CommFreed`, `Finalized`, or a peer's failure.
    pub(crate) fn allreduce_in_place<T: Pod>(&self, buf: &mut [T], op: &Op<T>) -> Result<()> {
        let (count, elem) = (buf.len(), std::mem::size_of::<T>());
        if self.fast_path(count * elem) {
            self.coll_live()?;
            let seq = self.next_seq();
            return self.fast_allreduce(bytes_mut(buf), op, seq);
        }
        self.run_coll(
            None,
            bytes_mut(buf),
            Some(op.erase()),
            CollKind::Allreduce,
            |b, i, o| algo::allreduce(b, i, o, count, elem),
        )
    }

    /// [`Comm::iallreduce`] over bytes.
    pub(crate) fn iallreduce_with<'s>(
        &self,
        s: &'s Scope<'s, '_>,
        send: &'s [u8],
        recv: &'s mut [u8],
        op: &impl Combine,
    ) -> Result<Request<'s>> {
        let elem = op.elem();
        let count = elems("allreduce", send.len(), elem)?;
        self.check_reduce("allreduce", count, recv.len() / elem, None)?;
        self.nonblocking(
            s,
            Some(send),
            recv,
            Some(op.erased()),
            CollKind::Allreduce,
            |b, i, o| algo::allreduce(b, i, o, count, elem),
        )
    }

    /// [`CommunicatorExt::scan`] (or [`CommunicatorExt::exscan`]) over bytes.
    pub(crate) fn scan_with(
        &self,
        send: &[u8],
        recv: &mut [u8],
        op: &impl Combine,
        exclusive: bool,
    ) -> Result<()> {
        let what = if exclusive { "exscan" } else { "scan" };
        let elem = op.elem();
        let n = elems(what, send.len(), elem)?;
        self.check_reduce(what, n, recv.len() / elem, None)?;
        let len = send.len();
        self.run_coll(
            Some(send),
            recv,
            Some(op.erased()),
            if exclusive {
                CollKind::Exscan
            } else {
                CollKind::Scan
            },
            |b, i, o| algo::scan(b, i, o, len, exclusive),
        )
    }

    /// [`CommunicatorExt::reduce_scatter`] over bytes (`counts` in elements).
    pub(crate) fn reduce_scatter_with(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        op: &impl Combine,
    ) -> Result<()> {
        let n = self.size();
        let elem = op.elem();
        if counts.len() != n {
            return Err(bad(
                "reduce_scatter",
                format!("{} counts for {n} ranks", counts.len()),
            ));
        }
        let (ns, nr) = (
            elems("reduce_scatter", send.len(), elem)?,
            recv.len() / elem,
        );
        let total: usize = counts.iter().sum();
        let here = counts[self.inner.rank as usize];
        if ns != total || nr != here || !recv.len().is_multiple_of(elem) {
            return Err(bad(
                "reduce_scatter",
                format!(
                    "send has {ns} elements (counts sum to {total}), receive has {nr} (count here {here})",
                ),
            ));
        }
        let lens: Vec<usize> = counts.iter().map(|c| c * elem).collect();
        let offs: Vec<usize> = counts
            .iter()
            .scan(0, |a, &c| {
                let o = *a;
                *a += c * elem;
                Some(o)
            })
            .collect();
        self.run_coll(
            Some(send),
            recv,
            Some(op.erased()),
            CollKind::ReduceScatter { lens: lens.clone() },
            |b, i, o| algo::reduce_scatter(b, i, o, total * elem, &lens, &offs),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collective::bytes;
    use crate::error::Error;

    #[test]
    fn typed_and_erased_combine_alike() {
        let op = Op::<u32>::sum();
        let mut a = [1u32, 2];
        let mut b = [1u32, 2];
        Combine::combine(&op, bytes_mut(&mut a), bytes(&[10u32, 20]), true).unwrap();
        Combine::combine(&op.erase(), bytes_mut(&mut b), bytes(&[10u32, 20]), true).unwrap();
        assert_eq!((a, b), ([11, 22], [11, 22]));
        assert!(matches!(
            elems("reduce", 7, 4),
            Err(Error::InvalidArgument(_))
        ));
    }
}
