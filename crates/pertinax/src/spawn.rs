//! Dynamic processes: [`Comm::spawn`] (an intercommunicator to new
//! processes), [`Comm::merge`], and the non-shrinking recovery
//! [`Comm::replace_failed`] / [`Comm::replace_failed_with`], which puts
//! spares or new processes in the places of the dead and hands them the
//! survivors' values and the list of replaced ranks (through the
//! assignment, see below). The user-facing failure model is in the crate
//! documentation.
//!
//! # How new processes are asked for
//!
//! One member (the spawn's root, or for a replacement the first live
//! member) sends the launcher a request stamped with a value every member
//! can compute. The launcher writes the slots it chose into the
//! requester's *publication* in the shared segment before it starts
//! anything, and drops requests from a process it already knows dead. So
//! every member, by reading that publication, sees the same answer whether
//! or not the requester survived: either the processes exist and are
//! named there, or the requester died before asking and nothing was
//! started (the next member then asks, for one more hole). No new process
//! is ever started that the survivors do not know about.
//!
//! The request's payload (an [`Assignment`]) is built from the agreement's
//! records alone, so whichever survivor asks, the replacements receive the
//! same restored communicator, holes and gathered values.

use std::rc::Rc;

use crate::backend::{
    Assignment, Backend, OwnCommunicators, ProcRequest, Record, TOKEN_PARENT, TOKEN_WORLD,
};
use crate::comm::Comm;
use crate::error::{Error, RecoveryCall, Result};
use crate::runtime::Runtime;
use crate::types::Rank;
use crate::ulfm::words;

/// How this process came to be.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Role {
    /// Started with the job.
    Original,
    /// Started by [`Comm::spawn`]; [`crate::Universe::parent`] is the
    /// intercommunicator to the parents.
    Spawned,
    /// Put in the place of rank `rank` of a failed process by
    /// [`Comm::replace_failed`] or [`Comm::replace_failed_with`];
    /// [`crate::Universe::world`] is the restored communicator. It knows
    /// what the survivors know at the end of their call (their
    /// [`Replaced`]).
    #[non_exhaustive]
    Replacement {
        /// The rank it took over.
        rank: Rank,
        /// Every rank replaced in the same call, this one included, in
        /// increasing order (the survivors' [`Replaced::replaced`]).
        replaced: Vec<Rank>,
        /// The value each rank passed to [`Comm::replace_failed_with`]
        /// (0 for [`Comm::replace_failed`]), `None` for the ranks that
        /// did not contribute (the survivors' [`Replaced::values`]).
        values: Vec<Option<u64>>,
    },
}

/// The outcome of [`Comm::replace_failed`] at a survivor.
#[derive(Debug)]
#[non_exhaustive]
pub struct Replaced {
    /// The restored communicator: the same size and rank numbers as the
    /// old one, new processes in the dead ranks' places.
    pub comm: Comm,
    /// The ranks that were replaced, in increasing order (empty if nobody
    /// had failed).
    pub replaced: Vec<Rank>,
    /// For each rank of the communicator, the value that member passed to
    /// [`Comm::replace_failed_with`], or `None` for a member that ended
    /// (failed or finalized) without contributing. The same at every
    /// survivor and at every replacement.
    pub values: Vec<Option<u64>>,
}

/// Asks the launcher for processes (from the process that is the
/// requester).
fn request(
    rt: &Runtime,
    stamp: u64,
    program: Option<(&str, &[&str])>,
    count: usize,
    spares: bool,
    payload: &Assignment,
) -> Result<()> {
    // For the launcher's labels: the ranks the new processes will call
    // themselves (see `join`).
    let replaces = match payload {
        Assignment::Replace { holes, .. } => holes.clone(),
        Assignment::Spawned { .. } => Vec::new(),
    };
    let payload =
        postcard::to_allocvec(payload).map_err(|e| Error::Serialization(e.to_string()))?;
    rt.b.request_processes(ProcRequest {
        stamp,
        program,
        count,
        spares,
        payload,
        replaces,
    })
}

