//! Sessions (MPI 4): `MPI_Session_init` and `_finalize`, the process sets
//! `mpi://WORLD` and `mpi://SELF`, groups from them and communicators
//! from groups (`MPI_Comm_create_from_group`), the sessions' error
//! handlers and their buffers for buffered sends.
//!
//! A session needs the job: the first `MPI_Session_init` joins it as
//! `MPI_Init` does ([`crate::env::join`]), and the World model may start
//! before or after, in any order. The process leaves the job when the
//! last of the two ends: `MPI_Finalize` with no session left, or the last
//! `MPI_Session_finalize` once `MPI_Finalize` ran (or `MPI_Init` never
//! did). pertinax joins a job once, so a session (or `MPI_Init`) after
//! that fails with `MPI_ERR_OTHER`.
//!
//! Sessions live in a table here (handle `0xb8000000 |
//! index`). Errors on a session go to its error handler (the one given to
//! `MPI_Session_init`, or set since); errors on `MPI_SESSION_NULL` or a
//! finalized session are `MPI_ERR_SESSION`, through `MPI_COMM_SELF`'s.
//! `MPI_Session_create_errhandler` works before any session (its handler
//! can be given to `MPI_Session_init`).
//!
//! Process sets: `mpi://WORLD` (this process's `MPI_COMM_WORLD`: the job,
//! or the processes spawned together) and `mpi://SELF`; their info holds
//! `mpi_size`. A session's info holds `thread_level`: the process's
//! level, which the call that joined the job fixed (the first session's
//! `thread_level` key asks for one, `MPI_THREAD_FUNNELED` without it; see
//! `serial.rs`).
//!
//! `MPI_Comm_create_from_group` is `MPI_Comm_create_group` over the
//! world with a tag made from the string tag (a hash: two concurrent
//! creations whose tags collide are told apart by their groups only),
//! collective over the group's members only; the new communicator gets
//! the error handler given (`MPI_ERRHANDLER_NULL`: `MPI_ERRORS_ARE_FATAL`).
//!
//! Buffers (MPI 4.1): a session holds at most one attached buffer
//! (`MPI_BUFFER_AUTOMATIC` too); buffered sends on a communicator made
//! from one of the session's groups are bounded by it (see
//! [`bsend_room`]). pertinax's buffered sends leave from its own copy at
//! once, so flushing has nothing to wait for: `MPI_Session_flush_buffer`
//! returns, `MPI_Session_iflush_buffer` gives a completed request.

use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_void, CStr, CString};

use pertinax::{Comm, Rank, Tag};

use crate::check::out;
use crate::consts::*;
use crate::errors::{code_of, invoke, raise};
use crate::info::MPI_INFO_NULL;
use crate::large::MPI_Count;
use crate::p2p::comm_of;
use crate::serial::Serial;
use crate::state::{self, ReqEntry, UserErrhandler};

/// A session made here: this prefix and its index.
const SESSION_DIRECT: c_int = 0xb800_0000_u32 as c_int;
const INDEX: c_int = 0x03ff_ffff;

/// The process sets, by number.
const PSETS: [&str; 2] = ["mpi://WORLD", "mpi://SELF"];

/// A buffer attached to a session: its address and size in bytes
/// (`MPI_BUFFER_AUTOMATIC`: size 0, no bound).
#[derive(Clone, Copy)]
struct Buffer {
    addr: *mut c_void,
    size: MPI_Count,
}

struct Session {
    errhandler: c_int,
    buffer: Option<Buffer>,
}

static SESSIONS: Serial<RefCell<Vec<Option<Session>>>> = Serial::new(RefCell::new(Vec::new()));
/// Groups made from a session's process set, and communicators made
/// from those groups: (handle, session), with the communicator to see
/// that its handle was freed.
static GROUPS: Serial<RefCell<Vec<(c_int, c_int)>>> = Serial::new(RefCell::new(Vec::new()));
static COMMS: Serial<RefCell<Vec<(c_int, Comm, c_int)>>> = Serial::new(RefCell::new(Vec::new()));

