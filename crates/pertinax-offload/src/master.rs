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

use std::any::type_name;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::marker::PhantomData;
use std::sync::atomic::{AtomicUsize, Ordering};

use pertinax::{Comm, Rank, ANY_SOURCE};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::{Error, TaskError};
use crate::parent::Parent;
use crate::wire::{self, DoneHeader, TaskBody};

/// Allocation options.
#[derive(Debug, Clone)]
pub struct Options {
    program: Option<(String, Vec<String>)>,
    spares: usize,
    max_attempts: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            program: None,
            spares: 0,
            max_attempts: 8,
        }
    }
}

impl Options {
    /// The defaults: the master's own program as booster, no spares, at
    /// most 8 executions of a recoverable task.
    pub fn new() -> Options {
        Options::default()
    }
    /// Run `program` with `args` as boosters instead of the master's own
    /// program and arguments (the marker [`crate::BOOSTER_MARKER`] is
    /// added after `args`).
    pub fn program(mut self, program: &str, args: &[&str]) -> Options {
        self.program = Some((
            program.to_string(),
            args.iter().map(|a| a.to_string()).collect(),
        ));
        self
    }
    /// Spawn `groups` spare groups at allocation, each as large as the
    /// allocation: a recovery takes one instead of spawning (beyond the
    /// paper).
    pub fn spares(mut self, groups: usize) -> Options {
        self.spares = groups;
        self
    }
    /// The retry limit: a recoverable task is started at most `n` times
    /// (`n` >= 1), then fails with [`Error::RetriesExceeded`].
    pub fn max_attempts(mut self, n: u32) -> Options {
        self.max_attempts = n.max(1);
        self
    }
}

/// A recover domain: tasks offloaded in one domain are cleared together
/// and restarted together. Tasks offloaded without a domain belong to the
/// *implicit* domain, which ends at every [`Boosters::taskwait`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Domain(u64);

/// How to offload one task: its name, the booster, recovery, domain.
#[derive(Debug, Clone)]
pub struct Offload {
    name: String,
    onto: usize,
    recover: bool,
    domain: Option<Domain>,
    replica: Option<usize>,
}

impl Offload {
    /// Task `name` onto booster `onto`, without recovery.
    pub fn new(name: &str, onto: usize) -> Offload {
        Offload {
            name: name.to_string(),
            onto,
            recover: false,
            domain: None,
            replica: None,
        }
    }
    /// The `recover` clause: re-execute the task automatically if its
    /// booster group fails before it is cleared.
    pub fn recover(mut self) -> Offload {
        self.recover = true;
        self
    }
    /// Also run the task on booster `other` (beyond the paper, as HPX's
    /// `async_replicate`): the first successful result wins, and the task
    /// fails only if both replicas report an error. For independent tasks
    /// (a replica does not take part in its domain's communication). A
    /// booster failure still replaces the whole group and re-runs both.
    pub fn replicate(mut self, other: usize) -> Offload {
        self.replica = Some(other);
        self
    }
    /// Offload in an explicit recover domain (instead of the implicit one).
    pub fn domain(mut self, d: Domain) -> Offload {
        self.domain = Some(d);
        self
    }
}

/// Where a task stands (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskState {
    /// Offloaded, not finished.
    Running,
    /// Finished; its output is held until its domain is cleared.
    WaitingForClearance,
    /// Cleared: [`Boosters::take`] returns its output.
    Cleared,
    /// Failed: [`Boosters::take`] returns the error and the input.
    Failed,
    /// Running or finished, but this master saw a booster of the group
    /// fail: the next wait (which recovers) offloads the task again from
    /// its input, or fails it (without `recover`, or at the retry limit).
    /// [`Boosters::poll`] cannot recover (for a shared allocation that
    /// takes the masters' agreement, at a wait): a polling loop stops on
    /// any state but [`TaskState::Running`], then waits.
    AwaitingRecovery,
}

/// A handle to an offloaded task with input `I` and output `O`.
#[derive(Debug)]
#[must_use = "a task's output or error is only returned by take or wait"]
pub struct Task<I, O> {
    id: u64,
    domain: Option<Domain>,
    _types: PhantomData<fn(I) -> O>,
}

impl<I, O> Task<I, O> {
    /// The task's id (unique for this master and allocation).
    pub fn id(&self) -> u64 {
        self.id
    }
}

#[derive(Debug)]
enum State {
    Running,
    Finished(Vec<u8>),
    Cleared(Vec<u8>),
    Failed(Error),
}

