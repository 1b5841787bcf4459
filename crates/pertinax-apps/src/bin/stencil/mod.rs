//! The distributed iteration of `pertinax-stencil`, over any
//! communicator: LULESH's pattern of six non-blocking face exchanges per
//! iteration, then, as LULESH's time-step constraint, one `allreduce`
//! (the largest change of a cell). With `collectives`, every other
//! collective of the `Communicator` trait too (barrier, bcast, reduce,
//! gather, scatter, allgather, alltoall, on small per-rank values), their
//! results folded into [`State::acc`]: what `pertinax-msglog` must serve
//! to a rank behind the front line.
//!
//! A message carries one face of the sender's block, and its tag is the
//! direction it travels ([`tag`]): the face `f` a rank sends goes to its
//! neighbour across `f` with tag `f`, and the neighbour receives it from
//! the rank across its own `f.opposite()` with the same tag. No wildcard:
//! every receive names its source and tag. A rank sends exactly one
//! message per (neighbour, tag) per iteration and waits for all its
//! receives before the next one, and messages from one sender never
//! overtake each other, so iteration `i`'s faces meet iteration `i`'s
//! receives.

use pertinax::{Communicator, CommunicatorExt, Op, Rank, Scope, Tag};
use pertinax_apps::stencil::{Block, Decomposition, Face, Grid};
use serde::{Deserialize, Serialize};

/// The first of the six tags ([`tag`]).
const TAG_BASE: i32 = 4100;

/// The tag of a face travelling across `f` (out of the sender's block
/// through its face `f`).
pub fn tag(f: Face) -> Tag {
    Tag(TAG_BASE + f.index() as i32)
}

/// What a rank knows of the problem: the grid, the process grid, its
/// block and its neighbours.
#[derive(Clone, Debug)]
pub struct Problem {
    /// The process grid (and the grid).
    pub decomp: Decomposition,
    /// This rank's block.
    pub block: Block,
    /// The rank across each face ([`Face::index`] order); `None` on the
    /// grid's sides.
    pub neighbours: [Option<Rank>; 6],
}

impl Problem {
    /// Rank `rank`'s view of `grid` over `ranks` ranks.
    ///
    /// # Errors
    /// When the grid cannot be decomposed for `ranks` ranks (see
    /// [`Decomposition::new`]) or `rank` is not below `ranks`.
    pub fn new(grid: Grid, ranks: usize, rank: usize) -> anyhow::Result<Problem> {
        let decomp = Decomposition::new(grid, ranks)?;
        let block = decomp
            .block(rank)
            .ok_or_else(|| anyhow::anyhow!("rank {rank} is not below {ranks}"))?;
        let neighbours = Face::ALL.map(|f| decomp.neighbour(rank, f).map(Rank::from));
        Ok(Problem {
            decomp,
            block,
            neighbours,
        })
    }
}

/// A rank's state between iterations: its block's interior.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct State {
    /// The block's cells, x fastest (the halo is rebuilt each iteration).
    pub u: Vec<f64>,
    /// The largest change of a cell in the last iteration, over the
    /// whole grid (the `allreduce`).
    pub dmax: f64,
    /// A digest of every collective's result so far (with
    /// `collectives`; the `allreduce` always).
    pub acc: u64,
}

impl State {
    /// The block at the start.
    pub fn initial(p: &Problem) -> State {
        State {
            u: p.block.initial(),
            dmax: 0.0,
            acc: 0,
        }
    }
}

/// One iteration: posts the receives of the up to six neighbour faces,
/// sends this block's faces, waits for all of them, then updates the
/// block. Every iteration exchanges the same way: `_it` (the
/// iteration's number) is not needed.
///
/// # Errors
/// The first error of a send, a receive or a wait. Before returning it,
/// the rank revokes `c` (a failed revocation is ignored), so that its
/// neighbours, which may be waiting for this rank's faces, return too;
/// the operations still pending are dropped with the scope. A state is
/// left unchanged by a failed iteration.
pub fn iterate<C: Communicator<Error = pertinax::Error> + ?Sized>(
    c: &C,
    p: &Problem,
    st: &mut State,
    it: u64,
    collectives: bool,
) -> Result<(), pertinax::Error> {
    let b = &p.block;
    let send: Vec<Vec<f64>> = Face::ALL
        .iter()
        .map(|&f| match p.neighbours[f.index()] {
            Some(_) => {
                let mut out = vec![0.0; b.face_len(f)];
                b.pack(&st.u, f, &mut out);
                out
            }
            None => Vec::new(),
        })
        .collect();
    let mut recv: Vec<Vec<f64>> = Face::ALL
        .iter()
        .map(|&f| match p.neighbours[f.index()] {
            Some(_) => vec![0.0; b.face_len(f)],
            None => Vec::new(),
        })
        .collect();
    pertinax::scope(|s| {
        let r = exchange(c, s, &p.neighbours, &send, &mut recv);
        if r.is_err() {
            // Inside the scope: its end waits for the operations still
            // lent, which a revocation ends.
            let _ = c.revoke();
        }
        r
    })?;
    let mut padded = vec![0.0; b.padded_len()];
    b.embed(&st.u, &mut padded);
    b.fill_boundary(&mut padded);
    for (f, data) in Face::ALL.into_iter().zip(&recv) {
        if p.neighbours[f.index()].is_some() {
            b.unpack(&mut padded, f, data);
        }
    }
    let old = st.u.clone();
    b.update(&padded, &mut st.u);
    let local = old
        .iter()
        .zip(&st.u)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    let mut dmax = [0.0f64];
    c.allreduce(&[local], &mut dmax, &Op::max())?;
    st.dmax = dmax[0];
    st.acc = fold(st.acc, &[dmax[0].to_bits()]);
    if collectives {
        st.acc = every_collective(c, st.acc, it)?;
    }
    Ok(())
}

