//! The booster side: tasks registered by name, and the serve loop.
//!
//! A booster is a process spawned by [`crate::Boosters::alloc`]: by
//! default the master's own program, started again with
//! [`crate::BOOSTER_MARKER`] after its arguments. Its `main` builds a
//! [`Registry`] and hands control to [`serve`] (or [`booster_main`]) when
//! [`is_booster`] says so.
//!
//! The serve loop waits, with one call, for a task from any master and for
//! the failure of any sibling (an any-source receive on a private
//! duplicate of the boosters' world, on which nothing is ever sent: it
//! completes only with a failure). A failed sibling, a failed or revoked
//! parent, a task body that panics or returns [`TaskFailure::Fault`]: the
//! booster leaves ([`Ended::GroupLost`]), so a failure takes the whole
//! group down, and with it the boosters this one allocated (they see their
//! parent fail). [`booster_main`] ends such a booster with code 0 and
//! without finalizing: the others see it fail, and the launcher does not
//! count a departure that only follows another failure as the job's (a
//! booster whose own task panicked exits with 101).
//!
//! Before a task runs, its input and output types (as the master sent
//! them, [`std::any::type_name`]) are checked against the registration:
//! a mismatch is reported to the master ([`Error::TypeMismatch`]) and
//! nothing runs.
//!
//! Fault points (`pertinax::fault_point`, for a plan without a victim,
//! which reaches spawned processes: `PERTINAX_FAULTS=NAME@K`): `task` at
//! the start of every task execution; then, for boosters of a top-level
//! allocation (whose masters are no boosters), `task.G.B`, where `G` is
//! the group's generation in its allocation (0 for the first group, 1 for
//! the one that replaced it, ...) and `B` the booster's index, so that a
//! plan names one booster of the first group, and never its replacement;
//! `shutdown` and `shutdown.B` (`B`: the booster's index) when the booster
//! receives the masters' shutdown in [`crate::Boosters::free`], where
//! every task of its group is already cleared, so a kill there loses
//! nothing and `free` does not wait for the boosters to leave.

use pertinax::CommunicatorExt as _;
use std::any::type_name;
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};

use pertinax::{Comm, Rank, Universe, ANY_SOURCE};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::{Error, TaskFailure};
use crate::round::cancel_rest;
use crate::wire::{self, TaskBody, TaskHeader};

/// What a task body sees besides its input.
#[derive(Debug)]
pub struct TaskContext<'a> {
    universe: &'a Universe,
    world: &'a Comm,
    onto: usize,
    master: Rank,
    attempt: u32,
    task: u64,
}

impl<'a> TaskContext<'a> {
    /// The booster's universe (for nested allocations: allocate over
    /// `universe().self_comm()` for a private set of workers).
    pub fn universe(&self) -> &'a Universe {
        self.universe
    }
    /// The boosters' communicator: this booster and its siblings, ranked
    /// by booster index. Tasks of one recover domain talk over it.
    pub fn comm(&self) -> &'a Comm {
        self.world
    }
    /// The booster index the task was offloaded onto.
    pub fn booster(&self) -> usize {
        self.onto
    }
    /// The rank of the master that offloaded the task, in the masters'
    /// communicator (the one the boosters were allocated over: for a
    /// private allocation over the self communicator, always 0).
    pub fn master(&self) -> Rank {
        self.master
    }
    /// 0 for the first execution, then 1, 2, ... for re-executions after
    /// failures.
    pub fn attempt(&self) -> u32 {
        self.attempt
    }
    /// The task's id at its master (unique per master and allocation).
    pub fn task_id(&self) -> u64 {
        self.task
    }
}

