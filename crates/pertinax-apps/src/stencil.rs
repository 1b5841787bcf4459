//! A 3-D seven-point stencil with LULESH's communication pattern: blocks
//! of a box-shaped grid on a 3-D grid of processes, a one-cell halo
//! exchanged with the up to six face neighbours every iteration.
//!
//! # Concepts
//!
//! - The **problem** is a [`Grid`] of `nx × ny × nz` cells with fixed
//!   values outside it (a Dirichlet boundary, [`Grid::boundary`]) and
//!   initial values inside ([`Grid::initial`]). Both come from an integer
//!   hash and are multiples of 2⁻²⁰ in `[0, 1)`: exact, the same on every
//!   machine.
//! - One **iteration** replaces every cell by a weighted average of itself
//!   and its six face neighbours ([`Block::update`]; the weights differ by
//!   axis, so a transposed exchange shows).
//! - The **process grid** ([`Decomposition`]) factors the number of
//!   ranks into `px × py × pz` as evenly as possible ([`dims_create`], as
//!   `MPI_Dims_create`) and splits each axis into contiguous ranges, the
//!   first ones one cell longer when the axis does not divide. Rank `r`
//!   sits at coordinates `(cx, cy, cz)` with `r = cx + px·(cy + py·cz)`.
//! - A rank's **block** ([`Block`]) keeps its cells (the *interior*,
//!   x fastest, then y, then z) and, for an iteration, a *padded* copy
//!   with a one-cell halo. The halo is filled from the neighbours' faces
//!   ([`Block::pack`] there, [`Block::unpack`] here) or, on the grid's
//!   sides, from the boundary ([`Block::fill_boundary`]). Edges and
//!   corners of the halo are never read.
//!
//! A distributed iteration computes, for every cell, the same
//! floating-point expression on the same values in the same order as
//! [`sequential`] (which is one block covering the whole grid), so the
//! results are bitwise equal. [`checksum`] digests a block so that the
//! blocks' digests combine (by xor) into the whole field's.
//!
//! # Example
//! ```
//! use pertinax_apps::stencil::{checksum, sequential, Block, Decomposition, Face, Grid};
//!
//! // Two blocks along x, exchanged by hand, against the sequential run.
//! let grid = Grid::new(6, 4, 3);
//! let d = Decomposition::new(grid, 2)?;
//! let blocks: Vec<Block> = (0..2).filter_map(|r| d.block(r)).collect();
//! let mut u: Vec<Vec<f64>> = blocks.iter().map(|b| b.initial()).collect();
//! for _ in 0..5 {
//!     let mut pads: Vec<Vec<f64>> = Vec::new();
//!     for (r, b) in blocks.iter().enumerate() {
//!         let mut pad = vec![0.0; b.padded_len()];
//!         b.embed(&u[r], &mut pad);
//!         b.fill_boundary(&mut pad);
//!         for f in Face::ALL {
//!             if let Some(nb) = d.neighbour(r, f) {
//!                 let mut face = vec![0.0; b.face_len(f)];
//!                 blocks[nb].pack(&u[nb], f.opposite(), &mut face);
//!                 b.unpack(&mut pad, f, &face);
//!             }
//!         }
//!         pads.push(pad);
//!     }
//!     for (r, b) in blocks.iter().enumerate() {
//!         b.update(&pads[r], &mut u[r]);
//!     }
//! }
//! let whole = sequential(grid, 5);
//! assert_eq!(u[0], blocks[0].extract(&whole));
//! assert_eq!(
//!     checksum(&blocks[0], &u[0]) ^ checksum(&blocks[1], &u[1]),
//!     checksum(&Block::whole(grid), &whole)
//! );
//! # Ok::<(), pertinax_apps::stencil::StencilError>(())
//! ```

use pertinax_wire::rng::mix;
use serde::{Deserialize, Serialize};

use crate::split::block as split;

/// Weight of the cell itself in [`Block::update`].
pub const W_CENTER: f64 = 0.25;
/// Weight of each x neighbour.
pub const W_X: f64 = 0.15;
/// Weight of each y neighbour.
pub const W_Y: f64 = 0.125;
/// Weight of each z neighbour (the weights add up to 1).
pub const W_Z: f64 = 0.1;

