//! Error codes and handlers: pertinax's errors as MPI error classes, and
//! what a communicator's error handler does with them
//! (`MPI_ERRORS_ARE_FATAL` by default, `MPI_ERRORS_RETURN`,
//! `MPI_ERRORS_ABORT`, a user function).
//!
//! A user handler counts its references (`state::Errhandler`): the
//! program's handles (`MPI_*_create_errhandler` gives one,
//! `MPI_*_get_errhandler` one more, `MPI_Errhandler_free` frees one) and
//! the communicators and sessions it is set on. A handler freed while set
//! on one stays valid for it, and goes when the last of them is freed; a
//! freed handle is `MPI_ERR_ERRHANDLER` to the calls that take one.

use std::cell::RefCell;
use std::ffi::{c_char, c_int};

use pertinax::Error;

use crate::consts::*;
use crate::serial::Serial;
use crate::state::{self, Errhandler, UserErrhandler};

/// A call's return code as a `Result` (the library calling its own
/// `PMPI_` functions).
pub(crate) fn ok(rc: c_int) -> Result<(), c_int> {
    if rc == MPI_SUCCESS {
        Ok(())
    } else {
        Err(rc)
    }
}

/// The MPI error class of a pertinax error.
pub(crate) fn code_of(e: &Error) -> c_int {
    match e {
        Error::ProcFailed { .. } => MPIX_ERR_PROC_FAILED,
        Error::ProcFailedPending { .. } => MPIX_ERR_PROC_FAILED_PENDING,
        Error::Revoked => MPIX_ERR_REVOKED,
        Error::Truncated { .. } | Error::LengthNotMultiple { .. } => MPI_ERR_TRUNCATE,
        Error::InvalidRank { .. } => MPI_ERR_RANK,
        Error::InvalidTag { .. } => MPI_ERR_TAG,
        Error::InvalidArgument(_) => MPI_ERR_ARG,
        Error::CommFreed => MPI_ERR_COMM,
        Error::RequestInactive => MPI_ERR_REQUEST,
        Error::SpawnFailed(_) => MPI_ERR_SPAWN,
        Error::Unsupported { .. } => MPI_ERR_UNSUPPORTED_OPERATION,
        Error::NameTaken { .. } | Error::NameNotPublished { .. } => MPI_ERR_SERVICE,
        Error::NameNotFound { .. } => MPI_ERR_NAME,
        _ => MPI_ERR_OTHER,
    }
}

/// The text of an error class (`MPI_Error_string`).
pub(crate) fn text(code: c_int) -> &'static str {
    match code {
        MPI_SUCCESS => "no error",
        MPI_ERR_BUFFER => "invalid buffer pointer",
        MPI_ERR_COUNT => "invalid count argument",
        MPI_ERR_TYPE => "invalid or unsupported datatype",
        MPI_ERR_TAG => "invalid tag",
        MPI_ERR_COMM => "invalid communicator",
        MPI_ERR_RANK => "invalid rank",
        MPI_ERR_ROOT => "invalid root",
        MPI_ERR_OP => "invalid or unsupported reduction operation",
        8 => "invalid group",
        10 => "invalid topology",
        11 => "invalid dimension argument",
        28 => "invalid info object",
        29 => "invalid info key",
        30 => "invalid info value",
        31 => "no such info key",
        MPI_ERR_ARG => "invalid argument",
        MPI_ERR_TRUNCATE => "message truncated",
        MPI_ERR_OTHER => "other error",
        MPI_ERR_INTERN => "internal error",
        MPI_ERR_IN_STATUS => "error code is in status",
        MPI_ERR_REQUEST => "invalid request",
        MPI_ERR_SPAWN => "spawn failed",
        MPI_ERR_PORT => "invalid port name",
        MPI_ERR_SERVICE => "invalid service name: already published, or not published for that port",
        MPI_ERR_NAME => "no port is published under that service name",
        MPI_ERR_UNSUPPORTED_OPERATION => "operation not supported by pertinax's MPI library yet",
        MPI_ERR_ERRHANDLER => "invalid error handler",
        MPI_ERR_KEYVAL => "invalid keyval",
        MPI_ERR_ACCESS => "permission denied, or the file was not opened for that access",
        MPI_ERR_AMODE => "invalid file access mode",
        MPI_ERR_BAD_FILE => "invalid file name",
        MPI_ERR_FILE => "invalid file handle",
        MPI_ERR_FILE_EXISTS => "file exists (MPI_MODE_EXCL)",
        MPI_ERR_FILE_IN_USE => "file in use",
        MPI_ERR_IO => "I/O error",
        MPI_ERR_NO_SPACE => "no space left on the file system",
        MPI_ERR_NO_SUCH_FILE => "no such file",
        MPI_ERR_QUOTA => "quota exceeded",
        MPI_ERR_READ_ONLY => "file or file system is read-only",
        MPI_ERR_UNSUPPORTED_DATAREP => "unsupported data representation (only \"native\")",
        MPI_ERR_NOT_SAME => "arguments differ among the processes of a collective call",
        MPIX_ERR_PROC_FAILED => "a process in the operation failed",
        MPIX_ERR_PROC_FAILED_PENDING => {
            "a process failed: the any-source operation is pending until the failure is acknowledged"
        }
        MPIX_ERR_REVOKED => "the communicator was revoked",
        _ => "unknown error",
    }
}

