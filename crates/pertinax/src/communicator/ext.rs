//! [`CommunicatorExt`]: the typed methods of every [`Communicator`], over
//! its object-safe byte methods.

use bytemuck::Pod;

use super::{bytes, bytes_mut, Communicator, Outcome, PendingOp};
use crate::{Op, Rank, Scope, Source, Status, Tag, TagMatch};

/// Element counts as bytes of `T`.
fn elem<T>() -> usize {
    std::mem::size_of::<T>()
}

/// The typed methods of every [`Communicator`] (implemented for all of
/// them, trait objects included). Counts and displacements are in
/// elements, as in MPI.
pub trait CommunicatorExt: Communicator {
    /// Sends `buf` to `dest` with `tag`.
    ///
    /// # Errors
    /// As [`Communicator::send_bytes`].
    fn send<T: Pod>(
        &self,
        buf: &[T],
        dest: impl Into<Rank>,
        tag: impl Into<Tag>,
    ) -> Result<Outcome, Self::Error> {
        self.send_bytes(bytes(buf)?, dest.into(), tag.into())
    }
    /// Receives into `buf` from `src` (a rank, or any).
    ///
    /// # Errors
    /// As [`Communicator::recv_bytes`].
    fn recv<T: Pod>(
        &self,
        buf: &mut [T],
        src: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<Option<Status>, Self::Error> {
        self.recv_bytes(bytes_mut(buf)?, elem::<T>(), src.into(), tag.into())
    }
    /// Sends `sbuf` to `dest` and receives into `rbuf` from `src` at once.
    ///
    /// # Errors
    /// As [`Communicator::sendrecv_bytes`].
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
    /// Broadcasts `buf` from `root`.
    ///
    /// # Errors
    /// As [`Communicator::bcast_bytes`].
    fn bcast<T: Pod>(&self, buf: &mut [T], root: impl Into<Rank>) -> Result<Outcome, Self::Error> {
        self.bcast_bytes(bytes_mut(buf)?, root.into())
    }
    /// Combines every rank's `send` with `op` into `recv` at `root`.
    ///
    /// # Errors
    /// As [`Communicator::reduce_bytes`].
    fn reduce<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: &Op<T>,
        root: impl Into<Rank>,
    ) -> Result<Outcome, Self::Error> {
        self.reduce_bytes(bytes(send)?, bytes_mut(recv)?, &op.erase(), root.into())
    }
    /// Combines every rank's `send` with `op` into every rank's `recv`.
    ///
    /// # Errors
    /// As [`Communicator::allreduce_bytes`].
    fn allreduce<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: &Op<T>,
    ) -> Result<Outcome, Self::Error> {
        self.allreduce_bytes(bytes(send)?, bytes_mut(recv)?, &op.erase())
    }
    /// Inclusive prefix reduction.
    ///
    /// # Errors
    /// As [`Communicator::scan_bytes`].
    fn scan<T: Pod>(&self, send: &[T], recv: &mut [T], op: &Op<T>) -> Result<Outcome, Self::Error> {
        self.scan_bytes(bytes(send)?, bytes_mut(recv)?, &op.erase())
    }
    /// Exclusive prefix reduction.
    ///
    /// # Errors
    /// As [`Communicator::exscan_bytes`].
    fn exscan<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: &Op<T>,
    ) -> Result<Outcome, Self::Error> {
        self.exscan_bytes(bytes(send)?, bytes_mut(recv)?, &op.erase())
    }
    /// Reduces `send` and scatters the result: rank `i` gets `counts[i]`
    /// elements.
    ///
    /// # Errors
    /// As [`Communicator::reduce_scatter_bytes`].
    fn reduce_scatter<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
        op: &Op<T>,
    ) -> Result<Outcome, Self::Error> {
        self.reduce_scatter_bytes(bytes(send)?, bytes_mut(recv)?, counts, &op.erase())
    }
    /// [`CommunicatorExt::reduce_scatter`] with `recv.len()` elements for
    /// every rank.
    ///
    /// # Errors
    /// As [`Communicator::reduce_scatter_bytes`].
    fn reduce_scatter_block<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: &Op<T>,
    ) -> Result<Outcome, Self::Error> {
        let counts = vec![recv.len(); self.size()];
        self.reduce_scatter(send, recv, &counts, op)
    }
    /// Collects every rank's `send` into `recv` at `root`.
    ///
    /// # Errors
    /// As [`Communicator::gather_bytes`].
    fn gather<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        root: impl Into<Rank>,
    ) -> Result<Outcome, Self::Error> {
        self.gather_bytes(bytes(send)?, bytes_mut(recv)?, root.into())
    }
    /// Collects `counts[i]` elements from rank `i` into `recv` at element
    /// `displs[i]`, at `root`.
    ///
    /// # Errors
    /// As [`Communicator::gatherv_bytes`].
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
    /// Sends block `i` of `send` at `root` to rank `i`.
    ///
    /// # Errors
    /// As [`Communicator::scatter_bytes`].
    fn scatter<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        root: impl Into<Rank>,
    ) -> Result<Outcome, Self::Error> {
        self.scatter_bytes(bytes(send)?, bytes_mut(recv)?, root.into())
    }
    /// Sends `counts[i]` elements from element `displs[i]` of `send` at
    /// `root` to rank `i`.
    ///
    /// # Errors
    /// As [`Communicator::scatterv_bytes`].
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
    /// Collects every rank's `send` into every rank's `recv`.
    ///
    /// # Errors
    /// As [`Communicator::allgather_bytes`].
    fn allgather<T: Pod>(&self, send: &[T], recv: &mut [T]) -> Result<Outcome, Self::Error> {
        self.allgather_bytes(bytes(send)?, bytes_mut(recv)?)
    }
    /// Collects `counts[i]` elements from rank `i` into every rank's
    /// `recv` at element `displs[i]`.
    ///
    /// # Errors
    /// As [`Communicator::allgatherv_bytes`].
    fn allgatherv<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
        displs: &[usize],
    ) -> Result<Outcome, Self::Error> {
        self.allgatherv_bytes(bytes(send)?, bytes_mut(recv)?, counts, displs, elem::<T>())
    }
    /// Block `j` of `send` goes to rank `j`.
    ///
    /// # Errors
    /// As [`Communicator::alltoall_bytes`].
    fn alltoall<T: Pod>(&self, send: &[T], recv: &mut [T]) -> Result<Outcome, Self::Error> {
        self.alltoall_bytes(bytes(send)?, bytes_mut(recv)?)
    }
    /// [`CommunicatorExt::alltoall`] with per-rank counts and
    /// displacements.
    ///
    /// # Errors
    /// As [`Communicator::alltoallv_bytes`].
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
        self.ialltoall_bytes(scope, bytes(send)?, bytes_mut(recv)?)
    }
}

impl<C: Communicator + ?Sized> CommunicatorExt for C {}
