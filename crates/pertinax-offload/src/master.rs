//! The master side: the opaque [`Boosters`] handle, offload, waits,
//! failure consensus and recovery.
//!
//! # Task states
//!
//! A task is *running* from its offload until its booster's completion
//! message arrives; then *waiting for clearance* (its output is held by
//! the master, not handed out); then *cleared* at the end of a wait that
//! covers it (its whole recover domain finished and no booster of the
//! group failed: for a collective allocation, the masters agree on that
//! with a fault-tolerant agreement), or *failed* with a typed error.
//!
//! # Detection
//!
//! Whenever a master waits in the library it has a receive posted for the
//! completion header of the group's boosters (the paper's pre-posted
//! requests, section 5.3): one any-source receive on the group's
//! intercommunicator, on a tag of the group's generation. A completion
//! ends it, and so does the failure of *any* booster of the group (an
//! any-source receive fails while a possible sender's failure is not
//! acknowledged), so a master notices the failure of any booster, whether
//! or not it offloaded anything to it. `poll` and the check before a
//! consensus look (`iprobe`) instead of waiting. The paper posts one
//! receive per booster and tests them all; with the core's scoped
//! requests that meant cancelling the others at the end of every round,
//! and on the MPI backend a cancelled receive that had matched lost its
//! message, so one any-source receive it is: the same detection, nothing
//! to cancel.
//!
//! # Recovery
//!
//! On a failure the masters (all of them for a collective allocation,
//! after they agreed) revoke the group's intercommunicator and retire it,
//! kept and never freed (see `RETIRED`; the surviving boosters see the
//! revocation and leave, taking their own boosters with them), take a
//! spare group or spawn a new one, and
//! re-offload, in their original order, every task that was running or
//! waiting for clearance: recoverable ones with their original input;
//! the others fail with [`Error::BoosterFailed`] and their input.
//!
//! Here the handle, allocation, offload and the end; [`Options`] and
//! [`Offload`] in `options`, the task handles and records in `task`, the
//! progress rounds, waits and recovery in `wait`.

mod options;
mod task;
mod wait;

use pertinax::{Communicator as _, CommunicatorExt as _};
use std::any::type_name;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::marker::PhantomData;
use std::sync::atomic::{AtomicUsize, Ordering};

use pertinax::{Comm, Rank};
use serde::Serialize;

use crate::error::Error;
use crate::parent::Parent;
use crate::wire::{self, TaskBody};

pub use options::{Domain, Offload, Options};
use task::{Rec, State};
pub use task::{Task, TaskState};

/// Counters of what recovery did, for tests and benchmarks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Booster groups replaced.
    pub recoveries: u32,
    /// Of those, replaced by a spare group.
    pub spares_used: u32,
    /// Task executions started again.
    pub reexecutions: u64,
}

/// An allocation of boosters: the opaque handle of the paper's
/// `deep_booster_alloc` (never the raw intercommunicator, which is
/// replaced on recovery).
#[derive(Debug)]
pub struct Boosters {
    masters: Comm,
    shared: bool,
    count: usize,
    program: String,
    args: Vec<String>,
    max_attempts: u32,
    /// The masters are boosters themselves (a nested allocation).
    nested: bool,
    group: Option<Comm>,
    spares: VecDeque<Comm>,
    tasks: BTreeMap<u64, Rec>,
    next_id: u64,
    domains: HashMap<String, Domain>,
    failed: bool,
    stats: Stats,
    /// `(task, attempt)` of replicas still running after their task was
    /// decided by the other one: their completions are consumed before
    /// the group is freed.
    straggling: HashSet<(u64, u64)>,
}

impl Boosters {
    /// Allocates `count` boosters (the master's own program, default
    /// options), collectively over `comm`: the world for boosters shared
    /// by every master (with failure consensus), or the self communicator
    /// for a private set. `comm` is any communicator that can be a parent
    /// ([`Parent`]: a plain [`Comm`], or what holds or points to one).
    ///
    /// Under `pertinax run`, the allocation and every replacement group
    /// take `count` of the job's `--max-spawn` slots (see the crate
    /// documentation, "Spawn slots").
    ///
    /// # Errors
    /// As [`Boosters::alloc_with`].
    pub fn alloc<P: Parent + ?Sized>(comm: &P, count: usize) -> Result<Boosters, Error> {
        Boosters::alloc_with(comm, count, Options::default())
    }

