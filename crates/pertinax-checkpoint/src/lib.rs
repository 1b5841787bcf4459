//! Coordinated checkpoints for pertinax programs: each rank's state in
//! memory with a copy at a buddy rank, optionally on disk; atomic,
//! checksummed, versioned by iteration, verified on restore.
//!
//! # Concepts
//!
//! - A **version** is an iteration number: [`Checkpointer::checkpoint`]
//!   saves every rank's state at the same iteration, collectively.
//! - An **image** ([`encode`], [`decode`]) is one rank's state at one
//!   version with a header (magic, format version, rank, size, iteration,
//!   payload length, CRC-32 of the payload, CRC-32 of the header). The
//!   same bytes live in memory, travel to the buddy and go to disk.
//! - The **buddy** of rank `r` is `(r + 1) % n`: it keeps a copy of `r`'s
//!   image. So one rank's state survives the loss of its memory, as long
//!   as its buddy survives, or its file does (with [`Config::dir`]).
//!   With `n = 1` a rank is its own buddy. "Survives" lasts until the
//!   restore has handed the image back (see [Limits](#limits)): a buddy
//!   that dies during the first rank's recovery is as bad as one that
//!   dies with it.
//! - **Committed** versions are the ones every member agreed on; a rank
//!   keeps the newest [`Config::keep`] of them (at least 2), its own and
//!   the copies of its previous rank's. [`Checkpointer::held`] lists those
//!   that verify.
//!
//! # Protocol and invariants
//!
//! A checkpoint writes the pending image aside (and its file, atomically:
//! temporary file, `fsync`, rename, `fsync` of the folder), exchanges
//! copies with the neighbours, verifies the copy received, and ends with
//! `agree_detailed`, to which each member contributes flags saying what
//! went wrong at it (a fault, a file, a corrupt copy). The agreement is
//! uniform, so:
//!
//! 1. **All or none.** Every survivor commits the same version, or none
//!    does (and every member discards the pending image and its file).
//!    A member that dies after contributing leaves its committed image
//!    at its buddy (and on disk).
//! 2. **Same history.** Every rank's own committed versions are the same
//!    list (a replacement holds only the version it restored).
//! 3. **Nothing unverified is used.** Every image is checked (checksums,
//!    rank, size, iteration) when it is listed as held, when it arrives,
//!    and when it is read from disk; one that fails counts as not held.
//! 4. **No hang.** A member that meets a fault in the transfers revokes the
//!    communicator (so no member waits for a message that will not come)
//!    and every member reaches the agreement; every error after the
//!    first message goes through it, so members leave a checkpoint or a
//!    restore by the same recovery calls.
//!
//! [`Checkpointer::restore`], after `replace_failed` (same size and rank
//! order), allgathers what every rank holds, picks the newest version
//! every rank can obtain (own copy, its verified file, or its buddy's
//! copy), moves images so that every rank again holds its own image and
//! its buddy copy of that version, verifies them, and agrees. Versions
//! newer than the one restored are dropped everywhere (they belong to
//! the rolled back future). If rank `r` and its buddy both lost their
//! memory and `r` has no file, [`Error::Lost`] says so at every rank.
//!
//! # Limits
//!
//! Without [`Config::dir`], **a rank and its buddy failing together is
//! unrecoverable** ([`Error::Lost`] at every rank, the same verdict
//! everywhere). "Together" is not only "at the same instant": it covers
//! the buddy dying *during the first rank's recovery*, from the first
//! rank's death until a restore has moved its image to its replacement.
//! Until then the buddy's copy is the only one, so a buddy killed in
//! the agreement or the `replace_failed` of that recovery, or in the
//! restore before its transfers (fault point `ckpt.restore`), takes the
//! first rank's state with it; the next restore reports it `Lost`. Once
//! the transfers have put the image in the replacement's memory (it is
//! kept there even when that restore then fails, so the repeated
//! restore finds it), the buddy may die like any other rank. With
//! [`Config::dir`] the rank's file covers both cases, as long as the
//! disk survives.
//!
//! Files: `dir/rank-R/ckpt-ITERATION.bin`, one per committed own version
//! (after every successful checkpoint or restore, the folder holds exactly
//! those); a temporary file left by a crash is ignored. Files found in
//! the folder are used by a restore, which is how a whole job restarts
//! from disk: new checkpointers on every rank, `restore(comm, true)`.
//!
//! # Fault points
//!
//! | point | where | numbering (`NAME#K`) |
//! |---|---|---|
//! | `ckpt` | in [`Checkpointer::checkpoint`], after the pending image is written aside (and to its file), before the buddy transfer; at the start of [`Checkpointer::abandon`] (so every rank passes it once per checkpoint) | the K-th checkpoint (or abandon) this process calls, failed ones included |
//! | `ckpt.restore` | in [`Checkpointer::restore`], after the plan is made, before the transfers | the K-th restore of this process that got as far as a plan (a restore whose first exchange failed, or that found nothing to restore, does not count) |
//!
//! Hits are counted per process from its start; a process started later
//! (a replacement) does not get the shots aimed at the rank it replaces
//! (see [`pertinax::fault_point`]).
//!
//! # Composing with the program's own recovery
//!
//! Recovery calls (agreements, `replace_failed`) must be made by every
//! member in the same order. A checkpoint and a restore each end with one
//! agreement, so every rank must reach every checkpoint: a rank whose
//! computation met a fault before the checkpoint calls
//! [`Checkpointer::abandon`] in its place (it revokes the communicator,
//! which ends everyone's computation, and joins the agreement), and
//! every rank then recovers: revoke, `replace_failed`, `restore`.
//!
//! Messages use the reserved tags from [`FIRST_RESERVED_TAG`] on the
//! communicator passed in.
//!
//! # Example
//!
//! ```
//! use pertinax_checkpoint::{Checkpointer, Config};
//!
//! let universe = pertinax::init()?;
//! let mut comm = universe.world();
//! let mut ck = Checkpointer::new(&comm, Config::default())?;
//! let mut state = vec![0u8; 16];
//! let mut it = 0u64;
//! ck.checkpoint(&comm, it, &state)?;
//! while it < 30 {
//!     it += 1;
//!     state[0] = state[0].wrapping_add(1); // the work of an iteration
//!     if it % 10 != 0 {
//!         continue;
//!     }
//!     match ck.checkpoint(&comm, it, &state) {
//!         Ok(()) => {}
//!         Err(e) if e.is_fault() => {
//!             // Every survivor gets here: repair, restore, roll back.
//!             comm.revoke()?;
//!             comm = comm.replace_failed()?.comm;
//!             let (v, s) = ck.restore(&comm, false)?;
//!             it = v;
//!             state = s;
//!         }
//!         Err(e) => return Err(e.into()),
//!     }
//! }
//! assert_eq!(ck.latest(), Some(30));
//! assert_eq!(ck.held().own, [20, 30]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod checkpointer;
mod disk;
mod error;
mod format;
mod plan;
mod restore;
mod store;
#[cfg(test)]
mod tests;

pub use checkpointer::{Checkpointer, Config, Held, FIRST_RESERVED_TAG};
pub use error::Error;
pub use format::{decode, encode, verify, FormatError, Header, FORMAT_VERSION, HEADER_LEN, MAGIC};
