//! Error propagation across ranks, built only on pertinax's public API.
//!
//! In an MPI program, one rank that hits an error (a solver that diverges,
//! bad input, a panic) leaves its peers blocked forever in communication.
//! Here, a [`Guarded`] communicator turns such a local event into an error
//! at *every* rank, at its current or next guarded operation:
//!
//! - [`Guarded::signal`] raises an error with a code and a short message.
//!   Like the paper's `signal_error`, it returns only once the error has
//!   been resolved with every live rank, and returns the same
//!   [`Propagated`] error that every other rank gets from the guarded
//!   operation it is blocked in, or from its next one. Several ranks may
//!   signal at once: the error lists them all.
//! - Dropping a [`Guarded`] while its thread panics, or the death of a rank,
//!   makes every other rank's operation return a [`Propagated`] error that
//!   names the rank as *corrupted*, with the cause (the panic's message and
//!   place, or the process failure).
//!
//! After the error, the [`Guarded`] is usable again at once (no new
//! communicator to make): it continues with the ranks that are alive, in
//! the same order. The error interrupts whatever each rank was doing, which
//! need not be the same step everywhere (a rank that had just finished a
//! collective and one still inside it); programs re-synchronize before going
//! on, for example by agreeing on the step to redo (an allreduce of the
//! minimum step, as the tests do).
//!
//! # Guarantees
//!
//! - **One answer.** Errors are decided by *resolutions*, each one
//!   fault-tolerant agreement of the live ranks. Every rank that completes
//!   a resolution (through a guarded operation, [`Guarded::check`],
//!   [`Guarded::signal`], or the drop of its guard) gets the same
//!   [`Propagated`]: the same signals (rank, code, message), the same
//!   corrupted ranks and causes, in the same order. A process failure
//!   never ends a resolution with anything else (no `Internal` error, no
//!   panic).
//! - **The signaller needs nothing more.** [`Guarded::signal`] takes part
//!   in the resolution itself, so a signaller may go on with unguarded
//!   operations (a barrier on the world), return early with `?`, drop its
//!   guard or finalize right after: every other rank still gets its code
//!   and message. Its report (code and message) is out before its
//!   contribution to the agreement: a signaller killed during `signal`
//!   either counts as a process failure only (killed before it
//!   contributed), or its signal is listed with its message (killed
//!   after); in the second case its death is reported by the next
//!   resolution, which its absence from the next collective on the guard
//!   starts.
//! - **Blocking like a collective.** `signal` returns when every live rank
//!   has reached a guarded operation (the revocation interrupts the ones
//!   blocked in one) or ended. A rank that is blocked in an *unguarded*
//!   operation that waits for the signaller never gets there: unguarded
//!   operations are not protected.
//! - **Leaving.** Dropping a guard whose working communicator is revoked
//!   takes part in the pending resolution first. A rank that has ended
//!   (finalized or died) without taking part in a resolution is listed as
//!   corrupted with [`Cause::ProcessFailed`] by it: the agreement cannot
//!   tell a process that left from one that failed.
//! - **Set-up.** [`Guarded::new`] is a collective `dup` and guards nothing
//!   yet: a failure during it returns the dup's error.
//!
//! # Over any communicator
//!
//! A guard guards a plain [`Comm`] ([`Guarded::new`]) or any other
//! [`Communicator`] ([`Guarded::over`], with a function that makes it over
//! a fresh [`Comm`]), and is itself a [`Communicator`] (each operation runs
//! through [`Guarded::run`]; its errors are [`GuardError`] of the guarded
//! communicator's), so decorators stack. A guard over a
//! `pertinax_resilient::Resilient` lets the resilient layer absorb deaths
//! (its collectives repair and name the dead in their
//! [`Outcome`](pertinax::Outcome)) and still propagates signals and panics:
//! the signal revokes the resilient communicator (which then stops
//! repairing), every rank resolves on the guard's control communicator, and
//! the guard makes a new resilient communicator of the survivors. The guarded
//! communicator must support [`Communicator::revoke`] (others return
//! `Unsupported`, and a signal fails with that error). The guard uses only
//! the [`Communicator`] trait and the core's ULFM calls.
//!
//! ```no_run
//! use pertinax::{CommunicatorExt, Op};
//! use pertinax_propagate::{GuardError, Guarded};
//! use pertinax_resilient::Resilient;
//!
//! let universe = pertinax::init()?;
//! let g = Guarded::over(&universe.world(), |c| Resilient::new(&c))?;
//! let mut sum = [0u64];
//! match g.allreduce(&[1u64], &mut sum, &Op::sum()) {
//!     Ok(outcome) => println!("{} ranks, without {:?}", sum[0], outcome.missing),
//!     Err(GuardError::Propagated(p)) => eprintln!("{p}"), // the same at every rank
//!     Err(GuardError::Other(e)) => return Err(e.into()),
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Non-blocking operations and `async`
//!
//! [`Guarded::request`] wraps a request started on [`Guarded::comm`]; its
//! `wait`, `test` or `.await` (it is a [`Future`](std::future::Future),
//! with no runtime imposed; [`block_on`] is the minimal executor) return
//! the same errors as [`Guarded::run`]; [`pertinax::wait_all`] waits for
//! several (`wait_all(&mut [g.request(a), g.request(b)])`). Start the operation on [`Guarded::comm`] inside a
//! [`pertinax::scope`], then hand the request to the guard.
//!
//! Communication only moves while somebody polls the engine (there is no
//! progress thread: communicators are `!Send`), so each poll of a
//! [`GuardedRequest`] drives progress, and a request that is still pending
//! asks to be polled again on a bounded schedule instead of at once: its
//! first 16 pending polls re-wake at once (a message about to arrive is not
//! delayed), later ones are woken by a timer thread after a delay that
//! doubles from 20 µs to at most 1 ms. The timer thread only calls wakers.
//! A receive awaited for 2 s costs about 2 % of a core (it was a busy loop:
//! 37 % of a core shared with other jobs on a 2-core machine, all of an
//! idle one) and completes at most about 1 ms late. [`block_on`] parks the
//! thread between wake-ups. When a poll meets a propagated error, it runs
//! the resolution (a collective over the survivors) inside that poll.
//!
//! # How
//!
//! A `Guarded` holds two duplicates of the communicator: *work*, on which
//! the program communicates (through [`Guarded::run`]), and *control*,
//! which is never revoked. A signal, a panic or a failure revokes *work*:
//! the ULFM revocation interrupts every rank's pending operation on it.
//! Every rank then *resolves*. A reporter (a signaller, or a panicking
//! rank's guard) first sends its message to every other member of
//! *control* (eager point-to-point messages, delivered even if it dies
//! afterwards, each stamped with the resolution's sequence number). Then
//! one fault-tolerant agreement, [`Comm::shrink_gather`] of *control*,
//! carries every survivor's report kind and code (none, signal with its
//! code, or panic) and gives the survivors a fresh communicator, the new
//! *work*. Every survivor then reads the message of every reporter the
//! agreement lists; a second agreement (only when someone reported) makes
//! the rare loss of a message (a reporter killed before its message left
//! its send queue) the same at every rank, so every rank returns the same
//! error (a lost message reads "(message lost ...)"). A fault-free
//! operation pays nothing: `run` only looks at the result.
//!
//! Report messages are matched by one tag on *control* and their sequence
//! number (a `u64` that never wraps): a message left over from an earlier
//! resolution (its reporter died before contributing) can never be taken
//! for a later one's, however long the run.
//!
//! # Fault points
//!
//! For tests with real kills (`pertinax run --kill RANK@NAME#K`):
//! `prop.report.sent` (a reporter's messages are out, its contribution
//! not yet), `prop.resolve.agreed` (right after the agreement),
//! `prop.signal.done` (at the end of [`Guarded::signal`]).
//!
//! # Example
//! ```no_run
//! use pertinax_propagate::{Guarded, GuardError};
//! use pertinax::prelude::*;
//!
//! let universe = pertinax::init()?;
//! let g = Guarded::new(&universe.world())?;
//! for step in 0..100 {
//!     let local = step as f64;
//!     let mut sum = [0.0];
//!     let r = if local.is_nan() {
//!         // Every other rank hears of it at its current or next operation;
//!         // this rank gets the same error back from `signal`.
//!         g.signal(7, "diverged").and_then(|p| Err(GuardError::Propagated(p)))
//!     } else {
//!         g.run(|c| c.allreduce(&[local], &mut sum, &Op::sum()))
//!     };
//!     match r {
//!         Ok(_) => {}
//!         Err(GuardError::Propagated(p)) => {
//!             eprintln!("step {step}: {p}");   // the same at every rank
//!             // recover: recompute, restart, roll back ...
//!         }
//!         Err(GuardError::Other(e)) => return Err(e.into()),
//!     }
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod pending;

