//! File views: a displacement, an etype and a filetype whose copies tile
//! the file from the displacement; the filetype's data blocks are the
//! bytes this process sees. Offsets are counted in etypes of the view,
//! and [`View::segments`] maps a run of view bytes to file byte ranges.
//! `MPI_File_set_view`, `_get_view`, `_get_type_extent`,
//! `_get_byte_offset`, `_seek`, `_get_position` and their shared forms.
//! Representations: `datarep.rs`.

use std::ffi::{c_char, c_int};

use super::{access, call, out, with};
use crate::consts::*;
use crate::datatype::{layout, Layout};
use crate::MPI_Aint;

/// A process's view of the file.
#[derive(Debug)]
pub(crate) struct View {
    pub disp: i64,
    /// The etype and filetype: predefined handles, or the view's own
    /// duplicates of derived ones (freed with the view).
    pub etype: c_int,
    pub ftype: c_int,
    /// Bytes of data in one etype, in one filetype; the filetype's extent.
    pub esize: u64,
    fsize: u64,
    fextent: i64,
    /// The filetype's data blocks (offset from its origin, length), and
    /// the data bytes before each.
    blocks: Vec<(i64, u64)>,
    starts: Vec<u64>,
    /// One block at 0 as long as the extent: view bytes are file bytes.
    contiguous: bool,
    /// The data representation's name.
    pub datarep: Vec<u8>,
}

impl Default for View {
    /// `MPI_BYTE` over the whole file.
    fn default() -> View {
        View {
            disp: 0,
            etype: MPI_BYTE,
            ftype: MPI_BYTE,
            esize: 1,
            fsize: 1,
            fextent: 1,
            blocks: vec![(0, 1)],
            starts: vec![0],
            contiguous: true,
            datarep: b"native".to_vec(),
        }
    }
}

impl View {
    fn new(disp: i64, etype: c_int, el: &Layout, ftype: c_int, fl: &Layout) -> Result<View, c_int> {
        let esize = el.size as u64;
        let fsize = fl.size as u64;
        if esize == 0 || fsize == 0 || !fsize.is_multiple_of(esize) || fl.extent <= 0 {
            return Err(MPI_ERR_ARG);
        }
        let mut blocks = Vec::new();
        let mut starts = Vec::new();
        let mut at = 0u64;
        for &(off, len) in fl.blocks.iter().filter(|b| b.1 > 0) {
            if off < 0 {
                return Err(MPI_ERR_TYPE);
            }
            blocks.push((off as i64, len as u64));
            starts.push(at);
            at += len as u64;
        }
        let contiguous = blocks.as_slice() == [(0, fsize)] && fl.extent as u64 == fsize;
        Ok(View {
            disp,
            etype,
            ftype,
            esize,
            fsize,
            fextent: fl.extent as i64,
            blocks,
            starts,
            contiguous,
            datarep: b"native".to_vec(),
        })
    }

    /// Frees the view's own duplicates of derived types.
    pub(crate) fn release(&mut self) {
        for t in [self.etype, self.ftype] {
            if !predefined(t) {
                let mut t = t;
                // SAFETY: the view's own handle, freed once.
                unsafe { crate::types::PMPI_Type_free(&mut t) };
            }
        }
        self.etype = MPI_BYTE;
        self.ftype = MPI_BYTE;
    }

    /// The file byte ranges of `len` view bytes from view byte `start`,
    /// adjacent ones merged.
    pub(crate) fn segments(&self, start: u64, len: u64) -> Result<Vec<(u64, u64)>, c_int> {
        if len == 0 {
            return Ok(Vec::new());
        }
        let file_at = |k: u64, off: i64, within: u64| -> Result<u64, c_int> {
            let v = i128::from(self.disp)
                + i128::from(k) * i128::from(self.fextent)
                + i128::from(off)
                + i128::from(within);
            u64::try_from(v).map_err(|_| MPI_ERR_ARG)
        };
        if self.contiguous {
            return Ok(vec![(file_at(0, 0, start)?, len)]);
        }
        let mut k = start / self.fsize;
        let r = start % self.fsize;
        let mut i = self.starts.partition_point(|&s| s <= r) - 1;
        let mut within = r - self.starts[i];
        let mut left = len;
        let mut out: Vec<(u64, u64)> = Vec::new();
        loop {
            let (off, blen) = self.blocks[i];
            let n = (blen - within).min(left);
            let at = file_at(k, off, within)?;
            match out.last_mut() {
                Some(last) if last.0 + last.1 == at => last.1 += n,
                _ => out.push((at, n)),
            }
            left -= n;
            if left == 0 {
                return Ok(out);
            }
            within = 0;
            i += 1;
            if i == self.blocks.len() {
                i = 0;
                k += 1;
            }
        }
    }

