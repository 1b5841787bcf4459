//! What a rank of the hierarchy works with: the tags and agreement bits
//! of the protocol, its communicators with their original ranks ([`Sub`],
//! [`Global`]), the description of a global stage ([`Stage`]), the joins
//! of a repair of the global communicator ([`Work`]) and the messages to
//! a rank outside it ([`Join`], [`Hello`], [`Push`]), and its mutable
//! state ([`State`]).

use std::time::Duration;

use pertinax::{Comm, Tag};
use serde::{Deserialize, Serialize};

#[cfg(doc)]
use super::Hierarchical;

/// Tag of the intercommunicator creations of a deputy's join.
pub(super) const TAG_JOIN: Tag = Tag(7001);
/// Tag of a master's hand-over to the root in its group.
pub(super) const TAG_ROOT: Tag = Tag(7003);
/// Tag of a [`Hello`].
pub(super) const TAG_HELLO: Tag = Tag(7005);
/// A tag nobody sends: probing a rank with it tells whether it ended.
pub(super) const TAG_PROBE: Tag = Tag(7007);
/// Agreement bit: the stage succeeded.
pub(super) const OK: u32 = 1;
/// Agreement bit of a global stage, cleared by a head whose group's new
/// deputy joins at this stage.
pub(super) const NO_JOIN: u32 = 2;
/// Agreement bit of a retry of a last stage: this member kept what an
/// earlier attempt gave it.
pub(super) const KEPT: u32 = 4;
/// A retry of a last stage runs the stage again (the master's decision).
pub(super) const RUN: u8 = 0;
/// A retry of a last stage ends with what every member kept (a rescue's
/// decision: see `rescue.rs`).
pub(super) const RESPREAD: u8 = 1;
/// A retry of a last stage runs the stage again from a global stage run
/// again (what the members kept is stale).
pub(super) const RERUN: u8 = 2;

/// A communicator with the original rank of each of its ranks.
#[derive(Clone, Debug)]
pub(super) struct Sub {
    pub(super) comm: Comm,
    pub(super) to_orig: Vec<usize>,
}

impl Sub {
    pub(super) fn rank_of(&self, orig: usize) -> Option<usize> {
        self.to_orig.iter().position(|&o| o == orig)
    }
}

/// The global communicator at a master or a deputy.
#[derive(Clone, Debug)]
pub(super) struct Global {
    pub(super) comm: Comm,
    /// (group, original rank) of each rank of `comm`: the same at every
    /// member. A group's first member is its head (its master).
    pub(super) members: Vec<(usize, usize)>,
    /// The groups known to have no live member (every candidate of a
    /// rejoin failed, or none alive at creation): the same at every member.
    pub(super) gone: Vec<usize>,
}

impl Global {
    /// The rank of group `g`'s head.
    pub(super) fn head(&self, g: usize) -> Option<usize> {
        self.members.iter().position(|&(x, _)| x == g)
    }

    /// Whether rank `r` is its group's head.
    pub(super) fn is_head(&self, r: usize) -> bool {
        self.members
            .get(r)
            .is_some_and(|&(g, _)| self.head(g) == Some(r))
    }
}

/// The global stage of an operation.
#[derive(Clone, Debug)]
pub(super) enum Stage {
    /// Only the agreement (barrier).
    Sync,
    /// Every head contributes a block of this many bytes; the output is
    /// one block per group, in group order (absent groups zero).
    Allgather(usize),
    /// The root group's head sends this many bytes.
    Bcast(usize, usize),
}

/// A join of a repair of the global communicator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) enum Work {
    /// (group, new deputy): led by the group's head.
    Deputy(usize, usize),
    /// A group that lost every global member: its new head (its lowest
    /// live member, unknown to the global communicator) is found by trying
    /// its members in rank order, led by the global communicator's rank 0.
    Orphan(usize),
}

/// What a joining rank gets from the global communicator when it joins.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct Join {
    /// The operation the global communicator is in.
    pub(super) seq: u64,
    /// (group, original rank) of each rank of the global communicator
    /// before the join.
    pub(super) members: Vec<(usize, usize)>,
    /// [`Global::gone`].
    pub(super) gone: Vec<usize>,
    /// The joins after this one in the same repair.
    pub(super) later: Vec<Work>,
    /// The leader's last completed global stage: (operation, output). A
    /// group whose global members all died after that stage's agreement
    /// gets its output from there.
    pub(super) last: Option<(u64, Vec<u8>)>,
    /// A rescue ended the operation before `seq` from what the groups
    /// waiting in its last stage kept (`rescue.rs`): a joiner in that
    /// stage ends it so.
    pub(super) respread: bool,
}

