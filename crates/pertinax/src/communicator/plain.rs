//! The plain [`Comm`] as a [`Communicator`] (over its crate-private
//! methods), and boxed communicators as communicators.

use super::{BoxedComm, CommError, Communicator, Outcome, PendingOp};
use crate::backend::Now;
use crate::op::ErasedOp;
use crate::{Comm, Error, Rank, Scope, Source, Status, Tag, TagMatch};

/// Counts or displacements in `elem`-byte elements, as bytes.
fn in_bytes(v: &[usize], elem: usize) -> Result<Vec<usize>, Error> {
    v.iter()
        .map(|&x| {
            x.checked_mul(elem).ok_or_else(|| {
                Error::InvalidArgument(format!("{x} elements of {elem} bytes overflow a count"))
            })
        })
        .collect()
}

impl Comm {
    /// [`Communicator::send_bytes`] where the direct call was not taken (a
    /// backend without [`crate::backend::DirectP2p`] runs the same inline).
    #[inline(never)]
    fn send_general(&self, buf: &[u8], dest: Rank, tag: Tag) -> Result<Outcome, Error> {
        Comm::send(self, buf, dest, tag)?;
        Ok(Outcome::default())
    }

    /// [`Communicator::recv_bytes`] where the direct call was not taken.
    #[inline(never)]
    fn recv_general(
        &self,
        buf: &mut [u8],
        elem: usize,
        src: Source,
        tag: TagMatch,
    ) -> Result<Option<Status>, Error> {
        self.recv_elems(buf, elem, src, tag).map(Some)
    }
}

impl Communicator for Comm {
    type Error = Error;

