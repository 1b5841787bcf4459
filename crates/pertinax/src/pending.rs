//! [`Pending`]: the one family of non-blocking operations, and the waits
//! over any number of them ([`wait_all`], [`wait_any`], [`test_any`]).
//!
//! The core's [`Request`](crate::Request) is a pending operation (its
//! result a [`Status`](crate::Status)), and so is every decorator's (a
//! resilient receive whose failed source goes to the policy, a guarded
//! operation that returns the propagated error, a resilient non-blocking
//! collective, a logged send) and the boxed [`PendingOp`] that the
//! [`Communicator`](crate::Communicator) trait's non-blocking methods
//! return (its result a [`Completion`]). The same three waits serve them
//! all, with ULFM's semantics: a wait returns a failure as soon as it is
//! known, with its index, and leaves every other operation as it was.

use crate::communicator::Completion;
use crate::error::Error;
use crate::request::Request;
use crate::wait::Backoff;

/// A pending non-blocking operation: it completes once, with an
/// [`Pending::Output`] or an [`Pending::Error`], and its result is taken
/// once (by [`Pending::wait_mut`] or a type's own `wait`, a successful
/// [`Pending::test`], or one of
/// [`wait_all`], [`wait_any`], [`test_any`]); it is inactive afterwards.
///
/// Object safe ([`PendingOp`] boxes a decorator's). An implementation
/// provides the non-blocking primitives; the waits are built on them, and
/// an implementation with a better blocking wait overrides
/// [`Pending::wait_mut`].
pub trait Pending {
    /// What a successful operation gives.
    type Output;
    /// Its error.
    type Error;

    /// Whether the result has not been taken yet.
    fn is_active(&self) -> bool;
    /// Whether the operation has completed, successfully or not, after
    /// moving what can move without waiting; the result stays for
    /// [`Pending::take`]. True for an inactive operation.
    fn is_done(&mut self) -> bool;
    /// Whether it completed with an error, without taking it: false while
    /// it is pending, and exact once [`Pending::is_done`] said true (an
    /// implementation that learns its result only by taking it takes it
    /// in `is_done` and keeps it), so that [`wait_all`] never takes a
    /// result it would then lose to another operation's failure.
    fn has_failed(&mut self) -> bool;
    /// Takes the result; the operation is inactive afterwards. On one
    /// still pending it waits.
    ///
    /// # Errors
    /// The operation's error; `RequestInactive` (or the decorator's
    /// equivalent) once the result was taken.
    fn take(&mut self) -> Result<Self::Output, Self::Error>;
    /// One round of waiting for it: progress, or a short idle (spin,
    /// yield, sleep) when nothing moved.
    fn step(&self, b: &mut Backoff);
    /// Cancels the operation if it has not started moving data; true if
    /// it was (see [`Request::cancel`](crate::Request::cancel)).
    /// Operations that cannot be cancelled return false.
    ///
    /// # Errors
    /// When the result was already taken.
    fn cancel(&mut self) -> Result<bool, Self::Error>;

    /// Waits for completion and takes the result, leaving the operation
    /// inactive (as `MPI_Wait` leaves `MPI_REQUEST_NULL`): what a type's
    /// own `wait(self)` runs, for a borrowed or boxed operation.
    ///
    /// # Errors
    /// As [`Pending::take`].
    fn wait_mut(&mut self) -> Result<Self::Output, Self::Error> {
        let mut b = Backoff::default();
        while !self.is_done() {
            self.step(&mut b);
        }
        self.take()
    }
    /// Takes the result if the operation has completed: `Ok(None)` while
    /// it is pending.
    ///
    /// # Errors
    /// As [`Pending::take`].
    fn test(&mut self) -> Result<Option<Self::Output>, Self::Error> {
        if self.is_done() {
            self.take().map(Some)
        } else {
            Ok(None)
        }
    }
}

/// A pending operation of a [`Communicator`](crate::Communicator) with
/// errors `E`, as the trait's non-blocking methods return it: a plain
/// [`Comm`](crate::Comm)'s request held inline (no allocation), or a
/// decorator's operation, boxed ([`PendingOp::new`]). Its result is a
/// [`Completion`].
#[must_use = "a pending operation does nothing unless waited for or tested"]
pub struct PendingOp<'s, E = Error>(Inner<'s, E>);