#[derive(Debug)]
struct Rec {
    name: String,
    /// The offload's types (`std::any::type_name` of `I` and `O`).
    types: (&'static str, &'static str),
    input: Vec<u8>,
    onto: usize,
    recover: bool,
    domain: Option<Domain>,
    replica: Option<usize>,
    attempts: u32,
    state: State,
    /// Replicas of the current attempt not heard from yet.
    out: u8,
    /// The first replica's error, while the other may still succeed.
    first_error: Option<Error>,
}

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

    /// One progress round: a receive for the completion header of any
    /// booster of the group, posted before it arrives; waits for it (or,
    /// with `block == false`, only looks whether one is there). A failure
    /// of any booster fails it (an any-source receive cannot complete
    /// while a possible sender's failure is unacknowledged), which sets
    /// `failed`.
    fn progress(&mut self, block: bool) {
        if self.failed {
            return;
        }
        let Some(g) = self.group.clone() else {
            self.failed = true;
            return;
        };
        let tag = wire::done_tag(self.stats.recoveries.into());
        let mut hdr: DoneHeader = [0; 4];
        let got = if block {
            g.recv(&mut hdr, ANY_SOURCE, tag).map(Some)
        } else {
            match g.iprobe(ANY_SOURCE, tag) {
                Ok(Some(st)) => g.recv(&mut hdr, st.source, tag).map(Some),
                Ok(None) => Ok(None),
                Err(e) => Err(e),
            }
        };
        match got {
            Ok(Some(st)) => self.complete(&g, st.source.index(), hdr, tag + 1),
            Ok(None) => {}
            Err(_) => self.failed = true,
        }
    }

    /// Reads the body that follows booster `j`'s completion header.
    fn complete(&mut self, g: &Comm, j: usize, hdr: DoneHeader, body_tag: i32) {
        let [id, attempt, status, _] = hdr;
        let body = match g.recv_vec::<u8>(j, body_tag) {
            Ok((b, _)) => b,
            Err(_) => {
                self.failed = true;
                return;
            }
        };
        // The other replica of a task already decided.
        if self.straggling.remove(&(id, attempt)) {
            return;
        }
        let Some(rec) = self.tasks.get_mut(&id) else {
            return;
        };
        if !matches!(rec.state, State::Running) || u64::from(rec.attempts - 1) != attempt {
            return;
        }
        rec.out = rec.out.saturating_sub(1);
        let error = match status {
            wire::DONE_OK => None,
            wire::DONE_UNKNOWN => Some(Error::UnknownTask(rec.name.clone())),
            wire::DONE_TYPE_MISMATCH => Some(Error::TypeMismatch {
                name: rec.name.clone(),
                expected: match wire::decode::<(String, String)>(&body) {
                    Ok((i, o)) => format!("{i} -> {o}"),
                    Err(e) => format!("(unreadable: {e})"),
                },
                given: format!("{} -> {}", rec.types.0, rec.types.1),
            }),
            _ => Some(Error::Task {
                name: rec.name.clone(),
                message: String::from_utf8_lossy(&body).into_owned(),
            }),
        };
        rec.state = match error {
            None => State::Finished(body),
            // The other replica may still succeed.
            Some(e) if rec.out > 0 => {
                rec.first_error.get_or_insert(e);
                return;
            }
            Some(e) => State::Failed(rec.first_error.take().unwrap_or(e)),
        };
        if rec.out > 0 {
            self.straggling.insert((id, attempt));
        }
    }

    /// Waits until every task for which `covered` holds is cleared or
    /// failed: local completion, then (shared) the masters' agreement that
    /// no booster failed, else recovery and again.
    fn wait_set(&mut self, covered: impl Fn(&Rec) -> bool) -> Result<(), Error> {
        if self.group.is_none() {
            return Err(Error::Freed);
        }
        loop {
            loop {
                if self.failed {
                    break;
                }
                let pending = self
                    .tasks
                    .values()
                    .any(|t| covered(t) && matches!(t.state, State::Running));
                if !pending {
                    // Pick up a failure already known (of an idle booster
                    // too), so the consensus below hears of it.
                    self.progress(false);
                    break;
                }
                self.progress(true);
            }
            let ok = !self.failed;
            let all_ok = if self.shared {
                self.masters.agree(u32::from(ok)).map_err(Error::Masters)? == 1
            } else {
                ok
            };
            if all_ok {
                for t in self.tasks.values_mut().filter(|t| covered(t)) {
                    if let State::Finished(out) = &mut t.state {
                        t.state = State::Cleared(std::mem::take(out));
                    }
                }
                return Ok(());
            }
            self.recover()?;
        }
    }

    /// Replaces the group (a spare or a new spawn) and re-offloads every
    /// task that was running or waiting for clearance.
    fn recover(&mut self) -> Result<(), Error> {
        if let Some(old) = self.group.take() {
            let _ = old.revoke();
            retire(old);
        }
        self.failed = false;
        self.straggling.clear();
        self.stats.recoveries += 1;
        let g = match self.spares.pop_front() {
            Some(g) => {
                self.stats.spares_used += 1;
                g
            }
            None => self.spawn_group()?,
        };
        self.group = Some(g);
        let ids: Vec<u64> = self
            .tasks
            .iter()
            .filter(|(_, t)| matches!(t.state, State::Running | State::Finished(_)))
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            let max = self.max_attempts;
            let Some(t) = self.tasks.get_mut(&id) else {
                continue;
            };
            if !t.recover {
                t.state = State::Failed(Error::BoosterFailed { booster: t.onto });
                continue;
            }
            if t.attempts >= max {
                t.state = State::Failed(Error::RetriesExceeded {
                    attempts: t.attempts,
                });
                continue;
            }
            t.attempts += 1;
            t.state = State::Running;
            t.out = 1 + u8::from(t.replica.is_some());
            t.first_error = None;
            self.stats.reexecutions += 1;
            if !self.failed {
                if let Some(t) = self.tasks.get(&id) {
                    let r = self.send(id, t);
                    if r.is_err() {
                        self.failed = true;
                    }
                }
            }
        }
        Ok(())
    }

    /// Waits for every outstanding task (the end of the implicit recover
    /// domain, and of every explicit one): afterwards each is cleared or
    /// failed. Collective over the masters for a shared allocation.
    ///
    /// # Errors
    /// [`Error::NoSpawnRoom`] or [`Error::Spawn`] if a replacement group
    /// cannot be started, [`Error::Masters`] if the masters' agreement
    /// fails, [`Error::Freed`].
    pub fn taskwait(&mut self) -> Result<(), Error> {
        self.wait_set(|_| true)
    }

    /// Waits for the tasks of domain `d` only (collective over the masters
    /// for a shared allocation). Tasks of other domains go on running or
    /// waiting for clearance.
    ///
    /// # Errors
    /// As [`Boosters::taskwait`].
    pub fn wait_domain(&mut self, d: Domain) -> Result<(), Error> {
        self.wait_set(|t| t.domain == Some(d))
    }

    /// Advances the tasks without blocking and says where `task` stands:
    /// a loop polls while it is [`TaskState::Running`], then waits for it
    /// ([`Boosters::wait`], or its domain's wait), which clears it or
    /// recovers. Never collective, never blocks.
    ///
    /// ```no_run
    /// # use pertinax_offload::{Boosters, Offload, TaskState};
    /// # fn f(b: &mut Boosters) -> Result<(), pertinax_offload::Error> {
    /// let t = b.offload::<u64, u64>(Offload::new("square", 0).recover(), &7)?;
    /// while b.poll(&t) == TaskState::Running {
    ///     // ... other work ...
    /// }
    /// // WaitingForClearance, or AwaitingRecovery after a booster failure
    /// assert_eq!(b.wait(t).map_err(|e| e.error)?, 49);
    /// # Ok(()) }
    /// ```
    pub fn poll<I, O>(&mut self, task: &Task<I, O>) -> TaskState {
        self.progress(false);
        match self.tasks.get(&task.id).map(|t| &t.state) {
            Some(State::Running | State::Finished(_)) if self.failed => TaskState::AwaitingRecovery,
            Some(State::Running) | None => TaskState::Running,
            Some(State::Finished(_)) => TaskState::WaitingForClearance,
            Some(State::Cleared(_)) => TaskState::Cleared,
            Some(State::Failed(_)) => TaskState::Failed,
        }
    }

    /// Waits for `task`'s domain (for a task of the implicit domain, a
    /// [`Boosters::taskwait`]), then takes its result. Collective over the
    /// masters for a shared allocation.
    ///
    /// # Errors
    /// As [`Boosters::take`], or the wait's error with the input.
    pub fn wait<I: DeserializeOwned, O: DeserializeOwned>(
        &mut self,
        task: Task<I, O>,
    ) -> Result<O, TaskError<I>> {
        let r = match task.domain {
            Some(d) => self.wait_domain(d),
            None => self.taskwait(),
        };
        match r {
            Ok(()) => self.take(task),
            Err(error) => {
                let input = self.tasks.remove(&task.id).map(|t| t.input);
                Err(TaskError {
                    error,
                    input: input.and_then(|b| wire::decode(&b).ok()),
                })
            }
        }
    }

    /// The output of a cleared task, or its error and input.
    ///
    /// # Errors
    /// The task's [`Error`] (with the input handed back), or
    /// [`Error::NotCleared`] (the handle is consumed; the task stays
    /// recorded until its wait, and its output is dropped then).
    pub fn take<I: DeserializeOwned, O: DeserializeOwned>(
        &mut self,
        task: Task<I, O>,
    ) -> Result<O, TaskError<I>> {
        let cleared = matches!(
            self.tasks.get(&task.id).map(|t| &t.state),
            Some(State::Cleared(_) | State::Failed(_))
        );
        let rec = match (cleared, self.tasks.get(&task.id)) {
            (true, _) => self.tasks.remove(&task.id),
            (false, Some(t)) => {
                return Err(TaskError {
                    error: Error::NotCleared,
                    input: wire::decode(&t.input).ok(),
                })
            }
            (false, None) => None,
        };
        let Some(rec) = rec else {
            return Err(TaskError {
                error: Error::NotCleared,
                input: None,
            });
        };
        match rec.state {
            State::Cleared(out) => wire::decode(&out).map_err(|error| TaskError {
                error,
                input: wire::decode(&rec.input).ok(),
            }),
            State::Failed(error) => Err(TaskError {
                error,
                input: wire::decode(&rec.input).ok(),
            }),
            State::Running | State::Finished(_) => Err(TaskError {
                error: Error::NotCleared,
                input: wire::decode(&rec.input).ok(),
            }),
        }
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
