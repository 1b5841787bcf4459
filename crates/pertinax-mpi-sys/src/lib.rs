//! FFI to MPI and its ULFM extension, for pertinax's MPI backend.
//!
//! Built only with the `mpi` feature (without it this crate is empty, so
//! the default build needs no MPI, and docs.rs, which has no MPI, shows
//! this page alone). `build.rs` compiles a C shim (`shim/pxm.c`;
//! `shim/pxm_spawn.c` for groups, intercommunicators and spawn: `Group`,
//! `parent`, `Comm::spawn`; `shim/pxm_progress.c` for the progress hook,
//! `with_progress`; `shim/pxm_revoke_fix.c`) with the include directories
//! of the MPI's compiler wrapper (`$PERTINAX_MPICC`, `$MPICC`, or `mpicc` on `PATH`) and links the
//! MPI. The shim exposes only C scalars and pointers: MPI handles cross as
//! `intptr_t` (addresses of globals in Open MPI, integers in MPICH), a
//! status as `Status`. Hence no bindgen and no libclang: the one thing
//! that must match the MPI is compiled by its own headers.
//!
//! The safe layer (`Comm`, `Request`, `Status`, `Code`) is what the
//! backend uses. Functions that hand MPI a buffer it keeps after they return
//! (`isend`, `irecv`) are `unsafe`: the caller keeps the buffer alive
//! and unmoved until the request completes; they are crate-private, and `Op`
//! is their safe form (it owns the buffer until MPI is done).
//!
//! Errors are MPI error codes (`Code`); `Code::kind` classifies them
//! (ULFM's `MPIX_ERR_PROC_FAILED`, `MPIX_ERR_PROC_FAILED_PENDING`,
//! `MPIX_ERR_REVOKED`, truncation). Every communicator the backend uses
//! must have `MPI_ERRORS_RETURN` (`Comm::errors_return`), or an error
//! aborts the job instead of returning here.
#![warn(missing_docs)]
#![cfg(feature = "mpi")]

use std::ffi::c_int;

mod coll;
mod ffi;
mod hook;
mod op;
mod spawn;

pub use coll::{
    coll_now, Args, Builtin, Coll, CollKind, Input, Layout, Outcome, Prim, Reduction, UserFn,
};
pub use hook::{has_progress_hook, with_progress};
pub use op::{Message, Op, RecvData, SendData};
pub use spawn::{parent, proc_null, root, Group, SpawnError};

/// An MPI error code (never `MPI_SUCCESS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Code(pub i32);

/// What an error code means to a fault-tolerant caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `MPIX_ERR_PROC_FAILED`: a process the operation needs has failed.
    ProcFailed,
    /// `MPIX_ERR_PROC_FAILED_PENDING`: an any-source receive while a
    /// failure is not acknowledged (the request is still pending).
    ProcFailedPending,
    /// `MPIX_ERR_REVOKED`: the communicator was revoked.
    Revoked,
    /// `MPI_ERR_TRUNCATE`: the message was longer than the buffer.
    Truncated,
    /// Anything else.
    Other,
}

impl Code {
    /// The error class of this code.
    pub fn class(self) -> i32 {
        // SAFETY: MPI_Error_class reads an int; valid before MPI_Init too.
        unsafe { ffi::pxm_error_class(self.0) }
    }

    /// What the code means (by its class).
    pub fn kind(self) -> Kind {
        let c = self.class();
        // SAFETY: these return compile-time constants of the MPI headers.
        let (pf, pfp, rv, tr) = unsafe {
            (
                ffi::pxm_err_proc_failed(),
                ffi::pxm_err_proc_failed_pending(),
                ffi::pxm_err_revoked(),
                ffi::pxm_err_truncate(),
            )
        };
        match c {
            _ if c == pf => Kind::ProcFailed,
            _ if c == pfp => Kind::ProcFailedPending,
            _ if c == rv => Kind::Revoked,
            _ if c == tr => Kind::Truncated,
            _ => Kind::Other,
        }
    }

