//! What the flat and the hierarchical communicators share: the
//! point-to-point communicator of every rank (never revoked nor shrunk:
//! traffic between live ranks works beside dead ones), rank checks, and
//! the failed ranks the failure detector knows.

use pertinax::CommunicatorExt as _;
use std::cell::Cell;

use pertinax::{
    Backoff, Comm, Communicator, Completion, Pending, PendingOp, Rank, Scope, Source, Status, Tag,
    TagMatch,
};

use crate::policy::{Kind, Policy};
use crate::{Error, Outcome, Received};

/// The live members of `map` (original ranks) after an agreement whose
/// values are `vals` (`None`: failed).
pub(crate) fn survivors<T>(map: &[usize], vals: &[Option<T>]) -> Vec<usize> {
    map.iter()
        .zip(vals)
        .filter(|(_, v)| v.is_some())
        .map(|(&o, _)| o)
        .collect()
}

/// Original rank → position in `map`, for `size` original ranks.
pub(crate) fn inverse(map: &[usize], size: usize) -> Vec<Option<usize>> {
    let mut inv = vec![None; size];
    for (i, &o) in map.iter().enumerate() {
        inv[o] = Some(i);
    }
    inv
}

/// `r` as an index among `size` ranks.
pub(crate) fn check_rank(r: Rank, size: usize) -> Result<usize, Error> {
    if r.0 < 0 || r.index() >= size {
        return Err(pertinax::Error::InvalidRank { rank: r, size }.into());
    }
    Ok(r.index())
}

/// The point-to-point methods of [`pertinax::Communicator`] for a flavour
/// whose `p2p` field is a [`P2p`] and whose `cfg.policy` is its policy
/// (flat and hierarchical alike), expanded inside their `impl` blocks.
macro_rules! forward_p2p {
    () => {
        fn send_bytes(&self, buf: &[u8], dest: Rank, tag: Tag) -> Result<Outcome, Error> {
            self.p2p.send(&self.cfg.policy, buf, dest, tag)
        }

        fn recv_bytes(
            &self,
            buf: &mut [u8],
            elem: usize,
            src: Source,
            tag: TagMatch,
        ) -> Result<Received, Error> {
            self.p2p.recv(&self.cfg.policy, buf, elem, src, tag)
        }

        fn probe(&self, src: Source, tag: TagMatch) -> Result<Received, Error> {
            self.p2p.probe(&self.cfg.policy, src, tag)
        }

        fn iprobe(&self, src: Source, tag: TagMatch) -> Result<Received, Error> {
            self.p2p.iprobe(&self.cfg.policy, src, tag)
        }

        fn isend_bytes<'s>(
            &self,
            scope: &'s Scope<'s, '_>,
            buf: &'s [u8],
            dest: Rank,
            tag: Tag,
        ) -> Result<PendingOp<'s, Error>, Error> {
            self.p2p.isend(&self.cfg.policy, scope, buf, dest, tag)
        }

        fn irecv_bytes<'s>(
            &self,
            scope: &'s Scope<'s, '_>,
            buf: &'s mut [u8],
            elem: usize,
            src: Source,
            tag: TagMatch,
        ) -> Result<PendingOp<'s, Error>, Error> {
            self.p2p.irecv(&self.cfg.policy, scope, buf, elem, src, tag)
        }
    };
}
pub(crate) use forward_p2p;

/// Why a resilient communicator does not offer `op`.
pub(crate) fn not_repaired(op: &str) -> Error {
    Error::Unsupported(format!(
        "{op} on a resilient communicator: no repair is defined for it yet (run it on a plain \
         communicator, or build it from the repaired collectives)"
    ))
}

/// Why a resilient communicator does not offer the ULFM call `op`.
pub(crate) fn repairs_itself(op: &str) -> Error {
    Error::Unsupported(format!(
        "{op} on a resilient communicator: it detects, agrees on and excludes failures itself \
         (see failed_ranks and each operation's Outcome)"
    ))
}

/// Why a resilient communicator does not offer `op` (its
/// [`pertinax::Communicator::unsupported`]): the ULFM calls because it
/// repairs itself, the rest because no repair is defined for them yet.
pub(crate) fn unsupported(op: &'static str) -> Error {
    match op {
        "ack_failed" | "agree" | "shrink" => repairs_itself(op),
        "ssend" | "issend" | "bsend" => not_repaired(&format!("{op} (use send or isend)")),
        _ if op.starts_with('i') => not_repaired(&format!("{op} (use an NbScope)")),
        _ => not_repaired(op),
    }
}

