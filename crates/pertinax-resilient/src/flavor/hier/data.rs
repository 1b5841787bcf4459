//! The data of the stages: a group's block, the global output spread
//! back, the first and last local stages of the collectives.

use super::*;
use pertinax::CommunicatorExt as _;
use pertinax::ErasedOp;

/// A gathered block: `[present][k presence bytes][k × n bytes]`.
pub(super) fn block_len(k: usize, n: usize) -> usize {
    1 + k + k * n
}

/// A reduced block: `[present][k presence bytes][the group's partial, n
/// bytes]`.
pub(super) fn reduced_len(k: usize, n: usize) -> usize {
    1 + k + n
}

impl Hierarchical {
    /// The master's block of its group's data (`data` in local rank order,
    /// `n` bytes each).
    pub(super) fn make_block(&self, l: &Sub, data: &[u8], n: usize) -> Vec<u8> {
        let mut b = vec![0u8; block_len(self.k, n)];
        b[0] = 1;
        let base = self.group * self.k;
        for (i, &o) in l.to_orig.iter().enumerate() {
            let j = o - base;
            b[1 + j] = 1;
            b[1 + self.k + j * n..1 + self.k + (j + 1) * n]
                .copy_from_slice(&data[i * n..(i + 1) * n]);
        }
        b
    }

    /// Spreads the global output of blocks into `[size presence][size × n]`.
    pub(super) fn unblock(&self, out: &[u8], n: usize) -> Vec<u8> {
        let bl = block_len(self.k, n);
        let mut r = vec![0u8; self.size + self.size * n];
        for (g, b) in out.chunks_exact(bl).enumerate() {
            if b[0] == 0 {
                continue;
            }
            for (j, o) in self.group_members(g).enumerate() {
                if b[1 + j] == 1 {
                    r[o] = 1;
                    r[self.size + o * n..self.size + (o + 1) * n]
                        .copy_from_slice(&b[1 + self.k + j * n..1 + self.k + (j + 1) * n]);
                }
            }
        }
        r
    }

    /// The ranks an agreed presence map lacks. They are no longer live
    /// members (dead, or left the program early): they join this rank's
    /// failed list, so that [`Communicator::failed_ranks`] lists every rank
    /// an outcome reports missing.
    pub(super) fn missing_of(&self, presence: &[u8]) -> Vec<Rank> {
        let missing: Vec<usize> = (0..self.size).filter(|&o| presence[o] == 0).collect();
        let mut st = self.st.borrow_mut();
        st.failed.extend(&missing);
        st.failed.sort_unstable();
        st.failed.dedup();
        missing.into_iter().map(|o| Rank(o as i32)).collect()
    }

    /// Combines the present groups' partial reductions in group order into
    /// `[size presence][result]`.
    pub(super) fn combine(&self, out: &[u8], nb: usize, op: &ErasedOp) -> Result<Vec<u8>, Error> {
        let bl = reduced_len(self.k, nb);
        let mut presence = vec![0u8; self.size];
        let mut acc: Option<Vec<u8>> = None;
        for (g, b) in out.chunks_exact(bl).enumerate() {
            if b[0] == 0 {
                continue;
            }
            for (j, o) in self.group_members(g).enumerate() {
                presence[o] = b[1 + j];
            }
            let part = b[1 + self.k..1 + self.k + nb].to_vec();
            match acc.as_mut() {
                None => acc = Some(part),
                Some(a) => op.combine_bytes(a, &part, true)?,
            }
        }
        let mut r = presence;
        match acc {
            Some(a) => r.extend_from_slice(&a),
            None => r.resize(self.size + nb, 0),
        }
        Ok(r)
    }

    /// The first stage of reductions: every group reduces to its master;
    /// the master's block is `[1][presence][partial]` (the partial in the
    /// first `nb` data bytes). Every member keeps a copy ([`Self::to_group`]).
    pub(super) fn reduce_local(
        &self,
        send: &[u8],
        op: &ErasedOp,
    ) -> Result<Option<Vec<u8>>, Error> {
        let nb = send.len();
        self.local_stage(false, |l| {
            let mut part = vec![0u8; nb];
            pertinax::Communicator::reduce_bytes(&l.comm, send, &mut part, op, pertinax::Rank(0))?;
            let block = (l.comm.rank().0 == 0).then(|| {
                let mut b = vec![0u8; reduced_len(self.k, nb)];
                b[0] = 1;
                for &o in &l.to_orig {
                    b[1 + o - self.group * self.k] = 1;
                }
                b[1 + self.k..1 + self.k + nb].copy_from_slice(&part);
                b
            });
            Self::to_group(l, block, reduced_len(self.k, nb))
        })
    }

