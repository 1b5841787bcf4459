//! Blocking fast paths for the MPI backend's hot calls: a receive that
//! never consumes a message it refuses ([`mprobe_recv`]), in one crossing
//! into the shim (`shim/pxm_fast.c`). The backend uses them only when
//! nothing else of its own is pending (see `backend/mpi/fast.rs` in
//! pertinax), so blocking inside MPI cannot starve its own matching.

use std::ffi::{c_int, c_void};

use crate::{check, Message, Result, Status};

extern "C" {
    fn pxm_mprobe_recv(
        buf: *mut c_void,
        cap: usize,
        elem: usize,
        src: c_int,
        tag: c_int,
        comm: isize,
        taken: *mut c_int,
        msg: *mut isize,
        out: *mut Status,
    ) -> c_int;
}

/// What [`mprobe_recv`] did with the message it matched.
#[derive(Debug)]
pub enum Matched {
    /// Received into the buffer; `error` is set if the receive failed.
    Received(Status),
    /// Too long for the buffer, or not a whole number of elements: not
    /// received, still matched (receive it later with [`crate::Op::mrecv`]).
    Refused(Message, Status),
}

/// A blocking receive from `src` (or [`crate::any_source`]) with `tag` (or
/// [`crate::any_tag`]) on `comm`: `MPI_Mprobe`, then `MPI_Mrecv` into `buf`
/// if the message fits and is a whole number of `elem`-byte elements,
/// else the matched message is handed back, not consumed.
///
/// # Errors
/// The probe's code (ULFM: the source failed, the communicator revoked).
pub fn mprobe_recv(
    buf: &mut [u8],
    elem: usize,
    src: i32,
    tag: i32,
    comm: crate::Comm,
) -> Result<Matched> {
    let mut taken: c_int = 0;
    let mut msg: isize = 0;
    let mut st = Status::EMPTY;
    // SAFETY: MPI writes at most `buf.len()` bytes into `buf`, during the
    // call only (a blocking receive); the shim writes `taken`, `msg`, `st`.
    let rc = unsafe {
        pxm_mprobe_recv(
            buf.as_mut_ptr().cast(),
            buf.len(),
            elem,
            src,
            tag,
            comm.0,
            &mut taken,
            &mut msg,
            &mut st,
        )
    };
    check(rc)?;
    if taken != 0 {
        Ok(Matched::Received(st))
    } else {
        Ok(Matched::Refused(Message(msg), st))
    }
}
