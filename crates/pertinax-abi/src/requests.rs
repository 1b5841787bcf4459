//! The rest of the request calls: `Testall`, `Testany`, `Testsome`,
//! `Waitsome`, `Cancel`, `Request_get_status` and its MPI 4.1 `_all`,
//! `_any`, `_some` forms (which free and deactivate nothing).

use std::ffi::c_int;

use crate::consts::*;
use crate::errors::{code_of, raise};
use crate::p2p::{finish, null_status, put_status, Finished};
use crate::state::{self, ReqEntry};

/// The `i`th of `count` entries of a C array.
///
/// # Safety
/// `p` holds `count > i` entries.
unsafe fn at<T>(p: *mut T, i: usize) -> *mut T {
    // SAFETY: by the caller's contract.
    unsafe { p.add(i) }
}

/// Whether `sts` is `MPI_STATUSES_IGNORE` (or null).
fn ignored(sts: *mut MpiStatus) -> bool {
    sts.is_null() || sts as usize == STATUS_IGNORE
}

/// Tests request `*r` without completing it unless done; `Some` when done
/// (the handle is then `MPI_REQUEST_NULL`). `MPI_REQUEST_NULL` is `None`.
///
/// # Safety
/// `r` valid for reads and writes.
unsafe fn poll(r: *mut c_int) -> Result<Option<Finished>, c_int> {
    // SAFETY: by the caller's contract.
    let h = unsafe { *r };
    if h == MPI_REQUEST_NULL || crate::persist::inactive(h) {
        return Ok(None);
    }
    let f = finish(h, false)?;
    if f.is_some() {
        // SAFETY: as above.
        unsafe { *r = crate::persist::released(h) };
    }
    Ok(f)
}

crate::mpi! {
    /// `MPI_Testall`: `flag` is true only when every request is done, and
    /// then all are completed; otherwise none is (MPI's rule), though the
    /// done ones stay done.
    fn PMPI_Testall(count: c_int, reqs: *mut c_int, flag: *mut c_int, sts: *mut MpiStatus) -> c_int as MPI_Testall {
        // SAFETY: MPI's contract: `reqs` holds `count` handles.
        let n = match unsafe { crate::check::requests(count, reqs, true) } {
            Ok(n) => n,
            Err(code) => return raise(MPI_COMM_WORLD, "MPI_Testall", code),
        };
        if flag.is_null() || (n > 0 && reqs.is_null()) {
            return raise(MPI_COMM_WORLD, "MPI_Testall", MPI_ERR_ARG);
        }
        // First see whether all are done, without completing any.
        let all = (0..n).all(|i| {
            // SAFETY: MPI's contract: `reqs` holds `count` entries.
            let h = unsafe { *at(reqs, i) };
            h == MPI_REQUEST_NULL || crate::p2p::is_done(h) || {
                crate::p2p::progress(h);
                crate::p2p::is_done(h)
            }
        });
        // SAFETY: checked non-null.
        unsafe { *flag = c_int::from(all) };
        if !all {
            return MPI_SUCCESS;
        }
        // SAFETY: forwarded: every request is done, so this does not block.
        unsafe { crate::p2p::PMPI_Waitall(count, reqs, sts) }
    }
}

crate::mpi! {
    /// `MPI_Testany`.
    fn PMPI_Testany(count: c_int, reqs: *mut c_int, index: *mut c_int, flag: *mut c_int, st: *mut MpiStatus) -> c_int as MPI_Testany {
        // SAFETY: MPI's contract: `reqs` holds `count` handles.
        let n = match unsafe { crate::check::requests(count, reqs, true) } {
            Ok(n) => n,
            Err(code) => return raise(MPI_COMM_WORLD, "MPI_Testany", code),
        };
        if flag.is_null() || index.is_null() || (n > 0 && reqs.is_null()) {
            return raise(MPI_COMM_WORLD, "MPI_Testany", MPI_ERR_ARG);
        }
        let mut active = false;
        for i in 0..n {
            // SAFETY: MPI's contract: `reqs` holds `count` entries.
            let r = unsafe { at(reqs, i) };
            // SAFETY: as above.
            let h = unsafe { *r };
            active |= h != MPI_REQUEST_NULL && !crate::persist::inactive(h);
            // SAFETY: as above.
            match unsafe { poll(r) } {
                Ok(Some(f)) => {
                    // SAFETY: checked non-null; MPI's contract for `st`.
                    unsafe {
                        *flag = 1;
                        *index = i as c_int;
                        put_status(st, f.status);
                    }
                    return raise(f.comm, "MPI_Testany", f.status.error);
                }
                Ok(None) => {}
                Err(code) => return raise(MPI_COMM_WORLD, "MPI_Testany", code),
            }
        }
        // SAFETY: checked non-null; MPI's contract for `st`.
        unsafe {
            *flag = c_int::from(!active);
            *index = MPI_UNDEFINED;
            if !active {
                put_status(st, null_status());
            }
        }
        MPI_SUCCESS
    }
}