    /// The MPI's description of the code.
    pub fn message(self) -> String {
        let mut buf = [0u8; 512];
        // SAFETY: the shim writes at most `cap` bytes including the NUL.
        let rc =
            unsafe { ffi::pxm_error_string(self.0, buf.as_mut_ptr().cast(), buf.len() as c_int) };
        if rc != 0 {
            return format!("MPI error {}", self.0);
        }
        let n = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        String::from_utf8_lossy(&buf[..n]).into_owned()
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (MPI error {})", self.message(), self.0)
    }
}

/// A result of an MPI call.
pub type Result<T> = std::result::Result<T, Code>;

fn check(rc: c_int) -> Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(Code(rc))
    }
}

/// What MPI says of a completed receive or probe.
pub use ffi::Status;

impl Status {
    /// A zeroed status (to be filled by MPI).
    pub const EMPTY: Status = Status {
        source: -1,
        tag: -1,
        error: 0,
        cancelled: 0,
        bytes: -1,
    };
}

// ---- process ---------------------------------------------------------------

/// Levels of thread support.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threads {
    /// `MPI_THREAD_SINGLE`.
    Single,
    /// `MPI_THREAD_FUNNELED`.
    Funneled,
}

/// `MPI_Init_thread` with no arguments; returns the level provided.
///
/// # Errors
/// The MPI's code if it cannot start.
pub fn init_thread(required: Threads) -> Result<i32> {
    // SAFETY: constants.
    let req = unsafe {
        match required {
            Threads::Single => ffi::pxm_thread_single(),
            Threads::Funneled => ffi::pxm_thread_funneled(),
        }
    };
    let mut provided: c_int = 0;
    // SAFETY: MPI_Init_thread(NULL, NULL, ..) writes `provided`; calling
    // it twice is an MPI error, returned as a code (the caller checks
    // `initialized` first).
    check(unsafe { ffi::pxm_init_thread(req, &mut provided) })?;
    Ok(provided)
}

/// Arms the guard against Open MPI 5.0.10/5.0.11's segmentation fault when
/// a failure is noticed while a communicator is being created
/// (`shim/pxm_revoke_fix.c` says what it does and why); returns whether it
/// is armed: only on the Open MPI layout it knows, checked on the world.
/// Call once, after `init_thread`.
pub fn arm_revoke_guard() -> bool {
    // SAFETY: reads MPI's version and two fields of MPI_COMM_WORLD, whose
    // layout the C side checks before it trusts it; MPI is initialized.
    unsafe { ffi::pxm_revoke_fix_arm() != 0 }
}

/// How many times the guard of [`arm_revoke_guard`] stood in for a missing
/// collective table (each time, a crash of Open MPI's avoided).
pub fn revoke_guard_loans() -> u64 {
    // SAFETY: reads a counter.
    unsafe { ffi::pxm_revoke_fix_loans() }
}

/// Whether `MPI_Init` was called.
pub fn initialized() -> bool {
    let mut f: c_int = 0;
    // SAFETY: callable at any time; writes `f`.
    unsafe { ffi::pxm_initialized(&mut f) };
    f != 0
}

/// Whether `MPI_Finalize` was called.
pub fn finalized() -> bool {
    let mut f: c_int = 0;
    // SAFETY: callable at any time; writes `f`.
    unsafe { ffi::pxm_finalized(&mut f) };
    f != 0
}

/// `MPI_Finalize`.
///
/// # Errors
/// The MPI's code.
pub fn finalize() -> Result<()> {
    // SAFETY: no argument; an out-of-order call is an MPI error code.
    check(unsafe { ffi::pxm_finalize() })
}

/// `MPI_Abort` on `comm`.
pub fn abort(comm: Comm, code: i32) {
    // SAFETY: a handle from this crate; MPI_Abort normally does not return.
    unsafe { ffi::pxm_abort(comm.0, code) };
}

