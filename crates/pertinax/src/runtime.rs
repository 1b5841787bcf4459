//! Initialization and finalization: bootstrap with the launcher (or as a
//! singleton), the per-process runtime, and the [`Universe`] handle.

use std::cell::{Cell, RefCell};
use std::io::Write;
use std::os::unix::net::UnixStream;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use pertinax_sys::segment::{Layout, Segment};
use pertinax_sys::{cma, process};
use pertinax_wire::ctrl::{self, ToLauncher, ToRank};
use pertinax_wire::env;

use crate::comm::Comm;
use crate::engine::{Engine, ENTRY_SELF, ENTRY_WORLD};
use crate::error::{Error, Result};
use crate::spawn::{Assignment, Role};
use crate::wait::WaitPolicy;

static INITIALIZED: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// The runtime of this process, for scopes that must drive progress.
    static CURRENT: RefCell<Option<Rc<Runtime>>> = const { RefCell::new(None) };
}

/// What the runtime knows of the job.
#[derive(Debug, Clone)]
pub(crate) struct JobInfo {
    pub rank: usize,
    pub size: usize,
    pub job_id: String,
}

/// The per-process state behind every communicator.
#[derive(Debug)]
pub(crate) struct Runtime {
    pub engine: RefCell<Engine>,
    pub job: JobInfo,
    next_ctx: Cell<u32>,
    finalized: Cell<bool>,
    pub(crate) ctrl: RefCell<Option<UnixStream>>,
}

impl Runtime {
    /// Fails with `Finalized` after finalization.
    pub fn check(&self) -> Result<()> {
        if self.finalized.get() {
            return Err(Error::Finalized);
        }
        Ok(())
    }

    /// The next context id this process could use (a multiple of 4; the
    /// three above it belong to the same communicator).
    pub fn next_ctx(&self) -> u32 {
        self.next_ctx.get()
    }

    /// Records that context ids below `ctx + 4` are used.
    pub fn use_ctx(&self, ctx: u32) {
        self.next_ctx.set(self.next_ctx.get().max(ctx + 4));
    }

    /// One step of progress for a scope that waits for its requests.
    pub fn drain_step(&self, backoff: &mut crate::wait::Backoff) {
        let mut e = self.engine.borrow_mut();
        if !e.progress() {
            e.idle(backoff);
        } else {
            backoff.reset();
        }
    }
}

/// Runs `f` with this thread's runtime, if initialized.
pub(crate) fn with_current<R>(f: impl FnOnce(&Rc<Runtime>) -> R) -> Option<R> {
    CURRENT.with(|c| c.borrow().as_ref().map(f))
}

fn env_parse<T: std::str::FromStr>(name: &str) -> Result<T> {
    let v = std::env::var(name).map_err(|_| Error::Bootstrap(format!("{name} is not set")))?;
    v.trim()
        .parse()
        .map_err(|_| Error::Bootstrap(format!("{name}={v} is not a valid number")))
}

fn boot_err(what: &str) -> impl Fn(ctrl::FrameError) -> Error + '_ {
    move |e| Error::Bootstrap(format!("{what}: {e}"))
}

struct Boot {
    seg: Segment,
    slot: usize,
    job: JobInfo,
    ctrl: Option<UnixStream>,
    cma: bool,
    /// For a spare or spawned process: its assignment (slots of its
    /// request, its index, the payload).
    assign: Option<(Vec<u32>, usize, Assignment)>,
    /// Beat the heartbeat from the progress engine.
    beat_in_progress: bool,
}

/// Starts the heartbeat the launcher asked for (`thread:MS` or
/// `progress:MS`); returns whether progress rounds must beat.
fn start_heartbeat(seg: &Segment, slot: usize) -> Result<bool> {
    let Ok(spec) = std::env::var(env::HEARTBEAT) else {
        return Ok(false);
    };
    let (mode, ms) = spec.split_once(':').unwrap_or(("thread", spec.as_str()));
    let ms: u64 = ms
        .trim()
        .parse()
        .ok()
        .filter(|&m| m > 0)
        .ok_or_else(|| Error::Bootstrap(format!("{}={spec}: bad period", env::HEARTBEAT)))?;
    let beat = move |seg: &Segment| {
        seg.proc_block(slot).beat.fetch_add(1, Ordering::Relaxed);
    };
    beat(seg);
    match mode {
        "progress" => Ok(true),
        "thread" => {
            let seg = seg.clone();
            std::thread::Builder::new()
                .name("pertinax-heartbeat".into())
                .spawn(move || loop {
                    beat(&seg);
                    std::thread::sleep(Duration::from_millis(ms));
                })
                .map_err(|e| Error::Bootstrap(format!("cannot start the heartbeat: {e}")))?;
            Ok(false)
        }
        other => Err(Error::Bootstrap(format!(
            "{}: unknown heartbeat mode {other:?}",
            env::HEARTBEAT
        ))),
    }
}