/// `Testsome` and, when `block`, `Waitsome`.
///
/// # Safety
/// MPI's contract for the arrays.
unsafe fn some(
    count: c_int,
    reqs: *mut c_int,
    outcount: *mut c_int,
    indices: *mut c_int,
    sts: *mut MpiStatus,
    block: bool,
    what: &str,
) -> c_int {
    // SAFETY: MPI's contract: `reqs` holds `count` handles.
    let n = match unsafe { crate::check::requests(count, reqs, true) } {
        Ok(n) => n,
        Err(code) => return raise(MPI_COMM_WORLD, what, code),
    };
    if outcount.is_null() || (n > 0 && (reqs.is_null() || indices.is_null())) {
        return raise(MPI_COMM_WORLD, what, MPI_ERR_ARG);
    }
    let mut b = pertinax::Backoff::default();
    loop {
        let (mut done, mut active, mut failed) = (0usize, false, None);
        for i in 0..n {
            // SAFETY: MPI's contract: `reqs` holds `count` entries.
            let r = unsafe { at(reqs, i) };
            // SAFETY: as above.
            let h = unsafe { *r };
            active |= h != MPI_REQUEST_NULL && !crate::persist::inactive(h);
            // SAFETY: as above.
            match unsafe { poll(r) } {
                Ok(Some(f)) => {
                    // SAFETY: `indices` (and `sts` unless ignored) hold
                    // `count` entries; `done <= i`.
                    unsafe {
                        *at(indices, done) = i as c_int;
                        if !ignored(sts) {
                            put_status(at(sts, done), f.status);
                        }
                    }
                    if f.status.error != MPI_SUCCESS && failed.is_none() {
                        failed = Some(f.comm);
                    }
                    done += 1;
                }
                Ok(None) => {}
                Err(code) => return raise(MPI_COMM_WORLD, what, code),
            }
        }
        if !active {
            // SAFETY: checked non-null.
            unsafe { *outcount = MPI_UNDEFINED };
            return MPI_SUCCESS;
        }
        if done > 0 || !block {
            // SAFETY: checked non-null.
            unsafe { *outcount = done as c_int };
            return match failed {
                Some(c) => raise(c, what, MPI_ERR_IN_STATUS),
                None => MPI_SUCCESS,
            };
        }
        b.snooze();
    }
}

crate::mpi! {
    /// `MPI_Testsome`.
    fn PMPI_Testsome(count: c_int, reqs: *mut c_int, outcount: *mut c_int, indices: *mut c_int, sts: *mut MpiStatus) -> c_int as MPI_Testsome {
        // SAFETY: MPI's contract, forwarded.
        unsafe { some(count, reqs, outcount, indices, sts, false, "MPI_Testsome") }
    }
}

crate::mpi! {
    /// `MPI_Waitsome`.
    fn PMPI_Waitsome(count: c_int, reqs: *mut c_int, outcount: *mut c_int, indices: *mut c_int, sts: *mut MpiStatus) -> c_int as MPI_Waitsome {
        // SAFETY: MPI's contract, forwarded.
        unsafe { some(count, reqs, outcount, indices, sts, true, "MPI_Waitsome") }
    }
}

crate::mpi! {
    /// `MPI_Cancel`: a receive not yet matched is cancelled (its status
    /// then says so); a send, or a receive already matched, completes
    /// normally.
    fn PMPI_Cancel(req: *mut c_int) -> c_int as MPI_Cancel {
        if req.is_null() {
            return raise(MPI_COMM_WORLD, "MPI_Cancel", MPI_ERR_REQUEST);
        }
        // SAFETY: checked non-null; MPI's contract makes it readable.
        let h = unsafe { *req };
        if let Some(rc) = crate::grequest::cancel(h) {
            return raise(MPI_COMM_WORLD, "MPI_Cancel", rc);
        }
        let h = match crate::persist::resolve(h) {
            crate::persist::Resolved::Plain(h) | crate::persist::Resolved::Active(h) => h,
            crate::persist::Resolved::Inactive(_) => return MPI_SUCCESS,
            crate::persist::Resolved::Invalid => return raise(MPI_COMM_WORLD, "MPI_Cancel", MPI_ERR_REQUEST),
        };
        let r = state::request_index(h).and_then(|i| {
            state::with(|s| match s.requests.get_mut(i) {
                Some(Some(ReqEntry::Pending { req, comm, .. })) => Some(req.cancel().map(drop).map_err(|e| (code_of(&e), *comm))),
                Some(Some(ReqEntry::Resilient(r))) => Some(r.cancel().map(drop).map_err(|code| (code, r.comm))),
                // An agreement cannot be withdrawn: it completes normally.
                Some(Some(ReqEntry::Done(_) | ReqEntry::Agree { .. })) => Some(Ok(())),
                _ => None,
            })
            .flatten()
        });
        match r {
            Some(Ok(())) => MPI_SUCCESS,
            Some(Err((code, comm))) => raise(comm, "MPI_Cancel", code),
            None => raise(MPI_COMM_WORLD, "MPI_Cancel", MPI_ERR_REQUEST),
        }
    }
}

