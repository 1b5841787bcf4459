//! The buffers every call moves: [`SendBuf`] and [`RecvBuf`]. A buffer
//! whose elements are contiguous is used in place (zero copy); any other
//! is packed into a temporary before sending, or received into one that
//! is unpacked into the program's buffer when the operation completes
//! (only what arrived, for a short message). [`RecvBuf::folded`] receives
//! contributions to reduce into one.

use std::ffi::{c_int, c_void};
use std::ops::Range;
use std::rc::Rc;

use pertinax::ErasedOp;

use super::{pack, unpack, Layout, Ty};
use crate::consts::*;

/// What `SendBuf` and `RecvBuf` share: the byte length of `segs` of `ty`
/// at `buf` (a NULL `buf` holding data is `MPI_ERR_BUFFER`), and the
/// byte offset of the data in `buf` when it is one contiguous run.
fn plan<P>(
    buf: *const P,
    segs: &[(isize, usize)],
    ty: &Ty,
) -> Result<(usize, Option<isize>), c_int> {
    let total = segs
        .iter()
        .try_fold(0usize, |a, &(_, n)| a.checked_add(ty.bytes(n).ok()?))
        .ok_or(MPI_ERR_COUNT)?;
    if total > 0 {
        crate::check::buffer(buf.cast(), 1, ty)?;
    }
    let direct = match segs {
        [(d, n)] => ty.direct(*n).map(|off| d + off),
        _ => None,
    };
    Ok((total, direct))
}

/// One part of a w-collective's buffer: `count` elements of `ty` from
/// byte `disp`.
#[derive(Debug, Clone)]
pub(crate) struct Typed {
    pub disp: isize,
    pub count: usize,
    pub ty: Ty,
}

/// The byte ranges of `parts` packed one after the other (a part with
/// data at NULL is `MPI_ERR_BUFFER`, as [`plan`]).
fn typed_ranges<P>(buf: *const P, parts: &[Typed]) -> Result<Vec<Range<usize>>, c_int> {
    let mut at = 0usize;
    parts
        .iter()
        .map(|p| {
            let len = p.ty.bytes(p.count)?;
            if len > 0 {
                crate::check::part(buf.cast(), p.disp, &p.ty)?;
            }
            let end = at.checked_add(len).ok_or(MPI_ERR_COUNT)?;
            let r = at..end;
            at = end;
            Ok(r)
        })
        .collect()
}

/// Data to send: the program's buffer itself when its elements are
/// contiguous, else a packed copy.
#[derive(Debug)]
pub(crate) struct SendBuf {
    ptr: *const u8,
    len: usize,
    owned: Option<Box<[u8]>>,
}

impl SendBuf {
    /// `count` elements of `ty` at `buf`.
    ///
    /// # Safety
    /// `buf` holds them (MPI's contract), and stays valid and unwritten
    /// while the `SendBuf` (or what it lends) lives.
    pub(crate) unsafe fn new(buf: *const c_void, count: usize, ty: &Ty) -> Result<SendBuf, c_int> {
        // SAFETY: forwarded.
        unsafe { SendBuf::segments(buf, &[(0, count)], ty) }
    }

    /// Segments of `buf`, (byte displacement, count), one after the other.
    ///
    /// # Safety
    /// As [`SendBuf::new`], for every segment.
    pub(crate) unsafe fn segments(
        buf: *const c_void,
        segs: &[(isize, usize)],
        ty: &Ty,
    ) -> Result<SendBuf, c_int> {
        let (total, direct) = plan(buf, segs, ty)?;
        if let Some(at) = direct {
            return Ok(SendBuf {
                ptr: buf.cast::<u8>().wrapping_offset(at),
                len: total,
                owned: None,
            });
        }
        let l = ty.layout();
        let mut out = Vec::with_capacity(total);
        for &(d, n) in segs {
            // SAFETY: by the caller's contract.
            unsafe { pack(&l, buf.cast::<u8>().wrapping_offset(d), n, &mut out) };
        }
        Ok(SendBuf::from_vec(out))
    }