/// Folds `words` into the digest `acc`.
fn fold(acc: u64, words: &[u64]) -> u64 {
    words.iter().fold(acc, |h, &w| {
        (h.rotate_left(17) ^ w).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    })
}

/// One call of every other collective, on small values that depend on the
/// rank, the iteration and the digest so far; returns the new digest
/// (the same at every rank: each result is folded in as every rank sees
/// it, the rooted ones after a bcast from their root).
fn every_collective<C: Communicator<Error = pertinax::Error> + ?Sized>(
    c: &C,
    acc: u64,
    it: u64,
) -> Result<u64, pertinax::Error> {
    let (me, n) = (c.rank().index(), c.size());
    let root = (it as usize) % n;
    let mine = fold(acc, &[me as u64, it]);
    c.barrier()?;
    let mut b = [if me == root { mine } else { 0 }];
    c.bcast(&mut b, root)?;
    let mut acc = fold(acc, &b);
    let mut red = [0u64];
    c.reduce(&[mine % 1000], &mut red, &Op::sum(), root)?;
    let mut all = if me == root {
        vec![0u64; n]
    } else {
        Vec::new()
    };
    c.gather(&[mine], &mut all, root)?;
    let parts: Vec<u64> = if me == root {
        (0..n as u64).map(|r| fold(red[0], &[r])).collect()
    } else {
        Vec::new()
    };
    let mut part = [0u64];
    c.scatter(&parts, &mut part, root)?;
    // Every rank folds what every rank got: the scattered parts by an
    // allgather, the root's reduce and gather by a bcast.
    let mut parts_all = vec![0u64; n];
    c.allgather(&part, &mut parts_all)?;
    let mut rooted = vec![0u64; n + 1];
    if me == root {
        rooted[0] = red[0];
        rooted[1..].copy_from_slice(&all);
    }
    c.bcast(&mut rooted, root)?;
    let out: Vec<u64> = (0..n as u64).map(|j| fold(mine, &[j])).collect();
    let mut back = vec![0u64; n];
    c.alltoall(&out, &mut back)?;
    let mut x = [fold(0, &back)];
    let mut xs = [0u64];
    c.allreduce(&x, &mut xs, &Op::bxor())?;
    x[0] = xs[0];
    acc = fold(acc, &parts_all);
    acc = fold(acc, &rooted);
    Ok(fold(acc, &x))
}

/// Posts the receives into `recv` and the sends of `send` (by face, for
/// the faces with a neighbour), then waits for each in turn.
fn exchange<'s, C: Communicator<Error = pertinax::Error> + ?Sized>(
    c: &C,
    s: &'s Scope<'s, '_>,
    neighbours: &[Option<Rank>; 6],
    send: &'s [Vec<f64>],
    recv: &'s mut [Vec<f64>],
) -> Result<(), pertinax::Error> {
    let mut ops = Vec::with_capacity(12);
    // The face arriving across f left the neighbour through its
    // f.opposite(): that is its direction of travel.
    for (f, buf) in Face::ALL.into_iter().zip(recv.iter_mut()) {
        if let Some(nb) = neighbours[f.index()] {
            ops.push(c.irecv(s, &mut buf[..], nb, tag(f.opposite()))?);
        }
    }
    for (f, buf) in Face::ALL.into_iter().zip(send) {
        if let Some(nb) = neighbours[f.index()] {
            ops.push(c.isend(s, &buf[..], nb, tag(f))?);
        }
    }
    for op in ops {
        op.wait()?;
    }
    Ok(())
}
