//! How a job ended: per-rank outcomes, the exit status, the summary.

use std::fmt::Write as _;
use std::time::Duration;

use pertinax_sys::process::{signal_name, ExitKind};

/// How one rank ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankOutcome {
    /// The rank.
    pub rank: u32,
    /// Its process id.
    pub pid: u32,
    /// Exit code or signal, as `waitpid` reported it.
    pub end: ExitKind,
    /// When it ended, since the job started.
    pub at: Duration,
    /// It sent `Finalize` on its control socket.
    pub finalized: bool,
    /// It spoke the control protocol (its `Hello` was accepted).
    pub joined: bool,
}

impl RankOutcome {
    /// It was killed by a signal or exited with a non-zero code.
    pub fn is_abnormal(&self) -> bool {
        self.end != ExitKind::Code(0)
    }

    /// It did not end as a rank should: abnormally, or with code 0 after
    /// joining the job but without finalizing. (A program that never spoke
    /// the protocol and exited 0 did its job, as far as the user is
    /// concerned; the other ranks still see it as failed.)
    pub fn is_failure(&self) -> bool {
        self.is_abnormal() || (self.joined && !self.finalized)
    }

    /// The exit status this rank gives the job when it is the first failure:
    /// its code, or 128 + its signal (as a shell reports it).
    pub fn exit_status(&self) -> i32 {
        match self.end {
            ExitKind::Code(c) => c,
            ExitKind::Signal(s) => 128 + s,
        }
    }
}

/// Why the launcher ended a job before all its ranks had ended by
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
    /// A rank asked to end the job.
    Abort {
        /// The rank that aborted.
        rank: u32,
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
    pub ranks: Vec<RankOutcome>,
    /// Set when the launcher ended the job (timeout, signal, abort); ranks
    /// that ended at or after [`Stop::at`] were terminated by it.
    pub stop: Option<Stop>,
    /// Wall-clock time from the first spawn to the last rank's end.
    pub elapsed: Duration,
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

    /// Ranks that failed on their own, before any stop, in time order.
    fn own_failures(&self) -> Vec<&RankOutcome> {
        let stop_at = self.stop.as_ref().map(|s| s.at);
        let mut v: Vec<&RankOutcome> = self
            .ranks
            .iter()
            .filter(|r| r.is_failure() && stop_at.is_none_or(|t| r.at < t))
            .collect();
        v.sort_by_key(|r| (r.at, r.rank));
        v
    }

    /// The job's exit status: 0 when every rank exited with code 0 and the
    /// launcher did not stop the job. Otherwise the earliest of these gives
    /// it: a rank's abnormal end (its code, or 128 + its signal); a timeout
    /// (124, like `timeout(1)`); a signal to the launcher (128 + signal); an
    /// abort (the code the rank asked for). A rank that exits 0 without
    /// finalizing is reported by [`summary`](JobReport::summary) but does not
    /// change the status. An abort's code is passed on as the rank gave it,
    /// so it may lie outside 0..=255; a process exit status keeps its low
    /// byte.
    pub fn exit_code(&self) -> i32 {
        let first_rank = self.own_failures().into_iter().find(|r| r.is_abnormal());
        match (first_rank, &self.stop) {
            (Some(r), _) => r.exit_status(),
            (None, Some(stop)) => match &stop.cause {
                StopCause::Timeout { .. } => 124,
                StopCause::Signal(s) => 128 + s,
                StopCause::Abort { code, .. } => *code,
            },
            (None, None) => 0,
        }
    }

    /// One line per failed rank (time order), then one for the launcher's
    /// stop, if any; `None` when the job went well.
    ///
    /// ```text
    /// pertinax: rank 2 (pid 4242) killed by SIGKILL at 0.153 s
    /// pertinax: rank 3 (pid 4243) exited with code 1 at 0.201 s
    /// pertinax: job timed out after 5 s; ranks still running were terminated
    /// ```
    pub fn summary(&self) -> Option<String> {
        let mut out = String::new();
        for r in self.own_failures() {
            let how = match r.end {
                ExitKind::Signal(s) => format!("killed by {}", signal_name(s)),
                ExitKind::Code(0) => "exited with code 0 without finalizing".to_string(),
                ExitKind::Code(c) => format!("exited with code {c}"),
            };
            let _ = writeln!(
                out,
                "pertinax: rank {} (pid {}) {how} at {} s",
                r.rank,
                r.pid,
                seconds(r.at)
            );
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
                StopCause::Abort { rank, code, .. } => {
                    format!(
                        "rank {rank} aborted the job (code {code}) at {} s",
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

    fn rank(rank: u32, end: ExitKind, at_ms: u64, finalized: bool) -> RankOutcome {
        RankOutcome {
            rank,
            pid: 4240 + rank,
            end,
            at: ms(at_ms),
            finalized,
            joined: true,
        }
    }

    fn report(ranks: Vec<RankOutcome>, stop: Option<Stop>) -> JobReport {
        JobReport {
            ranks,
            stop,
            elapsed: ms(500),
        }
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
                rank: 1,
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
    fn seconds_are_trimmed() {
        assert_eq!(seconds(ms(153)), "0.153");
        assert_eq!(seconds(ms(100)), "0.1");
        assert_eq!(seconds(ms(5000)), "5");
        assert_eq!(seconds(Duration::from_micros(1)), "0");
        assert_eq!(seconds(ms(1500)), "1.5");
    }
}
