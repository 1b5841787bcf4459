//! What a run is asked to do: checkpoint interval, log cap, mode, rollback
//! policy.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use crate::Error;

/// How much of the payload log a rank keeps after each checkpoint.
///
/// The log of a checkpoint interval starts at the checkpoint's iteration
/// and covers iterations in order; once the cap is reached, nothing more
/// is logged until the next checkpoint (the paper's capped log, section
/// 6). A failure whose replay would need an iteration past the log's end
/// is recovered by a global rollback.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LogCap {
    /// Log every iteration of the interval.
    #[default]
    Unlimited,
    /// Log the first `n` iterations after each checkpoint.
    Iterations(u64),
    /// Log until the log holds `n` bytes of payload.
    Bytes(u64),
}

/// Which mechanisms are on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Nothing: the iterations run on the plain communicator, a failure
    /// ends the run with an error (the baseline of the benchmarks).
    Plain,
    /// Transactional iterations and coordinated checkpoints, no payload
    /// log: a failure is recovered by a global rollback.
    Transactional,
    /// Transactional iterations, checkpoints and the payload log: local
    /// rollback when the logs reach back far enough, global otherwise.
    #[default]
    Logged,
}

/// Which rollback a recovery may choose.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RollbackPolicy {
    /// Local when every log needed for the replay is there, global
    /// otherwise (the paper's hybrid).
    #[default]
    Auto,
    /// Always global (the reference the local rollback is measured
    /// against).
    Global,
}

/// The configuration of a run (see [`crate::run`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// A coordinated checkpoint every `cp_int` iterations (at iterations
    /// 0, `cp_int`, `2 * cp_int`, ...); at least 1.
    pub cp_int: u64,
    /// The payload log's cap.
    pub log_cap: LogCap,
    /// Which mechanisms are on.
    pub mode: Mode,
    /// Which rollback a recovery may choose.
    pub rollback: RollbackPolicy,
    /// Also keep checkpoints on disk, under this directory (one folder per
    /// rank), so that a rank and its buddy can fail together, at once or
    /// the buddy during the rank's recovery (without it, either loses the
    /// rank's checkpoint: see [what cannot be
    /// recovered](crate#what-cannot-be-recovered)).
    pub ckpt_dir: Option<PathBuf>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            cp_int: 10,
            log_cap: LogCap::Unlimited,
            mode: Mode::Logged,
            rollback: RollbackPolicy::Auto,
            ckpt_dir: None,
        }
    }
}

impl Config {
    /// Checks the values.
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] with what is wrong.
    pub fn validate(&self) -> Result<(), Error> {
        if self.cp_int == 0 {
            return Err(Error::InvalidConfig(
                "the checkpoint interval must be at least 1 iteration".into(),
            ));
        }
        if self.log_cap == LogCap::Iterations(0) {
            return Err(Error::InvalidConfig(
                "a log cap of 0 iterations logs nothing: use --rollback global instead".into(),
            ));
        }
        Ok(())
    }
}

macro_rules! names {
    ($ty:ty, $what:literal, $($v:path => $s:literal),+) => {
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(match self { $($v => $s,)+ })
            }
        }
        impl FromStr for $ty {
            type Err = Error;
            fn from_str(s: &str) -> Result<Self, Error> {
                match s {
                    $($s => Ok($v),)+
                    _ => Err(Error::InvalidConfig(format!(
                        concat!("unknown ", $what, " {:?} (one of: {})"),
                        s,
                        [$($s),+].join(", ")
                    ))),
                }
            }
        }
    };
}

names!(Mode, "mode", Mode::Plain => "plain", Mode::Transactional => "transactional", Mode::Logged => "logged");
names!(RollbackPolicy, "rollback policy", RollbackPolicy::Auto => "auto", RollbackPolicy::Global => "global");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_bad_ones_are_refused() {
        for m in [Mode::Plain, Mode::Transactional, Mode::Logged] {
            assert_eq!(m.to_string().parse::<Mode>().ok(), Some(m));
        }
        for p in [RollbackPolicy::Auto, RollbackPolicy::Global] {
            assert_eq!(p.to_string().parse::<RollbackPolicy>().ok(), Some(p));
        }
        let e = "fast".parse::<Mode>().err().map(|e| e.to_string());
        assert!(e.is_some_and(|e| e.contains("plain, transactional, logged")));
    }

    #[test]
    fn bad_configs_are_refused() {
        let mut c = Config::default();
        assert!(c.validate().is_ok());
        c.cp_int = 0;
        assert!(c.validate().is_err());
        c.cp_int = 5;
        c.log_cap = LogCap::Iterations(0);
        assert!(c.validate().is_err());
    }
}
