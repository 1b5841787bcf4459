//! The log of completed operations and its replay: what lets survivors that
//! are ahead complete, after a repair, the operations that others missed
//! (the flat communicator's [`Check::Log`](crate::Check::Log)).
//!
//! The log knows nothing of communicators. Its user says, for each
//! completed operation, what a laggard would need ([`What`]) and what this
//! rank can give it ([`Serve`]: a result to send, or its input to run the
//! operation again through a closure that gets the user's context `C`).
//! After a repair, [`Log::catch_up`] takes every survivor's count of
//! completed operations; [`Log::plan`] then tells each rank, per missed
//! operation, how it is completed ([`Plan`]), and [`Log::replay`] walks a
//! rank's own entries in order, handing each one to the user's transport.
//! So message logging can reuse it with other operations and another
//! transport: the bookkeeping (sequence numbers, one arena of bytes, the
//! bounds that let a synchronizing operation empty it) is here.

use std::collections::VecDeque;

use pertinax::Rank;

use crate::{Error, Outcome};

/// Non-synchronizing operations in a row after which the user should run a
/// synchronizing one (bounds the log's length).
pub(crate) const SYNC_EVERY: u32 = 1024;
/// Bytes moved by non-synchronizing operations in a row after which the
/// user should run a synchronizing one (bounds the log's memory). Counted
/// the same way at every rank (each operation's size as every rank sees
/// it), so every rank decides the same.
pub(crate) const SYNC_BYTES: usize = 4 << 20;

/// What a laggard needs to complete an operation that others completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum What {
    /// Nothing (a barrier: its completion anywhere means everyone entered).
    Barrier,
    /// The result, the same at every rank (broadcast, allreduce, allgather).
    Spread,
    /// The root's result needs everyone's input (reduce, gather; original
    /// root rank).
    Rooted(usize),
    /// Everyone's result needs the root's input (scatter).
    Scatter(usize),
    /// Every rank's result is its own and needs other ranks' inputs (scan,
    /// exscan, reduce_scatter): every survivor runs it again, the ranks
    /// that completed it with their logged inputs (their results are
    /// dropped).
    Each,
}

/// How the survivors complete operation `j` for the ones that missed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Plan {
    /// Nothing to do.
    Nothing,
    /// The lowest survivor that has the result broadcasts it (its rank
    /// among the survivors).
    Bcast(usize),
    /// The operation runs again, completed ranks with their logged inputs.
    Rerun,
    /// The root has failed: the policy decides.
    RootLost(usize),
}

/// A logged re-run of an operation: gets the user's context and the logged
/// input.
pub(crate) type Replay<C> = Box<dyn Fn(&C, &[u8]) -> Result<(), Error>>;

/// A rank's part in the replay of an operation it completed.
pub(crate) enum Serve<C> {
    /// No part.
    Nothing,
    /// The result (bytes `at..at + len` of the arena) and the outcome the
    /// rank got with it (a replay sends both, see [`payload`]).
    Payload { at: usize, len: usize, out: Outcome },
    /// Runs the operation again with the logged input (bytes `at..at +
    /// len` of the arena).
    Rerun { at: usize, len: usize, f: Replay<C> },
}

impl<C> Serve<C> {
    /// The arena bytes the entry holds.
    fn len(&self) -> usize {
        match self {
            Serve::Payload { len, .. } | Serve::Rerun { len, .. } => *len,
            Serve::Nothing => 0,
        }
    }
}

/// A completed operation's record at a rank that may have to replay it.
struct Entry<C> {
    seq: u64,
    what: What,
    serve: Serve<C>,
}

/// After a repair, where every survivor stands.
#[derive(Debug)]
struct CatchUp {
    /// The highest count of completed operations among the survivors.
    hi: u64,
    /// Each survivor's count (by its rank among the survivors).
    done: Vec<u64>,
}

/// The log of one communicator's completed operations.
pub(crate) struct Log<C> {
    /// Whether entries are kept (the counters run in any case).
    keep: bool,
    /// Operations completed.
    seq: u64,
    /// Non-synchronizing operations since the last synchronizing one.
    since_sync: u32,
    /// Their sizes (see [`SYNC_BYTES`]).
    since_sync_bytes: usize,
    /// What laggards may need, since the last synchronizing operation.
    entries: VecDeque<Entry<C>>,
    /// The bytes the entries hold, back to back (emptied, its capacity
    /// kept, when the log is: one copy per logged operation and no
    /// allocation once it has grown).
    arena: Vec<u8>,
    /// Set after a repair while some survivors are behind.
    catchup: Option<CatchUp>,
}

/// Where a replay sends what a rank serves.
pub(crate) trait Transport<C> {
    /// Broadcasts `payload` from survivor `src` (a [`Plan::Bcast`]).
    fn bcast(&self, ctx: &C, payload: &mut Vec<u8>, src: usize) -> Result<(), Error>;
}

