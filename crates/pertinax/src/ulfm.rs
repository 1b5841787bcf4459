//! Fault-tolerance primitives with the semantics of the ULFM proposal as
//! Open MPI 5 implements it: [`Comm::revoke`], [`Comm::shrink`],
//! [`Comm::agree`], [`get_failed`](crate::Communicator::get_failed), [`Comm::ack_failed`].
//!
//! The failure model, the error semantics, which outcomes are uniform,
//! the agreement's guarantees and the library's fault points are
//! documented for users in the crate documentation (`lib.rs`, "Failure
//! model"); this module implements them.
//!
//! # Agreement records
//!
//! Each member writes its contribution into its own record of the
//! communicator's entry in the shared segment, stamped with the context
//! id, the agreement's sequence number (24 bits, alternating parity
//! between the two records of an entry) and the kind of recovery call
//! ([`RecoveryCall`], 8 bits). A record of the same instance with another
//! kind is still final: [`check_calls`] turns it into `RecoveryMismatch`
//! at every member that decides, since all read the same records.
//!
//! # Non-blocking agreement
//!
//! [`Comm::iagree`] contributes at once and returns a [`PendingAgreement`]
//! to test or wait; the decision needs only reads of the segment, so it
//! fits the design at no cost. There is no `ishrink`: a shrink has to
//! build a communicator when it completes, which `iagree` plus a blocking
//! `shrink` already gives at the same price.
//!
//! # Fault points
//!
//! `ft.agree.enter` (before contributing), `ft.agree.contributed` (right
//! after), and `ft.revoke.partial` (in a revocation, after half of the
//! members were marked); see the crate documentation for the full list.

use crate::backend::{Active, Backend, OwnAgreement, OwnCommunicators, Record};
use crate::comm::Comm;
use crate::error::{Error, RecoveryCall, Result};
use crate::group::Group;
use crate::types::Rank;

/// The outcome of [`Comm::agree_detailed`]: the same at every member.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Agreement {
    /// Bitwise AND of the flags of every contributing member.
    pub flags: u32,
    /// Members (ranks of the communicator; for an intercommunicator,
    /// positions in the local then remote group) that did not contribute
    /// because they had failed.
    pub failed: Vec<Rank>,
    /// Those of `failed` that this process has not acknowledged (the only
    /// part that can differ between members).
    pub unacked: Vec<Rank>,
    /// Members that did not contribute because they had finalized (ended
    /// normally): they are not failed (not in `failed`, nor in
    /// [`get_failed`](crate::Communicator::get_failed)), and the agreement completed without them.
    pub finalized: Vec<Rank>,
}

/// The outcome of [`Comm::agree_gather`]: the agreement and what every
/// member contributed, the same at every member that returns (but for
/// [`Agreement::unacked`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gathered {
    /// The agreement: flags, failed and finalized members.
    pub agreement: Agreement,
    /// Each member's 12 bytes (by rank), `None` for a member that ended
    /// (failed or finalized) without contributing.
    pub data: Vec<Option<[u32; 3]>>,
}

impl Comm {
    /// Revokes the communicator at every member: their pending and later
    /// operations on it, other than the recovery calls, return
    /// [`Error::Revoked`]. Returns once the revocation is visible to every
    /// member (it survives the death of the revoker right after; the
    /// library's fault point `ft.revoke.partial` kills a revoker halfway
    /// in tests).
    ///
    /// # Errors
    /// `CommFreed`, `Finalized`.
    pub fn revoke(&self) -> Result<()> {
        self.live_ft()?;
        self.inner.rt.b.revoke(self.inner.ctx);
        Ok(())
    }

    /// Whether the communicator was revoked (as known to this process).
    pub fn is_revoked(&self) -> bool {
        let e = &self.inner.rt.b;
        e.progress();
        e.is_revoked(self.inner.ctx)
    }

    fn slot_group(&self, slots: Vec<u32>) -> Group {
        let me = self.inner.peers[self.inner.rank as usize];
        Group::new(slots.into(), me)
    }

