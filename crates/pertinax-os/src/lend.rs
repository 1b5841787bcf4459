//! Scoped lending of borrowed buffers to a progress engine.
//!
//! A non-blocking receive must let the engine write into the caller's
//! buffer during any later library call, and a large send must let a peer
//! read the caller's buffer until it says it is done. The engine therefore
//! holds handles ([`LentMut`], [`Lent`]) without a lifetime. What makes that
//! sound is the technique of `std::thread::scope`: buffers can only be lent
//! inside [`scope`], every handle counts itself in the scope, and the scope
//! does not return (nor unwind) until every handle is dropped, driving the
//! caller's `drain` function (the engine's progress) meanwhile. Forgetting a
//! request does not help escape: the handle lives in the engine, which
//! completes it during the drain.

use std::marker::PhantomData;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::ptr::NonNull;

use crate::sync::Cell;

/// A scope in which buffers borrowed for `'scope` can be lent.
#[derive(Debug)]
pub struct Scope<'scope, 'env: 'scope> {
    outstanding: Cell<usize>,
    _scope: PhantomData<&'scope mut &'scope ()>,
    _env: PhantomData<&'env mut &'env ()>,
}

/// A lent mutable buffer (for receives). Dropping it returns it.
#[derive(Debug)]
pub struct LentMut {
    ptr: NonNull<u8>,
    len: usize,
    counter: NonNull<Cell<usize>>,
}

/// A lent shared buffer (for sends). Dropping it returns it.
#[derive(Debug)]
pub struct Lent {
    ptr: NonNull<u8>,
    len: usize,
    counter: NonNull<Cell<usize>>,
}

impl<'scope, 'env> Scope<'scope, 'env> {
    /// Lends `buf` mutably until the returned handle is dropped.
    pub fn lend_mut(&'scope self, buf: &'scope mut [u8]) -> LentMut {
        self.outstanding.set(self.outstanding.get() + 1);
        LentMut {
            len: buf.len(),
            ptr: NonNull::new(buf.as_mut_ptr()).unwrap_or(NonNull::dangling()),
            counter: NonNull::from(&self.outstanding),
        }
    }

    /// Lends `buf` for reading until the returned handle is dropped.
    pub fn lend(&'scope self, buf: &'scope [u8]) -> Lent {
        self.outstanding.set(self.outstanding.get() + 1);
        Lent {
            len: buf.len(),
            ptr: NonNull::new(buf.as_ptr() as *mut u8).unwrap_or(NonNull::dangling()),
            counter: NonNull::from(&self.outstanding),
        }
    }

    /// Number of handles not yet returned.
    pub fn outstanding(&self) -> usize {
        self.outstanding.get()
    }
}

impl Scope<'static, 'static> {
    /// A scope that never ends, leaked: it lends only buffers that live
    /// for the whole program (`&'static`), so nothing waits for its
    /// handles. For a foreign caller (the C ABI) whose own contract keeps
    /// a buffer valid until its operation completes, and which must hand
    /// a scope to an API that asks for one. Make one and keep it: each
    /// call leaks a few bytes.
    pub fn forever() -> &'static Scope<'static, 'static> {
        Box::leak(Box::new(Scope {
            outstanding: Cell::new(0),
            _scope: PhantomData,
            _env: PhantomData,
        }))
    }
}

/// The count that buffers lent without a scope ([`lend_raw`],
/// [`lend_mut_raw`]) keep: nobody waits for it. It is the lending
/// thread's, leaked (never freed); a handle may be dropped on another
/// thread (the C ABI at `MPI_THREAD_SERIALIZED` completes a request on
/// whichever thread calls), which is sound only while the lends and the
/// drops are ordered one after the other, as the ABI's lock orders every
/// call into the engine.
fn raw_counter() -> NonNull<Cell<usize>> {
    std::thread_local! {
        static RAW: NonNull<Cell<usize>> = NonNull::from(Box::leak(Box::new(Cell::new(0))));
    }
    RAW.with(|c| *c)
}

/// Lends the `len` bytes at `ptr` for reading without a scope: for a
/// foreign caller (the C ABI's `MPI_Isend`) whose buffer outlives the
/// operation by the caller's own contract.
///
/// # Safety
/// The `len` bytes at `ptr` must be valid for reads, and not be written,
/// until the returned handle is dropped (the engine drops it when the
/// operation completes or is cancelled).
pub unsafe fn lend_raw(ptr: *const u8, len: usize) -> Lent {
    let counter = raw_counter();
    // SAFETY: the counter is leaked, so it lives as long as the thread.
    let c = unsafe { counter.as_ref() };
    c.set(c.get() + 1);
    Lent {
        len,
        ptr: NonNull::new(ptr.cast_mut()).unwrap_or(NonNull::dangling()),
        counter,
    }
}