    /// Parts of `buf`, each with a type of its own (a w-collective's send
    /// buffer), packed one after the other; the byte range of each part
    /// in the copy.
    ///
    /// # Safety
    /// As [`SendBuf::new`], for every part.
    pub(crate) unsafe fn typed(
        buf: *const c_void,
        parts: &[Typed],
    ) -> Result<(SendBuf, Vec<Range<usize>>), c_int> {
        let ranges = typed_ranges(buf, parts)?;
        let mut out = Vec::with_capacity(ranges.last().map_or(0, |r| r.end));
        for p in parts {
            let l = p.ty.layout();
            // SAFETY: by the caller's contract.
            unsafe {
                pack(
                    &l,
                    buf.cast::<u8>().wrapping_offset(p.disp),
                    p.count,
                    &mut out,
                )
            };
        }
        Ok((SendBuf::from_vec(out), ranges))
    }

    /// Bytes of its own.
    pub(crate) fn from_vec(v: Vec<u8>) -> SendBuf {
        let owned = v.into_boxed_slice();
        SendBuf {
            ptr: owned.as_ptr(),
            len: owned.len(),
            owned: Some(owned),
        }
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        if self.len == 0 || self.ptr.is_null() {
            return &[];
        }
        // SAFETY: the program's buffer (valid by `new`'s contract) or the
        // copy this owns.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// The bytes lent without a scope, and the copy to keep until the
    /// operation completes.
    pub(crate) fn lend(self) -> (pertinax_os::lend::Lent, Option<Box<[u8]>>) {
        // SAFETY: `new`'s contract for the program's buffer; a copy lives
        // in the returned box, which the caller keeps with the request.
        let lent = unsafe { pertinax_os::lend::lend_raw(self.ptr, self.len) };
        (lent, self.owned)
    }
}

/// Where received data goes: the program's buffer itself when its
/// elements are contiguous, else a temporary unpacked by
/// [`RecvBuf::finish`].
#[derive(Debug)]
pub(crate) struct RecvBuf {
    ptr: *mut u8,
    len: usize,
    stage: Option<Stage>,
}

#[derive(Debug)]
struct Stage {
    data: Box<[u8]>,
    user: *mut u8,
    /// Where the data goes, one segment after the other: (byte
    /// displacement, count, the segment's type).
    segs: Vec<(isize, usize, Rc<Layout>)>,
    /// Instead: contributions to fold into one (see [`RecvBuf::folded`]).
    fold: Option<Fold>,
}

/// Contributions received one after the other, `part` bytes each, folded
/// left by `op` in their order (`x0 op x1 op ...`, as MPI reduces in rank
/// order); bytes `window` of the result go to the program's buffer.
#[derive(Debug)]
struct Fold {
    op: ErasedOp,
    part: usize,
    window: Range<usize>,
}

impl RecvBuf {
    /// Nothing (a non-root's receive buffer).
    pub(crate) fn empty() -> RecvBuf {
        RecvBuf {
            ptr: std::ptr::null_mut(),
            len: 0,
            stage: None,
        }
    }

    /// `len` bytes of scratch, of its own, unpacked nowhere (a scatter
    /// root's own part with `MPI_IN_PLACE`).
    pub(crate) fn scratch(len: usize) -> RecvBuf {
        let mut data = vec![0u8; len].into_boxed_slice();
        RecvBuf {
            ptr: data.as_mut_ptr(),
            len,
            stage: Some(Stage {
                data,
                user: std::ptr::null_mut(),
                segs: Vec::new(),
                fold: None,
            }),
        }
    }

    /// `count` elements of `ty` at `buf`.
    ///
    /// # Safety
    /// `buf` holds them (MPI's contract), valid and not otherwise accessed
    /// until the `RecvBuf` is finished (or dropped).
    pub(crate) unsafe fn new(buf: *mut c_void, count: usize, ty: &Ty) -> Result<RecvBuf, c_int> {
        // SAFETY: forwarded.
        unsafe { RecvBuf::segments(buf, &[(0, count)], ty) }
    }

