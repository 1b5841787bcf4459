//! The operations of [`Communicator`] on the hierarchy.

use super::data::{block_len, reduced_len};
use super::*;
use pertinax::CommunicatorExt as _;
use pertinax::{BoxedComm, ErasedOp, PendingOp, Scope, TagMatch};

impl Communicator for Hierarchical {
    type Error = Error;

    fn rank(&self) -> Rank {
        Rank(self.me as i32)
    }

    fn size(&self) -> usize {
        self.size
    }

    fn failed_ranks(&self) -> Vec<Rank> {
        self.p2p.failed(self.st.borrow().failed.clone())
    }

    fn get_failed(&self) -> Result<pertinax::Group, Error> {
        self.p2p.failed_group(&self.failed_ranks())
    }

    fn barrier(&self) -> Result<Outcome, Error> {
        self.local_stage(false, |_| Ok(()))?;
        self.masters(&Stage::Sync, None)?;
        self.local_stage(true, |_| Ok(()))?;
        self.end_op()?;
        Ok(Outcome::default())
    }

    fn bcast_bytes(&self, buf: &mut [u8], root: Rank) -> Result<Outcome, Error> {
        let root = self.check_rank(root)?;
        let rg = root / self.k;
        let len = 1 + std::mem::size_of_val(buf);
        let stage = Stage::Bcast(len, rg);
        let payload = if self.group == rg {
            let p = self.local_stage(false, |l| {
                let mut p = vec![0u8; len];
                let Some(rl) = l.rank_of(root) else {
                    return Ok(p);
                };
                if rl == l.comm.rank().index() {
                    p[0] = 1;
                    p[1..].copy_from_slice(bytemuck::cast_slice(buf));
                }
                l.comm.bcast(&mut p, rl)?;
                Ok(p)
            })?;
            // Every member holds the payload: a deputy that took over
            // from a master dead in the global stage sends it.
            let out = self.masters(&stage, Some(&p))?;
            // The root group waits for the global stage too (its last
            // stage): a group never leaves an operation before its global
            // stage succeeded, so a repair of that stage never needs a
            // group that has gone on.
            self.spread_local(out, len, |o| Ok(o.to_vec()))?;
            p
        } else {
            let out = self.masters(&stage, None)?;
            self.spread_local(out, len, |o| Ok(o.to_vec()))?
        };
        self.end_op()?;
        if payload[0] == 1 {
            bytemuck::cast_slice_mut(buf).copy_from_slice(&payload[1..]);
            Ok(Outcome::default())
        } else {
            self.gone(Kind::Bcast, root)
        }
    }

