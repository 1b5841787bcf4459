//! Work of the program's own inside MPI's progress (`shim/pxm_progress.c`):
//! [`register_hook`] hooks a function of this crate into MPI's progress
//! engine (Open MPI's `opal_progress_register`), and [`with_progress`]
//! runs a blocking MPI call while that function calls the caller's round on
//! each of MPI's progress passes. So a program that matches or schedules
//! messages itself keeps doing so while it blocks in `MPI_Allreduce`.
//!
//! - Outside [`with_progress`] the hook returns at once (one load).
//! - Not re-entered: the MPI calls of a round run MPI's progress again, and
//!   the nested call returns at once.
//! - A round that panics is caught (it must not unwind through MPI's C
//!   frames) and not called again during that call.

use std::cell::Cell;
use std::ffi::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::ffi;

/// A round, its lifetime erased: valid only while the `with_progress`
/// call that stored it runs.
type Round = *const (dyn Fn() -> bool + 'static);

thread_local! {
    /// The round of the running `with_progress`, if any.
    static ROUND: Cell<Option<Round>> = const { Cell::new(None) };
    /// Whether a round runs from the hook now.
    static RUNNING: Cell<bool> = const { Cell::new(false) };
}

/// Registers the hook with MPI, once; whether this MPI has one (Open MPI
/// does; elsewhere [`with_progress`] must not be relied on). Call after
/// [`crate::init_thread`], not from inside MPI's progress.
pub fn register_hook() -> bool {
    // SAFETY: looks up and calls libopen-pal's registration, once (the C
    // side remembers), outside any progress round (the caller's promise);
    // `on_progress` is a plain function that never unwinds.
    unsafe { ffi::pxm_progress_hook(on_progress) != 0 }
}

/// Runs `call` (a blocking MPI call) while MPI's progress runs `round`
/// (which returns whether it moved anything) on each of its passes.
/// `round` may call MPI. Needs [`register_hook`] to have returned true.
pub fn with_progress<R>(round: &dyn Fn() -> bool, call: impl FnOnce() -> R) -> R {
    struct Restore(Option<Round>);
    impl Drop for Restore {
        fn drop(&mut self) {
            ROUND.with(|r| r.set(self.0));
        }
    }
    let ptr: *const (dyn Fn() -> bool + '_) = round;
    // SAFETY: erasing the lifetime is sound: the pointer is stored only until
    // `Restore` puts the previous one back, before `round` goes out of
    // scope, and read only on this thread meanwhile (`on_progress`).
    let erased: Round = unsafe { std::mem::transmute::<_, Round>(ptr) };
    let _restore = Restore(ROUND.with(|r| r.replace(Some(erased))));
    call()
}

/// MPI's progress engine calls this on each pass.
extern "C" fn on_progress() -> c_int {
    let Ok(Some(round)) = ROUND.try_with(Cell::get) else {
        return 0;
    };
    if RUNNING.with(Cell::get) {
        return 0;
    }
    RUNNING.with(|r| r.set(true));
    // SAFETY: `ROUND` holds the round only while the `with_progress` call
    // that lent it runs on this thread (see there).
    let moved = catch_unwind(AssertUnwindSafe(|| unsafe { (*round)() }));
    RUNNING.with(|r| r.set(false));
    match moved {
        Ok(m) => c_int::from(m),
        Err(_) => {
            ROUND.with(|r| r.set(None));
            0
        }
    }
}
