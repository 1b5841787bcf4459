//! The crate's error: one type, a matchable kind per failure.

/// What can go wrong in a checkpoint or a restore.
#[non_exhaustive]
#[derive(thiserror::Error, Debug)]
pub enum Error {
    /// A call of the core failed. With [`pertinax::Error::is_fault`] (a
    /// process failed, or the communicator was revoked) the caller
    /// recovers: revoke, `replace_failed`, [`restore`](crate::Checkpointer::restore).
    #[error("checkpoint: communication: {0}")]
    Comm(#[from] pertinax::Error),
    /// A copy of rank `rank`'s state at `iteration` that was received (or
    /// read back) failed verification.
    #[error(
        "checkpoint: the copy of rank {rank}'s state at iteration {iteration} is corrupt: {why}"
    )]
    Corrupt {
        /// The rank whose state it is.
        rank: usize,
        /// The version.
        iteration: u64,
        /// What the check found.
        why: String,
    },
    /// No version can be restored at every rank: rank `rank`'s state has
    /// no verified copy anywhere (it and its buddy both lost their memory
    /// and there is no disk copy: at once, or the buddy during the rank's
    /// recovery, before a restore gave the rank its image back; see the
    /// [crate's limits](crate#limits)), or no version is held by every
    /// rank.
    /// The same at every rank.
    #[error("checkpoint lost: {why}")]
    Lost {
        /// The (lowest) rank whose state cannot be obtained.
        rank: usize,
        /// Why, naming the ranks.
        why: String,
    },
    /// No rank holds any version in memory and the files hold no version
    /// common to all ranks: nothing was committed yet (a failure before
    /// the first checkpoint; files then are leftovers of checkpoints that
    /// were not committed). The caller starts over from its initial
    /// state. The same at every rank.
    #[error("checkpoint: no rank holds a committed version (none was committed yet): nothing to restore")]
    NoCheckpoint,
    /// A collective step (a checkpoint's commit, a restore) did not
    /// complete at every member although none failed: some member could
    /// not write its file or received a corrupt copy (that member returns
    /// `Io` or `Corrupt` with the details; the others return this). Nothing
    /// changed (a checkpoint was not committed) and the communicator is
    /// intact, so the caller may retry or give up, at every rank alike.
    #[error("checkpoint: iteration {iteration} incomplete: {why}")]
    Incomplete {
        /// The version concerned.
        iteration: u64,
        /// What this rank knows.
        why: String,
    },
    /// A file operation failed (the message names the file).
    #[error("checkpoint: i/o: {0}")]
    Io(String),
    /// An argument is invalid (the message says which and why).
    #[error("checkpoint: invalid argument: {0}")]
    InvalidArgument(String),
}

impl Error {
    /// True iff this is [`Error::Comm`] with a fault of the core (a
    /// process failure or a revoked communicator): the caller recovers.
    pub fn is_fault(&self) -> bool {
        matches!(self, Error::Comm(e) if e.is_fault())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_core_faults_are_faults() {
        assert!(Error::Comm(pertinax::Error::Revoked).is_fault());
        assert!(Error::Comm(pertinax::Error::ProcFailed { ranks: vec![] }).is_fault());
        assert!(!Error::Comm(pertinax::Error::CommFreed).is_fault());
        assert!(!Error::NoCheckpoint.is_fault());
        assert!(!Error::Lost {
            rank: 1,
            why: String::new()
        }
        .is_fault());
    }
}
