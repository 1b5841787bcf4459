//! pertinax: fault-tolerant MPI-style message passing for Rust.
//!
//! A pertinax program runs as N processes (*ranks*) started by the
//! launcher, `pertinax run -n N -- program`. Ranks talk through
//! communicators: point-to-point messages matched by source and tag, and
//! collective operations. The native runtime moves data through shared
//! memory on one machine.
//!
//! # Concepts
//! - [`init`] joins the job and returns a [`Universe`]; its
//!   [`world`](Universe::world) communicator holds every rank.
//! - [`Comm`]: rank, size, [`send`](Comm::send)/[`recv`](Comm::recv) and
//!   friends, [`dup`](Comm::dup), [`split`](Comm::split),
//!   [`create`](Comm::create) from a [`Group`].
//! - Non-blocking operations return a [`Request`] inside a [`scope`] that
//!   keeps their buffers borrowed until they complete.
//! - Every call returns [`Result`]; a failed peer is an
//!   [`Error::ProcFailed`], never a panic or a hang.
//!
//! # Example
//! ```
//! let universe = pertinax::init()?;
//! let world = universe.world();
//! let (rank, size) = (world.rank().index(), world.size());
//! // Pass a token around the ring.
//! let next = (rank + 1) % size;
//! let prev = (rank + size - 1) % size;
//! let mut token = [0u64];
//! if rank == 0 {
//!     world.send(&[42u64], next, 0)?;
//!     world.recv(&mut token, prev, 0)?;
//! } else {
//!     world.recv(&mut token, prev, 0)?;
//!     world.send(&token, next, 0)?;
//! }
//! assert_eq!(token[0], 42);
//! # Ok::<(), pertinax::Error>(())
//! ```
#![forbid(unsafe_code)]

pub(crate) mod collective;
mod comm;
mod engine;
mod error;
mod fault;
mod ft;
mod group;
mod intercomm;
mod op;
mod p2p;
mod request;
mod runtime;
mod spawn;
mod types;
mod wait;

pub use comm::Comm;
pub use error::{Error, RecoveryCall, Result};
pub use fault::fault_point;
pub use ft::{Agreement, PendingAgreement};
pub use group::{Group, GroupRelation};
pub use op::{Arith, Bitwise, Logical, Op, Ordered, ValueIndex};
pub use request::{scope, test_any, wait_all, wait_any, Request, Scope};
pub use runtime::{init, Universe};
pub use spawn::{Replaced, Role};
pub use types::{Rank, Source, Status, Tag, TagMatch, ANY_SOURCE, ANY_TAG, TAG_UB};

/// The README's examples, compiled and run as doc tests.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// Re-exported so that users can derive `Pod` for their message types.
pub use bytemuck;
