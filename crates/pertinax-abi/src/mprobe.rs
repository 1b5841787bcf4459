//! Matched probes (`MPI_Mprobe`, `MPI_Improbe`) and their receives
//! (`MPI_Mrecv`, `MPI_Imrecv`). pertinax has no matched probe of its own:
//! the probe receives the message it found at once, by its source and tag
//! (the earliest such message, so the one probed), into a buffer the
//! message handle owns; the matched receive copies it out. No other
//! receive can then take it, as MPI requires.

use std::ffi::{c_int, c_void};

use pertinax::{Communicator, Rank, Tag, TagMatch};

use crate::consts::*;
use crate::datatype::RecvBuf;
use crate::errors::{code_of, raise};
use crate::large::MPI_Count;
use crate::p2p::{call, comm_of, put_status, status, PMPI_Iprobe, PMPI_Probe};
use crate::state::{self, ReqEntry};

/// Receives the message `st` describes (from its source, with its tag)
/// into a buffer of its own; the message handle.
fn take(comm: c_int, st: MpiStatus) -> Result<c_int, c_int> {
    if st.source == MPI_PROC_NULL {
        return Ok(MPI_MESSAGE_NO_PROC);
    }
    let c = comm_of(comm)?;
    let len = st.count_lo as u32 as usize | (((st.count_hi_and_cancelled >> 1) as usize) << 32);
    let mut buf = vec![0u8; len];
    let got = c
        .recv_bytes(
            &mut buf,
            1,
            Rank(st.source).into(),
            TagMatch::from(Tag(st.tag)),
        )
        .map_err(|e| code_of(&e))?
        .ok_or(MPI_ERR_INTERN)?;
    let st = status(got.source.0, got.tag.0, got.len, MPI_SUCCESS);
    state::with(|s| MESSAGE_DIRECT | state::insert(&mut s.messages, (buf, st)) as c_int)
        .ok_or(MPI_ERR_OTHER)
}

crate::mpi! {
    /// `MPI_Mprobe`.
    fn PMPI_Mprobe(src: c_int, tag: c_int, comm: c_int, msg: *mut c_int, st: *mut MpiStatus) -> c_int as MPI_Mprobe {
        call(comm, "MPI_Mprobe", || {
            if msg.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let mut found = MpiStatus::default();
            // SAFETY: `found` is a status.
            let rc = unsafe { PMPI_Probe(src, tag, comm, &mut found) };
            if rc != MPI_SUCCESS {
                return Err(rc);
            }
            let m = take(comm, found)?;
            // SAFETY: checked non-null; MPI's contract for `st`.
            unsafe {
                *msg = m;
                put_status(st, found);
            }
            Ok(())
        })
    }
}

crate::mpi! {
    /// `MPI_Improbe`.
    fn PMPI_Improbe(src: c_int, tag: c_int, comm: c_int, flag: *mut c_int, msg: *mut c_int, st: *mut MpiStatus) -> c_int as MPI_Improbe {
        call(comm, "MPI_Improbe", || {
            if msg.is_null() || flag.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let mut found = MpiStatus::default();
            // SAFETY: `flag` checked; `found` is a status.
            let rc = unsafe { PMPI_Iprobe(src, tag, comm, flag, &mut found) };
            if rc != MPI_SUCCESS {
                return Err(rc);
            }
            // SAFETY: checked non-null.
            if unsafe { *flag } != 0 {
                let m = take(comm, found)?;
                // SAFETY: checked non-null; MPI's contract for `st`.
                unsafe {
                    *msg = m;
                    put_status(st, found);
                }
            }
            Ok(())
        })
    }
}