/// Waits for the answer in `slot`'s publication; `None` if that process
/// ended without an answer (so nothing was started for it). `among`: the
/// process ids of every member that waits for it (the same at each), all
/// or part of the members of `parent` (the communicator that spawns or is
/// repaired).
fn await_publication(
    rt: &Runtime,
    slot: usize,
    stamp: u64,
    among: &[u32],
    parent: &Comm,
) -> Option<std::result::Result<Vec<u32>, u32>> {
    rt.b.await_processes(slot, stamp, among, &parent.inner.st)
}

/// The error of a collective creation (spawn, merge) that needs every
/// member, if one did not contribute: `ProcFailed` naming those that
/// failed, or `InvalidArgument` naming those that finalized.
fn non_contributors(got: &[Record], what: &str) -> Option<Error> {
    let which = |want: Record| -> Vec<Rank> {
        got.iter()
            .enumerate()
            .filter(|(_, g)| **g == want)
            .map(|(r, _)| Rank(r as i32))
            .collect()
    };
    let dead = which(Record::Failed);
    if !dead.is_empty() {
        return Some(Error::ProcFailed { ranks: dead });
    }
    let done = which(Record::Finalized);
    (!done.is_empty()).then(|| {
        Error::InvalidArgument(format!(
            "{what} needs every member, and rank(s) {} already finalized",
            crate::RankList(&done)
        ))
    })
}

fn spawn_error(status: u32) -> Error {
    Error::SpawnFailed(match pertinax_wire::spawn::SpawnStatus::from_code(status) {
        pertinax_wire::spawn::SpawnStatus::NoRoom => {
            "no free process slot or spare (see `pertinax run --max-spawn` and `--spares`)".into()
        }
        _ => format!("the launcher could not start the program (status {status})"),
    })
}

impl Comm {
    /// Starts `count` processes of `program args...` and returns an
    /// intercommunicator whose remote group they are (collective over
    /// this intracommunicator; `root` makes the request). The new
    /// processes find it as [`crate::Universe::parent`]; their world holds
    /// only them. Failures of the new processes never harm this job's
    /// processes (they are reported on the intercommunicator like any
    /// failure).
    ///
    /// # Errors
    /// `ProcFailed` if a member (or the root) failed before the processes
    /// could be started (the same at every member); `SpawnFailed` when the
    /// launcher has no room or cannot run the program; `RecoveryMismatch`
    /// at every member if a member made another recovery call in this
    /// one's place; `InvalidArgument` (also when a member finalized),
    /// `InvalidRank`, `Revoked`.
    pub fn spawn(&self, program: &str, args: &[&str], count: usize, root: Rank) -> Result<Comm> {
        self.coll_live()?;
        let root = self.check_rank(root)? as usize;
        let max = self.inner.rt.b.spawn_max();
        if count == 0 || count > max {
            return Err(Error::InvalidArgument(format!(
                "cannot spawn {count} processes (1..={max})"
            )));
        }
        let rt = self.inner.rt.clone();
        let entry = rt.b.reserve()?;
        let got = self.agreement_for(
            RecoveryCall::Spawn,
            [0, rt.next_ctx(), entry as u32, 0],
            entry,
        )?;
        let fail = |err: Error| {
            rt.b.unreserve(entry);
            Err(err)
        };
        if let Some(err) = non_contributors(&got, "spawn") {
            return fail(err);
        }
        let got = words(&got);
        let ctx = got.iter().flatten().map(|w| w[1]).max().unwrap_or(0);
        rt.use_ctx(ctx);
        let entries: Vec<u16> = got.iter().flatten().map(|w| w[2] as u16).collect();
        let st = rt.b.request_stamp(ctx, 1);
        if self.inner.rank as usize == root {
            let a = Assignment::Spawned {
                ctx,
                parents: self.inner.peers.to_vec(),
                entries: entries.clone(),
            };
            if let Err(err) = request(&rt, st, Some((program, args)), count, false, &a) {
                // The others are told through the publication; this rank
                // cannot write it, so it stops the job's wait by failing.
                return fail(err);
            }
        }
        let slots = match await_publication(
            &rt,
            self.inner.peers[root] as usize,
            st,
            &self.inner.peers,
            self,
        ) {
            Some(Ok(s)) => s,
            Some(Err(status)) => return fail(spawn_error(status)),
            None => {
                return fail(Error::ProcFailed {
                    ranks: vec![Rank(root as i32)],
                })
            }
        };
        let n = slots.len();
        Ok(Comm::from_parts(
            rt.clone(),
            ctx,
            self.inner.rank,
            self.inner.peers.clone(),
            &entries,
            Some((slots.into(), vec![TOKEN_PARENT; n])),
        ))
    }

