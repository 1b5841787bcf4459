//! How the launcher tells a job's end: the names of processes
//! ([`JobReport::label`]) and the summary of failures and stops
//! ([`JobReport::summary`]).

use std::fmt::Write as _;
use std::time::Duration;

use pertinax_os::process::{signal_name, ExitKind};

use super::{Cause, JobReport, ProcOutcome, Role, StopCause};

impl JobReport {
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
    /// after its stderr showed a [`Panic`](crate::panic::Panic) is said to
    /// have panicked, with the panic's place, its thread (unless `main`) and
    /// the first line of its message.
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