fn bootstrap() -> Result<Boot> {
    cma::allow_peers();
    let cma_env = std::env::var(env::tune::CMA)
        .map(|v| v.trim() != "0")
        .unwrap_or(true);
    if std::env::var_os(env::RANK).is_none() {
        let seg = Segment::create_anonymous(Layout::new(1, 64 * 1024))
            .map_err(|e| Error::Transport(format!("shared memory: {e}")))?;
        seg.proc_block(0)
            .pid
            .store(std::process::id(), Ordering::Release);
        let mut id = [0u8; 16];
        pertinax_sys::random_bytes(&mut id).map_err(|e| Error::Bootstrap(e.to_string()))?;
        return Ok(Boot {
            seg,
            slot: 0,
            job: JobInfo {
                rank: 0,
                size: 1,
                job_id: env::to_hex(&id),
            },
            ctrl: None,
            cma: cma_env && cma::probe(),
            assign: None,
            beat_in_progress: false,
        });
    }
    let role = std::env::var(env::ROLE).unwrap_or_else(|_| "rank".into());
    if !matches!(role.as_str(), "rank" | "spare" | "spawned") {
        return Err(Error::Bootstrap(format!(
            "{}={role} is not a known role",
            env::ROLE
        )));
    }
    let rank: usize = env_parse(env::RANK)?;
    let size: usize = env_parse(env::SIZE)?;
    let slot: usize = env_parse(env::SLOT)?;
    let shm_fd: i32 = env_parse(env::SHM_FD)?;
    let ctrl_fd: i32 = env_parse(env::CTRL_FD)?;
    let job_id = std::env::var(env::JOB_ID)
        .map_err(|_| Error::Bootstrap(format!("{} is not set", env::JOB_ID)))?;
    let secret = std::env::var(env::SECRET)
        .ok()
        .and_then(|s| env::from_hex(&s))
        .ok_or_else(|| Error::Bootstrap(format!("{} is missing or not hex", env::SECRET)))?;
    if rank >= size.max(1) {
        return Err(Error::Bootstrap(format!(
            "rank {rank} is not below size {size}"
        )));
    }
    let shm = process::adopt_inherited_fd(shm_fd)
        .map_err(|e| Error::Bootstrap(format!("shared-memory descriptor {shm_fd}: {e}")))?;
    let seg = Segment::attach(std::os::fd::AsRawFd::as_raw_fd(&shm))
        .map_err(|e| Error::Bootstrap(format!("shared memory: {e}")))?;
    drop(shm);
    if slot >= seg.layout().capacity() {
        return Err(Error::Bootstrap(
            "the shared segment is too small for the job".into(),
        ));
    }
    let fd = process::adopt_inherited_fd(ctrl_fd)
        .map_err(|e| Error::Bootstrap(format!("control descriptor {ctrl_fd}: {e}")))?;
    let mut sock = UnixStream::from(fd);
    let pid = std::process::id();
    seg.proc_block(slot).pid.store(pid, Ordering::Release);
    let t = Some(Duration::from_secs(60));
    sock.set_read_timeout(t)
        .map_err(|e| Error::Bootstrap(e.to_string()))?;
    ctrl::write_frame(
        &mut sock,
        &ToLauncher::Hello {
            slot: slot as u32,
            rank: rank as u32,
            pid,
            secret,
        },
    )
    .map_err(boot_err("hello"))?;
    match ctrl::read_frame::<_, ToRank>(&mut sock).map_err(boot_err("welcome"))? {
        Some(ToRank::Welcome) => {}
        other => {
            return Err(Error::Bootstrap(format!(
                "launcher refused the hello: {other:?}"
            )))
        }
    }
    // From now on the kernel tells the launcher at once if this process
    // dies (see pertinax_sys::robust); finalize gives the word back.
    pertinax_sys::robust::hold(&seg.proc_block(slot).alive)
        .map_err(|e| Error::Bootstrap(format!("cannot register the death notice: {e}")))?;
    let beat_in_progress = start_heartbeat(&seg, slot)?;
    let my_cma = cma_env && cma::probe();
    if role != "rank" {
        // Spares wait here (as long as it takes) until they are needed;
        // spawned processes get their assignment at once.
        sock.set_read_timeout(None)
            .map_err(|e| Error::Bootstrap(e.to_string()))?;
        let (slots, index, payload) =
            match ctrl::read_frame::<_, ToRank>(&mut sock).map_err(boot_err("assignment"))? {
                Some(ToRank::Assign {
                    slots,
                    index,
                    payload,
                }) => (slots, index as usize, payload),
                Some(ToRank::Shutdown) | None if role == "spare" => {
                    // A spare that was never needed: its job is done.
                    process::exit_now(0)
                }
                other => {
                    return Err(Error::Bootstrap(format!(
                        "expected an assignment, got {other:?}"
                    )))
                }
            };
        let a: Assignment = bincode::deserialize(&payload)
            .map_err(|e| Error::Bootstrap(format!("bad assignment: {e}")))?;
        let (rank, size) = match &a {
            Assignment::Spawned { .. } => (index, slots.len()),
            Assignment::Replace { peers, holes, .. } => {
                (holes.get(index).copied().unwrap_or(0) as usize, peers.len())
            }
        };
        let all_cma = my_cma && std::env::var(env::CMA_ALL).is_ok_and(|v| v.trim() == "1");
        start_guard(&sock, rank)?;
        return Ok(Boot {
            seg,
            slot,
            job: JobInfo { rank, size, job_id },
            ctrl: Some(sock),
            cma: all_cma,
            assign: Some((slots, index, a)),
            beat_in_progress,
        });
    }
    ctrl::write_frame(
        &mut sock,
        &ToLauncher::Put {
            key: format!("cma/{slot}"),
            value: vec![my_cma as u8],
        },
    )
    .map_err(boot_err("put"))?;
    ctrl::write_frame(&mut sock, &ToLauncher::Fence).map_err(boot_err("fence"))?;
    let entries = match ctrl::read_frame::<_, ToRank>(&mut sock).map_err(boot_err("fence"))? {
        Some(ToRank::FenceDone { entries }) => entries,
        other => {
            return Err(Error::Bootstrap(format!(
                "unexpected answer to fence: {other:?}"
            )))
        }
    };
    let all_cma = my_cma
        && (0..size).all(|s| {
            entries
                .iter()
                .any(|(k, v)| *k == format!("cma/{s}") && v.first() == Some(&1))
        });
    sock.set_read_timeout(None)
        .map_err(|e| Error::Bootstrap(e.to_string()))?;
    start_guard(&sock, rank)?;
    Ok(Boot {
        seg,
        slot,
        job: JobInfo { rank, size, job_id },
        ctrl: Some(sock),
        cma: all_cma,
        assign: None,
        beat_in_progress,
    })
}

