//! The synchronization types of the lock-free code ([`crate::ring`],
//! [`crate::lend`]): the standard library's normally, [loom]'s in the
//! model-checking build (`RUSTFLAGS="--cfg loom" cargo test --release -p
//! pertinax-os --lib loom`), where every load, store and cell access is
//! recorded and every interleaving of the model's threads is tried.
//!
//! Only the code that the models drive goes through here; the segment, the
//! futexes and the robust lists keep the standard types (they live in
//! shared memory between processes, which loom does not model). In the
//! normal build these are the standard types themselves, so the fast path
//! is unchanged.
//!
//! [loom]: https://docs.rs/loom

#[cfg(not(all(test, loom)))]
pub(crate) use std::cell::Cell;
#[cfg(not(all(test, loom)))]
pub(crate) use std::sync::atomic::{AtomicU64, Ordering};

#[cfg(all(test, loom))]
pub(crate) use loom::cell::Cell;
#[cfg(all(test, loom))]
pub(crate) use loom::sync::atomic::{AtomicU64, Ordering};