impl<C> Log<C> {
    /// An empty log; `keep`: whether entries are kept.
    pub(crate) fn new(keep: bool) -> Log<C> {
        Log {
            keep,
            seq: 0,
            since_sync: 0,
            since_sync_bytes: 0,
            entries: VecDeque::new(),
            arena: Vec::new(),
            catchup: None,
        }
    }

    /// Operations completed.
    pub(crate) fn seq(&self) -> u64 {
        self.seq
    }

    /// Bytes the entries hold.
    pub(crate) fn bytes(&self) -> usize {
        self.entries.iter().map(|e| e.serve.len()).sum()
    }

    /// Records a completed operation: `sync` when its completion anywhere
    /// means every rank entered it (the earlier entries are dropped),
    /// `weight` its size (the same at every rank), `serve` this rank's part
    /// in its replay (called only when entries are kept; it stores its
    /// bytes with [`keep`] or [`rerun`]). Returns whether a synchronizing
    /// operation is due ([`SYNC_EVERY`], [`SYNC_BYTES`]).
    pub(crate) fn record(
        &mut self,
        what: What,
        sync: bool,
        weight: usize,
        serve: impl FnOnce(&mut Vec<u8>) -> Serve<C>,
    ) -> bool {
        if self.keep {
            if sync {
                // Everyone entered this one, so finished the earlier ones.
                self.entries.clear();
                self.arena.clear();
                if self.arena.capacity() > 2 * SYNC_BYTES {
                    self.arena.shrink_to(SYNC_BYTES);
                }
            }
            let serve = serve(&mut self.arena);
            self.entries.push_back(Entry {
                seq: self.seq,
                what,
                serve,
            });
        }
        self.seq += 1;
        if self.catchup.as_ref().is_some_and(|c| self.seq >= c.hi) {
            self.catchup = None;
        }
        if sync {
            self.since_sync = 0;
            self.since_sync_bytes = 0;
        } else {
            self.since_sync += 1;
            self.since_sync_bytes += weight;
        }
        self.keep && (self.since_sync >= SYNC_EVERY || self.since_sync_bytes >= SYNC_BYTES)
    }

    /// After a repair: every survivor's count of completed operations (by
    /// its rank among the survivors). Returns the range of operations to
    /// replay from this rank's log, `lo..seq` (empty when nobody is behind
    /// it).
    pub(crate) fn catch_up(&mut self, done: Vec<u64>) -> std::ops::Range<u64> {
        let lo = done.iter().copied().min().unwrap_or(self.seq);
        let hi = done.iter().copied().max().unwrap_or(self.seq);
        self.catchup = (lo < hi).then_some(CatchUp { hi, done });
        lo..self.seq
    }

    /// The plan for this rank's next operation, of kind `what`, if it is
    /// catching up (others completed it before the repair); `at(o)` is
    /// the rank among the survivors of original rank `o`, if it survives.
    pub(crate) fn next_plan(
        &self,
        what: What,
        at: impl Fn(usize) -> Option<usize>,
    ) -> Option<Plan> {
        self.catchup
            .as_ref()
            .filter(|c| self.seq < c.hi)
            .map(|_| self.plan(what, self.seq, at))
    }

    /// How operation `j` of kind `what` is completed after a repair.
    pub(crate) fn plan(&self, what: What, j: u64, at: impl Fn(usize) -> Option<usize>) -> Plan {
        let Some(c) = &self.catchup else {
            return Plan::Nothing;
        };
        match what {
            What::Barrier => Plan::Nothing,
            What::Spread => c
                .done
                .iter()
                .position(|&d| d > j)
                .map_or(Plan::Nothing, Plan::Bcast),
            What::Rooted(root) => match at(root) {
                None => Plan::RootLost(root),
                Some(rc) if c.done.get(rc).is_some_and(|&d| d > j) => Plan::Nothing,
                Some(_) => Plan::Rerun,
            },
            What::Scatter(root) => match at(root) {
                None => Plan::RootLost(root),
                Some(_) => Plan::Rerun,
            },
            What::Each => Plan::Rerun,
        }
    }

    /// Serves, in order, the operations `range` (from [`Log::catch_up`])
    /// that this rank completed and others did not: results go through
    /// `net`, re-runs get `ctx`. `size`: the original size (for payloads).
    ///
    /// # Errors
    /// The transport's or the re-runs' errors (a fault: the caller repairs
    /// again); [`Error::Internal`] if an entry is missing (a broken
    /// invariant: a synchronizing operation empties the log only once
    /// every survivor has completed everything before it).
    pub(crate) fn replay(
        &self,
        range: std::ops::Range<u64>,
        ctx: &C,
        net: &impl Transport<C>,
        at: impl Fn(usize) -> Option<usize>,
        size: usize,
    ) -> Result<(), Error> {
        for j in range {
            let Some(e) = self.entries.iter().find(|e| e.seq == j) else {
                return Err(Error::Internal(format!(
                    "operation {j} is not in the replay log (log holds {:?})",
                    self.entries.iter().map(|e| e.seq).collect::<Vec<_>>()
                )));
            };
            match (self.plan(e.what, j, &at), &e.serve) {
                (Plan::Bcast(src), Serve::Payload { at, len, out }) => {
                    let mut p = payload(&self.arena[*at..at + len], out, size);
                    net.bcast(ctx, &mut p, src)?;
                }
                (Plan::Rerun, Serve::Rerun { at, len, f }) => f(ctx, &self.arena[*at..at + len])?,
                (Plan::Nothing | Plan::RootLost(_), _) => {}
                (plan, _) => {
                    return Err(Error::Internal(format!(
                        "operation {j} ({:?}) cannot be replayed as {plan:?}",
                        e.what
                    )))
                }
            }
        }
        Ok(())
    }
}