/// Why a decomposition cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StencilError {
    /// An axis of the grid has no cell.
    #[error("the grid {0:?} has an empty axis")]
    EmptyGrid([usize; 3]),
    /// No ranks to decompose for.
    #[error("cannot decompose a grid for 0 ranks")]
    NoRanks,
    /// The process grid has more processes than cells on some axis, so a
    /// block would be empty.
    #[error("{ranks} ranks as {dims:?} processes do not fit the grid {grid:?}")]
    TooManyRanks {
        /// The number of ranks.
        ranks: usize,
        /// The process grid, by axis.
        dims: [usize; 3],
        /// The grid's cells, by axis.
        grid: [usize; 3],
    },
}

/// The global problem: a box of cells (see the [module
/// documentation](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grid {
    /// Cells along x, y and z.
    pub n: [usize; 3],
}

/// A value in `[0, 1)`, a multiple of 2⁻²⁰, from a salt and a position.
fn hashed(salt: u64, p: [i64; 3]) -> f64 {
    let mut h = salt;
    for c in p {
        h = mix(h.wrapping_add(0x9E37_79B9_7F4A_7C15) ^ c as u64);
    }
    (h >> 44) as f64 / (1u64 << 20) as f64
}

impl Grid {
    /// An `nx × ny × nz` grid.
    pub fn new(nx: usize, ny: usize, nz: usize) -> Grid {
        Grid { n: [nx, ny, nz] }
    }

    /// The number of cells.
    pub fn cells(&self) -> usize {
        self.n.iter().product()
    }

    /// The initial value of the cell at global coordinates `p`.
    pub fn initial(&self, p: [usize; 3]) -> f64 {
        hashed(1, p.map(|c| c as i64))
    }

    /// The fixed value just outside the grid, at global coordinates `p`
    /// (one of them `-1` or `n`): the hot side `x = -1` is near 1, the
    /// others hashed values below 1/2.
    pub fn boundary(&self, p: [i64; 3]) -> f64 {
        let h = hashed(2, p);
        if p[0] < 0 {
            0.5 + 0.5 * h
        } else {
            0.5 * h
        }
    }
}

/// A side of a block, as the direction it faces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Face {
    /// Towards lower x.
    XLo,
    /// Towards higher x.
    XHi,
    /// Towards lower y.
    YLo,
    /// Towards higher y.
    YHi,
    /// Towards lower z.
    ZLo,
    /// Towards higher z.
    ZHi,
}

impl Face {
    /// The six faces, in the order of [`Face::index`].
    pub const ALL: [Face; 6] = [
        Face::XLo,
        Face::XHi,
        Face::YLo,
        Face::YHi,
        Face::ZLo,
        Face::ZHi,
    ];

    /// 0 to 5, in the order of [`Face::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The axis it is normal to: 0 (x), 1 (y) or 2 (z).
    pub fn axis(self) -> usize {
        self.index() / 2
    }

    /// Whether it faces towards higher coordinates.
    pub fn is_hi(self) -> bool {
        self.index() % 2 == 1
    }

    /// The face on the other side.
    pub fn opposite(self) -> Face {
        Face::ALL[self.index() ^ 1]
    }
}

/// The factors `[a, b, c]` of `n`, `a ≥ b ≥ c`, as close to each other as
/// possible (the smallest `a - c`, then the smallest `a`), as
/// `MPI_Dims_create` gives them. `n = 0` gives `[0, 0, 0]`.
pub fn dims_create(n: usize) -> [usize; 3] {
    if n == 0 {
        return [0; 3];
    }
    let mut best = [n, 1, 1];
    for c in (1..=n).take_while(|c| c * c * c <= n) {
        if !n.is_multiple_of(c) {
            continue;
        }
        let m = n / c;
        for b in (c..=m).take_while(|b| b * b <= m) {
            if !m.is_multiple_of(b) {
                continue;
            }
            let a = m / b;
            if (a - c, a) < (best[0] - best[2], best[0]) {
                best = [a, b, c];
            }
        }
    }
    best
}

/// The process grid of a number of ranks over a [`Grid`] (see the
/// [module documentation](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decomposition {
    grid: Grid,
    dims: [usize; 3],
}

