//! Tasks: the handle a master gets ([`Task`]), where a task stands
//! ([`TaskState`]), and the master's record of each (`Rec`).

use std::marker::PhantomData;

use super::Domain;
use crate::error::Error;

/// Where a task stands (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskState {
    /// Offloaded, not finished.
    Running,
    /// Finished; its output is held until its domain is cleared.
    WaitingForClearance,
    /// Cleared: [`Boosters::take`](crate::Boosters::take) returns its output.
    Cleared,
    /// Failed: [`Boosters::take`](crate::Boosters::take) returns the error
    /// and the input.
    Failed,
    /// Running or finished, but this master saw a booster of the group
    /// fail: the next wait (which recovers) offloads the task again from
    /// its input, or fails it (without `recover`, or at the retry limit).
    /// [`Boosters::poll`](crate::Boosters::poll) cannot recover (for a
    /// shared allocation that takes the masters' agreement, at a wait): a
    /// polling loop stops on any state but [`TaskState::Running`], then
    /// waits.
    AwaitingRecovery,
}

/// A handle to an offloaded task with input `I` and output `O`.
#[derive(Debug)]
#[must_use = "a task's output or error is only returned by take or wait"]
pub struct Task<I, O> {
    pub(super) id: u64,
    pub(super) domain: Option<Domain>,
    pub(super) _types: PhantomData<fn(I) -> O>,
}

impl<I, O> Task<I, O> {
    /// The task's id (unique for this master and allocation).
    pub fn id(&self) -> u64 {
        self.id
    }
}

#[derive(Debug)]
pub(super) enum State {
    Running,
    Finished(Vec<u8>),
    Cleared(Vec<u8>),
    Failed(Error),
}

#[derive(Debug)]
pub(super) struct Rec {
    pub(super) name: String,
    /// The offload's types (`std::any::type_name` of `I` and `O`).
    pub(super) types: (&'static str, &'static str),
    pub(super) input: Vec<u8>,
    pub(super) onto: usize,
    pub(super) recover: bool,
    pub(super) domain: Option<Domain>,
    pub(super) replica: Option<usize>,
    pub(super) attempts: u32,
    pub(super) state: State,
    /// Replicas of the current attempt not heard from yet.
    pub(super) out: u8,
    /// The first replica's error, while the other may still succeed.
    pub(super) first_error: Option<Error>,
}