/// The point-to-point communicator with its original ranks.
#[derive(Debug)]
pub(crate) struct P2p {
    comm: Comm,
    /// The processes of the original ranks, in order (what
    /// `get_failed`'s group is made of).
    orig: pertinax::Group,
    to_orig: Vec<usize>,
    from_orig: Vec<Option<usize>>,
    /// Failures of `comm` (a prefix of `get_failed`'s order) that
    /// any-source receives have reported.
    reported: Cell<usize>,
}

impl P2p {
    /// The live members of `base` (whose rank `i` is original rank
    /// `base_to_orig[i]` among `size`). Collective (one agreement).
    pub(crate) fn new(
        base: &Comm,
        base_to_orig: &[usize],
        size: usize,
        orig: pertinax::Group,
    ) -> Result<P2p, Error> {
        let (comm, v) = base.shrink_gather(0)?;
        let to_orig = survivors(base_to_orig, &v);
        Ok(P2p {
            orig,
            from_orig: inverse(&to_orig, size),
            to_orig,
            comm,
            reported: Cell::new(0),
        })
    }

    pub(crate) fn comm(&self) -> &Comm {
        &self.comm
    }

    /// The processes of the original ranks.
    pub(crate) fn orig(&self) -> &pertinax::Group {
        &self.orig
    }

    /// The group of the failed original ranks `failed` (sorted).
    pub(crate) fn failed_group(&self, failed: &[Rank]) -> Result<pertinax::Group, Error> {
        Ok(self.orig.incl(failed)?)
    }

    /// Original rank of each rank of [`P2p::comm`].
    pub(crate) fn to_orig(&self) -> &[usize] {
        &self.to_orig
    }

    /// This process's original rank.
    pub(crate) fn me(&self) -> usize {
        self.to_orig[self.comm.rank().index()]
    }

    /// `known` (original ranks) with every failure the detector reported,
    /// sorted, as ranks.
    pub(crate) fn failed(&self, mut known: Vec<usize>) -> Vec<Rank> {
        if let Ok(g) = self.comm.get_failed() {
            let rs: Vec<Rank> = (0..g.size()).map(|r| Rank(r as i32)).collect();
            if let Ok(t) = g.translate_ranks(&rs, &self.comm.group()) {
                known.extend(t.into_iter().flatten().map(|r| self.to_orig[r.index()]));
            }
        }
        known.sort_unstable();
        known.dedup();
        known.into_iter().map(|o| Rank(o as i32)).collect()
    }

    /// Sends to original rank `dest`; a failed destination goes to the
    /// policy.
    pub(crate) fn send(
        &self,
        policy: &Policy,
        buf: &[u8],
        dest: Rank,
        tag: Tag,
    ) -> Result<Outcome, Error> {
        let d = check_rank(dest, self.from_orig.len())?;
        let Some(p) = self.from_orig[d] else {
            return policy.answer(Kind::Send, d);
        };
        match self.comm.send(buf, p, tag) {
            Ok(done) => Ok(done),
            // Revoked by a layer above (see `Resilient::revoke`): not a
            // failure of the peer.
            Err(pertinax::Error::Revoked) => Err(pertinax::Error::Revoked.into()),
            Err(e) if e.is_fault() => policy.answer(Kind::Send, d),
            Err(e) => Err(e.into()),
        }
    }

    /// A status with the original rank of its source.
    fn status(&self, mut s: Status) -> Status {
        if let Some(&o) = self.to_orig.get(s.source.index()) {
            s.source = Rank(o as i32);
        }
        s
    }

    /// Receives from original rank `src` (or any); a failed source goes to
    /// the policy. The status names the original rank.
    pub(crate) fn recv(
        &self,
        policy: &Policy,
        buf: &mut [u8],
        elem: usize,
        src: Source,
        tag: TagMatch,
    ) -> Result<Received, Error> {
        self.matching(policy, src, tag, |from| {
            Communicator::recv_bytes(&self.comm, buf, elem, from, tag)
        })
    }

    /// Waits for a message from original rank `src` (or any) and describes
    /// it; a failed source goes to the policy for receives.
    pub(crate) fn probe(
        &self,
        policy: &Policy,
        src: Source,
        tag: TagMatch,
    ) -> Result<Received, Error> {
        self.matching(policy, src, tag, |from| {
            Communicator::probe(&self.comm, from, tag)
        })
    }

