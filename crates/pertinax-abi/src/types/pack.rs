//! `MPI_Pack`/`MPI_Unpack` and their `_c` and `"external32"` forms, and
//! the basic-element counts behind `MPI_Get_elements`.

use std::ffi::{c_char, c_int, c_void};

use super::{non_negative, put, run};
use crate::consts::*;
use crate::datatype::{builtin_size, layout, usable, Layout, RecvBuf, SendBuf};
use crate::errors::raise;
use crate::large::MPI_Count;
use crate::MPI_Aint;

/// The size of basic element `t`.
fn prim_size(t: c_int) -> usize {
    builtin_size(t).unwrap_or(1)
}

/// How many basic elements of `l` the first `len` bytes of packed data
/// hold; `None` when they end inside one.
pub(crate) fn elements_in(l: &Layout, len: u64) -> Option<u64> {
    if l.size == 0 {
        return Some(0);
    }
    let per: u64 = l.prims.iter().map(|&(_, n)| n as u64).sum();
    let mut count = len / l.size as u64 * per;
    let mut rest = len % l.size as u64;
    for &(t, n) in &l.prims {
        let es = prim_size(t) as u64;
        let k = (rest / es).min(n as u64);
        count += k;
        rest -= k * es;
        if k < n as u64 {
            break;
        }
    }
    (rest == 0).then_some(count)
}

/// The packed length of the first `n` basic elements of `l`s.
pub(crate) fn bytes_of_elements(l: &Layout, n: u64) -> Option<u64> {
    let per: u64 = l.prims.iter().map(|&(_, k)| k as u64).sum();
    if per == 0 {
        return (n == 0).then_some(0);
    }
    let mut bytes = (n / per).checked_mul(l.size as u64)?;
    let mut rest = n % per;
    for &(t, k) in &l.prims {
        let take = rest.min(k as u64);
        bytes += take * prim_size(t) as u64;
        rest -= take;
    }
    Some(bytes)
}

/// `MPI_Pack` and its forms: packs `count` elements at `*position` of
/// `out` (`outsize` bytes), moving the position on; `external`: in
/// big-endian order.
///
/// # Safety
/// MPI's contract for the buffers; `position` readable and writable.
#[allow(clippy::too_many_arguments)]
unsafe fn pack_to<P: Copy + TryInto<usize> + TryFrom<usize>>(
    inbuf: *const c_void,
    count: i64,
    ty: c_int,
    out: *mut c_void,
    outsize: i64,
    position: *mut P,
    external: bool,
) -> Result<(), c_int> {
    let t = usable(ty)?;
    let n = non_negative(count)?;
    // SAFETY: MPI's contract: `inbuf` holds `count` elements.
    let data = unsafe { SendBuf::new(inbuf, n, &t) }?;
    let mut bytes = data.bytes().to_vec();
    if external {
        let l = layout(ty)?;
        swap(&l, &mut bytes);
    }
    // SAFETY: by the caller's contract.
    let pos: usize = unsafe { handle_pos(position) }?;
    let end = pos.checked_add(bytes.len()).ok_or(MPI_ERR_COUNT)?;
    if end as i64 > outsize {
        return Err(MPI_ERR_TRUNCATE);
    }
    if !bytes.is_empty() {
        // SAFETY: `out` holds `outsize >= end` bytes by MPI's contract.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), out.cast::<u8>().add(pos), bytes.len())
        };
    }
    // SAFETY: by the caller's contract.
    unsafe { *position = P::try_from(end).map_err(|_| MPI_ERR_COUNT)? };
    Ok(())
}

/// Reads a position.
///
/// # Safety
/// `p` null or readable.
unsafe fn handle_pos<P: Copy + TryInto<usize>>(p: *const P) -> Result<usize, c_int> {
    if p.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: checked non-null; readable by the caller's contract.
    unsafe { *p }.try_into().map_err(|_| MPI_ERR_ARG)
}

/// `MPI_Unpack` and its forms.
///
/// # Safety
/// MPI's contract for the buffers; `position` readable and writable.
#[allow(clippy::too_many_arguments)]
unsafe fn unpack_from<P: Copy + TryInto<usize> + TryFrom<usize>>(
    inbuf: *const c_void,
    insize: i64,
    position: *mut P,
    out: *mut c_void,
    count: i64,
    ty: c_int,
    external: bool,
) -> Result<(), c_int> {
    let t = usable(ty)?;
    let n = non_negative(count)?;
    // SAFETY: by the caller's contract.
    let pos = unsafe { handle_pos(position) }?;
    let len = t.bytes(n)?;
    let end = pos.checked_add(len).ok_or(MPI_ERR_COUNT)?;
    if end as i64 > insize {
        return Err(MPI_ERR_TRUNCATE);
    }
    // SAFETY: MPI's contract: `inbuf` holds `insize >= end` bytes.
    let mut bytes = unsafe { crate::p2p::slice(inbuf.cast::<u8>().add(pos).cast(), len) }.to_vec();
    if external {
        let l = layout(ty)?;
        swap(&l, &mut bytes);
    }
    // SAFETY: MPI's contract: `out` holds `count` elements.
    let mut into = unsafe { RecvBuf::new(out, n, &t) }?;
    into.bytes_mut().copy_from_slice(&bytes);
    into.finish(len);
    // SAFETY: by the caller's contract.
    unsafe { *position = P::try_from(end).map_err(|_| MPI_ERR_COUNT)? };
    Ok(())
}

