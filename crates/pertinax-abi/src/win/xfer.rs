//! The data movement of the RMA calls: where a target's datatype lies in
//! the target's memory ([`ranges`]), and the copies into and out of it by
//! cross-memory attach, the accumulates' read-combine-write under the
//! target's mutex included.

use std::ffi::{c_int, c_void};

use super::{shm, WinEntry};
use crate::consts::*;
use crate::datatype::{reduction, RecvBuf, SendBuf, Ty};
use crate::MPI_Aint;

/// The MPI error class of a failed cross-memory copy.
fn class(e: &std::io::Error) -> c_int {
    match e.raw_os_error() {
        Some(libc::EFAULT) => MPI_ERR_RMA_RANGE,
        Some(libc::ESRCH) => MPIX_ERR_PROC_FAILED,
        Some(libc::EPERM) => MPI_ERR_UNSUPPORTED_OPERATION,
        Some(libc::ENOMEM) => MPI_ERR_NO_MEM,
        _ => MPI_ERR_OTHER,
    }
}

fn push(out: &mut Vec<(u64, usize)>, at: u64, len: usize) {
    if len == 0 {
        return;
    }
    if let Some(last) = out.last_mut() {
        if last.0 + last.1 as u64 == at {
            last.1 += len;
            return;
        }
    }
    out.push((at, len));
}

/// The address ranges, in typemap order, of `count` elements of `ty` at
/// displacement `disp` of target `t`'s window; `MPI_ERR_RMA_RANGE` for
/// any byte outside it (a dynamic window's displacements are addresses,
/// checked by the copy itself).
pub(crate) fn ranges(
    g: &WinEntry,
    t: usize,
    disp: MPI_Aint,
    count: usize,
    ty: &Ty,
) -> Result<Vec<(u64, usize)>, c_int> {
    let p = g.peers[t];
    let dynamic = g.flavor == MPI_WIN_FLAVOR_DYNAMIC;
    let (lo, hi) = if dynamic {
        (0i128, i128::from(u64::MAX))
    } else {
        (i128::from(p.base), i128::from(p.base) + i128::from(p.size))
    };
    let start = if dynamic {
        i128::from(disp as i64)
    } else {
        if disp < 0 {
            return Err(MPI_ERR_RMA_RANGE);
        }
        i128::from(p.base) + i128::from(disp as i64) * i128::from(p.disp_unit)
    };
    let mut out = Vec::new();
    let mut add = |rel: i128, len: usize| -> Result<(), c_int> {
        if len == 0 {
            return Ok(());
        }
        let a = start + rel;
        if a < lo || a + len as i128 > hi {
            return Err(MPI_ERR_RMA_RANGE);
        }
        push(&mut out, a as u64, len);
        Ok(())
    };
    match ty {
        Ty::Plain(_, n) => add(0, n.checked_mul(count).ok_or(MPI_ERR_COUNT)?)?,
        Ty::Derived(l) => {
            for k in 0..count {
                let at = k as i128 * l.extent as i128;
                for &(off, len) in &l.blocks {
                    add(at + off as i128, len)?;
                }
            }
        }
    }
    Ok(out)
}

/// The first `n` bytes of `ranges`.
fn first(ranges: &[(u64, usize)], mut n: usize) -> Vec<(u64, usize)> {
    let mut out = Vec::new();
    for &(a, len) in ranges {
        if n == 0 {
            break;
        }
        let take = len.min(n);
        out.push((a, take));
        n -= take;
    }
    out
}

fn total(ranges: &[(u64, usize)]) -> usize {
    ranges.iter().map(|r| r.1).sum()
}

/// Reads `ranges` of process `pid` into `dst`.
fn read(pid: u32, dst: &mut [u8], ranges: &[(u64, usize)]) -> Result<(), c_int> {
    if dst.is_empty() {
        return Ok(());
    }
    pertinax_os::cma::readv_from(pid, dst, ranges).map_err(|e| class(&e))
}

/// Writes `src` into `ranges` of process `pid`.
fn write(pid: u32, src: &[u8], ranges: &[(u64, usize)]) -> Result<(), c_int> {
    if src.is_empty() {
        return Ok(());
    }
    pertinax_os::cma::writev_to(pid, src, ranges).map_err(|e| class(&e))
}

/// Data at the origin: `count` elements of `ty` at `buf`.
#[derive(Debug, Clone)]
pub(crate) struct Buf {
    pub buf: *mut c_void,
    pub count: usize,
    pub ty: Ty,
}

/// The target side: `count` elements of `ty` at displacement `disp` of
/// rank `rank`.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub rank: usize,
    pub disp: MPI_Aint,
    pub count: usize,
    pub ty: Ty,
}

/// `MPI_Put`: the origin's data (at most the target's) to the target.
///
/// # Safety
/// `o.buf` holds `o.count` elements of `o.ty` (MPI's contract).
pub(crate) unsafe fn put(g: &WinEntry, o: &Buf, t: &Target) -> Result<(), c_int> {
    let r = ranges(g, t.rank, t.disp, t.count, &t.ty)?;
    // SAFETY: by the caller's contract.
    let src = unsafe { SendBuf::new(o.buf, o.count, &o.ty) }?;
    let b = src.bytes();
    if b.len() > total(&r) {
        return Err(MPI_ERR_TRUNCATE);
    }
    write(g.peers[t.rank].pid, b, &first(&r, b.len()))
}

