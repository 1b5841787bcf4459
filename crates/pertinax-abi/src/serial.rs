//! Threads: one copy of the library's state for the whole process
//! ([`Serial`]), and the entry guard every exported function passes
//! first ([`enter`]), which makes sharing it sound: no two threads are
//! ever inside the library at once.
//!
//! The level is fixed by the call that joins the job (`MPI_Init`,
//! `MPI_Init_thread`, or the first `MPI_Session_init`, see [`start`]):
//!
//! - `MPI_THREAD_SINGLE` and `MPI_THREAD_FUNNELED` (`MPI_Init` gives
//!   `FUNNELED`): only the thread that joined may call. Its calls pass
//!   the guard after one comparison of its thread id, and take no lock. A
//!   call from another thread returns `MPI_ERR_OTHER` at once without
//!   touching the state, so it invokes no error handler (the handlers
//!   belong to the state); the first such call per process says why on
//!   standard error.
//! - `MPI_THREAD_SERIALIZED` (asked as `SERIALIZED` or `MULTIPLE`; a
//!   `MULTIPLE` request is given `SERIALIZED`, and `provided` says so):
//!   any thread may call, and every call holds a process-wide lock for
//!   its duration. The lock is re-entrant: the library's own `PMPI_`
//!   calls, and the program's callbacks (reduction operations, error
//!   handlers, attribute and generalized-request callbacks) calling MPI
//!   on the same thread, pass. A program that breaks MPI's promise (two
//!   threads calling at once) waits for the lock instead of corrupting
//!   memory; and a blocking call (`MPI_Recv`, `MPI_Wait`, a collective)
//!   holds the lock until it returns, so another thread's call waits that
//!   long: a program must not block in one thread on a message another
//!   thread has still to send (MPI's contract for `SERIALIZED`, which the
//!   lock does not relax).
//!
//! Before the job is joined every call takes the lock, so that calls MPI
//! allows before `MPI_Init` (info objects, `MPI_Session_init`) may come
//! from any thread. A few functions pass no guard and may be called from
//! any thread at any time, at any level: they read no state
//! (`MPI_Initialized`, `MPI_Finalized`, `MPI_Query_thread`,
//! `MPI_Is_thread_main`, `MPI_Get_version`, `MPI_Get_library_version`,
//! `MPI_Get_processor_name`, `MPI_Wtime`, `MPI_Wtick`, the handle
//! conversions, `MPI_Aint_add`/`_diff`); an argument error of theirs from
//! a thread outside the library returns its class without a handler (see
//! [`raise_anywhere`]).

use std::cell::{Cell, RefCell};
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::consts::*;

/// A value of the process's ABI state, shared by every thread: a
/// `static` in place of a `thread_local!`, used the same way
/// ([`Serial::with`]).
pub(crate) struct Serial<T>(T);

// SAFETY: MPI's threading contract, made true by the entry guard: a
// `Serial` is touched only by a thread inside a library call (every
// exported function passes `enter` first; the few that do not touch no
// `Serial`), and no two threads are ever inside at once. At
// `MPI_THREAD_FUNNELED` only the thread that joined passes (the others are
// refused before they touch anything); at `MPI_THREAD_SERIALIZED`, and
// before the job is joined, every call holds `BUSY` for its duration,
// whose release and acquisition order one thread's accesses before the
// next one's. So the values (`Rc`s, `RefCell`s, raw pointers) are used by
// one thread at a time, each use ordered after the last: what sending
// them from thread to thread would give. Statics are never dropped, so
// no value is dropped outside a call.
unsafe impl<T> Sync for Serial<T> {}

impl<T> Serial<T> {
    /// `value`, for a `static`.
    pub(crate) const fn new(value: T) -> Serial<T> {
        Serial(value)
    }

    /// Runs `f` on the value (as `LocalKey::with`). Only inside a library
    /// call, after [`enter`]. (Always inlined: every fast path passes
    /// here.)
    #[inline(always)]
    pub(crate) fn with<R>(&'static self, f: impl FnOnce(&T) -> R) -> R {
        debug_assert!(inside(), "the library's state touched outside a call");
        f(&self.0)
    }
}