    fn reduce_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        op: &ErasedOp,
        root: Rank,
    ) -> Result<Outcome, Error> {
        let root = self.check_rank(root)?;
        if self.me == root && recv.len() != send.len() {
            return Err(pertinax::Error::InvalidArgument(format!(
                "reduce: receive holds {} elements, {} needed",
                recv.len(),
                send.len()
            ))
            .into());
        }
        let n = send.len();
        let nb = std::mem::size_of_val(send);
        let stage = Stage::Allgather(reduced_len(self.k, nb));
        let block = self.reduce_local(send, op)?;
        let out = self.masters(&stage, block.as_deref())?;
        let (presence, got) = self.finish_rooted(out, root, |o| self.combine(o, n, op))?;
        self.end_op()?;
        self.rooted_outcome(Kind::Reduce, root, &presence, got.as_deref(), |r| {
            bytemuck::cast_slice_mut(recv).copy_from_slice(&r[self.size..]);
        })
    }

    fn allreduce_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        op: &ErasedOp,
    ) -> Result<Outcome, Error> {
        if recv.len() != send.len() {
            return Err(pertinax::Error::InvalidArgument(format!(
                "allreduce: receive holds {} elements, {} needed",
                recv.len(),
                send.len()
            ))
            .into());
        }
        let n = send.len();
        let nb = std::mem::size_of_val(send);
        let stage = Stage::Allgather(reduced_len(self.k, nb));
        let block = self.reduce_local(send, op)?;
        let out = self.masters(&stage, block.as_deref())?;
        let r = self.spread_local(out, self.size + nb, |o| self.combine(o, n, op))?;
        self.end_op()?;
        bytemuck::cast_slice_mut(recv).copy_from_slice(&r[self.size..]);
        Ok(Outcome {
            skipped: None,
            missing: self.missing_of(&r[..self.size]),
        })
    }

    fn gather_bytes(&self, send: &[u8], recv: &mut [u8], root: Rank) -> Result<Outcome, Error> {
        let root = self.check_rank(root)?;
        let n = send.len();
        if self.me == root && recv.len() != self.size * n {
            return Err(pertinax::Error::InvalidArgument(format!(
                "gather: receive holds {} elements, {} × {n} needed",
                recv.len(),
                self.size
            ))
            .into());
        }
        let nb = std::mem::size_of_val(send);
        let stage = Stage::Allgather(block_len(self.k, nb));
        let block = self.gather_local(bytemuck::cast_slice(send))?;
        let out = self.masters(&stage, block.as_deref())?;
        let (presence, got) = self.finish_rooted(out, root, |o| Ok(self.unblock(o, nb)))?;
        self.end_op()?;
        self.rooted_outcome(Kind::Gather, root, &presence, got.as_deref(), |r| {
            let dst: &mut [u8] = bytemuck::cast_slice_mut(recv);
            for o in 0..self.size {
                if r[o] == 1 {
                    dst[o * nb..(o + 1) * nb]
                        .copy_from_slice(&r[self.size + o * nb..self.size + (o + 1) * nb]);
                }
            }
        })
    }

    fn scatter_bytes(&self, send: &[u8], recv: &mut [u8], root: Rank) -> Result<Outcome, Error> {
        let root = self.check_rank(root)?;
        let n = recv.len();
        if self.me == root && send.len() != self.size * n {
            return Err(pertinax::Error::InvalidArgument(format!(
                "scatter: send holds {} elements, {} × {n} needed",
                send.len(),
                self.size
            ))
            .into());
        }
        let rg = root / self.k;
        let nb = std::mem::size_of_val(recv);
        let len = 1 + self.size * nb;
        let stage = Stage::Bcast(len, rg);
        // The root hands its data to every member of its group (whichever
        // is the head at the global stage sends it).
        let first = if self.group == rg {
            self.local_stage(false, |l| {
                let mut p = vec![0u8; len];
                let Some(rl) = l.rank_of(root) else {
                    return Ok(Some(p));
                };
                if rl == l.comm.rank().index() {
                    p[0] = 1;
                    p[1..].copy_from_slice(bytemuck::cast_slice(send));
                }
                l.comm.bcast(&mut p, rl)?;
                Ok(Some(p))
            })?
        } else {
            None
        };
        let out = self.masters(&stage, first.as_deref())?;
        let status = std::cell::Cell::new(0u8);
        self.local_stage(true, |l| {
            let mut st = [0u8; 1];
            let mut tmp = Vec::new();
            if l.comm.rank().0 == 0 {
                let o = self.output(out.as_deref())?;
                if o.len() != len {
                    return Err(internal("a scatter output of the wrong size"));
                }
                st[0] = o[0];
                for &orig in &l.to_orig {
                    tmp.extend_from_slice(&o[1 + orig * nb..1 + (orig + 1) * nb]);
                }
            }
            l.comm.bcast(&mut st, 0)?;
            status.set(st[0]);
            if st[0] == 1 {
                let dst: &mut [u8] = bytemuck::cast_slice_mut(recv);
                if l.comm.rank().0 == 0 {
                    l.comm.scatter(&tmp, dst, 0)?;
                } else {
                    l.comm.scatter(&[], dst, 0)?;
                }
            }
            Ok(())
        })?;
        self.end_op()?;
        if status.get() == 1 {
            // Every survivor has its slot: no rank's part is missing
            // (the dead ranks' slots went nowhere; `failed_ranks` lists
            // them as this rank knows them).
            Ok(Outcome::default())
        } else {
            self.gone(Kind::Scatter, root)
        }
    }

    fn allgather_bytes(&self, send: &[u8], recv: &mut [u8]) -> Result<Outcome, Error> {
        let n = send.len();
        if recv.len() != self.size * n {
            return Err(pertinax::Error::InvalidArgument(format!(
                "allgather: receive holds {} elements, {} × {n} needed",
                recv.len(),
                self.size
            ))
            .into());
        }
        let nb = std::mem::size_of_val(send);
        let stage = Stage::Allgather(block_len(self.k, nb));
        let block = self.gather_local(bytemuck::cast_slice(send))?;
        let out = self.masters(&stage, block.as_deref())?;
        let r = self.spread_local(out, self.size + self.size * nb, |o| Ok(self.unblock(o, nb)))?;
        self.end_op()?;
        let dst: &mut [u8] = bytemuck::cast_slice_mut(recv);
        for o in 0..self.size {
            if r[o] == 1 {
                dst[o * nb..(o + 1) * nb]
                    .copy_from_slice(&r[self.size + o * nb..self.size + (o + 1) * nb]);
            }
        }
        Ok(Outcome {
            skipped: None,
            missing: self.missing_of(&r[..self.size]),
        })
    }

    /// Not supported: the hierarchy repairs in stages that a revoker
    /// could not join ([`Error::Unsupported`]).
    fn revoke(&self) -> Result<(), Error> {
        Err(Error::Unsupported(
            "revoking a hierarchical resilient communicator".into(),
        ))
    }

    fn is_revoked(&self) -> bool {
        false
    }

    /// Not supported yet on the hierarchy ([`Error::Unsupported`]).
    fn alltoall_bytes(
        &self,
        _send: &[u8],
        _recv: &mut [u8],
        _elem: usize,
    ) -> Result<Outcome, Error> {
        Err(Error::Unsupported(
            "alltoall on a hierarchical resilient communicator".into(),
        ))
    }

    /// Not supported on the hierarchy, as alltoall ([`Error::Unsupported`]).
    fn alltoallv_bytes(
        &self,
        _send: &[u8],
        _scounts: &[usize],
        _sdispls: &[usize],
        _recv: &mut [u8],
        _rcounts: &[usize],
        _rdispls: &[usize],
        _elem: usize,
    ) -> Result<Outcome, Error> {
        Err(Error::Unsupported(
            "alltoallv on a hierarchical resilient communicator (as alltoall)".into(),
        ))
    }

    /// The reduction, in original rank order, over the survivors up to
    /// this rank: an allgather of the inputs, reduced here.
    fn scan_bytes(&self, send: &[u8], recv: &mut [u8], op: &ErasedOp) -> Result<Outcome, Error> {
        super::vcoll::scan(self, send, recv, op, false)
    }

    /// The reduction, in original rank order, over the survivors before
    /// this rank (the lowest survivor's `recv` is left as it was): an
    /// allgather of the inputs, reduced here.
    fn exscan_bytes(&self, send: &[u8], recv: &mut [u8], op: &ErasedOp) -> Result<Outcome, Error> {
        super::vcoll::scan(self, send, recv, op, true)
    }

    /// `counts` per original rank: an allreduce of the whole vector, of
    /// which this rank keeps its block.
    fn reduce_scatter_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        op: &ErasedOp,
    ) -> Result<Outcome, Error> {
        super::vcoll::reduce_scatter(self, send, recv, counts, op)
    }

    /// As gather, counts and displacements per original rank (blocks
    /// padded to the largest send); the missing ranks' blocks of `recv`
    /// are left as they were.
    fn gatherv_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        displs: &[usize],
        elem: usize,
        root: Rank,
    ) -> Result<Outcome, Error> {
        super::vcoll::gatherv(self, send, recv, counts, displs, elem, root)
    }

    /// As scatter, counts and displacements per original rank (blocks
    /// padded to the largest one).
    fn scatterv_bytes(
        &self,
        send: &[u8],
        counts: &[usize],
        displs: &[usize],
        recv: &mut [u8],
        elem: usize,
        root: Rank,
    ) -> Result<Outcome, Error> {
        super::vcoll::scatterv(self, send, counts, displs, recv, elem, root)
    }

    /// As allgather, counts and displacements per original rank (blocks
    /// padded to the largest count); the missing ranks' blocks of `recv`
    /// are left as they were.
    fn allgatherv_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        displs: &[usize],
        elem: usize,
    ) -> Result<Outcome, Error> {
        super::vcoll::allgatherv(self, send, recv, counts, displs, elem)
    }

    crate::p2p::forward_p2p!();
    fn unsupported(&self, op: &'static str) -> Error {
        crate::p2p::unsupported(op)
    }

    fn dup_boxed(&self) -> Result<BoxedComm<Error>, Error> {
        Ok(Box::new(self.dup_hier()?))
    }

    fn split_boxed(&self, color: Option<u32>, key: i32) -> Result<Option<BoxedComm<Error>>, Error> {
        Ok(self
            .split_hier(color, key)?
            .map(|h| Box::new(h) as BoxedComm<Error>))
    }

    /// A new hierarchical communicator with the same ranks (collective,
    /// on every live rank; completes despite failures).
    fn dup(&self) -> Result<Self, Error> {
        self.dup_hier()
    }

    /// Splits the live ranks; every new communicator is hierarchical with
    /// the same `k` (collective; completes despite failures).
    fn split(&self, color: Option<u32>, key: i32) -> Result<Option<Self>, Error> {
        self.split_hier(color, key)
    }
}
