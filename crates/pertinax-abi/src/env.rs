//! The environment: start and end, the clock, names and versions.

use std::ffi::{c_char, c_int};
use std::sync::atomic::Ordering;
use std::sync::OnceLock;
use std::time::Instant;

use crate::consts::*;
use crate::errors::{copy_out, raise};
use crate::state::{self, State, FINALIZED, INITIALIZED};

/// The thread that joined the job (`MPI_Init`, `MPI_Init_thread` or the
/// first `MPI_Session_init`): `MPI_Is_thread_main`'s.
static MAIN: OnceLock<std::thread::ThreadId> = OnceLock::new();

/// `MPI_Init`'s start at thread level `required`: joins the job unless a
/// session did already (see [`join`]), then the World model is
/// initialized.
fn start(what: &str, required: c_int) -> c_int {
    if INITIALIZED.load(Ordering::SeqCst) {
        return raise(MPI_COMM_WORLD, what, MPI_ERR_OTHER);
    }
    let rc = join(what, required);
    if rc == MPI_SUCCESS {
        INITIALIZED.store(true, Ordering::SeqCst);
    }
    rc
}

/// Joins the job (`pertinax::init`) and installs the library's state,
/// unless this process did already: what `MPI_Init` and the first
/// `MPI_Session_init` share. The first join fixes the thread level from
/// `required` ([`crate::serial::start`]). A process joins its job once:
/// after its state was torn down ([`teardown`]) a second join fails
/// (`MPI_ERR_OTHER`).
pub(crate) fn join(what: &str, required: c_int) -> c_int {
    if state::with(|_| ()).is_some() {
        return MPI_SUCCESS;
    }
    if TORN_DOWN.load(Ordering::SeqCst) {
        eprintln!(
            "pertinax MPI: {what}: this process left its job already (pertinax joins a job once)"
        );
        return MPI_ERR_OTHER;
    }
    let universe = match pertinax::init() {
        Ok(u) => u,
        Err(e) => {
            eprintln!("pertinax MPI: {what}: {e}");
            return MPI_ERR_OTHER;
        }
    };
    let resilient = match crate::resilient::start(&universe) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("pertinax MPI: {what}: {e}");
            return MPI_ERR_OTHER;
        }
    };
    let world = universe.world().clone();
    let world_for_ports = world.clone();
    let me = universe.self_comm().clone();
    let mut s = State {
        universe,
        comms: Vec::new(),
        requests: Vec::new(),
        groups: Vec::new(),
        // Handlers made before the state (`MPI_Session_create_errhandler`
        // may come first), at the indices their handles name.
        errhandlers: crate::errors::early_handlers(),
        keyvals: Vec::new(),
        messages: Vec::new(),
        datatypes: Vec::new(),
        detached: Vec::new(),
    };
    let errhandler = initial_errhandler();
    for comm in [world, me] {
        s.comms.push(Some(state::CommEntry {
            comm,
            errhandler,
            attrs: Vec::new(),
        }));
    }
    // The ports' private world (collective, as this call is).
    crate::ports::start(&world_for_ports);
    state::install(s);
    if let Some(w) = resilient {
        crate::resilient::install(w);
    }
    crate::fast::decide();
    let _ = MAIN.set(std::thread::current().id());
    crate::serial::start(required);
    let _ = clock();
    MPI_SUCCESS
}

/// Whether the calling thread joined the job (or nothing joined yet).
fn on_main_thread() -> bool {
    MAIN.get().is_none_or(|m| *m == std::thread::current().id())
}

/// Set once the state is torn down: the process left its job.
static TORN_DOWN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The error handler `MPI_COMM_WORLD` and `MPI_COMM_SELF` start with:
/// `PERTINAX_INITIAL_ERRHANDLER` (which `pertinax run -initial-errhandler`
/// sets, as `mpiexec`'s key of MPI 4), `mpi_errors_are_fatal` (the
/// default), `mpi_errors_return` or `mpi_errors_abort`, in any case.
fn initial_errhandler() -> c_int {
    let Some(v) = std::env::var_os("PERTINAX_INITIAL_ERRHANDLER") else {
        return MPI_ERRORS_ARE_FATAL;
    };
    match v.to_string_lossy().to_ascii_lowercase().as_str() {
        "" | "mpi_errors_are_fatal" => MPI_ERRORS_ARE_FATAL,
        "mpi_errors_return" => MPI_ERRORS_RETURN,
        "mpi_errors_abort" => MPI_ERRORS_ABORT,
        other => {
            eprintln!(
                "pertinax MPI: PERTINAX_INITIAL_ERRHANDLER={other}: not mpi_errors_are_fatal, \
                 mpi_errors_return or mpi_errors_abort; errors are fatal"
            );
            MPI_ERRORS_ARE_FATAL
        }
    }
}

