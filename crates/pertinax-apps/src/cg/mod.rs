//! The NAS Parallel Benchmarks CG kernel (NPB 3.x, MPI version), as the
//! pieces a rank computes on its own: its place in the process grid, its
//! block of the matrix, and the local loops of the conjugate gradient.
//!
//! CG estimates the largest eigenvalue of a random sparse symmetric
//! positive definite matrix of order `na` by inverse power iteration:
//! each of the class's `niter` outer iterations solves `A z = x`
//! approximately with 25 conjugate-gradient steps, sets
//! `zeta = shift + 1 / (x.z)` and `x = z / ||z||`. [`Class::verify`]
//! checks the last zeta against the official value.
//!
//! # Concepts
//!
//! - **The grid** ([`Layout`]): `nprocs` (a power of two) ranks in
//!   `nprows x npcols`, `npcols = nprows` or `2 * nprows`. A rank holds the
//!   matrix block of its grid row's rows and grid column's columns, and
//!   the vectors of its columns. The partial products `A p` of a grid row
//!   are summed by recursive halving over `log2(npcols)` partners
//!   ([`ReduceStep`]; the dot products use the same partners as a
//!   butterfly), then the transpose partner (`exch_proc`) sends the sums
//!   of the rows that are this rank's columns.
//! - **The matrix** ([`makea`]): generated from NPB's random sequence
//!   (`randlc`, seed 314159265, multiplier 5^13), identically on every
//!   rank, each keeping its block; rows hold their elements in the
//!   reference's order, so the sums are NPB's.
//! - **The loops** ([`dot`], [`step_zr`], [`step_p`], [`Csr::matvec`],
//!   [`normalize`]) are `conj_grad`'s, in its order of operations;
//!   [`sequential`] chains them on one process.
//!
//! The communication (the exchanges above, per inner step) belongs to the
//! program `pertinax-cg`.
//!
//! # Example
//!
//! ```
//! use pertinax_apps::cg::{self, Class, Layout};
//!
//! let class: Class = "S".parse()?;
//! // Rank 5 of 8: grid 2 x 4, row 1, column 1.
//! let l = Layout::new(class.na(), 5, 8)?;
//! assert_eq!((l.nprows, l.npcols, l.proc_row, l.proc_col), (2, 4, 1, 1));
//! assert_eq!((l.rows.clone(), l.cols.clone()), (700..1400, 350..700));
//! let block = cg::makea(class, &l);
//! assert_eq!(block.nrows(), 700);
//! # Ok::<(), cg::CgError>(())
//! ```

mod class;
mod grid;
mod kernel;
mod matrix;

pub use class::{Class, TOLERANCE};
pub use grid::{grid, Layout, ReduceStep};
pub use kernel::{dist2, dot, normalize, sequential, step_p, step_zr, CGITMAX};
pub use matrix::{makea, Csr, AMULT, TRAN};

/// What can go wrong setting up CG.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CgError {
    /// A class name other than S, W or A.
    #[error("unknown CG class {0:?}: expected S, W or A")]
    UnknownClass(String),
    /// CG's grid needs a power-of-two number of ranks.
    #[error("CG runs on a power-of-two number of ranks, not {0}")]
    NotPowerOfTwo(usize),
    /// A rank outside the job.
    #[error("rank {rank} is not in a job of {nprocs} ranks")]
    InvalidRank {
        /// The rank asked for.
        rank: usize,
        /// The job's size.
        nprocs: usize,
    },
    /// More ranks than the matrix has columns to give.
    #[error("a matrix of order {na} is too small for {nprocs} ranks")]
    TooManyRanks {
        /// The matrix order.
        na: usize,
        /// The job's size.
        nprocs: usize,
    },
}