pub use pending::{block_on, GuardedRequest};

mod guarded;

use pertinax::CommunicatorExt as _;
use std::cell::RefCell;
use std::fmt;
use std::rc::Rc;

use pertinax::{Comm, CommError, Communicator, Error, Group, PendingOp, Rank};

/// Report kinds carried by the resolution's agreement.
const KIND_NONE: u32 = 0;
/// The rank signalled.
const KIND_SIGNAL: u32 = 1;
/// The rank's guard was dropped during a panic.
const KIND_CORRUPTED: u32 = 2;
/// Bytes of message a report carries.
const MSG: usize = 116;
/// Bytes of a report record: the resolution's sequence number, then the
/// message (zero-padded).
const REC: usize = 8 + MSG;
/// Tag of the report messages on the control communicator.
const MSG_TAG: i32 = pertinax::TAG_UB - 1;
/// What a survivor reads for a message that could not be delivered.
const LOST: &str = "(message lost: the rank failed while sending it)";

/// One rank's signal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signal {
    /// The rank (in the communicator the guard was made from).
    pub rank: Rank,
    /// Its code.
    pub code: i32,
    /// Its message (at most 116 bytes, cut at a character boundary).
    pub message: String,
}

/// Why a rank is corrupted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cause {
    /// Its thread panicked while it held the guard: the panic's message
    /// and place.
    Panic(String),
    /// The process failed (killed, crashed), or ended (finalized, exited)
    /// without taking part in the resolution that lists it: the agreement
    /// cannot tell the two apart.
    ProcessFailed,
}