    /// Merges an intercommunicator into an intracommunicator (collective
    /// over both groups): the group whose members pass `high == false`
    /// comes first; when both pass the same, the group of the parents of a
    /// spawn (the one holding the lower process slot) comes first.
    ///
    /// # Errors
    /// `InvalidArgument` on an intracommunicator or when a member
    /// finalized; `ProcFailed` if a member failed (the same at every
    /// member); `RecoveryMismatch` at every member if a member made
    /// another recovery call in this one's place; `Revoked`, `CommFreed`,
    /// `Finalized`.
    pub fn merge(&self, high: bool) -> Result<Comm> {
        self.live()?;
        let Some(remote) = self.inner.remote.clone() else {
            return Err(Error::InvalidArgument(
                "merge needs an intercommunicator".into(),
            ));
        };
        let rt = self.inner.rt.clone();
        let entry = rt.b.reserve()?;
        let got = self.agreement_for(
            RecoveryCall::Merge,
            [high as u32, rt.next_ctx(), entry as u32, 0],
            entry,
        )?;
        if let Some(err) = non_contributors(&got, "merge") {
            rt.b.unreserve(entry);
            return Err(err);
        }
        let w: Vec<[u32; 4]> = words(&got).into_iter().flatten().collect();
        let nl = self.size();
        let (lh, rh) = (w[0][0], w[nl][0]);
        let local_min = self.inner.peers.iter().min().copied().unwrap_or(0);
        let remote_min = remote.iter().min().copied().unwrap_or(0);
        let local_first = if lh != rh {
            lh == 0
        } else {
            local_min < remote_min
        };
        let ctx = w.iter().map(|x| x[1]).max().unwrap_or(0);
        let (mut peers, mut entries) = (Vec::new(), Vec::new());
        let local: Vec<(u32, u16)> = (0..nl)
            .map(|i| (self.inner.peers[i], w[i][2] as u16))
            .collect();
        let rem: Vec<(u32, u16)> = (0..remote.len())
            .map(|i| (remote[i], w[nl + i][2] as u16))
            .collect();
        let order = if local_first {
            [&local, &rem]
        } else {
            [&rem, &local]
        };
        for g in order {
            for &(s, e) in g.iter() {
                peers.push(s);
                entries.push(e);
            }
        }
        let me = self.inner.peers[self.inner.rank as usize];
        let rank = peers.iter().position(|&s| s == me).unwrap_or(0) as u32;
        Ok(self.derived(ctx, 0, rank, peers.into(), &entries))
    }

    /// Non-shrinking recovery (collective over the survivors): a new
    /// communicator with the same size and rank numbers, where the ranks
    /// that failed are taken over by idle spares (`pertinax run --spares`)
    /// or, when none is left, by new processes of the job's program. The
    /// survivors keep their ranks; the new processes start the program
    /// from the beginning and find themselves in
    /// [`crate::Universe::role`] as [`Role::Replacement`], with the
    /// restored communicator as their world. Works on a revoked
    /// communicator and tolerates failures while it runs (a survivor that
    /// dies in it is replaced too, or reported later by the new
    /// communicator).
    ///
    /// Only *failed* ranks are replaced: a rank that finalized (ended
    /// normally) is not failed ([`get_failed`](crate::Communicator::get_failed) does not list it)
    /// and keeps its place in the restored communicator, where operations
    /// that need it are erroneous (see the crate's failure model).
    ///
    /// The same as [`Comm::replace_failed_with`] with the value 0.
    ///
    /// # Errors
    /// As [`Comm::replace_failed_with`].
    pub fn replace_failed(&self) -> Result<Replaced> {
        self.replace_failed_with(0)
    }

