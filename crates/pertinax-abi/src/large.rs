//! The large-count (`_c`, MPI 4) forms of the implemented calls, which
//! mpi4py uses: counts are `MPI_Count` (64 bits). A count of more than
//! `INT_MAX` elements is `MPI_ERR_COUNT` for now (the forms share the
//! `int` forms' code).

use std::ffi::{c_int, c_void};

use crate::coll::*;
use crate::consts::*;
use crate::datatype::{put_bounds, put_size};
use crate::errors::raise;
use crate::modes::{PMPI_Ibsend, PMPI_Irsend, PMPI_Isendrecv, PMPI_Isendrecv_replace};
use crate::p2p::*;

/// `MPI_Count`.
#[allow(non_camel_case_types)]
pub type MPI_Count = i64;

/// `count` as an `int`, or `MPI_ERR_COUNT` raised on `comm`.
fn int(count: MPI_Count, comm: c_int, what: &str) -> Result<c_int, c_int> {
    c_int::try_from(count).map_err(|_| raise(comm, what, MPI_ERR_COUNT))
}

macro_rules! large {
    ($(fn $pc:ident as $c:ident => $p:ident($($a:ident: $t:ty),*) counts($($n:ident),*) comm $comm:ident;)*) => {$(
        crate::mpi! {
            #[doc = concat!("`", stringify!($c), "`: see the `int` form.")]
            fn $pc($($a: $t),*) -> c_int as $c {
                $(
                    let $n = match int($n, $comm, stringify!($c)) {
                        Ok(v) => v,
                        Err(rc) => return rc,
                    };
                )*
                // SAFETY: the same contract as the `int` form's.
                unsafe { $p($($a),*) }
            }
        }
    )*};
}

large! {
    fn PMPI_Send_c as MPI_Send_c => PMPI_Send(buf: *const c_void, count: MPI_Count, ty: c_int, dest: c_int, tag: c_int, comm: c_int) counts(count) comm comm;
    fn PMPI_Recv_c as MPI_Recv_c => PMPI_Recv(buf: *mut c_void, count: MPI_Count, ty: c_int, src: c_int, tag: c_int, comm: c_int, st: *mut MpiStatus) counts(count) comm comm;
    fn PMPI_Isend_c as MPI_Isend_c => PMPI_Isend(buf: *const c_void, count: MPI_Count, ty: c_int, dest: c_int, tag: c_int, comm: c_int, req: *mut c_int) counts(count) comm comm;
    fn PMPI_Irecv_c as MPI_Irecv_c => PMPI_Irecv(buf: *mut c_void, count: MPI_Count, ty: c_int, src: c_int, tag: c_int, comm: c_int, req: *mut c_int) counts(count) comm comm;
    fn PMPI_Sendrecv_c as MPI_Sendrecv_c => PMPI_Sendrecv(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: c_int, dest: c_int, sendtag: c_int, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: c_int, src: c_int, recvtag: c_int, comm: c_int, st: *mut MpiStatus) counts(sendcount, recvcount) comm comm;
    fn PMPI_Bcast_c as MPI_Bcast_c => PMPI_Bcast(buf: *mut c_void, count: MPI_Count, ty: c_int, root: c_int, comm: c_int) counts(count) comm comm;
    fn PMPI_Reduce_c as MPI_Reduce_c => PMPI_Reduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, ty: c_int, op: c_int, root: c_int, comm: c_int) counts(count) comm comm;
    fn PMPI_Allreduce_c as MPI_Allreduce_c => PMPI_Allreduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, ty: c_int, op: c_int, comm: c_int) counts(count) comm comm;
    fn PMPI_Gather_c as MPI_Gather_c => PMPI_Gather(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: c_int, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: c_int, root: c_int, comm: c_int) counts(sendcount, recvcount) comm comm;
    fn PMPI_Scatter_c as MPI_Scatter_c => PMPI_Scatter(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: c_int, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: c_int, root: c_int, comm: c_int) counts(sendcount, recvcount) comm comm;
    fn PMPI_Allgather_c as MPI_Allgather_c => PMPI_Allgather(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: c_int, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: c_int, comm: c_int) counts(sendcount, recvcount) comm comm;
    fn PMPI_Ibsend_c as MPI_Ibsend_c => PMPI_Ibsend(buf: *const c_void, count: MPI_Count, ty: c_int, dest: c_int, tag: c_int, comm: c_int, req: *mut c_int) counts(count) comm comm;
    fn PMPI_Irsend_c as MPI_Irsend_c => PMPI_Irsend(buf: *const c_void, count: MPI_Count, ty: c_int, dest: c_int, tag: c_int, comm: c_int, req: *mut c_int) counts(count) comm comm;
    fn PMPI_Isendrecv_c as MPI_Isendrecv_c => PMPI_Isendrecv(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: c_int, dest: c_int, sendtag: c_int, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: c_int, src: c_int, recvtag: c_int, comm: c_int, req: *mut c_int) counts(sendcount, recvcount) comm comm;
    fn PMPI_Isendrecv_replace_c as MPI_Isendrecv_replace_c => PMPI_Isendrecv_replace(buf: *mut c_void, count: MPI_Count, ty: c_int, dest: c_int, sendtag: c_int, src: c_int, recvtag: c_int, comm: c_int, req: *mut c_int) counts(count) comm comm;
    fn PMPI_Alltoall_c as MPI_Alltoall_c => PMPI_Alltoall(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: c_int, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: c_int, comm: c_int) counts(sendcount, recvcount) comm comm;
}