    /// Segments of `buf`, (byte displacement, count), which the data fills
    /// one after the other.
    ///
    /// # Safety
    /// As [`RecvBuf::new`], for every segment.
    pub(crate) unsafe fn segments(
        buf: *mut c_void,
        segs: &[(isize, usize)],
        ty: &Ty,
    ) -> Result<RecvBuf, c_int> {
        let (total, direct) = plan(buf, segs, ty)?;
        if let Some(at) = direct {
            return Ok(RecvBuf {
                ptr: buf.cast::<u8>().wrapping_offset(at),
                len: total,
                stage: None,
            });
        }
        let l = ty.layout();
        let segs = segs.iter().map(|&(d, n)| (d, n, l.clone())).collect();
        Ok(RecvBuf::staged_in(buf, total, segs))
    }

    /// Parts of `buf`, each with a type of its own (a w-collective's
    /// receive buffer), received into a temporary one after the other;
    /// the byte range of each part in it.
    ///
    /// # Safety
    /// As [`RecvBuf::new`], for every part.
    pub(crate) unsafe fn typed(
        buf: *mut c_void,
        parts: &[Typed],
    ) -> Result<(RecvBuf, Vec<Range<usize>>), c_int> {
        let ranges = typed_ranges(buf, parts)?;
        let total = ranges.last().map_or(0, |r| r.end);
        let segs = parts
            .iter()
            .map(|p| (p.disp, p.count, p.ty.layout()))
            .collect();
        Ok((RecvBuf::staged_in(buf, total, segs), ranges))
    }

    /// A temporary of `total` bytes unpacked into `segs` of `buf`.
    fn staged_in(buf: *mut c_void, total: usize, segs: Vec<(isize, usize, Rc<Layout>)>) -> RecvBuf {
        let mut data = vec![0u8; total].into_boxed_slice();
        RecvBuf {
            ptr: data.as_mut_ptr(),
            len: total,
            stage: Some(Stage {
                data,
                user: buf.cast(),
                segs,
                fold: None,
            }),
        }
    }

