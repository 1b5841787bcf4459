//! ULFM as MPICH declares it, and the calls Open MPI 5 adds: revoke,
//! shrink, agree, the failed group and its acknowledgement. Failures are
//! pertinax's: detected by the native runtime, reported as
//! `MPIX_ERR_PROC_FAILED` (`_PENDING` for an any-source receive) and
//! `MPIX_ERR_REVOKED`.

use pertinax::Communicator as _;
use std::ffi::c_int;

use crate::comm::add_group;
use crate::consts::*;
use crate::errors::code_of;
use crate::p2p::{call, comm_of};
use crate::state;

fn out<T>(p: *mut T, v: T) -> Result<(), c_int> {
    if p.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: checked non-null; MPI's contract makes it writable.
    unsafe { p.write(v) };
    Ok(())
}

crate::mpi! {
    /// `MPIX_Comm_revoke`.
    fn PMPIX_Comm_revoke(comm: c_int) -> c_int as MPIX_Comm_revoke {
        call(comm, "MPIX_Comm_revoke", || comm_of(comm)?.revoke().map_err(|e| code_of(&e)))
    }
}

crate::mpi! {
    /// `MPIX_Comm_is_revoked` (Open MPI 5's spelling).
    fn PMPIX_Comm_is_revoked(comm: c_int, flag: *mut c_int) -> c_int as MPIX_Comm_is_revoked {
        call(comm, "MPIX_Comm_is_revoked", || out(flag, c_int::from(comm_of(comm)?.is_revoked())))
    }
}

crate::mpi! {
    /// `MPIX_Comm_shrink`: a communicator of the survivors, with this
    /// one's error handler.
    fn PMPIX_Comm_shrink(comm: c_int, newcomm: *mut c_int) -> c_int as MPIX_Comm_shrink {
        call(comm, "MPIX_Comm_shrink", || {
            if newcomm.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let s = comm_of(comm)?.shrink().map_err(|e| code_of(&e))?;
            let h = state::with(|st| {
                let eh = state::comm_index(comm)
                    .and_then(|i| st.comms.get(i)?.as_ref())
                    .map_or(MPI_ERRORS_ARE_FATAL, |e| e.errhandler);
                st.add_comm(s, eh)
            })
            .ok_or(MPI_ERR_OTHER)?;
            out(newcomm, h)
        })
    }
}

crate::mpi! {
    /// `MPIX_Comm_agree`: the bitwise AND of `flag` over the live members;
    /// `MPIX_ERR_PROC_FAILED` when a member failed that this process has
    /// not acknowledged (the flag is still the agreed one).
    fn PMPIX_Comm_agree(comm: c_int, flag: *mut c_int) -> c_int as MPIX_Comm_agree {
        call(comm, "MPIX_Comm_agree", || {
            if flag.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let c = comm_of(comm)?;
            // SAFETY: checked non-null; readable by MPI's contract.
            let mine = unsafe { *flag } as u32;
            let a = c.agree_detailed(mine).map_err(|e| code_of(&e))?;
            out(flag, a.flags as c_int)?;
            if a.unacked.is_empty() {
                Ok(())
            } else {
                Err(MPIX_ERR_PROC_FAILED)
            }
        })
    }
}

/// Completes agreement `pending` if it is done (or waits for it when
/// `block`): writes the agreed flag to `flag` and returns the request's
/// status (its error `MPIX_ERR_PROC_FAILED` when a member failed that this
/// process has not acknowledged, as `MPIX_Comm_agree`'s); gives it back
/// while it is still under way.
pub(crate) fn agreed(
    mut pending: pertinax::PendingAgreement,
    flag: *mut c_int,
    block: bool,
) -> Result<MpiStatus, pertinax::PendingAgreement> {
    let got = if block {
        pending.wait().map(Some)
    } else {
        match pending.test() {
            Ok(None) => return Err(pending),
            r => r,
        }
    };
    let error = match got {
        Ok(Some(a)) => {
            // SAFETY: checked non-null at `MPIX_Comm_iagree`; MPI's
            // contract keeps it valid until the request completes.
            unsafe { flag.write(a.flags as c_int) };
            if a.unacked.is_empty() {
                MPI_SUCCESS
            } else {
                MPIX_ERR_PROC_FAILED
            }
        }
        Ok(None) => MPI_ERR_INTERN,
        Err(e) => code_of(&e),
    };
    Ok(crate::p2p::status(MPI_ANY_SOURCE, MPI_ANY_TAG, 0, error))
}