crate::mpi! {
    /// `MPI_Get_count_c`.
    fn PMPI_Get_count_c(st: *const MpiStatus, ty: c_int, count: *mut MPI_Count) -> c_int as MPI_Get_count_c {
        let mut n: c_int = 0;
        // SAFETY: the same contract as `MPI_Get_count`'s.
        let rc = unsafe { PMPI_Get_count(st, ty, &mut n) };
        if rc == MPI_SUCCESS {
            // SAFETY: as above.
            return unsafe { crate::put(count, MPI_Count::from(n), MPI_COMM_WORLD, "MPI_Get_count_c") };
        }
        rc
    }
}

crate::mpi! {
    /// `MPI_Type_size_c`.
    fn PMPI_Type_size_c(ty: c_int, size: *mut MPI_Count) -> c_int as MPI_Type_size_c {
        // SAFETY: MPI's contract: null or writable.
        unsafe { put_size(ty, size, MPI_UNDEFINED.into(), "MPI_Type_size_c") }
    }
}

crate::mpi! {
    /// `MPI_Type_size_x`.
    fn PMPI_Type_size_x(ty: c_int, size: *mut MPI_Count) -> c_int as MPI_Type_size_x {
        // SAFETY: MPI's contract: null or writable.
        unsafe { put_size(ty, size, MPI_UNDEFINED.into(), "MPI_Type_size_x") }
    }
}

crate::mpi! {
    /// `MPI_Type_get_extent_x`.
    fn PMPI_Type_get_extent_x(ty: c_int, lb: *mut MPI_Count, ext: *mut MPI_Count) -> c_int as MPI_Type_get_extent_x {
        // SAFETY: MPI's contract for the out-pointers.
        unsafe { put_bounds(ty, lb, ext, false, "MPI_Type_get_extent_x") }
    }
}

crate::mpi! {
    /// `MPI_Type_get_true_extent_x`.
    fn PMPI_Type_get_true_extent_x(ty: c_int, lb: *mut MPI_Count, ext: *mut MPI_Count) -> c_int as MPI_Type_get_true_extent_x {
        // SAFETY: MPI's contract for the out-pointers.
        unsafe { put_bounds(ty, lb, ext, true, "MPI_Type_get_true_extent_x") }
    }
}

crate::mpi! {
    /// `MPI_Type_get_extent_c`.
    fn PMPI_Type_get_extent_c(ty: c_int, lb: *mut MPI_Count, ext: *mut MPI_Count) -> c_int as MPI_Type_get_extent_c {
        // SAFETY: MPI's contract for the out-pointers.
        unsafe { put_bounds(ty, lb, ext, false, "MPI_Type_get_extent_c") }
    }
}

crate::mpi! {
    /// `MPI_Type_get_true_extent_c`.
    fn PMPI_Type_get_true_extent_c(ty: c_int, lb: *mut MPI_Count, ext: *mut MPI_Count) -> c_int as MPI_Type_get_true_extent_c {
        // SAFETY: MPI's contract for the out-pointers.
        unsafe { put_bounds(ty, lb, ext, true, "MPI_Type_get_true_extent_c") }
    }
}

