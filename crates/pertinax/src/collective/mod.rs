//! Collective operations, built only from point-to-point messages (or,
//! on a backend with its own collectives, run by it).
//!
//! Every collective compiles to a [`schedule::Schedule`] of point-to-point
//! rounds on the communicator's collective context; blocking calls run the
//! schedule to completion, `i`-prefixed calls return a [`Request`] that
//! advances whenever the process is inside the library (waiting on any
//! request included). On a backend that runs collectives itself (the MPI
//! backend: MPI's own, so that a cluster's tuned algorithms run), the
//! arguments are checked here as below, then the call is handed to it
//! (`OwnCollectives::start_coll`) instead of compiling a schedule, behind the same
//! request keys.
//!
//! # Determinism
//!
//! Reductions (`reduce`, `allreduce`, `scan`, `exscan`, `reduce_scatter`)
//! combine operands in a fixed order that depends only on the communicator
//! size and the count, never on message timing: every rank of an
//! `allreduce` gets bitwise the same result, and repeating a run with the
//! same inputs gives bitwise the same result, floating point included. The
//! order is rank order (lower ranks on the left), so non-commutative
//! operations are correct too. MPI promises neither: on the MPI backend,
//! non-commutative operations still combine in rank order (MPI's rule),
//! so an associative one gives the same result, but float `sum`/`prod`
//! group as MPI's algorithm does and may differ in the last bits between
//! roots, variants, and (MPI does not promise otherwise) ranks.
//!
//! # Errors
//!
//! Arguments are checked locally before anything is sent, and each check
//! is a typed error at the rank that fails it:
//! - checks every rank makes (a bad root, a wrong buffer length of a
//!   non-rooted collective): when every rank passes the same invalid
//!   argument, no rank communicates and none is left waiting;
//! - checks only the root makes (gather's receive buffer, scatter's send
//!   buffer, v-layouts, reduce's receive length): the root still takes
//!   part, draining what is sent to it, sending empty messages where data
//!   was due, or reducing into scratch, so the other ranks never hang: they
//!   return normally (gather, reduce) or with a count-mismatch
//!   `InvalidArgument` (scatter);
//! - a mismatch that only the data reveals (ranks disagreeing on a count)
//!   is an `InvalidArgument` at the ranks that see it; the longer message is
//!   still taken, so its sender is not left waiting.
//!
//! On the MPI backend a root that rejects its arguments takes part in MPI's
//! collective with scratch (a v-layout it rejected is replaced by its
//! counts, missing ones 0, packed in rank order), so nobody hangs; the
//! others return normally, and a scatter's ranks get zeros where the
//! native backend reports a count mismatch. Ranks disagreeing on a count
//! are erroneous in MPI (its error, or data cut short), not checked.
//!
//! # Example
//! ```
//! use pertinax::prelude::*;
//!
//! let u = pertinax::init()?;
//! let world = u.world();
//! let mut sum = [0.0f64; 2];
//! world.allreduce(&[1.0, 2.0], &mut sum, &Op::sum())?;
//! assert_eq!(sum, [world.size() as f64, 2.0 * world.size() as f64]);
//! # Ok::<(), pertinax::Error>(())
//! ```

pub(crate) mod algo;
mod fast;
mod lent;
mod reduce;
mod run;
pub(crate) mod schedule;

use bytemuck::Pod;
use pertinax_os::lend;

use crate::backend::{Backend, Coll, CollKind, CollOut, MatchSpec, OwnCollectives, ReqKey, Store};
use crate::comm::Comm;
use crate::error::{Error, Result};
use crate::op::ErasedOp;
use crate::request::{Request, Scope};
use crate::types::Rank;
use crate::wait::Backoff;
pub use lent::LentCollective;
use schedule::Builder;

fn bytes<T: Pod>(s: &[T]) -> &[u8] {
    bytemuck::cast_slice(s)
}
fn bytes_mut<T: Pod>(s: &mut [T]) -> &mut [u8] {
    bytemuck::cast_slice_mut(s)
}

fn bad(what: &str, detail: String) -> Error {
    Error::InvalidArgument(format!("{what}: {detail}"))
}