/// Hands `code` (not `MPI_SUCCESS`) from call `what` on communicator
/// `comm` to its error handler; what the call returns.
pub(crate) fn raise(comm: c_int, what: &str, code: c_int) -> c_int {
    if code == MPI_SUCCESS {
        return code;
    }
    // An invalid communicator's error goes to the world's handler.
    let handler = state::with(|s| {
        let of = |c: c_int| {
            state::comm_index(c)
                .and_then(|i| s.comms.get(i))
                .and_then(|e| e.as_ref())
                .map(|e| e.errhandler)
        };
        of(comm)
            .or_else(|| of(MPI_COMM_WORLD))
            .unwrap_or(MPI_ERRORS_ARE_FATAL)
    })
    .unwrap_or(MPI_ERRORS_ARE_FATAL);
    invoke(handler, comm, what, code)
}

/// Hands `code` from call `what` to error handler `handler` of the object
/// whose handle is `handle` (a communicator, or a session: a user
/// function gets the handle); what the call returns.
pub(crate) fn invoke(handler: c_int, handle: c_int, what: &str, code: c_int) -> c_int {
    match handler {
        MPI_ERRORS_RETURN => code,
        MPI_ERRORS_ARE_FATAL | MPI_ERRORS_ABORT => fatal(what, code),
        h => {
            match with_table(|t| slot(t, h).map(|e| e.f)).flatten() {
                Some(f) => {
                    let (mut c, mut k) = (handle, code);
                    // SAFETY: the program registered `f` with
                    // `MPI_Comm_create_errhandler` (or the session's) for
                    // this signature.
                    unsafe { f(&mut c, &mut k) };
                    code
                }
                None => fatal(what, code),
            }
        }
    }
}

/// Hands `code` from call `what` to error handler `handler` of file
/// `fh` (a user function gets a pointer to the file handle, as
/// `MPI_File_errhandler_function` takes); what the call returns.
pub(crate) fn invoke_file(
    handler: c_int,
    fh: *mut std::ffi::c_void,
    what: &str,
    code: c_int,
) -> c_int {
    match handler {
        MPI_ERRORS_RETURN => code,
        MPI_ERRORS_ARE_FATAL | MPI_ERRORS_ABORT => fatal(what, code),
        h => match with_table(|t| slot(t, h).map(|e| e.f)).flatten() {
            Some(f) => {
                let (mut p, mut k) = (fh, code);
                // SAFETY: the program registered `f` with
                // `MPI_File_create_errhandler`: `void f(MPI_File *, int *,
                // ...)`, whose first parameter is a pointer like the
                // stored type's.
                unsafe { f((&raw mut p).cast::<c_int>(), &mut k) };
                code
            }
            None => fatal(what, code),
        },
    }
}

