//! Error codes and handlers: pertinax's errors as MPI error classes, and
//! what a communicator's error handler does with them
//! (`MPI_ERRORS_ARE_FATAL` by default, `MPI_ERRORS_RETURN`,
//! `MPI_ERRORS_ABORT`, a user function).

use std::ffi::{c_char, c_int};

use pertinax::Error;

use crate::consts::*;
use crate::serial::Serial;
use crate::state;

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
        MPI_ERR_UNSUPPORTED_OPERATION => "operation not supported by pertinax's MPI library yet",
        MPI_ERR_ERRHANDLER => "invalid error handler",
        MPI_ERR_KEYVAL => "invalid keyval",
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
            let f = state::errhandler_index(h)
                .and_then(|i| state::with(|s| s.errhandlers.get(i).copied().flatten()))
                .flatten();
            match f {
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
        let known = matches!(errhandler, MPI_ERRORS_ARE_FATAL | MPI_ERRORS_RETURN | MPI_ERRORS_ABORT)
            || state::errhandler_index(errhandler)
                .and_then(|i| state::with(|s| s.errhandlers.get(i).is_some_and(Option::is_some)))
                .unwrap_or(false);
        if !known {
            return raise(comm, "MPI_Comm_set_errhandler", MPI_ERR_ERRHANDLER);
        }
        let set = state::with(|s| {
            let e = state::comm_index(comm).and_then(|i| s.comms.get_mut(i)?.as_mut())?;
            e.errhandler = errhandler;
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
    /// `MPI_Comm_get_errhandler`.
    fn PMPI_Comm_get_errhandler(comm: c_int, errhandler: *mut c_int) -> c_int as MPI_Comm_get_errhandler {
        let h = state::with(|s| {
            state::comm_index(comm)
                .and_then(|i| s.comms.get(i)?.as_ref())
                .map(|e| e.errhandler)
        })
        .flatten();
        match h {
            Some(h) if !errhandler.is_null() => {
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
    fn PMPI_Comm_create_errhandler(f: Option<state::UserErrhandler>, errhandler: *mut c_int) -> c_int as MPI_Comm_create_errhandler {
        let (Some(f), false) = (f, errhandler.is_null()) else {
            return raise(MPI_COMM_WORLD, "MPI_Comm_create_errhandler", MPI_ERR_ARG);
        };
        match state::with(|s| state::insert(&mut s.errhandlers, f)) {
            Some(i) => {
                // SAFETY: checked non-null; MPI's contract makes it writable.
                unsafe { *errhandler = ERRHANDLER_DIRECT | i as c_int };
                MPI_SUCCESS
            }
            None => MPI_ERR_OTHER,
        }
    }
}

crate::mpi! {
    /// `MPI_Errhandler_free`: the handle becomes `MPI_ERRHANDLER_NULL`;
    /// communicators that use the handler keep it. Freeing
    /// `MPI_ERRHANDLER_NULL` is `MPI_ERR_ERRHANDLER`.
    fn PMPI_Errhandler_free(errhandler: *mut c_int) -> c_int as MPI_Errhandler_free {
        if errhandler.is_null() {
            return raise(MPI_COMM_WORLD, "MPI_Errhandler_free", MPI_ERR_ARG);
        }
        // SAFETY: checked non-null; MPI's contract makes it readable and
        // writable.
        unsafe {
            if *errhandler == MPI_ERRHANDLER_NULL {
                return raise(MPI_COMM_WORLD, "MPI_Errhandler_free", MPI_ERR_ERRHANDLER);
            }
            *errhandler = MPI_ERRHANDLER_NULL;
        }
        MPI_SUCCESS
    }
}
