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