/// `MPI_ERRORS_ARE_FATAL`: says why, and ends the job.
fn fatal(what: &str, code: c_int) -> ! {
    let message = format!("{what}: {} (error class {code})", describe(code));
    let _ = state::with(|s| s.universe.abort(code, &message));
    // No state (not joined, or the state is borrowed): this process.
    eprintln!("pertinax MPI: {message}");
    std::process::exit(code)
}

/// What a function this library does not implement returns: through the
/// communicator's error handler (`MPI_COMM_WORLD`'s when it takes none).
/// The tool interface's calls (`MPI_T_*`) invoke no error handler, as
/// MPI says: they return `MPI_T_ERR_NOT_SUPPORTED`.
pub fn unsupported(what: &'static str, comm: c_int) -> c_int {
    LAST_UNSUPPORTED.with(|l| l.set(Some(what)));
    if what.starts_with("MPI_T_") {
        return MPI_T_ERR_NOT_SUPPORTED;
    }
    let comm = if state::comm_index(comm).is_some() {
        comm
    } else {
        MPI_COMM_WORLD
    };
    raise(comm, what, MPI_ERR_UNSUPPORTED_OPERATION)
}

/// Copies `text` (truncated, NUL-terminated) into a C buffer of `cap`
/// bytes and writes its length to `len`.
///
/// # Safety
/// `out` must be valid for `cap` bytes; `len` valid for an int (or null).
pub(crate) unsafe fn copy_out(text: &str, out: *mut c_char, cap: usize, len: *mut c_int) {
    let n = text.len().min(cap.saturating_sub(1));
    if !out.is_null() && cap > 0 {
        // SAFETY: `out` holds `cap` bytes by the caller's contract and
        // `n + 1 <= cap`.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), out.cast::<u8>(), n);
            *out.add(n) = 0;
        }
    }
    if !len.is_null() {
        // SAFETY: valid for an int by the caller's contract.
        unsafe { *len = n as c_int };
    }
}

/// The last function that answered `MPI_ERR_UNSUPPORTED_OPERATION`,
/// which that class's text names.
static LAST_UNSUPPORTED: Serial<std::cell::Cell<Option<&'static str>>> =
    Serial::new(std::cell::Cell::new(None));
/// Why the last spawn failed (pertinax's words), which
/// `MPI_ERR_SPAWN`'s text gives.
static LAST_SPAWN: Serial<std::cell::RefCell<Option<String>>> =
    Serial::new(std::cell::RefCell::new(None));

/// Records why a spawn failed, for `MPI_ERR_SPAWN`'s text.
pub(crate) fn spawn_failed(why: String) {
    LAST_SPAWN.with(|l| *l.borrow_mut() = Some(why));
}

/// The text of an error class, naming the last unsupported call, or why
/// the last spawn failed.
fn describe(code: c_int) -> String {
    if let Some(t) = crate::errclass::text_of(code) {
        return t;
    }
    if code == MPI_ERR_SPAWN {
        if let Some(why) = LAST_SPAWN.with(|l| l.borrow().clone()) {
            return format!("{} (last: {why})", text(code));
        }
    }
    match LAST_UNSUPPORTED.with(std::cell::Cell::get) {
        Some(f) if code == MPI_ERR_UNSUPPORTED_OPERATION => format!("{} (last: {f})", text(code)),
        _ => text(code).to_string(),
    }
}

crate::mpi! {
    /// `MPI_Error_string`: the text of an error class.
    fn PMPI_Error_string(code: c_int, out: *mut c_char, len: *mut c_int) -> c_int as MPI_Error_string {
        // SAFETY: MPI's contract: `out` holds MPI_MAX_ERROR_STRING bytes.
        unsafe { copy_out(&describe(code), out, MPI_MAX_ERROR_STRING, len) };
        MPI_SUCCESS
    }
}

crate::mpi! {
    /// `MPI_Error_class`: a predefined code is its class; a user code's
    /// class is the one it was added to.
    fn PMPI_Error_class(code: c_int, class: *mut c_int) -> c_int as MPI_Error_class {
        let found = if (0..=MPI_ERR_LASTCODE).contains(&code) {
            Some(code)
        } else {
            crate::errclass::class_of(code)
        };
        let (false, Some(found)) = (class.is_null(), found) else {
            return raise(MPI_COMM_WORLD, "MPI_Error_class", MPI_ERR_ARG);
        };
        // SAFETY: checked non-null; MPI's contract makes it writable.
        unsafe { *class = found };
        MPI_SUCCESS
    }
}

