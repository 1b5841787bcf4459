//! The crate's error.

use pertinax_checkpoint::Error as CkptError;

/// What [`crate::run`] returns when it cannot finish.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The configuration is wrong.
    #[error("msglog: invalid configuration: {0}")]
    InvalidConfig(String),
    /// The iteration's body (or the final step) returned an error that
    /// is not a process failure (a bad argument, a refused operation such
    /// as an any-source receive): it is the program's to fix, the run
    /// stops.
    #[error("msglog: iteration {iteration} failed: {source}")]
    Body {
        /// The iteration (the run's iteration count: the final step).
        iteration: u64,
        /// The body's error.
        source: pertinax::Error,
    },
    /// A failure in [`crate::Mode::Plain`], which does not recover.
    #[error("msglog: a process failed in iteration {iteration} and the run is plain (no recovery): {source}")]
    Unprotected {
        /// The iteration (the run's iteration count: the final step).
        iteration: u64,
        /// The failure.
        source: pertinax::Error,
    },
    /// A call of the core that is not a process failure failed (a
    /// recovery call refused, the runtime gone).
    #[error("msglog: {what}: {source}")]
    Core {
        /// What the library was doing.
        what: &'static str,
        /// The core's error.
        source: pertinax::Error,
    },
    /// The checkpoints cannot give the state back: lost (a rank and its
    /// buddy failed together, or the buddy during the rank's recovery,
    /// without [`crate::Config::ckpt_dir`]), corrupt.
    #[error("msglog: checkpoint: {0}")]
    Checkpoint(CkptError),
    /// The state could not be encoded or decoded for a checkpoint.
    #[error("msglog: the state could not be {what}: {why}")]
    State {
        /// "encoded" or "decoded".
        what: &'static str,
        /// The serializer's message.
        why: String,
    },
}