/// How many sessions are live.
pub(crate) fn live() -> usize {
    SESSIONS.with(|t| t.borrow().iter().flatten().count())
}

fn index(h: c_int) -> Option<usize> {
    (h & !INDEX == SESSION_DIRECT).then_some((h & INDEX) as usize)
}

/// Runs `f` on session `h`; `MPI_ERR_SESSION` for an invalid handle.
fn with_session<R>(h: c_int, f: impl FnOnce(&mut Session) -> R) -> Result<R, c_int> {
    let i = index(h).ok_or(MPI_ERR_SESSION)?;
    SESSIONS.with(|t| {
        t.borrow_mut()
            .get_mut(i)
            .and_then(Option::as_mut)
            .map(f)
            .ok_or(MPI_ERR_SESSION)
    })
}

/// Hands `code` from call `what` on session `h` to its error handler
/// (`MPI_COMM_SELF`'s for an invalid session).
fn raise_session(h: c_int, what: &str, code: c_int) -> c_int {
    if code == MPI_SUCCESS {
        return code;
    }
    match with_session(h, |s| s.errhandler) {
        Ok(eh) => invoke(eh, h, what, code),
        Err(_) => raise(MPI_COMM_SELF, what, code),
    }
}

/// Runs `f` for call `what` on session `h`: its error goes to the
/// session's handler.
fn call(h: c_int, what: &str, f: impl FnOnce() -> Result<(), c_int>) -> c_int {
    match with_session(h, |_| ()).and_then(|()| f()) {
        Ok(()) => MPI_SUCCESS,
        Err(code) => raise_session(h, what, code),
    }
}

/// Whether `eh` names an error handler (predefined or made here, its
/// handle not freed).
fn known_errhandler(eh: c_int) -> bool {
    crate::errors::usable(eh)
}

/// A pset's communicator (`MPI_ERR_ARG` for an unknown name).
///
/// # Safety
/// `name` is null or a NUL-terminated string.
unsafe fn pset(name: *const c_char) -> Result<Comm, c_int> {
    if name.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: non-null and NUL-terminated by the caller's contract.
    let name = unsafe { CStr::from_ptr(name) }.to_bytes();
    match name {
        b"mpi://WORLD" => comm_of(MPI_COMM_WORLD),
        b"mpi://SELF" => comm_of(MPI_COMM_SELF),
        _ => Err(MPI_ERR_ARG),
    }
}

/// A new info object holding `pairs`; its handle.
fn new_info(pairs: &[(&str, String)]) -> Result<c_int, c_int> {
    let mut h = MPI_INFO_NULL;
    // SAFETY: `h` is a local.
    let rc = unsafe { crate::info::PMPI_Info_create(&mut h) };
    if rc != MPI_SUCCESS {
        return Err(rc);
    }
    for (k, v) in pairs {
        let (k, v) = (
            CString::new(*k).map_err(|_| MPI_ERR_INTERN)?,
            CString::new(v.as_str()).map_err(|_| MPI_ERR_INTERN)?,
        );
        // SAFETY: NUL-terminated strings.
        let rc = unsafe { crate::info::PMPI_Info_set(h, k.as_ptr(), v.as_ptr()) };
        if rc != MPI_SUCCESS {
            return Err(rc);
        }
    }
    Ok(h)
}

crate::mpi! {
    /// `MPI_Session_init`: a session with error handler `errhandler`
    /// (joining the job first if this process has not); `info` is not read.
    fn PMPI_Session_init(info: c_int, errhandler: c_int, session: *mut c_int) -> c_int as MPI_Session_init {
        let rc = crate::env::join("MPI_Session_init", thread_level_asked(info));
        if rc != MPI_SUCCESS {
            return invoke(errhandler_or_fatal(errhandler), MPI_SESSION_NULL, "MPI_Session_init", rc);
        }
        if !known_errhandler(errhandler) {
            return raise(MPI_COMM_SELF, "MPI_Session_init", MPI_ERR_ERRHANDLER);
        }
        if session.is_null() {
            return invoke(errhandler, MPI_SESSION_NULL, "MPI_Session_init", MPI_ERR_ARG);
        }
        crate::errors::attach(errhandler);
        let i = SESSIONS.with(|t| state::insert(&mut t.borrow_mut(), Session { errhandler, buffer: None }));
        // SAFETY: checked non-null; writable by MPI's contract.
        unsafe { *session = SESSION_DIRECT | i as c_int };
        MPI_SUCCESS
    }
}