/// The status of request `h` if it is done, without freeing or
/// deactivating it (what `MPI_Request_get_status` reads): a null or
/// inactive request is done with an empty status; a generalized one's
/// status is its `query_fn`'s.
fn peek(h: c_int) -> Result<Option<MpiStatus>, c_int> {
    let h = match crate::persist::resolve(h) {
        crate::persist::Resolved::Plain(h) | crate::persist::Resolved::Active(h) => h,
        crate::persist::Resolved::Inactive(_) => return Ok(Some(null_status())),
        crate::persist::Resolved::Invalid => return Err(MPI_ERR_REQUEST),
    };
    if h == MPI_REQUEST_NULL {
        return Ok(Some(null_status()));
    }
    if let Some(r) = crate::grequest::peek(h) {
        return Ok(r);
    }
    // Completing it keeps its outcome: it goes back as done.
    match finish(h, false)? {
        Some(f) => {
            let i = state::request_index(h).ok_or(MPI_ERR_REQUEST)?;
            state::with(|s| s.requests[i] = Some(ReqEntry::Done(f.status)));
            Ok(Some(f.status))
        }
        None => Ok(None),
    }
}

/// Whether `h` is an active request (neither null nor inactive).
fn active(h: c_int) -> bool {
    h != MPI_REQUEST_NULL && !crate::persist::inactive(h)
}

crate::mpi! {
    /// `MPI_Request_get_status`: whether the request is done, with its
    /// status, without freeing it (its wait still completes it).
    fn PMPI_Request_get_status(req: c_int, flag: *mut c_int, st: *mut MpiStatus) -> c_int as MPI_Request_get_status {
        if flag.is_null() {
            return raise(MPI_COMM_WORLD, "MPI_Request_get_status", MPI_ERR_ARG);
        }
        match peek(req) {
            Ok(Some(s)) => {
                // SAFETY: checked non-null; MPI's contract for `st`.
                unsafe {
                    *flag = 1;
                    put_status(st, s);
                }
                raise(MPI_COMM_WORLD, "MPI_Request_get_status", s.error)
            }
            Ok(None) => {
                // SAFETY: checked non-null.
                unsafe { *flag = 0 };
                MPI_SUCCESS
            }
            Err(code) => raise(MPI_COMM_WORLD, "MPI_Request_get_status", code),
        }
    }
}

crate::mpi! {
    /// `MPI_Request_get_status_all` (MPI 4.1): `MPI_Testall` that frees
    /// and deactivates nothing. `flag` is true when every request is done
    /// (null and inactive ones count as done, with empty statuses), and
    /// only then are the statuses written; `MPI_ERR_IN_STATUS` when one
    /// of them failed.
    fn PMPI_Request_get_status_all(count: c_int, reqs: *const c_int, flag: *mut c_int, sts: *mut MpiStatus) -> c_int as MPI_Request_get_status_all {
        const WHAT: &str = "MPI_Request_get_status_all";
        // SAFETY: MPI's contract: `reqs` holds `count` handles.
        let n = match unsafe { crate::check::requests(count, reqs, true) } {
            Ok(n) => n,
            Err(code) => return raise(MPI_COMM_WORLD, WHAT, code),
        };
        if flag.is_null() {
            return raise(MPI_COMM_WORLD, WHAT, MPI_ERR_ARG);
        }
        // SAFETY: MPI's contract: `reqs` holds `count` entries (checked
        // non-null when `n > 0`).
        let hs: &[c_int] = if n == 0 { &[] } else { unsafe { std::slice::from_raw_parts(reqs, n) } };
        // Whether all are done, before any `query_fn` runs.
        let all = hs.iter().all(|&h| {
            !active(h) || crate::p2p::is_done(h) || {
                crate::p2p::progress(h);
                crate::p2p::is_done(h)
            }
        });
        // SAFETY: checked non-null.
        unsafe { *flag = c_int::from(all) };
        if !all {
            return MPI_SUCCESS;
        }
        let mut failed = false;
        for (i, &h) in hs.iter().enumerate() {
            let s = match peek(h) {
                Ok(Some(s)) => s,
                Ok(None) => return raise(MPI_COMM_WORLD, WHAT, MPI_ERR_INTERN),
                Err(code) => return raise(MPI_COMM_WORLD, WHAT, code),
            };
            failed |= s.error != MPI_SUCCESS;
            if !ignored(sts) {
                // SAFETY: MPI's contract: `sts` holds `count` statuses.
                unsafe { put_status(at(sts, i), s) };
            }
        }
        if failed { raise(MPI_COMM_WORLD, WHAT, MPI_ERR_IN_STATUS) } else { MPI_SUCCESS }
    }
}