    /// [`Comm::replace_failed`] that also hands a value from every
    /// survivor to the replacements, in the same agreement (no extra
    /// communication step, the way [`Comm::shrink_gather`] gathers while
    /// it shrinks). [`Replaced::values`] holds, for each rank, the value
    /// that member passed, `None` for the members that did not contribute;
    /// [`Replaced::replaced`] lists the ranks replaced. A replacement finds
    /// the same two lists in its [`Role::Replacement`], so it learns at
    /// start-up which ranks were replaced with it and what the survivors
    /// chose (for instance the iteration of the checkpoint to restart
    /// from) without a further exchange.
    ///
    /// # Errors
    /// `SpawnFailed` when no spare or slot is left (the same at every
    /// survivor); `RecoveryMismatch` (at every member) if another member
    /// made another recovery call in this one's place; `InvalidArgument`
    /// on an intercommunicator; `CommFreed`, `Finalized`.
    ///
    /// # Example
    /// ```
    /// let u = pertinax::init()?;
    /// // Nobody failed: nothing is replaced, the values are gathered.
    /// let r = u.world().replace_failed_with(41)?;
    /// assert!(r.replaced.is_empty());
    /// assert_eq!(r.values, [Some(41)]);
    /// # Ok::<(), pertinax::Error>(())
    /// ```
    pub fn replace_failed_with(&self, value: u64) -> Result<Replaced> {
        self.live_ft()?;
        if self.is_inter() {
            return Err(Error::InvalidArgument(
                "replace_failed needs an intracommunicator".into(),
            ));
        }
        let rt = self.inner.rt.clone();
        let entry = rt.b.reserve()?;
        let recs = self.agreement_for(
            RecoveryCall::ReplaceFailed,
            [
                value as u32,
                rt.next_ctx(),
                entry as u32,
                (value >> 32) as u32,
            ],
            entry,
        )?;
        let mut got = words(&recs);
        let mut values: Vec<Option<u64>> = got
            .iter()
            .map(|c| c.map(|w| u64::from(w[0]) | (u64::from(w[3]) << 32)))
            .collect();
        let ctx = got.iter().flatten().map(|w| w[1]).max().unwrap_or(0);
        rt.use_ctx(ctx);
        let n = self.size();
        // The backend's uniform view of who is alive, if it has one (MPI:
        // `MPIX_Comm_shrink`): a contributor that died since the agreement
        // is replaced too (its value reads `None`), rather than waited for.
        let agreed: Vec<bool> = got.iter().map(Option::is_some).collect();
        let live = if self.inner.caps.own_communicators {
            rt.b.live_members(&self.inner.st, &agreed)
        } else {
            None
        };
        if let Some(live) = live {
            let live = live.inspect_err(|_| rt.b.unreserve(entry))?;
            for i in (0..n).filter(|i| !live.contains(i)) {
                values[i] = None;
                got[i] = None;
            }
        }
        let recs: Vec<Record> = recs
            .iter()
            .zip(&got)
            .map(|(&r, g)| {
                if g.is_none() && matches!(r, Record::Contributed { .. }) {
                    Record::Failed
                } else {
                    r
                }
            })
            .collect();
        let mut peers: Vec<u32> = self.inner.peers.to_vec();
        let mut entries: Vec<u16> = got
            .iter()
            .map(|g| g.map_or(TOKEN_WORLD, |w| w[2] as u16))
            .collect();
        // The failed are replaced; the finalized keep their places.
        let mut holes: Vec<u32> = (0..n as u32)
            .filter(|&r| recs[r as usize] == Record::Failed)
            .collect();
        let mut attempt = 1;
        while !holes.is_empty() {
            // The first contributor that is not a hole asks.
            let Some(asker) = (0..n).find(|&r| got[r].is_some() && !holes.contains(&(r as u32)))
            else {
                break;
            };
            let st = rt.b.request_stamp(ctx, attempt);
            let mut template = peers.clone();
            for &h in &holes {
                template[h as usize] = u32::MAX;
                entries[h as usize] = TOKEN_WORLD;
            }
            if asker == self.inner.rank as usize {
                let a = Assignment::Replace {
                    ctx,
                    peers: template,
                    entries: entries.clone(),
                    holes: holes.clone(),
                    values: values.clone(),
                };
                crate::fault_point("ft.replace.request");
                request(&rt, st, None, holes.len(), true, &a)?;
            }
            // Every contributor that is not a hole waits (and asks).
            let among: Vec<u32> = (0..n)
                .filter(|&r| got[r].is_some() && !holes.contains(&(r as u32)))
                .map(|r| peers[r])
                .collect();
            match await_publication(&rt, self.inner.peers[asker] as usize, st, &among, self) {
                Some(Ok(slots)) => {
                    for (&h, &s) in holes.iter().zip(&slots) {
                        peers[h as usize] = s;
                    }
                    break;
                }
                Some(Err(status)) => {
                    rt.b.unreserve(entry);
                    return Err(spawn_error(status));
                }
                None => {
                    holes.push(asker as u32);
                    holes.sort_unstable();
                    attempt += 1;
                }
            }
        }
        let replaced = holes.iter().map(|&h| Rank(h as i32)).collect();
        let comm = Comm::from_parts(
            rt.clone(),
            ctx,
            self.inner.rank,
            peers.into(),
            &entries,
            None,
        );
        Ok(Replaced {
            comm,
            replaced,
            values,
        })
    }
}

