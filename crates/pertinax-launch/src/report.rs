//! How a job ended: per-process outcomes, the exit status, the summary.

use std::fmt::Write as _;
use std::time::Duration;

use pertinax_os::process::{signal_name, ExitKind};

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

    /// `rank S` for a rank's slot, `rank R (replacement, slot S)` for a
    /// process that took over rank `R`, `slot S` for any other.
    fn who(&self, slot: u32) -> String {
        let replaces = self
            .others
            .iter()
            .find(|p| p.slot == slot)
            .and_then(|p| p.replaces);
        match replaces {
            _ if (slot as usize) < self.ranks.len() => format!("rank {slot}"),
            Some(rank) => format!("rank {rank} (replacement, slot {slot})"),
            None => format!("slot {slot}"),
        }
    }

    /// How the summary names a process: `rank 2`, `rank 3 (replacement,
    /// slot 5)` (a process that took over rank 3, as it calls itself),
    /// `slot 5 (spawned by rank 2)`, `slot 4 (spare assigned by rank 1)`,
    /// `slot 4 (idle spare)`.
    pub fn label(&self, p: &ProcOutcome) -> String {
        if let (Some(rank), Role::Spare { .. } | Role::Spawned { .. }) = (p.replaces, &p.role) {
            return format!("rank {rank} (replacement, slot {})", p.slot);
        }
        match p.role {
            Role::Rank => format!("rank {}", p.slot),
            Role::IdleSpare => format!("slot {} (idle spare)", p.slot),
            Role::Spare { parent, .. } => {
                format!("slot {} (spare assigned by {})", p.slot, self.who(parent))
            }
            Role::Spawned { parent, .. } => {
                format!("slot {} (spawned by {})", p.slot, self.who(parent))
            }
        }
    }

    /// One line per seeded fault, then one per failed member (time order),
    /// then one for the launcher's stop, if any; `None` when the job went
    /// well and had no seeded schedule. A member that exited with code 101
    /// after its stderr showed a [`Panic`] is said to have panicked, with
    /// the panic's place, its thread (unless `main`) and the first line of
    /// its message.
    ///
    /// ```text
    /// pertinax: fault schedule: rank 3 at hit 14 of any point (kill)
    /// pertinax: rank 2 (pid 4242) killed by SIGKILL at 0.153 s
    /// pertinax: rank 3 (pid 4243) killed by SIGKILL at 0.201 s (injected at hit 14 of point send)
    /// pertinax: slot 5 (spawned by rank 1) (pid 4250) exited with code 1 at 0.3 s
    /// pertinax: rank 1 (pid 4241) killed by SIGKILL at 0.4 s (heartbeat timeout)
    /// pertinax: rank 4 (pid 4244) panicked at src/main.rs:10:5 at 0.45 s: solver blew up
    /// pertinax: job timed out after 5 s; ranks still running were terminated
    /// ```
    pub fn summary(&self) -> Option<String> {
        let mut out = String::new();
        for k in &self.schedule {
            let _ = writeln!(out, "pertinax: fault schedule: {k}");
        }
        for r in self.own_failures() {
            let label = self.label(r);
            if let Some(Cause::NotStarted { error }) = &r.cause {
                let _ = writeln!(
                    out,
                    "pertinax: {label} could not be started at {} s: {error}",
                    seconds(r.at)
                );
                continue;
            }
            // The message comes last: it is the process's own text.
            let mut message = "";
            let how = match (r.end, &r.panic) {
                (ExitKind::Signal(s), _) => format!("killed by {}", signal_name(s)),
                (ExitKind::Code(0), _) => "exited with code 0 without finalizing".to_string(),
                // 101 is how a Rust program ends after a panic; its default
                // hook printed where (seen in the forwarded stderr).
                (ExitKind::Code(101), Some(p)) => {
                    message = &p.message;
                    let thread = if p.thread == "main" {
                        String::new()
                    } else {
                        format!(" in thread '{}'", p.thread)
                    };
                    format!("panicked{thread} at {}", p.place)
                }
                // A hook of its own printed something else.
                (ExitKind::Code(101), None) => {
                    "exited with code 101 (a panic: its message and place are above)".to_string()
                }
                (ExitKind::Code(c), _) => format!("exited with code {c}"),
            };
            let why = match &r.cause {
                Some(Cause::Injected { point, hit, .. }) => {
                    format!(" (injected at hit {hit} of point {point})")
                }
                Some(Cause::Launcher { signal }) => {
                    format!(" (injected: {} from the launcher)", signal_name(*signal))
                }
                Some(Cause::Heartbeat { injected: false }) => " (heartbeat timeout)".into(),
                Some(Cause::Heartbeat { injected: true }) => {
                    " (injected stop, then heartbeat timeout)".into()
                }
                Some(Cause::ParentFailed { parent }) => {
                    format!(" (its parent {} failed)", self.who(*parent))
                }
                Some(Cause::NotStarted { .. }) | None => String::new(),
            };
            let _ = write!(
                out,
                "pertinax: {label} (pid {}) {how} at {} s{why}",
                r.pid,
                seconds(r.at)
            );
            if !message.is_empty() {
                let _ = write!(out, ": {message}");
            }
            out.push('\n');
        }
        if let Some(stop) = &self.stop {
            let what = match &stop.cause {
                StopCause::Timeout { limit } => {
                    format!("job timed out after {} s", seconds(*limit))
                }
                StopCause::Signal(s) => {
                    format!(
                        "interrupted by {} at {} s",
                        signal_name(*s),
                        seconds(stop.at)
                    )
                }
                StopCause::RankExited { rank, code } => {
                    format!(
                        "rank {rank} exited with code {code} at {} s, which ends the job \
                         (--keep-going lets the others run)",
                        seconds(stop.at)
                    )
                }
                StopCause::Abort { slot, code, .. } => {
                    format!(
                        "{} aborted the job (code {code}) at {} s",
                        self.who(*slot),
                        seconds(stop.at)
                    )
                }
            };
            let _ = writeln!(out, "pertinax: {what}; ranks still running were terminated");
        }
        if out.is_empty() {
            None
        } else {
            out.pop();
            Some(out)
        }
    }
}

