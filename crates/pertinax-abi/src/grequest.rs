//! Generalized requests: `MPI_Grequest_start`, `MPI_Grequest_complete`.
//!
//! A generalized request is an entry of the request table
//! ([`ReqEntry::Generalized`]) holding the program's three callbacks and
//! their `extra_state`; the program says when it is done
//! (`MPI_Grequest_complete`). Every call that takes requests handles it
//! as MPI says:
//!
//! - the waits and tests (through `finish` in `p2p/complete.rs`) complete a done
//!   one: `query_fn` fills its status (a status of this library's own
//!   when the program's is `MPI_STATUS_IGNORE`), then `free_fn` frees it.
//!   The call's error class is `query_fn`'s result, else `free_fn`'s
//!   (raised through `MPI_COMM_WORLD`'s handler);
//!   `MPI_Waitall` and the others that take many put it in the request's
//!   status and return `MPI_ERR_IN_STATUS`;
//! - a wait on one not yet done waits for `MPI_Grequest_complete`; no
//!   other thread can call it meanwhile (under `MPI_THREAD_FUNNELED` no
//!   other thread may call; under `MPI_THREAD_SERIALIZED` the wait holds
//!   the library's lock), so a program that waits before it completes the
//!   request waits for ever, as MPI says of a single thread;
//! - `MPI_Request_get_status` (and its `_all`, `_any`, `_some` forms)
//!   calls `query_fn` only, and only once the request is done;
//! - `MPI_Cancel` calls `cancel_fn(extra_state, complete)`, `complete`
//!   telling whether `MPI_Grequest_complete` was called;
//! - `MPI_Request_free` calls `free_fn` at once when the request is done,
//!   else in `MPI_Grequest_complete` (the handle stays reserved until
//!   then, so that call still finds it); `query_fn` is then never called.
//!
//! A null callback does nothing and succeeds; the status a null
//! `query_fn` leaves is `MPI_ANY_SOURCE`, `MPI_ANY_TAG`, no
//! elements, not cancelled. No borrow of the state is held while a
//! callback runs: callbacks may call MPI.

use std::ffi::{c_int, c_void};

use crate::consts::*;
use crate::errors::raise;
use crate::p2p::{null_status, Finished};
use crate::state::{self, ReqEntry};

/// `int query_fn(void *extra_state, MPI_Status *status)`.
pub(crate) type QueryFn = unsafe extern "C" fn(*mut c_void, *mut MpiStatus) -> c_int;
/// `int free_fn(void *extra_state)`.
pub(crate) type FreeFn = unsafe extern "C" fn(*mut c_void) -> c_int;
/// `int cancel_fn(void *extra_state, int complete)`.
pub(crate) type CancelFn = unsafe extern "C" fn(*mut c_void, c_int) -> c_int;

/// A generalized request's callbacks and state.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Greq {
    query: Option<QueryFn>,
    free: Option<FreeFn>,
    cancel: Option<CancelFn>,
    extra: *mut c_void,
    /// `MPI_Grequest_complete` was called.
    complete: bool,
    /// `MPI_Request_free` was called before it was complete: freed by
    /// `MPI_Grequest_complete`.
    freed: bool,
}

/// Runs `query_fn` on a fresh status; the status, its error field the
/// callback's result.
fn query(q: Option<QueryFn>, extra: *mut c_void) -> MpiStatus {
    let mut st = null_status();
    if let Some(q) = q {
        // SAFETY: MPI's contract for the program's callback; `st` is a
        // valid status for it to fill.
        let rc = unsafe { q(extra, &mut st) };
        st.error = rc;
    }
    st
}

/// Runs `free_fn`; its result.
fn free_now(f: Option<FreeFn>, extra: *mut c_void) -> c_int {
    match f {
        // SAFETY: MPI's contract for the program's callback.
        Some(f) => unsafe { f(extra) },
        None => MPI_SUCCESS,
    }
}

/// Whether entry `i` is a generalized request that is complete.
fn complete(i: usize) -> bool {
    state::with(|s| matches!(s.requests.get(i), Some(Some(ReqEntry::Generalized(g))) if g.complete))
        .unwrap_or(false)
}

/// `finish` (in `p2p.rs`) of generalized request `g`, taken from entry
/// `i`: when done (or, if `block`, once done), its query and free
/// callbacks run and the entry is gone; otherwise it goes back.
pub(crate) fn finish(i: usize, g: Greq, block: bool) -> Result<Option<Finished>, c_int> {
    let g = if g.complete {
        g
    } else {
        state::with(|s| s.requests[i] = Some(ReqEntry::Generalized(g)));
        if !block {
            return Ok(None);
        }
        let mut b = pertinax::Backoff::default();
        while !complete(i) {
            b.snooze();
        }
        match state::with(|s| s.requests[i].take()).flatten() {
            Some(ReqEntry::Generalized(g)) => g,
            _ => return Err(MPI_ERR_REQUEST),
        }
    };
    let mut st = query(g.query, g.extra);
    let rc = free_now(g.free, g.extra);
    if st.error == MPI_SUCCESS {
        st.error = rc;
    }
    Ok(Some(Finished {
        status: st,
        comm: MPI_COMM_WORLD,
    }))
}