    /// The group of this communicator's processes known here to have
    /// failed, in the order this process learned of them (like
    /// `MPIX_Comm_get_failed`). Local: another member may know more or
    /// fewer failures at the same moment (agree for one view). Members that
    /// finalized are not failed and are not listed.
    ///
    /// # Errors
    /// `CommFreed`, `Finalized`.
    pub(crate) fn get_failed(&self) -> Result<Group> {
        self.live_ft()?;
        let e = &self.inner.rt.b;
        e.progress();
        let failed = e.failed_among(&self.inner.st);
        Ok(self.slot_group(failed))
    }

    /// Acknowledges the first `n` failures of [`get_failed`](crate::Communicator::get_failed) (all of
    /// them with `usize::MAX`); returns how many failures are acknowledged
    /// now (like `MPIX_Comm_ack_failed`). Acknowledged failures no longer
    /// make any-source receives fail with `ProcFailedPending`, nor
    /// [`Comm::agree`] with `ProcFailed`. Local.
    ///
    /// # Errors
    /// `CommFreed`, `Finalized`.
    pub fn ack_failed(&self, n: usize) -> Result<usize> {
        self.live_ft()?;
        let e = &self.inner.rt.b;
        e.progress();
        Ok(e.ack_failed(self.inner.ctx, &self.inner.st, n))
    }

    /// The group of acknowledged failed processes (like the former
    /// `MPIX_Comm_failure_get_acked`). Local.
    ///
    /// # Errors
    /// `CommFreed`, `Finalized`.
    pub fn get_acked(&self) -> Result<Group> {
        self.live_ft()?;
        let acked = self.inner.rt.b.acked(self.inner.ctx);
        Ok(self.slot_group(acked))
    }

    /// Fault-tolerant uniform agreement: returns the bitwise AND of the
    /// `flags` of every member that contributed, the same at every member
    /// that returns, even when members (any of them) die while it runs.
    /// Works on a revoked communicator. Members that finalized are not
    /// waited for and are not failures.
    ///
    /// # Errors
    /// `ProcFailed` naming the members that failed without contributing
    /// and whose failure this process has not acknowledged (use
    /// [`Comm::agree_detailed`] to get the agreed flags in that case too;
    /// the failed set is uniform, the acknowledgements are local);
    /// `RecoveryMismatch` at every member if a member made another
    /// recovery call in this one's place; `InvalidArgument` while an
    /// [`Comm::iagree`] is pending; `CommFreed`, `Finalized`.
    pub fn agree(&self, flags: u32) -> Result<u32> {
        let a = self.agree_detailed(flags)?;
        if a.unacked.is_empty() {
            Ok(a.flags)
        } else {
            Err(Error::ProcFailed { ranks: a.unacked })
        }
    }

    /// [`Comm::agree`], returning the whole outcome whatever the failures:
    /// the same at every member that returns, but for
    /// [`Agreement::unacked`].
    ///
    /// Backends: the uniform failed set comes from the optional
    /// several-word agreement of the backend contract (native has it); a
    /// backend without it agrees on the failed set in a second agreement,
    /// or returns `Error::Unsupported`.
    ///
    /// # Errors
    /// `RecoveryMismatch` at every member if a member made another recovery
    /// call in this one's place; `InvalidArgument` while an
    /// [`Comm::iagree`] is pending; `CommFreed`, `Finalized`.
    pub fn agree_detailed(&self, flags: u32) -> Result<Agreement> {
        self.live_ft()?;
        match self.settle(RecoveryCall::Agree, [flags, 0, 0, 0])? {
            // Every member contributed: nobody failed or finalized.
            Settled::Uniform(Record::Contributed { words, .. }) => Ok(Agreement {
                flags: words[0],
                failed: Vec::new(),
                unacked: Vec::new(),
                finalized: Vec::new(),
            }),
            other => Ok(self.outcome(&other.records(self.agreement_members()))),
        }
    }

