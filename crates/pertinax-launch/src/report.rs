//! How a job ended: per-process outcomes, the exit status, the summary.

mod summary;

use std::time::Duration;

use pertinax_os::process::ExitKind;

use crate::fault::Kill;
use crate::panic::Panic;

/// What a process was to the job when it ended.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Role {
    /// One of the job's ranks; its rank is its slot.
    Rank,
    /// A spare that was never assigned: not a member of the job, never a
    /// failure.
    IdleSpare,
    /// A spare handed to a spawn request of the process in slot `parent`.
    Spare {
        /// The requester's slot.
        parent: u32,
        /// Its position among the request's processes.
        index: u32,
    },
    /// A process started for a spawn request of the process in slot
    /// `parent`.
    Spawned {
        /// The requester's slot.
        parent: u32,
        /// Its position among the request's processes.
        index: u32,
    },
}

/// Why a process died, when the launcher knows more than its exit status.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Cause {
    /// It announced an injected fault (`ToLauncher::Injected`) first.
    Injected {
        /// The fault point.
        point: String,
        /// Which hit of the point.
        hit: u64,
        /// The signal (0 for a panic).
        signal: i32,
    },
    /// The launcher signalled it (a time-based `--kill`).
    Launcher {
        /// The signal.
        signal: i32,
    },
    /// Its heartbeat stopped and the launcher killed it; `injected` when it
    /// had been stopped by an injected fault.
    Heartbeat {
        /// It had been stopped on purpose.
        injected: bool,
    },
    /// The launcher killed it because the process whose request started it
    /// failed (`--on-parent-failure end`).
    ParentFailed {
        /// The parent's slot.
        parent: u32,
    },
    /// It could not be started (its slot had already been published).
    NotStarted {
        /// The OS error.
        error: String,
    },
}

/// How one process ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcOutcome {
    /// Its slot in the segment (for a rank, its rank).
    pub slot: u32,
    /// What it was to the job.
    pub role: Role,
    /// Its process id (0 if it never started).
    pub pid: u32,
    /// Exit code or signal, as `waitpid` reported it.
    pub end: ExitKind,
    /// When it ended, since the job started.
    pub at: Duration,
    /// It sent `Finalize` on its control socket.
    pub finalized: bool,
    /// It spoke the control protocol (its `Hello` was accepted).
    pub joined: bool,
    /// Why it died, when the launcher knows.
    pub cause: Option<Cause>,
    /// The first panic it printed on its stderr (Rust's default panic
    /// hook), if the launcher saw one.
    pub panic: Option<Panic>,
    /// The rank it took over, for a process started or assigned by
    /// `replace_failed` (a spare or spawned process): the rank it calls
    /// itself in its restored communicator.
    pub replaces: Option<u32>,
}

impl ProcOutcome {
    /// It was killed by a signal or exited with a non-zero code.
    pub fn is_abnormal(&self) -> bool {
        self.end != ExitKind::Code(0)
    }

    /// It did not end as a member of the job should: abnormally, or with
    /// code 0 after joining the job but without finalizing. (A program that
    /// never spoke the protocol and exited 0 did its job, as far as the user
    /// is concerned; the other processes still see it as failed.) An idle
    /// spare is not a member and never fails.
    pub fn is_failure(&self) -> bool {
        self.role != Role::IdleSpare && (self.is_abnormal() || (self.joined && !self.finalized))
    }

    /// Its death was asked for: an injected fault (time- or point-based,
    /// or a heartbeat timeout of a process stopped on purpose).
    pub fn is_injected(&self) -> bool {
        matches!(
            self.cause,
            Some(
                Cause::Injected { .. }
                    | Cause::Launcher { .. }
                    | Cause::Heartbeat { injected: true }
            )
        )
    }

    /// It died rather than ended on its own: a signal killed it (whoever
    /// sent it; a crash is a signal too), or it panicked (exit code 101,
    /// how a Rust program ends after a panic).
    pub fn died(&self) -> bool {
        matches!(self.end, ExitKind::Signal(_) | ExitKind::Code(101))
    }

    /// Whether this failure may give the job its exit status: not an
    /// injected death, nor a kill because the parent failed (the parent's
    /// own failure tells), nor a death that the survivors outlive by design
    /// (`survivors_continue`: resilient communicators and a rank alive).
    fn gives_status(&self, survivors_continue: bool) -> bool {
        let outlived = survivors_continue && self.died();
        self.is_abnormal()
            && !self.is_injected()
            && !matches!(self.cause, Some(Cause::ParentFailed { .. }))
            && !outlived
    }

    /// The exit status this process gives the job when it is the first
    /// failure: its code, or 128 + its signal (as a shell reports it).
    pub fn exit_status(&self) -> i32 {
        match self.end {
            ExitKind::Code(c) => c,
            ExitKind::Signal(s) => 128 + s,
        }
    }
}