/// The thread level `info`'s `thread_level` asks (`MPI_THREAD_SINGLE`
/// ... `MPI_THREAD_MULTIPLE`, in any case); `MPI_THREAD_FUNNELED` (what
/// `MPI_Init` gives) without one.
fn thread_level_asked(info: c_int) -> c_int {
    if info == MPI_INFO_NULL {
        return MPI_THREAD_FUNNELED;
    }
    let Ok(info) = crate::info::info_of(info) else {
        return MPI_THREAD_FUNNELED;
    };
    let asked = info.get(b"thread_level").map(|v| v.to_ascii_uppercase());
    match asked.as_deref() {
        Some(b"MPI_THREAD_SINGLE") => MPI_THREAD_SINGLE,
        Some(b"MPI_THREAD_SERIALIZED") => MPI_THREAD_SERIALIZED,
        Some(b"MPI_THREAD_MULTIPLE") => MPI_THREAD_MULTIPLE,
        _ => MPI_THREAD_FUNNELED,
    }
}

/// `errhandler` if it is a predefined one, else `MPI_ERRORS_ARE_FATAL`
/// (for errors before the state exists).
fn errhandler_or_fatal(eh: c_int) -> c_int {
    if matches!(eh, MPI_ERRORS_RETURN | MPI_ERRORS_ABORT) {
        eh
    } else {
        MPI_ERRORS_ARE_FATAL
    }
}

crate::mpi! {
    /// `MPI_Session_finalize`: the handle becomes `MPI_SESSION_NULL`; the
    /// last session leaves the job unless the World model is on (see the
    /// module's documentation).
    fn PMPI_Session_finalize(session: *mut c_int) -> c_int as MPI_Session_finalize {
        if session.is_null() {
            return raise(MPI_COMM_SELF, "MPI_Session_finalize", MPI_ERR_ARG);
        }
        // SAFETY: checked non-null; MPI's contract makes it readable.
        let h = unsafe { *session };
        let Some(i) = index(h).filter(|_| with_session(h, |_| ()).is_ok()) else {
            return raise_session(h, "MPI_Session_finalize", MPI_ERR_SESSION);
        };
        if let Some(s) = SESSIONS.with(|t| t.borrow_mut()[i].take()) {
            crate::errors::detach(s.errhandler);
        }
        GROUPS.with(|g| g.borrow_mut().retain(|&(_, s)| s != h));
        COMMS.with(|c| c.borrow_mut().retain(|(_, _, s)| *s != h));
        // SAFETY: checked non-null.
        unsafe { *session = MPI_SESSION_NULL };
        let world_on = state::INITIALIZED.load(std::sync::atomic::Ordering::SeqCst)
            && !state::FINALIZED.load(std::sync::atomic::Ordering::SeqCst);
        if live() == 0 && !world_on {
            return crate::env::teardown("MPI_Session_finalize");
        }
        MPI_SUCCESS
    }
}

crate::mpi! {
    /// `MPI_Session_get_num_psets`: 2 (`mpi://WORLD`, `mpi://SELF`).
    fn PMPI_Session_get_num_psets(session: c_int, _info: c_int, npset_names: *mut c_int) -> c_int as MPI_Session_get_num_psets {
        // SAFETY: MPI's contract: null or writable.
        call(session, "MPI_Session_get_num_psets", || unsafe { out(npset_names, PSETS.len() as c_int) })
    }
}