impl Decomposition {
    /// The decomposition of `grid` for `ranks` ranks: the factors of
    /// [`dims_create`], the largest on the grid's longest axis (x first
    /// among equals).
    ///
    /// # Errors
    /// [`StencilError::EmptyGrid`], [`StencilError::NoRanks`], and
    /// [`StencilError::TooManyRanks`] when some axis would have more
    /// processes than cells.
    pub fn new(grid: Grid, ranks: usize) -> Result<Decomposition, StencilError> {
        if grid.n.contains(&0) {
            return Err(StencilError::EmptyGrid(grid.n));
        }
        if ranks == 0 {
            return Err(StencilError::NoRanks);
        }
        let factors = dims_create(ranks);
        let mut axes = [0, 1, 2];
        axes.sort_by_key(|&a| std::cmp::Reverse(grid.n[a]));
        let mut dims = [1; 3];
        for (f, a) in factors.into_iter().zip(axes) {
            dims[a] = f;
        }
        if (0..3).any(|a| dims[a] > grid.n[a]) {
            return Err(StencilError::TooManyRanks {
                ranks,
                dims,
                grid: grid.n,
            });
        }
        Ok(Decomposition { grid, dims })
    }

    /// The grid.
    pub fn grid(&self) -> Grid {
        self.grid
    }

    /// Processes along x, y and z.
    pub fn dims(&self) -> [usize; 3] {
        self.dims
    }

    /// The number of ranks.
    pub fn ranks(&self) -> usize {
        self.dims.iter().product()
    }

    /// The process coordinates of `rank`, `None` past the last rank.
    pub fn coords(&self, rank: usize) -> Option<[usize; 3]> {
        let [px, py, _] = self.dims;
        (rank < self.ranks()).then(|| [rank % px, rank / px % py, rank / (px * py)])
    }

    /// The rank at process coordinates `c`, `None` outside the process
    /// grid.
    pub fn rank_at(&self, c: [usize; 3]) -> Option<usize> {
        let [px, py, pz] = self.dims;
        (c[0] < px && c[1] < py && c[2] < pz).then(|| c[0] + px * (c[1] + py * c[2]))
    }

    /// The rank across face `f` of `rank`'s block; `None` on the grid's
    /// sides (or past the last rank).
    pub fn neighbour(&self, rank: usize, f: Face) -> Option<usize> {
        let mut c = self.coords(rank)?;
        let a = f.axis();
        c[a] = if f.is_hi() {
            c[a] + 1
        } else {
            c[a].checked_sub(1)?
        };
        self.rank_at(c)
    }

    /// The block of `rank`, `None` past the last rank.
    pub fn block(&self, rank: usize) -> Option<Block> {
        let c = self.coords(rank)?;
        let mut lo = [0; 3];
        let mut n = [0; 3];
        for a in 0..3 {
            let r = split(self.grid.n[a] as u64, c[a], self.dims[a]);
            lo[a] = r.start as usize;
            n[a] = (r.end - r.start) as usize;
        }
        Some(Block {
            grid: self.grid,
            lo,
            n,
        })
    }
}

/// The part of the grid one rank holds: cells `lo[a] .. lo[a] + n[a]` on
/// each axis `a` (see the [module documentation](self) for the layouts).
///
/// The methods that take slices index them by the block's layouts and
/// panic when a slice is shorter than its layout says ([`Block::cells`],
/// [`Block::padded_len`], [`Block::face_len`], [`Grid::cells`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Block {
    /// The grid it is part of.
    pub grid: Grid,
    /// Global coordinates of its first cell.
    pub lo: [usize; 3],
    /// Cells along each axis.
    pub n: [usize; 3],
}

impl Block {
    /// The block that covers the whole grid (what [`sequential`] uses).
    pub fn whole(grid: Grid) -> Block {
        Block {
            grid,
            lo: [0; 3],
            n: grid.n,
        }
    }

    /// Its number of cells (the interior's length).
    pub fn cells(&self) -> usize {
        self.n.iter().product()
    }

    /// The length of the padded copy (`(nx+2)(ny+2)(nz+2)`).
    pub fn padded_len(&self) -> usize {
        self.n.iter().map(|n| n + 2).product()
    }

    /// The number of values in face `f` (the product of the other two
    /// axes' lengths).
    pub fn face_len(&self, f: Face) -> usize {
        let a = f.axis();
        self.n[(a + 1) % 3] * self.n[(a + 2) % 3]
    }

    /// Whether face `f` lies on the grid's side (its halo is boundary).
    pub fn on_boundary(&self, f: Face) -> bool {
        let a = f.axis();
        if f.is_hi() {
            self.lo[a] + self.n[a] == self.grid.n[a]
        } else {
            self.lo[a] == 0
        }
    }

    /// The interior at the start (from [`Grid::initial`]).
    pub fn initial(&self) -> Vec<f64> {
        let mut u = Vec::with_capacity(self.cells());
        for k in 0..self.n[2] {
            for j in 0..self.n[1] {
                for i in 0..self.n[0] {
                    let [x, y, z] = self.lo;
                    u.push(self.grid.initial([x + i, y + j, z + k]));
                }
            }
        }
        u
    }

