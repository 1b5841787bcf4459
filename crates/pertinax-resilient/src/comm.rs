//! [`World`] as a [`Communicator`]: every operation forwarded to the plain
//! or the resilient communicator it holds.

use pertinax::{
    pending_into, BoxedComm, Communicator, ErasedOp, PendingOp, Rank, Scope, Source, Status, Tag,
    TagMatch,
};

use crate::{Error, Outcome, World};

/// Forwards an operation to the communicator `World` holds, with its
/// errors as this crate's.
macro_rules! both {
    ($self:ident, $c:ident => $e:expr) => {
        match $self {
            World::Plain($c) => ($e).map_err(Error::from),
            World::Resilient(b) => {
                let $c = &**b;
                $e
            }
            World::Hierarchical(b) => {
                let $c = &**b;
                $e
            }
        }
    };
}

/// Forwards a non-blocking operation, with the plain world's requests
/// errors as this crate's.
macro_rules! nb {
    ($self:ident, $c:ident => $e:expr) => {
        match $self {
            World::Plain($c) => Ok(pending_into($e?)),
            World::Resilient(b) => {
                let $c = &**b;
                $e
            }
            World::Hierarchical(b) => {
                let $c = &**b;
                $e
            }
        }
    };
}

impl Communicator for World {
    type Error = Error;