/// Checks `counts`/`displs` of a v-collective against a buffer of `len`
/// elements and returns them in bytes.
fn layout(
    what: &str,
    n: usize,
    counts: &[usize],
    displs: &[usize],
    len: usize,
    elem: usize,
) -> Result<(Vec<usize>, Vec<usize>)> {
    if counts.len() != n || displs.len() != n {
        return Err(bad(
            what,
            format!(
                "{} counts and {} displacements for {n} ranks",
                counts.len(),
                displs.len()
            ),
        ));
    }
    for (i, (&c, &d)) in counts.iter().zip(displs).enumerate() {
        if d.checked_add(c).is_none_or(|end| end > len) {
            return Err(bad(
                what,
                format!("block {i} ({c} elements at {d}) does not fit a buffer of {len}"),
            ));
        }
    }
    Ok((
        counts.iter().map(|c| c * elem).collect(),
        displs.iter().map(|d| d * elem).collect(),
    ))
}

fn uniform(n: usize, len: usize) -> (Vec<usize>, Vec<usize>) {
    (vec![len; n], (0..n).map(|i| i * len).collect())
}

impl Comm {
    fn next_seq(&self) -> u32 {
        let s = self.inner.coll_seq.get();
        self.inner.coll_seq.set(s.wrapping_add(1));
        s
    }

    fn check_root(&self, root: Rank) -> Result<u32> {
        self.check_rank(root)
    }

    /// Whether the backend runs the collectives itself (MPI's own
    /// collectives): then every call is described to it as a [`Coll`]
    /// instead of compiling a schedule, and the straight-line fast paths
    /// are skipped.
    #[inline]
    fn own(&self) -> bool {
        self.inner.caps.own_collectives
    }