/// A rank whose part of the computation is lost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Corrupted {
    /// The rank (in the communicator the guard was made from).
    pub rank: Rank,
    /// Why.
    pub cause: Cause,
}

/// What every rank learns when an error was propagated: the same at every
/// rank.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Propagated {
    /// The ranks that signalled, in rank order.
    pub signals: Vec<Signal>,
    /// The ranks whose guard was dropped in a panic, or that died.
    pub corrupted: Vec<Corrupted>,
}

impl fmt::Display for Propagated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for s in &self.signals {
            if !first {
                f.write_str("; ")?;
            }
            first = false;
            write!(f, "rank {} signalled {} ({})", s.rank, s.code, s.message)?;
        }
        for c in &self.corrupted {
            if !first {
                f.write_str("; ")?;
            }
            first = false;
            match &c.cause {
                Cause::Panic(m) => {
                    write!(f, "rank {} corrupted the communicator: panic {m}", c.rank)?
                }
                Cause::ProcessFailed => write!(
                    f,
                    "rank {} corrupted the communicator: process failed",
                    c.rank
                )?,
            }
        }
        if first {
            f.write_str("the communicator was revoked")?;
        }
        Ok(())
    }
}

impl std::error::Error for Propagated {}

/// The error of a guarded operation; `E` is the error of the guarded
/// communicator (the core's [`Error`] for a guarded [`Comm`]).
#[derive(Debug, thiserror::Error)]
pub enum GuardError<E: std::error::Error + 'static = Error> {
    /// An error propagated from some rank (or this one).
    #[error("propagated error: {0}")]
    Propagated(Propagated),
    /// A local error of the operation that is not about other ranks (bad
    /// argument, truncation, ...).
    #[error(transparent)]
    Other(E),
}

impl<E: std::error::Error + From<Error> + 'static> From<Error> for GuardError<E> {
    fn from(e: Error) -> Self {
        GuardError::Other(E::from(e))
    }
}

