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
//! # How
//!
//! A `Guarded` holds two duplicates of the communicator: *work*, on which
//! the program communicates (through [`Guarded::run`]), and *control*,
//! which is never revoked. A signal, a panic or a failure revokes *work*:
//! the ULFM revocation interrupts every rank's pending operation on it.
//! Every rank then *resolves*: it shrinks *control* (which tolerates dead
//! ranks and gives every survivor the same result), gathers every
//! survivor's report over it, and makes a fresh *work*. The reports are the
//! same at every rank, so every rank returns the same error. A fault-free
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

use std::cell::RefCell;
use std::fmt;

use pertinax::{Comm, Error, Group, Rank};

/// Code that a rank's report carries when the rank was corrupted (its
/// guard dropped during a panic).
const CORRUPTED: i32 = i32::MIN;
/// Bytes of message a report carries.
const MSG: usize = 116;

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
    /// This rank's signal that the others have not resolved yet.
    mine: Option<(i32, String)>,
}

impl Guarded {
    /// Guards `comm` (collective over it).
    ///
    /// # Errors
    /// The errors of `dup`.
    pub fn new(comm: &Comm) -> Result<Guarded, Error> {
        install_panic_hook();
        Ok(Guarded {
            control: comm.dup()?,
            work: comm.dup()?,
            origin: comm.group(),
            mine: None,
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
    fn resolve(&mut self, corrupted: Option<&str>) -> Result<Propagated, GuardError> {
        self.work.revoke()?;
        let survivors = self.control.shrink()?;
        let mut rec = [0u8; 4 + 4 + MSG];
        let (code, msg) = match (corrupted, self.mine.take()) {
            (Some(why), _) => (Some(CORRUPTED), why.to_string()),
            (None, Some((c, m))) => (Some(c), m),
            (None, None) => (None, String::new()),
        };
        if let Some(c) = code {
            rec[0] = 1;
            rec[4..8].copy_from_slice(&c.to_le_bytes());
            let b = msg.as_bytes();
            rec[8..8 + b.len()].copy_from_slice(b);
        }
        let mut all = vec![0u8; rec.len() * survivors.size()];
        survivors.allgather(&rec, &mut all)?;
        let ranks: Vec<Rank> = (0..survivors.size()).map(|r| Rank(r as i32)).collect();
        let orig = survivors.group().translate_ranks(&ranks, &self.origin)?;
        let mut out = Propagated::default();
        for (r, row) in orig.iter().zip(all.chunks_exact(rec.len())) {
            let Some(rank) = *r else { continue };
            if row[0] == 0 {
                continue;
            }
            let c = i32::from_le_bytes([row[4], row[5], row[6], row[7]]);
            let end = row[8..]
                .iter()
                .position(|&b| b == 0)
                .map_or(row.len(), |p| 8 + p);
            let message = String::from_utf8_lossy(&row[8..end]).into_owned();
            if c == CORRUPTED {
                out.corrupted.push(Corrupted {
                    rank,
                    cause: Cause::Panic(message),
                });
            } else {
                out.signals.push(Signal {
                    rank,
                    code: c,
                    message,
                });
            }
        }
        // Ranks that are gone: failed processes.
        let alive: Vec<Rank> = orig.iter().flatten().copied().collect();
        for r in 0..self.origin.size() {
            let rank = Rank(r as i32);
            if !alive.contains(&rank) {
                out.corrupted.push(Corrupted {
                    rank,
                    cause: Cause::ProcessFailed,
                });
            }
        }
        out.corrupted.sort_by_key(|c| c.rank);
        self.work = survivors.dup()?;
        self.control = survivors;
        Ok(out)
    }
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