fn start_guard(sock: &UnixStream, rank: usize) -> Result<()> {
    let watch = sock
        .try_clone()
        .map_err(|e| Error::Bootstrap(e.to_string()))?;
    std::thread::Builder::new()
        .name("pertinax-guard".into())
        .spawn(move || guard(watch, rank))
        .map_err(|e| Error::Bootstrap(format!("cannot start the connection guard: {e}")))?;
    Ok(())
}

/// The connection guard: a rank whose launcher is gone stops.
fn guard(mut sock: UnixStream, rank: usize) {
    loop {
        match ctrl::read_frame::<_, ToRank>(&mut sock) {
            Ok(Some(ToRank::Shutdown)) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "pertinax: rank {rank}: the launcher ended the job"
                );
                process::exit_now(143);
            }
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "pertinax: rank {rank}: lost the connection to the launcher; exiting"
                );
                process::exit_now(70);
            }
        }
    }
}

/// An initialized pertinax process: the world and self communicators.
///
/// Dropping it finalizes the runtime (see [`Universe::finalize`]).
#[derive(Debug)]
pub struct Universe {
    rt: Rc<Runtime>,
    world: Comm,
    self_comm: Comm,
    parent: Option<Comm>,
    role: Role,
}

/// Initializes the runtime of this process.
///
/// Under `pertinax run` the process joins its job; started any other way it
/// is a singleton job of size 1.
///
/// # Errors
/// `AlreadyInitialized` on a second call; `Bootstrap` or `Transport` when
/// the launcher's environment is broken or the OS refuses shared memory.
///
/// # Example
/// ```
/// let universe = pertinax::init()?;
/// let world = universe.world();
/// assert!(world.rank().index() < world.size());
/// # Ok::<(), pertinax::Error>(())
/// ```
pub fn init() -> Result<Universe> {
    if INITIALIZED.swap(true, Ordering::SeqCst) {
        return Err(Error::AlreadyInitialized);
    }
    let boot = match bootstrap() {
        Ok(b) => b,
        Err(e) => {
            INITIALIZED.store(false, Ordering::SeqCst);
            return Err(e);
        }
    };
    let cpus = pertinax_sys::online_cpus();
    let policy = WaitPolicy::for_job(boot.job.size, cpus);
    let eager = std::env::var(env::tune::EAGER_LIMIT)
        .ok()
        .and_then(|v| v.trim().parse().ok());
    if let Err(m) = crate::fault::load() {
        INITIALIZED.store(false, Ordering::SeqCst);
        return Err(Error::Bootstrap(format!("{}: {m}", env::FAULTS)));
    }
    // Ranks of the job poll the job's slots from the start; processes that
    // join later poll what their communicators name.
    let nslots = if boot.assign.is_some() {
        0
    } else {
        boot.job.size
    };
    // Fault in this rank's rings now rather than one page per message later
    // (best effort: without MADV_POPULATE_WRITE pages come on first use).
    let _ = boot.seg.prefault(boot.slot, nslots);
    let single_copy = boot.cma
        && match std::env::var(env::tune::LARGE).as_deref().map(str::trim) {
            Ok("cma") => true,
            Ok("stream") => false,
            _ => boot.job.size > 2 * cpus,
        };
    let mut engine = Engine::new(boot.seg, boot.slot, nslots, policy, eager, single_copy);
    engine.beat_in_progress = boot.beat_in_progress;
    let rt = Rc::new(Runtime {
        engine: RefCell::new(engine),
        job: boot.job.clone(),
        next_ctx: Cell::new(8),
        finalized: Cell::new(false),
        ctrl: RefCell::new(boot.ctrl),
    });
    CURRENT.with(|c| *c.borrow_mut() = Some(rt.clone()));
    let self_comm = Comm::from_parts(
        rt.clone(),
        4,
        0,
        Rc::from([boot.slot as u32]),
        &[ENTRY_SELF],
        None,
    );
    if let Some((slots, index, a)) = boot.assign {
        let j = crate::spawn::join(&rt, &slots, index, a)?;
        return Ok(Universe {
            rt,
            world: j.world,
            self_comm,
            parent: j.parent,
            role: j.role,
        });
    }
    let world_peers: Rc<[u32]> = (0..boot.job.size as u32).collect();
    let world_entries = vec![ENTRY_WORLD; boot.job.size];
    let world = Comm::from_parts(
        rt.clone(),
        0,
        boot.job.rank as u32,
        world_peers,
        &world_entries,
        None,
    );
    Ok(Universe {
        rt,
        world,
        self_comm,
        parent: None,
        role: Role::Original,
    })
}