/// A guard over a guard: a propagated error is decided already (not a
/// fault for the guard above); a local error is what its own kind says.
impl<E: CommError> CommError for GuardError<E> {
    fn is_fault(&self) -> bool {
        match self {
            GuardError::Propagated(_) => false,
            GuardError::Other(e) => e.is_fault(),
        }
    }
}

thread_local! {
    /// The message and place of the panic this thread is unwinding from.
    static PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Records each panic's message and place for the guards (once per
/// process; the previous hook still runs).
fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let msg = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "(no message)".into());
            let at = info
                .location()
                .map(|l| format!(" at {}:{}", l.file(), l.line()))
                .unwrap_or_default();
            PANIC.with(|p| *p.borrow_mut() = Some(format!("{msg}{at}")));
            prev(info);
        }));
    });
}

/// A communicator whose errors reach every rank: a guard over a plain
/// [`Comm`] (the default) or over any other [`Communicator`] (see
/// [`Guarded::over`]).
pub struct Guarded<C: Communicator + 'static = Comm> {
    inner: Rc<Shared<C>>,
}

impl<C: Communicator + 'static> fmt::Debug for Guarded<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.inner.st.try_borrow() {
            Ok(st) => f
                .debug_struct("Guarded")
                .field("control", &st.control)
                .field("seq", &st.seq)
                .finish(),
            // Printed from inside a resolution.
            Err(_) => f.write_str("Guarded { (resolving) }"),
        }
    }
}

/// Makes the working communicator from a fresh [`Comm`] of the survivors.
type Make<C> = dyn Fn(Comm) -> Result<C, <C as Communicator>::Error>;

/// A guard's state, shared with its pending operations.
struct Shared<C: Communicator + 'static> {
    st: RefCell<State>,
    /// Where the program communicates (replaced by each resolution).
    work: RefCell<Rc<C>>,
    /// The group the guard was made from: ranks in errors refer to it.
    origin: Group,
    make: Rc<Make<C>>,
}

/// The guard's own communication.
#[derive(Debug)]
struct State {
    /// Never revoked: resolution runs on it.
    control: Comm,
    /// For each rank of *control*, its rank in `origin`.
    to_origin: Vec<Rank>,
    /// Resolutions so far: the sequence number of the next one's report
    /// messages (the same at every member of *control*, which all took part
    /// in every resolution).
    seq: u64,
}

/// What this rank brings to a resolution.
enum Report {
    /// Nothing: it learned of the error.
    None,
    /// A signal with its code and message.
    Signal(i32, String),
    /// Its guard is dropped during a panic: the panic's message and place.
    Corrupted(String),
}

impl Guarded<Comm> {
    /// Guards `comm` (collective over it).
    ///
    /// # Errors
    /// The errors of `dup`.
    pub fn new(comm: &Comm) -> Result<Guarded, Error> {
        Guarded::build(comm, Ok, false)
    }
}