/// `MPI_Get`: the target's data (at most the origin buffer's) to the
/// origin.
///
/// # Safety
/// `o.buf` holds `o.count` elements of `o.ty`, writable.
pub(crate) unsafe fn get(g: &WinEntry, o: &Buf, t: &Target) -> Result<(), c_int> {
    let r = ranges(g, t.rank, t.disp, t.count, &t.ty)?;
    // SAFETY: by the caller's contract.
    let mut dst = unsafe { RecvBuf::new(o.buf, o.count, &o.ty) }?;
    let n = total(&r);
    if n > dst.len() {
        return Err(MPI_ERR_TRUNCATE);
    }
    read(g.peers[t.rank].pid, &mut dst.bytes_mut()[..n], &r)?;
    dst.finish(n);
    Ok(())
}

/// The accumulates: under target `t`'s mutex, the target's data is read
/// (to `result` if given), combined with the origin's by `op`
/// (`MPI_REPLACE`, `MPI_NO_OP`, or a predefined operation on the one
/// predefined type both are built of) and written back.
///
/// # Safety
/// `o` and `result` hold their elements (MPI's contract), `result`
/// writable.
pub(crate) unsafe fn accumulate(
    g: &WinEntry,
    o: Option<&Buf>,
    result: Option<&Buf>,
    t: &Target,
    op: c_int,
) -> Result<(), c_int> {
    let combine = match op {
        MPI_REPLACE | MPI_NO_OP => None,
        _ => {
            let base = t.ty.base().ok_or(MPI_ERR_TYPE)?;
            Some(reduction(op, base)?)
        }
    };
    let origin = match o {
        Some(o) if op != MPI_NO_OP => {
            if combine.is_some() && o.ty.base() != t.ty.base() {
                return Err(MPI_ERR_TYPE);
            }
            // SAFETY: by the caller's contract.
            Some(unsafe { SendBuf::new(o.buf, o.count, &o.ty) }?)
        }
        _ => None,
    };
    let r = ranges(g, t.rank, t.disp, t.count, &t.ty)?;
    let n = total(&r);
    if origin.as_ref().is_some_and(|b| b.bytes().len() != n) {
        return Err(MPI_ERR_COUNT);
    }
    let mut res = match result {
        // SAFETY: by the caller's contract.
        Some(b) => Some(unsafe { RecvBuf::new(b.buf, b.count, &b.ty) }?),
        None => None,
    };
    if res.as_ref().is_some_and(|b| b.len() < n) {
        return Err(MPI_ERR_TRUNCATE);
    }
    let pid = g.peers[t.rank].pid;
    let _held = shm::mutex(&g.ctl, t.rank)?;
    let mut cur = vec![0u8; n];
    if result.is_some() || combine.is_some() {
        read(pid, &mut cur, &r)?;
    }
    if let Some(b) = res.as_mut() {
        b.bytes_mut()[..n].copy_from_slice(&cur);
    }
    match (origin, combine) {
        (Some(src), None) => write(pid, src.bytes(), &r)?,
        (Some(src), Some(f)) => {
            f.combine_bytes(&mut cur, src.bytes(), false)
                .map_err(|_| MPI_ERR_OP)?;
            write(pid, &cur, &r)?;
        }
        (None, _) => {}
    }
    if let Some(b) = res {
        b.finish(n);
    }
    Ok(())
}

/// `MPI_Compare_and_swap`: under the target's mutex, the target element
/// to `result`, and `origin` to the target if it equalled `compare`.
///
/// # Safety
/// `origin`, `compare` and `result` each hold one element of `ty`.
pub(crate) unsafe fn compare_and_swap(
    g: &WinEntry,
    origin: *const c_void,
    compare: *const c_void,
    result: *mut c_void,
    ty: &Ty,
    t: &Target,
) -> Result<(), c_int> {
    let Ty::Plain(_, n) = *ty else {
        return Err(MPI_ERR_TYPE);
    };
    if origin.is_null() || compare.is_null() || result.is_null() {
        return Err(MPI_ERR_BUFFER);
    }
    let r = ranges(g, t.rank, t.disp, 1, ty)?;
    // SAFETY: each holds one element of `n` bytes (the caller's contract).
    let (o, c) = unsafe {
        (
            std::slice::from_raw_parts(origin.cast::<u8>(), n),
            std::slice::from_raw_parts(compare.cast::<u8>(), n),
        )
    };
    let pid = g.peers[t.rank].pid;
    let _held = shm::mutex(&g.ctl, t.rank)?;
    let mut cur = vec![0u8; n];
    read(pid, &mut cur, &r)?;
    if cur == c {
        write(pid, o, &r)?;
    }
    // SAFETY: `result` holds one element (the caller's contract); `cur`
    // is a copy of its own.
    unsafe { std::ptr::copy_nonoverlapping(cur.as_ptr(), result.cast::<u8>(), n) };
    Ok(())
}