enum Inner<'s, E> {
    /// The core's request, its errors converted by the function.
    Core(Request<'s>, fn(Error) -> E),
    Boxed(Box<dyn Pending<Output = Completion, Error = E> + 's>),
}

impl<'s, E> PendingOp<'s, E> {
    /// A decorator's pending operation.
    pub fn new(op: impl Pending<Output = Completion, Error = E> + 's) -> PendingOp<'s, E> {
        PendingOp(Inner::Boxed(Box::new(op)))
    }

    /// The core's request, its errors converted into `E`.
    pub fn from_request(req: Request<'s>) -> PendingOp<'s, E>
    where
        E: From<Error>,
    {
        PendingOp(Inner::Core(req, E::from))
    }

    /// Whether the result has not been taken yet.
    pub fn is_active(&self) -> bool {
        Pending::is_active(self)
    }

    /// Cancels the operation if it has not started moving data; true if
    /// it was (see [`Request::cancel`]).
    ///
    /// # Errors
    /// When the result was already taken.
    pub fn cancel(&mut self) -> Result<bool, E> {
        Pending::cancel(self)
    }

    /// Waits for completion and takes the result (see [`Pending::take`]).
    ///
    /// # Errors
    /// The operation's error; `RequestInactive` (or the decorator's
    /// equivalent) when the result was already taken.
    pub fn wait(mut self) -> Result<Completion, E> {
        self.wait_mut()
    }

    /// Takes the result if the operation has completed: `Ok(None)` while
    /// it is pending.
    ///
    /// # Errors
    /// As [`PendingOp::wait`].
    pub fn test(&mut self) -> Result<Option<Completion>, E> {
        Pending::test(self)
    }
}

impl<'s> From<Request<'s>> for PendingOp<'s, Error> {
    fn from(req: Request<'s>) -> PendingOp<'s, Error> {
        PendingOp::from_request(req)
    }
}

impl<E> std::fmt::Debug for PendingOp<'_, E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Inner::Core(r, _) => f.debug_tuple("PendingOp").field(r).finish(),
            Inner::Boxed(_) => f.write_str("PendingOp(..)"),
        }
    }
}

impl<E> Pending for PendingOp<'_, E> {
    type Output = Completion;
    type Error = E;

    fn is_active(&self) -> bool {
        match &self.0 {
            Inner::Core(r, _) => r.is_active(),
            Inner::Boxed(b) => b.is_active(),
        }
    }
    fn is_done(&mut self) -> bool {
        match &mut self.0 {
            Inner::Core(r, _) => r.is_done(),
            Inner::Boxed(b) => b.is_done(),
        }
    }
    fn has_failed(&mut self) -> bool {
        match &mut self.0 {
            Inner::Core(r, _) => r.has_failed(),
            Inner::Boxed(b) => b.has_failed(),
        }
    }
    fn take(&mut self) -> Result<Completion, E> {
        match &mut self.0 {
            Inner::Core(r, conv) => Pending::take(r).map(Completion::of).map_err(*conv),
            Inner::Boxed(b) => b.take(),
        }
    }
    fn step(&self, bo: &mut Backoff) {
        match &self.0 {
            Inner::Core(r, _) => r.step(bo),
            Inner::Boxed(b) => b.step(bo),
        }
    }
    fn cancel(&mut self) -> Result<bool, E> {
        match &mut self.0 {
            Inner::Core(r, conv) => r.cancel().map_err(*conv),
            Inner::Boxed(b) => b.cancel(),
        }
    }
    fn wait_mut(&mut self) -> Result<Completion, E> {
        match &mut self.0 {
            Inner::Core(r, conv) => Pending::wait_mut(r).map(Completion::of).map_err(*conv),
            Inner::Boxed(b) => b.wait_mut(),
        }
    }
}

/// A pending operation whose errors convert into `F` (for a decorator
/// that hands out the requests of the communicator below it).
pub fn pending_into<'s, E: 's, F: From<E> + 's>(p: PendingOp<'s, E>) -> PendingOp<'s, F> {
    PendingOp::new(MapErr(p, std::marker::PhantomData))
}

/// See [`pending_into`].
struct MapErr<'s, E, F>(PendingOp<'s, E>, std::marker::PhantomData<fn() -> F>);

impl<E, F: From<E>> Pending for MapErr<'_, E, F> {
    type Output = Completion;
    type Error = F;

    fn is_active(&self) -> bool {
        self.0.is_active()
    }
    fn is_done(&mut self) -> bool {
        self.0.is_done()
    }
    fn has_failed(&mut self) -> bool {
        self.0.has_failed()
    }
    fn take(&mut self) -> Result<Completion, F> {
        Ok(self.0.take()?)
    }
    fn step(&self, b: &mut Backoff) {
        self.0.step(b)
    }
    fn cancel(&mut self) -> Result<bool, F> {
        Ok(self.0.cancel()?)
    }
    fn wait_mut(&mut self) -> Result<Completion, F> {
        Ok(self.0.wait_mut()?)
    }
}

impl<P: Pending + ?Sized> Pending for Box<P> {
    type Output = P::Output;
    type Error = P::Error;

    fn is_active(&self) -> bool {
        (**self).is_active()
    }
    fn is_done(&mut self) -> bool {
        (**self).is_done()
    }
    fn has_failed(&mut self) -> bool {
        (**self).has_failed()
    }
    fn take(&mut self) -> Result<P::Output, P::Error> {
        (**self).take()
    }
    fn step(&self, b: &mut Backoff) {
        (**self).step(b)
    }
    fn cancel(&mut self) -> Result<bool, P::Error> {
        (**self).cancel()
    }
    fn wait_mut(&mut self) -> Result<P::Output, P::Error> {
        (**self).wait_mut()
    }
    fn test(&mut self) -> Result<Option<P::Output>, P::Error> {
        (**self).test()
    }
}