/// Seconds with at most three decimals and no trailing zeros: "0.153",
/// "0.1", "5".
pub(crate) fn seconds(d: Duration) -> String {
    let s = format!("{:.3}", d.as_secs_f64());
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn rank(rank: u32, end: ExitKind, at_ms: u64, finalized: bool) -> ProcOutcome {
        ProcOutcome {
            slot: rank,
            role: Role::Rank,
            pid: 4240 + rank,
            end,
            at: ms(at_ms),
            finalized,
            joined: true,
            cause: None,
            panic: None,
            replaces: None,
        }
    }

    fn report(ranks: Vec<ProcOutcome>, stop: Option<Stop>) -> JobReport {
        JobReport {
            ranks,
            others: Vec::new(),
            stop,
            elapsed: ms(500),
            schedule: Vec::new(),
            resilient: false,
        }
    }

    fn with(mut p: ProcOutcome, role: Role, cause: Option<Cause>) -> ProcOutcome {
        p.role = role;
        p.cause = cause;
        p
    }

    /// Checks a report's exit code and summary.
    fn check(r: &JobReport, code: i32, summary: Option<&str>) {
        assert_eq!(r.exit_code(), code, "exit code of {r:?}");
        assert_eq!(r.summary().as_deref(), summary, "summary of {r:?}");
    }

    #[test]
    fn all_finalized_is_success() {
        let r = report(
            vec![
                rank(0, ExitKind::Code(0), 10, true),
                rank(1, ExitKind::Code(0), 12, true),
            ],
            None,
        );
        check(&r, 0, None);
        assert!(!r.timed_out());
        assert_eq!(r.interrupted(), None);
    }

    #[test]
    fn programs_that_never_joined_succeed_with_code_0() {
        let mut r0 = rank(0, ExitKind::Code(0), 10, false);
        r0.joined = false;
        check(&report(vec![r0], None), 0, None);
    }

    #[test]
    fn first_failure_in_time_gives_the_code() {
        let r = report(
            vec![
                rank(0, ExitKind::Code(0), 300, true),
                rank(1, ExitKind::Code(0), 100, false),
                rank(2, ExitKind::Signal(9), 153, false),
                rank(3, ExitKind::Code(1), 201, false),
            ],
            None,
        );
        check(
            &r,
            137,
            Some(
                "pertinax: rank 1 (pid 4241) exited with code 0 without finalizing at 0.1 s\n\
                 pertinax: rank 2 (pid 4242) killed by SIGKILL at 0.153 s\n\
                 pertinax: rank 3 (pid 4243) exited with code 1 at 0.201 s",
            ),
        );
    }

    #[test]
    fn exit_0_without_finalizing_is_reported_but_keeps_status_0() {
        let r = report(vec![rank(0, ExitKind::Code(0), 50, false)], None);
        check(
            &r,
            0,
            Some("pertinax: rank 0 (pid 4240) exited with code 0 without finalizing at 0.05 s"),
        );
    }

    #[test]
    fn timeout_gives_124_and_hides_the_ranks_it_terminated() {
        let stop = Stop {
            at: ms(5000),
            cause: StopCause::Timeout { limit: ms(5000) },
        };
        let r = report(
            vec![
                rank(0, ExitKind::Signal(15), 5001, false),
                rank(1, ExitKind::Signal(9), 6001, false),
            ],
            Some(stop),
        );
        assert!(r.timed_out());
        check(
            &r,
            124,
            Some("pertinax: job timed out after 5 s; ranks still running were terminated"),
        );
    }

    #[test]
    fn a_failure_before_the_stop_wins() {
        let stop = Stop {
            at: ms(1000),
            cause: StopCause::Signal(2),
        };
        let r = report(
            vec![
                rank(0, ExitKind::Code(3), 400, false),
                rank(1, ExitKind::Signal(2), 1002, false),
            ],
            Some(stop),
        );
        assert_eq!(r.interrupted(), Some(2));
        check(
            &r,
            3,
            Some(
                "pertinax: rank 0 (pid 4240) exited with code 3 at 0.4 s\n\
                 pertinax: interrupted by SIGINT at 1 s; ranks still running were terminated",
            ),
        );
    }

    #[test]
    fn abort_gives_its_code() {
        let stop = Stop {
            at: ms(250),
            cause: StopCause::Abort {
                slot: 1,
                code: 7,
                message: "bad input".into(),
            },
        };
        // The aborting rank itself ended at the stop: not a failure of its own.
        let r = report(
            vec![
                rank(0, ExitKind::Signal(15), 260, false),
                rank(1, ExitKind::Code(1), 250, false),
            ],
            Some(stop),
        );
        check(
            &r,
            7,
            Some("pertinax: rank 1 aborted the job (code 7) at 0.25 s; ranks still running were terminated"),
        );
    }

    #[test]
    fn injected_deaths_are_listed_but_keep_status_0() {
        let killed = ExitKind::Signal(libc::SIGKILL);
        let injected = Cause::Injected {
            point: "send".into(),
            hit: 3,
            signal: libc::SIGKILL,
        };
        let mut r = report(
            vec![
                rank(0, ExitKind::Code(0), 300, true),
                with(rank(1, killed, 100, false), Role::Rank, Some(injected)),
                with(
                    rank(2, killed, 150, false),
                    Role::Rank,
                    Some(Cause::Launcher {
                        signal: libc::SIGKILL,
                    }),
                ),
                with(
                    rank(3, killed, 200, false),
                    Role::Rank,
                    Some(Cause::Heartbeat { injected: true }),
                ),
            ],
            None,
        );
        r.schedule = vec!["1@*#3".parse().unwrap()];
        check(
            &r,
            0,
            Some(
                "pertinax: fault schedule: rank 1 at hit 3 of any point (kill)\n\
                 pertinax: rank 1 (pid 4241) killed by SIGKILL at 0.1 s (injected at hit 3 of point send)\n\
                 pertinax: rank 2 (pid 4242) killed by SIGKILL at 0.15 s (injected: SIGKILL from the launcher)\n\
                 pertinax: rank 3 (pid 4243) killed by SIGKILL at 0.2 s (injected stop, then heartbeat timeout)",
            ),
        );
        // A real failure after injected ones gives the status.
        r.ranks[0].end = ExitKind::Code(4);
        assert_eq!(r.exit_code(), 4);
    }

    #[test]
    fn with_resilient_communicators_deaths_are_listed_but_keep_status_0() {
        let p = Panic {
            thread: "main".into(),
            place: "src/main.rs:7:5".into(),
            message: "boom".into(),
        };
        let mut panicked = rank(3, ExitKind::Code(101), 300, false);
        panicked.panic = Some(p);
        let mut r = report(
            vec![
                rank(0, ExitKind::Code(0), 500, true),
                rank(1, ExitKind::Signal(libc::SIGKILL), 100, false),
                rank(2, ExitKind::Signal(libc::SIGSEGV), 200, false),
                panicked,
                rank(4, ExitKind::Code(0), 450, true),
            ],
            None,
        );
        let deaths = "pertinax: rank 1 (pid 4241) killed by SIGKILL at 0.1 s\n\
                      pertinax: rank 2 (pid 4242) killed by SIGSEGV at 0.2 s\n\
                      pertinax: rank 3 (pid 4243) panicked at src/main.rs:7:5 at 0.3 s: boom";
        check(&r, 137, Some(deaths));
        r.resilient = true;
        check(&r, 0, Some(deaths));
        // A spawned process that dies is a death like a rank's.
        r.others = vec![with(
            rank(5, ExitKind::Signal(libc::SIGKILL), 350, false),
            Role::Spawned {
                parent: 0,
                index: 0,
            },
            None,
        )];
        assert_eq!(r.exit_code(), 0);
        // A process that ends on its own with a failure still fails the
        // job, even after the deaths.
        r.ranks[4].end = ExitKind::Code(3);
        assert_eq!(r.exit_code(), 3);
        r.ranks[4].end = ExitKind::Code(0);
        // So does the launcher's stop.
        r.stop = Some(Stop {
            at: ms(600),
            cause: StopCause::Timeout { limit: ms(600) },
        });
        assert_eq!(r.exit_code(), 124);
    }

    #[test]
    fn with_resilient_communicators_the_death_of_every_rank_fails_the_job() {
        let mut r = report(
            vec![
                rank(0, ExitKind::Signal(libc::SIGSEGV), 300, false),
                rank(1, ExitKind::Signal(libc::SIGKILL), 100, false),
            ],
            None,
        );
        r.resilient = true;
        check(
            &r,
            137,
            Some(
                "pertinax: rank 1 (pid 4241) killed by SIGKILL at 0.1 s\n\
                 pertinax: rank 0 (pid 4240) killed by SIGSEGV at 0.3 s",
            ),
        );
        // As without resilient communicators, injected deaths do not count.
        r.ranks[1].cause = Some(Cause::Launcher {
            signal: libc::SIGKILL,
        });
        assert_eq!(r.exit_code(), 139);
        // One rank that ended on its own is a survivor, whatever its code.
        r.ranks[1] = rank(1, ExitKind::Code(0), 400, true);
        assert_eq!(r.exit_code(), 0);
        r.ranks[1].end = ExitKind::Code(2);
        assert_eq!(r.exit_code(), 2);
    }

    #[test]
    fn a_heartbeat_timeout_is_a_failure() {
        let r = report(
            vec![with(
                rank(0, ExitKind::Signal(libc::SIGKILL), 2000, false),
                Role::Rank,
                Some(Cause::Heartbeat { injected: false }),
            )],
            None,
        );
        check(
            &r,
            137,
            Some("pertinax: rank 0 (pid 4240) killed by SIGKILL at 2 s (heartbeat timeout)"),
        );
    }

    #[test]
    fn spares_and_spawned_processes_are_labelled_by_slot() {
        let mut r = report(
            vec![
                rank(0, ExitKind::Code(0), 500, true),
                rank(1, ExitKind::Code(2), 100, false),
            ],
            None,
        );
        r.others = vec![
            // Idle spares are never failures, whatever their end.
            with(
                rank(2, ExitKind::Signal(9), 50, false),
                Role::IdleSpare,
                None,
            ),
            with(
                rank(3, ExitKind::Signal(9), 110, false),
                Role::Spare {
                    parent: 1,
                    index: 0,
                },
                Some(Cause::ParentFailed { parent: 1 }),
            ),
            with(
                rank(4, ExitKind::Code(5), 120, false),
                Role::Spawned {
                    parent: 3,
                    index: 1,
                },
                None,
            ),
            with(
                rank(5, ExitKind::Code(127), 130, false),
                Role::Spawned {
                    parent: 0,
                    index: 0,
                },
                Some(Cause::NotStarted {
                    error: "out of memory".into(),
                }),
            ),
        ];
        check(
            &r,
            2,
            Some(
                "pertinax: rank 1 (pid 4241) exited with code 2 at 0.1 s\n\
                 pertinax: slot 3 (spare assigned by rank 1) (pid 4243) killed by SIGKILL at 0.11 s (its parent rank 1 failed)\n\
                 pertinax: slot 4 (spawned by slot 3) (pid 4244) exited with code 5 at 0.12 s\n\
                 pertinax: slot 5 (spawned by rank 0) could not be started at 0.13 s: out of memory",
            ),
        );
        // Without rank 1's failure, the spawned process's code tells; the
        // one killed because of its parent does not.
        r.ranks[1].end = ExitKind::Code(0);
        r.ranks[1].finalized = true;
        assert_eq!(r.exit_code(), 5);
        assert_eq!(r.label(&r.others[0]), "slot 2 (idle spare)");
    }

    /// A process that took over a rank is named by that rank (as it calls
    /// itself) and its slot, also as the parent of what it spawned and as
    /// the process that aborted the job.
    #[test]
    fn replacements_are_labelled_by_the_rank_they_took_over() {
        let mut r = report(
            vec![
                rank(0, ExitKind::Code(0), 500, true),
                with(
                    rank(1, ExitKind::Signal(9), 100, false),
                    Role::Rank,
                    Some(Cause::Launcher { signal: 9 }),
                ),
            ],
            None,
        );
        let mut spare = with(
            rank(2, ExitKind::Code(3), 200, false),
            Role::Spare {
                parent: 0,
                index: 0,
            },
            None,
        );
        spare.replaces = Some(1);
        let mut fresh = with(
            rank(3, ExitKind::Code(4), 300, false),
            Role::Spawned {
                parent: 2,
                index: 0,
            },
            None,
        );
        fresh.replaces = None;
        r.others = vec![spare, fresh];
        check(
            &r,
            3,
            Some(
                "pertinax: rank 1 (pid 4241) killed by SIGKILL at 0.1 s (injected: SIGKILL from the launcher)\n\
                 pertinax: rank 1 (replacement, slot 2) (pid 4242) exited with code 3 at 0.2 s\n\
                 pertinax: slot 3 (spawned by rank 1 (replacement, slot 2)) (pid 4243) exited with code 4 at 0.3 s",
            ),
        );
        r.stop = Some(Stop {
            cause: StopCause::Abort {
                slot: 2,
                code: 7,
                message: "bad".into(),
            },
            at: ms(250),
        });
        let summary = r.summary().unwrap();
        assert!(
            summary.ends_with(
                "pertinax: rank 1 (replacement, slot 2) aborted the job (code 7) at 0.25 s; ranks still running were terminated"
            ),
            "{summary}"
        );
    }

    fn panicked(mut p: ProcOutcome, thread: &str, place: &str, message: &str) -> ProcOutcome {
        p.panic = Some(Panic {
            thread: thread.into(),
            place: place.into(),
            message: message.into(),
        });
        p
    }

    #[test]
    fn a_panic_seen_on_stderr_is_told_with_its_place_and_message() {
        let code = ExitKind::Code(101);
        let r = report(
            vec![
                rank(0, ExitKind::Code(0), 400, true),
                rank(1, code, 100, false),
                panicked(
                    rank(2, code, 153, false),
                    "main",
                    "src/main.rs:10:5",
                    "boom",
                ),
                panicked(rank(3, code, 200, false), "<unnamed>", "src/w.rs:2:9", ""),
                // A hook of its own ended it with another code.
                panicked(
                    rank(4, ExitKind::Code(3), 300, false),
                    "main",
                    "a.rs:1:1",
                    "x",
                ),
            ],
            None,
        );
        check(
            &r,
            101,
            Some(
                "pertinax: rank 1 (pid 4241) exited with code 101 (a panic: its message and place are above) at 0.1 s\n\
                 pertinax: rank 2 (pid 4242) panicked at src/main.rs:10:5 at 0.153 s: boom\n\
                 pertinax: rank 3 (pid 4243) panicked in thread '<unnamed>' at src/w.rs:2:9 at 0.2 s\n\
                 pertinax: rank 4 (pid 4244) exited with code 3 at 0.3 s",
            ),
        );
    }

    #[test]
    fn an_injected_panic_gives_its_cause_before_the_message() {
        let injected = Cause::Injected {
            point: "send".into(),
            hit: 3,
            signal: 0,
        };
        let p = panicked(
            rank(1, ExitKind::Code(101), 100, false),
            "main",
            "crates/pertinax/src/fault.rs:40:9",
            "injected panic",
        );
        let r = report(
            vec![
                rank(0, ExitKind::Code(0), 300, true),
                with(p, Role::Rank, Some(injected)),
            ],
            None,
        );
        check(
            &r,
            0,
            Some(
                "pertinax: rank 1 (pid 4241) panicked at crates/pertinax/src/fault.rs:40:9 \
                 at 0.1 s (injected at hit 3 of point send): injected panic",
            ),
        );
    }

    #[test]
    fn seconds_are_trimmed() {
        assert_eq!(seconds(ms(153)), "0.153");
        assert_eq!(seconds(ms(100)), "0.1");
        assert_eq!(seconds(ms(5000)), "5");
        assert_eq!(seconds(Duration::from_micros(1)), "0");
        assert_eq!(seconds(ms(1500)), "1.5");
    }
}
