//! Completing requests: [`finish`] (behind `MPI_Wait`, `MPI_Test`,
//! `MPI_Waitall`, `MPI_Waitany` and `requests.rs`'s other waits and
//! tests), `MPI_Request_free` (a freed request that owns a temporary is
//! kept until it completes: [`settle`]), and progress without completion
//! ([`is_done`], [`progress`]).

use std::ffi::c_int;

use super::{null_status, of, put_status, status};
use crate::consts::*;
use crate::datatype::RecvBuf;
use crate::errors::{code_of, raise};
use crate::state::{self, ReqEntry};

/// What finishing a request gave: its status, its communicator (for the
/// error handler) and the error class.
pub(crate) struct Finished {
    pub status: MpiStatus,
    pub comm: c_int,
}

/// Takes request `handle` out of the table if `block`s or it is done;
/// `Ok(None)`: still pending (it stays).
pub(crate) fn finish(handle: c_int, block: bool) -> Result<Option<Finished>, c_int> {
    if let Some(r) = crate::persist::finish(handle, block) {
        return r;
    }
    sweep();
    let i = state::request_index(handle).ok_or(MPI_ERR_REQUEST)?;
    let e = state::with(|s| s.requests.get_mut(i).and_then(Option::take))
        .flatten()
        .ok_or(MPI_ERR_REQUEST)?;
    let (mut req, comm, recv, keep, unpack) = match e {
        ReqEntry::Done(status) => {
            return Ok(Some(Finished {
                status,
                comm: MPI_COMM_WORLD,
            }))
        }
        ReqEntry::Agree {
            pending,
            flag,
            comm,
        } => {
            return Ok(match crate::ulfm::agreed(pending, flag, block) {
                Ok(status) => Some(Finished { status, comm }),
                Err(pending) => {
                    state::with(|s| {
                        s.requests[i] = Some(ReqEntry::Agree {
                            pending,
                            flag,
                            comm,
                        })
                    });
                    None
                }
            });
        }
        ReqEntry::Generalized(g) => return crate::grequest::finish(i, g, block),
        ReqEntry::Resilient(mut r) => {
            return Ok(match r.poll(block) {
                Some(status) => Some(Finished {
                    status,
                    comm: r.comm,
                }),
                None => {
                    state::with(|s| s.requests[i] = Some(ReqEntry::Resilient(r)));
                    None
                }
            });
        }
        ReqEntry::Pending {
            req,
            comm,
            recv,
            keep,
            unpack,
        } => (req, comm, recv, keep, unpack),
    };
    let got = if block {
        req.wait().map(Some)
    } else {
        match req.test() {
            Ok(None) => {
                state::with(|s| {
                    s.requests[i] = Some(ReqEntry::Pending {
                        req,
                        comm,
                        recv,
                        keep,
                        unpack,
                    })
                });
                return Ok(None);
            }
            r => r,
        }
    };
    drop(keep);
    let status = match got {
        Ok(Some(s)) if recv => {
            if let Some(u) = unpack {
                u.finish(s.len);
            }
            of(&s)
        }
        Ok(_) => {
            // A collective's output: all of it.
            if let Some(u) = unpack {
                u.finish(usize::MAX);
            }
            status(MPI_ANY_SOURCE, MPI_ANY_TAG, 0, MPI_SUCCESS)
        }
        // A cancelled request completes normally, its status says so.
        Err(pertinax::Error::Cancelled) => MpiStatus {
            count_hi_and_cancelled: 1,
            ..status(MPI_ANY_SOURCE, MPI_ANY_TAG, 0, MPI_SUCCESS)
        },
        Err(e) => status(MPI_ANY_SOURCE, MPI_ANY_TAG, 0, code_of(&e)),
    };
    Ok(Some(Finished { status, comm }))
}

