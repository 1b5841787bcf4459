//! The NAS Parallel Benchmarks EP kernel ("embarrassingly parallel"), as
//! pieces of work that any rank can compute.
//!
//! EP generates `2^M` pairs of uniform random numbers with NPB's linear
//! congruential generator ([`randlc`], [`vranlc`]: `x <- 5^13 x mod 2^46`,
//! seed 271828183), turns the pairs that fall in the unit disc into pairs of
//! Gaussian deviates (Marsaglia's polar method), and reports their sums
//! `sx`, `sy` and how many pairs fall in each of ten square annuli. A
//! [`Class`] fixes `M`; [`Class::verify`] checks the sums against the
//! official values.
//!
//! # Concepts
//!
//! - The pairs come in *batches* of `2^16`. Batch `k` starts at a seed the
//!   generator can jump to directly, so [`batch`]`(k)` is independent of
//!   every other batch, and [`batches`]`(range)` computes a run of them.
//! - [`portion`] splits a class's batches among `n` ranks as NPB's MPI EP
//!   does; each rank computes its [`EpSums`], and the sums add up
//!   ([`EpSums::merge`], or element-wise over [`EpSums::to_array`], which
//!   is what an allreduce would do).
//! - The arithmetic follows NPB 3.3 exactly, so one rank computing a whole
//!   class gets the serial reference's result bit for bit (up to the
//!   platform's `ln`; class S's sums agree with the official values to
//!   5e-16). Split among ranks, the sums are added in another order and
//!   agree to about 1e-13 relative; the counts agree exactly.
//! - Like the reference, the generator is a chain of dependent
//!   floating-point operations, about 25 ns per number: class S takes about
//!   a second on one core, optimized or not, and each class above it is 2x
//!   to 16x longer.
//!
//! # Example
//!
//! Four ranks, simulated one after the other, compute class S:
//!
//! ```
//! use pertinax_apps::ep::{self, Class, EpSums};
//!
//! let class = Class::parse("S").expect("a known class");
//! let n = 4;
//! let mut total = [0.0; EpSums::LEN];
//! for rank in 0..n {
//!     let mine = ep::batches(ep::portion(class, rank, n));
//!     // What an allreduce with a sum would do:
//!     for (t, v) in total.iter_mut().zip(mine.to_array()) {
//!         *t += v;
//!     }
//! }
//! let sums = EpSums::from_array(total);
//! assert!(sums.verify(class));
//! ```

mod class;
mod kernel;
mod rand;

pub use class::{Class, MK, TOLERANCE};
pub use kernel::{batch, batches, portion, EpSums, NK, NQ};
pub use rand::{randlc, vranlc, A, SEED};