/// The level before the job is joined.
const NONE: c_int = -1;

/// The thread level given (`MPI_Query_thread`), `NONE` before the job is
/// joined.
static LEVEL: AtomicI32 = AtomicI32::new(NONE);

/// At `MPI_THREAD_SINGLE`/`FUNNELED`: the thread that joined (its
/// [`this_thread`]), whose calls pass without the lock; 0 (no thread)
/// otherwise. Written once, by that thread, inside its call: the thread
/// sees its own write; any other thread finds another id, or 0, and goes
/// to the slow path, which decides with `LEVEL`. (A thread id is reused
/// only once its thread has ended: the thread that joined must outlive
/// the program's use of MPI, as MPI's main thread does.)
static FREE_THREAD: AtomicUsize = AtomicUsize::new(0);

/// The process-wide lock, held by a thread inside the library at
/// `MPI_THREAD_SERIALIZED` (or before the job is joined). A futex: taking
/// and letting go of it uncontended is one atomic operation each.
static BUSY: Mutex<()> = Mutex::new(());

/// Set once a call from a thread that may not call was refused.
static REFUSED: AtomicBool = AtomicBool::new(false);

std::thread_local! {
    /// How deep this thread is in calls holding the lock (0: it holds
    /// none).
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// The lock's guard while this thread holds it.
    static HELD: RefCell<Option<MutexGuard<'static, ()>>> = const { RefCell::new(None) };
}

/// This thread's id: its thread pointer, one instruction, no call (a
/// call would make every exported function save its arguments first).
/// Distinct between live threads; reused only after a thread has ended,
/// as `pthread_self`'s value (the same address on x86-64 Linux).
#[inline(always)]
fn this_thread() -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        let tp: usize;
        // SAFETY: the x86-64 ELF TLS ABI keeps at `%fs:0` a pointer to the
        // thread control block itself, for every thread: a plain load,
        // nothing written, no stack used.
        unsafe {
            std::arch::asm!(
                "mov {}, qword ptr fs:[0]",
                out(reg) tp,
                options(nostack, readonly, preserves_flags, pure)
            );
        }
        tp
    }
    #[cfg(target_arch = "aarch64")]
    {
        let tp: usize;
        // SAFETY: `tpidr_el0` is the thread pointer every thread has; reading
        // it touches no memory.
        unsafe {
            std::arch::asm!(
                "mrs {}, tpidr_el0",
                out(reg) tp,
                options(nomem, nostack, preserves_flags, pure)
            );
        }
        tp
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        // SAFETY: `pthread_self` has no preconditions and cannot fail.
        unsafe { libc::pthread_self() as usize }
    }
}

/// The thread level given: `MPI_THREAD_FUNNELED` (what `MPI_Init` gives)
/// before the job is joined.
pub(crate) fn level() -> c_int {
    match LEVEL.load(Ordering::Acquire) {
        NONE => MPI_THREAD_FUNNELED,
        l => l,
    }
}

/// The name of the level given (the info key `thread_level`'s value).
pub(crate) fn level_name() -> &'static str {
    match level() {
        MPI_THREAD_SINGLE => "MPI_THREAD_SINGLE",
        MPI_THREAD_SERIALIZED => "MPI_THREAD_SERIALIZED",
        _ => "MPI_THREAD_FUNNELED",
    }
}

/// Fixes the thread level when the job is joined, from the level asked
/// (`required`, clamped to `MPI_THREAD_SINGLE..=MPI_THREAD_SERIALIZED`);
/// the level given. At `SINGLE`/`FUNNELED` the calling thread becomes the
/// one that may call. A later call (the World model after a session, or
/// the other way round) changes nothing and gets the level fixed first.
pub(crate) fn start(required: c_int) -> c_int {
    let asked = required.clamp(MPI_THREAD_SINGLE, MPI_THREAD_SERIALIZED);
    match LEVEL.compare_exchange(NONE, asked, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => {
            if asked < MPI_THREAD_SERIALIZED {
                FREE_THREAD.store(this_thread(), Ordering::Relaxed);
            }
            asked
        }
        Err(fixed) => fixed,
    }
}