impl Greq {
    /// Whether `MPI_Grequest_complete` was called.
    pub(crate) fn is_complete(&self) -> bool {
        self.complete
    }
}

/// A copy of request handle `h`'s entry if it is a generalized request.
fn entry(h: c_int) -> Option<Greq> {
    let i = state::request_index(h)?;
    state::with(|s| match s.requests.get(i) {
        Some(Some(ReqEntry::Generalized(g))) => Some(*g),
        _ => None,
    })
    .flatten()
}

/// `MPI_Request_get_status` of `h` if it is a generalized request
/// (`None` otherwise): its status (from `query_fn`) when done.
pub(crate) fn peek(h: c_int) -> Option<Option<MpiStatus>> {
    let g = entry(h)?;
    Some(g.complete.then(|| query(g.query, g.extra)))
}

/// `MPI_Cancel` of `h` if it is a generalized request (`None`
/// otherwise): `cancel_fn`'s result.
pub(crate) fn cancel(h: c_int) -> Option<c_int> {
    let g = entry(h)?;
    Some(match g.cancel {
        // SAFETY: MPI's contract for the program's callback.
        Some(c) => unsafe { c(g.extra, c_int::from(g.complete)) },
        None => MPI_SUCCESS,
    })
}

/// `MPI_Request_free` of generalized request `g`, taken from entry `i`:
/// `free_fn` now if it is done (its result), else at completion.
pub(crate) fn free(i: usize, mut g: Greq) -> c_int {
    if g.complete {
        return free_now(g.free, g.extra);
    }
    g.freed = true;
    state::with(|s| s.requests[i] = Some(ReqEntry::Generalized(g)));
    MPI_SUCCESS
}

crate::mpi! {
    /// `MPI_Grequest_start`: a new generalized request, active and not
    /// done.
    fn PMPI_Grequest_start(query_fn: Option<QueryFn>, free_fn: Option<FreeFn>, cancel_fn: Option<CancelFn>, extra_state: *mut c_void, request: *mut c_int) -> c_int as MPI_Grequest_start {
        if request.is_null() {
            return raise(MPI_COMM_WORLD, "MPI_Grequest_start", MPI_ERR_ARG);
        }
        let g = Greq { query: query_fn, free: free_fn, cancel: cancel_fn, extra: extra_state, complete: false, freed: false };
        match state::with(|s| REQUEST_DIRECT | state::insert(&mut s.requests, ReqEntry::Generalized(g)) as c_int) {
            Some(h) => {
                // SAFETY: checked non-null; writable by MPI's contract.
                unsafe { *request = h };
                MPI_SUCCESS
            }
            None => raise(MPI_COMM_WORLD, "MPI_Grequest_start", MPI_ERR_OTHER),
        }
    }
}

crate::mpi! {
    /// `MPI_Grequest_complete`: the request is done (its wait may return).
    /// One `MPI_Request_free` let go of is freed now (`free_fn`'s result
    /// is this call's). `MPI_ERR_REQUEST` for a handle that is not a
    /// generalized request, or one completed already.
    fn PMPI_Grequest_complete(request: c_int) -> c_int as MPI_Grequest_complete {
        let Some(i) = state::request_index(request) else {
            return raise(MPI_COMM_WORLD, "MPI_Grequest_complete", MPI_ERR_REQUEST);
        };
        let freed = state::with(|s| match s.requests.get_mut(i) {
            Some(slot @ Some(ReqEntry::Generalized(_))) => {
                let Some(ReqEntry::Generalized(g)) = slot.as_mut() else { return Err(MPI_ERR_REQUEST) };
                if g.complete {
                    return Err(MPI_ERR_REQUEST);
                }
                g.complete = true;
                if !g.freed {
                    return Ok(None);
                }
                match slot.take() {
                    Some(ReqEntry::Generalized(g)) => Ok(Some((g.free, g.extra))),
                    _ => Err(MPI_ERR_REQUEST),
                }
            }
            _ => Err(MPI_ERR_REQUEST),
        });
        match freed {
            Some(Ok(None)) => MPI_SUCCESS,
            Some(Ok(Some((f, extra)))) => raise(MPI_COMM_WORLD, "MPI_Grequest_complete", free_now(f, extra)),
            Some(Err(code)) => raise(MPI_COMM_WORLD, "MPI_Grequest_complete", code),
            None => raise(MPI_COMM_WORLD, "MPI_Grequest_complete", MPI_ERR_OTHER),
        }
    }
}
