//! What a run reports: the final state, the rollbacks it made, where its
//! time went.

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
    /// Iterations run by this process, re-executions included.
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

/// The outcome of [`crate::run`] at one rank.
#[derive(Debug)]
#[non_exhaustive]
pub struct Report<S> {
    /// The state after the last iteration.
    pub state: S,
    /// The communicator the run ended on (the world after the last
    /// recovery: same size and ranks, replacements in the dead ranks'
    /// places).
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