    /// Compiles and starts a schedule over lent buffers: `out` is the
    /// caller's output (index 0), `inp` its input (index 1, or the output
    /// again when in place). On a backend with its own collectives, starts
    /// `kind` there instead (`build` is not called).
    fn start_coll<'s>(
        &self,
        s: &'s lend::Scope<'s, '_>,
        inp: Option<&'s [u8]>,
        out: &'s mut [u8],
        op: Option<ErasedOp>,
        kind: CollKind,
        build: impl FnOnce(&mut Builder, usize, usize),
    ) -> Result<ReqKey> {
        self.start_lent(inp.map(|x| s.lend(x)), s.lend_mut(out), op, kind, build)
    }

    /// [`Comm::start_coll`] on buffers already lent.
    fn start_lent(
        &self,
        inp: Option<lend::Lent>,
        out: lend::LentMut,
        op: Option<ErasedOp>,
        kind: CollKind,
        build: impl FnOnce(&mut Builder, usize, usize),
    ) -> Result<ReqKey> {
        self.coll_live()?;
        if self.own() {
            return self.inner.rt.b.start_coll(Coll {
                ctx: self.inner.ctx + 1,
                kind,
                inp,
                out: CollOut::Lent(out),
                op,
            });
        }
        let mut b = Builder::new(self.inner.rank, self.size() as u32);
        let o = b.buf(Store::Out(out));
        let i = match inp {
            Some(x) => b.buf(Store::In(x)),
            None => o,
        };
        if let Some(op) = op {
            b.set_op(op);
        }
        build(&mut b, i, o);
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

    /// Runs a collective to completion.
    fn run_coll(
        &self,
        inp: Option<&[u8]>,
        out: &mut [u8],
        op: Option<ErasedOp>,
        kind: CollKind,
        build: impl FnOnce(&mut Builder, usize, usize),
    ) -> Result<()> {
        let rt = &self.inner.rt;
        let mut bo = Backoff::default();
        lend::scope(
            |s| {
                if self.own() {
                    // The backend's blocking form (MPI's `MPI_Allreduce`,
                    // which never matches an `MPI_Iallreduce`): every
                    // member reaches it through this call.
                    self.coll_live()?;
                    return rt
                        .b
                        .run_coll(Coll {
                            ctx: self.inner.ctx + 1,
                            kind,
                            inp: inp.map(|x| s.lend(x)),
                            out: CollOut::Lent(s.lend_mut(out)),
                            op,
                        })
                        .map(|_| ());
                }
                let k = self.start_coll(s, inp, out, op, kind, build)?;
                rt.b.wait(k).map(|_| ())
            },
            || rt.drain_step(&mut bo),
        )
    }

    fn nonblocking<'s>(
        &self,
        s: &'s Scope<'s, '_>,
        inp: Option<&'s [u8]>,
        out: &'s mut [u8],
        op: Option<ErasedOp>,
        kind: CollKind,
        build: impl FnOnce(&mut Builder, usize, usize),
    ) -> Result<Request<'s>> {
        let k = self.start_coll(s, inp, out, op, kind, build)?;
        Ok(Request::new(self.inner.rt.clone(), k))
    }

    /// On a backend with its own collectives: takes part in `kind` with
    /// `inp` and thrown-away output of `out` bytes (a root that rejected
    /// its arguments, so that nobody is left waiting), then reports `err`.
    fn reject_own(
        &self,
        inp: &[u8],
        op: Option<ErasedOp>,
        kind: CollKind,
        out: usize,
        err: Error,
    ) -> Result<()> {
        self.coll_live()?;
        let rt = &self.inner.rt;
        let mut bo = Backoff::default();
        lend::scope(
            |s| {
                rt.b.run_coll(Coll {
                    ctx: self.inner.ctx + 1,
                    kind,
                    inp: Some(s.lend(inp)),
                    out: CollOut::Scratch(out),
                    op,
                })
                .map(|_| ())
            },
            || rt.drain_step(&mut bo),
        )?;
        Err(err)
    }

    /// The layout a root that rejected `counts` uses to take part anyway:
    /// one count per rank (missing ones 0), its own set to `mine` bytes,
    /// blocks packed in rank order. Returns the lengths, offsets and total.
    fn salvage(
        &self,
        counts: &[usize],
        elem: usize,
        mine: usize,
    ) -> (Vec<usize>, Vec<usize>, usize) {
        let n = self.size();
        let mut lens: Vec<usize> = (0..n)
            .map(|i| counts.get(i).map_or(0, |c| c.saturating_mul(elem)))
            .collect();
        lens[self.inner.rank as usize] = mine;
        let mut offs = Vec::with_capacity(n);
        let mut at = 0usize;
        for l in &lens {
            offs.push(at);
            at = at.saturating_add(*l);
        }
        (lens, offs, at)
    }

    /// Gathers equal-sized `mine` from every rank, in rank order (used by
    /// communicator creation).
    pub(crate) fn allgather_internal(&self, mine: &[u8]) -> Result<Vec<u8>> {
        let mut all = vec![0u8; mine.len() * self.size()];
        self.allgather(mine, &mut all)?;
        Ok(all)
    }

    /// A gather root that rejected its arguments still takes the one
    /// message every other rank sends (phase 1 of collective `seq`), so
    /// that nobody is left waiting, then reports `err`.
    fn reject_gather(&self, seq: u32, err: Error) -> Result<()> {
        for r in 0..self.size() as u32 {
            if r == self.inner.rank {
                continue;
            }
            let spec = MatchSpec {
                ctx: self.inner.ctx + 1,
                src: Some(r),
                tag: Some(schedule::tag(seq, 1)),
            };
            let st = self.probe_spec(spec)?;
            let mut sink = vec![0u8; st.len];
            self.raw_recv(spec, &mut sink, 1)?;
        }
        Err(err)
    }

    /// A scatter root that rejected its arguments sends every other rank an
    /// empty message (phase 1 of collective `seq`): ranks that expected data
    /// see a count mismatch instead of waiting forever. Then reports `err`.
    fn reject_scatter(&self, seq: u32, err: Error) -> Result<()> {
        for r in 0..self.size() as u32 {
            if r != self.inner.rank {
                self.raw_send(self.inner.ctx + 1, &[], r, schedule::tag(seq, 1))?;
            }
        }
        Err(err)
    }

    // ---- barrier, bcast -------------------------------------------------

    /// Blocks until every rank has entered the barrier (dissemination
    /// algorithm, ⌈log2 n⌉ rounds).
    ///
    /// # Errors
    /// `CommFreed`, `Finalized`, or a peer's failure.
    pub(crate) fn barrier(&self) -> Result<()> {
        if self.own() {
            return self.run_coll(None, &mut [], None, CollKind::Barrier, |_, _, _| {});
        }
        self.coll_live()?;
        let seq = self.next_seq();
        self.fast_barrier(seq)
    }

    /// Non-blocking [`Communicator::barrier`](crate::Communicator::barrier).
    ///
    /// # Errors
    /// As [`Communicator::barrier`](crate::Communicator::barrier).
    pub(crate) fn ibarrier<'s>(&self, s: &'s Scope<'s, '_>) -> Result<Request<'s>> {
        self.nonblocking(s, None, &mut [], None, CollKind::Barrier, |b, _, _| {
            algo::barrier(b)
        })
    }

    /// Sends `buf` of `root` to every rank's `buf` (binomial tree).
    ///
    /// # Errors
    /// `InvalidRank` for a bad root; a count that differs from the root's is
    /// reported as `InvalidArgument` by the ranks that receive it.
    pub(crate) fn bcast<T: Pod>(&self, buf: &mut [T], root: impl Into<Rank>) -> Result<()> {
        let root = self.check_root(root.into())?;
        let len = std::mem::size_of_val(buf);
        if self.own() {
            return self.run_coll(
                None,
                bytes_mut(buf),
                None,
                CollKind::Bcast { root },
                |_, _, _| {},
            );
        }
        if self.fast_path(len) {
            self.coll_live()?;
            let seq = self.next_seq();
            return self.fast_bcast(bytes_mut(buf), root, seq);
        }
        crate::request::scope(|s| self.ibcast(s, buf, root)?.wait().map(|_| ()))
    }

    /// Non-blocking [`CommunicatorExt::bcast`](crate::CommunicatorExt::bcast).
    ///
    /// # Errors
    /// As [`CommunicatorExt::bcast`](crate::CommunicatorExt::bcast).
    pub(crate) fn ibcast<'s, T: Pod>(
        &self,
        s: &'s Scope<'s, '_>,
        buf: &'s mut [T],
        root: impl Into<Rank>,
    ) -> Result<Request<'s>> {
        let root = self.check_root(root.into())?;
        let len = std::mem::size_of_val(buf);
        self.nonblocking(
            s,
            None,
            bytes_mut(buf),
            None,
            CollKind::Bcast { root },
            |b, _, o| algo::bcast(b, o, len, root),
        )
    }

    // ---- gather, scatter ------------------------------------------------

    /// Collects every rank's `send` into `recv` at `root`, in rank order
    /// (`recv` holds `size × send.len()` elements there; elsewhere it may be
    /// empty).
    ///
    /// # Errors
    /// `InvalidRank` for a bad root, `InvalidArgument` for a wrong `recv`
    /// length at the root.
    pub(crate) fn gather<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        root: impl Into<Rank>,
    ) -> Result<()> {
        let root = self.check_root(root.into())?;
        let n = self.size();
        let len = std::mem::size_of_val(send);
        if self.inner.rank == root && recv.len() != n * send.len() {
            let err = bad(
                "gather",
                format!(
                    "receive holds {} elements, {n} × {} needed",
                    recv.len(),
                    send.len()
                ),
            );
            if self.own() {
                let kind = CollKind::Gather { root, len };
                return self.reject_own(bytes(send), None, kind, n * len, err);
            }
            self.coll_live()?;
            let seq = self.next_seq();
            return self.reject_gather(seq, err);
        }
        let (lens, offs) = uniform(n, len);
        let kind = CollKind::Gather { root, len };
        self.run_coll(Some(bytes(send)), bytes_mut(recv), None, kind, |b, i, o| {
            algo::gatherv(b, i, o, &lens, &offs, root)
        })
    }

    /// Gather with a count and displacement (in elements) per rank, used at
    /// the root; `send.len()` must equal this rank's count.
    ///
    /// # Errors
    /// `InvalidRank`, or `InvalidArgument` for counts/displacements that do
    /// not fit (checked at the root).
    pub(crate) fn gatherv<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
        displs: &[usize],
        root: impl Into<Rank>,
    ) -> Result<()> {
        let root = self.check_root(root.into())?;
        let n = self.size();
        let elem = std::mem::size_of::<T>();
        let (lens, offs) = if self.inner.rank == root {
            let checked =
                layout("gatherv", n, counts, displs, recv.len(), elem).and_then(|(l, o)| {
                    if l[root as usize] != std::mem::size_of_val(send) {
                        return Err(bad(
                            "gatherv",
                            "the root's count differs from its send length".into(),
                        ));
                    }
                    Ok((l, o))
                });
            match checked {
                Ok(lo) => lo,
                Err(err) => {
                    if self.own() {
                        let (lens, offs, total) =
                            self.salvage(counts, elem, std::mem::size_of_val(send));
                        let kind = CollKind::Gatherv { root, lens, offs };
                        return self.reject_own(bytes(send), None, kind, total, err);
                    }
                    self.coll_live()?;
                    let seq = self.next_seq();
                    return self.reject_gather(seq, err);
                }
            }
        } else {
            let mut l = vec![0; n];
            l[self.inner.rank as usize] = std::mem::size_of_val(send);
            (l, vec![0; n])
        };
        let kind = CollKind::Gatherv {
            root,
            lens: lens.clone(),
            offs: offs.clone(),
        };
        self.run_coll(Some(bytes(send)), bytes_mut(recv), None, kind, |b, i, o| {
            algo::gatherv(b, i, o, &lens, &offs, root)
        })
    }

    /// Sends block `i` of `send` at `root` (`size × recv.len()` elements) to
    /// rank `i`'s `recv`.
    ///
    /// # Errors
    /// `InvalidRank` for a bad root, `InvalidArgument` for a wrong `send`
    /// length at the root.
    pub(crate) fn scatter<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        root: impl Into<Rank>,
    ) -> Result<()> {
        let root = self.check_root(root.into())?;
        let n = self.size();
        let len = std::mem::size_of_val(recv);
        if self.inner.rank == root && send.len() != n * recv.len() {
            let err = bad(
                "scatter",
                format!(
                    "send holds {} elements, {n} × {} needed",
                    send.len(),
                    recv.len()
                ),
            );
            if self.own() {
                // Zeros where the data was due.
                let zeros = vec![0u8; n * len];
                let kind = CollKind::Scatter { root, len };
                return self.reject_own(&zeros, None, kind, len, err);
            }
            self.coll_live()?;
            let seq = self.next_seq();
            return self.reject_scatter(seq, err);
        }
        let (lens, offs) = uniform(n, len);
        let kind = CollKind::Scatter { root, len };
        self.run_coll(Some(bytes(send)), bytes_mut(recv), None, kind, |b, i, o| {
            algo::scatterv(b, i, o, &lens, &offs, root, 1)
        })
    }

    /// Scatter with a count and displacement (in elements) per rank, used at
    /// the root; `recv.len()` must equal this rank's count.
    ///
    /// # Errors
    /// `InvalidRank`, or `InvalidArgument` for counts/displacements that do
    /// not fit (checked at the root).
    pub(crate) fn scatterv<T: Pod>(
        &self,
        send: &[T],
        counts: &[usize],
        displs: &[usize],
        recv: &mut [T],
        root: impl Into<Rank>,
    ) -> Result<()> {
        let root = self.check_root(root.into())?;
        let n = self.size();
        let elem = std::mem::size_of::<T>();
        let (lens, offs) = if self.inner.rank == root {
            match layout("scatterv", n, counts, displs, send.len(), elem) {
                Ok(lo) => lo,
                Err(err) => {
                    if self.own() {
                        // Zeros where the data was due.
                        let mine = std::mem::size_of_val(recv);
                        let (lens, offs, total) = self.salvage(counts, elem, mine);
                        let zeros = vec![0u8; total];
                        let kind = CollKind::Scatterv { root, lens, offs };
                        return self.reject_own(&zeros, None, kind, mine, err);
                    }
                    self.coll_live()?;
                    let seq = self.next_seq();
                    return self.reject_scatter(seq, err);
                }
            }
        } else {
            let mut l = vec![0; n];
            l[self.inner.rank as usize] = std::mem::size_of_val(recv);
            (l, vec![0; n])
        };
        let kind = CollKind::Scatterv {
            root,
            lens: lens.clone(),
            offs: offs.clone(),
        };
        self.run_coll(Some(bytes(send)), bytes_mut(recv), None, kind, |b, i, o| {
            algo::scatterv(b, i, o, &lens, &offs, root, 1)
        })
    }

    // ---- allgather, alltoall --------------------------------------------

    /// Every rank's `send`, in rank order, in every rank's `recv`
    /// (`size × send.len()` elements): recursive doubling for small blocks
    /// on power-of-two sizes, ring otherwise.
    ///
    /// # Errors
    /// `InvalidArgument` for a wrong `recv` length.
    pub(crate) fn allgather<T: Pod>(&self, send: &[T], recv: &mut [T]) -> Result<()> {
        if self.own() {
            self.allgather_check(send.len(), recv.len())?;
            let kind = CollKind::Allgather {
                len: std::mem::size_of_val(send),
            };
            return self.run_coll(Some(bytes(send)), bytes_mut(recv), None, kind, |_, _, _| {});
        }
        // Straight-line when everything this rank sends is small (at most
        // half of `recv`, in recursive doubling's last step).
        if self.fast_path(std::mem::size_of_val(recv)) {
            self.allgather_check(send.len(), recv.len())?;
            self.coll_live()?;
            let seq = self.next_seq();
            return self.fast_allgather(bytes(send), bytes_mut(recv), seq);
        }
        crate::request::scope(|s| self.iallgather(s, send, recv)?.wait().map(|_| ()))
    }

    /// [`CommunicatorExt::allgather`](crate::CommunicatorExt::allgather) in place: this rank's block is already at its
    /// position in `buf`.
    ///
    /// # Errors
    /// `InvalidArgument` if `buf` is not a multiple of the size.
    pub(crate) fn allgather_in_place<T: Pod>(&self, buf: &mut [T]) -> Result<()> {
        let n = self.size();
        if !buf.len().is_multiple_of(n) {
            return Err(bad(
                "allgather",
                format!("{} elements are not {n} equal blocks", buf.len()),
            ));
        }
        let (lens, offs) = uniform(n, std::mem::size_of_val(buf) / n);
        let kind = CollKind::Allgather { len: lens[0] };
        self.run_coll(None, bytes_mut(buf), None, kind, |b, i, o| {
            algo::allgatherv(b, i, o, &lens, &offs)
        })
    }

    /// Non-blocking [`CommunicatorExt::allgather`](crate::CommunicatorExt::allgather).
    ///
    /// # Errors
    /// As [`CommunicatorExt::allgather`](crate::CommunicatorExt::allgather).
    pub(crate) fn iallgather<'s, T: Pod>(
        &self,
        s: &'s Scope<'s, '_>,
        send: &'s [T],
        recv: &'s mut [T],
    ) -> Result<Request<'s>> {
        let n = self.size();
        self.allgather_check(send.len(), recv.len())?;
        let (lens, offs) = uniform(n, std::mem::size_of_val(send));
        let kind = CollKind::Allgather { len: lens[0] };
        self.nonblocking(
            s,
            Some(bytes(send)),
            bytes_mut(recv),
            None,
            kind,
            |b, i, o| algo::allgatherv(b, i, o, &lens, &offs),
        )
    }

    fn allgather_check(&self, send: usize, recv: usize) -> Result<()> {
        let n = self.size();
        if recv != n * send {
            return Err(bad(
                "allgather",
                format!("receive holds {recv} elements, {n} × {send} needed"),
            ));
        }
        Ok(())
    }

    /// Allgather with a count and displacement (in elements) per rank;
    /// `send.len()` must equal this rank's count.
    ///
    /// # Errors
    /// `InvalidArgument` for counts/displacements that do not fit.
    pub(crate) fn allgatherv<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
        displs: &[usize],
    ) -> Result<()> {
        let n = self.size();
        let elem = std::mem::size_of::<T>();
        let (lens, offs) = layout("allgatherv", n, counts, displs, recv.len(), elem)?;
        if lens[self.inner.rank as usize] != std::mem::size_of_val(send) {
            return Err(bad(
                "allgatherv",
                "this rank's count differs from its send length".into(),
            ));
        }
        let kind = CollKind::Allgatherv {
            lens: lens.clone(),
            offs: offs.clone(),
        };
        self.run_coll(Some(bytes(send)), bytes_mut(recv), None, kind, |b, i, o| {
            algo::allgatherv(b, i, o, &lens, &offs)
        })
    }

    /// Block `i` of every rank's `send` goes to rank `i`, which stores the
    /// block from rank `j` at block `j` of `recv`.
    ///
    /// # Errors
    /// `InvalidArgument` unless both buffers are the same multiple of the
    /// size.
    pub(crate) fn alltoall(&self, send: &[u8], recv: &mut [u8], elem: usize) -> Result<()> {
        if self.own() {
            let (lens, _) = self.alltoall_layout(send.len(), recv.len(), elem)?;
            let kind = CollKind::Alltoall { len: lens[0] };
            return self.run_coll(Some(send), recv, None, kind, |_, _, _| {});
        }
        // Straight-line when the whole exchange is small (its blocks are
        // then below `algo::ALLTOALL_LARGE`, as the schedule's small branch).
        if self.fast_path(send.len()) {
            self.alltoall_layout(send.len(), recv.len(), elem)?;
            self.coll_live()?;
            let seq = self.next_seq();
            return self.fast_alltoall(send, recv, seq);
        }
        crate::request::scope(|s| {
            self.ialltoall_elems(s, send, recv, elem)?
                .wait()
                .map(|_| ())
        })
    }

    /// The blocks of an all-to-all of `s` bytes sent and `r` received, in
    /// `elem`-byte elements: `size` equal blocks of whole elements.
    fn alltoall_layout(&self, s: usize, r: usize, elem: usize) -> Result<(Vec<usize>, Vec<usize>)> {
        let n = self.size();
        let elem = elem.max(1);
        if s != r || !s.is_multiple_of(n * elem) {
            let (s, r) = (s / elem, r / elem);
            return Err(bad(
                "alltoall",
                format!("send has {s} elements, receive {r}; both must be {n} equal blocks"),
            ));
        }
        Ok(uniform(n, s / n))
    }

    /// [`Comm::ialltoall`] over bytes holding `elem`-byte elements.
    pub(crate) fn ialltoall_elems<'s>(
        &self,
        s: &'s Scope<'s, '_>,
        send: &'s [u8],
        recv: &'s mut [u8],
        elem: usize,
    ) -> Result<Request<'s>> {
        let (lens, offs) = self.alltoall_layout(send.len(), recv.len(), elem)?;
        let kind = CollKind::Alltoall { len: lens[0] };
        self.nonblocking(s, Some(send), recv, None, kind, |b, i, o| {
            algo::alltoallv(b, i, o, &lens, &offs, &lens, &offs)
        })
    }

    /// All-to-all with counts and displacements (in elements) per rank for
    /// both buffers.
    ///
    /// # Errors
    /// `InvalidArgument` for counts/displacements that do not fit.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn alltoallv<T: Pod>(
        &self,
        send: &[T],
        scounts: &[usize],
        sdispls: &[usize],
        recv: &mut [T],
        rcounts: &[usize],
        rdispls: &[usize],
    ) -> Result<()> {
        let n = self.size();
        let elem = std::mem::size_of::<T>();
        let (sl, so) = layout("alltoallv (send)", n, scounts, sdispls, send.len(), elem)?;
        let (rl, ro) = layout("alltoallv (receive)", n, rcounts, rdispls, recv.len(), elem)?;
        let me = self.inner.rank as usize;
        if sl[me] != rl[me] {
            return Err(bad(
                "alltoallv",
                "the block to self differs in send and receive counts".into(),
            ));
        }
        let kind = CollKind::Alltoallv {
            sl: sl.clone(),
            so: so.clone(),
            rl: rl.clone(),
            ro: ro.clone(),
        };
        self.run_coll(Some(bytes(send)), bytes_mut(recv), None, kind, |b, i, o| {
            algo::alltoallv(b, i, o, &sl, &so, &rl, &ro)
        })
    }
}
