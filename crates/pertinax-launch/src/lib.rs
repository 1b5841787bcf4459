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
//!   `memfd`) and its end of a **control socket** to the launcher.
//! - The segment has a fixed number of process **slots**: the ranks in
//!   `0..N`, then K **spares** (idle copies of the program, started with
//!   the ranks, that wait for an assignment), then room for processes
//!   started while the job runs. A rank's slot is its rank.
//! - On the control socket a process proves who it is (`Hello` with the
//!   secret), the ranks publish key/value pairs and meet in **fences** (a
//!   PMI-like bootstrap), a process may ask for new processes (`Spawn`:
//!   idle spares first if it wishes, then fresh slots; the answer is
//!   published in the requester's `Publication` *before* anything starts),
//!   and says when it **finalizes** ([`pertinax_wire::ctrl`]).
//! - The launcher is the only writer of slot states. When a process dies
//!   (or exits without finalizing) it marks its slot `FAILED`, bumps the
//!   segment's event epoch and wakes every process ([`notify_failure`]):
//!   this is the fast path of failure detection. With heartbeats on, it
//!   also kills processes whose heartbeat stops. The job goes on; it ends
//!   when every member (every process but the idle spares) has ended, and
//!   its [`JobReport`] says how.
//! - **Fail fast** ([`JobSpec::keep_going`]): a rank that exits with a
//!   non-zero code (not a death by a signal, not an injected fault) ends
//!   the job as `mpirun` does ([`StopCause::RankExited`]), unless the job
//!   keeps going, runs resilient communicators or injects faults.
//! - **Input and output**: the launcher's stdin can go to rank 0
//!   ([`StdinTo`]), every line of output is forwarded whole, optionally
//!   tagged, timestamped and copied to files ([`OutputFiles`]).
//! - **Placement**: ranks can be pinned to CPUs ([`Binding`]), and a job can
//!   run several programs, one per application context ([`App`], MIMD).
//! - **Fault injection** ([`Kill`], [`RandomFaults`]): the launcher signals
//!   ranks at given times, or passes fault points for them to die at; such
//!   deaths are reported as injected and do not make the job fail.
//! - **Resilient communicators** ([`Resilient`]): the launcher passes the
//!   layer's settings to every process, and while some rank survives, the
//!   death of a rank does not make the job fail (the survivors continue by
//!   design).
//! - Nothing outlives the launcher: processes run in their own process
//!   groups, die with it (`PR_SET_PDEATHSIG`), and [`run`] kills and reaps
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
#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod bind;
mod bootstrap;
mod children;
mod ctrl;
mod deaths;
mod duration;
mod error;
mod event;
mod fault;
mod job;
mod notify;
mod output;
mod panic;
mod report;
mod resilient;
mod signal;
mod spec;
mod supervise;

pub use duration::{parse_duration, DurationParseError};
pub use error::{LaunchError, ProgramProblem};
pub use fault::{parse_time, FaultSignal, Kill, KillParseError, KillWhen, RandomFaults};
pub use job::{run, MAX_RANKS, MAX_RING_BYTES, MAX_SLOTS};
pub use notify::{notify_failure, notify_finalized, notify_shutdown};
pub use panic::Panic;
pub use report::{Cause, JobReport, ProcOutcome, Role, Stop, StopCause};
pub use resilient::{PolicyParseError, Resilient, ResilientCheck, ResilientMode, ResilientPolicy};
pub use spec::{
    default_ring_bytes, resolve_program, App, Binding, Heartbeat, HeartbeatMode, JobSpec,
    OutputFiles, ParentFailure, StdinTo,
};
pub use supervise::{SPAWN_NO_ROOM, SPAWN_OK, SPAWN_REFUSED};

/// How a process ended (re-exported from `pertinax-os`).
pub use pertinax_os::process::ExitKind;