crate::mpi! {
    /// `MPI_Init`: joins the job (`pertinax::init`).
    fn PMPI_Init(_argc: *mut c_int, _argv: *mut *mut *mut c_char) -> c_int as MPI_Init {
        start("MPI_Init", MPI_THREAD_FUNNELED)
    }
}

crate::mpi! {
    /// `MPI_Init_thread`: at most `MPI_THREAD_SERIALIZED` (`MULTIPLE`
    /// gets `SERIALIZED`: see `serial.rs`), given in `provided`; the level
    /// a session fixed first if one joined the job already.
    fn PMPI_Init_thread(_argc: *mut c_int, _argv: *mut *mut *mut c_char, required: c_int, provided: *mut c_int) -> c_int as MPI_Init_thread {
        let rc = start("MPI_Init_thread", required);
        if rc == MPI_SUCCESS && !provided.is_null() {
            // SAFETY: checked non-null; MPI's contract makes it writable.
            unsafe { *provided = crate::serial::level() };
        }
        rc
    }
}

/// Writes `v` through an out-pointer from C for a function callable from
/// any thread; a null pointer is `MPI_ERR_ARG` (see
/// [`crate::serial::raise_anywhere`]).
///
/// # Safety
/// `out` is null or valid for a write of `c_int`.
unsafe fn put_anywhere(out: *mut c_int, v: c_int, what: &str) -> c_int {
    if out.is_null() {
        return crate::serial::raise_anywhere(MPI_COMM_WORLD, what, MPI_ERR_ARG);
    }
    // SAFETY: non-null, and valid by the caller's contract.
    unsafe { out.write(v) };
    MPI_SUCCESS
}

crate::mpi! {
    /// `MPI_Query_thread`: the level given (`MPI_THREAD_FUNNELED` before
    /// the job is joined, what `MPI_Init` gives).
    any_thread fn PMPI_Query_thread(provided: *mut c_int) -> c_int as MPI_Query_thread {
        // SAFETY: MPI's contract: null or writable.
        unsafe { put_anywhere(provided, crate::serial::level(), "MPI_Query_thread") }
    }
}

crate::mpi! {
    /// `MPI_Is_thread_main`.
    any_thread fn PMPI_Is_thread_main(flag: *mut c_int) -> c_int as MPI_Is_thread_main {
        let main = MAIN.get() == Some(&std::thread::current().id());
        // SAFETY: MPI's contract: null or writable.
        unsafe { put_anywhere(flag, c_int::from(main), "MPI_Is_thread_main") }
    }
}

crate::mpi! {
    /// `MPI_Finalize`: ends the World model. Unless sessions remain (the
    /// last `MPI_Session_finalize` then leaves the job), [`teardown`].
    fn PMPI_Finalize() -> c_int as MPI_Finalize {
        if !INITIALIZED.load(Ordering::SeqCst) || FINALIZED.load(Ordering::SeqCst) {
            return raise(MPI_COMM_WORLD, "MPI_Finalize", MPI_ERR_OTHER);
        }
        if !on_main_thread() {
            eprintln!("pertinax MPI: MPI_Finalize: called from a thread other than the one that initialized MPI (MPI asks for that one)");
            return raise(MPI_COMM_WORLD, "MPI_Finalize", MPI_ERR_OTHER);
        }
        // MPI: `MPI_COMM_SELF`'s attributes are deleted first, as if it
        // were freed (libraries hook their clean-up there).
        let _ = crate::comm::delete_attrs(MPI_COMM_SELF);
        // A resilient world ends collectively (over the survivors).
        let ended = crate::resilient::finish();
        if let Err(code) = ended {
            eprintln!("pertinax MPI: MPI_Finalize: the resilient world's end: error class {code}");
        }
        FINALIZED.store(true, Ordering::SeqCst);
        if crate::session::live() > 0 {
            return MPI_SUCCESS;
        }
        teardown("MPI_Finalize")
    }
}

