//! The pertinax launcher: starts the ranks of a job on this machine,
//! serves their bootstrap, watches them, and tells the survivors at once
//! when one of them fails.
//!
//! # Concepts
//!
//! - A **job** ([`JobSpec`]) is N copies of one program, the **ranks**
//!   0..N. Each gets its rank, the job's size, a random job id and secret,
//!   and two inherited descriptors in its environment
//!   ([`pertinax_wire::env`]): the job's **shared segment** (an anonymous
//!   `memfd`, one slot per rank) and its end of a **control socket** to the
//!   launcher.
//! - On the control socket a rank proves who it is (`Hello` with the
//!   secret), publishes key/value pairs and meets the others in **fences**
//!   (a PMI-like bootstrap), and says when it **finalizes**
//!   ([`pertinax_wire::ctrl`]).
//! - The launcher is the only writer of slot states. When a rank dies (or
//!   exits without finalizing) it marks the rank's slot `FAILED`, bumps the
//!   segment's event epoch and wakes every process ([`notify_failure`]):
//!   this is the fast path of failure detection. The job goes on; it ends
//!   when every rank has ended, and its [`JobReport`] says how.
//! - Nothing outlives the launcher: ranks run in their own process groups,
//!   die with it (`PR_SET_PDEATHSIG`), and [`run`] kills and reaps
//!   everything it started on every way out.
//!
//! # Example
//!
//! ```
//! use pertinax_launch::{run, JobSpec};
//!
//! // Two ranks of a program that does not speak the control protocol.
//! let report = run(&JobSpec::new(2, "true")).unwrap();
//! assert_eq!(report.exit_code(), 0);
//! assert_eq!(report.ranks.len(), 2);
//! assert!(report.summary().is_none());
//! ```
#![forbid(unsafe_code)]

mod bootstrap;
mod children;
mod ctrl;
mod error;
mod event;
mod job;
mod notify;
mod output;
mod report;
mod signal;
mod spec;
mod supervise;

pub use error::{LaunchError, ProgramProblem};
pub use job::{run, MAX_RANKS, MAX_RING_BYTES};
pub use notify::{notify_failure, notify_shutdown};
pub use report::{JobReport, RankOutcome, Stop, StopCause};
pub use spec::{default_ring_bytes, resolve_program, JobSpec};

/// How a process ended (re-exported from `pertinax-sys`).
pub use pertinax_sys::process::ExitKind;