impl<C: Communicator + 'static> Guarded<C> {
    /// Guards the communicator that `make` builds over a duplicate of
    /// `comm` (collective over `comm`): a decorator such as a resilient
    /// communicator, `|c| Resilient::new(&c)`. The guard resolves on its
    /// own duplicate of `comm` with the core's ULFM calls, and after each
    /// resolution calls `make` again, collectively, on a communicator of
    /// the survivors to get the new working communicator. The guarded
    /// communicator must support [`Communicator::revoke`] for a signal or
    /// a panic to interrupt the others (a resilient communicator does under
    /// its agree check).
    ///
    /// Unlike [`Guarded::new`] (a `dup`), the set-up is fault tolerant: the
    /// guard's communicators are shrinks of `comm` (uniform at every
    /// survivor), so a rank that dies while it runs is only missing from
    /// them (`make` must be fault tolerant too, as a resilient
    /// communicator's creation is).
    ///
    /// # Errors
    /// The errors of `shrink` (freed, finalized) and of `make`.
    pub fn over(
        comm: &Comm,
        make: impl Fn(Comm) -> Result<C, C::Error> + 'static,
    ) -> Result<Guarded<C>, C::Error> {
        Guarded::build(comm, make, true)
    }

    /// [`Guarded::over`] with shrinks (`tolerant`) or dups of `comm`.
    fn build(
        comm: &Comm,
        make: impl Fn(Comm) -> Result<C, C::Error> + 'static,
        tolerant: bool,
    ) -> Result<Guarded<C>, C::Error> {
        install_panic_hook();
        let control = if tolerant {
            comm.shrink()?
        } else {
            comm.dup()?
        };
        let origin = comm.group();
        let to_origin = origin_ranks(&control, &origin)?;
        let base = if tolerant {
            control.shrink()?
        } else {
            comm.dup()?
        };
        let work = make(base)?;
        Ok(Guarded {
            inner: Rc::new(Shared {
                st: RefCell::new(State {
                    control,
                    to_origin,
                    seq: 0,
                }),
                work: RefCell::new(Rc::new(work)),
                origin,
                make: Rc::new(make),
            }),
        })
    }

    /// The communicator to use inside [`Guarded::run`] (the current one: a
    /// resolution replaces it). Its ranks are those of the survivors, in
    /// the original order.
    pub fn comm(&self) -> Rc<C> {
        self.inner.work()
    }

    /// Runs `f` on the working communicator. A fault error (a revocation
    /// by a signalling rank, a failed peer) becomes the [`Propagated`]
    /// error that every rank gets, after which the guard works again.
    ///
    /// # Errors
    /// [`GuardError::Propagated`], or [`GuardError::Other`] for a local
    /// error of `f`.
    pub fn run<T>(
        &self,
        f: impl FnOnce(&C) -> Result<T, C::Error>,
    ) -> Result<T, GuardError<C::Error>> {
        self.inner.run(f)
    }

    /// Signals an error with `code` and `message` (at most 116 bytes, cut
    /// at a character boundary) to every rank, and takes part in its
    /// resolution at once: returns the [`Propagated`] error that every
    /// live rank gets (this signal, and every other rank's signal or
    /// failure resolved with it), the same as theirs. The guard works again
    /// afterwards; this rank's next guarded operation does not return the
    /// error a second time.
    ///
    /// Returns once every live rank has reached a guarded operation (the
    /// revocation interrupts the ones blocked in one) or ended, like a
    /// collective; after that the others have the code and message even
    /// if this rank then leaves, exits or dies.
    ///
    /// # Errors
    /// `Other` if the communicator can no longer be revoked or shrunk
    /// (freed, finalized, too many communicators; a guarded communicator
    /// that cannot be revoked).
    pub fn signal(&self, code: i32, message: &str) -> Result<Propagated, GuardError<C::Error>> {
        let p = self.inner.resolve(Report::Signal(code, cut(message)))?;
        pertinax::fault_point("prop.signal.done");
        Ok(p)
    }

    /// Runs the resolution now if an error is pending anywhere (a
    /// non-blocking check for programs that compute for long without
    /// communicating).
    ///
    /// # Errors
    /// As [`Guarded::run`].
    pub fn check(&self) -> Result<(), GuardError<C::Error>> {
        if self.inner.work().is_revoked() {
            return Err(GuardError::Propagated(self.inner.resolve(Report::None)?));
        }
        Ok(())
    }

    /// Takes charge of `op`, a pending operation started on
    /// [`Guarded::comm`]: its completion returns the errors propagated to
    /// this rank (the trait's non-blocking methods on a guard return
    /// these).
    pub fn pending<'s>(&self, op: PendingOp<'s, C::Error>) -> PendingOp<'s, GuardError<C::Error>>
    where
        C::Error: 's,
    {
        PendingOp::new(pending::GuardedPending {
            guard: Rc::clone(&self.inner),
            op,
            done: None,
        })
    }
}