    fn rank(&self) -> Rank {
        match self {
            World::Plain(c) => Communicator::rank(c),
            World::Resilient(c) => c.rank(),
            World::Hierarchical(c) => c.rank(),
        }
    }
    fn size(&self) -> usize {
        match self {
            World::Plain(c) => Communicator::size(c),
            World::Resilient(c) => c.size(),
            World::Hierarchical(c) => c.size(),
        }
    }
    fn failed_ranks(&self) -> Vec<Rank> {
        match self {
            World::Plain(c) => c.failed_ranks(),
            World::Resilient(c) => c.failed_ranks(),
            World::Hierarchical(c) => c.failed_ranks(),
        }
    }
    fn get_failed(&self) -> Result<pertinax::Group, Error> {
        both!(self, c => c.get_failed())
    }
    fn is_revoked(&self) -> bool {
        match self {
            World::Plain(c) => Communicator::is_revoked(c),
            World::Resilient(c) => c.is_revoked(),
            World::Hierarchical(c) => c.is_revoked(),
        }
    }
    fn revoke(&self) -> Result<(), Error> {
        both!(self, c => Communicator::revoke(c))
    }
    fn send_bytes(&self, buf: &[u8], dest: Rank, tag: Tag) -> Result<Outcome, Error> {
        both!(self, c => c.send_bytes(buf, dest, tag))
    }
    fn recv_bytes(
        &self,
        buf: &mut [u8],
        elem: usize,
        src: Source,
        tag: TagMatch,
    ) -> Result<Option<Status>, Error> {
        both!(self, c => c.recv_bytes(buf, elem, src, tag))
    }
    fn ssend_bytes(&self, buf: &[u8], dest: Rank, tag: Tag) -> Result<Outcome, Error> {
        both!(self, c => c.ssend_bytes(buf, dest, tag))
    }
    fn issend_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        buf: &'s [u8],
        dest: Rank,
        tag: Tag,
    ) -> Result<PendingOp<'s, Error>, Error> {
        nb!(self, c => c.issend_bytes(scope, buf, dest, tag))
    }
    fn bsend_bytes(&self, buf: &[u8], dest: Rank, tag: Tag) -> Result<Outcome, Error> {
        both!(self, c => c.bsend_bytes(buf, dest, tag))
    }
    fn probe(&self, src: Source, tag: TagMatch) -> Result<Option<Status>, Error> {
        both!(self, c => Communicator::probe(c, src, tag))
    }
    fn iprobe(&self, src: Source, tag: TagMatch) -> Result<Option<Status>, Error> {
        both!(self, c => Communicator::iprobe(c, src, tag))
    }
    fn isend_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        buf: &'s [u8],
        dest: Rank,
        tag: Tag,
    ) -> Result<PendingOp<'s, Error>, Error> {
        match self {
            World::Plain(c) => Ok(pending_into(c.isend_bytes(scope, buf, dest, tag)?)),
            World::Resilient(c) => c.isend_bytes(scope, buf, dest, tag),
            World::Hierarchical(c) => c.isend_bytes(scope, buf, dest, tag),
        }
    }
    fn irecv_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [u8],
        elem: usize,
        src: Source,
        tag: TagMatch,
    ) -> Result<PendingOp<'s, Error>, Error> {
        match self {
            World::Plain(c) => Ok(pending_into(c.irecv_bytes(scope, buf, elem, src, tag)?)),
            World::Resilient(c) => c.irecv_bytes(scope, buf, elem, src, tag),
            World::Hierarchical(c) => c.irecv_bytes(scope, buf, elem, src, tag),
        }
    }
    fn barrier(&self) -> Result<Outcome, Error> {
        both!(self, c => Communicator::barrier(c))
    }
    fn bcast_bytes(&self, buf: &mut [u8], root: Rank) -> Result<Outcome, Error> {
        both!(self, c => c.bcast_bytes(buf, root))
    }
    fn reduce_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        op: &ErasedOp,
        root: Rank,
    ) -> Result<Outcome, Error> {
        both!(self, c => c.reduce_bytes(send, recv, op, root))
    }
    fn allreduce_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        op: &ErasedOp,
    ) -> Result<Outcome, Error> {
        both!(self, c => c.allreduce_bytes(send, recv, op))
    }
    fn gather_bytes(&self, send: &[u8], recv: &mut [u8], root: Rank) -> Result<Outcome, Error> {
        both!(self, c => c.gather_bytes(send, recv, root))
    }
    fn scatter_bytes(&self, send: &[u8], recv: &mut [u8], root: Rank) -> Result<Outcome, Error> {
        both!(self, c => c.scatter_bytes(send, recv, root))
    }
    fn allgather_bytes(&self, send: &[u8], recv: &mut [u8]) -> Result<Outcome, Error> {
        both!(self, c => c.allgather_bytes(send, recv))
    }
    fn alltoall_bytes(&self, send: &[u8], recv: &mut [u8], elem: usize) -> Result<Outcome, Error> {
        both!(self, c => c.alltoall_bytes(send, recv, elem))
    }
    fn scan_bytes(&self, send: &[u8], recv: &mut [u8], op: &ErasedOp) -> Result<Outcome, Error> {
        both!(self, c => c.scan_bytes(send, recv, op))
    }
    fn exscan_bytes(&self, send: &[u8], recv: &mut [u8], op: &ErasedOp) -> Result<Outcome, Error> {
        both!(self, c => c.exscan_bytes(send, recv, op))
    }
    fn reduce_scatter_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        op: &ErasedOp,
    ) -> Result<Outcome, Error> {
        both!(self, c => c.reduce_scatter_bytes(send, recv, counts, op))
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
        both!(self, c => c.gatherv_bytes(send, recv, counts, displs, elem, root))
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
        both!(self, c => c.scatterv_bytes(send, counts, displs, recv, elem, root))
    }
    fn allgatherv_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        displs: &[usize],
        elem: usize,
    ) -> Result<Outcome, Error> {
        both!(self, c => c.allgatherv_bytes(send, recv, counts, displs, elem))
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
        both!(self, c => {
            c.alltoallv_bytes(send, scounts, sdispls, recv, rcounts, rdispls, elem)
        })
    }
    fn ibarrier<'s>(&self, scope: &'s Scope<'s, '_>) -> Result<PendingOp<'s, Error>, Error> {
        nb!(self, c => Communicator::ibarrier(c, scope))
    }
    fn ibcast_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [u8],
        root: Rank,
    ) -> Result<PendingOp<'s, Error>, Error> {
        nb!(self, c => c.ibcast_bytes(scope, buf, root))
    }
    fn ireduce_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        send: &'s [u8],
        recv: &'s mut [u8],
        op: &ErasedOp,
        root: Rank,
    ) -> Result<PendingOp<'s, Error>, Error> {
        nb!(self, c => c.ireduce_bytes(scope, send, recv, op, root))
    }
    fn iallreduce_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        send: &'s [u8],
        recv: &'s mut [u8],
        op: &ErasedOp,
    ) -> Result<PendingOp<'s, Error>, Error> {
        nb!(self, c => c.iallreduce_bytes(scope, send, recv, op))
    }
    fn iallgather_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        send: &'s [u8],
        recv: &'s mut [u8],
    ) -> Result<PendingOp<'s, Error>, Error> {
        nb!(self, c => c.iallgather_bytes(scope, send, recv))
    }
    fn ialltoall_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        send: &'s [u8],
        recv: &'s mut [u8],
        elem: usize,
    ) -> Result<PendingOp<'s, Error>, Error> {
        nb!(self, c => c.ialltoall_bytes(scope, send, recv, elem))
    }
    fn ack_failed(&self, n: usize) -> Result<usize, Error> {
        both!(self, c => Communicator::ack_failed(c, n))
    }
    fn agree(&self, flags: u32) -> Result<u32, Error> {
        both!(self, c => Communicator::agree(c, flags))
    }
    fn shrink_boxed(&self) -> Result<BoxedComm<Error>, Error> {
        Ok(Box::new(Communicator::shrink(self)?))
    }
    fn shrink(&self) -> Result<Self, Error> {
        Ok(match self {
            World::Plain(c) => World::Plain(Communicator::shrink(c)?),
            World::Resilient(c) => World::Resilient(Box::new(Communicator::shrink(&**c)?)),
            World::Hierarchical(c) => World::Hierarchical(Box::new(Communicator::shrink(&**c)?)),
        })
    }
    fn dup_boxed(&self) -> Result<BoxedComm<Error>, Error> {
        Ok(Box::new(Communicator::dup(self)?))
    }
    fn split_boxed(&self, color: Option<u32>, key: i32) -> Result<Option<BoxedComm<Error>>, Error> {
        Ok(Communicator::split(self, color, key)?.map(|w| Box::new(w) as BoxedComm<Error>))
    }
    fn dup(&self) -> Result<Self, Error> {
        Ok(match self {
            World::Plain(c) => World::Plain(Communicator::dup(c)?),
            World::Resilient(c) => World::Resilient(Box::new(Communicator::dup(&**c)?)),
            World::Hierarchical(c) => World::Hierarchical(Box::new(Communicator::dup(&**c)?)),
        })
    }
    fn split(&self, color: Option<u32>, key: i32) -> Result<Option<Self>, Error> {
        Ok(match self {
            World::Plain(c) => Communicator::split(c, color, key)?.map(World::Plain),
            World::Resilient(c) => {
                Communicator::split(&**c, color, key)?.map(|r| World::Resilient(Box::new(r)))
            }
            World::Hierarchical(c) => {
                Communicator::split(&**c, color, key)?.map(|r| World::Hierarchical(Box::new(r)))
            }
        })
    }
}
