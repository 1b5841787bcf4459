//! Non-blocking collectives on buffers lent without a scope
//! ([`Comm::icollective_lent`]): for a foreign caller, such as the C ABI's
//! `MPI_Iallreduce`, whose buffers stay valid until the request completes
//! by its own contract. The same schedules as the scoped forms.

use std::collections::HashMap;
use std::ops::Range;

use pertinax_os::lend::{Lent, LentMut};

use super::{algo, bad, run, uniform, Builder};
use crate::backend::{Backend, CollKind, ReqKey, Store};
use crate::comm::Comm;
use crate::error::{Error, Result};
use crate::op::ErasedOp;
use crate::request::Request;
use crate::types::Rank;

/// Which collective [`Comm::icollective_lent`] starts.
#[derive(Debug)]
pub enum LentCollective {
    /// `ibarrier` (no buffers: `inp` none, `out` empty).
    Barrier,
    /// `ibcast` of `out` from `root` (`inp` none).
    Bcast {
        /// Whose buffer is sent.
        root: Rank,
    },
    /// `iallreduce` of `inp` into `out` (equal lengths).
    Allreduce {
        /// The reduction.
        op: ErasedOp,
    },
    /// `ireduce` of `inp` into `out` at `root` (equal lengths there, `out`
    /// empty elsewhere).
    Reduce {
        /// The reduction.
        op: ErasedOp,
        /// Who gets the result.
        root: Rank,
    },
    /// `iallgather` of `inp` into `out` (`size` parts).
    Allgather,
    /// `ialltoall` of `inp` (`size` parts) into `out` (as long).
    Alltoall,
    /// `igather` of `inp` into `out` at `root` (`size` parts there, `out`
    /// empty elsewhere).
    Gather {
        /// Who gets the parts.
        root: Rank,
    },
    /// `iscatter` of `inp` at `root` (`size` parts; none elsewhere) into
    /// `out`.
    Scatter {
        /// Whose parts are sent.
        root: Rank,
    },
    /// `igatherv`: at `root`, rank `i`'s `inp` lands at byte `offs[i]` of
    /// `out`, `lens[i]` bytes; elsewhere `lens`/`offs` are ignored.
    Gatherv {
        /// Who gets the parts.
        root: Rank,
        /// Bytes from each rank (at the root).
        lens: Vec<usize>,
        /// Where each rank's part goes in `out` (at the root).
        offs: Vec<usize>,
    },
    /// `iscatterv`: at `root`, bytes `offs[i]..offs[i] + lens[i]` of `inp`
    /// go to rank `i`'s `out`; elsewhere `lens`/`offs` are ignored.
    Scatterv {
        /// Whose parts are sent.
        root: Rank,
        /// Bytes to each rank (at the root).
        lens: Vec<usize>,
        /// Where each rank's part is in `inp` (at the root).
        offs: Vec<usize>,
    },
    /// `iallgatherv`: rank `i`'s `inp` (`lens[i]` bytes) at byte `offs[i]`
    /// of every `out`.
    Allgatherv {
        /// Bytes from each rank.
        lens: Vec<usize>,
        /// Where each rank's part goes.
        offs: Vec<usize>,
    },
    /// `ialltoallv`: bytes `so[i]..so[i] + sl[i]` of `inp` go to rank
    /// `i`, whose part lands at `ro[j]..ro[j] + rl[j]` of `out` at rank
    /// `j`... (MPI's `MPI_Alltoallv`, in bytes).
    Alltoallv {
        /// Send lengths and offsets per destination.
        sl: Vec<usize>,
        /// Send offsets.
        so: Vec<usize>,
        /// Receive lengths per source.
        rl: Vec<usize>,
        /// Receive offsets.
        ro: Vec<usize>,
    },
    /// `iscan` (`exclusive`: `iexscan`, rank 0's `out` left as it was) of
    /// `inp` into `out` (equal lengths).
    Scan {
        /// The reduction.
        op: ErasedOp,
        /// Exclusive scan.
        exclusive: bool,
    },
    /// `ireduce_scatter`: the reduction of every rank's `inp` (the sum of
    /// `lens` bytes), block `i` (`lens[i]` bytes, in rank order) into rank
    /// `i`'s `out`.
    ReduceScatter {
        /// The reduction.
        op: ErasedOp,
        /// Bytes of each rank's block.
        lens: Vec<usize>,
    },
    /// A neighbourhood exchange (MPI's `MPI_Neighbor_*`): each
    /// `(rank, range)` of `sends` sends that byte range of `inp` to that
    /// rank, each of `recvs` receives exactly that byte range of `out`
    /// from it (ranges of different receives must not overlap). Every
    /// member of the communicator starts one, as for any collective. The
    /// k-th send from a process to another matches the k-th receive the
    /// other lists from it (MPICH's order when a rank is a neighbour more
    /// than once). Not on a backend with its own collectives
    /// (`Unsupported`).
    Neighbor {
        /// Destinations and the ranges of `inp` sent to them.
        sends: Vec<(Rank, Range<usize>)>,
        /// Sources and the ranges of `out` they fill.
        recvs: Vec<(Rank, Range<usize>)>,
    },
}