/// Copies message `*msg` into `count` elements of `ty` at `buf`; the
/// status. The handle becomes `MPI_MESSAGE_NULL`.
///
/// # Safety
/// `msg` valid; `buf` holds `count` elements of `ty`.
unsafe fn receive(
    buf: *mut c_void,
    count: MPI_Count,
    ty: c_int,
    msg: *mut c_int,
) -> Result<MpiStatus, c_int> {
    let (t, n) = crate::check::data(buf, count, ty)?;
    let elem = t.recv_elem();
    if msg.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: checked non-null.
    let h = unsafe { *msg };
    if h == MPI_MESSAGE_NO_PROC {
        // SAFETY: checked non-null.
        unsafe { *msg = MPI_MESSAGE_NULL };
        return Ok(status(MPI_PROC_NULL, MPI_ANY_TAG, 0, MPI_SUCCESS));
    }
    let (data, st) = state::message_index(h)
        .and_then(|i| state::with(|s| s.messages.get_mut(i).and_then(Option::take)).flatten())
        .ok_or(MPI_ERR_REQUEST)?;
    // SAFETY: checked non-null.
    unsafe { *msg = MPI_MESSAGE_NULL };
    // SAFETY: `buf` holds `count` elements by the contract.
    let mut into = unsafe { RecvBuf::new(buf, n, &t) }?;
    if data.len() > into.len() || (elem > 1 && data.len() % elem != 0) {
        return Ok(MpiStatus {
            error: MPI_ERR_TRUNCATE,
            ..st
        });
    }
    into.bytes_mut()[..data.len()].copy_from_slice(&data);
    into.finish(data.len());
    Ok(st)
}

/// `MPI_Mrecv` and its forms.
///
/// # Safety
/// MPI's contract for the arguments.
unsafe fn mrecv(
    buf: *mut c_void,
    count: MPI_Count,
    ty: c_int,
    msg: *mut c_int,
    st: *mut MpiStatus,
    what: &str,
) -> c_int {
    // SAFETY: forwarded.
    let got = unsafe { receive(buf, count, ty, msg) };
    match got {
        Ok(s) => {
            // SAFETY: MPI's contract for `st`.
            unsafe { put_status(st, s) };
            raise(MPI_COMM_WORLD, what, s.error)
        }
        Err(code) => raise(MPI_COMM_WORLD, what, code),
    }
}

/// `MPI_Imrecv` and its forms: the receive is done at once; a complete
/// request.
///
/// # Safety
/// MPI's contract for the arguments.
unsafe fn imrecv(
    buf: *mut c_void,
    count: MPI_Count,
    ty: c_int,
    msg: *mut c_int,
    req: *mut c_int,
    what: &str,
) -> c_int {
    if req.is_null() {
        return raise(MPI_COMM_WORLD, what, MPI_ERR_ARG);
    }
    // SAFETY: forwarded.
    let got = unsafe { receive(buf, count, ty, msg) };
    match got {
        Ok(s) => match state::with(|st| {
            REQUEST_DIRECT | state::insert(&mut st.requests, ReqEntry::Done(s)) as c_int
        }) {
            Some(h) => {
                // SAFETY: checked non-null.
                unsafe { *req = h };
                MPI_SUCCESS
            }
            None => raise(MPI_COMM_WORLD, what, MPI_ERR_OTHER),
        },
        Err(code) => raise(MPI_COMM_WORLD, what, code),
    }
}

crate::mpi! {
    /// `MPI_Mrecv`.
    fn PMPI_Mrecv(buf: *mut c_void, count: c_int, ty: c_int, msg: *mut c_int, st: *mut MpiStatus) -> c_int as MPI_Mrecv {
        // SAFETY: MPI's contract, forwarded.
        unsafe { mrecv(buf, count.into(), ty, msg, st, "MPI_Mrecv") }
    }
}
crate::mpi! {
    /// `MPI_Mrecv_c`.
    fn PMPI_Mrecv_c(buf: *mut c_void, count: MPI_Count, ty: c_int, msg: *mut c_int, st: *mut MpiStatus) -> c_int as MPI_Mrecv_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { mrecv(buf, count, ty, msg, st, "MPI_Mrecv_c") }
    }
}
crate::mpi! {
    /// `MPI_Imrecv`.
    fn PMPI_Imrecv(buf: *mut c_void, count: c_int, ty: c_int, msg: *mut c_int, req: *mut c_int) -> c_int as MPI_Imrecv {
        // SAFETY: MPI's contract, forwarded.
        unsafe { imrecv(buf, count.into(), ty, msg, req, "MPI_Imrecv") }
    }
}
crate::mpi! {
    /// `MPI_Imrecv_c`.
    fn PMPI_Imrecv_c(buf: *mut c_void, count: MPI_Count, ty: c_int, msg: *mut c_int, req: *mut c_int) -> c_int as MPI_Imrecv_c {
        // SAFETY: MPI's contract, forwarded.
        unsafe { imrecv(buf, count, ty, msg, req, "MPI_Imrecv_c") }
    }
}