crate::mpi! {
    /// `MPI_Wait`: `MPI_REQUEST_NULL` returns at once with an empty status.
    fn PMPI_Wait(req: *mut c_int, st: *mut MpiStatus) -> c_int as MPI_Wait {
        if req.is_null() {
            return raise(MPI_COMM_WORLD, "MPI_Wait", MPI_ERR_REQUEST);
        }
        // SAFETY: checked non-null; MPI's contract makes it readable.
        let h = unsafe { *req };
        if h == MPI_REQUEST_NULL {
            // SAFETY: MPI's contract for `st`.
            unsafe { put_status(st, null_status()) };
            return MPI_SUCCESS;
        }
        match finish(h, true) {
            Ok(Some(f)) => {
                // SAFETY: MPI's contract for `req` and `st`.
                unsafe {
                    *req = crate::persist::released(h);
                    put_status(st, f.status);
                }
                raise(f.comm, "MPI_Wait", f.status.error)
            }
            Ok(None) => MPI_ERR_INTERN,
            Err(code) => raise(MPI_COMM_WORLD, "MPI_Wait", code),
        }
    }
}

crate::mpi! {
    /// `MPI_Test`.
    fn PMPI_Test(req: *mut c_int, flag: *mut c_int, st: *mut MpiStatus) -> c_int as MPI_Test {
        if req.is_null() || flag.is_null() {
            return raise(MPI_COMM_WORLD, "MPI_Test", MPI_ERR_ARG);
        }
        // SAFETY: checked non-null; MPI's contract makes it readable.
        let h = unsafe { *req };
        if h == MPI_REQUEST_NULL {
            // SAFETY: MPI's contract for `flag` and `st`.
            unsafe {
                *flag = 1;
                put_status(st, null_status());
            }
            return MPI_SUCCESS;
        }
        match finish(h, false) {
            Ok(Some(f)) => {
                // SAFETY: MPI's contract for `req`, `flag` and `st`.
                unsafe {
                    *req = crate::persist::released(h);
                    *flag = 1;
                    put_status(st, f.status);
                }
                raise(f.comm, "MPI_Test", f.status.error)
            }
            Ok(None) => {
                // SAFETY: checked non-null.
                unsafe { *flag = 0 };
                MPI_SUCCESS
            }
            Err(code) => raise(MPI_COMM_WORLD, "MPI_Test", code),
        }
    }
}

crate::mpi! {
    /// `MPI_Waitall`: every request, in order; `MPI_ERR_IN_STATUS` when one
    /// failed (each status says how, unless `MPI_STATUSES_IGNORE`).
    fn PMPI_Waitall(count: c_int, reqs: *mut c_int, sts: *mut MpiStatus) -> c_int as MPI_Waitall {
        // SAFETY: MPI's contract: `reqs` holds `count` handles.
        let n = match unsafe { crate::check::requests(count, reqs, true) } {
            Ok(n) => n,
            Err(code) => return raise(MPI_COMM_WORLD, "MPI_Waitall", code),
        };
        if n > 0 && reqs.is_null() {
            return raise(MPI_COMM_WORLD, "MPI_Waitall", MPI_ERR_ARG);
        }
        let ignore = sts.is_null() || sts as usize == STATUS_IGNORE;
        let mut failed = None;
        for i in 0..n {
            // SAFETY: MPI's contract: `reqs` (and `sts` unless ignored)
            // hold `count` entries.
            let (r, s) = unsafe { (reqs.add(i), if ignore { sts } else { sts.add(i) }) };
            // SAFETY: as above.
            let h = unsafe { *r };
            let f = if h == MPI_REQUEST_NULL {
                Finished { status: null_status(), comm: MPI_COMM_WORLD }
            } else {
                match finish(h, true) {
                    Ok(Some(f)) => f,
                    Ok(None) => continue,
                    Err(code) => return raise(MPI_COMM_WORLD, "MPI_Waitall", code),
                }
            };
            // SAFETY: as above.
            unsafe {
                *r = crate::persist::released(h);
                put_status(s, f.status);
            }
            if f.status.error != MPI_SUCCESS && failed.is_none() {
                failed = Some(f.comm);
            }
        }
        match failed {
            Some(c) => raise(c, "MPI_Waitall", MPI_ERR_IN_STATUS),
            None => MPI_SUCCESS,
        }
    }
}