crate::mpi! {
    /// `MPI_Comm_set_errhandler`.
    fn PMPI_Comm_set_errhandler(comm: c_int, errhandler: c_int) -> c_int as MPI_Comm_set_errhandler {
        if !usable(errhandler) {
            return raise(comm, "MPI_Comm_set_errhandler", MPI_ERR_ERRHANDLER);
        }
        let set = state::with(|s| {
            let e = state::comm_index(comm).and_then(|i| s.comms.get_mut(i)?.as_mut())?;
            let old = std::mem::replace(&mut e.errhandler, errhandler);
            attach_in(&mut s.errhandlers, errhandler);
            detach_in(&mut s.errhandlers, old);
            Some(())
        })
        .flatten();
        match set {
            Some(()) => MPI_SUCCESS,
            None => raise(MPI_COMM_WORLD, "MPI_Comm_set_errhandler", MPI_ERR_COMM),
        }
    }
}

crate::mpi! {
    /// `MPI_Comm_get_errhandler`: a new handle of the communicator's
    /// handler (the program frees it with `MPI_Errhandler_free`).
    fn PMPI_Comm_get_errhandler(comm: c_int, errhandler: *mut c_int) -> c_int as MPI_Comm_get_errhandler {
        let h = state::with(|s| {
            state::comm_index(comm)
                .and_then(|i| s.comms.get(i)?.as_ref())
                .map(|e| e.errhandler)
        })
        .flatten();
        match h {
            Some(h) if !errhandler.is_null() => {
                new_handle(h);
                // SAFETY: checked non-null; MPI's contract makes it writable.
                unsafe { *errhandler = h };
                MPI_SUCCESS
            }
            Some(_) => raise(comm, "MPI_Comm_get_errhandler", MPI_ERR_ARG),
            None => raise(MPI_COMM_WORLD, "MPI_Comm_get_errhandler", MPI_ERR_COMM),
        }
    }
}

crate::mpi! {
    /// `MPI_Comm_create_errhandler`: a user function
    /// `void f(MPI_Comm *, int *, ...)`.
    fn PMPI_Comm_create_errhandler(f: Option<UserErrhandler>, errhandler: *mut c_int) -> c_int as MPI_Comm_create_errhandler {
        let (Some(f), false) = (f, errhandler.is_null()) else {
            return raise(MPI_COMM_WORLD, "MPI_Comm_create_errhandler", MPI_ERR_ARG);
        };
        let Some(h) = create(f) else {
            return raise(MPI_COMM_WORLD, "MPI_Comm_create_errhandler", MPI_ERR_OTHER);
        };
        // SAFETY: checked non-null; MPI's contract makes it writable.
        unsafe { *errhandler = h };
        MPI_SUCCESS
    }
}

crate::mpi! {
    /// `MPI_Errhandler_free`: the handle becomes `MPI_ERRHANDLER_NULL`;
    /// communicators and sessions that use the handler keep it until they
    /// are freed. A predefined handler's handle (which
    /// `MPI_Comm_get_errhandler` may give) is freed as well; an invalid or
    /// freed handle, `MPI_ERRHANDLER_NULL` among them, is
    /// `MPI_ERR_ERRHANDLER`.
    fn PMPI_Errhandler_free(errhandler: *mut c_int) -> c_int as MPI_Errhandler_free {
        if errhandler.is_null() {
            return raise(MPI_COMM_WORLD, "MPI_Errhandler_free", MPI_ERR_ARG);
        }
        // SAFETY: checked non-null; MPI's contract makes it readable.
        let h = unsafe { *errhandler };
        if !predefined(h) && !free_handle(h) {
            return raise(MPI_COMM_WORLD, "MPI_Errhandler_free", MPI_ERR_ERRHANDLER);
        }
        // SAFETY: as above, and writable.
        unsafe { *errhandler = MPI_ERRHANDLER_NULL };
        MPI_SUCCESS
    }
}

