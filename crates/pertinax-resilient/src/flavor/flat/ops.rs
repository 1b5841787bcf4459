//! The operations of [`Resilient`] (its [`Communicator`] implementation)
//! and the collectives at original positions they use.

use bytemuck::Pod;
use pertinax::CommunicatorExt as _;
use pertinax::{BoxedComm, Communicator, ErasedOp, PendingOp, Rank, Scope, Source, Tag, TagMatch};

use super::{Check, Resilient, State};
use crate::policy::Kind;
use crate::replay::{keep, rerun, Serve, What};
use crate::{Error, Outcome, Received};

/// Gather at original positions on the survivors (`recv` is used at the
/// root only).
fn gather_on<T: Pod>(
    st: &State,
    size: usize,
    send: &[T],
    recv: &mut [T],
    root: usize,
) -> Result<Outcome, Error> {
    let Some(rc) = st.orig_to_cur[root] else {
        return Err(Error::Internal("gather_on with a failed root".into()));
    };
    let at_root = st.cur.rank().index() == rc;
    if st.whole(size) {
        st.cur.gather(send, recv, rc)?;
        return Ok(Outcome::default());
    }
    let n = send.len();
    if !at_root {
        st.cur.gather(send, &mut [], rc)?;
        return Ok(Outcome::default());
    }
    if recv.len() != size * n {
        return Err(pertinax::Error::InvalidArgument(format!(
            "gather: receive holds {} elements, {size} × {n} needed",
            recv.len()
        ))
        .into());
    }
    let mut tmp = vec![T::zeroed(); st.cur.size() * n];
    st.cur.gather(send, &mut tmp, rc)?;
    for (c, &o) in st.cur_to_orig.iter().enumerate() {
        recv[o * n..(o + 1) * n].copy_from_slice(&tmp[c * n..(c + 1) * n]);
    }
    Ok(Outcome {
        skipped: None,
        missing: st.missing(),
    })
}

/// Scatter from original positions to the survivors (`send` is used at
/// the root only).
fn scatter_on<T: Pod>(
    st: &State,
    size: usize,
    send: &[T],
    recv: &mut [T],
    root: usize,
) -> Result<Outcome, Error> {
    let Some(rc) = st.orig_to_cur[root] else {
        return Err(Error::Internal("scatter_on with a failed root".into()));
    };
    if st.whole(size) {
        st.cur.scatter(send, recv, rc)?;
        return Ok(Outcome::default());
    }
    let n = recv.len();
    if st.cur.rank().index() != rc {
        st.cur.scatter(&[], recv, rc)?;
        return Ok(Outcome::default());
    }
    if send.len() != size * n {
        return Err(pertinax::Error::InvalidArgument(format!(
            "scatter: send holds {} elements, {size} × {n} needed",
            send.len()
        ))
        .into());
    }
    let mut tmp = Vec::with_capacity(st.cur.size() * n);
    for &o in &st.cur_to_orig {
        tmp.extend_from_slice(&send[o * n..(o + 1) * n]);
    }
    st.cur.scatter(&tmp, recv, rc)?;
    Ok(Outcome {
        skipped: None,
        missing: st.missing(),
    })
}

/// A resilient all-to-all: block `j` of `send` goes to original rank `j`;
/// the failed ranks' blocks of `recv` are untouched (and listed missing).
fn alltoall_on(st: &State, size: usize, send: &[u8], recv: &mut [u8]) -> Result<Outcome, Error> {
    if st.whole(size) {
        st.cur.alltoall(send, recv)?;
        return Ok(Outcome::default());
    }
    let n = send.len() / size.max(1);
    let m = st.cur.size();
    let mut out = Vec::with_capacity(m * n);
    for &o in &st.cur_to_orig {
        out.extend_from_slice(&send[o * n..(o + 1) * n]);
    }
    let mut tmp = vec![0u8; m * n];
    st.cur.alltoall(&out, &mut tmp)?;
    for (c, &o) in st.cur_to_orig.iter().enumerate() {
        recv[o * n..(o + 1) * n].copy_from_slice(&tmp[c * n..(c + 1) * n]);
    }
    Ok(Outcome {
        skipped: None,
        missing: st.missing(),
    })
}