    /// Allocates `count` boosters with `opts`, collectively over `comm`
    /// (any [`Parent`]).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for `count == 0`; [`Error::Masters`] if
    /// the masters' duplicate of `comm` cannot be made;
    /// [`Error::NoSpawnRoom`] if the launcher has no slot left for them
    /// (it says which `--max-spawn` the job needs); [`Error::Spawn`] if
    /// the boosters cannot be started otherwise.
    pub fn alloc_with<P: Parent + ?Sized>(
        comm: &P,
        count: usize,
        opts: Options,
    ) -> Result<Boosters, Error> {
        let comm = comm.parent_comm();
        if count == 0 {
            return Err(Error::InvalidArgument("zero boosters".into()));
        }
        let (program, args) = match opts.program {
            Some(p) => p,
            None => {
                let exe = std::env::current_exe()
                    .map_err(|e| Error::Spawn(pertinax::Error::SpawnFailed(e.to_string())))?;
                (exe.to_string_lossy().into_owned(), crate::user_args())
            }
        };
        let masters = comm.dup().map_err(Error::Masters)?;
        let mut b = Boosters {
            shared: masters.size() > 1,
            masters,
            count,
            program,
            args,
            max_attempts: opts.max_attempts,
            nested: crate::booster::serving(),
            group: None,
            spares: VecDeque::new(),
            tasks: BTreeMap::new(),
            next_id: 0,
            domains: HashMap::new(),
            failed: false,
            stats: Stats::default(),
            straggling: HashSet::new(),
        };
        b.group = Some(b.spawn_group()?);
        for _ in 0..opts.spares {
            let g = b.spawn_group()?;
            b.spares.push_back(g);
        }
        Ok(b)
    }

    fn spawn_group(&self) -> Result<Comm, Error> {
        let mut args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        args.push(wire::BOOSTER_MARKER);
        match self
            .masters
            .spawn(&self.program, &args, self.count, Rank(0))
        {
            Ok(g) => {
                STARTED.fetch_add(self.count, Ordering::Relaxed);
                Ok(g)
            }
            Err(e) if no_room(&e) => {
                let started = STARTED.load(Ordering::Relaxed);
                Err(Error::NoSpawnRoom {
                    needed: self.count,
                    started,
                    max_spawn: started + self.count,
                    source: e,
                })
            }
            Err(e) => Err(Error::Spawn(e)),
        }
    }

    /// The number of boosters.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Always false: an allocation has at least one booster.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Whether the allocation is shared by several masters (then waits and
    /// [`Boosters::free`] are collective over them, with failure
    /// consensus).
    pub fn is_shared(&self) -> bool {
        self.shared
    }

    /// What recovery did so far.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// The explicit recover domain called `name` (the same name gives the
    /// same domain).
    pub fn domain(&mut self, name: &str) -> Domain {
        let next = Domain(self.domains.len() as u64 + 1);
        *self.domains.entry(name.to_string()).or_insert(next)
    }

    /// Offloads a task with `input`; returns at once with its handle.
    ///
    /// # Errors
    /// [`Error::InvalidBooster`], [`Error::Serialization`],
    /// [`Error::Freed`]. A booster failure is not an error here: the task
    /// is recovered (or fails) at the next wait.
    pub fn offload<I: Serialize, O>(
        &mut self,
        spec: Offload,
        input: &I,
    ) -> Result<Task<I, O>, Error> {
        for b in std::iter::once(spec.onto).chain(spec.replica) {
            if b >= self.count {
                return Err(Error::InvalidBooster {
                    index: b,
                    count: self.count,
                });
            }
        }
        if spec.replica == Some(spec.onto) {
            return Err(Error::InvalidArgument(
                "a replica on the task's own booster".into(),
            ));
        }
        let input = wire::encode(input)?;
        let id = self.next_id;
        self.next_id += 1;
        let rec = Rec {
            name: spec.name,
            types: (type_name::<I>(), type_name::<O>()),
            input,
            onto: spec.onto,
            recover: spec.recover,
            domain: spec.domain,
            replica: spec.replica,
            attempts: 1,
            state: State::Running,
            out: 1 + u8::from(spec.replica.is_some()),
            first_error: None,
        };
        if !self.failed && self.send(id, &rec).is_err() {
            self.failed = true;
        }
        self.tasks.insert(id, rec);
        Ok(Task {
            id,
            domain: spec.domain,
            _types: PhantomData,
        })
    }