/// Lends the `len` bytes at `ptr` for writing without a scope (the C
/// ABI's `MPI_Irecv`).
///
/// # Safety
/// The `len` bytes at `ptr` must be valid for reads and writes, and not
/// be accessed otherwise, until the returned handle is dropped.
pub unsafe fn lend_mut_raw(ptr: *mut u8, len: usize) -> LentMut {
    let counter = raw_counter();
    // SAFETY: as in `lend_raw`.
    let c = unsafe { counter.as_ref() };
    c.set(c.get() + 1);
    LentMut {
        len,
        ptr: NonNull::new(ptr).unwrap_or(NonNull::dangling()),
        counter,
    }
}

impl LentMut {
    /// Length of the buffer.
    pub fn len(&self) -> usize {
        self.len
    }
    /// True for an empty buffer.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The buffer.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: the buffer was borrowed mutably for 'scope, and the scope
        // cannot end while this handle exists; the handle is unique (not
        // Clone), so this is the only access path; `&mut self` prevents
        // overlapping borrows through it.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Lent {
    /// Length of the buffer.
    pub fn len(&self) -> usize {
        self.len
    }
    /// True for an empty buffer.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The buffer.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: borrowed shared for 'scope, which outlives this handle
        // (the scope waits for it), so the memory is valid and not mutated.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
    /// Address of the buffer in this process (for a peer's single-copy read).
    pub fn addr(&self) -> u64 {
        self.ptr.as_ptr() as u64
    }
}

fn release(counter: NonNull<Cell<usize>>) {
    // SAFETY: the counter lives in the Scope, which cannot have returned
    // while this handle exists (it waits for the count to reach zero).
    let c = unsafe { counter.as_ref() };
    c.set(c.get() - 1);
}

impl Drop for LentMut {
    fn drop(&mut self) {
        release(self.counter);
    }
}
impl Drop for Lent {
    fn drop(&mut self) {
        release(self.counter);
    }
}

