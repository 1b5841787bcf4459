//! The one error type of the core, with a matchable kind per failure.

use crate::types::{Rank, Tag};

/// Everything that can go wrong in a pertinax call.
///
/// Failures cross layers (a collective fails because a receive failed
/// because a peer died), so recovery code matches on the variant wherever it
/// arose.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A peer this operation needs has failed.
    #[error(
        "process failure: rank(s) {} of the communicator failed",
        RankList(ranks)
    )]
    ProcFailed {
        /// Ranks (in the communicator used) known to have failed.
        ranks: Vec<Rank>,
    },
    /// An any-source receive could match a failed peer whose failure was
    /// not acknowledged yet.
    #[error(
        "any-source receive while failures of rank(s) {} are unacknowledged",
        RankList(ranks)
    )]
    ProcFailedPending {
        /// The unacknowledged failed ranks.
        ranks: Vec<Rank>,
    },
    /// The communicator was revoked.
    #[error("the communicator was revoked")]
    Revoked,
    /// The message is longer than the receive buffer. As `MPI_ERR_TRUNCATE`,
    /// the message was consumed; the buffer's contents are unspecified.
    #[error("message truncated: {sent} bytes sent, receive buffer holds {capacity}")]
    Truncated {
        /// Bytes in the message.
        sent: usize,
        /// Bytes the receive buffer holds.
        capacity: usize,
    },
    /// The message length is not a multiple of the receive element size.
    /// The message was consumed.
    #[error("message of {len} bytes is not a whole number of {elem}-byte elements")]
    LengthNotMultiple {
        /// Bytes in the message.
        len: usize,
        /// Size of one element of the receive buffer.
        elem: usize,
    },
    /// A rank outside `0..size`.
    #[error("invalid rank {rank} for a communicator of size {size}")]
    InvalidRank {
        /// The rank given.
        rank: Rank,
        /// The communicator's size.
        size: usize,
    },
    /// A tag outside `0..=TAG_UB`.
    #[error("invalid tag {tag} (valid tags are 0..={max})")]
    InvalidTag {
        /// The tag given.
        tag: Tag,
        /// The largest valid tag.
        max: i32,
    },
    /// An argument is invalid (the message says which and why).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The communicator was freed.
    #[error("the communicator was freed")]
    CommFreed,
    /// The operation was cancelled (`Request::cancel` of the API, or its
    /// request was dropped before it matched a message): it never touched
    /// its buffer.
    #[error("the operation was cancelled before it matched a message")]
    Cancelled,
    /// The request already completed and its result was taken.
    #[error("the request is no longer active (its result was already returned)")]
    RequestInactive,
    /// The runtime was finalized (or is being finalized).
    #[error("the runtime is finalized")]
    Finalized,
    /// `init` was called twice in one process.
    #[error("the runtime is already initialized in this process")]
    AlreadyInitialized,
    /// Bootstrap with the launcher failed.
    #[error("bootstrap failed: {0}")]
    Bootstrap(String),
    /// The operating system refused something the transport needs.
    #[error("transport: {0}")]
    Transport(String),
    /// New processes could not be started (no free slot or spare, or a
    /// program that cannot run).
    #[error("spawn failed: {0}")]
    SpawnFailed(String),
    /// A value could not be serialized or deserialized.
    #[error("serialization: {0}")]
    Serialization(String),
    /// The members of a communicator did not make the same recovery call
    /// in the same place: recovery calls (agree, shrink, spawn, merge,
    /// replace_failed) on one communicator are matched by their order, and
    /// this rank's call met another kind of call of rank `rank`. Returned
    /// by both calls, at every member that took part (the records are
    /// visible to all, so the verdict is the same everywhere); nothing was
    /// created or started.
    #[error(
        "recovery calls do not match: this rank called {expected} while rank {rank} called \
         {found} in its place (every member must make the same recovery calls, in the same \
         order, on a communicator)"
    )]
    RecoveryMismatch {
        /// The call this rank made.
        expected: RecoveryCall,
        /// The call another member made in its place.
        found: RecoveryCall,
        /// That member (the lowest such rank).
        rank: Rank,
    },
    /// `publish_name`: the service name is already published, for `port`
    /// (MPI's `MPI_ERR_SERVICE`); nothing changed.
    #[error("the service name {service:?} is already published (for port {port:?})")]
    NameTaken {
        /// The service name.
        service: String,
        /// The port it names.
        port: String,
    },
    /// `unpublish_name`: the service name is not published for this port
    /// (MPI's `MPI_ERR_SERVICE`); nothing changed.
    #[error("the service name {service:?} is not published for port {port:?}")]
    NameNotPublished {
        /// The service name.
        service: String,
        /// The port given.
        port: String,
    },
    /// `lookup_name`: no port is published under the service name (MPI's
    /// `MPI_ERR_NAME`).
    #[error("no port is published under the service name {service:?}")]
    NameNotFound {
        /// The service name.
        service: String,
    },
    /// The backend this process runs on lacks an optional feature the call
    /// needs (spares, single-copy transfers, heartbeats, fault injection by
    /// the launcher, ...; see the backend contract in ARCHITECTURE.md), or a
    /// communicator cannot honour an operation (a decorator's reason). The
    /// call did nothing.
    #[error("unsupported: {feature}")]
    Unsupported {
        /// What is not provided, and where the reason is not obvious, why.
        feature: &'static str,
    },
}