    fn send(&self, id: u64, rec: &Rec) -> Result<(), pertinax::Error> {
        let g = self.group.as_ref().ok_or(pertinax::Error::CommFreed)?;
        let hdr = [
            wire::KIND_TASK,
            id,
            u64::from(rec.attempts - 1),
            self.stats.recoveries.into(),
        ];
        for b in std::iter::once(rec.onto).chain(rec.replica) {
            g.send(&hdr, b, wire::TAG_TASK)?;
            let body = TaskBody {
                name: rec.name.clone(),
                input: rec.input.clone(),
                onto: b as u32,
                input_type: rec.types.0.to_string(),
                output_type: rec.types.1.to_string(),
                nested: self.nested,
            };
            g.send_value(&body, b, wire::TAG_TASK_BODY)?;
        }
        Ok(())
    }

    /// Waits for every task ([`Boosters::taskwait`], recovering if
    /// needed), then shuts the boosters (and the spares) down. Collective
    /// over the masters for a shared allocation. A booster that fails
    /// during the shutdown harms nothing: every task is cleared by then.
    ///
    /// # Errors
    /// As [`Boosters::taskwait`].
    pub fn free(mut self) -> Result<(), Error> {
        self.taskwait()?;
        // Replicas still running: their completions are taken before the
        // group goes (a message in flight on a freed communicator can land
        // on a later one, see `RETIRED`).
        while !self.straggling.is_empty() && !self.failed {
            self.progress(true);
        }
        if self.shared {
            // Every master is done with the group before it goes.
            self.masters.barrier().map_err(Error::Masters)?;
        }
        self.shutdown();
        Ok(())
    }

    /// The current group and the spare groups, taken out.
    fn take_groups(&mut self) -> Vec<Comm> {
        self.group
            .take()
            .into_iter()
            .chain(self.spares.drain(..))
            .collect()
    }

    fn shutdown(&mut self) {
        let root = self.masters.rank().index() == 0;
        for g in self.take_groups() {
            if root {
                for j in 0..g.remote_size() {
                    let _ = g.send(&[wire::KIND_SHUTDOWN, 0, 0, 0], j, wire::TAG_TASK);
                }
            }
            if self.failed {
                // Survivors may still be sending: keep it (see `RETIRED`).
                let _ = g.revoke();
                retire(g);
            } else {
                let _ = g.free();
            }
        }
        let _ = self.masters.free();
    }
}

/// Boosters this process started, over all its allocations (a slot of
/// the launcher's is never used again): what [`Error::NoSpawnRoom`]
/// counts.
static STARTED: AtomicUsize = AtomicUsize::new(0);

/// Whether a spawn failed for want of a launcher slot (the core's
/// `SpawnFailed` for the launcher's "no room" answer, whose message names
/// `--max-spawn`).
fn no_room(e: &pertinax::Error) -> bool {
    matches!(e, pertinax::Error::SpawnFailed(m) if m.contains("--max-spawn"))
}

thread_local! {
    /// Intercommunicators of groups given up after a failure: revoked, and
    /// kept (never freed) for the life of the process. A group's survivors
    /// may still have completions in flight when it is given up; on the
    /// MPI backend, freeing its communicator let such stale messages land
    /// on the replacement group's new communicator (Open MPI 5.0.11 reuses
    /// the context id) and a fresh completion from the booster of the same
    /// rank was then never matched (measured: 4 hangs in 6 runs of
    /// `alloc=self boosters=2 tasks=3 faults=0.1:kill:during` with the
    /// free, 0 in 6 without). One communicator per recovery is the cost.
    static RETIRED: std::cell::RefCell<Vec<Comm>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn retire(c: Comm) {
    RETIRED.with(|r| r.borrow_mut().push(c));
}

impl Drop for Boosters {
    /// Without [`Boosters::free`]: revokes the groups, so that the boosters
    /// leave instead of waiting for ever (they exit as lost).
    fn drop(&mut self) {
        for g in self.take_groups() {
            let _ = g.revoke();
            retire(g);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_launchers_no_room_answer_is_told_from_other_spawn_failures() {
        // The core's text for the launcher's "no room" status.
        let room = pertinax::Error::SpawnFailed(
            "no free process slot or spare (see `pertinax run --max-spawn` and `--spares`)".into(),
        );
        assert!(no_room(&room));
        let program = pertinax::Error::SpawnFailed(
            "the launcher could not start the program (status 2)".into(),
        );
        assert!(!no_room(&program));
        assert!(!no_room(&pertinax::Error::Revoked));
        let e = Error::NoSpawnRoom {
            needed: 2,
            started: 2,
            max_spawn: 4,
            source: room,
        };
        assert!(
            e.to_string()
                .contains("start the job with `pertinax run --max-spawn 4` or more"),
            "{e}"
        );
    }
}