/// Runs `f` with a lending scope; before returning (or unwinding), calls
/// `drain` until every lent buffer has been returned.
///
/// `drain` should make progress (e.g. one round of the engine's progress
/// and, if nothing moved, a short wait). If `drain` panics while buffers are
/// still lent, the process aborts: unwinding would free borrowed memory that
/// the engine may still write.
pub fn scope<'env, F, R, D>(f: F, mut drain: D) -> R
where
    F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> R,
    D: FnMut(),
{
    let s = Scope {
        outstanding: Cell::new(0),
        _scope: PhantomData,
        _env: PhantomData,
    };
    let r = catch_unwind(AssertUnwindSafe(|| f(&s)));
    while s.outstanding.get() > 0 {
        if catch_unwind(AssertUnwindSafe(&mut drain)).is_err() {
            eprintln!("pertinax: progress panicked while buffers were lent; aborting");
            std::process::abort();
        }
    }
    match r {
        Ok(r) => r,
        Err(p) => resume_unwind(p),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    #[test]
    fn scope_waits_for_forgotten_handles() {
        let held: RefCell<Vec<LentMut>> = RefCell::new(Vec::new());
        let mut buf = vec![0u8; 8];
        let mut drains = 0;
        scope(
            |s| {
                let h = s.lend_mut(&mut buf);
                held.borrow_mut().push(h);
                assert_eq!(s.outstanding(), 1);
            },
            || {
                drains += 1;
                if let Some(mut h) = held.borrow_mut().pop() {
                    h.as_mut_slice()[0] = 42;
                }
            },
        );
        assert_eq!(buf[0], 42);
        assert_eq!(drains, 1);
    }

    #[test]
    fn scope_drains_before_unwinding() {
        let held: RefCell<Option<Lent>> = RefCell::new(None);
        let buf = vec![1u8, 2, 3];
        let r = std::panic::catch_unwind(AssertUnwindSafe(|| {
            scope(
                |s| {
                    *held.borrow_mut() = Some(s.lend(&buf));
                    panic!("boom");
                },
                || {
                    let h = held.borrow_mut().take().unwrap();
                    assert_eq!(h.as_slice(), &[1, 2, 3]);
                },
            )
        }));
        assert!(r.is_err());
        assert!(held.borrow().is_none());
    }
}

/// Loom models of the lending: a peer thread reads (or writes) the lent
/// buffer, as a single-copy transfer by another process does, and tells
/// the owner it is done through an atomic flag, as the engine learns it;
/// the owner's drain drops the handle once it sees the flag. Loom checks,
/// in every interleaving, that the scope returns only after the handle is
/// dropped, so that the owner's next access to the buffer happens after the
/// peer's (the buffer is a loom cell, which fails the model on an access
/// that is not ordered after the peer's). Run with
/// `RUSTFLAGS="--cfg loom" cargo test --release -p pertinax-os --lib loom`.
#[cfg(all(test, loom))]
// The buffer is a loom cell shared with the peer thread on purpose: loom
// checks every access to it.
#[allow(clippy::arc_with_non_send_sync)]
mod loom_tests {
    use std::cell::RefCell;
    use std::sync::Arc;

    use loom::cell::UnsafeCell;
    use loom::sync::atomic::AtomicBool;
    use loom::sync::atomic::Ordering::{Acquire, Release};

    use super::*;

    /// A lent send buffer: the peer reads it; the owner rewrites it after
    /// the scope.
    #[test]
    fn loom_lend_scope_waits_for_a_peer_reading_the_buffer() {
        loom::model(|| {
            let buf = Arc::new(UnsafeCell::new([1u8, 2, 3, 4]));
            let done = Arc::new(AtomicBool::new(false));
            let engine: RefCell<Vec<Lent>> = RefCell::new(Vec::new());
            let mut drains = 0;
            let peer = {
                // The owner's shared borrow of the buffer, for the scope.
                let borrowed = buf.get();
                // SAFETY: loom tracks the borrow until `borrowed` drops.
                let slice: &[u8] = unsafe { borrowed.deref() };
                let peer = scope(
                    |s| {
                        engine.borrow_mut().push(s.lend(slice));
                        let (b, d) = (buf.clone(), done.clone());
                        loom::thread::spawn(move || {
                            // SAFETY: loom checks this access.
                            let sum: u8 = b.with(|p| unsafe { (*p).iter().sum() });
                            d.store(true, Release);
                            sum
                        })
                    },
                    || {
                        drains += 1;
                        if done.load(Acquire) {
                            engine.borrow_mut().clear();
                        } else {
                            loom::thread::yield_now();
                        }
                    },
                );
                assert!(engine.borrow().is_empty());
                peer
            };
            // After the scope the owner may change the buffer.
            // SAFETY: loom checks this access.
            buf.with_mut(|p| unsafe { (*p)[0] = 9 });
            assert_eq!(peer.join().unwrap(), 10);
            assert!(drains >= 1);
        });
    }

    /// A lent receive buffer: the peer writes it; the owner reads it after
    /// the scope, also when the scope's closure panicked after lending.
    #[test]
    fn loom_lend_scope_waits_for_a_peer_writing_the_buffer_even_when_unwinding() {
        loom::model(|| {
            for panics in [false, true] {
                let buf = Arc::new(UnsafeCell::new([0u8; 4]));
                let done = Arc::new(AtomicBool::new(false));
                let engine: RefCell<Vec<LentMut>> = RefCell::new(Vec::new());
                // The handle lends a placeholder: what the model checks is
                // the order of the accesses to `buf`, which stands for the
                // memory the handle names.
                let mut placeholder = [0u8; 4];
                let (b, d) = (buf.clone(), done.clone());
                let peer = loom::thread::spawn(move || {
                    // SAFETY: loom checks this access.
                    b.with_mut(|p| unsafe { (*p) = [5, 6, 7, 8] });
                    d.store(true, Release);
                });
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    scope(
                        |s| {
                            engine.borrow_mut().push(s.lend_mut(&mut placeholder));
                            assert_eq!(s.outstanding(), 1);
                            if panics {
                                std::panic::resume_unwind(Box::new("the owner panics"));
                            }
                        },
                        || {
                            if done.load(Acquire) {
                                engine.borrow_mut().clear();
                            } else {
                                loom::thread::yield_now();
                            }
                        },
                    )
                }));
                assert_eq!(r.is_err(), panics);
                assert!(engine.borrow().is_empty());
                // SAFETY: loom checks this access.
                assert_eq!(buf.with(|p| unsafe { *p }), [5, 6, 7, 8]);
                peer.join().unwrap();
            }
        });
    }
}