    fn rank(&self) -> Rank {
        Comm::rank(self)
    }
    fn size(&self) -> usize {
        Comm::size(self)
    }
    fn failed_ranks(&self) -> Vec<Rank> {
        let Ok(failed) = self.get_failed() else {
            return Vec::new();
        };
        let ranks: Vec<Rank> = (0..failed.size()).map(|r| Rank(r as i32)).collect();
        let mut out: Vec<Rank> = failed
            .translate_ranks(&ranks, &self.group())
            .map(|v| v.into_iter().flatten().collect())
            .unwrap_or_default();
        out.sort();
        out
    }
    fn get_failed(&self) -> Result<crate::Group, Error> {
        Comm::get_failed(self)
    }
    fn is_revoked(&self) -> bool {
        Comm::is_revoked(self)
    }
    fn as_plain(&self) -> Option<&Comm> {
        Some(self)
    }
    fn revoke(&self) -> Result<(), Error> {
        Comm::revoke(self)
    }
    #[inline]
    fn send_bytes(&self, buf: &[u8], dest: Rank, tag: Tag) -> Result<Outcome, Error> {
        if self.inner.caps.direct_p2p {
            match self.send_now(buf, dest, tag) {
                Now::Done => return Ok(Outcome::default()),
                Now::Failed(e) => return Err(*e),
                Now::General => return self.send_general(buf, dest, tag),
            }
        }
        Comm::send(self, buf, dest, tag)?;
        Ok(Outcome::default())
    }
    #[inline]
    fn recv_bytes(
        &self,
        buf: &mut [u8],
        elem: usize,
        src: Source,
        tag: TagMatch,
    ) -> Result<Option<Status>, Error> {
        if self.inner.caps.direct_p2p {
            let mut st = Status {
                source: Rank(0),
                tag: Tag(0),
                len: 0,
            };
            return match self.recv_now(buf, elem, src, tag, &mut st) {
                Now::Done => Ok(Some(st)),
                Now::Failed(e) => Err(*e),
                Now::General => self.recv_general(buf, elem, src, tag),
            };
        }
        self.recv_elems(buf, elem, src, tag).map(Some)
    }
    fn probe(&self, src: Source, tag: TagMatch) -> Result<Option<Status>, Error> {
        Comm::probe(self, src, tag).map(Some)
    }
    fn iprobe(&self, src: Source, tag: TagMatch) -> Result<Option<Status>, Error> {
        Comm::iprobe(self, src, tag)
    }
    fn isend_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        buf: &'s [u8],
        dest: Rank,
        tag: Tag,
    ) -> Result<PendingOp<'s, Error>, Error> {
        Ok(PendingOp::from(Comm::isend(self, scope, buf, dest, tag)?))
    }
    fn irecv_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [u8],
        elem: usize,
        src: Source,
        tag: TagMatch,
    ) -> Result<PendingOp<'s, Error>, Error> {
        let r = self.irecv_elems(scope, buf, elem, src, tag)?;
        Ok(PendingOp::from(r))
    }
    fn ssend_bytes(&self, buf: &[u8], dest: Rank, tag: Tag) -> Result<Outcome, Error> {
        Comm::ssend(self, buf, dest, tag)?;
        Ok(Outcome::default())
    }
    fn issend_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        buf: &'s [u8],
        dest: Rank,
        tag: Tag,
    ) -> Result<PendingOp<'s, Error>, Error> {
        Ok(PendingOp::from(Comm::issend(self, scope, buf, dest, tag)?))
    }
    fn bsend_bytes(&self, buf: &[u8], dest: Rank, tag: Tag) -> Result<Outcome, Error> {
        Comm::bsend(self, buf, dest, tag)?;
        Ok(Outcome::default())
    }
    fn barrier(&self) -> Result<Outcome, Error> {
        Comm::barrier(self)?;
        Ok(Outcome::default())
    }
    fn bcast_bytes(&self, buf: &mut [u8], root: Rank) -> Result<Outcome, Error> {
        Comm::bcast(self, buf, root)?;
        Ok(Outcome::default())
    }
    fn reduce_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        op: &ErasedOp,
        root: Rank,
    ) -> Result<Outcome, Error> {
        self.reduce_with(send, recv, op, root)?;
        Ok(Outcome::default())
    }
    fn allreduce_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        op: &ErasedOp,
    ) -> Result<Outcome, Error> {
        self.allreduce_with(send, recv, op)?;
        Ok(Outcome::default())
    }
    fn scan_bytes(&self, send: &[u8], recv: &mut [u8], op: &ErasedOp) -> Result<Outcome, Error> {
        self.scan_with(send, recv, op, false)?;
        Ok(Outcome::default())
    }
    fn exscan_bytes(&self, send: &[u8], recv: &mut [u8], op: &ErasedOp) -> Result<Outcome, Error> {
        self.scan_with(send, recv, op, true)?;
        Ok(Outcome::default())
    }
    fn reduce_scatter_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        op: &ErasedOp,
    ) -> Result<Outcome, Error> {
        self.reduce_scatter_with(send, recv, counts, op)?;
        Ok(Outcome::default())
    }
    fn gatherv_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        displs: &[usize],
        elem: usize,
        root: Rank,
    ) -> Result<Outcome, Error> {
        let (c, d) = (in_bytes(counts, elem)?, in_bytes(displs, elem)?);
        Comm::gatherv(self, send, recv, &c, &d, root)?;
        Ok(Outcome::default())
    }
    fn scatterv_bytes(
        &self,
        send: &[u8],
        counts: &[usize],
        displs: &[usize],
        recv: &mut [u8],
        elem: usize,
        root: Rank,
    ) -> Result<Outcome, Error> {
        let (c, d) = (in_bytes(counts, elem)?, in_bytes(displs, elem)?);
        Comm::scatterv(self, send, &c, &d, recv, root)?;
        Ok(Outcome::default())
    }
    fn allgatherv_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        displs: &[usize],
        elem: usize,
    ) -> Result<Outcome, Error> {
        let (c, d) = (in_bytes(counts, elem)?, in_bytes(displs, elem)?);
        Comm::allgatherv(self, send, recv, &c, &d)?;
        Ok(Outcome::default())
    }
    fn alltoallv_bytes(
        &self,
        send: &[u8],
        scounts: &[usize],
        sdispls: &[usize],
        recv: &mut [u8],
        rcounts: &[usize],
        rdispls: &[usize],
        elem: usize,
    ) -> Result<Outcome, Error> {
        let (sc, sd) = (in_bytes(scounts, elem)?, in_bytes(sdispls, elem)?);
        let (rc, rd) = (in_bytes(rcounts, elem)?, in_bytes(rdispls, elem)?);
        Comm::alltoallv(self, send, &sc, &sd, recv, &rc, &rd)?;
        Ok(Outcome::default())
    }
    fn ibarrier<'s>(&self, scope: &'s Scope<'s, '_>) -> Result<PendingOp<'s, Error>, Error> {
        Ok(PendingOp::from(Comm::ibarrier(self, scope)?))
    }
    fn ibcast_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [u8],
        root: Rank,
    ) -> Result<PendingOp<'s, Error>, Error> {
        Ok(PendingOp::from(Comm::ibcast(self, scope, buf, root)?))
    }
    fn ireduce_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        send: &'s [u8],
        recv: &'s mut [u8],
        op: &ErasedOp,
        root: Rank,
    ) -> Result<PendingOp<'s, Error>, Error> {
        Ok(PendingOp::from(
            self.ireduce_with(scope, send, recv, op, root)?,
        ))
    }
    fn iallreduce_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        send: &'s [u8],
        recv: &'s mut [u8],
        op: &ErasedOp,
    ) -> Result<PendingOp<'s, Error>, Error> {
        Ok(PendingOp::from(
            self.iallreduce_with(scope, send, recv, op)?,
        ))
    }
    fn iallgather_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        send: &'s [u8],
        recv: &'s mut [u8],
    ) -> Result<PendingOp<'s, Error>, Error> {
        Ok(PendingOp::from(Comm::iallgather(self, scope, send, recv)?))
    }
    fn ialltoall_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        send: &'s [u8],
        recv: &'s mut [u8],
        elem: usize,
    ) -> Result<PendingOp<'s, Error>, Error> {
        Ok(PendingOp::from(
            self.ialltoall_elems(scope, send, recv, elem)?,
        ))
    }
    fn ack_failed(&self, n: usize) -> Result<usize, Error> {
        Comm::ack_failed(self, n)
    }
    fn agree(&self, flags: u32) -> Result<u32, Error> {
        Comm::agree(self, flags)
    }
    fn shrink_boxed(&self) -> Result<BoxedComm<Error>, Error> {
        Ok(Box::new(Comm::shrink(self)?))
    }
    fn shrink(&self) -> Result<Comm, Error> {
        Comm::shrink(self)
    }
    fn gather_bytes(&self, send: &[u8], recv: &mut [u8], root: Rank) -> Result<Outcome, Error> {
        Comm::gather(self, send, recv, root)?;
        Ok(Outcome::default())
    }
    fn scatter_bytes(&self, send: &[u8], recv: &mut [u8], root: Rank) -> Result<Outcome, Error> {
        Comm::scatter(self, send, recv, root)?;
        Ok(Outcome::default())
    }
    fn allgather_bytes(&self, send: &[u8], recv: &mut [u8]) -> Result<Outcome, Error> {
        Comm::allgather(self, send, recv)?;
        Ok(Outcome::default())
    }
    fn alltoall_bytes(&self, send: &[u8], recv: &mut [u8], elem: usize) -> Result<Outcome, Error> {
        Comm::alltoall(self, send, recv, elem)?;
        Ok(Outcome::default())
    }
    fn dup_boxed(&self) -> Result<BoxedComm<Error>, Error> {
        Ok(Box::new(Comm::dup(self)?))
    }
    fn split_boxed(&self, color: Option<u32>, key: i32) -> Result<Option<BoxedComm<Error>>, Error> {
        Ok(Comm::split(self, color, key)?.map(|c| Box::new(c) as BoxedComm<Error>))
    }
    fn dup(&self) -> Result<Comm, Error> {
        Comm::dup(self)
    }
    fn split(&self, color: Option<u32>, key: i32) -> Result<Option<Comm>, Error> {
        Comm::split(self, color, key)
    }
}

