//! A virtual-screening skeleton: score every molecule of a database against
//! one target and keep the best `k`.
//!
//! Molecular docking programs spend their time scoring candidate molecules
//! (*ligands*) against a protein's binding pocket, independently for each
//! molecule, and keep the best. This module has the same shape with a toy
//! chemistry, so that a parallel program can be written and measured around
//! it.
//!
//! # Concepts
//!
//! - The database is a file of fixed-size records ([`RECORD_SIZE`] bytes):
//!   a [`Molecule`] is an id, [`ATOMS`] atom positions and an 8-byte name.
//!   [`generate`] writes a deterministic database; [`read_range`] reads
//!   records `[a, b)` with positioned reads, so ranks can share one file
//!   without seeking.
//! - [`score`] docks a molecule into a fixed pocket: it tries `work` poses
//!   (orientations and shifts) and sums a Lennard-Jones-like term over every
//!   atom and pocket point. The cost is proportional to `work`; higher
//!   scores are better.
//! - [`portion`] splits the records among ranks; [`top_k`] scores one
//!   portion and keeps the best `k` in a [`TopK`]. `TopK`s of disjoint
//!   portions merge ([`TopK::merge`]) into the `TopK` of their union, and
//!   encode to a fixed number of bytes ([`TopK::encode`]) for a gather.
//! - Failures are a [`ScreenError`]: I/O, a file whose size is not a whole
//!   number of records, a range past its end, a malformed `TopK` buffer.
//!
//! # Example
//!
//! ```
//! use pertinax_apps::screen::{self, TopK};
//!
//! # fn main() -> Result<(), screen::ScreenError> {
//! let path = std::env::temp_dir().join(format!("screen-doc-{}.db", std::process::id()));
//! screen::generate(&path, 1000, 42)?;
//! let count = screen::record_count(&path)?;
//! let (k, work) = (5, 4);
//!
//! // Each of 3 ranks scores its portion; the results merge.
//! let mut best = TopK::new(k);
//! for rank in 0..3 {
//!     let mine = screen::top_k(&path, screen::portion(count, rank, 3), work, k)?;
//!     // What a gather would carry: a fixed number of bytes per rank.
//!     let bytes = mine.encode();
//!     best.merge(&TopK::decode(k, &bytes)?);
//! }
//! assert_eq!(best, screen::top_k(&path, 0..count, work, k)?);
//! assert_eq!(best.hits().len(), k);
//! # std::fs::remove_file(&path).ok();
//! # Ok(())
//! # }
//! ```

mod error;
mod molecule;
mod score;
mod topk;

#[cfg(test)]
mod tests;

use std::ops::Range;
use std::path::Path;

pub use error::ScreenError;
pub use molecule::{generate, read_range, record_count, Molecule, ATOMS, NAME_LEN, RECORD_SIZE};
pub use score::{score, POCKET};
pub use topk::{Hit, TopK};

/// The default number of molecules of a database.
pub const DEFAULT_COUNT: u64 = 100_000;

/// The default `work` of [`score`]: [`DEFAULT_COUNT`] molecules take about
/// 1.6 s on one core of the development machine (x86-64; the release and
/// dev profiles alike), reading included.
pub const DEFAULT_WORK: u32 = 64;

/// Records read at once by [`top_k`].
const CHUNK: u64 = 16 * 1024;

/// The records `[start, end)` of `count` that `rank` scores out of `n` ranks:
/// contiguous blocks, the first `count % n` ranks taking one more.
///
/// # Panics
///
/// If `n == 0` or `rank >= n`.
pub fn portion(count: u64, rank: usize, n: usize) -> Range<u64> {
    crate::split::block(count, rank, n)
}

/// Scores the records `range` of the database at `path` with `work` and
/// keeps the best `k`. Reads the file in chunks, so the memory used does
/// not grow with the range.
///
/// # Errors
///
/// As [`read_range`]: [`ScreenError::Io`], [`ScreenError::BadSize`],
/// [`ScreenError::OutOfRange`].
pub fn top_k(path: &Path, range: Range<u64>, work: u32, k: usize) -> Result<TopK, ScreenError> {
    let db = molecule::Database::open(path)?;
    db.check(&range)?;
    let mut best = TopK::new(k);
    let mut start = range.start;
    while start < range.end {
        let end = range.end.min(start.saturating_add(CHUNK));
        for m in db.read(start..end)? {
            best.push(Hit {
                id: m.id,
                score: score(&m, work),
            });
        }
        start = end;
    }
    Ok(best)
}
