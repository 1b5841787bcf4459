//! The per-process runtime behind every communicator: the backend chosen
//! at start-up and what it knows of the job. [`crate::init`] makes it (see
//! `universe.rs`); communicators, requests and the recovery calls use it.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use crate::backend::{Active, Backend};
use crate::error::{Error, Result};

thread_local! {
    /// The runtime of this process, for scopes that must drive progress.
    static CURRENT: RefCell<Option<Rc<Runtime>>> = const { RefCell::new(None) };
}

/// What the runtime knows of the job.
#[derive(Debug, Clone)]
pub(crate) struct JobInfo {
    pub rank: usize,
    pub size: usize,
    pub job_id: String,
}

/// The per-process state behind every communicator.
#[derive(Debug)]
pub(crate) struct Runtime {
    /// The backend (see [`crate::backend`]).
    pub b: Active,
    pub job: JobInfo,
    finalized: Cell<bool>,
}

impl Runtime {
    /// The runtime over backend `b`, made this thread's current one, with
    /// the reporter of injected deaths ([`crate::inject`]) installed.
    pub fn install(b: Active, job: JobInfo) -> Rc<Runtime> {
        let rt = Rc::new(Runtime {
            b,
            job,
            finalized: Cell::new(false),
        });
        CURRENT.with(|c| *c.borrow_mut() = Some(rt.clone()));
        let weak = Rc::downgrade(&rt);
        crate::inject::set_reporter(Some(Box::new(move |point, hit, signal| {
            if let Some(rt) = weak.upgrade() {
                rt.b.report_injection(point, hit, signal);
            }
        })));
        rt
    }

    /// Finalizes the backend once; later calls (and every operation) see
    /// `Finalized`.
    pub fn finalize(&self) -> Result<()> {
        if self.finalized.replace(true) {
            return Ok(());
        }
        CURRENT.with(|c| *c.borrow_mut() = None);
        crate::inject::set_reporter(None);
        self.b.finalize()
    }

    /// Fails with `Finalized` after finalization.
    #[inline]
    pub fn check(&self) -> Result<()> {
        if self.finalized.get() {
            return Err(Error::Finalized);
        }
        Ok(())
    }

    /// The next context id this process could use (a multiple of 4; the
    /// three above it belong to the same communicator).
    pub fn next_ctx(&self) -> u32 {
        self.b.next_ctx()
    }

    /// Records that context ids below `ctx + 4` are used.
    pub fn use_ctx(&self, ctx: u32) {
        self.b.use_ctx(ctx)
    }

    /// One step of progress for a scope that waits for its requests.
    #[inline]
    pub fn drain_step(&self, backoff: &mut crate::wait::Backoff) {
        self.b.drain_step(backoff)
    }
}

/// While it lives, a runtime is the current one of a thread that did not
/// have it: see [`crate::Universe::enter_thread`].
#[derive(Debug)]
#[must_use = "the runtime stays this thread's only while the entry lives"]
pub struct ThreadEntry {
    /// Whether this entry installed the runtime (and so removes it).
    installed: bool,
    /// The entry belongs to the thread it installed the runtime on.
    _thread: std::marker::PhantomData<*const ()>,
}

impl ThreadEntry {
    /// Makes `rt` this thread's current runtime unless the thread has one.
    pub(crate) fn new(rt: &Rc<Runtime>) -> ThreadEntry {
        let installed = CURRENT.with(|c| {
            let mut c = c.borrow_mut();
            if c.is_some() {
                return false;
            }
            *c = Some(rt.clone());
            true
        });
        ThreadEntry {
            installed,
            _thread: std::marker::PhantomData,
        }
    }
}

impl Drop for ThreadEntry {
    fn drop(&mut self) {
        if self.installed {
            // The clone is dropped here, on the thread that made it.
            let _ = CURRENT.with(|c| c.borrow_mut().take());
        }
    }
}

/// Runs `f` with this thread's runtime, if initialized.
pub(crate) fn with_current<R>(f: impl FnOnce(&Rc<Runtime>) -> R) -> Option<R> {
    CURRENT.with(|c| c.borrow().as_ref().map(f))
}