/// The arguments of a folded reduction, checked before it starts (as the
/// usual path's reduction checks them): whole elements, and a receive
/// buffer (where one is used) as long as the send buffer.
pub(super) fn check_reduce(send: &[u8], recv: Option<&[u8]>, op: &ErasedOp) -> Result<(), Error> {
    let e = op.elem_size().max(1);
    if !send.len().is_multiple_of(e) || recv.is_some_and(|r| r.len() != send.len()) {
        return Err(pertinax::Error::InvalidArgument(format!(
            "reduce: {} bytes to send and {} to receive, the same number of whole {e}-byte \
             elements needed",
            send.len(),
            recv.map_or(0, <[u8]>::len)
        ))
        .into());
    }
    Ok(())
}

/// The reduction by `op`, in original rank order, of the first `n` bytes
/// of every contribution of a folded collective, into `recv` (checked by
/// [`check_reduce`]).
fn fold_reduce(
    all: &[Option<[u8; super::FOLD_BYTES]>],
    n: usize,
    recv: &mut [u8],
    op: &ErasedOp,
) -> Result<(), Error> {
    let mut first = true;
    for b in all.iter().flatten() {
        if first {
            recv.copy_from_slice(&b[..n]);
            first = false;
        } else {
            op.combine_bytes(recv, &b[..n], true)?;
        }
    }
    Ok(())
}

impl Resilient {
    /// The outcome of a reduction over the survivors now.
    fn outcome_now(&self) -> Outcome {
        Outcome {
            skipped: None,
            missing: self.st.borrow().missing(),
        }
    }
}

/// The operations of a resilient communicator (see the [crate
/// documentation](crate) for what each does about failures).
///
/// # Revocation
///
/// [`Communicator::revoke`] makes every pending and later operation of
/// every member return [`pertinax::Error::Revoked`] (wrapped in
/// [`Error::Comm`]) instead of repairing: the revoker revokes the
/// point-to-point and the collective communicators and contributes a
/// failure to the agreement that the others' current or next collective
/// waits for, so that nobody waits for it. This is what a guard
/// (`pertinax-propagate`) needs to interrupt the communicator it guards;
/// the communicator is unusable afterwards (make a new one). Only under
/// [`Check::Agree`] and outside a non-blocking scope ([`Error::Unsupported`]
/// otherwise): the log check repairs without an agreement that a revoker
/// could join.
impl Communicator for Resilient {
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

    fn is_revoked(&self) -> bool {
        self.p2p.comm().is_revoked()
    }

    fn revoke(&self) -> Result<(), Error> {
        if self.cfg.check == Check::Log {
            return Err(Error::Unsupported(
                "revoking a resilient communicator under the log check (it repairs without an \
                 agreement a revoker could join): use the agree check"
                    .into(),
            ));
        }
        let mut st = self.st.borrow_mut();
        if st.nb.is_some() {
            return Err(Error::Unsupported(
                "revoking a resilient communicator while a non-blocking scope is open".into(),
            ));
        }
        self.p2p.comm().revoke()?;
        let _ = st.cur.revoke();
        if st.revoked.is_none() {
            // The agreement that every other member's current or next
            // collective waits for: this member's part is a failure.
            st.revoked = Some(st.cur.iagree(0)?);
        }
        Ok(())
    }

    crate::p2p::forward_p2p!();
    fn unsupported(&self, op: &'static str) -> Error {
        crate::p2p::unsupported(op)
    }

    fn barrier(&self) -> Result<Outcome, Error> {
        if self.folds(0) {
            self.folded(&[])?;
            self.record(What::Barrier, true, 0, |_| Serve::Nothing)?;
            return Ok(Outcome::default());
        }
        let out = self.drive(What::Barrier, |st, plan| match plan {
            None => {
                st.cur.barrier()?;
                Ok(Outcome::default())
            }
            Some(_) => Ok(Outcome::default()),
        })?;
        self.record(What::Barrier, true, 0, |_| Serve::Nothing)?;
        Ok(out)
    }

