//! Wire formats of pertinax, defined in one place.
//!
//! - [`env`]: the environment the launcher hands each process (rank, size,
//!   job id, secret, inherited descriptors).
//! - [`ctrl`]: the control protocol on the socket between each process and
//!   the launcher: bootstrap key/value exchange, finalization, and launcher
//!   notices.
//! - [`msg`]: the metadata of every message record in the shared-memory
//!   rings.
#![forbid(unsafe_code)]

pub mod ctrl;
pub mod env;
pub mod msg;

/// States of a process slot in the shared segment (`ProcBlock::state`),
/// written by the launcher, read by every process.
pub mod slot {
    /// Nobody occupies the slot.
    pub const EMPTY: u32 = 0;
    /// A process was started in the slot and has not ended.
    pub const RUNNING: u32 = 1;
    /// The process finalized and exited cleanly.
    pub const FINALIZED: u32 = 2;
    /// The process ended without finalizing (killed, crashed, exited early).
    pub const FAILED: u32 = 3;
}