/// User error handlers made before the library's state existed
/// (`MPI_Session_create_errhandler` may come first), at the indices
/// their handles name; the state takes them ([`early_handlers`]).
static EARLY: Serial<RefCell<Vec<Option<Errhandler>>>> = Serial::new(RefCell::new(Vec::new()));

/// The handlers made before the state, for its table.
pub(crate) fn early_handlers() -> Vec<Option<Errhandler>> {
    EARLY.with(|e| std::mem::take(&mut *e.borrow_mut()))
}

/// Runs `f` on the table of user handlers: the state's, or before the
/// state exists the early one (`None` only when neither is reachable).
fn with_table<R>(f: impl FnOnce(&mut Vec<Option<Errhandler>>) -> R) -> Option<R> {
    let mut f = Some(f);
    state::with(|s| f.take().map(|f| f(&mut s.errhandlers)))
        .flatten()
        .or_else(|| f.take().map(|f| EARLY.with(|e| f(&mut e.borrow_mut()))))
}

/// The user handler of handle `eh` in `table`.
fn slot(table: &mut [Option<Errhandler>], eh: c_int) -> Option<&mut Errhandler> {
    table.get_mut(state::errhandler_index(eh)?)?.as_mut()
}

/// Whether `eh` is a predefined handler.
fn predefined(eh: c_int) -> bool {
    matches!(
        eh,
        MPI_ERRORS_ARE_FATAL | MPI_ERRORS_RETURN | MPI_ERRORS_ABORT
    )
}

/// A new user handler calling `f`, with one handle (the program's); its
/// handle.
pub(crate) fn create(f: UserErrhandler) -> Option<c_int> {
    let e = Errhandler {
        f,
        handles: 1,
        users: 0,
    };
    with_table(|t| ERRHANDLER_DIRECT | state::insert(t, e) as c_int)
}

/// Whether a call may take handle `eh`: a predefined handler, or a user
/// one whose handles are not all freed.
pub(crate) fn usable(eh: c_int) -> bool {
    predefined(eh) || with_table(|t| slot(t, eh).is_some_and(|e| e.handles > 0)).unwrap_or(false)
}

/// `eh` is set on one more communicator or session (`table`: the state's,
/// borrowed by the caller). Nothing for a predefined handler.
pub(crate) fn attach_in(table: &mut [Option<Errhandler>], eh: c_int) {
    if let Some(e) = slot(table, eh) {
        e.users += 1;
    }
}

/// `eh` is set on one fewer; its slot is freed when no handle and no
/// user is left.
pub(crate) fn detach_in(table: &mut [Option<Errhandler>], eh: c_int) {
    if let Some(e) = slot(table, eh) {
        e.users = e.users.saturating_sub(1);
        release(table, eh);
    }
}

/// [`attach_in`] on the table, for a caller that does not hold the state.
pub(crate) fn attach(eh: c_int) {
    with_table(|t| attach_in(t, eh));
}

/// [`detach_in`] on the table, for a caller that does not hold the state
/// (a freed communicator or session).
pub(crate) fn detach(eh: c_int) {
    with_table(|t| detach_in(t, eh));
}

/// The program got one more handle of `eh` (`MPI_*_get_errhandler`).
pub(crate) fn new_handle(eh: c_int) {
    with_table(|t| {
        if let Some(e) = slot(t, eh) {
            e.handles += 1;
        }
    });
}

/// Frees one of the program's handles of user handler `eh`; `false` when
/// `eh` names none (invalid, or every handle freed already).
fn free_handle(eh: c_int) -> bool {
    with_table(|t| {
        let Some(e) = slot(t, eh).filter(|e| e.handles > 0) else {
            return false;
        };
        e.handles -= 1;
        release(t, eh);
        true
    })
    .unwrap_or(false)
}

/// Frees `eh`'s slot if no handle and no user is left.
fn release(table: &mut [Option<Errhandler>], eh: c_int) {
    let Some(i) = state::errhandler_index(eh) else {
        return;
    };
    if let Some(s) = table.get_mut(i) {
        if s.is_some_and(|e| e.handles == 0 && e.users == 0) {
            *s = None;
        }
    }
}