/// Whether this thread calls without the lock (the one that joined at
/// `MPI_THREAD_SINGLE`/`FUNNELED`): what [`enter`] checks first.
#[inline(always)]
pub(crate) fn free() -> bool {
    this_thread() == FREE_THREAD.load(Ordering::Relaxed)
}

/// Whether this thread is inside a library call now (it may touch the
/// state).
pub(crate) fn inside() -> bool {
    this_thread() == FREE_THREAD.load(Ordering::Relaxed) || DEPTH.with(Cell::get) > 0
}

/// A thread's passage into the library, held for the call's duration.
#[must_use]
pub(crate) enum Entry {
    /// The thread that may call without the lock.
    Free,
    /// A call holding the lock (or nested in one that does), with the
    /// universe's runtime made this thread's for the outermost one.
    Held(Option<pertinax::ThreadEntry>),
}

/// The entry guard of every exported function: `Err(())` for a call this
/// thread may not make (another thread's at `MPI_THREAD_FUNNELED`).
#[inline(always)]
pub(crate) fn enter() -> Result<Entry, ()> {
    if free() {
        return Ok(Entry::Free);
    }
    enter_slow()
}

#[cold]
#[inline(never)]
fn enter_slow() -> Result<Entry, ()> {
    let depth = DEPTH.with(Cell::get);
    if depth > 0 {
        DEPTH.with(|d| d.set(depth + 1));
        return Ok(Entry::Held(None));
    }
    if funneled_elsewhere() {
        return Err(());
    }
    lock();
    // The job may have been joined at `FUNNELED` by another thread while
    // this one waited.
    if funneled_elsewhere() {
        unlock();
        return Err(());
    }
    DEPTH.with(|d| d.set(1));
    // A blocking call of the core drives the runtime of its thread; give
    // this thread the universe's while it holds the lock.
    let runtime = crate::state::with(|s| s.universe.enter_thread());
    Ok(Entry::Held(runtime))
}

/// Whether the level is `SINGLE`/`FUNNELED` (this thread is not the one
/// that may call, or it would have passed at once).
fn funneled_elsewhere() -> bool {
    let l = LEVEL.load(Ordering::Acquire);
    l != NONE && l < MPI_THREAD_SERIALIZED
}

fn lock() {
    let guard = BUSY.lock().unwrap_or_else(PoisonError::into_inner);
    HELD.with(|h| *h.borrow_mut() = Some(guard));
}

fn unlock() {
    drop(HELD.with(|h| h.borrow_mut().take()));
}

impl Drop for Entry {
    #[inline]
    fn drop(&mut self) {
        if let Entry::Held(runtime) = self {
            // The runtime leaves this thread before the lock is let go.
            drop(runtime.take());
            leave();
        }
    }
}

#[cold]
#[inline(never)]
fn leave() {
    let depth = DEPTH.with(Cell::get) - 1;
    DEPTH.with(|d| d.set(depth));
    if depth == 0 {
        unlock();
    }
}

/// What a refused call returns: `MPI_ERR_OTHER`, said once per process on
/// standard error (the call touches no state, so no error handler runs).
#[cold]
#[inline(never)]
pub fn refused(what: &str) -> c_int {
    if !REFUSED.swap(true, Ordering::Relaxed) {
        eprintln!(
            "pertinax MPI: {what}: called from a thread other than the one that initialized \
             MPI, at MPI_THREAD_FUNNELED: refused with MPI_ERR_OTHER (ask MPI_Init_thread \
             for MPI_THREAD_SERIALIZED to call from several threads); later refusals are \
             not reported"
        );
    }
    MPI_ERR_OTHER
}

/// An error of a function that passes no guard (callable from any
/// thread): through `comm`'s error handler from a thread inside the
/// library (the one that may call at `FUNNELED`, or one holding the lock),
/// else the class alone, as `MPI_ERRORS_RETURN` would give it.
pub(crate) fn raise_anywhere(comm: c_int, what: &str, class: c_int) -> c_int {
    if inside() {
        crate::errors::raise(comm, what, class)
    } else {
        class
    }
}