crate::mpi! {
    /// `MPI_Waitany`: the first of the active requests to complete.
    fn PMPI_Waitany(count: c_int, reqs: *mut c_int, index: *mut c_int, st: *mut MpiStatus) -> c_int as MPI_Waitany {
        // SAFETY: MPI's contract: `reqs` holds `count` handles.
        let n = match unsafe { crate::check::requests(count, reqs, true) } {
            Ok(n) => n,
            Err(code) => return raise(MPI_COMM_WORLD, "MPI_Waitany", code),
        };
        if index.is_null() || (n > 0 && reqs.is_null()) {
            return raise(MPI_COMM_WORLD, "MPI_Waitany", MPI_ERR_ARG);
        }
        let mut b = pertinax::Backoff::default();
        loop {
            let mut active = false;
            for i in 0..n {
                // SAFETY: MPI's contract: `reqs` holds `count` entries.
                let r = unsafe { reqs.add(i) };
                // SAFETY: as above.
                let h = unsafe { *r };
                if h == MPI_REQUEST_NULL || crate::persist::inactive(h) {
                    continue;
                }
                active = true;
                match finish(h, false) {
                    Ok(Some(f)) => {
                        // SAFETY: MPI's contract for each pointer.
                        unsafe {
                            *r = crate::persist::released(h);
                            *index = i as c_int;
                            put_status(st, f.status);
                        }
                        return raise(f.comm, "MPI_Waitany", f.status.error);
                    }
                    Ok(None) => {}
                    Err(code) => return raise(MPI_COMM_WORLD, "MPI_Waitany", code),
                }
            }
            if !active {
                // SAFETY: checked non-null; MPI's contract for `st`.
                unsafe {
                    *index = MPI_UNDEFINED;
                    put_status(st, null_status());
                }
                return MPI_SUCCESS;
            }
            b.snooze();
        }
    }
}

crate::mpi! {
    /// `MPI_Request_free`: the operation goes on; the handle is released.
    fn PMPI_Request_free(req: *mut c_int) -> c_int as MPI_Request_free {
        if req.is_null() {
            return raise(MPI_COMM_WORLD, "MPI_Request_free", MPI_ERR_REQUEST);
        }
        // SAFETY: checked non-null; MPI's contract makes it readable.
        let h = unsafe { *req };
        if let Some(r) = crate::persist::free(h) {
            return match r {
                Ok(()) => {
                    // SAFETY: checked non-null.
                    unsafe { *req = MPI_REQUEST_NULL };
                    MPI_SUCCESS
                }
                Err(code) => raise(MPI_COMM_WORLD, "MPI_Request_free", code),
            };
        }
        let i = state::request_index(h);
        let freed = i
            .and_then(|i| state::with(|s| s.requests.get_mut(i).and_then(Option::take)))
            .flatten();
        match (freed, i) {
            (Some(ReqEntry::Generalized(g)), Some(i)) => {
                // SAFETY: checked non-null.
                unsafe { *req = MPI_REQUEST_NULL };
                raise(MPI_COMM_WORLD, "MPI_Request_free", crate::grequest::free(i, g))
            }
            (Some(e), _) => {
                // A pending request's drop lets the operation go on; one
                // that owns a temporary is kept until it completes.
                if let Some(e) = settle(e, false) {
                    state::with(|s| s.detached.push(e));
                }
                // SAFETY: checked non-null.
                unsafe { *req = MPI_REQUEST_NULL };
                MPI_SUCCESS
            }
            (None, _) => raise(MPI_COMM_WORLD, "MPI_Request_free", MPI_ERR_REQUEST),
        }
    }
}

/// Completes a freed request that owns a temporary (unpacking a
/// receive's): `Some` while it is still pending (unless `block`); one
/// that owns nothing is dropped at once (the operation goes on).
pub(crate) fn settle(e: ReqEntry, block: bool) -> Option<ReqEntry> {
    if let ReqEntry::Agree {
        pending,
        flag,
        comm,
    } = e
    {
        // The program let go of the request, not of the agreement: it
        // completes, and its flag is written, when progress allows.
        return crate::ulfm::agreed(pending, flag, block)
            .err()
            .map(|pending| ReqEntry::Agree {
                pending,
                flag,
                comm,
            });
    }
    if let ReqEntry::Resilient(mut r) = e {
        // Kept until it completes: the resilient layer's repair needs its
        // progress.
        return r.poll(block).is_none().then_some(ReqEntry::Resilient(r));
    }
    let ReqEntry::Pending {
        mut req,
        comm,
        recv,
        keep,
        unpack,
    } = e
    else {
        return None;
    };
    if keep.is_none() && unpack.is_none() {
        return None;
    }
    let unpacked = |u: Option<RecvBuf>, len: usize| {
        if let Some(u) = u {
            u.finish(if recv { len } else { usize::MAX });
        }
    };
    if block {
        if let Ok(s) = req.wait() {
            unpacked(unpack, s.len);
        }
        return None;
    }
    match req.test() {
        Ok(None) => Some(ReqEntry::Pending {
            req,
            comm,
            recv,
            keep,
            unpack,
        }),
        Ok(Some(s)) => {
            unpacked(unpack, s.len);
            None
        }
        Err(_) => None,
    }
}