    /// The number of view bytes that lie below file byte `size`.
    fn bytes_below(&self, size: u64) -> u64 {
        let Some(rel) = size
            .checked_sub(self.disp as u64)
            .filter(|_| self.disp >= 0)
        else {
            return 0;
        };
        if self.contiguous {
            return rel;
        }
        let ext = self.fextent as u64;
        let (k, rem) = (rel / ext, rel % ext);
        let part: u64 = self
            .blocks
            .iter()
            .map(|&(off, len)| (rem as i64 - off).clamp(0, len as i64) as u64)
            .sum();
        k * self.fsize + part
    }

    /// The end of the file in etypes of the view (rounded up).
    pub(crate) fn eof(&self, size: u64) -> i64 {
        self.bytes_below(size).div_ceil(self.esize) as i64
    }
}

/// Whether `t` is a predefined type (kept as is, not duplicated).
fn predefined(t: c_int) -> bool {
    layout(t).map(|l| l.predefined).unwrap_or(true)
}

/// A type for the view: a predefined one, or the view's own duplicate
/// of a committed derived one.
fn own(t: c_int) -> Result<(c_int, std::rc::Rc<Layout>), c_int> {
    let l = layout(t)?;
    if l.predefined {
        return Ok((t, l));
    }
    if !l.committed {
        return Err(MPI_ERR_TYPE);
    }
    let mut d = MPI_DATATYPE_NULL;
    // SAFETY: a valid type; an int to write.
    super::ok(unsafe { crate::types::PMPI_Type_dup(t, &mut d) })?;
    Ok((d, l))
}

crate::mpi! {
    /// `MPI_File_set_view`: collective; resets the individual and shared
    /// pointers to 0. Native data only (`datarep.rs`).
    fn PMPI_File_set_view(fh: MPI_File, disp: i64, etype: c_int, filetype: c_int, datarep: *const c_char, info: c_int) -> c_int as MPI_File_set_view {
        call(fh, "MPI_File_set_view", |e| {
            if datarep.is_null() {
                return Err(MPI_ERR_ARG);
            }
            // SAFETY: MPI's contract: a C string.
            let rep = unsafe { std::ffi::CStr::from_ptr(datarep) }.to_bytes();
            super::datarep::usable(rep)?;
            let rep = rep.to_vec();
            let hints = super::hints_of(info)?;
            let (el, fl) = (layout(etype)?, layout(filetype)?);
            if !(el.predefined || el.committed) || !(fl.predefined || fl.committed) {
                return Err(MPI_ERR_TYPE);
            }
            let disp = with(e, |g| {
                if disp == MPI_DISPLACEMENT_CURRENT {
                    if g.amode & MPI_MODE_SEQUENTIAL == 0 {
                        return Err(MPI_ERR_ARG);
                    }
                    let cur = g.shared.get()?;
                    let seg = g.view.segments(cur as u64 * g.view.esize, 1)?;
                    return Ok(seg.first().map_or(0, |s| s.0 as i64));
                }
                if disp < 0 {
                    return Err(MPI_ERR_ARG);
                }
                Ok(disp)
            })?;
            View::new(disp, etype, &el, filetype, &fl)?;
            let (et, _) = own(etype)?;
            let (ft, _) = match own(filetype) {
                Ok(x) => x,
                Err(c) => {
                    if !predefined(et) {
                        let mut t = et;
                        // SAFETY: the duplicate just made.
                        unsafe { crate::types::PMPI_Type_free(&mut t) };
                    }
                    return Err(c);
                }
            };
            let mut view = View::new(disp, et, &el, ft, &fl)?;
            view.datarep = rep;
            with(e, |g| {
                g.view.release();
                g.view = view;
                g.hints.merge(&hints);
                g.pos = 0;
                Ok(())
            })?;
            super::by_rank0(e, |g| g.shared.set(0))
        })
    }
}

crate::mpi! {
    /// `MPI_File_get_view`: derived types come back as new duplicates
    /// (the program frees them), predefined ones as themselves.
    fn PMPI_File_get_view(fh: MPI_File, disp: *mut i64, etype: *mut c_int, filetype: *mut c_int, datarep: *mut c_char) -> c_int as MPI_File_get_view {
        call(fh, "MPI_File_get_view", |e| {
            if disp.is_null() || etype.is_null() || filetype.is_null() || datarep.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let (d, et, ft, rep) = with(e, |g| Ok((g.view.disp, g.view.etype, g.view.ftype, g.view.datarep.clone())))?;
            let (et, _) = own(et)?;
            let (ft, _) = own(ft)?;
            // SAFETY: checked non-null; MPI's contract (`datarep` holds
            // MPI_MAX_DATAREP_STRING bytes).
            unsafe {
                *disp = d;
                *etype = et;
                *filetype = ft;
                crate::errors::copy_out(&String::from_utf8_lossy(&rep), datarep, MPI_MAX_DATAREP_STRING, std::ptr::null_mut());
            }
            Ok(())
        })
    }
}

