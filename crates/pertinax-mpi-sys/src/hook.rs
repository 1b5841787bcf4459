//! Work of the program's own inside MPI's progress (`shim/pxm_progress.c`):
//! [`with_progress`] runs a blocking MPI call while MPI's progress engine
//! (Open MPI's `opal_progress_register`) calls the caller's round on each
//! of its passes. So a program that matches or schedules messages itself
//! keeps doing so while it blocks in `MPI_Allreduce`.
//!
//! - The hook is registered for the call only, so that MPI's other calls
//!   (a ping-pong's `MPI_Recv`) pay nothing for it.
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

/// Whether this MPI has the progress hook (Open MPI does); without it
/// [`with_progress`] runs the call alone.
pub fn has_progress_hook() -> bool {
    // SAFETY: looks up two functions of libopen-pal by name.
    unsafe { ffi::pxm_progress_available() != 0 }
}

/// Runs `call` (a blocking MPI call) while MPI's progress runs `round`
/// (which returns whether it moved anything) on each of its passes.
/// `round` may call MPI. Call it outside MPI's progress (not from a
/// round). Without the hook ([`has_progress_hook`]) `round` is not run.
pub fn with_progress<R>(round: &dyn Fn() -> bool, call: impl FnOnce() -> R) -> R {
    struct Restore(Option<Round>);
    impl Drop for Restore {
        fn drop(&mut self) {
            ROUND.with(|r| r.set(self.0));
            if self.0.is_none() {
                // SAFETY: unregisters a plain function, outside any
                // progress pass (the caller's promise).
                unsafe { ffi::pxm_progress_disarm(on_progress) };
            }
        }
    }
    let ptr: *const (dyn Fn() -> bool + '_) = round;
    // SAFETY: erasing the lifetime is sound: the pointer is stored only until
    // `Restore` puts the previous one back, before `round` goes out of
    // scope, and read only on this thread meanwhile (`on_progress`).
    let erased: Round = unsafe { std::mem::transmute::<_, Round>(ptr) };
    let restore = Restore(ROUND.with(|r| r.replace(Some(erased))));
    if restore.0.is_none() {
        // SAFETY: registers a plain function that never unwinds, outside
        // any progress pass (the caller's promise).
        unsafe { ffi::pxm_progress_arm(on_progress) };
    }
    let r = call();
    drop(restore);
    r
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