/// Settles the freed requests that completed.
fn sweep() {
    let Some(all) = state::with(|s| std::mem::take(&mut s.detached)) else {
        return;
    };
    if all.is_empty() {
        return;
    }
    let left: Vec<ReqEntry> = all.into_iter().filter_map(|e| settle(e, false)).collect();
    state::with(|s| s.detached.extend(left));
}

/// Whether request `handle` is known complete (no progress is made).
pub(crate) fn is_done(handle: c_int) -> bool {
    let handle = match crate::persist::resolve(handle) {
        crate::persist::Resolved::Plain(h) | crate::persist::Resolved::Active(h) => h,
        _ => return true,
    };
    state::request_index(handle)
        .and_then(|i| {
            state::with(|s| match s.requests.get(i) {
                Some(Some(ReqEntry::Done(_))) => true,
                Some(Some(ReqEntry::Pending { req, .. })) => !req.is_active(),
                Some(Some(ReqEntry::Generalized(g))) => g.is_complete(),
                _ => false,
            })
        })
        .unwrap_or(false)
}

/// Drives pertinax's progress through request `handle` (a test that
/// keeps it pending if not done).
pub(crate) fn progress(handle: c_int) {
    let handle = match crate::persist::resolve(handle) {
        crate::persist::Resolved::Plain(h) | crate::persist::Resolved::Active(h) => h,
        _ => return,
    };
    if let Some(i) = state::request_index(handle) {
        let e = state::with(|s| s.requests.get_mut(i).and_then(Option::take)).flatten();
        let e = match e {
            Some(ReqEntry::Pending {
                mut req,
                comm,
                recv,
                keep,
                unpack,
            }) => {
                // A done request's outcome is kept: `test` takes it, so
                // it goes back as done with its status.
                match req.test() {
                    Ok(None) => ReqEntry::Pending {
                        req,
                        comm,
                        recv,
                        keep,
                        unpack,
                    },
                    Ok(Some(s)) if recv => {
                        if let Some(u) = unpack {
                            u.finish(s.len);
                        }
                        ReqEntry::Done(of(&s))
                    }
                    Ok(Some(_)) => {
                        if let Some(u) = unpack {
                            u.finish(usize::MAX);
                        }
                        ReqEntry::Done(status(MPI_ANY_SOURCE, MPI_ANY_TAG, 0, MPI_SUCCESS))
                    }
                    Err(pertinax::Error::Cancelled) => ReqEntry::Done(MpiStatus {
                        count_hi_and_cancelled: 1,
                        ..status(MPI_ANY_SOURCE, MPI_ANY_TAG, 0, MPI_SUCCESS)
                    }),
                    Err(e) => ReqEntry::Done(status(MPI_ANY_SOURCE, MPI_ANY_TAG, 0, code_of(&e))),
                }
            }
            Some(ReqEntry::Resilient(mut r)) => match r.poll(false) {
                Some(status) => ReqEntry::Done(status),
                None => ReqEntry::Resilient(r),
            },
            Some(ReqEntry::Agree {
                pending,
                flag,
                comm,
            }) => match crate::ulfm::agreed(pending, flag, false) {
                Ok(status) => ReqEntry::Done(status),
                Err(pending) => ReqEntry::Agree {
                    pending,
                    flag,
                    comm,
                },
            },
            Some(done) => done,
            None => return,
        };
        state::with(|s| s.requests[i] = Some(e));
    }
}
