//! The library's state: the universe and the tables that give C handles
//! their objects. pertinax's objects are not `Send`; the state is the
//! process's all the same (`serial::Serial`), which the entry guard makes sound
//! by letting one thread at a time in (`serial.rs`).
//! No borrow of the state is held while pertinax runs: a call clones what
//! it needs and lets go, so user callbacks may call MPI again.

use std::cell::RefCell;
use std::ffi::c_int;

use pertinax::{Comm, Request, Universe};

use crate::consts::*;
use crate::serial::Serial;

/// A communicator and its error handler.
#[derive(Debug)]
pub(crate) struct CommEntry {
    pub comm: Comm,
    pub errhandler: c_int,
    /// Attributes set with user keyvals: (keyval, value).
    pub attrs: Vec<(c_int, *mut std::ffi::c_void)>,
}

/// `int copy(MPI_Comm, int keyval, void *extra, void *in, void *out, int
/// *flag)`.
pub(crate) type CopyFn = unsafe extern "C" fn(
    c_int,
    c_int,
    *mut std::ffi::c_void,
    *mut std::ffi::c_void,
    *mut std::ffi::c_void,
    *mut c_int,
) -> c_int;
/// `int delete(MPI_Comm, int keyval, void *value, void *extra)`.
pub(crate) type DeleteFn =
    unsafe extern "C" fn(c_int, c_int, *mut std::ffi::c_void, *mut std::ffi::c_void) -> c_int;

/// A user keyval (`MPI_Comm_create_keyval`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Keyval {
    pub copy: Option<CopyFn>,
    pub delete: Option<DeleteFn>,
    pub extra: *mut std::ffi::c_void,
    /// `MPI_Comm_free_keyval` was called: the handle is invalid, the
    /// attributes set with it keep their functions until deleted.
    pub freed: bool,
}

/// A request: pending in pertinax, or complete already (a receive from
/// `MPI_PROC_NULL`, a failed start) with its status.
#[derive(Debug)]
pub(crate) enum ReqEntry {
    Pending {
        req: Request<'static>,
        /// The communicator's handle (for its error handler) and the size
        /// of one element (for `MPI_Get_count`).
        comm: c_int,
        recv: bool,
        /// A copy the operation reads (an `MPI_IN_PLACE` input), kept
        /// until it completes.
        keep: Option<Box<[u8]>>,
        /// A receive into a temporary (a non-contiguous datatype): unpacked
        /// into the program's buffer when the request completes.
        unpack: Option<crate::datatype::RecvBuf>,
    },
    Done(MpiStatus),
    /// `MPIX_Comm_iagree` under way: its outcome is written to `flag`.
    Agree {
        pending: pertinax::PendingAgreement,
        flag: *mut c_int,
        comm: c_int,
    },
    /// A generalized request (`MPI_Grequest_start`): the program completes
    /// it, its callbacks fill its status and free it.
    Generalized(crate::grequest::Greq),
    /// A non-blocking operation on a resilient communicator
    /// (`pertinax run --resilient`).
    Resilient(Box<crate::resilient_req::Req>),
}

/// A user error handler: `void f(MPI_Comm *, int *, ...)`.
pub(crate) type UserErrhandler = unsafe extern "C" fn(*mut c_int, *mut c_int);

/// A user error handler and who holds it (`errors.rs` counts). Its slot
/// is freed when neither count is left: `MPI_Errhandler_free` frees a
/// handle, and a handler still set on a communicator or a session stays
/// valid for it until that object is freed, as MPI says.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Errhandler {
    pub f: UserErrhandler,
    /// The program's handles not freed: the one the create call gave, and
    /// one for each `MPI_*_get_errhandler` that returned it.
    pub handles: usize,
    /// The communicators and sessions it is set on.
    pub users: usize,
}

#[derive(Debug)]
pub(crate) struct State {
    pub universe: Universe,
    /// By index: `MPI_COMM_WORLD` (0), `MPI_COMM_SELF` (1), then
    /// communicators made here (handle `COMM_DIRECT | index`).
    pub comms: Vec<Option<CommEntry>>,
    pub requests: Vec<Option<ReqEntry>>,
    /// Groups (`MPI_Comm_group`, `MPIX_Comm_get_failed`).
    pub groups: Vec<Option<pertinax::Group>>,
    /// User error handlers (handle `ERRHANDLER_DIRECT | index`).
    pub errhandlers: Vec<Option<Errhandler>>,
    /// User keyvals (handle `KEYVAL_DIRECT | index`).
    pub keyvals: Vec<Option<Keyval>>,
    /// Messages a matched probe took (handle `MESSAGE_DIRECT | index`):
    /// their bytes and status.
    pub messages: Vec<Option<(Vec<u8>, crate::consts::MpiStatus)>>,
    /// Derived datatypes (handle `DATATYPE_DIRECT | (16 + index)`).
    pub datatypes: Vec<Option<std::rc::Rc<crate::datatype::Layout>>>,
    /// Requests `MPI_Request_free` let go of that own a temporary (a
    /// packed send, a receive to unpack): kept until they complete.
    pub detached: Vec<ReqEntry>,
}

