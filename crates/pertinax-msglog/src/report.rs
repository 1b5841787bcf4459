//! What a run reports: the final state, the final step's result, the
//! rollbacks it made, where its time went.

use std::fmt;

/// The most far-reaching rollback a run made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rollback {
    /// No failure was recovered.
    #[default]
    None,
    /// Only the restarted ranks went back to their checkpoint; the
    /// survivors rolled back at most their current iteration, and were
    /// served the messages they needed from the logs.
    Local,
    /// Every rank went back to the last checkpoint.
    Global,
}

impl fmt::Display for Rollback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Rollback::None => "none",
            Rollback::Local => "local",
            Rollback::Global => "global",
        })
    }
}

/// Where this rank's time went, and what the log held (the paper's
/// tables 3 and 4).
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Stats {
    /// Iterations run by this process, re-executions included (the
    /// final step is not counted).
    pub iterations_run: u64,
    /// Of those, the iterations whose result a rollback threw away (an
    /// aborted iteration, or the iterations past the checkpoint of a
    /// global rollback), plus the iterations a restarted rank ran again.
    pub recomputed: u64,
    /// Seconds in communication calls made through [`crate::Logged`].
    pub comm_s: f64,
    /// Seconds copying payloads and collective results into the log.
    pub log_copy_s: f64,
    /// Seconds copying the state for transactional iterations (the
    /// snapshot before each iteration and the restore after an abort).
    pub txn_copy_s: f64,
    /// Seconds taking checkpoints (encoding, copies, the agreement).
    pub ckpt_s: f64,
    /// Seconds recovering (from the failure noticed to the front line
    /// agreed and the replay posted).
    pub recovery_s: f64,
    /// Payload bytes logged in all.
    pub logged_bytes: u64,
    /// The most payload bytes the log held at once.
    pub log_peak_bytes: u64,
    /// Bytes of the encoded state (one checkpoint).
    pub state_bytes: u64,
    /// Messages and collective results this rank replayed to others.
    pub replayed: u64,
}

/// The outcome of [`crate::run`] or [`crate::run_and_finish`] at one
/// rank.
#[derive(Debug)]
#[non_exhaustive]
pub struct Report<S, R = ()> {
    /// The state after the last iteration.
    pub state: S,
    /// What the final step returned ([`crate::run_and_finish`]; `()`
    /// after [`crate::run`]), computed under the protection.
    pub result: R,
    /// A plain communicator, outside the protection: the one the run
    /// ended on (the world after the last recovery: same size and ranks,
    /// replacements in the dead ranks' places), for the program's own use
    /// after the run. Nothing done on it is logged, checkpointed or
    /// recovered: a rank that dies after `run` returned makes the
    /// collectives on it fail (with a fault, at the survivors that notice)
    /// as on any communicator. A gather or reduction of the run's result
    /// belongs in the final step of [`crate::run_and_finish`], where a
    /// failure is recovered like one in an iteration.
    pub comm: pertinax::Comm,
    /// The most far-reaching rollback of the run (the same at every rank).
    pub rollback: Rollback,
    /// How many recoveries this process went through (a replacement
    /// counts the one it joined; the ranks that took part in all of them
    /// have the job's count).
    pub recoveries: u32,
    /// Where this rank's time went.
    pub stats: Stats,
}