    /// [`Comm::agree_detailed`] in which every member also contributes 12
    /// bytes of `data` and gets every contributor's, in the same agreement:
    /// the members decide the same flags, the same failed set and the same
    /// data, whatever dies meanwhile. A small collective built on it is
    /// uniform by construction (every survivor reads the same records),
    /// with no separate agreement to decide whether it succeeded
    /// everywhere; `pertinax-resilient` folds its small collectives into
    /// it. It is an agreement of the same kind as [`Comm::agree`] and
    /// [`Comm::iagree`] (a member may take part with either; its data then
    /// reads as zeros). The contribution of a member that dies during the
    /// call may count or not, the same at every member.
    ///
    /// Cost: one agreement where [`Comm::agree_gather_is_one_agreement`] (native:
    /// one write and a read per member in shared memory); on the MPI
    /// backend, a record exchange after the agreement's fast round, since
    /// `MPIX_Comm_agree` carries one word.
    ///
    /// # Errors
    /// As [`Comm::agree_detailed`].
    ///
    /// # Example
    /// ```
    /// let u = pertinax::init()?;
    /// let g = u.world().agree_gather(1, [7, 8, 9])?;
    /// assert_eq!((g.agreement.flags, g.data), (1, vec![Some([7, 8, 9])]));
    /// # Ok::<(), pertinax::Error>(())
    /// ```
    pub fn agree_gather(&self, flags: u32, data: [u32; 3]) -> Result<Gathered> {
        self.live_ft()?;
        let [a, b, c] = data;
        let got = self.agreement(RecoveryCall::Agree, [flags, a, b, c])?;
        let data = words(&got)
            .into_iter()
            .map(|w| w.map(|[_, a, b, c]| [a, b, c]))
            .collect();
        Ok(Gathered {
            agreement: self.outcome(&got),
            data,
        })
    }

    /// Whether [`Comm::agree_gather`] costs one agreement, what
    /// [`Comm::agree`] costs, on this communicator (native: yes; MPI: no,
    /// it adds a record exchange). The same at every member, so a caller
    /// may choose by it how to build a collective (as `pertinax-resilient`
    /// folds its small collectives into one agreement where it is true).
    pub fn agree_gather_is_one_agreement(&self) -> bool {
        !self.inner.caps.own_agreement
    }

    /// A new communicator of the members that are alive, in the same rank
    /// order, the same at every survivor (like `MPIX_Comm_shrink`). Works on
    /// a revoked communicator and tolerates failures while it runs (a
    /// member that dies during the call may still be in the result; later
    /// operations then report it). Members that finalized are left out
    /// too (they take part in nothing any more).
    ///
    /// # Errors
    /// `RecoveryMismatch` at every member if a member made another recovery
    /// call in this one's place; `InvalidArgument` on an intercommunicator,
    /// while an [`Comm::iagree`] is pending, or when this process holds
    /// too many communicators; `CommFreed`, `Finalized`.
    pub fn shrink(&self) -> Result<Comm> {
        self.shrink_gather(0).map(|(c, _)| c)
    }

