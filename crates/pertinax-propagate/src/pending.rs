//! Guarded non-blocking operations: requests whose completion returns the
//! propagated errors, by blocking wait or as a [`Future`].
//!
//! Start the operation on [`Guarded::comm`] inside a [`pertinax::scope`],
//! then hand the request to the guard:
//!
//! ```no_run
//! use pertinax::CommunicatorExt as _;
//! use pertinax_propagate::{Guarded, GuardError};
//!
//! let universe = pertinax::init()?;
//! let g = Guarded::new(&universe.world())?;
//! let mut got = [0u64; 4];
//! let r = pertinax::scope(|s| {
//!     let req = g.comm().irecv(s, &mut got, 0, 1)?;
//!     // ... compute while the message travels ...
//!     Ok::<_, pertinax::Error>(g.request(req).wait())
//! })?;
//! match r {
//!     Ok(_completion) => {}
//!     Err(GuardError::Propagated(p)) => eprintln!("{p}"), // the same everywhere
//!     Err(GuardError::Other(e)) => return Err(e.into()),
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # `async`
//!
//! A [`GuardedRequest`] is also a [`Future`], so `async` code can `.await`
//! it; no runtime is needed or imposed. Communication only moves while
//! somebody polls the engine (there is no progress thread: communicators
//! are `!Send`), so each poll drives progress, and a request that is still
//! pending asks to be polled again on a bounded schedule instead of at
//! once: the first 16 pending polls re-wake at once (a message about to
//! arrive is not delayed), later ones are woken by a timer thread after a
//! delay that doubles from 20 µs to at most 1 ms. The timer thread only
//! calls wakers; it never touches a communicator. A rank awaiting a
//! message that takes long therefore costs at most about a thousand cheap
//! polls a second instead of a busy loop (measured: a receive awaited for
//! 2 s used 37 % of a shared core before, about 2 % with the schedule),
//! and learns of its completion at most about 1 ms late. [`block_on`] is
//! the minimal executor: it parks the thread between wake-ups. When a poll
//! meets a propagated error, it runs the resolution (a collective over the
//! survivors) inside that poll.

use std::collections::BinaryHeap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use pertinax::{Communicator, Completion, Pending, PendingOp};

use crate::{GuardError, Guarded, Shared};

/// A non-blocking operation on a guarded communicator; see the [crate
/// documentation](crate#non-blocking-operations-and-async).
#[derive(Debug)]
#[must_use = "a request does nothing unless waited for, tested or awaited"]
pub struct GuardedRequest<'g, 's> {
    guard: &'g Guarded,
    req: PendingOp<'s>,
    /// The result, once known (by a poll of the core's waits), until taken.
    done: Option<Result<Completion, GuardError>>,
    /// Polls so far that found the request pending.
    pending: u32,
    /// The waker the timer will call, shared with it.
    slot: Option<Arc<WakeSlot>>,
}

impl Guarded {
    /// Takes charge of `req`, a request started on [`Guarded::comm`]: its
    /// completion returns the errors propagated to this rank.
    pub fn request<'g, 's>(&'g self, req: PendingOp<'s>) -> GuardedRequest<'g, 's> {
        GuardedRequest {
            guard: self,
            req,
            done: None,
            pending: 0,
            slot: None,
        }
    }
}

/// A pending operation of the guarded communicator whose completion
/// returns the propagated errors (see [`Guarded::pending`]).
pub(crate) struct GuardedPending<'s, C: Communicator + 'static> {
    pub(crate) guard: Rc<Shared<C>>,
    pub(crate) op: PendingOp<'s, C::Error>,
    /// The result, once known, until taken.
    pub(crate) done: Option<Result<Completion, GuardError<C::Error>>>,
}

impl<C: Communicator + 'static> Pending for GuardedPending<'_, C> {
    type Output = Completion;
    type Error = GuardError<C::Error>;

    fn is_active(&self) -> bool {
        self.done.is_some() || self.op.is_active()
    }
    fn is_done(&mut self) -> bool {
        if self.done.is_none() && self.op.is_active() {
            let op = &mut self.op;
            match self.guard.run(|_| op.test()) {
                Ok(None) => return false,
                Ok(Some(c)) => self.done = Some(Ok(c)),
                Err(e) => self.done = Some(Err(e)),
            }
        }
        true
    }
    fn has_failed(&mut self) -> bool {
        matches!(self.done, Some(Err(_)))
    }
    fn take(&mut self) -> Result<Completion, GuardError<C::Error>> {
        match self.done.take() {
            Some(r) => r,
            None => {
                let op = &mut self.op;
                self.guard.run(|_| op.wait_mut())
            }
        }
    }
    fn step(&self, b: &mut pertinax::Backoff) {
        self.op.step(b);
    }
    fn cancel(&mut self) -> Result<bool, GuardError<C::Error>> {
        match self.done {
            Some(_) => Ok(false),
            None => self.op.cancel().map_err(GuardError::Other),
        }
    }
}

/// A guarded request is a pending operation of the core's kind too: the
/// core's waits take guarded requests (`pertinax::wait_all(&mut [g.request(a),
/// g.request(b)])`), and return the propagated error as soon as it is
/// known.
impl Pending for GuardedRequest<'_, '_> {
    type Output = Completion;
    type Error = GuardError;

