//! Error propagation across ranks, built only on pertinax's public API.
//!
//! In an MPI program, one rank that hits an error (a solver that diverges,
//! bad input, a panic) leaves its peers blocked forever in communication.
//! Here, a [`Guarded`] communicator turns such a local event into an error
//! at *every* rank, at its current or next blocking operation:
//!
//! - [`Guarded::signal`] raises an error with a code and a short message.
//!   The signalling rank gets it back at once; every other rank gets a
//!   [`Propagated`] error listing every rank that signalled (several may
//!   signal at once) from the operation it is blocked in, or from its next
//!   one.
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
//! # Non-blocking operations and `async`
//!
//! [`Guarded::request`] wraps a request started on [`Guarded::comm`]; its
//! `wait`, `test` or `.await` (it is a [`Future`](std::future::Future),
//! with no runtime imposed; [`block_on`] is the minimal executor) return
//! the same errors as [`Guarded::run`]. [`Guarded::wait_all`] waits for
//! several.
//!
//! # How
//!
//! A `Guarded` holds two duplicates of the communicator: *work*, on which
//! the program communicates (through [`Guarded::run`]), and *control*,
//! which is never revoked. A signal, a panic or a failure revokes *work*:
//! the ULFM revocation interrupts every rank's pending operation on it.
//! Every rank then *resolves*, in one fault-tolerant agreement:
//! [`Comm::shrink_gather`] of *control* carries every survivor's report
//! (none, signal with its code, or panic) and gives the survivors a fresh
//! communicator, the new *work*. The reporters' messages then go point to
//! point over *control*. The agreement gives every survivor the same
//! reports, so every rank returns the same error (a message whose sender
//! dies while sending it reads "(message lost ...)"). A fault-free
//! operation pays nothing: `run` only looks at the result.
//!
//! # Example
//! ```no_run
//! use pertinax_propagate::{Guarded, GuardError};
//! use pertinax::Op;
//!
//! let universe = pertinax::init()?;
//! let mut g = Guarded::new(&universe.world())?;
//! for step in 0..100 {
//!     let local = step as f64;
//!     if local.is_nan() {
//!         // Every other rank hears of it at its current or next operation.
//!         let _ = g.signal(7, "diverged");
//!     }
//!     let mut sum = [0.0];
//!     match g.run(|c| c.allreduce(&[local], &mut sum, &Op::sum())) {
//!         Ok(()) => {}
//!         Err(GuardError::Propagated(p)) => {
//!             eprintln!("step {step}: {p}");   // the same at every rank
//!             // recover: recompute, restart, roll back ...
//!         }
//!         Err(GuardError::Other(e)) => return Err(e.into()),
//!     }
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]

mod pending;

pub use pending::{block_on, GuardedRequest};

use std::cell::RefCell;
use std::fmt;

use pertinax::{Comm, Error, Group, Rank};

/// Report kinds carried by the resolution's agreement.
const KIND_NONE: u32 = 0;
/// The rank signalled.
const KIND_SIGNAL: u32 = 1;
/// The rank's guard was dropped during a panic.
const KIND_CORRUPTED: u32 = 2;
/// Bytes of message a report carries.
const MSG: usize = 116;
/// First tag of the report messages on the control communicator (one tag
/// per resolution, cycling through 1024).
const MSG_TAG_BASE: i32 = pertinax::TAG_UB - 1024;

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
    /// The process failed (killed, crashed, exited).
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