    /// [`Comm::shrink`] that also gathers one value from every member, in
    /// the same agreement (no extra communication step): the second part of
    /// the result holds, for each rank of this communicator, the value that
    /// member contributed, or `None` for a member that failed without
    /// contributing (and is not in the new communicator). The values are
    /// the same at every survivor. On the MPI backend the new communicator
    /// is `MPIX_Comm_shrink`'s, which may leave out a member that
    /// contributed and died since: its value then reads `None` too, so a
    /// value is `None` exactly for a member not in the new communicator. A pertinax extension beyond
    /// `MPIX_Comm_shrink`, for recovery protocols that must learn
    /// something from every survivor while they shrink (such as which
    /// ranks signalled an error).
    ///
    /// Backends: one agreement carrying a word per member is an optional
    /// part of the backend contract (see the `pertinax-backend` crate). The native
    /// backend has it; a backend whose agreement carries one flag word (as
    /// `MPIX_Comm_agree` does) provides this as an agreement plus an
    /// allgather over the shrunk communicator, or returns
    /// `Error::Unsupported`.
    ///
    /// # Errors
    /// As [`Comm::shrink`].
    ///
    /// # Example
    /// ```
    /// let u = pertinax::init()?;
    /// let (survivors, values) = u.world().shrink_gather(7 << 32 | 3)?;
    /// assert_eq!(survivors.size(), 1);
    /// assert_eq!(values, [Some(7 << 32 | 3)]);
    /// # Ok::<(), pertinax::Error>(())
    /// ```
    pub fn shrink_gather(&self, value: u64) -> Result<(Comm, Vec<Option<u64>>)> {
        self.live_ft()?;
        if self.is_inter() {
            return Err(Error::InvalidArgument(
                "shrink needs an intracommunicator".into(),
            ));
        }
        let rt = &self.inner.rt;
        let entry = rt.b.reserve()?;
        let got = self.agreement_for(
            RecoveryCall::Shrink,
            [
                value as u32,
                rt.next_ctx(),
                entry as u32,
                (value >> 32) as u32,
            ],
            entry,
        )?;
        let got = words(&got);
        let mut values: Vec<Option<u64>> = got
            .iter()
            .map(|c| c.map(|w| u64::from(w[0]) | (u64::from(w[3]) << 32)))
            .collect();
        let ctx = got.iter().flatten().map(|w| w[1]).max().unwrap_or(0);
        let agreed: Vec<bool> = got.iter().map(Option::is_some).collect();
        let made = if self.inner.caps.own_communicators {
            rt.b.shrink_attach(&self.inner.st, ctx, &agreed)
        } else {
            None
        };
        if let Some(made) = made {
            // The backend's own shrink (MPI: `MPIX_Comm_shrink`). A
            // contributor it left out (dead since) reads as failed, so that
            // a value is `None` exactly for a member not in the result.
            let made = made.inspect_err(|_| rt.b.unreserve(entry))?;
            let (rank, at, st) = (made.rank, made.at, made.st);
            for (i, v) in values.iter_mut().enumerate() {
                if !at.contains(&i) {
                    *v = None;
                }
            }
            let peers = at
                .iter()
                .map(|&i| rt.b.member_id(&self.inner.st, i))
                .collect();
            let comm = Comm::with_state(rt.clone(), ctx, rank, peers, st, None);
            return Ok((comm, values));
        }
        let mut peers = Vec::new();
        let mut entries = Vec::new();
        let mut my_rank = 0;
        for (i, c) in got.iter().enumerate() {
            if let Some(w) = c {
                if i == self.inner.rank as usize {
                    my_rank = peers.len() as u32;
                }
                peers.push(rt.b.member_id(&self.inner.st, i));
                entries.push(w[2] as u16);
            }
        }
        let comm = Comm::from_parts(rt.clone(), ctx, my_rank, peers.into(), &entries, None);
        Ok((comm, values))
    }

    /// Runs one agreement instance for a call of kind `call`: contributes
    /// `words`, waits until every member contributed or ended, returns each
    /// member's record.
    ///
    /// # Errors
    /// `RecoveryMismatch` (at every member) if a member made another kind
    /// of call; `InvalidArgument` while an `iagree` is pending.
    pub(crate) fn agreement(&self, call: RecoveryCall, words: [u32; 4]) -> Result<Vec<Record>> {
        Ok(self.settle(call, words)?.records(self.agreement_members()))
    }

    /// How many members an agreement on this communicator has: its group's
    /// and, on an intercommunicator, the remote group's.
    fn agreement_members(&self) -> usize {
        self.size() + self.remote_size()
    }