    /// Describes a message from original rank `src` (or any) if one is
    /// here; a failed source goes to the policy for receives (`None` when
    /// it says ignore).
    pub(crate) fn iprobe(
        &self,
        policy: &Policy,
        src: Source,
        tag: TagMatch,
    ) -> Result<Received, Error> {
        let from = match src {
            Source::Rank(r) => {
                let s = check_rank(r, self.from_orig.len())?;
                let Some(p) = self.from_orig[s] else {
                    return policy.answer(Kind::Recv, s).map(|_| None);
                };
                match self.comm.iprobe(p.into(), tag) {
                    Ok(st) => return Ok(st.map(|st| self.status(st))),
                    Err(pertinax::Error::Revoked) => return Err(pertinax::Error::Revoked.into()),
                    Err(e) if e.is_fault() => return policy.answer(Kind::Recv, s).map(|_| None),
                    Err(e) => return Err(e.into()),
                }
            }
            Source::Any => Source::Any,
        };
        match self.comm.iprobe(from, tag) {
            Ok(Some(st)) => Ok(Some(self.status(st))),
            Ok(None) | Err(pertinax::Error::ProcFailedPending { .. }) => {
                match self.unreported()? {
                    Some(o) => {
                        self.reported.set(self.reported.get() + 1);
                        policy.answer(Kind::Recv, o).map(|_| None)
                    }
                    None => {
                        self.comm.ack_failed(usize::MAX)?;
                        Ok(None)
                    }
                }
            }
            Err(e) => Err(e.into()),
        }
    }

    /// A receive or probe (`op`, given the source in [`P2p::comm`]) from
    /// original rank `src` or any, with the policy for failed sources.
    fn matching(
        &self,
        policy: &Policy,
        src: Source,
        tag: TagMatch,
        mut op: impl FnMut(Source) -> Result<Option<Status>, pertinax::Error>,
    ) -> Result<Received, Error> {
        match src {
            Source::Rank(r) => {
                let s = check_rank(r, self.from_orig.len())?;
                let Some(p) = self.from_orig[s] else {
                    return policy.answer(Kind::Recv, s).map(|_| None);
                };
                match op(Source::Rank(Rank(p as i32))) {
                    Ok(st) => Ok(st.map(|st| self.status(st))),
                    Err(pertinax::Error::Revoked) => Err(pertinax::Error::Revoked.into()),
                    Err(e) if e.is_fault() => policy.answer(Kind::Recv, s).map(|_| None),
                    Err(e) => Err(e.into()),
                }
            }
            Source::Any => loop {
                // A failure that no any-source receive of this rank has
                // reported yet: whether it was the sender this receive
                // waits for cannot be known, so unless a matching message
                // is already here, the policy for a failed source applies,
                // once per failure.
                if let Some(o) = self.unreported()? {
                    match self.comm.iprobe(Source::Any, tag) {
                        Ok(Some(_)) => {} // the receive below takes it
                        Ok(None) | Err(pertinax::Error::ProcFailedPending { .. }) => {
                            self.reported.set(self.reported.get() + 1);
                            return policy.answer(Kind::Recv, o).map(|_| None);
                        }
                        Err(e) => return Err(e.into()),
                    }
                }
                match op(Source::Any) {
                    Ok(st) => return Ok(st.map(|st| self.status(st))),
                    // A failure while waiting: reported by the next round.
                    Err(pertinax::Error::ProcFailedPending { .. }) => {
                        self.comm.ack_failed(usize::MAX)?;
                    }
                    Err(e) => return Err(e.into()),
                }
            },
        }
    }

    /// Starts a send to original rank `dest` inside `scope`; its failure
    /// goes to the policy when waited for.
    pub(crate) fn isend<'s>(
        &self,
        policy: &Policy,
        scope: &'s Scope<'s, '_>,
        buf: &'s [u8],
        dest: Rank,
        tag: Tag,
    ) -> Result<PendingOp<'s, Error>, Error> {
        let d = check_rank(dest, self.from_orig.len())?;
        let Some(p) = self.from_orig[d] else {
            return Ok(PendingOp::new(Decided(Some(policy.answer(Kind::Send, d)))));
        };
        let req = self.comm.isend_bytes(scope, buf, Rank(p as i32), tag)?;
        Ok(PendingOp::new(PolicyReq {
            req,
            how: How {
                policy: *policy,
                kind: Kind::Send,
                peer: d,
                to_orig: None,
            },
            done: None,
        }))
    }

    /// Starts a receive from original rank `src` inside `scope`; its
    /// source's failure goes to the policy when waited for. Any-source
    /// non-blocking receives are not supported (their policy reports each
    /// failure once, which a pending receive cannot do).
    pub(crate) fn irecv<'s>(
        &self,
        policy: &Policy,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [u8],
        elem: usize,
        src: Source,
        tag: TagMatch,
    ) -> Result<PendingOp<'s, Error>, Error> {
        let Source::Rank(r) = src else {
            return Err(Error::Unsupported(
                "an any-source non-blocking receive on a resilient communicator (use recv)".into(),
            ));
        };
        let s = check_rank(r, self.from_orig.len())?;
        let Some(p) = self.from_orig[s] else {
            return Ok(PendingOp::new(Decided(Some(policy.answer(Kind::Recv, s)))));
        };
        let req = self
            .comm
            .irecv_bytes(scope, buf, elem, Source::Rank(Rank(p as i32)), tag)?;
        Ok(PendingOp::new(PolicyReq {
            req,
            how: How {
                policy: *policy,
                kind: Kind::Recv,
                peer: s,
                to_orig: Some(self.to_orig.clone()),
            },
            done: None,
        }))
    }

    /// The first failure (in the order this rank learned of them) that no
    /// any-source receive has reported, as an original rank. (Reports are
    /// counted here, not by the core's acknowledgements, which other code
    /// may make on this communicator.)
    fn unreported(&self) -> Result<Option<usize>, Error> {
        let failed = self.comm.get_failed()?;
        let n = self.reported.get();
        if n >= failed.size() {
            return Ok(None);
        }
        let at = failed.translate_ranks(&[Rank(n as i32)], &self.comm.group())?;
        Ok(at
            .first()
            .copied()
            .flatten()
            .and_then(|r| self.to_orig.get(r.index()).copied()))
    }
}