/// The world (and parent) of a process started by an assignment.
pub(crate) struct Joined {
    pub world: Comm,
    pub parent: Option<Comm>,
    pub role: Role,
}

/// Builds the communicators of a new process from its assignment.
pub(crate) fn join(rt: &Rc<Runtime>, slots: &[u32], index: usize, a: Assignment) -> Result<Joined> {
    match a {
        Assignment::Spawned {
            ctx,
            parents,
            entries,
        } => {
            let group: Rc<[u32]> = slots.into();
            let world = Comm::from_parts(
                rt.clone(),
                0,
                index as u32,
                group.clone(),
                &vec![TOKEN_WORLD; slots.len()],
                None,
            );
            let parent = Comm::from_parts(
                rt.clone(),
                ctx,
                index as u32,
                group,
                &vec![TOKEN_PARENT; slots.len()],
                Some((parents.into(), entries)),
            );
            Ok(Joined {
                world,
                parent: Some(parent),
                role: Role::Spawned,
            })
        }
        Assignment::Replace {
            ctx,
            mut peers,
            entries,
            holes,
            values,
        } => {
            let &rank = holes.get(index).ok_or_else(|| {
                Error::Bootstrap("assignment without a place for this process".into())
            })?;
            for (&h, &s) in holes.iter().zip(slots) {
                if let Some(p) = peers.get_mut(h as usize) {
                    *p = s;
                }
            }
            let world = Comm::from_parts(rt.clone(), ctx, rank, peers.into(), &entries, None);
            Ok(Joined {
                world,
                parent: None,
                role: Role::Replacement {
                    rank: Rank(rank as i32),
                    replaced: holes.iter().map(|&h| Rank(h as i32)).collect(),
                    values,
                },
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Assignment;
    use proptest::prelude::*;

    fn assignment() -> impl Strategy<Value = Assignment> {
        let v32 = || proptest::collection::vec(any::<u32>(), 0..16);
        let v16 = || proptest::collection::vec(any::<u16>(), 0..16);
        prop_oneof![
            (any::<u32>(), v32(), v16()).prop_map(|(ctx, parents, entries)| {
                Assignment::Spawned {
                    ctx,
                    parents,
                    entries,
                }
            }),
            (
                any::<u32>(),
                v32(),
                v16(),
                v32(),
                proptest::collection::vec(proptest::option::of(any::<u64>()), 0..16),
            )
                .prop_map(|(ctx, peers, entries, holes, values)| Assignment::Replace {
                    ctx,
                    peers,
                    entries,
                    holes,
                    values,
                }),
        ]
    }

    proptest! {
        /// The payload a new process decodes is the one its requester
        /// encoded (postcard, as in `request` and the backends' `join`).
        #[test]
        fn an_assignment_survives_its_encoding(a in assignment()) {
            let bytes = postcard::to_allocvec(&a).unwrap();
            let back: Assignment = postcard::from_bytes(&bytes).unwrap();
            prop_assert_eq!(format!("{back:?}"), format!("{a:?}"));
        }
    }
}