/// Leaves the job: completes the requests still held, frees the
/// communicators made here, then `Universe::finalize` (collective). What
/// the end of the World model or of the last session does, whichever
/// comes last.
///
/// Only the thread that joined leaves (`MPI_ERR_OTHER` on another): the
/// core's runtime is that thread's (see `Universe::enter_thread`).
pub(crate) fn teardown(what: &str) -> c_int {
    if !on_main_thread() {
        eprintln!("pertinax MPI: {what}: the job is left from the thread that joined it only");
        return raise(MPI_COMM_WORLD, what, MPI_ERR_OTHER);
    }
    let Some(s) = state::take() else {
        return raise(MPI_COMM_WORLD, what, MPI_ERR_OTHER);
    };
    TORN_DOWN.store(true, Ordering::SeqCst);
    let State {
        universe,
        comms,
        requests,
        detached,
        ..
    } = s;
    drop(requests);
    for e in detached {
        crate::p2p::settle(e, true);
    }
    for e in comms.into_iter().skip(2).flatten() {
        let _ = e.comm.free();
    }
    crate::ports::stop();
    match universe.finalize() {
        Ok(()) => MPI_SUCCESS,
        Err(e) => {
            eprintln!("pertinax MPI: {what}: {e}");
            crate::errors::code_of(&e)
        }
    }
}

crate::mpi! {
    /// `MPI_Initialized`.
    any_thread fn PMPI_Initialized(flag: *mut c_int) -> c_int as MPI_Initialized {
        let v = c_int::from(INITIALIZED.load(Ordering::SeqCst));
        // SAFETY: MPI's contract: null or writable.
        unsafe { put_anywhere(flag, v, "MPI_Initialized") }
    }
}

crate::mpi! {
    /// `MPI_Finalized`.
    any_thread fn PMPI_Finalized(flag: *mut c_int) -> c_int as MPI_Finalized {
        let v = c_int::from(FINALIZED.load(Ordering::SeqCst));
        // SAFETY: MPI's contract: null or writable.
        unsafe { put_anywhere(flag, v, "MPI_Finalized") }
    }
}

crate::mpi! {
    /// `MPI_Abort`: ends the whole job with `code`.
    fn PMPI_Abort(_comm: c_int, code: c_int) -> c_int as MPI_Abort {
        let message = format!("MPI_Abort with code {code}");
        let _ = state::with(|s| s.universe.abort(code, &message));
        eprintln!("pertinax MPI: {message}");
        std::process::exit(code)
    }
}

fn clock() -> Instant {
    static ZERO: OnceLock<Instant> = OnceLock::new();
    *ZERO.get_or_init(Instant::now)
}

crate::mpi! {
    /// `MPI_Wtime`: seconds since this process's `MPI_Init` (a monotonic
    /// clock; `MPI_WTIME_IS_GLOBAL` is false).
    any_thread fn PMPI_Wtime() -> f64 as MPI_Wtime {
        clock().elapsed().as_secs_f64()
    }
}

crate::mpi! {
    /// `MPI_Wtick`: the monotonic clock's resolution (a nanosecond).
    any_thread fn PMPI_Wtick() -> f64 as MPI_Wtick {
        1e-9
    }
}

crate::mpi! {
    /// `MPI_Get_processor_name`: the host name.
    any_thread fn PMPI_Get_processor_name(name: *mut c_char, len: *mut c_int) -> c_int as MPI_Get_processor_name {
        let host = rustix_hostname();
        // SAFETY: MPI's contract: `name` holds MPI_MAX_PROCESSOR_NAME bytes.
        unsafe { copy_out(&host, name, MPI_MAX_PROCESSOR_NAME, len) };
        MPI_SUCCESS
    }
}

fn rustix_hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "localhost".into())
}

crate::mpi! {
    /// `MPI_Get_version`: the standard whose ABI this is (MPICH 5: 5.0).
    any_thread fn PMPI_Get_version(version: *mut c_int, subversion: *mut c_int) -> c_int as MPI_Get_version {
        if version.is_null() || subversion.is_null() {
            return crate::serial::raise_anywhere(MPI_COMM_WORLD, "MPI_Get_version", MPI_ERR_ARG);
        }
        // SAFETY: checked non-null; MPI's contract makes them writable.
        unsafe {
            *version = MPI_VERSION;
            *subversion = MPI_SUBVERSION;
        }
        MPI_SUCCESS
    }
}

