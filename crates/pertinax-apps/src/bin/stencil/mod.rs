//! The distributed iteration of `pertinax-stencil`, over any
//! communicator: LULESH's pattern of six non-blocking face exchanges per
//! iteration, no collective inside it.
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

use pertinax::{Communicator, CommunicatorExt, Rank, Scope, Tag};
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
}

impl State {
    /// The block at the start.
    pub fn initial(p: &Problem) -> State {
        State {
            u: p.block.initial(),
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
    _it: u64,
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
    b.update(&padded, &mut st.u);
    Ok(())
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