static STATE: Serial<RefCell<Option<State>>> = Serial::new(RefCell::new(None));

/// Set by `MPI_Init`, cleared never: `MPI_Initialized` and
/// `MPI_Finalized` answer from any thread.
pub(crate) static INITIALIZED: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);
pub(crate) static FINALIZED: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

pub(crate) fn install(s: State) {
    STATE.with(|st| *st.borrow_mut() = Some(s));
}

pub(crate) fn take() -> Option<State> {
    STATE.with(|st| st.borrow_mut().take())
}

/// Runs `f` on the state; `None` before `MPI_Init`, after `MPI_Finalize`,
/// or from inside another call's borrow.
pub(crate) fn with<R>(f: impl FnOnce(&mut State) -> R) -> Option<R> {
    STATE.with(|st| st.try_borrow_mut().ok()?.as_mut().map(f))
}

/// Runs `f` on the communicator of handle `h`, borrowed (the fast paths:
/// no clone). The state stays borrowed while `f` runs: `f` must not call
/// back into the library.
#[inline(always)]
pub(crate) fn on_comm<R>(h: c_int, f: impl FnOnce(&Comm) -> R) -> Option<R> {
    let i = comm_index(h)?;
    STATE.with(
        #[inline(always)]
        |st| {
            let st = st.try_borrow().ok()?;
            let e = st.as_ref()?.comms.get(i)?.as_ref()?;
            Some(f(&e.comm))
        },
    )
}

fn index(handle: c_int, direct: c_int) -> Option<usize> {
    if handle & !0x03ff_ffff == direct {
        Some((handle & 0x03ff_ffff) as usize)
    } else {
        None
    }
}

/// The table index of a communicator handle.
pub(crate) fn comm_index(handle: c_int) -> Option<usize> {
    match handle {
        MPI_COMM_WORLD => Some(0),
        MPI_COMM_SELF => Some(1),
        h => index(h, COMM_DIRECT).filter(|&i| i >= 2),
    }
}

pub(crate) fn comm_handle(index: usize) -> c_int {
    match index {
        0 => MPI_COMM_WORLD,
        1 => MPI_COMM_SELF,
        i => COMM_DIRECT | i as c_int,
    }
}

pub(crate) fn request_index(handle: c_int) -> Option<usize> {
    index(handle, REQUEST_DIRECT)
}

pub(crate) fn group_index(handle: c_int) -> Option<usize> {
    index(handle, GROUP_DIRECT)
}

pub(crate) fn message_index(handle: c_int) -> Option<usize> {
    index(handle, MESSAGE_DIRECT)
}

pub(crate) fn keyval_index(handle: c_int) -> Option<usize> {
    index(handle, KEYVAL_DIRECT)
}

pub(crate) fn errhandler_index(handle: c_int) -> Option<usize> {
    index(handle, ERRHANDLER_DIRECT)
}

/// Puts `v` in the first free slot of `table`; its index.
pub(crate) fn insert<T>(table: &mut Vec<Option<T>>, v: T) -> usize {
    match table.iter().position(Option::is_none) {
        Some(i) => {
            table[i] = Some(v);
            i
        }
        None => {
            table.push(Some(v));
            table.len() - 1
        }
    }
}

impl State {
    /// A clone of the communicator of `handle`.
    pub(crate) fn comm(&self, handle: c_int) -> Option<Comm> {
        let i = comm_index(handle)?;
        self.comms.get(i)?.as_ref().map(|e| e.comm.clone())
    }

    /// Registers a new communicator with error handler `errhandler` (its
    /// parent's, or the one the call was given); its handle.
    pub(crate) fn add_comm(&mut self, comm: Comm, errhandler: c_int) -> c_int {
        crate::errors::attach_in(&mut self.errhandlers, errhandler);
        // Indices 0 and 1 are the predefined ones.
        while self.comms.len() < 2 {
            self.comms.push(None);
        }
        let i = match self.comms.iter().skip(2).position(Option::is_none) {
            Some(j) => j + 2,
            None => {
                self.comms.push(None);
                self.comms.len() - 1
            }
        };
        self.comms[i] = Some(CommEntry {
            comm,
            errhandler,
            attrs: Vec::new(),
        });
        comm_handle(i)
    }
}