impl<C: Communicator + 'static> Shared<C> {
    /// The current working communicator.
    fn work(&self) -> Rc<C> {
        Rc::clone(&self.work.borrow())
    }

    /// See [`Guarded::run`].
    fn run<T>(&self, f: impl FnOnce(&C) -> Result<T, C::Error>) -> Result<T, GuardError<C::Error>> {
        let work = self.work();
        match f(&work) {
            Ok(v) => Ok(v),
            Err(e) if e.is_fault() => {
                drop(work);
                Err(GuardError::Propagated(self.resolve(Report::None)?))
            }
            Err(e) => Err(GuardError::Other(e)),
        }
    }

    /// Everybody learns who signalled or was corrupted, and the guard gets a
    /// fresh working communicator of the survivors.
    ///
    /// A reporter first sends its message to every other member of
    /// *control*, buffered (`bsend`: out before it contributes, whatever
    /// the eager limit, and delivered even if it dies after). One agreement then does the rest: the shrink of
    /// *control* carries every survivor's report kind and code, and its
    /// result becomes the new *work*. Every survivor reads the messages of
    /// the reporters the agreement lists; when there are any, a second
    /// agreement makes a lost message lost everywhere.
    fn resolve(&self, report: Report) -> Result<Propagated, GuardError<C::Error>> {
        self.work().revoke().map_err(GuardError::Other)?;
        let mut st = self.st.borrow_mut();
        let (kind, code, msg) = match report {
            Report::None => (KIND_NONE, 0, String::new()),
            Report::Signal(c, m) => (KIND_SIGNAL, c, m),
            Report::Corrupted(m) => (KIND_CORRUPTED, 0, m),
        };
        let seq = st.seq;
        st.seq += 1;
        let me = st.control.rank().index();
        if kind != KIND_NONE {
            let mut rec = [0u8; REC];
            rec[..8].copy_from_slice(&seq.to_le_bytes());
            rec[8..8 + msg.len()].copy_from_slice(msg.as_bytes());
            for r in (0..st.control.size()).filter(|&r| r != me) {
                // Buffered: out before this rank contributes, whatever the
                // eager limit (a send that waited for its receiver would
                // wait for one that waits in the agreement for this rank),
                // and delivered even if this rank dies after. A member that
                // died can no longer read it.
                let _ = st.control.bsend(&rec[..], r as i32, MSG_TAG);
            }
            pertinax::fault_point("prop.report.sent");
        }
        let value = (u64::from(kind) << 32) | u64::from(code as u32);
        let (shrunk, values) = st.control.shrink_gather(value)?;
        pertinax::fault_point("prop.resolve.agreed");
        // The reporters the agreement lists, in rank order, with their
        // messages as they reached this rank.
        let mut reports: Vec<(usize, u32, i32, Option<String>)> = Vec::new();
        for (r, v) in values.iter().enumerate() {
            let Some(v) = *v else { continue };
            let k = (v >> 32) as u32;
            if k == KIND_NONE {
                continue;
            }
            let message = if r == me {
                Some(msg.clone())
            } else {
                read_report(&st.control, r, seq)
            };
            reports.push((r, k, v as u32 as i32, message));
        }
        if !reports.is_empty() {
            // Bit j % 32 stays set while every survivor has reporter j's
            // message: the AND makes a loss anywhere a loss everywhere.
            let mut have = u32::MAX;
            for (j, rep) in reports.iter().enumerate() {
                if rep.3.is_none() {
                    have &= !(1u32 << (j % 32));
                }
            }
            let agreed = st.control.agree_detailed(have)?.flags;
            for (j, rep) in reports.iter_mut().enumerate() {
                if agreed & (1u32 << (j % 32)) == 0 {
                    rep.3 = None;
                }
            }
        }
        let mut out = Propagated::default();
        let mut next = reports.into_iter().peekable();
        for (r, v) in values.iter().enumerate() {
            let rank = st.to_origin[r];
            if v.is_none() {
                out.corrupted.push(Corrupted {
                    rank,
                    cause: Cause::ProcessFailed,
                });
                continue;
            }
            let Some((_, k, code, message)) = next.next_if(|rep| rep.0 == r) else {
                continue;
            };
            let message = message.unwrap_or_else(|| LOST.into());
            if k == KIND_CORRUPTED {
                out.corrupted.push(Corrupted {
                    rank,
                    cause: Cause::Panic(message),
                });
            } else {
                out.signals.push(Signal {
                    rank,
                    code,
                    message,
                });
            }
        }
        let fresh = if shrunk.size() == st.control.size() {
            // Nobody failed: control stays, the shrunk copy is the new work.
            shrunk
        } else {
            // Control loses the failed ranks (and the messages a reporter
            // that died before contributing left on it); work is another
            // shrink of it (fault tolerant, unlike a dup).
            let work = shrunk.shrink()?;
            st.to_origin = origin_ranks(&shrunk, &self.origin)?;
            st.control = shrunk;
            work
        };
        drop(st);
        let work = (self.make)(fresh).map_err(GuardError::Other)?;
        *self.work.borrow_mut() = Rc::new(work);
        Ok(out)
    }
}