/// The kinds of recovery call, which must match between the members of a
/// communicator (see [`Error::RecoveryMismatch`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RecoveryCall {
    /// `agree`, `agree_detailed` or `iagree`.
    Agree,
    /// `shrink` or `shrink_gather`.
    Shrink,
    /// `spawn`.
    Spawn,
    /// `merge`.
    Merge,
    /// `replace_failed` or `replace_failed_with`.
    ReplaceFailed,
    /// The commit of `intercomm_create`.
    IntercommCreate,
}

impl RecoveryCall {
    /// The code written into agreement records.
    pub fn code(self) -> u8 {
        match self {
            RecoveryCall::Agree => 1,
            RecoveryCall::Shrink => 2,
            RecoveryCall::Spawn => 3,
            RecoveryCall::Merge => 4,
            RecoveryCall::ReplaceFailed => 5,
            RecoveryCall::IntercommCreate => 6,
        }
    }

    /// The call of a record's code (only this library writes codes).
    pub fn from_code(code: u8) -> RecoveryCall {
        match code {
            1 => RecoveryCall::Agree,
            2 => RecoveryCall::Shrink,
            3 => RecoveryCall::Spawn,
            4 => RecoveryCall::Merge,
            5 => RecoveryCall::ReplaceFailed,
            _ => RecoveryCall::IntercommCreate,
        }
    }
}

impl std::fmt::Display for RecoveryCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RecoveryCall::Agree => "agree",
            RecoveryCall::Shrink => "shrink",
            RecoveryCall::Spawn => "spawn",
            RecoveryCall::Merge => "merge",
            RecoveryCall::ReplaceFailed => "replace_failed",
            RecoveryCall::IntercommCreate => "intercomm_create",
        })
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// True for the failure kinds that recovery code reacts to
    /// (`ProcFailed`, `ProcFailedPending`, `Revoked`).
    pub fn is_fault(&self) -> bool {
        matches!(
            self,
            Error::ProcFailed { .. } | Error::ProcFailedPending { .. } | Error::Revoked
        )
    }
}

/// A list of ranks as messages print it: `[3]`, `[1, 4]` (not the
/// `[Rank(3)]` of `{:?}`).
///
/// ```
/// // `pertinax::{Rank, RankList}` in a program
/// use pertinax_backend::{error::RankList, types::Rank};
///
/// assert_eq!(RankList(&[Rank(1), Rank(4)]).to_string(), "[1, 4]");
/// assert_eq!(RankList(&[]).to_string(), "[]");
/// ```
#[derive(Clone, Copy, Debug)]
pub struct RankList<'a>(pub &'a [Rank]);

impl std::fmt::Display for RankList<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[")?;
        for (i, r) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{r}")?;
        }
        f.write_str("]")
    }
}