    /// `parts` contributions of `part` bytes each, received into a
    /// temporary and folded by `op` when [`finish`](RecvBuf::finish)ed;
    /// bytes `window` of the result (packed) go to `buf`.
    ///
    /// # Safety
    /// `buf` holds `window.len()` bytes, valid and not otherwise accessed
    /// until the `RecvBuf` is finished (or dropped).
    pub(crate) unsafe fn folded(
        buf: *mut c_void,
        part: usize,
        parts: usize,
        op: ErasedOp,
        window: Range<usize>,
    ) -> Result<RecvBuf, c_int> {
        if window.end > part {
            return Err(MPI_ERR_COUNT);
        }
        let total = part.checked_mul(parts).ok_or(MPI_ERR_COUNT)?;
        let mut b = RecvBuf::staged_in(buf, total, Vec::new());
        if let Some(s) = b.stage.as_mut() {
            s.fold = Some(Fold { op, part, window });
        }
        Ok(b)
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The bytes to receive into.
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        if self.len == 0 || self.ptr.is_null() {
            return &mut [];
        }
        // SAFETY: the program's buffer (by `new`'s contract) or the
        // temporary this owns.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }

    /// The buffer's current contents, packed (an `MPI_IN_PLACE` input).
    pub(crate) fn current(&self) -> Vec<u8> {
        match &self.stage {
            None => {
                if self.len == 0 || self.ptr.is_null() {
                    return Vec::new();
                }
                // SAFETY: the program's buffer, by `new`'s contract.
                unsafe { std::slice::from_raw_parts(self.ptr, self.len) }.to_vec()
            }
            Some(s) => {
                let mut out = Vec::with_capacity(self.len);
                for (d, n, l) in &s.segs {
                    // SAFETY: by `new`'s contract.
                    unsafe { pack(l, s.user.wrapping_offset(*d), *n, &mut out) };
                }
                out
            }
        }
    }

    /// Fills the temporary with the buffer's contents (a buffer that is
    /// both input and output, as a broadcast root's).
    pub(crate) fn load(&mut self) {
        if self.stage.is_some() {
            let cur = self.current();
            self.bytes_mut().copy_from_slice(&cur);
        }
    }

    /// The bytes lent without a scope (the `RecvBuf` is kept with the
    /// request, and finished when it completes).
    pub(crate) fn lend(&mut self) -> pertinax_os::lend::LentMut {
        // SAFETY: `new`'s contract for the program's buffer; a temporary
        // lives in `self`, which the caller keeps with the request.
        unsafe { pertinax_os::lend::lend_mut_raw(self.ptr, self.len) }
    }

    pub(crate) fn staged(&self) -> bool {
        self.stage.is_some()
    }

    /// Unpacks the first `n` bytes received into the program's buffer.
    pub(crate) fn finish(self, n: usize) {
        let Some(s) = self.stage else { return };
        if let Some(f) = &s.fold {
            let mut parts = s.data.chunks_exact(f.part.max(1));
            let Some(first) = parts.next() else { return };
            let mut acc = first.to_vec();
            for p in parts {
                if f.op.combine_bytes(&mut acc, p, true).is_err() {
                    return;
                }
            }
            if let Some(w) = acc.get(f.window.clone()).filter(|w| !w.is_empty()) {
                // SAFETY: by `folded`'s contract `user` holds the window.
                unsafe { std::ptr::copy_nonoverlapping(w.as_ptr(), s.user, w.len()) };
            }
            return;
        }
        let mut rest = &s.data[..n.min(s.data.len())];
        for (d, k, l) in &s.segs {
            let take = rest.len().min(k * l.size);
            // SAFETY: by `new`'s contract the segment holds `k` elements.
            unsafe { unpack(l, &rest[..take], s.user.wrapping_offset(*d), *k) };
            rest = &rest[take..];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{build, builtin, Part};
    use super::*;

    #[test]
    fn typed_parts_pack_and_unpack_each_with_its_type() {
        let int = builtin(MPI_INT, 4);
        // ints 0 and 2 of an element of extent 12.
        let v = build(
            &[
                Part {
                    disp: 0,
                    count: 1,
                    child: &int,
                },
                Part {
                    disp: 8,
                    count: 1,
                    child: &int,
                },
            ],
            false,
        );
        let parts = [
            Typed {
                disp: 4,
                count: 1,
                ty: Ty::Derived(Rc::new(v)),
            },
            Typed {
                disp: 20,
                count: 2,
                ty: Ty::Plain(MPI_INT, 4),
            },
        ];
        let src: Vec<i32> = (0..8).collect();
        // SAFETY: `src` holds both parts (ints 1, 3 and 5, 6).
        let (b, ranges) = unsafe { SendBuf::typed(src.as_ptr().cast(), &parts) }.expect("send");
        assert_eq!(ranges, vec![0..8, 8..16]);
        let got: Vec<i32> = b
            .bytes()
            .chunks(4)
            .map(|c| i32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        assert_eq!(got, [1, 3, 5, 6]);
        let mut dst = vec![-1i32; 8];
        // SAFETY: as above, for `dst`.
        let (mut r, _) = unsafe { RecvBuf::typed(dst.as_mut_ptr().cast(), &parts) }.expect("recv");
        r.bytes_mut().copy_from_slice(b.bytes());
        r.finish(usize::MAX);
        assert_eq!(dst, [-1, 1, -1, 3, -1, 5, 6, -1]);
        // A part with data at NULL is MPI_ERR_BUFFER.
        // SAFETY: nothing is read: the check fails first.
        let e = unsafe { SendBuf::typed(std::ptr::null(), &parts[1..]) };
        assert_eq!(e.err(), Some(MPI_ERR_BUFFER));
    }
}