    /// Index in the padded copy of padded coordinates `p` (interior cells
    /// at `1..=n`).
    fn pad_index(&self, p: [usize; 3]) -> usize {
        p[0] + (self.n[0] + 2) * (p[1] + (self.n[1] + 2) * p[2])
    }

    /// Index in the interior of interior coordinates `p`.
    fn index(&self, p: [usize; 3]) -> usize {
        p[0] + self.n[0] * (p[1] + self.n[1] * p[2])
    }

    /// Calls `f(position in the face, coordinates)` for every cell of the
    /// layer `layer` normal to `axis`, the lower of the other two axes
    /// fastest; the coordinates along the other two axes run over `0..n`
    /// shifted by `offset` (1 for padded coordinates).
    fn for_layer(
        &self,
        axis: usize,
        layer: usize,
        offset: usize,
        mut f: impl FnMut(usize, [usize; 3]),
    ) {
        let (b, c) = match axis {
            0 => (1, 2),
            1 => (0, 2),
            _ => (0, 1),
        };
        let mut at = 0;
        for y in 0..self.n[c] {
            for x in 0..self.n[b] {
                let mut p = [0; 3];
                p[axis] = layer;
                p[b] = x + offset;
                p[c] = y + offset;
                f(at, p);
                at += 1;
            }
        }
    }

    /// Copies the cells of the interior next to face `f` into `out`
    /// ([`Block::face_len`] values): what the neighbour across `f` needs
    /// for its halo.
    pub fn pack(&self, interior: &[f64], f: Face, out: &mut [f64]) {
        let a = f.axis();
        let layer = if f.is_hi() { self.n[a] - 1 } else { 0 };
        self.for_layer(a, layer, 0, |at, p| out[at] = interior[self.index(p)]);
    }

    /// Copies the interior into the padded copy (the halo is left as it
    /// is).
    pub fn embed(&self, interior: &[f64], padded: &mut [f64]) {
        let row = self.n[0];
        for k in 0..self.n[2] {
            for j in 0..self.n[1] {
                let from = self.index([0, j, k]);
                let to = self.pad_index([1, j + 1, k + 1]);
                padded[to..to + row].copy_from_slice(&interior[from..from + row]);
            }
        }
    }

    /// Writes `data` (as [`Block::pack`] of the neighbour's opposite face
    /// made it) into the halo across face `f`.
    pub fn unpack(&self, padded: &mut [f64], f: Face, data: &[f64]) {
        let a = f.axis();
        let layer = if f.is_hi() { self.n[a] + 1 } else { 0 };
        self.for_layer(a, layer, 1, |at, p| {
            let i = self.pad_index(p);
            padded[i] = data[at];
        });
    }

    /// Writes the boundary values ([`Grid::boundary`]) into the halo
    /// across every face on the grid's side.
    pub fn fill_boundary(&self, padded: &mut [f64]) {
        for f in Face::ALL.into_iter().filter(|&f| self.on_boundary(f)) {
            let a = f.axis();
            let layer = if f.is_hi() { self.n[a] + 1 } else { 0 };
            self.for_layer(a, layer, 1, |_, p| {
                // Padded coordinate c is global coordinate lo + c - 1.
                let g = [0, 1, 2].map(|b| self.lo[b] as i64 + p[b] as i64 - 1);
                let i = self.pad_index(p);
                padded[i] = self.grid.boundary(g);
            });
        }
    }

    /// One iteration: the new interior from the padded copy (interior and
    /// the six halo faces filled). Every cell gets
    /// `W_CENTER*c + (W_X*(xm+xp) + (W_Y*(ym+yp) + W_Z*(zm+zp)))`, the
    /// same expression in the same order wherever the cell's block is.
    pub fn update(&self, padded: &[f64], out: &mut [f64]) {
        let sx = 1;
        let sy = self.n[0] + 2;
        let sz = sy * (self.n[1] + 2);
        for k in 0..self.n[2] {
            for j in 0..self.n[1] {
                let row = self.pad_index([1, j + 1, k + 1]);
                let first = self.index([0, j, k]);
                for i in 0..self.n[0] {
                    let c = row + i;
                    let x = padded[c - sx] + padded[c + sx];
                    let y = padded[c - sy] + padded[c + sy];
                    let z = padded[c - sz] + padded[c + sz];
                    out[first + i] = W_CENTER * padded[c] + (W_X * x + (W_Y * y + W_Z * z));
                }
            }
        }
    }