crate::mpi! {
    /// `MPIX_Comm_iagree`: `MPIX_Comm_agree` started now (this member's
    /// `*flag` contributed at once); the request completes when every live
    /// member has contributed, and then `*flag` holds the agreed value.
    /// Until then no other agreement (agree, shrink) may start on the
    /// communicator (`MPI_ERR_ARG`, from pertinax's `Comm::iagree`).
    fn PMPIX_Comm_iagree(comm: c_int, flag: *mut c_int, request: *mut c_int) -> c_int as MPIX_Comm_iagree {
        call(comm, "MPIX_Comm_iagree", || {
            if flag.is_null() || request.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let c = comm_of(comm)?;
            // SAFETY: checked non-null; readable by MPI's contract.
            let mine = unsafe { *flag } as u32;
            let pending = c.iagree(mine).map_err(|e| code_of(&e))?;
            let h = state::with(|s| {
                REQUEST_DIRECT
                    | state::insert(&mut s.requests, state::ReqEntry::Agree { pending, flag, comm }) as c_int
            })
            .ok_or(MPI_ERR_OTHER)?;
            out(request, h)
        })
    }
}

crate::mpi! {
    /// `MPIX_Comm_ishrink`: blocks. It is `MPIX_Comm_shrink`, then a
    /// request that is already complete (as `MPI_Comm_idup` here), so
    /// `*newcomm` is valid on return. A program that relies on the call
    /// returning before the other members enter it waits forever.
    fn PMPIX_Comm_ishrink(comm: c_int, newcomm: *mut c_int, request: *mut c_int) -> c_int as MPIX_Comm_ishrink {
        if request.is_null() {
            return crate::errors::raise(comm, "MPIX_Comm_ishrink", MPI_ERR_ARG);
        }
        // SAFETY: MPI's contract for `newcomm`, forwarded.
        let rc = unsafe { PMPIX_Comm_shrink(comm, newcomm) };
        if rc != MPI_SUCCESS {
            return rc;
        }
        let h = state::with(|s| {
            REQUEST_DIRECT | state::insert(&mut s.requests, state::ReqEntry::Done(crate::p2p::empty())) as c_int
        });
        match h {
            Some(h) => {
                // SAFETY: checked non-null.
                unsafe { request.write(h) };
                MPI_SUCCESS
            }
            None => crate::errors::raise(comm, "MPIX_Comm_ishrink", MPI_ERR_OTHER),
        }
    }
}

crate::mpi! {
    /// `MPIX_Comm_get_failed`: the group of the members known failed (on
    /// a resilient communicator, its failed original ranks, those its
    /// repairs excluded included).
    fn PMPIX_Comm_get_failed(comm: c_int, group: *mut c_int) -> c_int as MPIX_Comm_get_failed {
        call(comm, "MPIX_Comm_get_failed", || {
            let g = match crate::resilient::lookup(comm) {
                Some(r) => {
                    use crate::resilient::Class as _;
                    r.get_failed().map_err(|e| e.class())?
                }
                None => comm_of(comm)?.get_failed().map_err(|e| code_of(&e))?,
            };
            out(group, add_group(g)?)
        })
    }
}

crate::mpi! {
    /// `MPIX_Comm_ack_failed` (Open MPI 5): acknowledges up to
    /// `num_to_ack` failures; `num_acked`: how many are acknowledged.
    fn PMPIX_Comm_ack_failed(comm: c_int, num_to_ack: c_int, num_acked: *mut c_int) -> c_int as MPIX_Comm_ack_failed {
        call(comm, "MPIX_Comm_ack_failed", || {
            let n = usize::try_from(num_to_ack).map_err(|_| MPI_ERR_ARG)?;
            let acked = comm_of(comm)?.ack_failed(n).map_err(|e| code_of(&e))?;
            out(num_acked, acked as c_int)
        })
    }
}

crate::mpi! {
    /// `MPIX_Comm_failure_ack`: acknowledges every failure known now.
    fn PMPIX_Comm_failure_ack(comm: c_int) -> c_int as MPIX_Comm_failure_ack {
        call(comm, "MPIX_Comm_failure_ack", || {
            comm_of(comm)?.ack_failed(usize::MAX).map(drop).map_err(|e| code_of(&e))
        })
    }
}

crate::mpi! {
    /// `MPIX_Comm_failure_get_acked`: the group of the acknowledged
    /// failures.
    fn PMPIX_Comm_failure_get_acked(comm: c_int, group: *mut c_int) -> c_int as MPIX_Comm_failure_get_acked {
        call(comm, "MPIX_Comm_failure_get_acked", || {
            let g = comm_of(comm)?.get_acked().map_err(|e| code_of(&e))?;
            out(group, add_group(g)?)
        })
    }
}