/// A message of the global communicator to a rank outside it: the call of
/// a group's new head (or of a new deputy) by a leader, or the output of a
/// global stage pushed to a group that lost every global member after
/// that stage's agreement ([`Hierarchical::confirm`]).
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct Hello {
    /// The sender's original rank.
    pub(super) leader: usize,
    /// `None`: a call (an intercommunicator creation follows). `Some`: a
    /// chunk of a pushed global output, nothing follows.
    pub(super) output: Option<Push>,
}

/// A chunk of the global output of an operation, pushed by
/// [`Hierarchical::confirm`].
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct Push {
    /// The operation.
    pub(super) seq: u64,
    /// The output's length.
    pub(super) total: usize,
    /// This chunk's offset.
    pub(super) at: usize,
    pub(super) data: Vec<u8>,
}

/// The largest chunk of a pushed output, sent buffered: small enough for
/// one ring record at any job size (8 KiB past 64 ranks), so the receiver
/// holds it and its sender's finalize never waits for a member that never
/// takes it.
pub(super) const PUSH_CHUNK: usize = 1024;

#[derive(Debug)]
pub(super) struct State {
    pub(super) local: Sub,
    /// At a master or a deputy that has joined: the global communicator.
    pub(super) global: Option<Global>,
    /// The members of this group in the global communicator, as the group
    /// knows them (original ranks).
    pub(super) gmembers: Vec<usize>,
    /// The elected deputy that has not joined yet, and the operation at
    /// whose global stage it joins.
    pub(super) elect: Option<(usize, u64)>,
    pub(super) failed: Vec<usize>,
    /// This rank is its group's new head after the group lost every
    /// global member: it must rejoin the global communicator before the
    /// stage runs again ([`Hierarchical::rejoin`]).
    pub(super) rejoin: bool,
    /// The current operation's global stage and this rank's copy of its
    /// group's contribution (for a head that rejoins in the last stage).
    /// Kept for the last two operations, (operation, stage, copy), so
    /// that a rejoin at the next operation still finds it.
    pub(super) cur: Vec<(u64, Stage, Option<Vec<u8>>)>,
    /// The global output of the current operation obtained by a rejoin.
    pub(super) late_out: Option<Vec<u8>>,
    /// At a member of the global communicator: its last completed global
    /// stage, (operation, output).
    pub(super) last: Option<(u64, Vec<u8>)>,
    /// The operation at whose global stage this rank entered the global
    /// communicator it is in: it takes part in the confirmations
    /// ([`Hierarchical::confirm`]) of that operation and the later ones.
    pub(super) joined_at: u64,
    /// The last operation this rank confirmed ([`Hierarchical::confirm`]):
    /// the first agreement, and the second.
    pub(super) confirmed: Option<u64>,
    pub(super) settled: Option<u64>,
    /// The operation in whose last stage's retry every member of the group
    /// held what an earlier attempt gave it (`stage.rs`, `rescue.rs`).
    pub(super) kept_all: Option<u64>,
    /// The operation a rescue ended from what the groups kept: its last
    /// stage ends with that (`rescue.rs`).
    pub(super) respread: Option<u64>,
    /// The operation whose global stage this rank ran again after a
    /// rejoin in its last stage: what the group kept from the first run is
    /// stale.
    pub(super) rerun: Option<u64>,
    /// This rank waits for a call in its operation's last stage.
    pub(super) waiting_post: bool,
    /// Chunks of pushed global outputs, by (operation, offset).
    pub(super) pushed: std::collections::BTreeMap<(u64, usize), (usize, Vec<u8>)>,
    /// Operations completed.
    pub(super) seq: u64,
    /// Times this rank stopped waiting for a call because it was called
    /// or got a pushed output (the rescue's detection, `rescue.rs`).
    pub(super) wakes: u64,
    /// Rounds of the rescue's detection started by this rank.
    pub(super) rounds: u64,
    pub(super) local_repairs: u64,
    pub(super) global_repairs: u64,
    /// Time spent in repairs (see [`Hierarchical::repair_time`]).
    pub(super) repair_time: Duration,
}