crate::mpi! {
    /// `MPI_Get_library_version`.
    any_thread fn PMPI_Get_library_version(out: *mut c_char, len: *mut c_int) -> c_int as MPI_Get_library_version {
        let text = concat!("pertinax ", env!("CARGO_PKG_VERSION"), " (MPICH ABI, libmpi.so.12)");
        // SAFETY: MPI's contract: `out` holds
        // MPI_MAX_LIBRARY_VERSION_STRING bytes.
        unsafe { copy_out(text, out, MPI_MAX_LIBRARY_VERSION_STRING, len) };
        MPI_SUCCESS
    }
}

crate::mpi! {
    /// `MPI_Abi_get_version`: -1, -1 as MPICH's `libmpi.so.12` answers (this
    /// is MPICH's ABI, not the MPI-5 standard ABI); callable before
    /// `MPI_Init`.
    any_thread fn PMPI_Abi_get_version(major: *mut c_int, minor: *mut c_int) -> c_int as MPI_Abi_get_version {
        if major.is_null() || minor.is_null() {
            return crate::serial::raise_anywhere(MPI_COMM_WORLD, "MPI_Abi_get_version", MPI_ERR_ARG);
        }
        // SAFETY: checked non-null; MPI's contract makes them writable.
        unsafe {
            *major = -1;
            *minor = -1;
        }
        MPI_SUCCESS
    }
}

crate::mpi! {
    /// `MPI_Abi_get_info`: a new info object with the sizes in bytes of
    /// this ABI's `MPI_Aint`, `MPI_Count` and `MPI_Offset`
    /// (`mpi_aint_size`, `mpi_count_size`, `mpi_offset_size`), as MPICH
    /// gives.
    fn PMPI_Abi_get_info(info: *mut c_int) -> c_int as MPI_Abi_get_info {
        if info.is_null() {
            return raise(MPI_COMM_WORLD, "MPI_Abi_get_info", MPI_ERR_ARG);
        }
        let aint = std::mem::size_of::<crate::MPI_Aint>().to_string();
        let count = std::mem::size_of::<crate::large::MPI_Count>().to_string();
        // `MPI_Offset` is `long long`, as `MPI_Count`.
        let pairs = [("mpi_aint_size", aint.as_str()), ("mpi_count_size", count.as_str()), ("mpi_offset_size", count.as_str())];
        match crate::info::new_info(&pairs) {
            Ok(h) => {
                // SAFETY: checked non-null; writable by MPI's contract.
                unsafe { *info = h };
                MPI_SUCCESS
            }
            Err(code) => raise(MPI_COMM_WORLD, "MPI_Abi_get_info", code),
        }
    }
}

crate::mpi! {
    /// `MPI_Abi_get_fortran_info`: `MPI_INFO_NULL`, as MPICH built without
    /// Fortran answers: this library has no Fortran bindings.
    fn PMPI_Abi_get_fortran_info(info: *mut c_int) -> c_int as MPI_Abi_get_fortran_info {
        if info.is_null() {
            return raise(MPI_COMM_WORLD, "MPI_Abi_get_fortran_info", MPI_ERR_ARG);
        }
        // SAFETY: checked non-null; writable by MPI's contract.
        unsafe { *info = crate::info::MPI_INFO_NULL };
        MPI_SUCCESS
    }
}

crate::mpi! {
    /// `MPI_Get_hw_resource_info` (MPI 4.1): a new, empty info object.
    /// pertinax binds its processes to no part of the node, so there is
    /// no hardware resource to report (as `MPI_COMM_TYPE_HW_UNGUIDED`
    /// finds no level to split at).
    fn PMPI_Get_hw_resource_info(info: *mut c_int) -> c_int as MPI_Get_hw_resource_info {
        if info.is_null() {
            return raise(MPI_COMM_WORLD, "MPI_Get_hw_resource_info", MPI_ERR_ARG);
        }
        match crate::info::new_info(&[]) {
            Ok(h) => {
                // SAFETY: checked non-null; writable by MPI's contract.
                unsafe { *info = h };
                MPI_SUCCESS
            }
            Err(code) => raise(MPI_COMM_WORLD, "MPI_Get_hw_resource_info", code),
        }
    }
}