    /// [`Comm::agreement`], with the outcome where every member
    /// contributed the same record kept as one.
    fn settle(&self, call: RecoveryCall, words: [u32; 4]) -> Result<Settled> {
        let b = &self.inner.rt.b;
        let own = self.inner.caps.own_agreement;
        let mut p = if own && !crate::faults_planned() {
            // One blocking call inside the backend (MPI's
            // `MPIX_Comm_agree`). Not when a fault is planned here: then
            // the contribution and the wait stay apart, so that
            // `ft.agree.contributed` falls between them.
            let p = self.next_instance(call)?;
            if let Some(rec) = b.agree_now(p.ctx, p.seq, call, words, &self.inner.st) {
                check_calls(call, std::slice::from_ref(&rec))?;
                return Ok(Settled::Uniform(rec));
            }
            self.inner.agree_pending.set(true);
            p
        } else {
            self.start_agreement(call, words)?
        };
        // Decided inside the backend's blocking wait (MPI's fast round,
        // when `agree_now` could not make it one call): nothing to read
        // per member.
        if own {
            if let Some(rec) = b.block_on_agreement(p.ctx, p.seq) {
                self.inner.agree_pending.set(false);
                check_calls(call, std::slice::from_ref(&rec))?;
                return Ok(Settled::Uniform(rec));
            }
        }
        // Possibly decided inside that wait: no progress round needed
        // before reading it.
        if !p.poll(b, self) {
            b.wait_until(|b| p.poll(b, self));
        }
        p.finish(self).map(Settled::Each)
    }

    /// [`Comm::agreement`] for a call that reserved `entry` for the
    /// communicator it creates: the entry is given back on an error.
    pub(crate) fn agreement_for(
        &self,
        call: RecoveryCall,
        words: [u32; 4],
        entry: u16,
    ) -> Result<Vec<Record>> {
        self.agreement(call, words).inspect_err(|_| {
            self.inner.rt.b.unreserve(entry);
        })
    }

    /// Contributes to the next agreement instance on this communicator.
    fn start_agreement(&self, call: RecoveryCall, words: [u32; 4]) -> Result<Instance> {
        let p = self.next_instance(call)?;
        crate::fault_point("ft.agree.enter");
        self.inner
            .rt
            .b
            .contribute(p.ctx, p.seq, call, words, &self.inner.st);
        crate::fault_point("ft.agree.contributed");
        self.inner.agree_pending.set(true);
        Ok(p)
    }

    /// The next agreement instance on this communicator, not yet
    /// contributed to.
    fn next_instance(&self, call: RecoveryCall) -> Result<Instance> {
        if self.inner.agree_pending.get() {
            return Err(Error::InvalidArgument(
                "an agreement on this communicator is still pending (wait for the iagree first)"
                    .into(),
            ));
        }
        let seq = self.inner.rt.b.next_agree_seq(self.inner.ft_seq.get());
        self.inner.ft_seq.set(seq);
        Ok(Instance {
            call,
            ctx: self.inner.ctx,
            seq,
            members: self.agreement_members(),
            got: Vec::new(),
        })
    }

    /// Non-blocking [`Comm::agree_detailed`]: contributes `flags` now and
    /// returns a handle to test or wait for the outcome. Until it completes,
    /// no other agreement (agree, shrink, spawn, merge, replace) may start
    /// on this communicator (`InvalidArgument`).
    ///
    /// # Errors
    /// `InvalidArgument` while another agreement is pending; `CommFreed`,
    /// `Finalized`.
    pub fn iagree(&self, flags: u32) -> Result<PendingAgreement> {
        self.live_ft()?;
        let inst = self.start_agreement(RecoveryCall::Agree, [flags, 0, 0, 0])?;
        Ok(PendingAgreement {
            comm: self.clone(),
            inst: Some(inst),
        })
    }