    fn is_active(&self) -> bool {
        self.done.is_some() || self.req.is_active()
    }
    fn is_done(&mut self) -> bool {
        if self.done.is_none() && self.req.is_active() {
            let req = &mut self.req;
            match self.guard.run(|_| req.test()) {
                Ok(None) => return false,
                Ok(Some(st)) => self.done = Some(Ok(st)),
                Err(e) => self.done = Some(Err(e)),
            }
        }
        true
    }
    fn has_failed(&mut self) -> bool {
        matches!(self.done, Some(Err(_)))
    }
    fn take(&mut self) -> Result<Completion, GuardError> {
        match self.done.take() {
            Some(r) => r,
            None => {
                let req = &mut self.req;
                self.guard.run(|_| req.wait_mut())
            }
        }
    }
    fn step(&self, b: &mut pertinax::Backoff) {
        self.req.step(b);
    }
    fn cancel(&mut self) -> Result<bool, GuardError> {
        match self.done {
            Some(_) => Ok(false),
            None => Ok(self.req.cancel()?),
        }
    }
}

impl GuardedRequest<'_, '_> {
    /// Waits for completion.
    ///
    /// # Errors
    /// As [`Guarded::run`].
    pub fn wait(mut self) -> Result<Completion, GuardError> {
        Pending::take(&mut self)
    }

    /// Completes the request if it can without waiting: `Ok(None)` while
    /// it is pending.
    ///
    /// # Errors
    /// As [`GuardedRequest::wait`].
    pub fn test(&mut self) -> Result<Option<Completion>, GuardError> {
        Pending::test(self)
    }
}

impl Future for GuardedRequest<'_, '_> {
    type Output = Result<Completion, GuardError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        match this.test() {
            Ok(Some(st)) => Poll::Ready(Ok(st)),
            Ok(None) => {
                this.pending = this.pending.saturating_add(1);
                match this.pending.checked_sub(SPIN_POLLS) {
                    None | Some(0) => cx.waker().wake_by_ref(),
                    Some(k) => {
                        let delay = FIRST_DELAY
                            .saturating_mul(1u32 << (k - 1).min(16))
                            .min(MAX_DELAY);
                        let slot = this.slot.get_or_insert_with(Default::default);
                        wake_after(slot, delay, cx.waker());
                    }
                }
                Poll::Pending
            }
            Err(e) => Poll::Ready(Err(e)),
        }
    }
}

/// Pending polls that re-wake at once.
const SPIN_POLLS: u32 = 16;
/// The first timed re-wake's delay (doubling from there).
const FIRST_DELAY: Duration = Duration::from_micros(20);
/// The longest delay between two polls of a pending request.
const MAX_DELAY: Duration = Duration::from_millis(1);

/// The waker of one pending request, while a timed wake is scheduled.
#[derive(Debug, Default)]
struct WakeSlot(Mutex<Option<Waker>>);

/// One scheduled wake.
struct Entry {
    at: Instant,
    slot: Arc<WakeSlot>,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.at == o.at
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    /// Reversed: the heap's top is the earliest.
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        o.at.cmp(&self.at)
    }
}

/// The process's timer: wakes each scheduled waker at its time.
#[derive(Default)]
struct Timer {
    queue: Mutex<BinaryHeap<Entry>>,
    changed: Condvar,
}

/// A lock that a panic elsewhere did not make unusable (the data is a
/// queue of wakers, valid whatever happened).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The timer, started on first use; `None` if its thread cannot start.
fn timer() -> Option<&'static Timer> {
    static TIMER: OnceLock<Option<&'static Timer>> = OnceLock::new();
    *TIMER.get_or_init(|| {
        let t: &'static Timer = Box::leak(Box::default());
        std::thread::Builder::new()
            .name("pertinax-propagate-timer".into())
            .spawn(move || t.run())
            .ok()
            .map(|_| t)
    })
}

impl Timer {
    fn run(&self) {
        let mut q = lock(&self.queue);
        loop {
            let now = Instant::now();
            match q.peek().map(|e| e.at) {
                None => q = self.changed.wait(q).unwrap_or_else(|p| p.into_inner()),
                Some(at) if at <= now => {
                    let due = q.pop().map(|e| e.slot);
                    drop(q);
                    if let Some(w) = due.and_then(|s| lock(&s.0).take()) {
                        w.wake();
                    }
                    q = lock(&self.queue);
                }
                Some(at) => {
                    q = self
                        .changed
                        .wait_timeout(q, at - now)
                        .map(|(q, _)| q)
                        .unwrap_or_else(|p| p.into_inner().0);
                }
            }
        }
    }
}

/// Wakes `waker` after `delay` (once, however many polls ask while it is
/// scheduled: the latest waker is the one woken).
fn wake_after(slot: &Arc<WakeSlot>, delay: Duration, waker: &Waker) {
    let Some(t) = timer() else {
        // No timer thread: pace the polls here instead.
        std::thread::sleep(delay);
        waker.wake_by_ref();
        return;
    };
    let scheduled = lock(&slot.0).replace(waker.clone()).is_some();
    if scheduled {
        return;
    }
    let at = Instant::now() + delay;
    let mut q = lock(&t.queue);
    let earliest = q.peek().is_none_or(|e| at < e.at);
    q.push(Entry {
        at,
        slot: Arc::clone(slot),
    });
    drop(q);
    if earliest {
        t.changed.notify_one();
    }
}

/// Wakes a thread parked in [`block_on`].
struct Unpark(std::thread::Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs a future to completion on this thread (the minimal executor for
/// guarded requests; any executor works): polls it, and parks the thread
/// until it asks to be polled again.
pub fn block_on<F: Future>(fut: F) -> F::Output {
    let mut fut = std::pin::pin!(fut);
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park();
    }
}