crate::mpi! {
    /// `MPI_Session_get_nth_pset`: the name of set `n` (0 or 1; else
    /// `MPI_ERR_ARG`). `*pset_len` 0 asks for the length only; otherwise
    /// at most `*pset_len - 1` bytes and a NUL are written. `*pset_len`
    /// becomes the name's length plus one (its NUL) in both cases.
    fn PMPI_Session_get_nth_pset(session: c_int, _info: c_int, n: c_int, pset_len: *mut c_int, pset_name: *mut c_char) -> c_int as MPI_Session_get_nth_pset {
        call(session, "MPI_Session_get_nth_pset", || {
            let name = usize::try_from(n).ok().and_then(|n| PSETS.get(n)).ok_or(MPI_ERR_ARG)?;
            if pset_len.is_null() {
                return Err(MPI_ERR_ARG);
            }
            // SAFETY: checked non-null; MPI's contract: readable.
            let cap = unsafe { *pset_len };
            if cap < 0 {
                return Err(MPI_ERR_ARG);
            }
            if cap > 0 {
                if pset_name.is_null() {
                    return Err(MPI_ERR_ARG);
                }
                // SAFETY: MPI's contract: `pset_name` holds `*pset_len`
                // bytes.
                unsafe { crate::errors::copy_out(name, pset_name, cap as usize, std::ptr::null_mut()) };
            }
            // SAFETY: checked non-null.
            unsafe { *pset_len = name.len() as c_int + 1 };
            Ok(())
        })
    }
}

crate::mpi! {
    /// `MPI_Session_get_pset_info`: a new info object with `mpi_size`.
    fn PMPI_Session_get_pset_info(session: c_int, pset_name: *const c_char, info: *mut c_int) -> c_int as MPI_Session_get_pset_info {
        call(session, "MPI_Session_get_pset_info", || {
            // SAFETY: MPI's contract: a string.
            let c = unsafe { pset(pset_name) }?;
            if info.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let h = new_info(&[("mpi_size", c.size().to_string())])?;
            // SAFETY: checked non-null.
            unsafe { *info = h };
            Ok(())
        })
    }
}

crate::mpi! {
    /// `MPI_Session_get_info`: a new info object with `thread_level`.
    fn PMPI_Session_get_info(session: c_int, info_used: *mut c_int) -> c_int as MPI_Session_get_info {
        call(session, "MPI_Session_get_info", || {
            if info_used.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let h = new_info(&[("thread_level", crate::serial::level_name().into())])?;
            // SAFETY: checked non-null.
            unsafe { *info_used = h };
            Ok(())
        })
    }
}

crate::mpi! {
    /// `MPI_Group_from_session_pset`: the group of `mpi://WORLD` or
    /// `mpi://SELF` (`MPI_ERR_ARG` for another name).
    fn PMPI_Group_from_session_pset(session: c_int, pset_name: *const c_char, newgroup: *mut c_int) -> c_int as MPI_Group_from_session_pset {
        call(session, "MPI_Group_from_session_pset", || {
            // SAFETY: MPI's contract: a string.
            let c = unsafe { pset(pset_name) }?;
            if newgroup.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let h = crate::comm::add_group(c.group())?;
            GROUPS.with(|g| {
                let mut g = g.borrow_mut();
                g.retain(|&(gh, _)| gh != h);
                g.push((h, session));
            });
            // SAFETY: checked non-null.
            unsafe { *newgroup = h };
            Ok(())
        })
    }
}

/// A tag (0 to `TAG_UB`) for string tag `s`: FNV-1a, the same in every
/// process.
fn tag_of(s: &[u8]) -> Tag {
    let h = s.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    Tag((h % (pertinax::TAG_UB as u64 + 1)) as i32)
}

