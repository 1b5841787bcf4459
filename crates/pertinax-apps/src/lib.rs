//! The compute kernels of the pertinax applications, without communication.
//!
//! Each application is split into independent pieces of work that any rank
//! can compute on its own, and results that merge:
//!
//! - [`ep`]: the NAS Parallel Benchmarks EP kernel. The work is a range of
//!   *batches* of random pairs; the result is an [`ep::EpSums`] (two sums and
//!   ten counts) that adds up across ranks, as the reference does with one
//!   `MPI_Allreduce`.
//! - [`screen`]: a virtual-screening skeleton. The work is a range of
//!   molecule records in a database file; the result is an
//!   [`screen::TopK`] of the best-scoring molecules that merges across
//!   ranks.
//! - [`nbody`]: the N-body kernel of the offload paper (section 6.3): force
//!   accumulation over blocks of bodies that travel around a ring, and the
//!   update; [`nbody::simulate`] is the one-process reference.
//! - [`fwi`]: an FWI-like inversion with the offload paper's structure
//!   (section 6.4): per-shot kernels split over workers;
//!   [`fwi::invert`] is the one-process reference.
//! - [`cg`]: the NAS Parallel Benchmarks CG kernel with the MPI version's
//!   data distribution: a rank's place in the process grid, its block of
//!   the matrix and the local loops; [`cg::sequential`] is the
//!   one-process reference.
//! - [`stencil`]: a 3-D seven-point stencil with LULESH's halo exchange of
//!   six faces on a 3-D process grid; [`stencil::sequential`] is the
//!   one-process reference.
//!
//! EP and screening have a `portion(.., rank, n)` that splits the work among `n`
//! ranks in contiguous blocks, the first ranks taking one item more when `n`
//! does not divide the total (the split of NPB's EP). The communication
//! (who computes which portion, how results are combined, what happens when
//! a rank dies) belongs to the programs that use this crate.
//!
//! **Invariant:** nothing here communicates, spawns or reads the clock; every
//! result is a deterministic function of its inputs (and, for `screen`, of
//! the database file).
//!
//! The parallel programs are the crate's binaries, `pertinax-ep` and
//! `pertinax-screen` (`src/bin`, documented there): written once over
//! `pertinax_resilient::Communicator`, they run plain, or resilient under
//! `pertinax run --resilient`, and their lowest surviving rank checks the
//! result against a sequential recomputation of the survivors' work.
//!
//! The two applications share nothing but the split, so each keeps its own
//! namespace (`ep::portion`, `screen::portion`) instead of one flat list of
//! re-exports at the crate root.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod cg;
pub mod ep;
pub mod fwi;
pub mod nbody;
pub mod screen;
mod split;
pub mod stencil;
