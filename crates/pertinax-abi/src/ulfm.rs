//! ULFM as MPICH declares it, and the calls Open MPI 5 adds: revoke,
//! shrink, agree, the failed group and its acknowledgement. Failures are
//! pertinax's: detected by the native runtime, reported as
//! `MPIX_ERR_PROC_FAILED` (`_PENDING` for an any-source receive) and
//! `MPIX_ERR_REVOKED`.

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

crate::mpi! {
    /// `MPIX_Comm_get_failed`: the group of the members known failed.
    fn PMPIX_Comm_get_failed(comm: c_int, group: *mut c_int) -> c_int as MPIX_Comm_get_failed {
        call(comm, "MPIX_Comm_get_failed", || {
            let g = comm_of(comm)?.get_failed().map_err(|e| code_of(&e))?;
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