    fn bcast_bytes(&self, buf: &mut [u8], root: Rank) -> Result<Outcome, Error> {
        let root = self.check_rank(root)?;
        if self.folds(buf.len()) && self.st.borrow().orig_to_cur[root].is_some() {
            let mine: &[u8] = if self.me == root { buf } else { &[] };
            let out = match self.folded(mine)?[root] {
                Some(b) => {
                    buf.copy_from_slice(&b[..buf.len()]);
                    Outcome::default()
                }
                // The root failed without contributing: as when the
                // repeat after a repair finds it gone.
                None => self.gone(Kind::Bcast, root)?,
            };
            // Folded only under the agree check, which keeps no log.
            self.record(What::Spread, false, buf.len(), |_| Serve::Nothing)?;
            return Ok(out);
        }
        let out = self.drive(What::Spread, |st, plan| match plan {
            None => match st.orig_to_cur[root] {
                None => self.gone(Kind::Bcast, root),
                Some(rc) => {
                    st.cur.bcast(buf, rc)?;
                    Ok(Outcome::default())
                }
            },
            Some(p) => self.take_spread(st, p, buf),
        })?;
        self.record(What::Spread, false, buf.len(), |arena| {
            keep(arena, buf, &out)
        })?;
        Ok(out)
    }

    fn reduce_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        op: &ErasedOp,
        root: Rank,
    ) -> Result<Outcome, Error> {
        let root = self.check_rank(root)?;
        if self.folds(send.len()) && self.st.borrow().orig_to_cur[root].is_some() {
            check_reduce(send, if self.me == root { Some(recv) } else { None }, op)?;
            let all = self.folded(send)?;
            let out = if all[root].is_none() {
                self.gone(Kind::Reduce, root)?
            } else {
                if self.me == root {
                    fold_reduce(&all, send.len(), recv, op)?;
                }
                self.outcome_now()
            };
            self.record(What::Rooted(root), false, send.len(), |_| Serve::Nothing)?;
            return Ok(out);
        }
        let out = self.rooted(What::Rooted(root), Kind::Reduce, root, |st| {
            let rc = st.orig_to_cur[root]
                .ok_or_else(|| Error::Internal("reduce with a failed root".into()))?;
            Communicator::reduce_bytes(&st.cur, send, recv, op, Rank(rc as i32))?;
            Ok(Outcome {
                skipped: None,
                missing: st.missing(),
            })
        })?;
        self.record(What::Rooted(root), false, send.len(), |arena| {
            let op = op.clone();
            rerun(
                arena,
                send,
                Box::new(move |st: &State, input: &[u8]| {
                    // Only a non-root replays (a root that finished
                    // needs nothing), so there is no result to keep.
                    let rc = st.orig_to_cur[root].ok_or_else(|| {
                        Error::Internal("reduce replay with a failed root".into())
                    })?;
                    Communicator::reduce_bytes(&st.cur, input, &mut [], &op, Rank(rc as i32))?;
                    Ok(())
                }),
            )
        })?;
        Ok(out)
    }

    fn allreduce_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        op: &ErasedOp,
    ) -> Result<Outcome, Error> {
        if self.folds(send.len()) {
            check_reduce(send, Some(recv), op)?;
            let all = self.folded(send)?;
            fold_reduce(&all, send.len(), recv, op)?;
            let out = self.outcome_now();
            self.record(What::Spread, true, 0, |_| Serve::Nothing)?;
            return Ok(out);
        }
        let out = self.drive(What::Spread, |st, plan| match plan {
            None => {
                Communicator::allreduce_bytes(&st.cur, send, recv, op)?;
                Ok(Outcome {
                    skipped: None,
                    missing: st.missing(),
                })
            }
            Some(p) => self.take_spread(st, p, recv),
        })?;
        self.record(What::Spread, true, 0, |arena| keep(arena, recv, &out))?;
        Ok(out)
    }

    fn gather_bytes(&self, send: &[u8], recv: &mut [u8], root: Rank) -> Result<Outcome, Error> {
        let root = self.check_rank(root)?;
        let size = self.size;
        let out = self.rooted(What::Rooted(root), Kind::Gather, root, |st| {
            gather_on(st, size, send, recv, root)
        })?;
        self.record(What::Rooted(root), false, send.len(), |arena| {
            rerun(
                arena,
                send,
                Box::new(move |st: &State, input: &[u8]| {
                    gather_on(st, size, input, &mut [], root).map(|_| ())
                }),
            )
        })?;
        Ok(out)
    }

    fn scatter_bytes(&self, send: &[u8], recv: &mut [u8], root: Rank) -> Result<Outcome, Error> {
        let root = self.check_rank(root)?;
        let size = self.size;
        let out = self.rooted(What::Scatter(root), Kind::Scatter, root, |st| {
            scatter_on(st, size, send, recv, root)
        })?;
        let at_root = self.me == root;
        self.record(What::Scatter(root), false, recv.len() * size, |arena| {
            let input: &[u8] = if at_root { send } else { &[] };
            let n = recv.len();
            rerun(
                arena,
                input,
                Box::new(move |st: &State, input: &[u8]| {
                    let mut sink = vec![0u8; n];
                    scatter_on(st, size, input, &mut sink, root).map(|_| ())
                }),
            )
        })?;
        Ok(out)
    }

    fn allgather_bytes(&self, send: &[u8], recv: &mut [u8]) -> Result<Outcome, Error> {
        let size = self.size;
        let n = send.len();
        if recv.len() != size * n {
            return Err(pertinax::Error::InvalidArgument(format!(
                "allgather: receive holds {} bytes, {size} × {n} needed",
                recv.len()
            ))
            .into());
        }
        let out = self.drive(What::Spread, |st, plan| match plan {
            None if st.whole(size) => {
                st.cur.allgather(send, recv)?;
                Ok(Outcome::default())
            }
            None => {
                let mut tmp = vec![0u8; st.cur.size() * n];
                st.cur.allgather(send, &mut tmp)?;
                for (c, &o) in st.cur_to_orig.iter().enumerate() {
                    recv[o * n..(o + 1) * n].copy_from_slice(&tmp[c * n..(c + 1) * n]);
                }
                Ok(Outcome {
                    skipped: None,
                    missing: st.missing(),
                })
            }
            Some(p) => self.take_spread(st, p, recv),
        })?;
        self.record(What::Spread, true, 0, |arena| keep(arena, recv, &out))?;
        Ok(out)
    }

    /// Block `j` of `send` goes to original rank `j`; the blocks of the
    /// failed ranks are untouched in `recv` and listed missing. Only under
    /// [`Check::Agree`]: every rank's result differs, so the log check
    /// could not replay it ([`Error::Unsupported`]).
    fn alltoall_bytes(&self, send: &[u8], recv: &mut [u8], elem: usize) -> Result<Outcome, Error> {
        let size = self.size;
        if self.cfg.check == Check::Log {
            return Err(Error::Unsupported(
                "alltoall under the log check (each rank's result differs: nothing to replay)"
                    .into(),
            ));
        }
        if !send.len().is_multiple_of(size.max(1) * elem.max(1)) || recv.len() != send.len() {
            return Err(pertinax::Error::InvalidArgument(format!(
                "alltoall: {} bytes to send and {} to receive, both {size} equal blocks needed",
                send.len(),
                recv.len()
            ))
            .into());
        }
        let out = self.drive(What::Barrier, |st, plan| match plan {
            None => alltoall_on(st, size, send, recv),
            Some(_) => Ok(Outcome::default()),
        })?;
        self.record(What::Barrier, true, 0, |_| Serve::Nothing)?;
        Ok(out)
    }

    /// The reduction, in original rank order, over the survivors up to
    /// this rank. Under [`Check::Log`], a laggard's repeat runs over the
    /// survivors at the repair, the others' results stand as they got
    /// them (each outcome says whose inputs its result holds).
    fn scan_bytes(&self, send: &[u8], recv: &mut [u8], op: &ErasedOp) -> Result<Outcome, Error> {
        super::vops::scan(self, send, recv, op, false)
    }

    /// The reduction, in original rank order, over the survivors before
    /// this rank; the lowest survivor's `recv` is left as it was. Under
    /// [`Check::Log`] as [`Communicator::scan_bytes`].
    fn exscan_bytes(&self, send: &[u8], recv: &mut [u8], op: &ErasedOp) -> Result<Outcome, Error> {
        super::vops::scan(self, send, recv, op, true)
    }

    /// `counts` per original rank (elements of `op`); the reduction over
    /// the survivors, each survivor getting its block (the failed ranks'
    /// blocks go nowhere). Under [`Check::Log`] as
    /// [`Communicator::scan_bytes`].
    fn reduce_scatter_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        op: &ErasedOp,
    ) -> Result<Outcome, Error> {
        super::vops::reduce_scatter(self, send, recv, counts, op)
    }

    /// As gather, counts and displacements per original rank; the failed
    /// ranks' blocks of `recv` are left as they were and listed missing.
    fn gatherv_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        displs: &[usize],
        elem: usize,
        root: Rank,
    ) -> Result<Outcome, Error> {
        super::vops::gatherv(self, send, recv, counts, displs, elem, root)
    }

    /// As scatter, counts and displacements per original rank (the failed
    /// ranks' blocks go nowhere).
    fn scatterv_bytes(
        &self,
        send: &[u8],
        counts: &[usize],
        displs: &[usize],
        recv: &mut [u8],
        elem: usize,
        root: Rank,
    ) -> Result<Outcome, Error> {
        super::vops::scatterv(self, send, counts, displs, recv, elem, root)
    }

    /// As allgather, counts and displacements per original rank; the
    /// failed ranks' blocks of `recv` are left as they were and listed
    /// missing.
    fn allgatherv_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        displs: &[usize],
        elem: usize,
    ) -> Result<Outcome, Error> {
        super::vops::allgatherv(self, send, recv, counts, displs, elem)
    }

    /// As alltoall, counts and displacements per original rank; the
    /// failed ranks' blocks of `recv` are left as they were and listed
    /// missing. Only under [`Check::Agree`] ([`Error::Unsupported`] under
    /// the log check, as alltoall).
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
        super::vops::alltoallv(self, send, scounts, sdispls, recv, rcounts, rdispls, elem)
    }

    fn dup_boxed(&self) -> Result<BoxedComm<Error>, Error> {
        Ok(Box::new(Communicator::dup(self)?))
    }

    fn split_boxed(&self, color: Option<u32>, key: i32) -> Result<Option<BoxedComm<Error>>, Error> {
        Ok(Communicator::split(self, color, key)?.map(|r| Box::new(r) as BoxedComm<Error>))
    }

    /// A new resilient communicator with the same ranks; ranks failed by
    /// then are failed in it too. Collective; completes despite failures.
    fn dup(&self) -> Result<Self, Error> {
        let (comm, map) = self.create()?;
        self.record(What::Barrier, true, 0, |_| Serve::Nothing)?;
        self.derive(&comm, &map, self.size)
    }

    /// Splits the survivors: the new communicators number their members
    /// from 0 (ranks that had failed are not in them). Collective;
    /// completes despite failures.
    fn split(&self, color: Option<u32>, key: i32) -> Result<Option<Self>, Error> {
        loop {
            let (comm, _) = self.create()?;
            // Order by key, then by original rank (the agreed
            // communicator numbers the survivors in original order).
            let r = comm.split(color, key);
            let ok = u32::from(!matches!(&r, Err(e) if e.is_fault()));
            let a = comm.agree_detailed(ok)?;
            if a.flags == 1 {
                self.record(What::Barrier, true, 0, |_| Serve::Nothing)?;
                return match r? {
                    Some(c) => {
                        let ids: Vec<usize> = (0..c.size()).collect();
                        Ok(Some(self.derive(&c, &ids, c.size())?))
                    }
                    None => Ok(None),
                };
            }
            // A failure hit the split somewhere: everybody tries again.
            if let Ok(Some(c)) = r {
                let _ = c.free();
            }
            let _ = comm.free();
        }
    }
}
