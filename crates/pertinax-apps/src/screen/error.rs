//! The screening application's error.

use std::io;
use std::ops::Range;
use std::path::PathBuf;

use super::molecule::RECORD_SIZE;
use super::topk::TopK;

/// Why a screening operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScreenError {
    /// An I/O call on the database failed.
    #[error("cannot {op} {}: {source}", path.display())]
    Io {
        /// What was being done: "create", "open", "read", "write".
        op: &'static str,
        /// The database file.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
    /// The file's size is not a whole number of records: not a database, or
    /// a truncated one.
    #[error(
        "{} is not a molecule database: {len} bytes is not a multiple of {RECORD_SIZE}",
        path.display()
    )]
    BadSize {
        /// The file.
        path: PathBuf,
        /// Its size in bytes.
        len: u64,
    },
    /// Records were asked for past the end of the database (or a range that
    /// ends before it starts).
    #[error("{} holds {count} records, cannot read {range:?}", path.display())]
    OutOfRange {
        /// The database file.
        path: PathBuf,
        /// The records asked for.
        range: Range<u64>,
        /// The number of records in the file.
        count: u64,
    },
    /// A buffer handed to [`TopK::decode`] is not a whole number of
    /// entries.
    #[error(
        "a top-k buffer of {len} bytes is not a multiple of {}",
        TopK::ENTRY_SIZE
    )]
    BadTopK {
        /// The buffer's length.
        len: usize,
    },
}
