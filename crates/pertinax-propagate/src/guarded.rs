//! A guard is a [`Communicator`]: every operation runs through
//! [`Guarded::run`] on the communicator it guards, so a guard stacks over
//! any other communicator (a resilient one) and under any code written
//! against the trait.

use std::rc::Rc;

use pertinax::{
    BoxedComm, Communicator, ErasedOp, Outcome, PendingOp, Rank, Scope, Source, Status, Tag,
    TagMatch,
};

use crate::{GuardError, Guarded};

impl<C: Communicator + 'static> Communicator for Guarded<C> {
    type Error = GuardError<C::Error>;

    fn rank(&self) -> Rank {
        self.comm().rank()
    }
    fn size(&self) -> usize {
        self.comm().size()
    }
    fn failed_ranks(&self) -> Vec<Rank> {
        self.comm().failed_ranks()
    }
    fn get_failed(&self) -> Result<pertinax::Group, Self::Error> {
        self.comm().get_failed().map_err(GuardError::Other)
    }
    fn is_revoked(&self) -> bool {
        self.comm().is_revoked()
    }
    /// Revokes the guarded communicator: the others' guarded operations
    /// then resolve (as for a signal, without a report from this rank).
    fn revoke(&self) -> Result<(), Self::Error> {
        self.comm().revoke().map_err(GuardError::Other)
    }
    fn send_bytes(&self, buf: &[u8], dest: Rank, tag: Tag) -> Result<Outcome, Self::Error> {
        self.run(|c| c.send_bytes(buf, dest, tag))
    }
    fn recv_bytes(
        &self,
        buf: &mut [u8],
        elem: usize,
        src: Source,
        tag: TagMatch,
    ) -> Result<Option<Status>, Self::Error> {
        self.run(|c| c.recv_bytes(buf, elem, src, tag))
    }
    fn probe(&self, src: Source, tag: TagMatch) -> Result<Option<Status>, Self::Error> {
        self.run(|c| c.probe(src, tag))
    }
    fn iprobe(&self, src: Source, tag: TagMatch) -> Result<Option<Status>, Self::Error> {
        self.run(|c| c.iprobe(src, tag))
    }
    fn isend_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        buf: &'s [u8],
        dest: Rank,
        tag: Tag,
    ) -> Result<PendingOp<'s, Self::Error>, Self::Error> {
        let op = self.run(|c| c.isend_bytes(scope, buf, dest, tag))?;
        Ok(self.pending(op))
    }
    fn irecv_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [u8],
        elem: usize,
        src: Source,
        tag: TagMatch,
    ) -> Result<PendingOp<'s, Self::Error>, Self::Error> {
        let op = self.run(|c| c.irecv_bytes(scope, buf, elem, src, tag))?;
        Ok(self.pending(op))
    }
    fn ssend_bytes(&self, buf: &[u8], dest: Rank, tag: Tag) -> Result<Outcome, Self::Error> {
        self.run(|c| c.ssend_bytes(buf, dest, tag))
    }
    fn issend_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        buf: &'s [u8],
        dest: Rank,
        tag: Tag,
    ) -> Result<PendingOp<'s, Self::Error>, Self::Error> {
        let op = self.run(|c| c.issend_bytes(scope, buf, dest, tag))?;
        Ok(self.pending(op))
    }
    fn bsend_bytes(&self, buf: &[u8], dest: Rank, tag: Tag) -> Result<Outcome, Self::Error> {
        self.run(|c| c.bsend_bytes(buf, dest, tag))
    }
    fn barrier(&self) -> Result<Outcome, Self::Error> {
        self.run(|c| c.barrier())
    }
    fn bcast_bytes(&self, buf: &mut [u8], root: Rank) -> Result<Outcome, Self::Error> {
        self.run(|c| c.bcast_bytes(buf, root))
    }
    fn reduce_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        op: &ErasedOp,
        root: Rank,
    ) -> Result<Outcome, Self::Error> {
        self.run(|c| c.reduce_bytes(send, recv, op, root))
    }
    fn allreduce_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        op: &ErasedOp,
    ) -> Result<Outcome, Self::Error> {
        self.run(|c| c.allreduce_bytes(send, recv, op))
    }
    fn gather_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        root: Rank,
    ) -> Result<Outcome, Self::Error> {
        self.run(|c| c.gather_bytes(send, recv, root))
    }
    fn scatter_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        root: Rank,
    ) -> Result<Outcome, Self::Error> {
        self.run(|c| c.scatter_bytes(send, recv, root))
    }
    fn allgather_bytes(&self, send: &[u8], recv: &mut [u8]) -> Result<Outcome, Self::Error> {
        self.run(|c| c.allgather_bytes(send, recv))
    }
    fn alltoall_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        elem: usize,
    ) -> Result<Outcome, Self::Error> {
        self.run(|c| c.alltoall_bytes(send, recv, elem))
    }
    fn scan_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        op: &ErasedOp,
    ) -> Result<Outcome, Self::Error> {
        self.run(|c| c.scan_bytes(send, recv, op))
    }
    fn exscan_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        op: &ErasedOp,
    ) -> Result<Outcome, Self::Error> {
        self.run(|c| c.exscan_bytes(send, recv, op))
    }
    fn reduce_scatter_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        op: &ErasedOp,
    ) -> Result<Outcome, Self::Error> {
        self.run(|c| c.reduce_scatter_bytes(send, recv, counts, op))
    }
    fn gatherv_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        displs: &[usize],
        elem: usize,
        root: Rank,
    ) -> Result<Outcome, Self::Error> {
        self.run(|c| c.gatherv_bytes(send, recv, counts, displs, elem, root))
    }
    fn scatterv_bytes(
        &self,
        send: &[u8],
        counts: &[usize],
        displs: &[usize],
        recv: &mut [u8],
        elem: usize,
        root: Rank,
    ) -> Result<Outcome, Self::Error> {
        self.run(|c| c.scatterv_bytes(send, counts, displs, recv, elem, root))
    }
    fn allgatherv_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        displs: &[usize],
        elem: usize,
    ) -> Result<Outcome, Self::Error> {
        self.run(|c| c.allgatherv_bytes(send, recv, counts, displs, elem))
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
    ) -> Result<Outcome, Self::Error> {
        self.run(|c| c.alltoallv_bytes(send, scounts, sdispls, recv, rcounts, rdispls, elem))
    }
    fn ibarrier<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
    ) -> Result<PendingOp<'s, Self::Error>, Self::Error> {
        let op = self.run(|c| c.ibarrier(scope))?;
        Ok(self.pending(op))
    }
    fn ibcast_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [u8],
        root: Rank,
    ) -> Result<PendingOp<'s, Self::Error>, Self::Error> {
        let op = self.run(|c| c.ibcast_bytes(scope, buf, root))?;
        Ok(self.pending(op))
    }
    fn ireduce_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        send: &'s [u8],
        recv: &'s mut [u8],
        op: &ErasedOp,
        root: Rank,
    ) -> Result<PendingOp<'s, Self::Error>, Self::Error> {
        let p = self.run(|c| c.ireduce_bytes(scope, send, recv, op, root))?;
        Ok(self.pending(p))
    }
    fn iallreduce_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        send: &'s [u8],
        recv: &'s mut [u8],
        op: &ErasedOp,
    ) -> Result<PendingOp<'s, Self::Error>, Self::Error> {
        let p = self.run(|c| c.iallreduce_bytes(scope, send, recv, op))?;
        Ok(self.pending(p))
    }
    fn iallgather_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        send: &'s [u8],
        recv: &'s mut [u8],
    ) -> Result<PendingOp<'s, Self::Error>, Self::Error> {
        let p = self.run(|c| c.iallgather_bytes(scope, send, recv))?;
        Ok(self.pending(p))
    }
    fn ialltoall_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        send: &'s [u8],
        recv: &'s mut [u8],
        elem: usize,
    ) -> Result<PendingOp<'s, Self::Error>, Self::Error> {
        let p = self.run(|c| c.ialltoall_bytes(scope, send, recv, elem))?;
        Ok(self.pending(p))
    }
    /// The guarded communicator's acknowledgement (local: nothing to
    /// propagate).
    fn ack_failed(&self, n: usize) -> Result<usize, Self::Error> {
        self.comm().ack_failed(n).map_err(GuardError::Other)
    }
    /// The guarded communicator's agreement, not run through the guard: an
    /// agreement completes despite failures, which it reports in its
    /// result, so there is nothing to propagate.
    fn agree(&self, flags: u32) -> Result<u32, Self::Error> {
        self.comm().agree(flags).map_err(GuardError::Other)
    }
    /// Unsupported: a guard's members are fixed by its control
    /// communicator; make a new guard over the shrunk communicator
    /// ([`Guarded::over`]) instead.
    fn shrink_boxed(&self) -> Result<BoxedComm<Self::Error>, Self::Error> {
        Err(GuardError::Other(
            pertinax::Error::Unsupported {
                feature: "shrink of a guard (its members are fixed by its control communicator: \
                          guard the shrunk communicator with Guarded::over)",
            }
            .into(),
        ))
    }

    fn dup_boxed(&self) -> Result<BoxedComm<Self::Error>, Self::Error> {
        Ok(Box::new(Communicator::dup(self)?))
    }
    fn split_boxed(
        &self,
        color: Option<u32>,
        key: i32,
    ) -> Result<Option<BoxedComm<Self::Error>>, Self::Error> {
        Ok(Communicator::split(self, color, key)?.map(|g| Box::new(g) as BoxedComm<Self::Error>))
    }
    /// A new guard over the same ranks (collective over the guard's
    /// control communicator, which is not fault tolerant: a failure
    /// returns its error), with the same way of making the guarded
    /// communicator.
    fn dup(&self) -> Result<Self, Self::Error> {
        let control = self.control();
        let make = self.maker();
        Guarded::over(&control, move |c| make(c)).map_err(GuardError::Other)
    }
    /// A guard per `color` (collective, as [`Communicator::dup`]).
    fn split(&self, color: Option<u32>, key: i32) -> Result<Option<Self>, Self::Error> {
        let control = self.control();
        let Some(part) = control.split(color, key)? else {
            return Ok(None);
        };
        let make = self.maker();
        Guarded::over(&part, move |c| make(c))
            .map(Some)
            .map_err(GuardError::Other)
    }
}

impl<C: Communicator + 'static> Guarded<C> {
    /// The control communicator (a handle to it).
    fn control(&self) -> pertinax::Comm {
        self.inner.st.borrow().control.clone()
    }

    /// The maker of the guarded communicator.
    fn maker(&self) -> Rc<crate::Make<C>> {
        Rc::clone(&self.inner.make)
    }
}