/// The error of a guarded operation.
#[derive(Debug, thiserror::Error)]
pub enum GuardError {
    /// An error propagated from some rank (or this one).
    #[error("propagated error: {0}")]
    Propagated(Propagated),
    /// A local error of the operation that is not about other ranks (bad
    /// argument, truncation, ...).
    #[error(transparent)]
    Other(#[from] Error),
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

/// A communicator whose errors reach every rank.
#[derive(Debug)]
pub struct Guarded {
    /// Never revoked: resolution runs on it.
    control: Comm,
    /// Where the program communicates.
    work: Comm,
    /// The group the guard was made from: ranks in errors refer to it.
    origin: Group,
    /// For each rank of *control*, its rank in `origin`.
    to_origin: Vec<Rank>,
    /// This rank's signal that the others have not resolved yet.
    mine: Option<(i32, String)>,
    /// Resolutions so far (tags of the report messages).
    epoch: u32,
}

impl Guarded {
    /// Guards `comm` (collective over it).
    ///
    /// # Errors
    /// The errors of `dup`.
    pub fn new(comm: &Comm) -> Result<Guarded, Error> {
        install_panic_hook();
        let control = comm.dup()?;
        let origin = comm.group();
        Ok(Guarded {
            to_origin: origin_ranks(&control, &origin)?,
            work: comm.dup()?,
            control,
            origin,
            mine: None,
            epoch: 0,
        })
    }

    /// The communicator to use inside [`Guarded::run`]. Its ranks are those
    /// of the survivors, in the original order.
    pub fn comm(&self) -> &Comm {
        &self.work
    }

    /// Runs `f` on the working communicator. A fault error (a revocation
    /// by a signalling rank, a failed peer) becomes the [`Propagated`]
    /// error that every rank gets, after which the guard works again.
    ///
    /// # Errors
    /// [`GuardError::Propagated`], or [`GuardError::Other`] for a local
    /// error of `f`.
    pub fn run<T>(&mut self, f: impl FnOnce(&Comm) -> Result<T, Error>) -> Result<T, GuardError> {
        if self.mine.is_some() {
            return Err(GuardError::Propagated(self.resolve(None)?));
        }
        match f(&self.work) {
            Ok(v) => Ok(v),
            Err(e) if e.is_fault() => Err(GuardError::Propagated(self.resolve(None)?)),
            Err(e) => Err(GuardError::Other(e)),
        }
    }

    /// Signals an error with `code` and `message` to every rank. Returns at
    /// once with the error that names this rank; every rank, this one
    /// included (at its next guarded operation), then gets the
    /// [`Propagated`] error with every rank that signalled.
    ///
    /// # Errors
    /// `Other` if the communicator can no longer be revoked (freed,
    /// finalized).
    pub fn signal(&mut self, code: i32, message: &str) -> Result<Propagated, GuardError> {
        self.work.revoke()?;
        let message = cut(message);
        self.mine = Some((code, message.clone()));
        Ok(Propagated {
            signals: vec![Signal {
                rank: self.origin.rank().unwrap_or(Rank(-1)),
                code,
                message,
            }],
            corrupted: Vec::new(),
        })
    }

    /// Runs the resolution now if an error is pending anywhere (a
    /// non-blocking check for programs that compute for long without
    /// communicating).
    ///
    /// # Errors
    /// As [`Guarded::run`].
    pub fn check(&mut self) -> Result<(), GuardError> {
        if self.mine.is_some() || self.work.is_revoked() {
            return Err(GuardError::Propagated(self.resolve(None)?));
        }
        Ok(())
    }

    /// Everybody learns who signalled or was corrupted, and the guard gets a
    /// fresh working communicator of the survivors.
    ///
    /// One agreement does it all: the shrink of *control* carries every
    /// survivor's report kind and code, and its result becomes the new
    /// *work*. Only the messages travel afterwards, from each reporter to
    /// every other survivor, point to point on *control* (eager, so a
    /// reporter that dies after sending still delivers them).
    fn resolve(&mut self, corrupted: Option<&str>) -> Result<Propagated, GuardError> {
        self.work.revoke()?;
        let (kind, code, msg) = match (corrupted, self.mine.take()) {
            (Some(why), _) => (KIND_CORRUPTED, 0, why.to_string()),
            (None, Some((c, m))) => (KIND_SIGNAL, c, m),
            (None, None) => (KIND_NONE, 0, String::new()),
        };
        let value = (u64::from(kind) << 32) | u64::from(code as u32);
        let (shrunk, values) = self.control.shrink_gather(value)?;
        // The messages, on control (whose survivors are all here).
        let me = self.control.rank().index();
        let tag = MSG_TAG_BASE + (self.epoch % 1024) as i32;
        self.epoch = self.epoch.wrapping_add(1);
        if kind != KIND_NONE {
            let mut rec = [0u8; MSG];
            rec[..msg.len()].copy_from_slice(msg.as_bytes());
            for (r, v) in values.iter().enumerate() {
                if r != me && v.is_some() {
                    // A survivor that died since can no longer read it.
                    let _ = self.control.send(&rec[..], r as i32, tag);
                }
            }
        }
        let mut out = Propagated::default();
        for (r, v) in values.iter().enumerate() {
            let rank = self.to_origin[r];
            let Some(v) = *v else {
                out.corrupted.push(Corrupted {
                    rank,
                    cause: Cause::ProcessFailed,
                });
                continue;
            };
            let kind = (v >> 32) as u32;
            if kind == KIND_NONE {
                continue;
            }
            let message = if r == me {
                msg.clone()
            } else {
                let mut rec = [0u8; MSG];
                match self.control.recv(&mut rec[..], r as i32, tag) {
                    Ok(_) => {
                        let end = rec.iter().position(|&b| b == 0).unwrap_or(MSG);
                        String::from_utf8_lossy(&rec[..end]).into_owned()
                    }
                    Err(_) => "(message lost: the rank failed while sending it)".into(),
                }
            };
            if kind == KIND_CORRUPTED {
                out.corrupted.push(Corrupted {
                    rank,
                    cause: Cause::Panic(message),
                });
            } else {
                out.signals.push(Signal {
                    rank,
                    code: v as u32 as i32,
                    message,
                });
            }
        }
        if shrunk.size() == self.control.size() {
            // Nobody failed: control stays, the shrunk copy is the new work.
            self.work = shrunk;
        } else {
            // Control loses the failed ranks; work is another shrink of it
            // (fault tolerant, unlike a dup).
            self.work = shrunk.shrink()?;
            self.to_origin = origin_ranks(&shrunk, &self.origin)?;
            self.control = shrunk;
        }
        Ok(out)
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

impl Drop for Guarded {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            return;
        }
        // The panicking rank takes part in the resolution, so that every
        // other rank learns the cause, then goes on unwinding.
        let why = PANIC
            .with(|p| p.borrow_mut().take())
            .unwrap_or_else(|| "(unknown)".into());
        let _ = self.resolve(Some(&cut(&why)));
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
        let mut g = Guarded::new(&u.world()).unwrap();
        let p = g.signal(3, "local").unwrap();
        assert_eq!(p.signals[0].code, 3);
        match g.run(|c| c.barrier()) {
            Err(GuardError::Propagated(p)) => {
                assert_eq!(p.signals.len(), 1);
                assert_eq!(p.signals[0].message, "local");
            }
            other => panic!("{other:?}"),
        }
        g.run(|c| c.barrier()).unwrap();
    }
}