/// A pending operation whose result was decided when it was posted (its
/// peer had failed already: the policy's answer).
struct Decided(Option<Result<Outcome, Error>>);

impl Pending for Decided {
    type Output = Completion;
    type Error = Error;

    fn is_active(&self) -> bool {
        self.0.is_some()
    }
    fn is_done(&mut self) -> bool {
        true
    }
    fn has_failed(&mut self) -> bool {
        matches!(self.0, Some(Err(_)))
    }
    fn take(&mut self) -> Result<Completion, Error> {
        match self.0.take() {
            Some(r) => r.map(|outcome| Completion {
                status: None,
                outcome,
            }),
            None => Err(pertinax::Error::RequestInactive.into()),
        }
    }
    fn step(&self, b: &mut Backoff) {
        b.snooze();
    }
    fn cancel(&mut self) -> Result<bool, Error> {
        match self.0 {
            Some(_) => Ok(false),
            None => Err(pertinax::Error::RequestInactive.into()),
        }
    }
}

/// A core request on the point-to-point communicator whose peer's failure
/// goes to the policy.
struct PolicyReq<'s> {
    req: PendingOp<'s, pertinax::Error>,
    how: How,
    /// The result, once the request completed and the policy answered
    /// (kept until taken).
    done: Option<Result<Completion, Error>>,
}

/// What [`PolicyReq`] does with its request's result.
struct How {
    policy: Policy,
    kind: Kind,
    /// The peer's original rank.
    peer: usize,
    /// For a receive: original ranks, for the status.
    to_orig: Option<Vec<usize>>,
}

impl How {
    fn map(&self, r: Result<Completion, pertinax::Error>) -> Result<Completion, Error> {
        match r {
            Ok(mut c) => {
                match (c.status.as_mut(), &self.to_orig) {
                    (Some(st), Some(map)) => {
                        if let Some(&o) = map.get(st.source.index()) {
                            st.source = Rank(o as i32);
                        }
                    }
                    _ => c.status = None,
                }
                Ok(c)
            }
            Err(pertinax::Error::Revoked) => Err(pertinax::Error::Revoked.into()),
            Err(e) if e.is_fault() => {
                self.policy
                    .answer(self.kind, self.peer)
                    .map(|outcome| Completion {
                        status: None,
                        outcome,
                    })
            }
            Err(e) => Err(e.into()),
        }
    }
}

impl Pending for PolicyReq<'_> {
    type Output = Completion;
    type Error = Error;

    fn is_active(&self) -> bool {
        self.done.is_some() || self.req.is_active()
    }
    fn is_done(&mut self) -> bool {
        if self.done.is_none() && self.req.is_active() {
            if !self.req.is_done() {
                return false;
            }
            self.done = Some(self.how.map(self.req.take()));
        }
        true
    }
    fn has_failed(&mut self) -> bool {
        matches!(self.done, Some(Err(_)))
    }
    fn take(&mut self) -> Result<Completion, Error> {
        match self.done.take() {
            Some(r) => r,
            None => self.how.map(self.req.wait_mut()),
        }
    }
    fn step(&self, b: &mut Backoff) {
        self.req.step(b);
    }
    fn cancel(&mut self) -> Result<bool, Error> {
        match self.done {
            Some(_) => Ok(false),
            None => Ok(self.req.cancel()?),
        }
    }
}