/// Reverses the bytes of every basic element of packed data (native
/// little-endian to "external32" big-endian and back; a complex number's
/// parts each).
fn swap(l: &Layout, data: &mut [u8]) {
    let mut at = 0;
    while at < data.len() {
        let before = at;
        for &(t, n) in &l.prims {
            let es = prim_size(t);
            let unit = match t {
                MPI_C_FLOAT_COMPLEX | MPI_C_DOUBLE_COMPLEX | MPI_C_LONG_DOUBLE_COMPLEX => es / 2,
                _ => es,
            };
            for _ in 0..n * (es / unit.max(1)) {
                if at + unit > data.len() {
                    return;
                }
                data[at..at + unit].reverse();
                at += unit;
            }
        }
        if at == before {
            return;
        }
    }
}

/// Checks a data representation's name: only `"external32"`.
///
/// # Safety
/// `rep` a C string or null.
unsafe fn external32(rep: *const c_char) -> Result<(), c_int> {
    // SAFETY: by the caller's contract.
    match unsafe { crate::info::c_bytes(rep) }? {
        b"external32" => Ok(()),
        _ => Err(MPI_ERR_UNSUPPORTED_DATAREP),
    }
}

crate::mpi! {
    /// `MPI_Pack`.
    fn PMPI_Pack(inbuf: *const c_void, count: c_int, ty: c_int, out: *mut c_void, outsize: c_int, position: *mut c_int, comm: c_int) -> c_int as MPI_Pack {
        // SAFETY: MPI's contract for the buffers.
        match crate::check::comm(comm).and_then(|_| unsafe { pack_to(inbuf, count.into(), ty, out, outsize.into(), position, false) }) {
            Ok(()) => MPI_SUCCESS,
            Err(code) => raise(comm, "MPI_Pack", code),
        }
    }
}
crate::mpi! {
    /// `MPI_Pack_c`.
    fn PMPI_Pack_c(inbuf: *const c_void, count: MPI_Count, ty: c_int, out: *mut c_void, outsize: MPI_Count, position: *mut MPI_Count, comm: c_int) -> c_int as MPI_Pack_c {
        // SAFETY: MPI's contract for the buffers.
        match crate::check::comm(comm).and_then(|_| unsafe { pack_to(inbuf, count, ty, out, outsize, position, false) }) {
            Ok(()) => MPI_SUCCESS,
            Err(code) => raise(comm, "MPI_Pack_c", code),
        }
    }
}
crate::mpi! {
    /// `MPI_Unpack`.
    fn PMPI_Unpack(inbuf: *const c_void, insize: c_int, position: *mut c_int, out: *mut c_void, count: c_int, ty: c_int, comm: c_int) -> c_int as MPI_Unpack {
        // SAFETY: MPI's contract for the buffers.
        match crate::check::comm(comm).and_then(|_| unsafe { unpack_from(inbuf, insize.into(), position, out, count.into(), ty, false) }) {
            Ok(()) => MPI_SUCCESS,
            Err(code) => raise(comm, "MPI_Unpack", code),
        }
    }
}
crate::mpi! {
    /// `MPI_Unpack_c`.
    fn PMPI_Unpack_c(inbuf: *const c_void, insize: MPI_Count, position: *mut MPI_Count, out: *mut c_void, count: MPI_Count, ty: c_int, comm: c_int) -> c_int as MPI_Unpack_c {
        // SAFETY: MPI's contract for the buffers.
        match crate::check::comm(comm).and_then(|_| unsafe { unpack_from(inbuf, insize, position, out, count, ty, false) }) {
            Ok(()) => MPI_SUCCESS,
            Err(code) => raise(comm, "MPI_Unpack_c", code),
        }
    }
}

/// `MPI_Pack_size` and the external form: `count` times the type's size
/// (the packed form carries no header).
fn pack_size(count: i64, ty: c_int) -> Result<i64, c_int> {
    let l = layout(ty)?;
    let n = non_negative(count)?;
    let b = n.checked_mul(l.size).ok_or(MPI_ERR_COUNT)?;
    i64::try_from(b).map_err(|_| MPI_ERR_COUNT)
}