/// The message of resolution `seq` from reporter `r` of *control*, or
/// `None` if it cannot arrive (the reporter died with it still queued).
fn read_report(control: &Comm, r: usize, seq: u64) -> Option<String> {
    let mut rec = [0u8; REC];
    loop {
        control.recv(&mut rec[..], r as i32, MSG_TAG).ok()?;
        let mut s = [0u8; 8];
        s.copy_from_slice(&rec[..8]);
        let got = u64::from_le_bytes(s);
        if got < seq {
            // Left over from an earlier resolution: never this one's.
            continue;
        }
        if got > seq {
            // Cannot happen (one report per resolution, in order);
            // counted as lost, which the second agreement makes
            // uniform.
            return None;
        }
        let body = &rec[8..];
        let end = body.iter().position(|&b| b == 0).unwrap_or(MSG);
        return Some(String::from_utf8_lossy(&body[..end]).into_owned());
    }
}

/// For each rank of `comm`, its rank in `origin`.
fn origin_ranks(comm: &Comm, origin: &Group) -> Result<Vec<Rank>, Error> {
    let ranks: Vec<Rank> = (0..comm.size()).map(|r| Rank(r as i32)).collect();
    Ok(comm
        .group()
        .translate_ranks(&ranks, origin)?
        .into_iter()
        .map(|r| r.unwrap_or(Rank(-1)))
        .collect())
}

impl<C: Communicator + 'static> Drop for Guarded<C> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // The panicking rank takes part in the resolution, so that
            // every other rank learns the cause, then goes on unwinding.
            let why = PANIC
                .with(|p| p.borrow_mut().take())
                .unwrap_or_else(|| "(unknown)".into());
            let _ = self.inner.resolve(Report::Corrupted(cut(&why)));
        } else if self.inner.work().is_revoked() {
            // A resolution is under way: take part, so that the others
            // neither wait for this rank to end nor list it as failed.
            let _ = self.inner.resolve(Report::None);
        }
    }
}

/// `s` cut to the message size at a character boundary.
fn cut(s: &str) -> String {
    let mut end = s.len().min(MSG);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_cut_at_character_boundaries() {
        assert_eq!(cut("short"), "short");
        let long = "é".repeat(100);
        let c = cut(&long);
        assert!(c.len() <= MSG && long.starts_with(&c));
    }

    #[test]
    fn errors_print_every_rank() {
        let p = Propagated {
            signals: vec![Signal {
                rank: Rank(2),
                code: 7,
                message: "diverged".into(),
            }],
            corrupted: vec![Corrupted {
                rank: Rank(3),
                cause: Cause::ProcessFailed,
            }],
        };
        let s = p.to_string();
        assert!(
            s.contains("rank 2 signalled 7 (diverged)") && s.contains("rank 3"),
            "{s}"
        );
    }

    #[test]
    fn a_singleton_signals_and_recovers() {
        // Runs as a singleton job (no launcher): one rank.
        let u = match pertinax::init() {
            Ok(u) => u,
            Err(Error::AlreadyInitialized) => return,
            Err(e) => panic!("{e}"),
        };
        let g = Guarded::new(&u.world()).unwrap();
        let p = g.signal(3, "local").unwrap();
        assert_eq!(p.signals.len(), 1);
        assert_eq!(
            (p.signals[0].code, p.signals[0].message.as_str()),
            (3, "local")
        );
        // Resolved inside `signal`: the next operation works.
        g.run(|c| c.barrier()).unwrap();
    }
}
