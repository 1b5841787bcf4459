//! [`CommunicatorExt`]: the typed methods of every [`Communicator`], over
//! its object-safe byte methods.

use bytemuck::Pod;

use super::{bytes, bytes_mut, Communicator, Outcome, PendingOp};
use crate::{Op, Rank, Scope, Source, Status, Tag, TagMatch};

/// Element counts as bytes of `T`.
fn elem<T>() -> usize {
    std::mem::size_of::<T>()
}

/// A plain communicator's reduction, run with the typed operation as it
/// is (see [`Communicator::as_plain`]), as the trait's result.
fn plain<E: From<crate::Error>>(r: crate::Result<()>) -> Result<Outcome, E> {
    r.map(|()| Outcome::default()).map_err(E::from)
}

/// The typed methods of every [`Communicator`] (implemented for all of
/// them, trait objects included). Counts and displacements are in
/// elements, as in MPI.
pub trait CommunicatorExt: Communicator {
    /// Sends `buf` to rank `dest` with `tag`. Returns when the buffer may be
    /// reused: small messages are copied out at once, large ones when the
    /// receiver has taken them.
    ///
    /// # Errors
    /// `InvalidRank`, `InvalidTag`, `CommFreed`, `Finalized`; `ProcFailed`
    /// if the destination has failed.
    fn send<T: Pod>(
        &self,
        buf: &[T],
        dest: impl Into<Rank>,
        tag: impl Into<Tag>,
    ) -> Result<Outcome, Self::Error> {
        self.send_bytes(bytes(buf)?, dest.into(), tag.into())
    }
    /// Receives a message into `buf`, which must be large enough.
    ///
    /// # Errors
    /// `Truncated` if the message is longer than `buf`, `LengthNotMultiple`
    /// if it is not a whole number of `T` (in both cases the message is
    /// consumed, as MPI's `MPI_ERR_TRUNCATE` consumes it; size an unknown
    /// message with [`Communicator::probe`] or
    /// [`Comm::recv_vec`](crate::Comm::recv_vec)); `InvalidRank`,
    /// `InvalidTag`, `CommFreed`, `Finalized`; `ProcFailed` if the source failed;
    /// `ProcFailedPending` for an any-source receive while a member failed.
    fn recv<T: Pod>(
        &self,
        buf: &mut [T],
        src: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<Option<Status>, Self::Error> {
        self.recv_bytes(bytes_mut(buf)?, elem::<T>(), src.into(), tag.into())
    }
    /// Sends `sbuf` to `dest` and receives into `rbuf` from `src` at the
    /// same time (no deadlock when two ranks exchange).
    ///
    /// # Errors
    /// As [`CommunicatorExt::send`] and [`CommunicatorExt::recv`], as soon
    /// as either fails (the receive is then cancelled if it has not matched; a large send whose
    /// receiver is alive still waits for the receiver's answer, see
    /// [`crate::scope`]).
    #[allow(clippy::too_many_arguments)]
    fn sendrecv<S: Pod, R: Pod>(
        &self,
        sbuf: &[S],
        dest: impl Into<Rank>,
        stag: impl Into<Tag>,
        rbuf: &mut [R],
        src: impl Into<Source>,
        rtag: impl Into<TagMatch>,
    ) -> Result<Option<Status>, Self::Error> {
        self.sendrecv_bytes(
            bytes(sbuf)?,
            dest.into(),
            stag.into(),
            bytes_mut(rbuf)?,
            elem::<R>(),
            src.into(),
            rtag.into(),
        )
    }
    /// Starts sending `buf` inside `scope`.
    ///
    /// # Errors
    /// As [`Communicator::isend_bytes`].
    fn isend<'s, T: Pod>(
        &self,
        scope: &'s Scope<'s, '_>,
        buf: &'s [T],
        dest: impl Into<Rank>,
        tag: impl Into<Tag>,
    ) -> Result<PendingOp<'s, Self::Error>, Self::Error> {
        self.isend_bytes(scope, bytes(buf)?, dest.into(), tag.into())
    }
    /// Starts receiving into `buf` inside `scope`.
    ///
    /// # Errors
    /// As [`Communicator::irecv_bytes`].
    fn irecv<'s, T: Pod>(
        &self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [T],
        src: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<PendingOp<'s, Self::Error>, Self::Error> {
        self.irecv_bytes(scope, bytes_mut(buf)?, elem::<T>(), src.into(), tag.into())
    }
    /// Sends `buf` of `root` to every rank's `buf` (binomial tree).
    ///
    /// # Errors
    /// `InvalidRank` for a bad root; a count that differs from the root's is
    /// reported as `InvalidArgument` by the ranks that receive it.
    fn bcast<T: Pod>(&self, buf: &mut [T], root: impl Into<Rank>) -> Result<Outcome, Self::Error> {
        self.bcast_bytes(bytes_mut(buf)?, root.into())
    }
    /// Combines every rank's `send` with `op` into `recv` at `root` (rank
    /// order, lower ranks on the left). `recv` is only used at the root;
    /// other ranks may pass an empty slice.
    ///
    /// # Errors
    /// `InvalidRank` for a bad root, `InvalidArgument` if at the root
    /// `recv` and `send` differ in length.
    fn reduce<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: &Op<T>,
        root: impl Into<Rank>,
    ) -> Result<Outcome, Self::Error> {
        let (send, recv, root) = (bytes(send)?, bytes_mut(recv)?, root.into());
        if let Some(c) = self.as_plain() {
            return plain(c.reduce_with(send, recv, op, root));
        }
        self.reduce_bytes(send, recv, &op.erase(), root)
    }
    /// Combines every rank's `send` with `op` into every rank's `recv`:
    /// recursive doubling for small vectors, reduce-scatter + allgather
    /// (Rabenseifner) for large ones. Every rank gets bitwise the same
    /// result.
    ///
    /// # Errors
    /// `InvalidArgument` if `send` and `recv` differ in length.
    fn allreduce<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: &Op<T>,
    ) -> Result<Outcome, Self::Error> {
        let (send, recv) = (bytes(send)?, bytes_mut(recv)?);
        if let Some(c) = self.as_plain() {
            return plain(c.allreduce_with(send, recv, op));
        }
        self.allreduce_bytes(send, recv, &op.erase())
    }
    /// Inclusive prefix reduction: rank `r` gets `send[0] ⊕ … ⊕ send[r]`.
    ///
    /// # Errors
    /// `InvalidArgument` if `send` and `recv` differ in length.
    fn scan<T: Pod>(&self, send: &[T], recv: &mut [T], op: &Op<T>) -> Result<Outcome, Self::Error> {
        let (send, recv) = (bytes(send)?, bytes_mut(recv)?);
        if let Some(c) = self.as_plain() {
            return plain(c.scan_with(send, recv, op, false));
        }
        self.scan_bytes(send, recv, &op.erase())
    }
    /// Exclusive prefix reduction: rank `r > 0` gets `send[0] ⊕ … ⊕
    /// send[r-1]`; rank 0's `recv` is left as it was.
    ///
    /// # Errors
    /// `InvalidArgument` if `send` and `recv` differ in length.
    fn exscan<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: &Op<T>,
    ) -> Result<Outcome, Self::Error> {
        let (send, recv) = (bytes(send)?, bytes_mut(recv)?);
        if let Some(c) = self.as_plain() {
            return plain(c.scan_with(send, recv, op, true));
        }
        self.exscan_bytes(send, recv, &op.erase())
    }
    /// Reduces every rank's `send` (the sum of `counts` elements) and
    /// scatters the result: rank `i` gets `counts[i]` elements in `recv`.
    ///
    /// # Errors
    /// `InvalidArgument` if `counts` does not have one entry per rank, if
    /// `send` is not their sum, or if `recv` is not `counts[rank]` long.
    fn reduce_scatter<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
        op: &Op<T>,
    ) -> Result<Outcome, Self::Error> {
        let (send, recv) = (bytes(send)?, bytes_mut(recv)?);
        if let Some(c) = self.as_plain() {
            return plain(c.reduce_scatter_with(send, recv, counts, op));
        }
        self.reduce_scatter_bytes(send, recv, counts, &op.erase())
    }
    /// [`CommunicatorExt::reduce_scatter`] with `recv.len()` elements for every rank.
    ///
    /// # Errors
    /// `InvalidArgument` if `send` is not `size × recv.len()` long.
    fn reduce_scatter_block<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: &Op<T>,
    ) -> Result<Outcome, Self::Error> {
        let counts = vec![recv.len(); self.size()];
        self.reduce_scatter(send, recv, &counts, op)
    }
    /// Collects every rank's `send` into `recv` at `root`, in rank order
    /// (`recv` holds `size × send.len()` elements there; elsewhere it may be
    /// empty).
    ///
    /// # Errors
    /// `InvalidRank` for a bad root, `InvalidArgument` for a wrong `recv`
    /// length at the root.
    fn gather<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        root: impl Into<Rank>,
    ) -> Result<Outcome, Self::Error> {
        self.gather_bytes(bytes(send)?, bytes_mut(recv)?, root.into())
    }
    /// Gather with a count and displacement (in elements) per rank, used at
    /// the root; `send.len()` must equal this rank's count.
    ///
    /// # Errors
    /// `InvalidRank`, or `InvalidArgument` for counts/displacements that do
    /// not fit (checked at the root).
    fn gatherv<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
        displs: &[usize],
        root: impl Into<Rank>,
    ) -> Result<Outcome, Self::Error> {
        self.gatherv_bytes(
            bytes(send)?,
            bytes_mut(recv)?,
            counts,
            displs,
            elem::<T>(),
            root.into(),
        )
    }
    /// Sends block `i` of `send` at `root` (`size × recv.len()` elements) to
    /// rank `i`'s `recv`.
    ///
    /// # Errors
    /// `InvalidRank` for a bad root, `InvalidArgument` for a wrong `send`
    /// length at the root.
    fn scatter<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        root: impl Into<Rank>,
    ) -> Result<Outcome, Self::Error> {
        self.scatter_bytes(bytes(send)?, bytes_mut(recv)?, root.into())
    }
    /// Scatter with a count and displacement (in elements) per rank, used at
    /// the root; `recv.len()` must equal this rank's count.
    ///
    /// # Errors
    /// `InvalidRank`, or `InvalidArgument` for counts/displacements that do
    /// not fit (checked at the root).
    fn scatterv<T: Pod>(
        &self,
        send: &[T],
        counts: &[usize],
        displs: &[usize],
        recv: &mut [T],
        root: impl Into<Rank>,
    ) -> Result<Outcome, Self::Error> {
        self.scatterv_bytes(
            bytes(send)?,
            counts,
            displs,
            bytes_mut(recv)?,
            elem::<T>(),
            root.into(),
        )
    }
    /// Every rank's `send`, in rank order, in every rank's `recv`
    /// (`size × send.len()` elements): recursive doubling for small blocks
    /// on power-of-two sizes, ring otherwise.
    ///
    /// # Errors
    /// `InvalidArgument` for a wrong `recv` length.
    fn allgather<T: Pod>(&self, send: &[T], recv: &mut [T]) -> Result<Outcome, Self::Error> {
        self.allgather_bytes(bytes(send)?, bytes_mut(recv)?)
    }
    /// Allgather with a count and displacement (in elements) per rank;
    /// `send.len()` must equal this rank's count.
    ///
    /// # Errors
    /// `InvalidArgument` for counts/displacements that do not fit.
    fn allgatherv<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
        displs: &[usize],
    ) -> Result<Outcome, Self::Error> {
        self.allgatherv_bytes(bytes(send)?, bytes_mut(recv)?, counts, displs, elem::<T>())
    }
    /// Block `i` of every rank's `send` goes to rank `i`, which stores the
    /// block from rank `j` at block `j` of `recv`.
    ///
    /// # Errors
    /// `InvalidArgument` unless both buffers are the same multiple of the
    /// size.
    fn alltoall<T: Pod>(&self, send: &[T], recv: &mut [T]) -> Result<Outcome, Self::Error> {
        self.alltoall_bytes(bytes(send)?, bytes_mut(recv)?, elem::<T>())
    }
    /// All-to-all with counts and displacements (in elements) per rank for
    /// both buffers.
    ///
    /// # Errors
    /// `InvalidArgument` for counts/displacements that do not fit.
    #[allow(clippy::too_many_arguments)]
    fn alltoallv<T: Pod>(
        &self,
        send: &[T],
        scounts: &[usize],
        sdispls: &[usize],
        recv: &mut [T],
        rcounts: &[usize],
        rdispls: &[usize],
    ) -> Result<Outcome, Self::Error> {
        self.alltoallv_bytes(
            bytes(send)?,
            scounts,
            sdispls,
            bytes_mut(recv)?,
            rcounts,
            rdispls,
            elem::<T>(),
        )
    }
    /// Starts a broadcast inside `scope`.
    ///
    /// # Errors
    /// As [`Communicator::ibcast_bytes`].
    fn ibcast<'s, T: Pod>(
        &self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [T],
        root: impl Into<Rank>,
    ) -> Result<PendingOp<'s, Self::Error>, Self::Error> {
        self.ibcast_bytes(scope, bytes_mut(buf)?, root.into())
    }
    /// Starts a reduction to `root` inside `scope`.
    ///
    /// # Errors
    /// As [`Communicator::ireduce_bytes`].
    fn ireduce<'s, T: Pod>(
        &self,
        scope: &'s Scope<'s, '_>,
        send: &'s [T],
        recv: &'s mut [T],
        op: &Op<T>,
        root: impl Into<Rank>,
    ) -> Result<PendingOp<'s, Self::Error>, Self::Error> {
        self.ireduce_bytes(
            scope,
            bytes(send)?,
            bytes_mut(recv)?,
            &op.erase(),
            root.into(),
        )
    }
    /// Starts an allreduce inside `scope`.
    ///
    /// # Errors
    /// As [`Communicator::iallreduce_bytes`].
    fn iallreduce<'s, T: Pod>(
        &self,
        scope: &'s Scope<'s, '_>,
        send: &'s [T],
        recv: &'s mut [T],
        op: &Op<T>,
    ) -> Result<PendingOp<'s, Self::Error>, Self::Error> {
        self.iallreduce_bytes(scope, bytes(send)?, bytes_mut(recv)?, &op.erase())
    }
    /// Starts an allgather inside `scope`.
    ///
    /// # Errors
    /// As [`Communicator::iallgather_bytes`].
    fn iallgather<'s, T: Pod>(
        &self,
        scope: &'s Scope<'s, '_>,
        send: &'s [T],
        recv: &'s mut [T],
    ) -> Result<PendingOp<'s, Self::Error>, Self::Error> {
        self.iallgather_bytes(scope, bytes(send)?, bytes_mut(recv)?)
    }
    /// Starts an all-to-all inside `scope`.
    ///
    /// # Errors
    /// As [`Communicator::ialltoall_bytes`].
    fn ialltoall<'s, T: Pod>(
        &self,
        scope: &'s Scope<'s, '_>,
        send: &'s [T],
        recv: &'s mut [T],
    ) -> Result<PendingOp<'s, Self::Error>, Self::Error> {
        self.ialltoall_bytes(scope, bytes(send)?, bytes_mut(recv)?, elem::<T>())
    }
}

impl<C: Communicator + ?Sized> CommunicatorExt for C {}
