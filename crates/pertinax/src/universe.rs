//! Initialization and finalization: [`init`] and the [`Universe`] handle.

use std::io::Write;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};

use pertinax_os::process;

use crate::backend::{self, Backend, NameService, TOKEN_SELF, TOKEN_WORLD};
use crate::comm::Comm;
use crate::error::{Error, Result};
use crate::runtime::{JobInfo, Runtime, ThreadEntry};
use crate::spawn::Role;

static INITIALIZED: AtomicBool = AtomicBool::new(false);

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
    /// The backend has a name service ([`Universe::publish_name`]), read
    /// once at `init`.
    names: bool,
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
    let st = match backend::start() {
        Ok(s) => s,
        Err(e) => {
            INITIALIZED.store(false, Ordering::SeqCst);
            return Err(e);
        }
    };
    // Shots with a victim strike ranks of the job's first world only.
    let first = st.assigned.is_none().then_some((st.rank as u32, st.size));
    if let Err(m) = crate::inject::load(first) {
        INITIALIZED.store(false, Ordering::SeqCst);
        return Err(Error::Bootstrap(m));
    }
    let rt = Runtime::install(
        st.backend,
        JobInfo {
            rank: st.rank,
            size: st.size,
            job_id: st.job_id,
        },
    );
    let names = rt.b.capabilities().name_service;
    let self_comm = Comm::from_parts(rt.clone(), 4, 0, Rc::from([st.me]), &[TOKEN_SELF], None);
    // The backend's bound on this process's start, if any, ends once it
    // has joined.
    let _bound = st.bound;
    if let Some((slots, index, a)) = st.assigned {
        let j = crate::spawn::join(&rt, &slots, index, a)?;
        return Ok(Universe {
            rt,
            world: j.world,
            self_comm,
            parent: j.parent,
            role: j.role,
            names,
        });
    }
    let world_peers: Rc<[u32]> = (0..rt.job.size as u32).collect();
    let world_tokens = vec![TOKEN_WORLD; rt.job.size];
    let world = Comm::from_parts(
        rt.clone(),
        0,
        rt.job.rank as u32,
        world_peers,
        &world_tokens,
        None,
    );
    Ok(Universe {
        rt,
        world,
        self_comm,
        parent: None,
        role: Role::Original,
        names,
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
        self.rt.b.single_copy()
    }

    /// Largest message sent eagerly, in bytes.
    pub fn eager_limit(&self) -> usize {
        self.rt.b.eager_limit()
    }

    /// Makes this universe's runtime the calling thread's current one (the
    /// one a [`crate::scope`] drives while it waits for lent buffers) until
    /// the returned entry is dropped; nothing changes on a thread that has
    /// it already (the one that called [`init`]).
    ///
    /// For a caller that hands the universe from thread to thread, one at
    /// a time, with a happens-before edge between them (the C ABI at
    /// `MPI_THREAD_SERIALIZED`, under its lock): the entry must be dropped
    /// on its thread before the next thread uses the universe.
    pub fn enter_thread(&self) -> ThreadEntry {
        ThreadEntry::new(&self.rt)
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
        self.rt.b.abort(code, message);
        // One write: a rank stopped by another's abort loses its line whole
        // or not at all, never half of it.
        let line = format!("pertinax: rank {} aborts: {message}\n", self.rt.job.rank);
        let _ = std::io::stderr().write_all(line.as_bytes());
        process::exit_now(code)
    }

    /// Publishes `service` as the name of `port` (`MPI_Publish_name`), for
    /// every process of the job to find with [`Universe::lookup_name`]
    /// (the job's processes: its ranks, spares and spawned processes; on
    /// the native backend the launcher keeps the table, and a singleton
    /// keeps its own). A name stays published until it is unpublished,
    /// even after its publisher ended.
    ///
    /// # Errors
    /// `NameTaken` if `service` is already published; `InvalidArgument`
    /// for an empty name or port; `Unsupported` on a backend without a name
    /// service (MPI); `Transport` if the name server cannot be reached or
    /// does not answer in time (the call never hangs); `Finalized`.
    ///
    /// # Example
    /// ```
    /// let universe = pertinax::init()?;
    /// universe.publish_name("ocean", "pertinax-port:0:0")?;
    /// assert_eq!(universe.lookup_name("ocean")?, "pertinax-port:0:0");
    /// assert!(matches!(
    ///     universe.publish_name("ocean", "elsewhere"),
    ///     Err(pertinax::Error::NameTaken { .. })
    /// ));
    /// universe.unpublish_name("ocean", "pertinax-port:0:0")?;
    /// assert!(matches!(
    ///     universe.lookup_name("ocean"),
    ///     Err(pertinax::Error::NameNotFound { .. })
    /// ));
    /// # Ok::<(), pertinax::Error>(())
    /// ```
    pub fn publish_name(&self, service: &str, port: &str) -> Result<()> {
        self.names_ready(service)?;
        if port.is_empty() {
            return Err(Error::InvalidArgument("an empty port name".into()));
        }
        self.rt.b.publish_name(service, port)
    }

    /// Withdraws `service`, published for `port` (`MPI_Unpublish_name`).
    /// Any process of the job may unpublish a name, not only its publisher.
    ///
    /// # Errors
    /// `NameNotPublished` if `service` is not published for `port`; else
    /// as [`Universe::publish_name`].
    pub fn unpublish_name(&self, service: &str, port: &str) -> Result<()> {
        self.names_ready(service)?;
        self.rt.b.unpublish_name(service, port)
    }

    /// The port published as `service` (`MPI_Lookup_name`).
    ///
    /// # Errors
    /// `NameNotFound` if no port is; else as [`Universe::publish_name`].
    pub fn lookup_name(&self, service: &str) -> Result<String> {
        self.names_ready(service)?;
        self.rt.b.lookup_name(service)
    }

    /// The checks every name call makes first.
    fn names_ready(&self, service: &str) -> Result<()> {
        self.rt.check()?;
        if !self.names {
            return backend::unsupported("name publishing (the backend has no name service)");
        }
        if service.is_empty() {
            return Err(Error::InvalidArgument("an empty service name".into()));
        }
        Ok(())
    }

    fn do_finalize(&self) -> Result<()> {
        self.rt.finalize()
    }
}

impl Drop for Universe {
    fn drop(&mut self) {
        let _ = self.do_finalize();
    }
}
