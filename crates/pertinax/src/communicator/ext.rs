//! [`CommunicatorExt`]: the typed methods of every [`Communicator`], over
//! its object-safe byte methods.

use bytemuck::Pod;

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::{bytes, bytes_mut, Communicator, Outcome, PendingOp};
use crate::p2p::encode;
use crate::{Error, Op, Rank, Scope, Source, Status, Tag, TagMatch};

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
    /// [`CommunicatorExt::recv_vec`]); `InvalidRank`,
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
    /// Sends `buf` in synchronous mode (`MPI_Ssend`): returns only once a
    /// receive at `dest` has matched the message, whatever its size (a
    /// standard [`CommunicatorExt::send`] of a small message returns as
    /// soon as it is copied out). On the native backend the message goes
    /// by rendezvous; on MPI it is an `MPI_Issend`.
    ///
    /// # Errors
    /// As [`CommunicatorExt::send`]: `ProcFailed` when the destination
    /// fails before it matched the message (the call does not wait for it
    /// forever); `Unsupported` on a communicator that does not offer it.
    fn ssend<T: Pod>(
        &self,
        buf: &[T],
        dest: impl Into<Rank>,
        tag: impl Into<Tag>,
    ) -> Result<Outcome, Self::Error> {
        self.ssend_bytes(bytes(buf)?, dest.into(), tag.into())
    }
    /// Starts a synchronous send inside `scope` (`MPI_Issend`): as
    /// [`CommunicatorExt::isend`], but the operation completes only once a
    /// receive at `dest` has matched the message.
    ///
    /// # Errors
    /// As [`CommunicatorExt::isend`].
    fn issend<'s, T: Pod>(
        &self,
        scope: &'s Scope<'s, '_>,
        buf: &'s [T],
        dest: impl Into<Rank>,
        tag: impl Into<Tag>,
    ) -> Result<PendingOp<'s, Self::Error>, Self::Error> {
        self.issend_bytes(scope, bytes(buf)?, dest.into(), tag.into())
    }
    /// Sends `buf` in buffered mode (`MPI_Bsend`): returns once the data
    /// is copied out, whatever its size, without waiting for the receiver
    /// to post a receive (on the native backend, a message that fits one
    /// ring record goes out as one record whatever the eager limit; a
    /// longer one by rendezvous from a copy the runtime owns until the
    /// receiver has taken it; on MPI, a copy in a send MPI completes in
    /// the background), so no buffer need be attached. Use it where a send
    /// must not wait for its receiver: a message the receiver reads only
    /// after a collective step the sender takes part in too, or one of
    /// several redundant copies of which the receiver reads one. Finalize
    /// completes a buffered send still moving: it waits until the receiver
    /// took it or ended, so a message past one ring record (on the native
    /// backend, half a ring: 128 KiB up to 8 ranks, 8 KiB past 64) must be
    /// received; one up to that is held by its receiver once sent.
    ///
    /// # Errors
    /// As [`CommunicatorExt::send`]; a failure of the receiver after the
    /// call is not reported (the copy is dropped).
    ///
    /// # Example
    /// ```
    /// use pertinax::prelude::*;
    ///
    /// let u = pertinax::init()?;
    /// let world = u.world();
    /// // 1 MiB to itself: a blocking `send` would wait for the receive
    /// // below forever.
    /// let big = vec![7u8; 1 << 20];
    /// world.bsend(&big, 0, 3)?;
    /// let (got, _) = world.recv_vec::<u8>(0, 3)?.expect("a plain receive is never skipped");
    /// assert_eq!(got, big);
    /// # Ok::<(), pertinax::Error>(())
    /// ```
    fn bsend<T: Pod>(
        &self,
        buf: &[T],
        dest: impl Into<Rank>,
        tag: impl Into<Tag>,
    ) -> Result<Outcome, Self::Error> {
        self.bsend_bytes(bytes(buf)?, dest.into(), tag.into())
    }
    /// Receives a message into a new vector of exactly its length: a
    /// probe, then the receive of the message it found. `None` when the
    /// receive was skipped (a resilient communicator, its source failed).
    ///
    /// # Errors
    /// As [`CommunicatorExt::recv`] (never `Truncated`);
    /// `LengthNotMultiple` when the message is not a whole number of `T`
    /// (it is consumed).
    fn recv_vec<T: Pod>(
        &self,
        src: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<Option<(Vec<T>, Status)>, Self::Error> {
        let Some(st) = self.probe(src.into(), tag.into())? else {
            return Ok(None);
        };
        let (from, tag) = (Source::Rank(st.source), TagMatch::Tag(st.tag));
        let elem = elem::<T>().max(1);
        if st.len % elem != 0 {
            // Consumed, as every refused receive consumes its message.
            let mut sink = vec![0u8; st.len];
            self.recv_bytes(&mut sink, 1, from, tag)?;
            return Err(Error::LengthNotMultiple { len: st.len, elem }.into());
        }
        let mut v = vec![T::zeroed(); st.len / elem];
        Ok(self
            .recv_bytes(bytes_mut(&mut v)?, elem, from, tag)?
            .map(|st| (v, st)))
    }
    /// Sends any serializable value, encoded with postcard (compact, not
    /// self-describing: a type whose `Deserialize` needs
    /// `deserialize_any`, such as `#[serde(untagged)]`, `#[serde(flatten)]`
    /// or an internally tagged enum, fails to decode at the receiver).
    /// Sender and receiver are ranks of one job, built from the same
    /// pertinax: the encoding is not a stable format across versions.
    ///
    /// # Errors
    /// `Serialization` if encoding fails; otherwise as
    /// [`CommunicatorExt::send`].
    fn send_value<V: Serialize + ?Sized>(
        &self,
        value: &V,
        dest: impl Into<Rank>,
        tag: impl Into<Tag>,
    ) -> Result<Outcome, Self::Error> {
        self.send_bytes(&encode(value)?, dest.into(), tag.into())
    }
    /// [`CommunicatorExt::send_value`] in buffered mode
    /// ([`CommunicatorExt::bsend`]).
    ///
    /// # Errors
    /// As [`CommunicatorExt::send_value`].
    fn bsend_value<V: Serialize + ?Sized>(
        &self,
        value: &V,
        dest: impl Into<Rank>,
        tag: impl Into<Tag>,
    ) -> Result<Outcome, Self::Error> {
        self.bsend_bytes(&encode(value)?, dest.into(), tag.into())
    }
    /// Receives a value sent with [`CommunicatorExt::send_value`]; `None`
    /// when the receive was skipped.
    ///
    /// # Errors
    /// `Serialization` if the message does not decode as `V` (it is
    /// consumed); otherwise as [`CommunicatorExt::recv_vec`].
    fn recv_value<V: DeserializeOwned>(
        &self,
        src: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<Option<(V, Status)>, Self::Error> {
        let Some((raw, st)) = self.recv_vec::<u8>(src, tag)? else {
            return Ok(None);
        };
        let v = postcard::from_bytes(&raw).map_err(|e| Error::Serialization(e.to_string()))?;
        Ok(Some((v, st)))
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
    /// [`CommunicatorExt::allreduce`] in place (`MPI_IN_PLACE`): `buf` is
    /// the contribution and the result.
    ///
    /// # Errors
    /// As [`CommunicatorExt::allreduce`].
    fn allreduce_in_place<T: Pod>(
        &self,
        buf: &mut [T],
        op: &Op<T>,
    ) -> Result<Outcome, Self::Error> {
        if let Some(c) = self.as_plain() {
            return plain(c.allreduce_in_place(buf, op));
        }
        self.allreduce_in_place_bytes(bytes_mut(buf)?, &op.erase())
    }
    /// [`CommunicatorExt::reduce`] in place: `buf` is the contribution,
    /// and at the root the result.
    ///
    /// # Errors
    /// As [`CommunicatorExt::reduce`].
    fn reduce_in_place<T: Pod>(
        &self,
        buf: &mut [T],
        op: &Op<T>,
        root: impl Into<Rank>,
    ) -> Result<Outcome, Self::Error> {
        let root = root.into();
        if let Some(c) = self.as_plain() {
            return plain(c.reduce_in_place(buf, op, root));
        }
        self.reduce_in_place_bytes(bytes_mut(buf)?, &op.erase(), root)
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
    /// [`CommunicatorExt::allgather`] in place: this rank's block is
    /// already at its position in `buf`.
    ///
    /// # Errors
    /// `InvalidArgument` if `buf` is not `size` equal blocks; otherwise as
    /// [`CommunicatorExt::allgather`].
    fn allgather_in_place<T: Pod>(&self, buf: &mut [T]) -> Result<Outcome, Self::Error> {
        if let Some(c) = self.as_plain() {
            return plain(c.allgather_in_place(buf));
        }
        self.allgather_in_place_bytes(bytes_mut(buf)?)
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