crate::mpi! {
    /// `MPI_Comm_create_from_group`: a communicator of the members of
    /// `group` (processes of this `MPI_COMM_WORLD`; `MPI_ERR_GROUP`
    /// otherwise, or when the caller is not a member), collective over
    /// them only; see the module's documentation.
    fn PMPI_Comm_create_from_group(group: c_int, stringtag: *const c_char, _info: c_int, errhandler: c_int, newcomm: *mut c_int) -> c_int as MPI_Comm_create_from_group {
        let eh = if errhandler == MPI_ERRHANDLER_NULL { MPI_ERRORS_ARE_FATAL } else { errhandler };
        let made = (|| {
            if !known_errhandler(eh) {
                return Err(MPI_ERR_ERRHANDLER);
            }
            if stringtag.is_null() || newcomm.is_null() {
                return Err(MPI_ERR_ARG);
            }
            // SAFETY: MPI's contract: a NUL-terminated string.
            let tag = tag_of(unsafe { CStr::from_ptr(stringtag) }.to_bytes());
            let g = crate::comm::group_of(group)?;
            let world = comm_of(MPI_COMM_WORLD)?;
            let ranks = crate::groups::parent_ranks(&world, &g)?;
            let me = g.rank().ok_or(crate::groups::MPI_ERR_GROUP)?;
            let c = crate::groups::create_group(&world, &ranks, me.index(), tag)?;
            let h = state::with(|s| s.add_comm(c.clone(), eh)).ok_or(MPI_ERR_OTHER)?;
            if let Some(s) = GROUPS.with(|t| t.borrow().iter().find(|&&(gh, _)| gh == group).map(|&(_, s)| s)) {
                COMMS.with(|t| {
                    let mut t = t.borrow_mut();
                    t.retain(|(ch, _, _)| *ch != h);
                    t.push((h, c, s));
                });
            }
            // SAFETY: checked non-null; writable by MPI's contract.
            unsafe { *newcomm = h };
            Ok(())
        })();
        match made {
            Ok(()) => MPI_SUCCESS,
            Err(code) => invoke(if known_errhandler(eh) { eh } else { MPI_ERRORS_ARE_FATAL }, MPI_COMM_NULL, "MPI_Comm_create_from_group", code),
        }
    }
}

crate::mpi! {
    /// `MPI_Intercomm_create_from_groups`: each group's members make their
    /// communicator (as `MPI_Comm_create_from_group`), whose
    /// `local_leader` then meets the other group's over this
    /// `MPI_COMM_WORLD` (on its internal context, never the program's
    /// messages), as `MPI_Intercomm_create` does. Both groups are
    /// processes of this `MPI_COMM_WORLD` (`MPI_ERR_GROUP` otherwise, or
    /// when the caller is not in `local_group`); collective over both.
    fn PMPI_Intercomm_create_from_groups(local_group: c_int, local_leader: c_int, remote_group: c_int, remote_leader: c_int, stringtag: *const c_char, _info: c_int, errhandler: c_int, newintercomm: *mut c_int) -> c_int as MPI_Intercomm_create_from_groups {
        let eh = if errhandler == MPI_ERRHANDLER_NULL { MPI_ERRORS_ARE_FATAL } else { errhandler };
        let made = (|| {
            if !known_errhandler(eh) {
                return Err(MPI_ERR_ERRHANDLER);
            }
            if stringtag.is_null() || newintercomm.is_null() {
                return Err(MPI_ERR_ARG);
            }
            // SAFETY: MPI's contract: a NUL-terminated string.
            let tag = tag_of(unsafe { CStr::from_ptr(stringtag) }.to_bytes());
            let (lg, rg) = (crate::comm::group_of(local_group)?, crate::comm::group_of(remote_group)?);
            let world = comm_of(MPI_COMM_WORLD)?;
            let (lranks, rranks) = (crate::groups::parent_ranks(&world, &lg)?, crate::groups::parent_ranks(&world, &rg)?);
            let me = lg.rank().ok_or(crate::groups::MPI_ERR_GROUP)?;
            let in_range = |r: c_int, n: usize| usize::try_from(r).ok().filter(|&r| r < n);
            let leader = in_range(local_leader, lranks.len()).ok_or(MPI_ERR_RANK)?;
            let remote = in_range(remote_leader, rranks.len()).ok_or(MPI_ERR_RANK)?;
            let local = crate::groups::create_group(&world, &lranks, me.index(), tag)?;
            let ic = local
                .intercomm_create(Rank(leader as i32), &world, rranks[remote], tag)
                .map_err(|e| code_of(&e))?;
            let h = state::with(|s| s.add_comm(ic, eh)).ok_or(MPI_ERR_OTHER)?;
            // SAFETY: checked non-null; writable by MPI's contract.
            unsafe { *newintercomm = h };
            Ok(())
        })();
        match made {
            Ok(()) => MPI_SUCCESS,
            Err(code) => invoke(if known_errhandler(eh) { eh } else { MPI_ERRORS_ARE_FATAL }, MPI_COMM_NULL, "MPI_Intercomm_create_from_groups", code),
        }
    }
}

