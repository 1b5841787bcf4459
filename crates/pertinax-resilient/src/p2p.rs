//! What the flat and the hierarchical communicators share: the
//! point-to-point communicator of every rank (never revoked nor shrunk:
//! traffic between live ranks works beside dead ones), rank checks, and
//! the failed ranks the failure detector knows.

use std::cell::Cell;

use bytemuck::Pod;
use pertinax::{Comm, Rank, Source, Status};

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

/// The point-to-point communicator with its original ranks.
#[derive(Debug)]
pub(crate) struct P2p {
    comm: Comm,
    to_orig: Vec<usize>,
    from_orig: Vec<Option<usize>>,
    /// Failures of `comm` (a prefix of `get_failed`'s order) that
    /// any-source receives have reported.
    reported: Cell<usize>,
}

impl P2p {
    /// The live members of `base` (whose rank `i` is original rank
    /// `base_to_orig[i]` among `size`). Collective (one agreement).
    pub(crate) fn new(base: &Comm, base_to_orig: &[usize], size: usize) -> Result<P2p, Error> {
        let (comm, v) = base.shrink_gather(0)?;
        let to_orig = survivors(base_to_orig, &v);
        Ok(P2p {
            from_orig: inverse(&to_orig, size),
            to_orig,
            comm,
            reported: Cell::new(0),
        })
    }

    pub(crate) fn comm(&self) -> &Comm {
        &self.comm
    }

    /// Original rank of each rank of [`P2p::comm`].
    pub(crate) fn to_orig(&self) -> &[usize] {
        &self.to_orig
    }

    /// The rank in [`P2p::comm`] of original rank `o`, if it was alive at
    /// creation.
    pub(crate) fn rank_of(&self, o: usize) -> Option<usize> {
        self.from_orig.get(o).copied().flatten()
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
    pub(crate) fn send<T: Pod>(
        &self,
        policy: &Policy,
        buf: &[T],
        dest: Rank,
        tag: i32,
    ) -> Result<Outcome, Error> {
        let d = check_rank(dest, self.from_orig.len())?;
        let Some(p) = self.from_orig[d] else {
            return policy.answer(Kind::Send, d);
        };
        match self.comm.send(buf, p, tag) {
            Ok(()) => Ok(Outcome::default()),
            Err(e) if e.is_fault() => policy.answer(Kind::Send, d),
            Err(e) => Err(e.into()),
        }
    }

    /// Receives from original rank `src` (or any); a failed source goes to
    /// the policy. The status names the original rank.
    pub(crate) fn recv<T: Pod>(
        &self,
        policy: &Policy,
        buf: &mut [T],
        src: Source,
        tag: i32,
    ) -> Result<Received, Error> {
        let status = |mut s: Status| {
            if let Some(&o) = self.to_orig.get(s.source.index()) {
                s.source = Rank(o as i32);
            }
            s
        };
        match src {
            Source::Rank(r) => {
                let s = check_rank(r, self.from_orig.len())?;
                let Some(p) = self.from_orig[s] else {
                    return policy.answer(Kind::Recv, s).map(|_| None);
                };
                match self.comm.recv(buf, p, tag) {
                    Ok(st) => Ok(Some(status(st))),
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
                match self.comm.recv(buf, Source::Any, tag) {
                    Ok(st) => return Ok(Some(status(st))),
                    // A failure while waiting: reported by the next round.
                    Err(pertinax::Error::ProcFailedPending { .. }) => {
                        self.comm.ack_failed(usize::MAX)?;
                    }
                    Err(e) => return Err(e.into()),
                }
            },
        }
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
