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

use std::cell::Cell;
use std::marker::PhantomData;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::ptr::NonNull;

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
