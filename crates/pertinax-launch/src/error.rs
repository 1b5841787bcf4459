//! The one error type of the launcher.

use std::io;
use std::path::PathBuf;
use std::time::Duration;

/// Why a job could not be launched. A job that started and then had ranks
/// fail is not an error: its [`JobReport`](crate::JobReport) says how it
/// ended.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LaunchError {
    /// The job asked for zero ranks.
    #[error("the number of ranks must be at least 1")]
    NoRanks,
    /// The job asked for more ranks than one machine's launcher serves.
    #[error("{ranks} ranks requested; at most {max} are supported")]
    TooManyRanks {
        /// Ranks asked for.
        ranks: usize,
        /// The limit.
        max: usize,
    },
    /// Ranks, spares and slots for spawned processes together exceed the
    /// segment's limit.
    #[error(
        "{ranks} ranks + {spares} spares + {max_spawn} slots for spawned processes \
         exceed the limit of {max} process slots"
    )]
    TooManySlots {
        /// Ranks asked for.
        ranks: usize,
        /// Spares asked for.
        spares: usize,
        /// Slots for spawned processes asked for.
        max_spawn: usize,
        /// The limit.
        max: usize,
    },
    /// A fault names a rank the job does not have.
    #[error("--kill names rank {rank}, but the job's ranks are 0..{ranks}")]
    KillRank {
        /// The rank named.
        rank: u32,
        /// Number of ranks.
        ranks: usize,
    },
    /// A time-based kill asks for a panic, which only a fault point can
    /// cause.
    #[error("--kill for rank {rank}: a time-based kill cannot panic (use a fault point: RANK@NAME#K:panic)")]
    TimedPanic {
        /// The victim.
        rank: u32,
    },
    /// A `:stop` kill without heartbeats: nothing would ever detect the
    /// stopped process, and the job would hang until its timeout.
    #[error(
        "--kill for {kill}: a stopped process is only detected by heartbeats, \
         so the job would hang until its timeout; add --heartbeat MS (e.g. --heartbeat 50: \
         the launcher then kills it after the heartbeat timeout), or use :kill"
    )]
    StopWithoutHeartbeat {
        /// The kill, as its `Display` says it (`rank 2 at 1.5 s (stop)`).
        kill: String,
    },
    /// A seeded fault schedule cannot be drawn.
    #[error(
        "cannot draw {count} distinct fault victims among the {eligible} ranks 1..N-1 \
         (rank 0 is never a victim), with at least one hit each"
    )]
    FaultVictims {
        /// Victims asked for.
        count: usize,
        /// Ranks that may be victims.
        eligible: usize,
    },
    /// The heartbeat timeout is not longer than its period (or the period
    /// is zero).
    #[error(
        "the heartbeat timeout ({} ms) must be longer than its period ({} ms), which must be at least 1 ms",
        timeout.as_millis(),
        period.as_millis()
    )]
    Heartbeat {
        /// The period.
        period: Duration,
        /// The timeout.
        timeout: Duration,
    },
    /// Resilient communicators with local groups of fewer than 2 ranks.
    #[error("--resilient-k {k}: the local groups of the hierarchical mode need at least 2 ranks")]
    ResilientK {
        /// The size asked for.
        k: usize,
    },
    /// Resilient communicators with a hierarchy threshold of 0.
    #[error("--resilient-threshold must be at least 1 (a communicator size)")]
    ResilientThreshold,
    /// A setting of the hierarchical mode for the flat mode, where it would
    /// be ignored.
    #[error("{option} applies to the hierarchical mode only: use --resilient=hier")]
    ResilientFlat {
        /// The option.
        option: &'static str,
    },
    /// The job asked for rings larger than the launcher allows.
    #[error("rings of {ring_bytes} bytes requested; at most {max} are supported")]
    RingTooLarge {
        /// Ring size asked for.
        ring_bytes: usize,
        /// The limit.
        max: usize,
    },
    /// The program cannot be run.
    #[error("cannot execute '{}': {problem}", program.display())]
    Program {
        /// The program as the caller named it.
        program: PathBuf,
        /// What is wrong with it.
        problem: ProgramProblem,
    },
    /// The job's shared-memory segment could not be created.
    #[error(
        "cannot create the job's shared-memory segment ({ring_bytes} bytes per ring): {source}"
    )]
    Segment {
        /// Ring size that was asked for.
        ring_bytes: usize,
        /// The OS error.
        source: io::Error,
    },
    /// A process could not be started at launch; those started before it
    /// were killed.
    #[error("cannot start {}: {source}", describe_slot(*slot, *ranks))]
    Spawn {
        /// The slot of the process that failed to start.
        slot: u32,
        /// Number of ranks (slots below are ranks, the others spares or
        /// spawned processes).
        ranks: usize,
        /// The OS error of `fork`/`exec`.
        source: io::Error,
    },
    /// Another resource of the launcher itself (random bytes, sockets,
    /// threads, signal handlers) could not be had.
    #[error("launcher: cannot {what}: {source}")]
    Os {
        /// What the launcher tried to do.
        what: &'static str,
        /// The OS error.
        source: io::Error,
    },
    /// The application contexts of a MIMD job ([`JobSpec::apps`](crate::JobSpec::apps))
    /// leave no rank to the first one, or one of them has none.
    #[error(
        "the application contexts need {asked} ranks but the job has {ranks} \
         (each context needs at least 1)"
    )]
    Apps {
        /// Ranks of the job.
        ranks: usize,
        /// Ranks the further contexts ask for, plus 1 for the first.
        asked: usize,
    },
    /// The working directory (`--wdir`) is not a directory.
    #[error("--wdir {}: not a directory", dir.display())]
    Wdir {
        /// The directory given.
        dir: std::path::PathBuf,
    },
    /// A directory or file of `--output-filename` cannot be created.
    #[error("--output-filename: cannot create {}: {source}", path.display())]
    OutputFile {
        /// The path.
        path: std::path::PathBuf,
        /// The OS error.
        source: io::Error,
    },
}