type Body = dyn Fn(&TaskContext<'_>, &[u8]) -> Result<Vec<u8>, TaskFailure>;

/// A registered task: its body and its types.
struct Entry {
    body: Box<Body>,
    input: &'static str,
    output: &'static str,
}

/// The tasks a booster can run, by name.
#[derive(Default)]
pub struct Registry {
    tasks: HashMap<String, Entry>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut names: Vec<&String> = self.tasks.keys().collect();
        names.sort();
        f.debug_struct("Registry").field("tasks", &names).finish()
    }
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Registry {
        Registry::default()
    }

    /// Registers `body` as task `name`, with a typed input and output
    /// (encoded with postcard, as [`pertinax::CommunicatorExt::send_value`] does). A
    /// second registration of a name replaces the first.
    ///
    /// The types are part of the registration: a task offloaded under
    /// this name with another input or output type
    /// ([`crate::Boosters::offload`]'s `I` and `O`, compared by
    /// [`std::any::type_name`]) does not run and fails at its master with
    /// [`Error::TypeMismatch`]. (A booster program built by another
    /// compiler than its master's could name a type differently: build
    /// both with one toolchain.)
    pub fn register<I, O, F>(&mut self, name: &str, body: F) -> &mut Registry
    where
        I: DeserializeOwned,
        O: Serialize,
        F: Fn(&TaskContext<'_>, I) -> Result<O, TaskFailure> + 'static,
    {
        let erased = move |ctx: &TaskContext<'_>, bytes: &[u8]| {
            let input: I = wire::decode(bytes).map_err(TaskFailure::from)?;
            let out = body(ctx, input)?;
            wire::encode(&out).map_err(TaskFailure::from)
        };
        let entry = Entry {
            body: Box::new(erased),
            input: type_name::<I>(),
            output: type_name::<O>(),
        };
        self.tasks.insert(name.to_string(), entry);
        self
    }

    /// Whether a task of this name is registered.
    pub fn contains(&self, name: &str) -> bool {
        self.tasks.contains_key(name)
    }
}

/// How [`serve`] ended.
#[derive(Debug, Clone)]
pub enum Ended {
    /// The masters freed the boosters: finalize and exit normally.
    Shutdown,
    /// The group is gone (a sibling or a parent failed, the masters
    /// revoked it, or a task failed the group): exit at once, without
    /// finalizing, so the masters see this booster fail too. With code 0
    /// ([`booster_main`] does), unless the booster's own task panicked
    /// ([`Error::TaskPanicked`]): the departure is a consequence of the
    /// failure that ended the group, and the masters recover from it; a
    /// non-zero code would make `pertinax run` report a job whose every
    /// failure was recovered as failed.
    GroupLost(Error),
}

/// Whether this process is a booster (spawned by [`crate::Boosters`]:
/// it has a parent and the booster marker among its arguments).
pub fn is_booster(universe: &Universe) -> bool {
    universe.parent().is_some() && std::env::args().any(|a| a == wire::BOOSTER_MARKER)
}

/// This process's arguments without the program name and without the
/// booster marker (what the program was started with by its user).
pub fn user_args() -> Vec<String> {
    std::env::args()
        .skip(1)
        .filter(|a| a != wire::BOOSTER_MARKER)
        .collect()
}

/// Serves tasks until the masters free the boosters or the group is lost.
///
/// # Errors
/// [`Error::NotABooster`] if the process has no parent.
pub fn serve(universe: &Universe, registry: &Registry) -> Result<Ended, Error> {
    let parent = universe.parent().ok_or(Error::NotABooster)?;
    SERVING.store(true, Ordering::Relaxed);
    let world = universe.world();
    // The watch over the siblings: a private duplicate, so that no task's
    // traffic on the world can ever match it.
    let watch = match world.dup() {
        Ok(c) => c,
        Err(e) => return Ok(Ended::GroupLost(Error::GroupLost(e))),
    };
    let ended = serve_loop(universe, registry, &parent, &world, &watch);
    if matches!(ended, Ended::Shutdown) {
        let _ = watch.free();
    }
    Ok(ended)
}

/// [`serve`], then the end of the process: finalize and exit 0 after a
/// shutdown; exit at once, also with code 0, but without finalizing (the
/// masters must see a failure) when the group was lost (see
/// [`Ended::GroupLost`]): under `pertinax run`, a job whose every booster
/// failure was recovered exits 0 (the killed booster died of an injected
/// fault, its siblings left with code 0). A booster whose own task
/// panicked ([`Error::TaskPanicked`]) is a failure of its own, not a
/// consequence: it exits with 101, as a Rust program that panics does
/// (which the launcher does not count when the panic was an injected
/// fault). For a booster program's `main`:
///
/// ```no_run
/// let universe = pertinax::init().expect("init");
/// let mut registry = pertinax_offload::Registry::new();
/// registry.register("square", |_ctx, x: u64| Ok(x * x));
/// if pertinax_offload::is_booster(&universe) {
///     pertinax_offload::booster_main(universe, &registry);
/// }
/// // ... the master's code ...
/// ```
pub fn booster_main(universe: Universe, registry: &Registry) -> ! {
    match serve(&universe, registry) {
        Ok(Ended::Shutdown) => {
            let code = i32::from(universe.finalize().is_err());
            std::process::exit(code)
        }
        // The booster whose task panicked failed itself: the launcher
        // counts it (unless the panic was an injected fault).
        Ok(Ended::GroupLost(Error::TaskPanicked(_))) => std::process::exit(101),
        Ok(Ended::GroupLost(_)) => std::process::exit(0),
        Err(e) => {
            eprintln!("pertinax-offload: {e}");
            std::process::exit(2)
        }
    }
}