/// Offsets of `lens` laid end to end.
fn packed(lens: &[usize]) -> Vec<usize> {
    lens.iter()
        .scan(0, |a, &l| {
            let o = *a;
            *a += l;
            Some(o)
        })
        .collect()
}

/// Whether every part `offs[i]..offs[i] + lens[i]` lies in `len` bytes
/// (and there is one per rank).
fn fits(n: usize, lens: &[usize], offs: &[usize], len: usize) -> bool {
    lens.len() == n
        && offs.len() == n
        && lens
            .iter()
            .zip(offs)
            .all(|(&l, &o)| o.checked_add(l).is_some_and(|e| e <= len))
}

impl Comm {
    /// Starts a non-blocking collective on lent buffers.
    ///
    /// # Errors
    /// As the scoped form's (`InvalidRank` for a bad root,
    /// `InvalidArgument` for lengths that do not fit), at once; a failure
    /// is the request's result.
    pub fn icollective_lent(
        &self,
        which: LentCollective,
        inp: Option<Lent>,
        out: LentMut,
    ) -> Result<Request<'static>> {
        let n = self.size();
        let in_len = inp.as_ref().map_or(0, Lent::len);
        let out_len = out.len();
        let k = match which {
            LentCollective::Barrier => {
                self.start_lent(None, out, None, CollKind::Barrier, |b, _, _| {
                    algo::barrier(b)
                })?
            }
            LentCollective::Bcast { root } => {
                let root = self.check_root(root)?;
                self.start_lent(None, out, None, CollKind::Bcast { root }, |b, _, o| {
                    algo::bcast(b, o, out_len, root)
                })?
            }
            LentCollective::Allreduce { op } => {
                let elem = op.elem_size().max(1);
                if in_len != out_len || !in_len.is_multiple_of(elem) {
                    return Err(bad(
                        "allreduce",
                        format!(
                            "send {in_len} and receive {out_len} bytes of {elem}-byte elements"
                        ),
                    ));
                }
                let count = in_len / elem;
                self.start_lent(inp, out, Some(op), CollKind::Allreduce, |b, i, o| {
                    algo::allreduce(b, i, o, count, elem)
                })?
            }
            LentCollective::Reduce { op, root } => {
                let root = self.check_root(root)?;
                let elem = op.elem_size().max(1);
                let at_root = self.rank().0 as u32 == root;
                if !in_len.is_multiple_of(elem) || (at_root && out_len != in_len) {
                    return Err(bad(
                        "reduce",
                        format!(
                            "send {in_len} and receive {out_len} bytes of {elem}-byte elements"
                        ),
                    ));
                }
                self.start_lent(inp, out, Some(op), CollKind::Reduce { root }, |b, i, o| {
                    algo::reduce(b, i, o, in_len, elem, root)
                })?
            }
            LentCollective::Allgather => {
                if out_len != n * in_len {
                    return Err(bad(
                        "allgather",
                        format!("receive holds {out_len} bytes, {n} × {in_len} needed"),
                    ));
                }
                let (lens, offs) = uniform(n, in_len);
                self.start_lent(
                    inp,
                    out,
                    None,
                    CollKind::Allgather { len: in_len },
                    |b, i, o| algo::allgatherv(b, i, o, &lens, &offs),
                )?
            }
            LentCollective::Alltoall => {
                if in_len != out_len || !in_len.is_multiple_of(n) {
                    return Err(bad(
                        "alltoall",
                        format!("send {in_len} and receive {out_len} bytes over {n} ranks"),
                    ));
                }
                let (lens, offs) = uniform(n, in_len / n);
                self.start_lent(
                    inp,
                    out,
                    None,
                    CollKind::Alltoall { len: lens[0] },
                    |b, i, o| algo::alltoallv(b, i, o, &lens, &offs, &lens, &offs),
                )?
            }
            LentCollective::Gather { root } => {
                let root = self.check_root(root)?;
                let at_root = self.rank().0 as u32 == root;
                if at_root && out_len != n * in_len {
                    return Err(bad(
                        "gather",
                        format!("receive holds {out_len} bytes, {n} × {in_len} needed"),
                    ));
                }
                let (lens, offs) = uniform(n, in_len);
                self.start_lent(
                    inp,
                    out,
                    None,
                    CollKind::Gather { root, len: in_len },
                    |b, i, o| algo::gatherv(b, i, o, &lens, &offs, root),
                )?
            }
            LentCollective::Scatter { root } => {
                let root = self.check_root(root)?;
                let at_root = self.rank().0 as u32 == root;
                if at_root && in_len != n * out_len {
                    return Err(bad(
                        "scatter",
                        format!("send holds {in_len} bytes, {n} × {out_len} needed"),
                    ));
                }
                let (lens, offs) = uniform(n, out_len);
                self.start_lent(
                    inp,
                    out,
                    None,
                    CollKind::Scatter { root, len: out_len },
                    |b, i, o| algo::scatterv(b, i, o, &lens, &offs, root, 1),
                )?
            }
            LentCollective::Gatherv { root, lens, offs } => {
                let root = self.check_root(root)?;
                let me = self.rank().index();
                let (lens, offs) = if me == root as usize {
                    if !fits(n, &lens, &offs, out_len) || lens[me] != in_len {
                        return Err(bad(
                            "gatherv",
                            format!(
                                "parts do not fit {out_len} bytes, or this rank's is not {in_len}"
                            ),
                        ));
                    }
                    (lens, offs)
                } else {
                    let mut l = vec![0; n];
                    l[me] = in_len;
                    (l, vec![0; n])
                };
                let kind = CollKind::Gatherv {
                    root,
                    lens: lens.clone(),
                    offs: offs.clone(),
                };
                self.start_lent(inp, out, None, kind, |b, i, o| {
                    algo::gatherv(b, i, o, &lens, &offs, root)
                })?
            }
            LentCollective::Scatterv { root, lens, offs } => {
                let root = self.check_root(root)?;
                let me = self.rank().index();
                let (lens, offs) = if me == root as usize {
                    if !fits(n, &lens, &offs, in_len) || lens[me] != out_len {
                        return Err(bad(
                            "scatterv",
                            format!(
                                "parts do not fit {in_len} bytes, or this rank's is not {out_len}"
                            ),
                        ));
                    }
                    (lens, offs)
                } else {
                    let mut l = vec![0; n];
                    l[me] = out_len;
                    (l, vec![0; n])
                };
                let kind = CollKind::Scatterv {
                    root,
                    lens: lens.clone(),
                    offs: offs.clone(),
                };
                self.start_lent(inp, out, None, kind, |b, i, o| {
                    algo::scatterv(b, i, o, &lens, &offs, root, 1)
                })?
            }
            LentCollective::Allgatherv { lens, offs } => {
                let me = self.rank().index();
                if !fits(n, &lens, &offs, out_len) || lens[me] != in_len {
                    return Err(bad(
                        "allgatherv",
                        format!("parts do not fit {out_len} bytes, or this rank's is not {in_len}"),
                    ));
                }
                let kind = CollKind::Allgatherv {
                    lens: lens.clone(),
                    offs: offs.clone(),
                };
                self.start_lent(inp, out, None, kind, |b, i, o| {
                    algo::allgatherv(b, i, o, &lens, &offs)
                })?
            }
            LentCollective::Alltoallv { sl, so, rl, ro } => {
                let me = self.rank().index();
                if !fits(n, &sl, &so, in_len) || !fits(n, &rl, &ro, out_len) || sl[me] != rl[me] {
                    return Err(bad(
                        "alltoallv",
                        format!("parts do not fit {in_len} and {out_len} bytes, or the block to self differs"),
                    ));
                }
                let kind = CollKind::Alltoallv {
                    sl: sl.clone(),
                    so: so.clone(),
                    rl: rl.clone(),
                    ro: ro.clone(),
                };
                self.start_lent(inp, out, None, kind, |b, i, o| {
                    algo::alltoallv(b, i, o, &sl, &so, &rl, &ro)
                })?
            }
            LentCollective::Scan { op, exclusive } => {
                let elem = op.elem_size().max(1);
                let what = if exclusive { "exscan" } else { "scan" };
                if in_len != out_len || !in_len.is_multiple_of(elem) {
                    return Err(bad(
                        what,
                        format!(
                            "send {in_len} and receive {out_len} bytes of {elem}-byte elements"
                        ),
                    ));
                }
                let kind = if exclusive {
                    CollKind::Exscan
                } else {
                    CollKind::Scan
                };
                self.start_lent(inp, out, Some(op), kind, |b, i, o| {
                    algo::scan(b, i, o, in_len, exclusive)
                })?
            }
            LentCollective::ReduceScatter { op, lens } => {
                let elem = op.elem_size().max(1);
                let me = self.rank().index();
                let total: usize = lens.iter().sum();
                if lens.len() != n
                    || in_len != total
                    || lens[me] != out_len
                    || lens.iter().any(|l| !l.is_multiple_of(elem))
                {
                    return Err(bad(
                        "reduce_scatter",
                        format!("send {in_len} bytes (blocks sum to {total}), receive {out_len}"),
                    ));
                }
                let offs = packed(&lens);
                let kind = CollKind::ReduceScatter { lens: lens.clone() };
                self.start_lent(inp, out, Some(op), kind, |b, i, o| {
                    algo::reduce_scatter(b, i, o, total, &lens, &offs)
                })?
            }
            LentCollective::Neighbor { sends, recvs } => {
                self.start_neighbor(inp, out, &sends, &recvs)?
            }
        };
        Ok(Request::new(self.inner.rt.clone(), k))
    }
}