    /// This block's cells out of a field of the whole grid (as
    /// [`sequential`] returns it).
    pub fn extract(&self, whole: &[f64]) -> Vec<f64> {
        let full = Block::whole(self.grid);
        let mut u = Vec::with_capacity(self.cells());
        for k in 0..self.n[2] {
            for j in 0..self.n[1] {
                let from = full.index([self.lo[0], self.lo[1] + j, self.lo[2] + k]);
                u.extend_from_slice(&whole[from..from + self.n[0]]);
            }
        }
        u
    }
}

/// `iters` iterations of the whole grid in one process: the reference of
/// a distributed run. Returns the field, x fastest.
pub fn sequential(grid: Grid, iters: u64) -> Vec<f64> {
    let b = Block::whole(grid);
    let mut u = b.initial();
    let mut padded = vec![0.0; b.padded_len()];
    b.fill_boundary(&mut padded);
    for _ in 0..iters {
        b.embed(&u, &mut padded);
        b.update(&padded, &mut u);
    }
    u
}

/// A digest of every bit of a block's interior, tied to the cells' global
/// positions: the xor of a hash of (global index, value bits) over the
/// cells, so the blocks' checksums xor into the whole field's, whatever
/// the decomposition.
pub fn checksum(block: &Block, interior: &[f64]) -> u64 {
    let whole = Block::whole(block.grid);
    let mut sum = 0;
    for k in 0..block.n[2] {
        for j in 0..block.n[1] {
            let first = whole.index([block.lo[0], block.lo[1] + j, block.lo[2] + k]);
            let row = &interior[block.index([0, j, k])..][..block.n[0]];
            for (i, v) in row.iter().enumerate() {
                let g = (first + i) as u64;
                sum ^= mix(mix(g.wrapping_add(0x9E37_79B9_7F4A_7C15)) ^ v.to_bits());
            }
        }
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dims_are_balanced_like_mpi_dims_create() {
        let cases = [
            (1, [1, 1, 1]),
            (2, [2, 1, 1]),
            (3, [3, 1, 1]),
            (4, [2, 2, 1]),
            (6, [3, 2, 1]),
            (7, [7, 1, 1]),
            (8, [2, 2, 2]),
            (12, [3, 2, 2]),
            (16, [4, 2, 2]),
            (18, [3, 3, 2]),
            (27, [3, 3, 3]),
            (64, [4, 4, 4]),
        ];
        for (n, want) in cases {
            assert_eq!(dims_create(n), want, "n = {n}");
        }
        for n in 1..200 {
            let d = dims_create(n);
            assert_eq!(d.iter().product::<usize>(), n);
            assert!(d[0] >= d[1] && d[1] >= d[2], "{n}: {d:?}");
        }
    }

    #[test]
    fn the_largest_factor_goes_to_the_longest_axis() {
        let d = Decomposition::new(Grid::new(4, 30, 8), 6).unwrap();
        assert_eq!(d.dims(), [1, 3, 2]);
        assert_eq!(
            Decomposition::new(Grid::new(2, 2, 2), 3),
            Err(StencilError::TooManyRanks {
                ranks: 3,
                dims: [3, 1, 1],
                grid: [2, 2, 2]
            })
        );
        assert_eq!(
            Decomposition::new(Grid::new(2, 0, 2), 1),
            Err(StencilError::EmptyGrid([2, 0, 2]))
        );
        assert_eq!(
            Decomposition::new(Grid::new(2, 2, 2), 0),
            Err(StencilError::NoRanks)
        );
    }

    /// Every cell belongs to exactly one block; neighbours are mutual and
    /// share their face's extent; the faces without a neighbour are
    /// exactly the grid's sides.
    fn check_cover(grid: Grid, ranks: usize) {
        let d = Decomposition::new(grid, ranks).unwrap();
        assert_eq!(d.ranks(), ranks);
        let whole = Block::whole(grid);
        let mut owner = vec![0u32; grid.cells()];
        for r in 0..ranks {
            assert_eq!(d.coords(r).and_then(|c| d.rank_at(c)), Some(r));
            let b = d.block(r).unwrap();
            assert!(b.cells() > 0, "{grid:?} {ranks}: {b:?}");
            for k in 0..b.n[2] {
                for j in 0..b.n[1] {
                    for i in 0..b.n[0] {
                        owner[whole.index([b.lo[0] + i, b.lo[1] + j, b.lo[2] + k])] += 1;
                    }
                }
            }
            for f in Face::ALL {
                match d.neighbour(r, f) {
                    Some(nb) => {
                        assert!(!b.on_boundary(f));
                        assert_eq!(d.neighbour(nb, f.opposite()), Some(r));
                        let o = d.block(nb).unwrap();
                        assert_eq!(o.face_len(f.opposite()), b.face_len(f));
                        let a = f.axis();
                        let edge = if f.is_hi() {
                            b.lo[a] + b.n[a]
                        } else {
                            o.lo[a] + o.n[a]
                        };
                        let start = if f.is_hi() { o.lo[a] } else { b.lo[a] };
                        assert_eq!(edge, start, "{grid:?} {ranks}: {r} {f:?} {nb}");
                    }
                    None => assert!(b.on_boundary(f), "{grid:?} {ranks}: {r} {f:?}"),
                }
            }
        }
        assert!(owner.iter().all(|&c| c == 1), "{grid:?} {ranks}");
        assert_eq!(d.block(ranks), None);
        assert_eq!(d.neighbour(ranks, Face::XLo), None);
    }

    #[test]
    fn decomposition_covers_the_grid_exactly() {
        for grid in [Grid::new(8, 8, 8), Grid::new(7, 5, 6), Grid::new(13, 3, 4)] {
            for ranks in [1, 2, 3, 4, 5, 6, 8, 12] {
                if Decomposition::new(grid, ranks).is_ok() {
                    check_cover(grid, ranks);
                }
            }
        }
        check_cover(Grid::new(48, 48, 48), 27);
    }

    /// The distributed iteration simulated in one process, faces copied
    /// between blocks, against [`sequential`], bitwise.
    fn check_by_hand(grid: Grid, ranks: usize, iters: u64) {
        let d = Decomposition::new(grid, ranks).unwrap();
        let blocks: Vec<Block> = (0..ranks).map(|r| d.block(r).unwrap()).collect();
        let mut u: Vec<Vec<f64>> = blocks.iter().map(Block::initial).collect();
        let mut pads: Vec<Vec<f64>> = blocks
            .iter()
            .map(|b| vec![f64::NAN; b.padded_len()])
            .collect();
        for _ in 0..iters {
            // Every block's faces first (what a rank sends), then the halos.
            let faces: Vec<Vec<Vec<f64>>> = blocks
                .iter()
                .zip(&u)
                .map(|(b, u)| {
                    Face::ALL
                        .map(|f| {
                            let mut out = vec![0.0; b.face_len(f)];
                            b.pack(u, f, &mut out);
                            out
                        })
                        .to_vec()
                })
                .collect();
            for (r, b) in blocks.iter().enumerate() {
                b.embed(&u[r], &mut pads[r]);
                b.fill_boundary(&mut pads[r]);
                for f in Face::ALL {
                    if let Some(nb) = d.neighbour(r, f) {
                        b.unpack(&mut pads[r], f, &faces[nb][f.opposite().index()]);
                    }
                }
                b.update(&pads[r], &mut u[r]);
            }
        }
        let whole = sequential(grid, iters);
        let mut sum = 0;
        for (b, u) in blocks.iter().zip(&u) {
            let want = b.extract(&whole);
            let same = want.iter().zip(u).all(|(a, b)| a.to_bits() == b.to_bits());
            assert!(same && want.len() == u.len(), "{grid:?} {ranks}: {b:?}");
            sum ^= checksum(b, u);
        }
        assert_eq!(
            sum,
            checksum(&Block::whole(grid), &whole),
            "{grid:?} {ranks}"
        );
    }

    #[test]
    fn parallel_by_hand_equals_sequential_bitwise() {
        for ranks in [1, 2, 3, 4, 6, 8, 12] {
            check_by_hand(Grid::new(7, 5, 6), ranks, 9);
        }
        check_by_hand(Grid::new(12, 12, 12), 8, 20);
        check_by_hand(Grid::new(13, 3, 4), 3, 5);
    }

    #[test]
    fn the_field_changes_and_stays_in_range() {
        let grid = Grid::new(6, 5, 4);
        let a = sequential(grid, 0);
        let b = sequential(grid, 3);
        assert_eq!(a, Block::whole(grid).initial());
        assert_ne!(a, b);
        assert!(b.iter().all(|v| (0.0..1.0).contains(v)));
        assert_ne!(
            checksum(&Block::whole(grid), &a),
            checksum(&Block::whole(grid), &b)
        );
    }
}