crate::mpi! {
    /// `MPI_Session_create_errhandler`: a user function
    /// `void f(MPI_Session *, int *, ...)`; callable before any session.
    fn PMPI_Session_create_errhandler(f: Option<UserErrhandler>, errhandler: *mut c_int) -> c_int as MPI_Session_create_errhandler {
        let (Some(f), false) = (f, errhandler.is_null()) else {
            return raise(MPI_COMM_SELF, "MPI_Session_create_errhandler", MPI_ERR_ARG);
        };
        let Some(h) = crate::errors::create(f) else {
            return raise(MPI_COMM_SELF, "MPI_Session_create_errhandler", MPI_ERR_OTHER);
        };
        // SAFETY: checked non-null; MPI's contract makes it writable.
        unsafe { *errhandler = h };
        MPI_SUCCESS
    }
}

crate::mpi! {
    /// `MPI_Session_set_errhandler`.
    fn PMPI_Session_set_errhandler(session: c_int, errhandler: c_int) -> c_int as MPI_Session_set_errhandler {
        call(session, "MPI_Session_set_errhandler", || {
            if !known_errhandler(errhandler) {
                return Err(MPI_ERR_ERRHANDLER);
            }
            let old = with_session(session, |s| std::mem::replace(&mut s.errhandler, errhandler))?;
            crate::errors::attach(errhandler);
            crate::errors::detach(old);
            Ok(())
        })
    }
}

crate::mpi! {
    /// `MPI_Session_get_errhandler`: a new handle of the session's handler
    /// (the program frees it with `MPI_Errhandler_free`).
    fn PMPI_Session_get_errhandler(session: c_int, errhandler: *mut c_int) -> c_int as MPI_Session_get_errhandler {
        call(session, "MPI_Session_get_errhandler", || {
            let eh = with_session(session, |s| s.errhandler)?;
            // SAFETY: MPI's contract: null or writable.
            unsafe { out(errhandler, eh) }?;
            crate::errors::new_handle(eh);
            Ok(())
        })
    }
}

crate::mpi! {
    /// `MPI_Session_call_errhandler`: hands `code` to the session's error
    /// handler; `MPI_SUCCESS` when the handler returns.
    fn PMPI_Session_call_errhandler(session: c_int, code: c_int) -> c_int as MPI_Session_call_errhandler {
        if let Err(e) = with_session(session, |_| ()) {
            return raise(MPI_COMM_SELF, "MPI_Session_call_errhandler", e);
        }
        raise_session(session, "MPI_Session_call_errhandler", code);
        MPI_SUCCESS
    }
}

/// What bounds a buffered send on `comm`: `Some(bytes)` when `comm` was
/// made from a session's group and that session has a buffer attached
/// (`usize::MAX` for `MPI_BUFFER_AUTOMATIC`); `None` otherwise (the
/// process's buffer bounds it).
pub(crate) fn bsend_room(comm: c_int) -> Option<usize> {
    let s = COMMS.with(|t| {
        t.borrow()
            .iter()
            .find(|(h, c, _)| *h == comm && !c.is_freed())
            .map(|&(_, _, s)| s)
    })?;
    let b = with_session(s, |s| s.buffer).ok().flatten()?;
    Some(if b.addr == MPI_BUFFER_AUTOMATIC {
        usize::MAX
    } else {
        usize::try_from(b.size).unwrap_or(0)
    })
}