impl Comm {
    /// Starts [`LentCollective::Neighbor`]: one round of every send and
    /// receive; the phase of a message is the number of messages listed
    /// before it between the same two processes in the same direction.
    fn start_neighbor(
        &self,
        inp: Option<Lent>,
        out: LentMut,
        sends: &[(Rank, Range<usize>)],
        recvs: &[(Rank, Range<usize>)],
    ) -> Result<ReqKey> {
        self.coll_live()?;
        if self.own() {
            return Err(Error::Unsupported {
                feature: "neighbourhood collectives on a backend with its own collectives",
            });
        }
        let in_len = inp.as_ref().map_or(out.len(), Lent::len);
        let out_len = out.len();
        let check = |list: &[(Rank, Range<usize>)], len: usize, what: &str| -> Result<Vec<u32>> {
            list.iter()
                .map(|(r, range)| {
                    if range.start > range.end || range.end > len {
                        return Err(bad(
                            "neighbor",
                            format!("{what} range {range:?} outside a buffer of {len} bytes"),
                        ));
                    }
                    self.check_rank(*r)
                })
                .collect()
        };
        let to = check(sends, in_len, "send")?;
        let from = check(recvs, out_len, "receive")?;
        let mut b = Builder::new(self.inner.rank, self.size() as u32);
        let o = b.buf(Store::Out(out));
        let i = match inp {
            Some(x) => b.buf(Store::In(x)),
            None => o,
        };
        b.round(0);
        let mut seen: HashMap<u32, u32> = HashMap::new();
        for (&r, (_, range)) in to.iter().zip(sends) {
            let k = seen.entry(r).or_insert(0);
            b.send_phase(r, i, range.clone(), *k);
            *k += 1;
        }
        seen.clear();
        for (&r, (_, range)) in from.iter().zip(recvs) {
            let k = seen.entry(r).or_insert(0);
            b.recv_phase(r, o, range.clone(), *k);
            *k += 1;
        }
        let sched = b.finish(
            self.inner.ctx + 1,
            self.inner.peers.clone(),
            self.next_seq(),
        );
        Ok(self
            .inner
            .rt
            .b
            .start_task(Box::new(run::Running::new(sched))))
    }
}
