//! The crate's error type: one enum with a matchable kind, and
//! [`TaskError`], which hands a task's input back when the task could not
//! be completed.

/// What went wrong in the offload library.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Starting boosters failed (allocation, respawn or a spare that could
    /// not be taken): the core's error.
    #[error("booster spawn failed: {0}")]
    Spawn(pertinax::Error),
    /// A call on the masters' communicator failed (a master died, or the
    /// communicator was revoked): the core's error. Master failures are
    /// not recovered by this library (as in the paper, checkpoints are the
    /// answer to those).
    #[error("masters' communicator: {0}")]
    Masters(pertinax::Error),
    /// The booster running a task offloaded without recovery failed
    /// (or its group was replaced), so the task was dropped.
    #[error("booster {booster} failed and the task was offloaded without recovery")]
    BoosterFailed {
        /// The booster's index in the allocation.
        booster: usize,
    },
    /// A recoverable task was re-executed `attempts` times and its booster
    /// group failed every time (the retry limit, [`crate::Options::max_attempts`]).
    #[error("task given up after {attempts} attempt(s): its booster group failed each time")]
    RetriesExceeded {
        /// How many times the task was started.
        attempts: u32,
    },
    /// The task body returned an error (not a process failure: it is not
    /// re-executed, a deterministic task would fail again).
    #[error("task {name:?} failed on the booster: {message}")]
    Task {
        /// The task's name.
        name: String,
        /// The message the task returned.
        message: String,
    },
    /// No task of this name is registered on the booster.
    #[error("no task named {0:?} is registered on the booster")]
    UnknownTask(String),
    /// `onto` names no booster of the allocation.
    #[error("no booster {index}: the allocation has {count}")]
    InvalidBooster {
        /// The index given.
        index: usize,
        /// The number of boosters.
        count: usize,
    },
    /// An argument is invalid (the message says which and why).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The task has not been cleared yet: wait for it (or its domain)
    /// first.
    #[error("the task is not cleared yet (wait for it or its domain first)")]
    NotCleared,
    /// A value could not be encoded or decoded.
    #[error("serialization: {0}")]
    Serialization(String),
    /// The handle's boosters were freed.
    #[error("the boosters were freed")]
    Freed,
    /// A booster lost its group (a sibling or its parent failed, or the
    /// masters gave the group up); the booster process should exit.
    #[error("booster group lost: {0}")]
    GroupLost(pertinax::Error),
    /// A task body panicked on this booster ([`crate::Ended::GroupLost`]):
    /// the booster leaves as failed, and the masters re-execute the task
    /// (a panic is not a task error: it may not happen again).
    #[error("task {0:?} panicked")]
    TaskPanicked(String),
    /// Not a booster: the process was not spawned by [`crate::Boosters`].
    #[error("this process is not a booster")]
    NotABooster,
    /// The task's input or output type is not the one its name was
    /// registered with on the booster: nothing was run (a value decoded
    /// as another type would be a wrong answer, not an error). Types are
    /// written `input -> output`, each as [`std::any::type_name`] gives it.
    #[error("task {name:?} is registered as {expected}, offloaded as {given}")]
    TypeMismatch {
        /// The task's name.
        name: String,
        /// The registered types, `input -> output`.
        expected: String,
        /// The types of the offload, `input -> output`.
        given: String,
    },
    /// The launcher has no slot left for the boosters of a new group (at
    /// allocation, or to replace a failed group): under `pertinax run`,
    /// every process a job ever spawns takes a slot of `--max-spawn` for
    /// good. `max_spawn` is what this process's allocations need, their
    /// groups so far and this one; pass at least that (plus what other
    /// processes spawn: other masters' private allocations, nested ones),
    /// and `needed` more per further recovery.
    #[error(
        "no slot left to start {needed} booster(s) ({started} started before by this process): \
         start the job with `pertinax run --max-spawn {max_spawn}` or more \
         ({needed} more per further recovery, plus what other processes spawn): {source}"
    )]
    NoSpawnRoom {
        /// Boosters the failed spawn would have started.
        needed: usize,
        /// Boosters this process's allocations started before (groups
        /// and spares, freed or not).
        started: usize,
        /// `started + needed`: the `--max-spawn` this process needs.
        max_spawn: usize,
        /// The core's error.
        source: pertinax::Error,
    },
}

/// A task that could not be completed, with its input handed back so that
/// nothing is lost (the caller may offload it again).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{error}")]
pub struct TaskError<I> {
    /// Why the task did not complete.
    pub error: Error,
    /// The task's original input (`None` only if it could not be decoded
    /// back, which [`Error::Serialization`] then says).
    pub input: Option<I>,
}

/// What a task body returns on failure.
///
/// A [`pertinax::Error`] that is a process failure or a revocation (a
/// domain peer died) is [`TaskFailure::Fault`]: the booster then leaves,
/// taking its group down, and the masters re-execute the domain's tasks.
/// Anything else is reported to the master as [`Error::Task`].
#[derive(Debug, Clone)]
pub enum TaskFailure {
    /// The task itself failed; the message reaches the master.
    Message(String),
    /// A failure of the booster group (a peer died): the booster leaves.
    Fault(pertinax::Error),
}

impl From<pertinax::Error> for TaskFailure {
    fn from(e: pertinax::Error) -> Self {
        if e.is_fault() {
            TaskFailure::Fault(e)
        } else {
            TaskFailure::Message(e.to_string())
        }
    }
}

impl From<String> for TaskFailure {
    fn from(m: String) -> Self {
        TaskFailure::Message(m)
    }
}

impl From<&str> for TaskFailure {
    fn from(m: &str) -> Self {
        TaskFailure::Message(m.to_string())
    }
}

impl From<Error> for TaskFailure {
    fn from(e: Error) -> Self {
        TaskFailure::Message(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_take_the_group_down_other_errors_reach_the_master() {
        let fault = TaskFailure::from(pertinax::Error::ProcFailed { ranks: vec![] });
        assert!(matches!(fault, TaskFailure::Fault(_)));
        assert!(matches!(
            TaskFailure::from(pertinax::Error::Revoked),
            TaskFailure::Fault(_)
        ));
        let other = TaskFailure::from(pertinax::Error::InvalidArgument("x".into()));
        assert!(matches!(other, TaskFailure::Message(m) if m.contains('x')));
    }

    #[test]
    fn a_task_error_hands_the_input_back() {
        let e = TaskError {
            error: Error::BoosterFailed { booster: 2 },
            input: Some(vec![1u8, 2, 3]),
        };
        assert_eq!(e.input.as_deref(), Some(&[1u8, 2, 3][..]));
        assert!(e.to_string().contains("booster 2"));
    }
}