/// Set once this process serves as a booster: the boosters it allocates
/// in turn are nested (see the `task.G.B` fault points).
static SERVING: AtomicBool = AtomicBool::new(false);

/// Whether this process is a booster that serves (its allocations are
/// nested).
pub(crate) fn serving() -> bool {
    SERVING.load(Ordering::Relaxed)
}

fn lost(e: pertinax::Error) -> Ended {
    Ended::GroupLost(Error::GroupLost(e))
}

fn serve_loop(
    universe: &Universe,
    registry: &Registry,
    parent: &Comm,
    world: &Comm,
    watch: &Comm,
) -> Ended {
    loop {
        let mut hdr: TaskHeader = [0; 4];
        let mut never = [0u8; 1];
        let got = pertinax::scope(|s| {
            let mut reqs = vec![parent.irecv(s, &mut hdr, ANY_SOURCE, wire::TAG_TASK)?];
            match watch.irecv(s, &mut never, ANY_SOURCE, wire::TAG_WATCH) {
                Ok(q) => reqs.push(q),
                Err(e) => {
                    let _ = cancel_rest(&mut reqs, None);
                    return Err(e);
                }
            }
            let r = pertinax::wait_any(&mut reqs).map_err(|w| w.error);
            // The other receive is cancelled before the scope ends (see
            // `round`). A task header that matched while the watch failed
            // is dropped with the group.
            let first = match &r {
                Ok(Some((j, _))) => Some(*j),
                _ => None,
            };
            let rest = cancel_rest(&mut reqs, first);
            if r.is_ok() {
                rest?;
            }
            r
        });
        let st = match got {
            Ok(Some((0, done))) => match done.status {
                Some(st) => st,
                // A plain communicator's receive always has one.
                None => {
                    return lost(pertinax::Error::InvalidArgument(
                        "a task header received without a status".into(),
                    ))
                }
            },
            Ok(_) => {
                return lost(pertinax::Error::InvalidArgument(
                    "a message on the watch".into(),
                ))
            }
            Err(e) => return lost(e),
        };
        let master = st.source;
        if hdr[0] == wire::KIND_SHUTDOWN {
            // A kill during `free` (see the module documentation).
            pertinax::fault_point("shutdown");
            pertinax::fault_point(&format!("shutdown.{}", world.rank().index()));
            return Ended::Shutdown;
        }
        let (task, attempt) = (hdr[1], hdr[2]);
        let tag = wire::done_tag(hdr[3]);
        let body: TaskBody = match parent.recv_value(master, wire::TAG_TASK_BODY) {
            Ok(Some((b, _))) => b,
            // A plain communicator's receive is never skipped.
            Ok(None) => {
                return lost(pertinax::Error::InvalidArgument(
                    "a task body receive was skipped".into(),
                ))
            }
            Err(e) => return lost(e),
        };
        pertinax::fault_point("task");
        if !body.nested {
            // One booster of one group of a top-level allocation (see the
            // module documentation).
            pertinax::fault_point(&format!("task.{}.{}", hdr[3], world.rank().index()));
        }
        let (status, out) = match registry.tasks.get(&body.name) {
            None => (wire::DONE_UNKNOWN, body.name.clone().into_bytes()),
            Some(e) if e.input != body.input_type || e.output != body.output_type => {
                match wire::encode(&(e.input, e.output)) {
                    Ok(types) => (wire::DONE_TYPE_MISMATCH, types),
                    Err(err) => (wire::DONE_TASK_ERROR, err.to_string().into_bytes()),
                }
            }
            Some(e) => {
                let ctx = TaskContext {
                    universe,
                    world,
                    onto: body.onto as usize,
                    master,
                    attempt: attempt as u32,
                    task,
                };
                match catch_unwind(AssertUnwindSafe(|| (e.body)(&ctx, &body.input))) {
                    Ok(Ok(out)) => (wire::DONE_OK, out),
                    Ok(Err(TaskFailure::Message(m))) => (wire::DONE_TASK_ERROR, m.into_bytes()),
                    Ok(Err(TaskFailure::Fault(e))) => return lost(e),
                    Err(_) => return Ended::GroupLost(Error::TaskPanicked(body.name)),
                }
            }
        };
        let done = [task, attempt, status, 0u64];
        if let Err(e) = parent.send(&done, master, tag) {
            return lost(e);
        }
        if let Err(e) = parent.send(&out, master, tag + 1) {
            return lost(e);
        }
    }
}