    /// The first stage of gathers: every group gathers to its master, and
    /// every member keeps a copy of the block ([`Self::to_group`]).
    pub(super) fn gather_local(&self, send: &[u8]) -> Result<Option<Vec<u8>>, Error> {
        let n = send.len();
        self.local_stage(false, |l| {
            let block = if l.comm.rank().0 == 0 {
                let mut all = vec![0u8; l.comm.size() * n];
                l.comm.gather(send, &mut all, 0)?;
                Some(self.make_block(l, &all, n))
            } else {
                l.comm.gather(send, &mut [], 0)?;
                None
            };
            Self::to_group(l, block, block_len(self.k, n))
        })
    }

    /// Inside a group's first stage: the master (holding `block`, of
    /// `len` bytes) gives a copy of its group's contribution to every
    /// member, so that whichever member is the group's head when the
    /// global stage runs (the deputy after the master's death, or a new
    /// head after the deaths of both) contributes it: the group's
    /// survivors are never dropped for their master's death. `block` is
    /// `Some` at the master only; the result is `Some` everywhere.
    pub(super) fn to_group(
        l: &Sub,
        block: Option<Vec<u8>>,
        len: usize,
    ) -> Result<Option<Vec<u8>>, Error> {
        let mut b = block.unwrap_or_else(|| vec![0u8; len]);
        if b.len() != len {
            return Err(internal("a group block of the wrong size"));
        }
        l.comm.bcast(&mut b, 0)?;
        Ok(Some(b))
    }

    /// The global stage's output at a group's master in a last stage: its
    /// own (`out`, as a member of the global communicator), or the one a
    /// rejoin got it ([`Self::rejoin`]).
    pub(super) fn output(&self, out: Option<&[u8]>) -> Result<Vec<u8>, Error> {
        match out {
            Some(o) => Ok(o.to_vec()),
            None => self
                .st
                .borrow()
                .late_out
                .clone()
                .ok_or_else(|| internal("a master without the global stage's output")),
        }
    }

    /// The last stage: the master spreads `len` bytes of the global output
    /// (made by `make` from it) to its group.
    pub(super) fn spread_local(
        &self,
        out: Option<Vec<u8>>,
        len: usize,
        make: impl Fn(&[u8]) -> Result<Vec<u8>, Error>,
    ) -> Result<Vec<u8>, Error> {
        self.local_stage(true, |l| {
            let mut buf = if l.comm.rank().0 == 0 {
                make(&self.output(out.as_deref())?)?
            } else {
                vec![0u8; len]
            };
            if buf.len() != len {
                return Err(internal("a spread of the wrong size"));
            }
            l.comm.bcast(&mut buf, 0)?;
            Ok(buf)
        })
    }

    /// The last stage of rooted operations (reduce, gather), in every
    /// group: the master spreads the presence map of the global output
    /// (made by `make`: `[size presence][result]`) to its group, and hands
    /// the whole of it to the root if the root is in its group. Returns
    /// the presence map (the same at every survivor: it comes from the
    /// global stage's agreed output) and the made output at the root.
    pub(super) fn finish_rooted(
        &self,
        out: Option<Vec<u8>>,
        root: usize,
        make: impl Fn(&[u8]) -> Result<Vec<u8>, Error>,
    ) -> Result<(Vec<u8>, Option<Vec<u8>>), Error> {
        self.local_stage(true, |l| {
            let me = l.comm.rank().index();
            let made = if me == 0 {
                Some(make(&self.output(out.as_deref())?)?)
            } else {
                None
            };
            let mut presence = match &made {
                Some(m) => m
                    .get(..self.size)
                    .map(<[u8]>::to_vec)
                    .ok_or_else(|| internal("a rooted output shorter than its presence map"))?,
                None => vec![0u8; self.size],
            };
            l.comm.bcast(&mut presence, 0)?;
            let Some(rl) = l.rank_of(root) else {
                return Ok((presence, None));
            };
            if me == 0 {
                let made = made.ok_or_else(|| internal("a master without its output"))?;
                if rl == 0 {
                    return Ok((presence, Some(made)));
                }
                l.comm.send(&made, rl, TAG_ROOT)?;
                Ok((presence, None))
            } else if me == rl {
                let v = l.comm.recv_vec::<u8>(0, TAG_ROOT)?.map(|(v, _)| v);
                Ok((presence, v))
            } else {
                Ok((presence, None))
            }
        })
    }

    /// The outcome of a rooted operation from its agreed presence map:
    /// the root's fate is whether it contributed (every survivor decides
    /// alike), the missing ranks those that did not. `got` is the output
    /// at the root, which `store` copies into the user's buffer.
    pub(super) fn rooted_outcome(
        &self,
        kind: Kind,
        root: usize,
        presence: &[u8],
        got: Option<&[u8]>,
        store: impl FnOnce(&[u8]),
    ) -> Result<Outcome, Error> {
        if presence.get(root) != Some(&1) {
            return self.gone(kind, root);
        }
        if self.me == root {
            store(got.ok_or_else(|| internal("the root got no result"))?);
        }
        Ok(Outcome {
            skipped: None,
            missing: self.missing_of(presence),
        })
    }
}