/// A replay payload: the result bytes, one byte per original rank (1:
/// missing) and the skipped rank (`-1`: none). Built only when a replay
/// sends it.
pub(crate) fn payload(result: &[u8], out: &Outcome, size: usize) -> Vec<u8> {
    let mut p = Vec::with_capacity(result.len() + size + 4);
    p.extend_from_slice(result);
    let mut mask = vec![0u8; size];
    for r in &out.missing {
        if let Some(m) = mask.get_mut(r.index()) {
            *m = 1;
        }
    }
    p.extend_from_slice(&mask);
    p.extend_from_slice(&out.skipped.map_or(-1, |r| r.0).to_le_bytes());
    p
}

/// The bytes a laggard receives a payload of `n` result bytes into.
pub(crate) fn payload_len(n: usize, size: usize) -> usize {
    n + size + 4
}

/// The outcome a payload carries after its `n` result bytes.
pub(crate) fn payload_outcome(p: &[u8], n: usize, size: usize) -> Outcome {
    let missing = p[n..n + size]
        .iter()
        .enumerate()
        .filter(|(_, &m)| m == 1)
        .map(|(r, _)| Rank(r as i32))
        .collect();
    let s = n + size;
    let skipped = i32::from_le_bytes([p[s], p[s + 1], p[s + 2], p[s + 3]]);
    Outcome {
        skipped: (skipped >= 0).then_some(Rank(skipped)),
        missing,
    }
}

/// Appends `data` to the arena; returns where it starts.
fn stash(arena: &mut Vec<u8>, data: &[u8]) -> usize {
    let at = arena.len();
    arena.extend_from_slice(data);
    at
}

/// An entry's result and outcome, kept for a replay.
pub(crate) fn keep<C>(arena: &mut Vec<u8>, result: &[u8], out: &Outcome) -> Serve<C> {
    Serve::Payload {
        at: stash(arena, result),
        len: result.len(),
        out: out.clone(),
    }
}

/// An entry's input, kept for a re-run by `f`.
pub(crate) fn rerun<C>(arena: &mut Vec<u8>, input: &[u8], f: Replay<C>) -> Serve<C> {
    Serve::Rerun {
        at: stash(arena, input),
        len: input.len(),
        f,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_carry_results_and_outcomes() {
        let out = Outcome {
            skipped: None,
            missing: vec![Rank(1), Rank(3)],
        };
        let p = payload(&[7, 8, 9], &out, 4);
        assert_eq!(p.len(), payload_len(3, 4));
        assert_eq!(&p[..3], &[7, 8, 9]);
        assert_eq!(payload_outcome(&p, 3, 4), out);
        let skipped = Outcome {
            skipped: Some(Rank(2)),
            missing: Vec::new(),
        };
        assert_eq!(payload_outcome(&payload(&[], &skipped, 3), 0, 3), skipped);
    }

    #[test]
    fn plans_follow_who_is_behind() {
        let mut log: Log<()> = Log::new(true);
        for _ in 0..3 {
            log.record(What::Spread, false, 1, |a| {
                keep(a, &[1], &Outcome::default())
            });
        }
        // Survivors at 1, 3 and 2 operations; this rank (3) replays 1..3.
        assert_eq!(log.catch_up(vec![1, 3, 2]), 1..3);
        let at = |o: usize| (o != 5).then_some(o % 3);
        assert_eq!(log.plan(What::Spread, 1, at), Plan::Bcast(1));
        assert_eq!(log.plan(What::Barrier, 1, at), Plan::Nothing);
        assert_eq!(log.plan(What::Rooted(5), 1, at), Plan::RootLost(5));
        assert_eq!(log.plan(What::Rooted(1), 1, at), Plan::Nothing);
        assert_eq!(log.plan(What::Rooted(0), 1, at), Plan::Rerun);
        assert_eq!(log.plan(What::Scatter(0), 2, at), Plan::Rerun);
        assert_eq!(log.plan(What::Each, 1, at), Plan::Rerun);
        // A synchronizing operation empties the log.
        log.record(What::Spread, true, 0, |a| {
            keep(a, &[1, 2], &Outcome::default())
        });
        assert_eq!(log.bytes(), 2);
        assert_eq!(log.seq(), 4);
    }
}