use crate::modes::{PMPI_Bsend, PMPI_Issend, PMPI_Rsend, PMPI_Ssend};

large! {
    fn PMPI_Ssend_c as MPI_Ssend_c => PMPI_Ssend(buf: *const c_void, count: MPI_Count, ty: c_int, dest: c_int, tag: c_int, comm: c_int) counts(count) comm comm;
    fn PMPI_Issend_c as MPI_Issend_c => PMPI_Issend(buf: *const c_void, count: MPI_Count, ty: c_int, dest: c_int, tag: c_int, comm: c_int, req: *mut c_int) counts(count) comm comm;
    fn PMPI_Bsend_c as MPI_Bsend_c => PMPI_Bsend(buf: *const c_void, count: MPI_Count, ty: c_int, dest: c_int, tag: c_int, comm: c_int) counts(count) comm comm;
    fn PMPI_Rsend_c as MPI_Rsend_c => PMPI_Rsend(buf: *const c_void, count: MPI_Count, ty: c_int, dest: c_int, tag: c_int, comm: c_int) counts(count) comm comm;
}

use crate::reduce::{
    PMPI_Exscan, PMPI_Reduce_local, PMPI_Reduce_scatter, PMPI_Reduce_scatter_block, PMPI_Scan,
};

large! {
    fn PMPI_Scan_c as MPI_Scan_c => PMPI_Scan(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, ty: c_int, op: c_int, comm: c_int) counts(count) comm comm;
    fn PMPI_Exscan_c as MPI_Exscan_c => PMPI_Exscan(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, ty: c_int, op: c_int, comm: c_int) counts(count) comm comm;
    fn PMPI_Reduce_scatter_block_c as MPI_Reduce_scatter_block_c => PMPI_Reduce_scatter_block(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, ty: c_int, op: c_int, comm: c_int) counts(count) comm comm;
    fn PMPI_Sendrecv_replace_c as MPI_Sendrecv_replace_c => PMPI_Sendrecv_replace(buf: *mut c_void, count: MPI_Count, ty: c_int, dest: c_int, sendtag: c_int, src: c_int, recvtag: c_int, comm: c_int, st: *mut MpiStatus) counts(count) comm comm;
}

use crate::modes::PMPI_Sendrecv_replace;

crate::mpi! {
    /// `MPI_Reduce_local_c`.
    fn PMPI_Reduce_local_c(inbuf: *const c_void, inoutbuf: *mut c_void, count: MPI_Count, ty: c_int, op: c_int) -> c_int as MPI_Reduce_local_c {
        match int(count, MPI_COMM_WORLD, "MPI_Reduce_local_c") {
            // SAFETY: the same contract as the `int` form's.
            Ok(n) => unsafe { PMPI_Reduce_local(inbuf, inoutbuf, n, ty, op) },
            Err(rc) => rc,
        }
    }
}

crate::mpi! {
    /// `MPI_Reduce_scatter_c`: the counts as `int`s.
    fn PMPI_Reduce_scatter_c(sendbuf: *const c_void, recvbuf: *mut c_void, counts: *const MPI_Count, ty: c_int, op: c_int, comm: c_int) -> c_int as MPI_Reduce_scatter_c {
        let n = match crate::p2p::comm_of(comm) {
            Ok(c) => c.size(),
            Err(code) => return raise(comm, "MPI_Reduce_scatter_c", code),
        };
        if counts.is_null() {
            return raise(comm, "MPI_Reduce_scatter_c", MPI_ERR_ARG);
        }
        let mut ints = Vec::with_capacity(n);
        for i in 0..n {
            // SAFETY: MPI's contract: `counts` holds `size` entries.
            match int(unsafe { *counts.add(i) }, comm, "MPI_Reduce_scatter_c") {
                Ok(v) => ints.push(v),
                Err(rc) => return rc,
            }
        }
        // SAFETY: the same contract as the `int` form's; `ints` holds
        // `size` entries.
        unsafe { PMPI_Reduce_scatter(sendbuf, recvbuf, ints.as_ptr(), ty, op, comm) }
    }
}