crate::mpi! {
    /// `MPI_Request_get_status_any` (MPI 4.1): `MPI_Testany` that frees
    /// and deactivates nothing: the index and status of the first active
    /// request that is done; with no active request, `flag` true and
    /// `MPI_UNDEFINED`.
    fn PMPI_Request_get_status_any(count: c_int, reqs: *const c_int, index: *mut c_int, flag: *mut c_int, st: *mut MpiStatus) -> c_int as MPI_Request_get_status_any {
        const WHAT: &str = "MPI_Request_get_status_any";
        // SAFETY: MPI's contract: `reqs` holds `count` handles.
        let n = match unsafe { crate::check::requests(count, reqs, true) } {
            Ok(n) => n,
            Err(code) => return raise(MPI_COMM_WORLD, WHAT, code),
        };
        if flag.is_null() || index.is_null() {
            return raise(MPI_COMM_WORLD, WHAT, MPI_ERR_ARG);
        }
        let mut any = false;
        for i in 0..n {
            // SAFETY: MPI's contract: `reqs` holds `count` entries.
            let h = unsafe { *reqs.add(i) };
            if !active(h) {
                continue;
            }
            any = true;
            match peek(h) {
                Ok(Some(s)) => {
                    // SAFETY: checked non-null; MPI's contract for `st`.
                    unsafe {
                        *flag = 1;
                        *index = i as c_int;
                        put_status(st, s);
                    }
                    return raise(MPI_COMM_WORLD, WHAT, s.error);
                }
                Ok(None) => {}
                Err(code) => return raise(MPI_COMM_WORLD, WHAT, code),
            }
        }
        // SAFETY: checked non-null; MPI's contract for `st`.
        unsafe {
            *flag = c_int::from(!any);
            *index = MPI_UNDEFINED;
            if !any {
                put_status(st, null_status());
            }
        }
        MPI_SUCCESS
    }
}

crate::mpi! {
    /// `MPI_Request_get_status_some` (MPI 4.1): `MPI_Testsome` that frees
    /// and deactivates nothing: the indices and statuses of the active
    /// requests that are done (`MPI_UNDEFINED` when none is active);
    /// `MPI_ERR_IN_STATUS` when one of them failed.
    fn PMPI_Request_get_status_some(count: c_int, reqs: *const c_int, outcount: *mut c_int, indices: *mut c_int, sts: *mut MpiStatus) -> c_int as MPI_Request_get_status_some {
        const WHAT: &str = "MPI_Request_get_status_some";
        // SAFETY: MPI's contract: `reqs` holds `count` handles.
        let n = match unsafe { crate::check::requests(count, reqs, true) } {
            Ok(n) => n,
            Err(code) => return raise(MPI_COMM_WORLD, WHAT, code),
        };
        if outcount.is_null() || (n > 0 && indices.is_null()) {
            return raise(MPI_COMM_WORLD, WHAT, MPI_ERR_ARG);
        }
        let (mut done, mut any, mut failed) = (0usize, false, false);
        for i in 0..n {
            // SAFETY: MPI's contract: `reqs` holds `count` entries.
            let h = unsafe { *reqs.add(i) };
            if !active(h) {
                continue;
            }
            any = true;
            match peek(h) {
                Ok(Some(s)) => {
                    // SAFETY: `indices` (and `sts` unless ignored) hold
                    // `count` entries; `done <= i`.
                    unsafe {
                        *at(indices, done) = i as c_int;
                        if !ignored(sts) {
                            put_status(at(sts, done), s);
                        }
                    }
                    failed |= s.error != MPI_SUCCESS;
                    done += 1;
                }
                Ok(None) => {}
                Err(code) => return raise(MPI_COMM_WORLD, WHAT, code),
            }
        }
        // SAFETY: checked non-null.
        unsafe { *outcount = if any { done as c_int } else { MPI_UNDEFINED } };
        if failed { raise(MPI_COMM_WORLD, WHAT, MPI_ERR_IN_STATUS) } else { MPI_SUCCESS }
    }
}