/// The MPI library's version line.
pub fn library_version() -> String {
    let mut buf = [0u8; 512];
    // SAFETY: the shim writes at most `cap` bytes including the NUL.
    let rc = unsafe { ffi::pxm_library_version(buf.as_mut_ptr().cast(), buf.len() as c_int) };
    if rc != 0 {
        return String::new();
    }
    let n = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// Tells every process of the launcher's session, through PMIx, that
/// process `rank` of job namespace `nspace` died (`shim/pxm_tell.c`): Open
/// MPI 5 with PRRTE 3 tells only the dead process's own job, and a process
/// of another job (a spawn's parents and children) may never learn of it
/// otherwise. Open MPI's own handler marks the process failed wherever it
/// was not known to be.
///
/// # Errors
/// The shim's or PMIx's status: `-1` without PMIx in this process (or
/// without a PMIx identity), `-2` for a namespace that is empty, too long
/// or holds a NUL, else PMIx's error.
pub fn tell_failed(nspace: &str, rank: u32) -> std::result::Result<(), i32> {
    let Ok(ns) = std::ffi::CString::new(nspace) else {
        return Err(-2);
    };
    // SAFETY: `ns` is NUL-terminated and outlives the call, which only
    // reads it.
    match unsafe { ffi::pxm_tell_failed(ns.as_ptr(), rank) } {
        // PMIX_SUCCESS, PMIX_OPERATION_SUCCEEDED.
        0 | -157 => Ok(()),
        rc => Err(rc),
    }
}

/// `MPI_ANY_SOURCE`.
pub fn any_source() -> i32 {
    // SAFETY: constant.
    unsafe { ffi::pxm_any_source() }
}

/// `MPI_ANY_TAG`.
pub fn any_tag() -> i32 {
    // SAFETY: constant.
    unsafe { ffi::pxm_any_tag() }
}

/// `MPI_UNDEFINED`.
pub fn undefined() -> i32 {
    // SAFETY: constant.
    unsafe { ffi::pxm_undefined() }
}

// ---- communicators ---------------------------------------------------------

/// An MPI communicator handle (not freed on drop: see [`Comm::free`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Comm(isize);

impl Comm {
    /// `MPI_COMM_WORLD`.
    pub fn world() -> Comm {
        // SAFETY: the address/value of a predefined handle.
        Comm(unsafe { ffi::pxm_comm_world() })
    }

    /// `MPI_COMM_SELF`.
    pub fn self_() -> Comm {
        // SAFETY: as above.
        Comm(unsafe { ffi::pxm_comm_self() })
    }

    /// `MPI_COMM_NULL`.
    pub fn null() -> Comm {
        // SAFETY: as above.
        Comm(unsafe { ffi::pxm_comm_null() })
    }

    /// Whether this is `MPI_COMM_NULL`.
    pub fn is_null(self) -> bool {
        self == Comm::null()
    }

    /// Sets `MPI_ERRORS_RETURN` on the communicator.
    ///
    /// # Errors
    /// The MPI's code.
    pub fn errors_return(self) -> Result<()> {
        // SAFETY: a handle from this crate (MPI checks it).
        check(unsafe { ffi::pxm_comm_errors_return(self.0) })
    }

    /// This process's rank.
    ///
    /// # Errors
    /// The MPI's code.
    pub fn rank(self) -> Result<i32> {
        let mut r: c_int = 0;
        // SAFETY: writes `r`.
        check(unsafe { ffi::pxm_comm_rank(self.0, &mut r) })?;
        Ok(r)
    }

    /// The number of processes (of the local group).
    ///
    /// # Errors
    /// The MPI's code.
    pub fn size(self) -> Result<i32> {
        let mut r: c_int = 0;
        // SAFETY: writes `r`.
        check(unsafe { ffi::pxm_comm_size(self.0, &mut r) })?;
        Ok(r)
    }

    /// `MPI_Comm_dup` (collective), with `MPI_ERRORS_RETURN` inherited.
    ///
    /// # Errors
    /// The MPI's code (ULFM: `ProcFailed` / `Revoked`).
    pub fn dup(self) -> Result<Comm> {
        let mut out: isize = 0;
        // SAFETY: writes `out`.
        check(unsafe { ffi::pxm_comm_dup(self.0, &mut out) })?;
        Ok(Comm(out))
    }

    /// `MPI_Comm_split`; a negative color is `MPI_UNDEFINED` (the result is
    /// then [`Comm::null`]).
    ///
    /// # Errors
    /// The MPI's code.
    pub fn split(self, color: i32, key: i32) -> Result<Comm> {
        let mut out: isize = 0;
        // SAFETY: writes `out`.
        check(unsafe { ffi::pxm_comm_split(self.0, color, key, &mut out) })?;
        Ok(Comm(out))
    }

    /// The communicator of `ranks` of this one, in that order
    /// (`MPI_Comm_create_group`: collective over those ranks only).
    ///
    /// # Errors
    /// The MPI's code.
    pub fn create_group(self, ranks: &[i32], tag: i32) -> Result<Comm> {
        let mut out: isize = 0;
        let n = c_int::try_from(ranks.len()).map_err(|_| Code(-1))?;
        // SAFETY: `ranks` holds `n` ints, read during the call only.
        check(unsafe { ffi::pxm_comm_create_group(self.0, ranks.as_ptr(), n, tag, &mut out) })?;
        Ok(Comm(out))
    }

    /// The communicator of `ranks` of `MPI_COMM_WORLD`, in that order,
    /// made without a parent (`MPI_Comm_create_from_group`: collective over
    /// those processes only, so failures elsewhere in the world do not
    /// stop it), with `MPI_ERRORS_RETURN`. `tag` must be unique among
    /// concurrent creations over overlapping groups.
    ///
    /// # Errors
    /// The MPI's code.
    pub fn from_world_ranks(ranks: &[i32], tag: &str) -> Result<Comm> {
        let mut out: isize = 0;
        let n = c_int::try_from(ranks.len()).map_err(|_| Code(-1))?;
        let tag = std::ffi::CString::new(tag).map_err(|_| Code(-1))?;
        // SAFETY: `ranks` holds `n` ints and `tag` is NUL-terminated; both
        // are read during the call only.
        check(unsafe {
            ffi::pxm_comm_from_world_ranks(ranks.as_ptr(), n, tag.as_ptr(), &mut out)
        })?;
        Ok(Comm(out))
    }

    /// `MPI_Comm_free`: the handle becomes [`Comm::null`].
    ///
    /// # Errors
    /// The MPI's code.
    pub fn free(&mut self) -> Result<()> {
        // SAFETY: reads and writes the handle.
        check(unsafe { ffi::pxm_comm_free(&mut self.0) })
    }

    /// The ranks in `self` of `ranks` of `other` ([`undefined`] if absent).
    ///
    /// # Errors
    /// The MPI's code.
    pub fn translate_from(self, other: Comm, ranks: &[i32]) -> Result<Vec<i32>> {
        let mut out = vec![0; ranks.len()];
        let n = c_int::try_from(ranks.len()).map_err(|_| Code(-1))?;
        // SAFETY: `ranks` and `out` hold `n` ints each.
        check(unsafe {
            ffi::pxm_translate_ranks(other.0, n, ranks.as_ptr(), self.0, out.as_mut_ptr())
        })?;
        Ok(out)
    }

    // ---- ULFM ----

    /// `MPIX_Comm_revoke`.
    ///
    /// # Errors
    /// The MPI's code.
    pub fn revoke(self) -> Result<()> {
        // SAFETY: a handle.
        check(unsafe { ffi::pxm_comm_revoke(self.0) })
    }

    /// `MPIX_Comm_is_revoked`.
    ///
    /// # Errors
    /// The MPI's code.
    pub fn is_revoked(self) -> Result<bool> {
        let mut f: c_int = 0;
        // SAFETY: writes `f`.
        check(unsafe { ffi::pxm_comm_is_revoked(self.0, &mut f) })?;
        Ok(f != 0)
    }

    /// `MPIX_Comm_shrink` (collective over the survivors).
    ///
    /// # Errors
    /// The MPI's code.
    pub fn shrink(self) -> Result<Comm> {
        let mut out: isize = 0;
        // SAFETY: writes `out`.
        check(unsafe { ffi::pxm_comm_shrink(self.0, &mut out) })?;
        Ok(Comm(out))
    }

    /// `MPIX_Comm_agree`: the bitwise AND of `flag` over the survivors.
    /// `Err` with `ProcFailed` (and the agreed flag in the `Ok` of a retry)
    /// when a failure was not acknowledged; see ULFM.
    ///
    /// # Errors
    /// The MPI's code, with the agreed value.
    pub fn agree(self, flag: i32) -> std::result::Result<i32, (Code, i32)> {
        let mut f: c_int = flag;
        // SAFETY: reads and writes `f`.
        let rc = unsafe { ffi::pxm_comm_agree(self.0, &mut f) };
        if rc == 0 {
            Ok(f)
        } else {
            Err((Code(rc), f))
        }
    }

    /// `MPIX_Comm_iagree`: starts the agreement [`Comm::agree`] makes,
    /// without waiting; [`IAgree::test`] tells when it ends.
    ///
    /// # Errors
    /// The MPI's code when the agreement cannot start.
    pub fn iagree(self, flag: i32) -> Result<IAgree> {
        let mut flag = Box::new(flag as c_int);
        let mut req = Request::null();
        // SAFETY: `flag` is on the heap and owned by the returned value,
        // whose drop waits for the request before freeing it; writes
        // `req`.
        check(unsafe { ffi::pxm_comm_iagree(self.0, &mut *flag, &mut req.0) })?;
        Ok(IAgree {
            req,
            flag,
            done: None,
        })
    }

    /// `MPIX_Comm_ack_failed`: acknowledges the first `n` failures known;
    /// returns how many are acknowledged.
    ///
    /// # Errors
    /// The MPI's code.
    pub fn ack_failed(self, n: i32) -> Result<i32> {
        let mut acked: c_int = 0;
        // SAFETY: writes `acked`.
        check(unsafe { ffi::pxm_comm_ack_failed(self.0, n, &mut acked) })?;
        Ok(acked)
    }

    /// `MPIX_Comm_get_failed`: the ranks (in this communicator) of the
    /// members known failed, in the MPI's order.
    ///
    /// # Errors
    /// The MPI's code.
    pub fn get_failed(self) -> Result<Vec<i32>> {
        let mut n: c_int = 0;
        let mut ranks = vec![0; 16];
        loop {
            let cap = c_int::try_from(ranks.len()).map_err(|_| Code(-1))?;
            // SAFETY: `ranks` holds `cap` ints; the shim writes at most
            // `cap` and reports the total in `n`.
            check(unsafe { ffi::pxm_comm_get_failed(self.0, ranks.as_mut_ptr(), cap, &mut n) })?;
            let n = usize::try_from(n).unwrap_or(0);
            if n <= ranks.len() {
                ranks.truncate(n);
                return Ok(ranks);
            }
            ranks = vec![0; n];
        }
    }
}

// ---- point-to-point and requests -------------------------------------------

/// An MPI request handle; [`Request::is_null`] once completed or freed.
/// Crate-private: a request holding a buffer must keep it until complete,
/// which [`Op`] guarantees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Request(isize);

impl Request {
    /// `MPI_REQUEST_NULL`.
    pub(crate) fn null() -> Request {
        // SAFETY: the address/value of a predefined handle.
        Request(unsafe { ffi::pxm_request_null() })
    }

    /// Whether this is `MPI_REQUEST_NULL`.
    pub(crate) fn is_null(self) -> bool {
        self == Request::null()
    }

    /// `MPI_Test`: `Some(status)` once complete (the handle becomes null).
    /// A request that completed with an error gives `Ok(Some(st))` with
    /// `st.error` set, so the caller sees both the status and the error.
    ///
    /// # Errors
    /// The MPI's code when the test itself fails while the request is
    /// still pending (ULFM: `ProcFailedPending` for an any-source receive).
    pub(crate) fn test(&mut self) -> Result<Option<Status>> {
        let mut flag: c_int = 0;
        let mut st = Status::EMPTY;
        // SAFETY: reads and writes the handle, `flag` and `st`.
        let rc = unsafe { ffi::pxm_test(&mut self.0, &mut flag, &mut st) };
        if flag != 0 {
            Ok(Some(st))
        } else {
            check(rc).map(|()| None)
        }
    }

    /// `MPI_Wait`: the status (its `error` set if the request failed).
    pub(crate) fn wait(&mut self) -> Status {
        let mut st = Status::EMPTY;
        // SAFETY: reads and writes the handle and `st`.
        unsafe { ffi::pxm_wait(&mut self.0, &mut st) };
        st
    }

    /// `MPI_Wait` with the status ignored: the request's error code (for
    /// a request whose status says nothing more, such as an agreement's).
    pub(crate) fn wait_code(&mut self) -> c_int {
        // SAFETY: reads and writes the handle.
        unsafe { ffi::pxm_wait_code(&mut self.0) }
    }

    /// `MPI_Cancel` (the request must still be completed or freed).
    ///
    /// # Errors
    /// The MPI's code.
    pub(crate) fn cancel(&mut self) -> Result<()> {
        // SAFETY: reads and writes the handle.
        check(unsafe { ffi::pxm_cancel(&mut self.0) })
    }
}

/// An agreement started by [`Comm::iagree`]: the flag MPI writes lives
/// here until the request completes (a drop waits for it).
#[derive(Debug)]
pub struct IAgree {
    req: Request,
    flag: Box<c_int>,
    /// The error code once [`IAgree::wait`] completed it.
    done: Option<c_int>,
}

impl IAgree {
    /// Blocks until the agreement ended (`MPI_Wait`); [`IAgree::test`]
    /// then gives its outcome.
    pub fn wait(&mut self) {
        if self.req.is_null() || self.done.is_some() {
            return;
        }
        self.done = Some(self.req.wait_code());
    }

    /// `None` while the agreement runs; once it ended, the agreed flag, or
    /// the MPI's code with the flag (`MPIX_ERR_PROC_FAILED`: a member
    /// failed, the flag is still agreed; see [`Comm::agree`]).
    pub fn test(&mut self) -> Option<std::result::Result<i32, (Code, i32)>> {
        if let Some(e) = self.done {
            return Some(match e {
                0 => Ok(*self.flag),
                e => Err((Code(e), *self.flag)),
            });
        }
        if self.req.is_null() {
            return Some(Err((Code(-1), *self.flag)));
        }
        let st = match self.req.test() {
            Ok(None) => return None,
            Ok(Some(st)) => st,
            // The test itself failed with the agreement still pending:
            // wait for its end.
            Err(_) => self.req.wait(),
        };
        Some(match st.error {
            0 => Ok(*self.flag),
            e => Err((Code(e), *self.flag)),
        })
    }

    /// Stops waiting for an agreement whose outcome is known otherwise:
    /// the request and the flag MPI writes at its end are leaked, never
    /// freed (MPI forbids freeing or cancelling a non-blocking
    /// collective's request), so the agreement may still end inside MPI,
    /// and its messages to the other members go on, without this process
    /// waiting for it.
    pub fn abandon(self) {
        std::mem::forget(self);
    }
}

impl Drop for IAgree {
    fn drop(&mut self) {
        if !self.req.is_null() && !crate::finalized() {
            let _ = self.req.wait();
        }
    }
}

/// `MPI_Isend` of `len` bytes at `buf` to `dest` with `tag`.
///
/// # Safety
/// `buf..buf+len` must stay valid and unchanged until the request has
/// completed.
///
/// # Errors
/// The MPI's code (`MPI_ERR_COUNT` above `i32::MAX` bytes).
pub(crate) unsafe fn isend(
    buf: *const u8,
    len: usize,
    dest: i32,
    tag: i32,
    comm: Comm,
) -> Result<Request> {
    let mut r: isize = 0;
    // SAFETY: the caller keeps the buffer alive; the shim writes `r`.
    check(unsafe { ffi::pxm_isend(buf.cast(), len, dest, tag, comm.0, &mut r) })?;
    Ok(Request(r))
}

/// `MPI_Issend` of `len` bytes at `buf` to `dest` with `tag`: complete
/// once a receive matched it.
///
/// # Safety
/// As [`isend`].
///
/// # Errors
/// As [`isend`].
pub(crate) unsafe fn issend(
    buf: *const u8,
    len: usize,
    dest: i32,
    tag: i32,
    comm: Comm,
) -> Result<Request> {
    let mut r: isize = 0;
    // SAFETY: the caller keeps the buffer alive; the shim writes `r`.
    check(unsafe { ffi::pxm_issend(buf.cast(), len, dest, tag, comm.0, &mut r) })?;
    Ok(Request(r))
}

/// Messages on a point-to-point communicator of at most this many bytes
/// travel as themselves; a longer one as an envelope of [`ENVELOPE`] bytes
/// announcing its length, followed at once by the payload (same source,
/// tag and communicator). A receiver so never hands MPI a buffer shorter
/// than the message it matches: a first message is at most [`ENVELOPE`]
/// bytes and goes into a buffer at least that long, and a payload's
/// length is known before it is received. That keeps Open MPI 5.0.x's
/// single copy (`smsc/cma`) from writing a truncated rendezvous message
/// past the buffer (`checks/truncate.c`) while receives stay `MPI_Recv` /
/// `MPI_Irecv`, not a matched probe each. Must equal the shim's
/// `PXM_SMALL` ([`small_in_shim`]).
pub const SMALL: usize = 1024;

/// The length of an envelope: a message of exactly this many bytes on a
/// point-to-point communicator is one (a message this long is sent as an
/// envelope and a payload, like any longer one).
pub const ENVELOPE: usize = SMALL + 1;

/// The shim's `PXM_SMALL` (equal to [`SMALL`]; a test checks it).
pub fn small_in_shim() -> usize {
    // SAFETY: returns a constant.
    unsafe { ffi::pxm_small() as usize }
}

/// A blocking send of a whole message: `MPI_Send` of `data`, preceded by
/// its envelope when longer than [`SMALL`].
///
/// # Errors
/// The MPI's code.
#[inline]
pub fn send(data: &[u8], dest: i32, tag: i32, comm: Comm) -> Result<()> {
    // SAFETY: MPI reads `data` during the call only.
    check(unsafe { ffi::pxm_send(data.as_ptr().cast(), data.len(), dest, tag, comm.0) })
}

/// The envelope announcing a message of `len` bytes (more than
/// [`SMALL`]): send it, then the payload at once, to the same destination
/// with the same tag, both non-blocking (a blocking send of the envelope
/// could wait for its receiver: Open MPI's `self` transport sends eagerly
/// only up to 1 KiB with its header).
pub fn envelope(len: usize) -> Box<[u8]> {
    let mut e = vec![0u8; ENVELOPE].into_boxed_slice();
    // SAFETY: the shim writes exactly ENVELOPE bytes (its PXM_ENVELOPE,
    // equal to ours: `small_in_shim`).
    unsafe { ffi::pxm_envelope(len, e.as_mut_ptr().cast()) };
    e
}

/// Receives an envelope matched by [`improbe`] (its status says
/// [`ENVELOPE`] bytes) and returns the length of the payload it announces,
/// which is the next message from that source with that tag: receive it
/// at once with [`Op::recv_payload`].
///
/// # Errors
/// The MPI's code (`MPI_ERR_INTERN` class for bytes that are no envelope).
pub fn mrecv_envelope(mut msg: Message) -> Result<usize> {
    let mut len = 0u64;
    // SAFETY: the shim receives into its own buffer and writes `msg`, `len`.
    check(unsafe { ffi::pxm_mrecv_envelope(&mut msg.0, &mut len) })?;
    usize::try_from(len).map_err(|_| Code(-1))
}

/// A blocking receive of at most `buf.len()` bytes from `src` (or
/// [`any_source`]) with `tag` (or [`any_tag`]), with MPI's semantics: a
/// message longer than `buf`, or not a whole number of `elem`-byte
/// elements, is consumed and the status's `error` is `MPI_ERR_TRUNCATE`
/// (`bytes` says how long it was). `MPI_Recv`, and a second one for an
/// envelope's payload (see [`SMALL`]); the caller makes sure no payload
/// is left for it to match (every envelope's payload is received at once).
/// A message already queued from a named source that has failed since is
/// received too (Open MPI's `MPI_Recv` refuses such a source before it
/// looks at its queue; the shim retries as `MPI_Irecv` + `MPI_Wait`,
/// `checks/recv_from_dead.c`).
///
/// # Errors
/// The receive's code (ULFM: the source failed and nothing from it is
/// queued, the communicator revoked).
#[inline]
pub fn recv(buf: &mut [u8], elem: usize, src: i32, tag: i32, comm: Comm) -> Result<Status> {
    let mut st = Status::EMPTY;
    // SAFETY: MPI writes at most `buf.len()` bytes into `buf`, during the
    // call only (a blocking receive); the shim writes `st`.
    check(unsafe {
        ffi::pxm_recv(
            buf.as_mut_ptr().cast(),
            buf.len(),
            elem,
            src,
            tag,
            comm.0,
            &mut st,
        )
    })?;
    Ok(st)
}

/// `MPI_Irecv` of at most `len` bytes into `buf` from `src` (or
/// [`any_source`]) with `tag` (or [`any_tag`]).
///
/// # Safety
/// `buf..buf+len` must stay valid, unmoved and otherwise unused until the
/// request has completed.
///
/// # Errors
/// The MPI's code.
pub(crate) unsafe fn irecv(
    buf: *mut u8,
    len: usize,
    src: i32,
    tag: i32,
    comm: Comm,
) -> Result<Request> {
    let mut r: isize = 0;
    // SAFETY: the caller keeps the buffer alive; the shim writes `r`.
    check(unsafe { ffi::pxm_irecv(buf.cast(), len, src, tag, comm.0, &mut r) })?;
    Ok(Request(r))
}

/// `MPI_Iprobe`: the status of a matching message, without receiving it.
///
/// # Errors
/// The MPI's code.
pub fn iprobe(src: i32, tag: i32, comm: Comm) -> Result<Option<Status>> {
    let mut flag: c_int = 0;
    let mut st = Status::EMPTY;
    // SAFETY: writes `flag` and `st`.
    check(unsafe { ffi::pxm_iprobe(src, tag, comm.0, &mut flag, &mut st) })?;
    Ok((flag != 0).then_some(st))
}

/// `MPI_Improbe`: takes a matching message out of MPI's queue without
/// receiving it; receive it with [`Op::mrecv`] (a message never received
/// stays with MPI until finalize).
///
/// # Errors
/// The MPI's code.
pub fn improbe(src: i32, tag: i32, comm: Comm) -> Result<Option<(Message, Status)>> {
    let mut flag: c_int = 0;
    let mut msg: isize = 0;
    let mut st = Status::EMPTY;
    // SAFETY: writes `flag`, `msg` and `st`.
    check(unsafe { ffi::pxm_improbe(src, tag, comm.0, &mut flag, &mut msg, &mut st) })?;
    Ok((flag != 0).then_some((Message(msg), st)))
}

#[cfg(test)]
mod tests {
    #[test]
    fn shim_and_crate_agree_on_the_envelope_threshold() {
        assert_eq!(super::small_in_shim(), super::SMALL);
    }
}