/// Why the launcher ended a job before all its processes had ended by
/// themselves.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopCause {
    /// The job ran longer than its time limit.
    Timeout {
        /// The limit.
        limit: Duration,
    },
    /// The launcher received this signal (SIGINT, SIGTERM, SIGHUP).
    Signal(i32),
    /// A rank exited with a non-zero code, and the job failed fast
    /// (neither `--keep-going`, nor resilient communicators, nor injected
    /// faults): the others were terminated.
    RankExited {
        /// The rank.
        rank: u32,
        /// Its exit code.
        code: i32,
    },
    /// A process asked to end the job.
    Abort {
        /// The slot of the process that aborted (for a rank, its rank).
        slot: u32,
        /// The exit code it asked for.
        code: i32,
        /// Its reason.
        message: String,
    },
}

/// The launcher's decision to end a job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stop {
    /// When, since the job started.
    pub at: Duration,
    /// Why.
    pub cause: StopCause,
}

/// How a job ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobReport {
    /// One outcome per rank, indexed by rank.
    pub ranks: Vec<ProcOutcome>,
    /// Spares and spawned processes, in slot order.
    pub others: Vec<ProcOutcome>,
    /// Set when the launcher ended the job (timeout, signal, abort); ranks
    /// that ended at or after [`Stop::at`] were terminated by it.
    pub stop: Option<Stop>,
    /// Wall-clock time from the first spawn to the last process's end.
    pub elapsed: Duration,
    /// The seeded fault schedule, if the job had one (in rank order).
    pub schedule: Vec<Kill>,
    /// The job ran resilient communicators
    /// ([`JobSpec::resilient`](crate::JobSpec::resilient)): deaths do not
    /// give the exit status while a rank survives.
    pub resilient: bool,
}

impl JobReport {
    /// The job exceeded its time limit.
    pub fn timed_out(&self) -> bool {
        matches!(
            self.stop,
            Some(Stop {
                cause: StopCause::Timeout { .. },
                ..
            })
        )
    }

    /// The signal that interrupted the launcher, if one did.
    pub fn interrupted(&self) -> Option<i32> {
        match self.stop {
            Some(Stop {
                cause: StopCause::Signal(s),
                ..
            }) => Some(s),
            _ => None,
        }
    }

    /// Every process, ranks first, then the others in slot order.
    pub fn processes(&self) -> impl Iterator<Item = &ProcOutcome> {
        self.ranks.iter().chain(&self.others)
    }

    /// Members that failed on their own, before any stop (or by making the
    /// launcher stop the job: a rank that exited non-zero), in time order.
    fn own_failures(&self) -> Vec<&ProcOutcome> {
        let stop_at = self.stop.as_ref().map(|s| s.at);
        let stopper = match self.stop {
            Some(Stop {
                cause: StopCause::RankExited { rank, .. },
                ..
            }) => Some(rank),
            _ => None,
        };
        let mut v: Vec<&ProcOutcome> = self
            .processes()
            .filter(|r| {
                r.is_failure()
                    && (stop_at.is_none_or(|t| r.at < t)
                        || (r.role == Role::Rank && stopper == Some(r.slot)))
            })
            .collect();
        v.sort_by_key(|r| (r.at, r.slot));
        v
    }

    /// The job's exit status: 0 when every member (rank, assigned spare,
    /// spawned process) exited with code 0, or died of an injected fault,
    /// and the launcher did not stop the job. Otherwise the earliest of
    /// these gives it: a member's abnormal end (its code, or 128 + its
    /// signal); a timeout (124, like `timeout(1)`); a signal to the
    /// launcher (128 + signal); an abort (the code the process asked for).
    /// Injected deaths (see [`ProcOutcome::is_injected`]) and processes
    /// killed because their parent failed are listed by
    /// [`summary`](JobReport::summary) but do not give the status; nor does
    /// a member that exits 0 without finalizing. An abort's code is passed
    /// on as the process gave it, so it may lie outside 0..=255; a process
    /// exit status keeps its low byte.
    ///
    /// With resilient communicators ([`resilient`](JobReport::resilient)),
    /// the survivors continue by design when ranks die: a member that died
    /// (see [`ProcOutcome::died`]: killed, crashed, panicked) is listed but
    /// does not give the status either, so the status comes from the
    /// members that ended on their own. Unless every rank died: then
    /// nobody continued, and the status is computed as without resilient
    /// communicators.
    pub fn exit_code(&self) -> i32 {
        let survivors_continue = self.resilient && self.ranks.iter().any(|r| !r.died());
        let first = self
            .own_failures()
            .into_iter()
            .find(|r| r.gives_status(survivors_continue));
        match (first, &self.stop) {
            (Some(r), _) => r.exit_status(),
            (None, Some(stop)) => match &stop.cause {
                StopCause::Timeout { .. } => 124,
                StopCause::Signal(s) => 128 + s,
                StopCause::RankExited { code, .. } | StopCause::Abort { code, .. } => *code,
            },
            (None, None) => 0,
        }
    }
}

#[cfg(test)]
mod tests;