crate::mpi! {
    /// `MPI_File_get_type_extent`: the extent in the file ("native": the
    /// type's extent).
    fn PMPI_File_get_type_extent(fh: MPI_File, datatype: c_int, extent: *mut MPI_Aint) -> c_int as MPI_File_get_type_extent {
        call(fh, "MPI_File_get_type_extent", |_| {
            let l = layout(datatype)?;
            // SAFETY: MPI's contract.
            unsafe { out(extent, l.extent) }
        })
    }
}

crate::mpi! {
    /// `MPI_File_get_type_extent_c`.
    fn PMPI_File_get_type_extent_c(fh: MPI_File, datatype: c_int, extent: *mut i64) -> c_int as MPI_File_get_type_extent_c {
        call(fh, "MPI_File_get_type_extent_c", |_| {
            let l = layout(datatype)?;
            // SAFETY: MPI's contract.
            unsafe { out(extent, l.extent as i64) }
        })
    }
}

crate::mpi! {
    /// `MPI_File_get_byte_offset`: the file byte of view offset `offset`.
    fn PMPI_File_get_byte_offset(fh: MPI_File, offset: i64, disp: *mut i64) -> c_int as MPI_File_get_byte_offset {
        call(fh, "MPI_File_get_byte_offset", |e| {
            let at = with(e, |g| byte_offset(&g.view, offset))?;
            // SAFETY: MPI's contract.
            unsafe { out(disp, at) }
        })
    }
}

/// The file byte where view offset `offset` (in etypes) lies.
pub(crate) fn byte_offset(v: &View, offset: i64) -> Result<i64, c_int> {
    let o = u64::try_from(offset).map_err(|_| MPI_ERR_ARG)?;
    let b = o.checked_mul(v.esize).ok_or(MPI_ERR_ARG)?;
    let s = v.segments(b, 1)?;
    Ok(s.first().map_or(v.disp, |s| s.0 as i64))
}

/// The new position of a seek: `offset` from `whence` (`cur`: the
/// pointer now, `eof`: the end of the file in etypes).
pub(crate) fn seek_to(offset: i64, whence: c_int, cur: i64, eof: i64) -> Result<i64, c_int> {
    let base = match whence {
        MPI_SEEK_SET => 0,
        MPI_SEEK_CUR => cur,
        MPI_SEEK_END => eof,
        _ => return Err(MPI_ERR_ARG),
    };
    base.checked_add(offset)
        .filter(|&p| p >= 0)
        .ok_or(MPI_ERR_ARG)
}

crate::mpi! {
    /// `MPI_File_seek`: the individual file pointer.
    fn PMPI_File_seek(fh: MPI_File, offset: i64, whence: c_int) -> c_int as MPI_File_seek {
        call(fh, "MPI_File_seek", |e| {
            with(e, |g| {
                if g.amode & MPI_MODE_SEQUENTIAL != 0 {
                    return Err(MPI_ERR_UNSUPPORTED_OPERATION);
                }
                let eof = if whence == MPI_SEEK_END { g.view.eof(access::size(&g.file)?) } else { 0 };
                g.pos = seek_to(offset, whence, g.pos, eof)?;
                Ok(())
            })
        })
    }
}

crate::mpi! {
    /// `MPI_File_get_position`: the individual pointer, in etypes.
    fn PMPI_File_get_position(fh: MPI_File, offset: *mut i64) -> c_int as MPI_File_get_position {
        call(fh, "MPI_File_get_position", |e| {
            let p = with(e, |g| {
                if g.amode & MPI_MODE_SEQUENTIAL != 0 {
                    return Err(MPI_ERR_UNSUPPORTED_OPERATION);
                }
                Ok(g.pos)
            })?;
            // SAFETY: MPI's contract.
            unsafe { out(offset, p) }
        })
    }
}

crate::mpi! {
    /// `MPI_File_seek_shared`: collective; rank 0 moves the shared
    /// pointer, the others wait for it.
    fn PMPI_File_seek_shared(fh: MPI_File, offset: i64, whence: c_int) -> c_int as MPI_File_seek_shared {
        call(fh, "MPI_File_seek_shared", |e| {
            if !matches!(whence, MPI_SEEK_SET | MPI_SEEK_CUR | MPI_SEEK_END) {
                return Err(MPI_ERR_ARG);
            }
            super::by_rank0(e, |g| {
                let eof = if whence == MPI_SEEK_END { g.view.eof(access::size(&g.file)?) } else { 0 };
                let cur = g.shared.get()?;
                g.shared.set(seek_to(offset, whence, cur, eof)?)
            })
        })
    }
}

crate::mpi! {
    /// `MPI_File_get_position_shared`: the shared pointer, in etypes.
    fn PMPI_File_get_position_shared(fh: MPI_File, offset: *mut i64) -> c_int as MPI_File_get_position_shared {
        call(fh, "MPI_File_get_position_shared", |e| {
            let p = with(e, |g| g.shared.get())?;
            // SAFETY: MPI's contract.
            unsafe { out(offset, p) }
        })
    }
}