/// An operation of a [`wait_all`], [`wait_any`] or [`test_any`] failed:
/// which one, and its error.
///
/// The failed operation is inactive (its result is this error); every
/// other one of the slice is as it was: one that completed keeps its
/// result for its own wait or test, one that is pending stays pending
/// (wait for it again, cancel it, or drop it). Converts into the core's
/// [`Error`], so `?` works in functions returning [`crate::Result`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("request {index} failed: {error}")]
pub struct WaitError<E = Error> {
    /// Position of the failed operation in the slice.
    pub index: usize,
    /// Its error.
    #[source]
    pub error: E,
}

impl From<WaitError> for Error {
    fn from(e: WaitError) -> Error {
        e.error
    }
}

/// What [`wait_any`] and [`test_any`] return: the index and result of
/// the operation taken, if any.
pub type AnyResult<P> =
    Result<Option<(usize, <P as Pending>::Output)>, WaitError<<P as Pending>::Error>>;

/// Takes operation `i`'s result as the answer of a wait over the slice.
fn take_at<P: Pending>(reqs: &mut [P], i: usize) -> Result<P::Output, WaitError<P::Error>> {
    reqs[i]
        .take()
        .map_err(|error| WaitError { index: i, error })
}

/// One round of waiting for `reqs` (through the first active one: every
/// operation of a process moves on the same progress).
fn step_any<P: Pending>(reqs: &[P], b: &mut Backoff) {
    if let Some(r) = reqs.iter().find(|r| r.is_active()) {
        r.step(b);
    }
}

/// Waits until one active operation completes (successfully or not);
/// returns its index and result. `Ok(None)` when none is active. When
/// several are complete, the lowest index is taken.
///
/// # Errors
/// When the operation taken failed: its error and index ([`WaitError`]),
/// as soon as the failure is known; the failed operation is inactive, the
/// others are untouched.
pub fn wait_any<P: Pending>(reqs: &mut [P]) -> AnyResult<P> {
    let mut b = Backoff::default();
    loop {
        if !reqs.iter().any(Pending::is_active) {
            return Ok(None);
        }
        if let Some(i) = reqs.iter_mut().position(|r| r.is_active() && r.is_done()) {
            return take_at(reqs, i).map(|out| Some((i, out)));
        }
        step_any(reqs, &mut b);
    }
}

/// Completes one active operation if any can be without waiting.
///
/// # Errors
/// As [`wait_any`].
pub fn test_any<P: Pending>(reqs: &mut [P]) -> AnyResult<P> {
    match reqs.iter_mut().position(|r| r.is_active() && r.is_done()) {
        Some(i) => take_at(reqs, i).map(|out| Some((i, out))),
        None => Ok(None),
    }
}

/// Waits for every active operation; returns their results in order
/// (inactive ones are skipped).
///
/// # Errors
/// As soon as an operation fails (its failure is known, whether or not
/// the others are complete), that operation's error with its index
/// ([`WaitError`]), as ULFM's `MPI_Waitall` does: the failed operation is
/// inactive; the others are untouched (complete ones keep their results,
/// pending ones stay pending and can be waited for again, cancelled, or
/// dropped). With several failed operations, the lowest index is
/// reported; a second `wait_all` reports the next. See
/// [`scope`](crate::scope) for the pattern that revokes and leaves.
pub fn wait_all<P: Pending>(reqs: &mut [P]) -> Result<Vec<P::Output>, WaitError<P::Error>> {
    let mut b = Backoff::default();
    // Results taken while looking for a failure (an operation whose
    // `has_failed` was wrong, which its `take` then corrects).
    let mut early: Vec<Option<P::Output>> = Vec::new();
    // Operations before `from` are known complete (and successful).
    let mut from = 0;
    loop {
        let mut failed = None;
        let mut all = true;
        let start = from;
        for i in start..reqs.len() {
            if !reqs[i].is_active() {
                continue;
            }
            if !reqs[i].is_done() {
                // Keep scanning: a later operation may have failed.
                failed = (i + 1..reqs.len()).find(|&j| {
                    let r = &mut reqs[j];
                    r.is_active() && r.has_failed()
                });
                from = i;
                all = false;
                break;
            }
            if reqs[i].has_failed() {
                failed = Some(i);
                break;
            }
        }
        if let Some(i) = failed {
            let out = take_at(reqs, i)?;
            early.resize_with(reqs.len(), || None);
            early[i] = Some(out);
            continue;
        }
        if all {
            break;
        }
        step_any(reqs, &mut b);
    }
    early.resize_with(reqs.len(), || None);
    let mut out = Vec::with_capacity(reqs.len());
    for (i, kept) in early.into_iter().enumerate() {
        match kept {
            Some(v) => out.push(v),
            None if reqs[i].is_active() => out.push(take_at(reqs, i)?),
            None => {}
        }
    }
    Ok(out)
}