/// A boxed communicator is one too (so that decorators stack over trait
/// objects: a guard over a `Box<dyn Communicator<Error = E>>`).
impl<E: CommError> Communicator for Box<dyn Communicator<Error = E>> {
    type Error = E;

    fn rank(&self) -> Rank {
        (**self).rank()
    }
    fn size(&self) -> usize {
        (**self).size()
    }
    fn failed_ranks(&self) -> Vec<Rank> {
        (**self).failed_ranks()
    }
    fn get_failed(&self) -> Result<crate::Group, E> {
        (**self).get_failed()
    }
    fn is_revoked(&self) -> bool {
        (**self).is_revoked()
    }
    fn as_plain(&self) -> Option<&Comm> {
        (**self).as_plain()
    }
    fn revoke(&self) -> Result<(), E> {
        (**self).revoke()
    }
    fn send_bytes(&self, buf: &[u8], dest: Rank, tag: Tag) -> Result<Outcome, E> {
        (**self).send_bytes(buf, dest, tag)
    }
    fn recv_bytes(
        &self,
        buf: &mut [u8],
        elem: usize,
        src: Source,
        tag: TagMatch,
    ) -> Result<Option<Status>, E> {
        (**self).recv_bytes(buf, elem, src, tag)
    }
    fn probe(&self, src: Source, tag: TagMatch) -> Result<Option<Status>, E> {
        (**self).probe(src, tag)
    }
    fn iprobe(&self, src: Source, tag: TagMatch) -> Result<Option<Status>, E> {
        (**self).iprobe(src, tag)
    }
    fn isend_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        buf: &'s [u8],
        dest: Rank,
        tag: Tag,
    ) -> Result<PendingOp<'s, E>, E> {
        (**self).isend_bytes(scope, buf, dest, tag)
    }
    fn irecv_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [u8],
        elem: usize,
        src: Source,
        tag: TagMatch,
    ) -> Result<PendingOp<'s, E>, E> {
        (**self).irecv_bytes(scope, buf, elem, src, tag)
    }
    fn ssend_bytes(&self, buf: &[u8], dest: Rank, tag: Tag) -> Result<Outcome, E> {
        (**self).ssend_bytes(buf, dest, tag)
    }
    fn issend_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        buf: &'s [u8],
        dest: Rank,
        tag: Tag,
    ) -> Result<PendingOp<'s, E>, E> {
        (**self).issend_bytes(scope, buf, dest, tag)
    }
    fn bsend_bytes(&self, buf: &[u8], dest: Rank, tag: Tag) -> Result<Outcome, E> {
        (**self).bsend_bytes(buf, dest, tag)
    }
    fn allreduce_in_place_bytes(&self, buf: &mut [u8], op: &ErasedOp) -> Result<Outcome, E> {
        (**self).allreduce_in_place_bytes(buf, op)
    }
    fn reduce_in_place_bytes(
        &self,
        buf: &mut [u8],
        op: &ErasedOp,
        root: Rank,
    ) -> Result<Outcome, E> {
        (**self).reduce_in_place_bytes(buf, op, root)
    }
    fn allgather_in_place_bytes(&self, buf: &mut [u8]) -> Result<Outcome, E> {
        (**self).allgather_in_place_bytes(buf)
    }
    fn barrier(&self) -> Result<Outcome, E> {
        (**self).barrier()
    }
    fn bcast_bytes(&self, buf: &mut [u8], root: Rank) -> Result<Outcome, E> {
        (**self).bcast_bytes(buf, root)
    }
    fn sendrecv_bytes(
        &self,
        send: &[u8],
        dest: Rank,
        sendtag: Tag,
        recv: &mut [u8],
        elem: usize,
        src: Source,
        recvtag: TagMatch,
    ) -> Result<Option<Status>, E> {
        (**self).sendrecv_bytes(send, dest, sendtag, recv, elem, src, recvtag)
    }
    fn reduce_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        op: &ErasedOp,
        root: Rank,
    ) -> Result<Outcome, E> {
        (**self).reduce_bytes(send, recv, op, root)
    }
    fn allreduce_bytes(&self, send: &[u8], recv: &mut [u8], op: &ErasedOp) -> Result<Outcome, E> {
        (**self).allreduce_bytes(send, recv, op)
    }
    fn scan_bytes(&self, send: &[u8], recv: &mut [u8], op: &ErasedOp) -> Result<Outcome, E> {
        (**self).scan_bytes(send, recv, op)
    }
    fn exscan_bytes(&self, send: &[u8], recv: &mut [u8], op: &ErasedOp) -> Result<Outcome, E> {
        (**self).exscan_bytes(send, recv, op)
    }
    fn reduce_scatter_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        op: &ErasedOp,
    ) -> Result<Outcome, E> {
        (**self).reduce_scatter_bytes(send, recv, counts, op)
    }
    fn gatherv_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        displs: &[usize],
        elem: usize,
        root: Rank,
    ) -> Result<Outcome, E> {
        (**self).gatherv_bytes(send, recv, counts, displs, elem, root)
    }
    fn scatterv_bytes(
        &self,
        send: &[u8],
        counts: &[usize],
        displs: &[usize],
        recv: &mut [u8],
        elem: usize,
        root: Rank,
    ) -> Result<Outcome, E> {
        (**self).scatterv_bytes(send, counts, displs, recv, elem, root)
    }
    fn allgatherv_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        displs: &[usize],
        elem: usize,
    ) -> Result<Outcome, E> {
        (**self).allgatherv_bytes(send, recv, counts, displs, elem)
    }
    fn alltoallv_bytes(
        &self,
        send: &[u8],
        scounts: &[usize],
        sdispls: &[usize],
        recv: &mut [u8],
        rcounts: &[usize],
        rdispls: &[usize],
        elem: usize,
    ) -> Result<Outcome, E> {
        (**self).alltoallv_bytes(send, scounts, sdispls, recv, rcounts, rdispls, elem)
    }
    fn ibarrier<'s>(&self, scope: &'s Scope<'s, '_>) -> Result<PendingOp<'s, E>, E> {
        (**self).ibarrier(scope)
    }
    fn ibcast_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [u8],
        root: Rank,
    ) -> Result<PendingOp<'s, E>, E> {
        (**self).ibcast_bytes(scope, buf, root)
    }
    fn ireduce_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        send: &'s [u8],
        recv: &'s mut [u8],
        op: &ErasedOp,
        root: Rank,
    ) -> Result<PendingOp<'s, E>, E> {
        (**self).ireduce_bytes(scope, send, recv, op, root)
    }
    fn iallreduce_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        send: &'s [u8],
        recv: &'s mut [u8],
        op: &ErasedOp,
    ) -> Result<PendingOp<'s, E>, E> {
        (**self).iallreduce_bytes(scope, send, recv, op)
    }
    fn iallgather_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        send: &'s [u8],
        recv: &'s mut [u8],
    ) -> Result<PendingOp<'s, E>, E> {
        (**self).iallgather_bytes(scope, send, recv)
    }
    fn ialltoall_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        send: &'s [u8],
        recv: &'s mut [u8],
        elem: usize,
    ) -> Result<PendingOp<'s, E>, E> {
        (**self).ialltoall_bytes(scope, send, recv, elem)
    }
    fn ack_failed(&self, n: usize) -> Result<usize, E> {
        (**self).ack_failed(n)
    }
    fn agree(&self, flags: u32) -> Result<u32, E> {
        (**self).agree(flags)
    }
    fn shrink_boxed(&self) -> Result<BoxedComm<E>, E> {
        (**self).shrink_boxed()
    }
    fn shrink(&self) -> Result<Self, E> {
        (**self).shrink_boxed()
    }
    fn gather_bytes(&self, send: &[u8], recv: &mut [u8], root: Rank) -> Result<Outcome, E> {
        (**self).gather_bytes(send, recv, root)
    }
    fn scatter_bytes(&self, send: &[u8], recv: &mut [u8], root: Rank) -> Result<Outcome, E> {
        (**self).scatter_bytes(send, recv, root)
    }
    fn allgather_bytes(&self, send: &[u8], recv: &mut [u8]) -> Result<Outcome, E> {
        (**self).allgather_bytes(send, recv)
    }
    fn alltoall_bytes(&self, send: &[u8], recv: &mut [u8], elem: usize) -> Result<Outcome, E> {
        (**self).alltoall_bytes(send, recv, elem)
    }
    fn dup_boxed(&self) -> Result<BoxedComm<E>, E> {
        (**self).dup_boxed()
    }
    fn split_boxed(&self, color: Option<u32>, key: i32) -> Result<Option<BoxedComm<E>>, E> {
        (**self).split_boxed(color, key)
    }
    fn dup(&self) -> Result<Self, E> {
        (**self).dup_boxed()
    }
    fn split(&self, color: Option<u32>, key: i32) -> Result<Option<Self>, E> {
        (**self).split_boxed(color, key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::communicator::CommunicatorExt;
    use crate::Op;

    #[test]
    fn trait_objects_communicate() {
        let u = match crate::init() {
            Ok(u) => u,
            Err(Error::AlreadyInitialized) => return,
            Err(e) => panic!("{e}"),
        };
        let world = u.world();
        let c: &dyn Communicator<Error = Error> = &world;
        assert_eq!((c.rank(), c.size()), (Rank(0), 1));
        // Typed methods on the trait object, through the extension.
        c.send(&[1u32, 2, 3], 0, 5).unwrap();
        let mut got = [0u32; 3];
        let st = c.recv(&mut got, 0, 5).unwrap().unwrap();
        assert_eq!((got, st.len), ([1, 2, 3], 12));
        // A whole-element check: 12 bytes are not whole 8-byte elements.
        c.send(&[1u32, 2, 3], 0, 6).unwrap();
        let mut wide = [0u64; 2];
        assert!(matches!(
            c.recv(&mut wide, 0, 6),
            Err(Error::LengthNotMultiple { len: 12, elem: 8 })
        ));
        // Consumed, as in MPI.
        assert!(c.iprobe(Rank(0).into(), Tag(6).into()).unwrap().is_none());
        let mut sum = [0i64];
        c.allreduce(&[7i64], &mut sum, &Op::sum()).unwrap();
        assert_eq!(sum, [7]);
        let mut all = [0u16; 1];
        assert!(c.allgather(&[9u16], &mut all).unwrap().is_complete());
        assert_eq!(all, [9]);
        // Boxed, from dup, and stacked once more.
        let d: Box<dyn Communicator<Error = Error>> = c.dup_boxed().unwrap();
        let dd = Communicator::dup(&d).unwrap();
        dd.barrier().unwrap();
        let mut b = [3u8; 2];
        dd.bcast(&mut b, 0).unwrap();
        // Non-blocking through the trait, inside a core scope.
        let data = [4u64, 5];
        let mut into = [0u64; 2];
        crate::scope(|s| {
            let r = d.irecv(s, &mut into, 0, 1).unwrap();
            let q = d.isend(s, &data, 0, 1).unwrap();
            assert!(crate::wait_all(&mut [r, q]).is_ok());
        });
        assert_eq!(into, data);
        assert!(!d.is_revoked());
        assert!(d.failed_ranks().is_empty());
    }
}