    /// The outcome of an agreement from its records.
    fn outcome(&self, got: &[Record]) -> Agreement {
        let mut and = u32::MAX;
        let mut failed = Vec::new();
        let mut finalized = Vec::new();
        for (i, c) in got.iter().enumerate() {
            match c {
                Record::Contributed { words, .. } => and &= words[0],
                Record::Failed => failed.push(i),
                Record::Finalized => finalized.push(Rank(i as i32)),
            }
        }
        let b = &self.inner.rt.b;
        // The acknowledged list only when someone failed: on MPI it is a
        // `MPIX_Comm_get_failed` (a group made and freed), a cost a healthy
        // agreement need not pay.
        let acked = if failed.is_empty() {
            Vec::new()
        } else {
            b.acked(self.inner.ctx)
        };
        let unacked = failed
            .iter()
            .filter(|&&i| !acked.contains(&b.member_id(&self.inner.st, i)))
            .map(|&i| Rank(i as i32))
            .collect();
        Agreement {
            flags: and,
            failed: failed.into_iter().map(|i| Rank(i as i32)).collect(),
            unacked,
            finalized,
        }
    }
}

/// The words of each member's contribution, `None` for a member that ended
/// (failed or finalized) without contributing.
pub(crate) fn words(got: &[Record]) -> Vec<Option<[u32; 4]>> {
    got.iter()
        .map(|r| match r {
            Record::Contributed { words, .. } => Some(*words),
            Record::Failed | Record::Finalized => None,
        })
        .collect()
}

/// The decision on the kinds of call of an agreement instance: a function
/// of the records alone (every member that decides reads the same ones), so
/// either every member's call matched every contributor's, or every
/// deciding member gets `RecoveryMismatch`.
///
/// # Errors
/// `RecoveryMismatch` naming the lowest contributor whose call was not
/// `mine`.
pub(crate) fn check_calls(mine: RecoveryCall, got: &[Record]) -> Result<()> {
    for (r, rec) in got.iter().enumerate() {
        if let Record::Contributed { kind, .. } = *rec {
            if kind != mine.code() {
                return Err(Error::RecoveryMismatch {
                    expected: mine,
                    found: RecoveryCall::from_code(kind),
                    rank: Rank(r as i32),
                });
            }
        }
    }
    Ok(())
}

/// One agreement instance under way at this process.
#[derive(Debug)]
struct Instance {
    call: RecoveryCall,
    ctx: u32,
    seq: u32,
    /// Members (group, then remote group).
    members: usize,
    /// Each member's record once read: empty until the first poll (an
    /// agreement [`Comm::settle`] gets whole from the backend never
    /// reads per member).
    got: Vec<Option<Record>>,
}

/// A blocking agreement's outcome.
enum Settled {
    /// Every member's record is this one.
    Uniform(Record),
    /// Each member's (group, then remote group).
    Each(Vec<Record>),
}

impl Settled {
    /// One record for each of the agreement's `members`.
    fn records(self, members: usize) -> Vec<Record> {
        match self {
            Settled::Uniform(rec) => vec![rec; members],
            Settled::Each(got) => got,
        }
    }
}

impl Instance {
    /// Reads what is still missing; true once every member is settled.
    fn poll(&mut self, b: &Active, c: &Comm) -> bool {
        if self.got.len() != self.members {
            self.got = vec![None; self.members];
        }
        b.poll_agreement(self.ctx, self.seq, &c.inner.st, &mut self.got)
    }

    /// The records, once every member is settled.
    fn finish(self, c: &Comm) -> Result<Vec<Record>> {
        c.inner.agree_pending.set(false);
        let got: Vec<Record> = self
            .got
            .into_iter()
            .map(|g| g.unwrap_or(Record::Failed))
            .collect();
        check_calls(self.call, &got)?;
        Ok(got)
    }
}

/// A non-blocking agreement started by [`Comm::iagree`].
#[derive(Debug)]
pub struct PendingAgreement {
    comm: Comm,
    inst: Option<Instance>,
}