crate::mpi! {
    /// `MPI_Pack_size`.
    fn PMPI_Pack_size(count: c_int, ty: c_int, comm: c_int, size: *mut c_int) -> c_int as MPI_Pack_size {
        let r = crate::check::comm(comm)
            .and_then(|_| pack_size(count.into(), ty))
            .and_then(|n| c_int::try_from(n).map_err(|_| MPI_ERR_COUNT))
            // SAFETY: MPI's contract: `size` writable.
            .and_then(|n| unsafe { put(size, n) });
        match r {
            Ok(()) => MPI_SUCCESS,
            Err(code) => raise(comm, "MPI_Pack_size", code),
        }
    }
}
crate::mpi! {
    /// `MPI_Pack_size_c`.
    fn PMPI_Pack_size_c(count: MPI_Count, ty: c_int, comm: c_int, size: *mut MPI_Count) -> c_int as MPI_Pack_size_c {
        // SAFETY: MPI's contract: `size` writable.
        match crate::check::comm(comm).and_then(|_| pack_size(count, ty)).and_then(|n| unsafe { put(size, n) }) {
            Ok(()) => MPI_SUCCESS,
            Err(code) => raise(comm, "MPI_Pack_size_c", code),
        }
    }
}
crate::mpi! {
    /// `MPI_Pack_external` (`"external32"`: big-endian, the same sizes).
    fn PMPI_Pack_external(rep: *const c_char, inbuf: *const c_void, count: c_int, ty: c_int, out: *mut c_void, outsize: MPI_Aint, position: *mut MPI_Aint) -> c_int as MPI_Pack_external {
        run("MPI_Pack_external", || {
            // SAFETY: MPI's contract for the arguments.
            unsafe {
                external32(rep)?;
                pack_to(inbuf, count.into(), ty, out, outsize as i64, position, true)
            }
        })
    }
}
crate::mpi! {
    /// `MPI_Pack_external_c`.
    fn PMPI_Pack_external_c(rep: *const c_char, inbuf: *const c_void, count: MPI_Count, ty: c_int, out: *mut c_void, outsize: MPI_Count, position: *mut MPI_Count) -> c_int as MPI_Pack_external_c {
        run("MPI_Pack_external_c", || {
            // SAFETY: MPI's contract for the arguments.
            unsafe {
                external32(rep)?;
                pack_to(inbuf, count, ty, out, outsize, position, true)
            }
        })
    }
}
crate::mpi! {
    /// `MPI_Unpack_external`.
    fn PMPI_Unpack_external(rep: *const c_char, inbuf: *const c_void, insize: MPI_Aint, position: *mut MPI_Aint, out: *mut c_void, count: c_int, ty: c_int) -> c_int as MPI_Unpack_external {
        run("MPI_Unpack_external", || {
            // SAFETY: MPI's contract for the arguments.
            unsafe {
                external32(rep)?;
                unpack_from(inbuf, insize as i64, position, out, count.into(), ty, true)
            }
        })
    }
}
crate::mpi! {
    /// `MPI_Unpack_external_c`.
    fn PMPI_Unpack_external_c(rep: *const c_char, inbuf: *const c_void, insize: MPI_Count, position: *mut MPI_Count, out: *mut c_void, count: MPI_Count, ty: c_int) -> c_int as MPI_Unpack_external_c {
        run("MPI_Unpack_external_c", || {
            // SAFETY: MPI's contract for the arguments.
            unsafe {
                external32(rep)?;
                unpack_from(inbuf, insize, position, out, count, ty, true)
            }
        })
    }
}
crate::mpi! {
    /// `MPI_Pack_external_size`.
    fn PMPI_Pack_external_size(rep: *const c_char, count: c_int, ty: c_int, size: *mut MPI_Aint) -> c_int as MPI_Pack_external_size {
        run("MPI_Pack_external_size", || {
            // SAFETY: MPI's contract for the arguments.
            unsafe {
                external32(rep)?;
                put(size, pack_size(count.into(), ty)? as MPI_Aint)
            }
        })
    }
}
crate::mpi! {
    /// `MPI_Pack_external_size_c`.
    fn PMPI_Pack_external_size_c(rep: *const c_char, count: MPI_Count, ty: c_int, size: *mut MPI_Count) -> c_int as MPI_Pack_external_size_c {
        run("MPI_Pack_external_size_c", || {
            // SAFETY: MPI's contract for the arguments.
            unsafe {
                external32(rep)?;
                put(size, pack_size(count, ty)?)
            }
        })
    }
}
