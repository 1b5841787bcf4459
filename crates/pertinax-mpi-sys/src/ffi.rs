//! The shim's functions (`shim/pxm.c`), declared by hand: they use only
//! C scalars, pointers, `intptr_t` handles and [`Status`], so no header of
//! the MPI is read here.

use std::ffi::{c_char, c_int, c_void};

/// What MPI says of a completed receive or probe (the shim's `pxm_status`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Status {
    /// `MPI_SOURCE`.
    pub source: c_int,
    /// `MPI_TAG`.
    pub tag: c_int,
    /// `MPI_ERROR` (or the completing call's error code).
    pub error: c_int,
    /// Whether the request was cancelled.
    pub cancelled: c_int,
    /// The message's length in bytes, -1 if undefined.
    pub bytes: i64,
}

extern "C" {
    pub fn pxm_err_truncate() -> c_int;
    pub fn pxm_err_proc_failed() -> c_int;
    pub fn pxm_err_proc_failed_pending() -> c_int;
    pub fn pxm_err_revoked() -> c_int;
    pub fn pxm_any_source() -> c_int;
    pub fn pxm_any_tag() -> c_int;
    pub fn pxm_undefined() -> c_int;
    pub fn pxm_thread_single() -> c_int;
    pub fn pxm_thread_funneled() -> c_int;
    pub fn pxm_comm_world() -> isize;
    pub fn pxm_comm_self() -> isize;
    pub fn pxm_comm_null() -> isize;
    pub fn pxm_request_null() -> isize;
    pub fn pxm_error_class(code: c_int) -> c_int;
    pub fn pxm_error_string(code: c_int, buf: *mut c_char, cap: c_int) -> c_int;
    pub fn pxm_library_version(buf: *mut c_char, cap: c_int) -> c_int;

    pub fn pxm_init_thread(required: c_int, provided: *mut c_int) -> c_int;
    pub fn pxm_revoke_fix_arm() -> c_int;
    pub fn pxm_revoke_fix_loans() -> u64;
    pub fn pxm_progress_available() -> c_int;
    pub fn pxm_tell_failed(nspace: *const c_char, rank: u32) -> c_int;
    pub fn pxm_progress_arm(cb: extern "C" fn() -> c_int) -> c_int;
    pub fn pxm_progress_disarm(cb: extern "C" fn() -> c_int) -> c_int;
    pub fn pxm_initialized(flag: *mut c_int) -> c_int;
    pub fn pxm_finalized(flag: *mut c_int) -> c_int;
    pub fn pxm_finalize() -> c_int;
    pub fn pxm_abort(comm: isize, code: c_int) -> c_int;

    pub fn pxm_comm_errors_return(comm: isize) -> c_int;
    pub fn pxm_comm_rank(comm: isize, rank: *mut c_int) -> c_int;
    pub fn pxm_comm_size(comm: isize, size: *mut c_int) -> c_int;
    pub fn pxm_comm_dup(comm: isize, out: *mut isize) -> c_int;
    pub fn pxm_comm_split(comm: isize, color: c_int, key: c_int, out: *mut isize) -> c_int;
    pub fn pxm_comm_create_group(
        comm: isize,
        ranks: *const c_int,
        n: c_int,
        tag: c_int,
        out: *mut isize,
    ) -> c_int;
    pub fn pxm_comm_from_world_ranks(
        ranks: *const c_int,
        n: c_int,
        tag: *const c_char,
        out: *mut isize,
    ) -> c_int;
    pub fn pxm_comm_free(comm: *mut isize) -> c_int;
    pub fn pxm_translate_ranks(
        other: isize,
        n: c_int,
        ranks: *const c_int,
        comm: isize,
        out: *mut c_int,
    ) -> c_int;

    pub fn pxm_isend(
        buf: *const c_void,
        len: usize,
        dest: c_int,
        tag: c_int,
        comm: isize,
        req: *mut isize,
    ) -> c_int;
    pub fn pxm_issend(
        buf: *const c_void,
        len: usize,
        dest: c_int,
        tag: c_int,
        comm: isize,
        req: *mut isize,
    ) -> c_int;
    pub fn pxm_send(buf: *const c_void, len: usize, dest: c_int, tag: c_int, comm: isize) -> c_int;
    pub fn pxm_small() -> c_int;
    pub fn pxm_envelope(len: usize, out: *mut c_char);
    pub fn pxm_mrecv_envelope(msg: *mut isize, len: *mut u64) -> c_int;
    pub fn pxm_recv(
        buf: *mut c_void,
        len: usize,
        elem: usize,
        src: c_int,
        tag: c_int,
        comm: isize,
        out: *mut Status,
    ) -> c_int;
    pub fn pxm_irecv(
        buf: *mut c_void,
        len: usize,
        src: c_int,
        tag: c_int,
        comm: isize,
        req: *mut isize,
    ) -> c_int;
    pub fn pxm_iprobe(
        src: c_int,
        tag: c_int,
        comm: isize,
        flag: *mut c_int,
        out: *mut Status,
    ) -> c_int;

    pub fn pxm_improbe(
        src: c_int,
        tag: c_int,
        comm: isize,
        flag: *mut c_int,
        msg: *mut isize,
        out: *mut Status,
    ) -> c_int;
    pub fn pxm_imrecv(buf: *mut c_void, len: usize, msg: *mut isize, req: *mut isize) -> c_int;
    pub fn pxm_test(req: *mut isize, flag: *mut c_int, out: *mut Status) -> c_int;
    pub fn pxm_wait(req: *mut isize, out: *mut Status) -> c_int;
    pub fn pxm_wait_code(req: *mut isize) -> c_int;
    pub fn pxm_cancel(req: *mut isize) -> c_int;

    pub fn pxm_comm_revoke(comm: isize) -> c_int;
    pub fn pxm_comm_is_revoked(comm: isize, flag: *mut c_int) -> c_int;
    pub fn pxm_comm_shrink(comm: isize, out: *mut isize) -> c_int;
    pub fn pxm_comm_agree(comm: isize, flag: *mut c_int) -> c_int;
    pub fn pxm_comm_iagree(comm: isize, flag: *mut c_int, req: *mut isize) -> c_int;
    pub fn pxm_comm_ack_failed(comm: isize, num_to_ack: c_int, num_acked: *mut c_int) -> c_int;
    pub fn pxm_comm_get_failed(comm: isize, ranks: *mut c_int, cap: c_int, n: *mut c_int) -> c_int;

    // shim/pxm_coll.c
    pub fn pxm_datatype(prim: c_int) -> isize;
    pub fn pxm_op(which: c_int) -> isize;
    pub fn pxm_type_bytes(bytes: c_int, out: *mut isize) -> c_int;
    pub fn pxm_type_free(t: *mut isize) -> c_int;
    pub fn pxm_user_op_create(
        f: extern "C" fn(*const c_void, *mut c_void, c_int, isize),
        commute: c_int,
        out: *mut isize,
    ) -> c_int;
    pub fn pxm_op_free(op: *mut isize) -> c_int;
    #[allow(clippy::too_many_arguments, reason = "MPI's own argument list")]
    pub fn pxm_coll(
        kind: c_int,
        blocking: c_int,
        sbuf: *const c_void,
        rbuf: *mut c_void,
        count: c_int,
        scounts: *const c_int,
        sdispls: *const c_int,
        rcounts: *const c_int,
        rdispls: *const c_int,
        dtype: isize,
        op: isize,
        root: c_int,
        comm: isize,
        req: *mut isize,
    ) -> c_int;
}