impl PendingAgreement {
    /// The outcome if the agreement has completed (it then no longer
    /// blocks other agreements on the communicator).
    ///
    /// # Errors
    /// `RecoveryMismatch` (at every member) if a member made another
    /// recovery call in this one's place; `RequestInactive` if the
    /// outcome was already returned.
    pub fn test(&mut self) -> Result<Option<Agreement>> {
        let Some(inst) = self.inst.as_mut() else {
            return Err(Error::RequestInactive);
        };
        let done = {
            let b = &self.comm.inner.rt.b;
            b.progress();
            inst.poll(b, &self.comm)
        };
        if !done {
            return Ok(None);
        }
        let Some(inst) = self.inst.take() else {
            return Err(Error::RequestInactive);
        };
        let got = inst.finish(&self.comm)?;
        Ok(Some(self.comm.outcome(&got)))
    }

    /// Waits for the outcome.
    ///
    /// # Errors
    /// As [`PendingAgreement::test`].
    pub fn wait(mut self) -> Result<Agreement> {
        let Some(mut inst) = self.inst.take() else {
            return Err(Error::RequestInactive);
        };
        let c = &self.comm;
        c.inner.rt.b.wait_until(|b| inst.poll(b, c));
        let got = inst.finish(&self.comm)?;
        Ok(self.comm.outcome(&got))
    }
}

impl Drop for PendingAgreement {
    fn drop(&mut self) {
        // An agreement cannot be withdrawn: the contribution is public.
        // Dropping the handle completes it here.
        if let Some(mut inst) = self.inst.take() {
            let c = &self.comm;
            c.inner.rt.b.wait_until(|b| inst.poll(b, c));
            let _ = inst.finish(&self.comm);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(call: RecoveryCall) -> Record {
        Record::Contributed {
            kind: call.code(),
            words: [0; 4],
        }
    }

    #[test]
    fn matching_calls_and_ended_members_pass() {
        let got = [
            c(RecoveryCall::Shrink),
            Record::Failed,
            c(RecoveryCall::Shrink),
            Record::Finalized,
        ];
        assert_eq!(check_calls(RecoveryCall::Shrink, &got), Ok(()));
        // Nobody contributed but this process's own record is not there
        // either: nothing to mismatch.
        assert_eq!(
            check_calls(RecoveryCall::Agree, &[Record::Failed, Record::Finalized]),
            Ok(())
        );
    }

    #[test]
    fn a_mismatch_is_seen_by_every_contributor_from_the_same_records() {
        // Rank 0 agrees, rank 1 replaces, rank 2 died: the issue's case.
        let got = [
            c(RecoveryCall::Agree),
            c(RecoveryCall::ReplaceFailed),
            Record::Failed,
        ];
        assert_eq!(
            check_calls(RecoveryCall::Agree, &got),
            Err(Error::RecoveryMismatch {
                expected: RecoveryCall::Agree,
                found: RecoveryCall::ReplaceFailed,
                rank: Rank(1),
            })
        );
        assert_eq!(
            check_calls(RecoveryCall::ReplaceFailed, &got),
            Err(Error::RecoveryMismatch {
                expected: RecoveryCall::ReplaceFailed,
                found: RecoveryCall::Agree,
                rank: Rank(0),
            })
        );
    }

    #[test]
    fn every_kind_round_trips_through_its_code_and_codes_differ() {
        let all = [
            RecoveryCall::Agree,
            RecoveryCall::Shrink,
            RecoveryCall::Spawn,
            RecoveryCall::Merge,
            RecoveryCall::ReplaceFailed,
            RecoveryCall::IntercommCreate,
        ];
        for (i, a) in all.iter().enumerate() {
            assert_eq!(RecoveryCall::from_code(a.code()), *a);
            assert_ne!(a.code(), 0, "0 is an unwritten record's kind");
            for b in &all[i + 1..] {
                assert_ne!(a.code(), b.code());
            }
        }
    }

    #[test]
    fn words_of_ended_members_are_none() {
        let got = [
            Record::Contributed {
                kind: 1,
                words: [1, 2, 3, 4],
            },
            Record::Failed,
            Record::Finalized,
        ];
        assert_eq!(words(&got), [Some([1, 2, 3, 4]), None, None]);
    }
}