impl Universe {
    /// The world communicator: every rank of the job.
    pub fn world(&self) -> Comm {
        self.world.clone()
    }

    /// The communicator holding only this process.
    pub fn self_comm(&self) -> Comm {
        self.self_comm.clone()
    }

    /// How this process came to be: started with the job, spawned, or put
    /// in the place of a failed rank.
    pub fn role(&self) -> Role {
        self.role.clone()
    }

    /// For a process started by [`Comm::spawn`]: the intercommunicator to
    /// its parents (their group is the remote group).
    pub fn parent(&self) -> Option<Comm> {
        self.parent.clone()
    }

    /// The job's id (32 hex digits).
    pub fn job_id(&self) -> &str {
        &self.rt.job.job_id
    }

    /// Whether large messages move by a single copy (cross-memory attach)
    /// rather than pipelined through the shared-memory ring.
    pub fn single_copy(&self) -> bool {
        self.rt.engine.borrow().uses_cma()
    }

    /// Largest message sent eagerly, in bytes.
    pub fn eager_limit(&self) -> usize {
        self.rt.engine.borrow().eager_limit()
    }

    /// Finalizes: delivers what is still queued, tells the launcher, and
    /// makes every later call on any communicator fail with `Finalized`.
    /// Dropping the universe does the same.
    ///
    /// # Errors
    /// `Bootstrap` if the launcher could not be told.
    pub fn finalize(self) -> Result<()> {
        self.do_finalize()
    }

    /// Ends the whole job at once with `code` (like `MPI_Abort`).
    pub fn abort(&self, code: i32, message: &str) -> ! {
        if let Some(sock) = self.rt.ctrl.borrow_mut().as_mut() {
            let _ = ctrl::write_frame(
                sock,
                &ToLauncher::Abort {
                    code,
                    message: message.to_string(),
                },
            );
        }
        // One write: a rank stopped by another's abort loses its line whole
        // or not at all, never half of it.
        let line = format!("pertinax: rank {} aborts: {message}\n", self.rt.job.rank);
        let _ = std::io::stderr().write_all(line.as_bytes());
        process::exit_now(code)
    }

    fn do_finalize(&self) -> Result<()> {
        if self.rt.finalized.replace(true) {
            return Ok(());
        }
        {
            let mut e = self.rt.engine.borrow_mut();
            e.drain_outbox();
            e.cancel_all();
        }
        CURRENT.with(|c| *c.borrow_mut() = None);
        if let Some(sock) = self.rt.ctrl.borrow_mut().as_mut() {
            // A clean end: the kernel must not report this process dead.
            self.rt.engine.borrow().release_death_notice();
            ctrl::write_frame(sock, &ToLauncher::Finalize)
                .map_err(|e| Error::Bootstrap(format!("finalize: {e}")))?;
        }
        Ok(())
    }
}

impl Drop for Universe {
    fn drop(&mut self) {
        let _ = self.do_finalize();
    }
}