fn attach(session: c_int, addr: *mut c_void, size: MPI_Count) -> Result<(), c_int> {
    let size = if addr == MPI_BUFFER_AUTOMATIC {
        0
    } else {
        size
    };
    if size < 0 {
        return Err(MPI_ERR_BUFFER);
    }
    with_session(session, |s| match s.buffer {
        Some(_) => Err(MPI_ERR_BUFFER),
        None => {
            s.buffer = Some(Buffer { addr, size });
            Ok(())
        }
    })?
}

/// Detaches the session's buffer: its address and size.
fn detach(session: c_int) -> Result<Buffer, c_int> {
    with_session(session, |s| s.buffer.take())?.ok_or(MPI_ERR_BUFFER)
}

crate::mpi! {
    /// `MPI_Session_attach_buffer` (`MPI_ERR_BUFFER` when one is attached
    /// already, or for a negative size).
    fn PMPI_Session_attach_buffer(session: c_int, buffer: *mut c_void, size: c_int) -> c_int as MPI_Session_attach_buffer {
        call(session, "MPI_Session_attach_buffer", || attach(session, buffer, size.into()))
    }
}

crate::mpi! {
    /// `MPI_Session_attach_buffer_c`.
    fn PMPI_Session_attach_buffer_c(session: c_int, buffer: *mut c_void, size: MPI_Count) -> c_int as MPI_Session_attach_buffer_c {
        call(session, "MPI_Session_attach_buffer_c", || attach(session, buffer, size))
    }
}

crate::mpi! {
    /// `MPI_Session_detach_buffer`: the buffer's address (through a
    /// `void **`) and size (0 for `MPI_BUFFER_AUTOMATIC`);
    /// `MPI_ERR_BUFFER` when none is attached. Nothing waits (see the
    /// module's documentation).
    fn PMPI_Session_detach_buffer(session: c_int, buffer_addr: *mut c_void, size: *mut c_int) -> c_int as MPI_Session_detach_buffer {
        call(session, "MPI_Session_detach_buffer", || {
            if buffer_addr.is_null() || size.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let b = detach(session)?;
            // SAFETY: checked non-null; MPI's contract: a `void **` and an
            // `int *`.
            unsafe {
                *buffer_addr.cast::<*mut c_void>() = b.addr;
                *size = c_int::try_from(b.size).unwrap_or(c_int::MAX);
            }
            Ok(())
        })
    }
}

crate::mpi! {
    /// `MPI_Session_detach_buffer_c`.
    fn PMPI_Session_detach_buffer_c(session: c_int, buffer_addr: *mut c_void, size: *mut MPI_Count) -> c_int as MPI_Session_detach_buffer_c {
        call(session, "MPI_Session_detach_buffer_c", || {
            if buffer_addr.is_null() || size.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let b = detach(session)?;
            // SAFETY: checked non-null; MPI's contract: a `void **` and an
            // `MPI_Count *`.
            unsafe {
                *buffer_addr.cast::<*mut c_void>() = b.addr;
                *size = b.size;
            }
            Ok(())
        })
    }
}

crate::mpi! {
    /// `MPI_Session_flush_buffer`: returns (buffered sends are on their
    /// way already).
    fn PMPI_Session_flush_buffer(session: c_int) -> c_int as MPI_Session_flush_buffer {
        call(session, "MPI_Session_flush_buffer", || Ok(()))
    }
}

crate::mpi! {
    /// `MPI_Session_iflush_buffer`: a request complete at once.
    fn PMPI_Session_iflush_buffer(session: c_int, request: *mut c_int) -> c_int as MPI_Session_iflush_buffer {
        call(session, "MPI_Session_iflush_buffer", || {
            if request.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let h = state::with(|s| {
                REQUEST_DIRECT | state::insert(&mut s.requests, ReqEntry::Done(crate::p2p::empty())) as c_int
            })
            .ok_or(MPI_ERR_OTHER)?;
            // SAFETY: checked non-null.
            unsafe { *request = h };
            Ok(())
        })
    }
}