impl LaunchError {
    /// Whether the error comes from what the user asked for (bad rank count,
    /// program that cannot run) rather than from the machine; a command-line
    /// tool reports these as usage errors.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            LaunchError::NoRanks
                | LaunchError::TooManyRanks { .. }
                | LaunchError::TooManySlots { .. }
                | LaunchError::KillRank { .. }
                | LaunchError::TimedPanic { .. }
                | LaunchError::StopWithoutHeartbeat { .. }
                | LaunchError::FaultVictims { .. }
                | LaunchError::Heartbeat { .. }
                | LaunchError::ResilientK { .. }
                | LaunchError::ResilientThreshold
                | LaunchError::ResilientFlat { .. }
                | LaunchError::RingTooLarge { .. }
                | LaunchError::Program { .. }
                | LaunchError::Apps { .. }
                | LaunchError::Wdir { .. }
                | LaunchError::OutputFile { .. }
        )
    }
}

fn describe_slot(slot: u32, ranks: usize) -> String {
    if (slot as usize) < ranks {
        format!("rank {slot}")
    } else {
        format!("the process of slot {slot}")
    }
}

/// What prevents a program from being run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProgramProblem {
    /// A bare name that no directory of `PATH` holds.
    #[error("no such file in PATH")]
    NotInPath,
    /// A path that does not exist.
    #[error("no such file")]
    NoSuchFile,
    /// A directory.
    #[error("is a directory")]
    IsADirectory,
    /// Neither a regular file nor a directory (a socket, a device...).
    #[error("not a regular file")]
    NotAFile,
    /// The file is not executable (or cannot be looked at).
    #[error("permission denied")]
    PermissionDenied,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_program_and_the_problem() {
        let e = LaunchError::Program {
            program: "foo".into(),
            problem: ProgramProblem::NotInPath,
        };
        assert_eq!(e.to_string(), "cannot execute 'foo': no such file in PATH");
        assert!(e.is_usage());
        let e = LaunchError::Program {
            program: "./x".into(),
            problem: ProgramProblem::PermissionDenied,
        };
        assert_eq!(e.to_string(), "cannot execute './x': permission denied");
        assert!(LaunchError::NoRanks.is_usage());
        let e = LaunchError::Spawn {
            slot: 3,
            ranks: 4,
            source: io::Error::from(io::ErrorKind::OutOfMemory),
        };
        assert!(!e.is_usage());
        assert!(e.to_string().starts_with("cannot start rank 3: "));
        let e = LaunchError::Spawn {
            slot: 5,
            ranks: 4,
            source: io::Error::from(io::ErrorKind::OutOfMemory),
        };
        assert!(e
            .to_string()
            .starts_with("cannot start the process of slot 5: "));
        let e = LaunchError::KillRank { rank: 4, ranks: 4 };
        assert!(e.is_usage());
        assert_eq!(
            e.to_string(),
            "--kill names rank 4, but the job's ranks are 0..4"
        );
    }
}
