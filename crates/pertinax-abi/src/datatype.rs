//! Datatypes: every type, predefined or derived, has a [`Layout`] (its
//! size, bounds, the byte blocks of one element, its basic elements), and
//! the reduction operations on them.
//!
//! Predefined types are the builtin handles (their size is in the
//! handle) and the pair types `MPI_FLOAT_INT`, `MPI_DOUBLE_INT`,
//! `MPI_LONG_INT`, `MPI_SHORT_INT`, `MPI_LONG_DOUBLE_INT` (direct handles
//! 0-4, with C's padded layouts: `MPI_DOUBLE_INT` has size 12 and extent
//! 16). Derived types (`types/constructor.rs` builds them) live in the
//! state's table, handle `DATATYPE_DIRECT | (16 + index)`.
//!
//! Buffers (`buf.rs`): [`SendBuf`] and [`RecvBuf`] are what every call
//! moves. A buffer whose elements are contiguous is used in place (zero
//! copy); any other is packed into a temporary before sending, or
//! received into one that is unpacked into the program's buffer when the
//! operation completes (only what arrived, for a short message).
//! Reductions (`reduction.rs`) run on packed data: a derived type built of
//! one predefined type reduces as that type's elements.

use std::ffi::c_int;
use std::rc::Rc;

use crate::consts::*;
use crate::errors::raise;
use crate::state;

mod buf;
mod reduction;

pub(crate) use buf::{RecvBuf, SendBuf, Typed};
pub(crate) use reduction::reduction;

/// How a type was made (`MPI_Type_get_envelope`/`_get_contents`).
#[derive(Debug, Default)]
pub(crate) struct Contents {
    pub combiner: c_int,
    pub ints: Vec<c_int>,
    pub addrs: Vec<isize>,
    /// The large counts of a `_c` constructor whose counts do not all fit
    /// an `int` (then `ints` holds only the rest, as MPI orders them).
    pub large: Vec<i64>,
    /// The types given, with the layout of each derived one (kept so that
    /// `MPI_Type_get_contents` can hand out a copy after it was freed).
    pub types: Vec<(c_int, Option<Rc<Layout>>)>,
}

/// What a datatype is.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    /// Bytes of data in one element.
    pub size: usize,
    pub lb: isize,
    /// `ub - lb`: the distance between consecutive elements.
    pub extent: isize,
    pub true_lb: isize,
    pub true_extent: isize,
    /// The data of one element in typemap order: (offset from the
    /// element's origin, length), adjacent blocks merged.
    pub blocks: Vec<(isize, usize)>,
    /// The basic elements of one element in typemap order, run-length
    /// encoded: (predefined type, count).
    pub prims: Vec<(c_int, usize)>,
    /// The one predefined type (and its size) the type is built of, if
    /// only one (pair types count as one: `MPI_DOUBLE_INT` for MINLOC).
    pub base: Option<(c_int, usize)>,
    /// The largest alignment of its basic elements (a struct's extent is
    /// rounded up to it, as C pads a struct).
    pub align: usize,
    pub committed: bool,
    pub predefined: bool,
    pub name: Vec<u8>,
    pub contents: Rc<Contents>,
}

/// The size in bytes of a builtin datatype (bits 30-31 = 1, type 0x0c:
/// size in bits 8-15), if `ty` is one.
pub(crate) fn builtin_size(ty: c_int) -> Option<usize> {
    if (ty as u32) & 0xfc00_0000 == 0x4c00_0000 {
        let n = ((ty as u32) >> 8) & 0xff;
        (n > 0).then_some(n as usize)
    } else {
        None
    }
}

/// The size in bytes of predefined datatype `ty`, if it is one (the pair
/// types: the bytes of data, not the extent).
pub fn size_of(ty: c_int) -> Option<usize> {
    match ty {
        MPI_FLOAT_INT => Some(8),
        MPI_DOUBLE_INT | MPI_LONG_INT => Some(12),
        MPI_SHORT_INT => Some(6),
        MPI_LONG_DOUBLE_INT => Some(20),
        t => builtin_size(t),
    }
}

/// The name of a predefined type (empty for a handle that is none).
fn predefined_name(ty: c_int) -> &'static str {
    match ty {
        MPI_CHAR => "MPI_CHAR",
        MPI_UNSIGNED_CHAR => "MPI_UNSIGNED_CHAR",
        MPI_SHORT => "MPI_SHORT",
        MPI_UNSIGNED_SHORT => "MPI_UNSIGNED_SHORT",
        MPI_INT => "MPI_INT",
        MPI_UNSIGNED => "MPI_UNSIGNED",
        MPI_LONG => "MPI_LONG",
        MPI_UNSIGNED_LONG => "MPI_UNSIGNED_LONG",
        MPI_LONG_LONG_INT => "MPI_LONG_LONG_INT",
        MPI_FLOAT => "MPI_FLOAT",
        MPI_DOUBLE => "MPI_DOUBLE",
        MPI_LONG_DOUBLE => "MPI_LONG_DOUBLE",
        MPI_BYTE => "MPI_BYTE",
        MPI_WCHAR => "MPI_WCHAR",
        MPI_PACKED => "MPI_PACKED",
        MPI_FLOAT_INT => "MPI_FLOAT_INT",
        MPI_DOUBLE_INT => "MPI_DOUBLE_INT",
        MPI_LONG_INT => "MPI_LONG_INT",
        MPI_SHORT_INT => "MPI_SHORT_INT",
        MPI_2INT => "MPI_2INT",
        MPI_LONG_DOUBLE_INT => "MPI_LONG_DOUBLE_INT",
        MPI_SIGNED_CHAR => "MPI_SIGNED_CHAR",
        MPI_UNSIGNED_LONG_LONG => "MPI_UNSIGNED_LONG_LONG",
        MPI_INT8_T => "MPI_INT8_T",
        MPI_INT16_T => "MPI_INT16_T",
        MPI_INT32_T => "MPI_INT32_T",
        MPI_INT64_T => "MPI_INT64_T",
        MPI_UINT8_T => "MPI_UINT8_T",
        MPI_UINT16_T => "MPI_UINT16_T",
        MPI_UINT32_T => "MPI_UINT32_T",
        MPI_UINT64_T => "MPI_UINT64_T",
        MPI_C_BOOL => "MPI_C_BOOL",
        MPI_C_FLOAT_COMPLEX => "MPI_C_FLOAT_COMPLEX",
        MPI_C_DOUBLE_COMPLEX => "MPI_C_DOUBLE_COMPLEX",
        MPI_C_LONG_DOUBLE_COMPLEX => "MPI_C_LONG_DOUBLE_COMPLEX",
        MPI_AINT => "MPI_AINT",
        MPI_OFFSET => "MPI_OFFSET",
        MPI_COUNT => "MPI_COUNT",
        MPI_CHARACTER => "MPI_CHARACTER",
        MPI_INTEGER => "MPI_INTEGER",
        MPI_REAL => "MPI_REAL",
        MPI_LOGICAL => "MPI_LOGICAL",
        MPI_COMPLEX => "MPI_COMPLEX",
        MPI_DOUBLE_PRECISION => "MPI_DOUBLE_PRECISION",
        MPI_2INTEGER => "MPI_2INTEGER",
        MPI_2REAL => "MPI_2REAL",
        MPI_DOUBLE_COMPLEX => "MPI_DOUBLE_COMPLEX",
        MPI_2DOUBLE_PRECISION => "MPI_2DOUBLE_PRECISION",
        MPI_REAL2 => "MPI_REAL2",
        MPI_REAL4 => "MPI_REAL4",
        MPI_REAL8 => "MPI_REAL8",
        MPI_REAL16 => "MPI_REAL16",
        MPI_INTEGER1 => "MPI_INTEGER1",
        MPI_INTEGER2 => "MPI_INTEGER2",
        MPI_INTEGER4 => "MPI_INTEGER4",
        MPI_INTEGER8 => "MPI_INTEGER8",
        MPI_INTEGER16 => "MPI_INTEGER16",
        MPI_COMPLEX4 => "MPI_COMPLEX4",
        MPI_COMPLEX8 => "MPI_COMPLEX8",
        MPI_COMPLEX16 => "MPI_COMPLEX16",
        MPI_COMPLEX32 => "MPI_COMPLEX32",
        MPI_LOGICAL1 => "MPI_LOGICAL1",
        MPI_LOGICAL2 => "MPI_LOGICAL2",
        MPI_LOGICAL4 => "MPI_LOGICAL4",
        MPI_LOGICAL8 => "MPI_LOGICAL8",
        MPI_LOGICAL16 => "MPI_LOGICAL16",
        MPI_CXX_BOOL => "MPI_CXX_BOOL",
        MPI_CXX_FLOAT_COMPLEX => "MPI_CXX_FLOAT_COMPLEX",
        MPI_CXX_DOUBLE_COMPLEX => "MPI_CXX_DOUBLE_COMPLEX",
        MPI_CXX_LONG_DOUBLE_COMPLEX => "MPI_CXX_LONG_DOUBLE_COMPLEX",
        MPIX_C_FLOAT16 => "MPIX_C_FLOAT16",
        MPIX_BFLOAT16 => "MPIX_BFLOAT16",
        _ => "",
    }
}

/// The alignment of a basic element: a complex number's is its part's,
/// `MPI_2INT`'s an `int`'s.
fn align_of(ty: c_int, size: usize) -> usize {
    match ty {
        MPI_C_FLOAT_COMPLEX | MPI_C_DOUBLE_COMPLEX | MPI_C_LONG_DOUBLE_COMPLEX => size / 2,
        0x4c00_081e | 0x4c00_1022 | 0x4c00_0834 | 0x4c00_1035 | 0x4c00_2036 => size / 2,
        MPI_2INT => 4,
        _ => size.clamp(1, 16),
    }
}

fn named() -> Rc<Contents> {
    Rc::new(Contents {
        combiner: MPI_COMBINER_NAMED,
        ..Contents::default()
    })
}

/// The layout of builtin `ty` of `size` bytes.
fn builtin(ty: c_int, size: usize) -> Layout {
    Layout {
        size,
        lb: 0,
        extent: size as isize,
        true_lb: 0,
        true_extent: size as isize,
        blocks: vec![(0, size)],
        prims: if ty == MPI_2INT {
            vec![(MPI_INT, 2)]
        } else {
            vec![(ty, 1)]
        },
        base: Some((ty, size)),
        align: align_of(ty, size),
        committed: true,
        predefined: true,
        name: predefined_name(ty).as_bytes().to_vec(),
        contents: named(),
    }
}

/// A pair type `{value; int}` as C lays it out.
fn pair(ty: c_int, value: c_int) -> Layout {
    let v = builtin(value, builtin_size(value).unwrap_or(8));
    let i = builtin(MPI_INT, 4);
    // The `int` at its alignment after the value.
    let off = v.size.next_multiple_of(4) as isize;
    let mut l = build(
        &[
            Part {
                disp: 0,
                count: 1,
                child: &v,
            },
            Part {
                disp: off,
                count: 1,
                child: &i,
            },
        ],
        true,
    );
    l.base = Some((ty, l.size));
    l.committed = true;
    l.predefined = true;
    l.name = predefined_name(ty).as_bytes().to_vec();
    l.contents = named();
    l
}

/// One part of a new type: `count` copies of `child` from byte `disp`,
/// each `child.extent` after the previous.
pub(crate) struct Part<'a> {
    pub disp: isize,
    pub count: usize,
    pub child: &'a Layout,
}

fn push_block(blocks: &mut Vec<(isize, usize)>, off: isize, len: usize) {
    if len == 0 {
        return;
    }
    if let Some(last) = blocks.last_mut() {
        if last.0 + last.1 as isize == off {
            last.1 += len;
            return;
        }
    }
    blocks.push((off, len));
}

fn push_prim(prims: &mut Vec<(c_int, usize)>, t: c_int, n: usize) {
    if n == 0 {
        return;
    }
    if let Some(last) = prims.last_mut() {
        if last.0 == t {
            last.1 += n;
            return;
        }
    }
    prims.push((t, n));
}

/// The layout of the parts side by side (uncommitted, unnamed, without
/// contents); `structure`: a struct's extent is rounded up to its
/// alignment.
pub(crate) fn build(parts: &[Part], structure: bool) -> Layout {
    let mut size = 0usize;
    let mut blocks = Vec::new();
    let mut prims = Vec::new();
    let mut bounds: Option<(isize, isize)> = None;
    let mut truth: Option<(isize, isize)> = None;
    let mut align = 1;
    let live: Vec<&Part> = parts.iter().filter(|p| p.count > 0).collect();
    let base_from: Vec<&Part> = if live.is_empty() {
        parts.iter().collect()
    } else {
        live.clone()
    };
    let base = match base_from.first() {
        Some(first) if base_from.iter().all(|p| p.child.base == first.child.base) => {
            first.child.base
        }
        _ => None,
    };
    for p in &live {
        let c = p.child;
        let n = p.count;
        size += n * c.size;
        align = align.max(c.align);
        let dense = c.blocks.len() == 1 && c.extent == c.size as isize;
        if dense {
            push_block(&mut blocks, p.disp + c.blocks[0].0, n * c.size);
        } else {
            for k in 0..n {
                let at = p.disp + k as isize * c.extent;
                for &(off, len) in &c.blocks {
                    push_block(&mut blocks, at + off, len);
                }
            }
        }
        if c.prims.len() == 1 {
            push_prim(&mut prims, c.prims[0].0, c.prims[0].1 * n);
        } else {
            for _ in 0..n {
                for &(t, m) in &c.prims {
                    push_prim(&mut prims, t, m);
                }
            }
        }
        let span = (n as isize - 1) * c.extent;
        let lo = p.disp + c.lb + span.min(0);
        let hi = p.disp + c.lb + c.extent + span.max(0);
        bounds = Some(bounds.map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))));
        if c.size > 0 {
            let lo = p.disp + c.true_lb + span.min(0);
            let hi = p.disp + c.true_lb + c.true_extent + span.max(0);
            truth = Some(truth.map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))));
        }
    }
    let (lb, ub) = bounds.unwrap_or((0, 0));
    let (tlb, tub) = truth.unwrap_or((0, 0));
    let mut extent = ub - lb;
    if structure && align > 1 && extent % align as isize != 0 {
        extent += align as isize - extent % align as isize;
    }
    Layout {
        size,
        lb,
        extent,
        true_lb: tlb,
        true_extent: tub - tlb,
        blocks,
        prims,
        base,
        align,
        committed: false,
        predefined: false,
        name: Vec::new(),
        contents: Rc::new(Contents::default()),
    }
}

/// Where derived handles start (indices 0-4 are the pair types).
const FIRST_DERIVED: usize = 16;

/// The layout of any type handle, committed or not.
pub(crate) fn layout(ty: c_int) -> Result<Rc<Layout>, c_int> {
    if let Some(n) = builtin_size(ty) {
        return Ok(Rc::new(builtin(ty, n)));
    }
    match ty {
        MPI_FLOAT_INT => return Ok(Rc::new(pair(ty, MPI_FLOAT))),
        MPI_DOUBLE_INT => return Ok(Rc::new(pair(ty, MPI_DOUBLE))),
        MPI_LONG_INT => return Ok(Rc::new(pair(ty, MPI_LONG))),
        MPI_SHORT_INT => return Ok(Rc::new(pair(ty, MPI_SHORT))),
        MPI_LONG_DOUBLE_INT => return Ok(Rc::new(pair(ty, MPI_LONG_DOUBLE))),
        _ => {}
    }
    let i = derived_index(ty).ok_or(MPI_ERR_TYPE)?;
    state::with(|s| s.datatypes.get(i).cloned().flatten())
        .flatten()
        .ok_or(MPI_ERR_TYPE)
}

/// The table index of a derived type's handle.
fn derived_index(ty: c_int) -> Option<usize> {
    if ty & !0x03ff_ffff != DATATYPE_DIRECT {
        return None;
    }
    ((ty & 0x03ff_ffff) as usize).checked_sub(FIRST_DERIVED)
}

/// Registers a derived type; its handle.
pub(crate) fn add(l: Layout) -> Result<c_int, c_int> {
    state::with(|s| {
        DATATYPE_DIRECT | (FIRST_DERIVED + state::insert(&mut s.datatypes, Rc::new(l))) as c_int
    })
    .ok_or(MPI_ERR_OTHER)
}

/// Replaces derived type `ty`'s layout (commit, name).
pub(crate) fn update(ty: c_int, f: impl FnOnce(&mut Layout)) -> Result<(), c_int> {
    let i = derived_index(ty).ok_or(MPI_ERR_TYPE)?;
    state::with(|s| match s.datatypes.get_mut(i) {
        Some(Some(l)) => {
            f(Rc::make_mut(l));
            Ok(())
        }
        _ => Err(MPI_ERR_TYPE),
    })
    .ok_or(MPI_ERR_OTHER)?
}

/// Frees derived type `ty`.
pub(crate) fn remove(ty: c_int) -> Result<(), c_int> {
    let i = derived_index(ty).ok_or(MPI_ERR_TYPE)?;
    state::with(|s| s.datatypes.get_mut(i).and_then(Option::take))
        .flatten()
        .map(drop)
        .ok_or(MPI_ERR_TYPE)
}

/// A type as the calls that move data see it.
#[derive(Debug, Clone)]
pub(crate) enum Ty {
    /// A builtin type: contiguous, `size` bytes an element.
    Plain(c_int, usize),
    Derived(Rc<Layout>),
}

/// A type a communication may use: predefined, or derived and committed
/// (else `MPI_ERR_TYPE`).
pub(crate) fn usable(ty: c_int) -> Result<Ty, c_int> {
    if let Some(n) = builtin_size(ty) {
        return Ok(Ty::Plain(ty, n));
    }
    let l = layout(ty)?;
    if !l.committed {
        return Err(MPI_ERR_TYPE);
    }
    Ok(Ty::Derived(l))
}

/// The element size of a usable type whose elements lie packed in the
/// buffer (every predefined one, and a derived one laid out so); any
/// other is `MPI_ERR_UNSUPPORTED_OPERATION` for the calls that move bytes
/// without packing (the neighbourhood and intercommunicator collectives).
pub(crate) fn packed_size(ty: c_int) -> Result<usize, c_int> {
    let t = usable(ty)?;
    if t.packed_like() {
        Ok(t.size())
    } else {
        Err(MPI_ERR_UNSUPPORTED_OPERATION)
    }
}

/// `count` as a `usize`, or `MPI_ERR_COUNT`.
pub(crate) fn count_of<T: TryInto<usize>>(count: T) -> Result<usize, c_int> {
    count.try_into().map_err(|_| MPI_ERR_COUNT)
}

impl Ty {
    pub(crate) fn size(&self) -> usize {
        match self {
            Ty::Plain(_, n) => *n,
            Ty::Derived(l) => l.size,
        }
    }

    pub(crate) fn extent(&self) -> isize {
        match self {
            Ty::Plain(_, n) => *n as isize,
            Ty::Derived(l) => l.extent,
        }
    }

    /// The byte length of `count` elements' data.
    pub(crate) fn bytes(&self, count: usize) -> Result<usize, c_int> {
        count.checked_mul(self.size()).ok_or(MPI_ERR_COUNT)
    }

    /// Where the data of `count` elements starts, if it is one contiguous
    /// run.
    fn direct(&self, count: usize) -> Option<isize> {
        match self {
            Ty::Plain(..) => Some(0),
            Ty::Derived(l) => match l.blocks.as_slice() {
                [] => Some(0),
                [(off, len)] if count <= 1 || l.extent == *len as isize => Some(*off),
                _ => None,
            },
        }
    }

    /// Whether element `k` is the bytes `k * size ..` of the buffer (so
    /// displacements in elements are displacements in packed elements).
    pub(crate) fn packed_like(&self) -> bool {
        self.direct(2) == Some(0) && self.extent() == self.size() as isize
    }

    /// The element size for a receive's length check: the base type's,
    /// or 1 byte for a type of mixed elements.
    pub(crate) fn recv_elem(&self) -> usize {
        match self {
            Ty::Plain(_, n) => *n,
            Ty::Derived(l) => l.base.map_or(1, |(_, n)| n.max(1)),
        }
    }

    /// The one predefined type it is built of (for a reduction).
    pub(crate) fn base(&self) -> Option<c_int> {
        match self {
            Ty::Plain(t, _) => Some(*t),
            Ty::Derived(l) => l.base.map(|(t, _)| t),
        }
    }

    fn layout(&self) -> Rc<Layout> {
        match self {
            Ty::Plain(t, n) => Rc::new(builtin(*t, *n)),
            Ty::Derived(l) => l.clone(),
        }
    }
}

/// Appends the data of `count` elements of `l` at `buf` to `out`.
///
/// # Safety
/// `buf` holds `count` elements of `l`.
pub(crate) unsafe fn pack(l: &Layout, buf: *const u8, count: usize, out: &mut Vec<u8>) {
    out.reserve(count * l.size);
    for k in 0..count {
        let at = buf.wrapping_offset(k as isize * l.extent);
        for &(off, len) in &l.blocks {
            // SAFETY: by the caller's contract the block is in the buffer.
            let src = unsafe { std::slice::from_raw_parts(at.wrapping_offset(off), len) };
            out.extend_from_slice(src);
        }
    }
}

/// Writes packed `data` into elements of `l` at `buf`, in typemap order,
/// as far as `data` goes (at most `count` elements).
///
/// # Safety
/// `buf` holds `count` elements of `l`, not otherwise borrowed.
pub(crate) unsafe fn unpack(l: &Layout, data: &[u8], buf: *mut u8, count: usize) {
    let mut rest = data;
    for k in 0..count {
        let at = buf.wrapping_offset(k as isize * l.extent);
        for &(off, len) in &l.blocks {
            if rest.is_empty() {
                return;
            }
            let n = len.min(rest.len());
            // SAFETY: by the caller's contract the block is in the buffer;
            // `rest` holds `n` bytes.
            unsafe {
                std::ptr::copy_nonoverlapping(rest.as_ptr(), at.wrapping_offset(off), n);
            }
            rest = &rest[n..];
        }
    }
}

/// The byte length of `count` elements of a usable `ty`, and the element
/// size for the receive's length check.
#[cfg(test)]
pub(crate) fn bytes(count: c_int, ty: c_int) -> Result<(usize, usize), c_int> {
    let t = usable(ty)?;
    let n = count_of(count)?;
    Ok((t.bytes(n)?, t.recv_elem()))
}

/// `(lb, extent)` or the true ones of any type.
fn bounds(ty: c_int, truth: bool) -> Result<(isize, isize), c_int> {
    let l = layout(ty)?;
    Ok(if truth {
        (l.true_lb, l.true_extent)
    } else {
        (l.lb, l.extent)
    })
}

/// Writes `ty`'s bounds to `lb` and `extent` (`T`: `MPI_Aint` or
/// `MPI_Count`).
///
/// # Safety
/// `lb` and `extent` null or writable.
pub(crate) unsafe fn put_bounds<T: From<i64>>(
    ty: c_int,
    lb: *mut T,
    extent: *mut T,
    truth: bool,
    what: &str,
) -> c_int {
    let (l, e) = match bounds(ty, truth) {
        Ok(b) => b,
        Err(code) => return raise(MPI_COMM_WORLD, what, code),
    };
    if lb.is_null() || extent.is_null() {
        return raise(MPI_COMM_WORLD, what, MPI_ERR_ARG);
    }
    // SAFETY: checked non-null; writable by the caller's contract.
    unsafe {
        lb.write(T::from(l as i64));
        extent.write(T::from(e as i64));
    }
    MPI_SUCCESS
}

/// Writes `ty`'s size (`MPI_UNDEFINED` past `T`'s range).
///
/// # Safety
/// `out` null or writable.
pub(crate) unsafe fn put_size<T: TryFrom<usize>>(
    ty: c_int,
    out: *mut T,
    undefined: T,
    what: &str,
) -> c_int {
    match layout(ty) {
        // SAFETY: by the caller's contract.
        Ok(l) => unsafe {
            crate::put(
                out,
                T::try_from(l.size).unwrap_or(undefined),
                MPI_COMM_WORLD,
                what,
            )
        },
        Err(code) => raise(MPI_COMM_WORLD, what, code),
    }
}

crate::mpi! {
    /// `MPI_Type_size`.
    fn PMPI_Type_size(ty: c_int, size: *mut c_int) -> c_int as MPI_Type_size {
        // SAFETY: MPI's contract: `size` is null or writable.
        unsafe { put_size(ty, size, MPI_UNDEFINED, "MPI_Type_size") }
    }
}

crate::mpi! {
    /// `MPI_Type_get_extent`.
    fn PMPI_Type_get_extent(ty: c_int, lb: *mut crate::MPI_Aint, ext: *mut crate::MPI_Aint) -> c_int as MPI_Type_get_extent {
        // SAFETY: MPI's contract for the out-pointers.
        unsafe { put_bounds::<i64>(ty, lb.cast(), ext.cast(), false, "MPI_Type_get_extent") }
    }
}

crate::mpi! {
    /// `MPI_Type_get_true_extent`.
    fn PMPI_Type_get_true_extent(ty: c_int, lb: *mut crate::MPI_Aint, ext: *mut crate::MPI_Aint) -> c_int as MPI_Type_get_true_extent {
        // SAFETY: MPI's contract for the out-pointers.
        unsafe { put_bounds::<i64>(ty, lb.cast(), ext.cast(), true, "MPI_Type_get_true_extent") }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_the_handles() {
        assert_eq!(size_of(MPI_INT), Some(4));
        assert_eq!(size_of(MPI_DOUBLE), Some(8));
        assert_eq!(size_of(MPI_CHAR), Some(1));
        assert_eq!(size_of(MPI_2INT), Some(8));
        assert_eq!(size_of(MPI_DOUBLE_INT), Some(12));
        assert_eq!(size_of(MPI_DATATYPE_NULL), None);
        assert_eq!(size_of(0x4c00_0010), None, "MPI_LB has no size");
        assert_eq!(bytes(-1, MPI_INT), Err(MPI_ERR_COUNT));
        assert_eq!(bytes(3, MPI_INT), Ok((12, 4)));
        assert_eq!(bytes(3, MPI_DATATYPE_NULL), Err(MPI_ERR_TYPE));
    }

    #[test]
    fn pair_types_have_cs_padded_layouts() {
        let d = pair(MPI_DOUBLE_INT, MPI_DOUBLE);
        assert_eq!((d.size, d.lb, d.extent), (12, 0, 16));
        assert_eq!(d.blocks, vec![(0, 12)]);
        assert_eq!(d.prims, vec![(MPI_DOUBLE, 1), (MPI_INT, 1)]);
        let s = pair(MPI_SHORT_INT, MPI_SHORT);
        assert_eq!((s.size, s.extent, s.true_extent), (6, 8, 8));
        assert_eq!(s.blocks, vec![(0, 2), (4, 4)]);
        let f = pair(MPI_FLOAT_INT, MPI_FLOAT);
        assert_eq!((f.size, f.extent), (8, 8));
        let ld = pair(MPI_LONG_DOUBLE_INT, MPI_LONG_DOUBLE);
        assert_eq!((ld.size, ld.extent), (20, 32));
    }

    #[test]
    fn a_vector_packs_and_unpacks_its_blocks() {
        let int = builtin(MPI_INT, 4);
        // vector(3, 1, 2, INT): ints 0, 2, 4.
        let parts: Vec<Part> = (0..3)
            .map(|i| Part {
                disp: i * 8,
                count: 1,
                child: &int,
            })
            .collect();
        let v = build(&parts, false);
        assert_eq!((v.size, v.extent, v.blocks.len()), (12, 20, 3));
        let src: Vec<i32> = (0..10).collect();
        let mut out = Vec::new();
        // SAFETY: `src` holds 2 elements of extent 20 (the second ends at
        // byte 40).
        unsafe { pack(&v, src.as_ptr().cast(), 2, &mut out) };
        let got: Vec<i32> = out
            .chunks(4)
            .map(|c| i32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        assert_eq!(got, [0, 2, 4, 5, 7, 9]);
        let mut dst = vec![-1i32; 10];
        // SAFETY: as above; only 7 bytes: one int and part of the next.
        unsafe { unpack(&v, &out[..7], dst.as_mut_ptr().cast(), 2) };
        assert_eq!(dst[0], 0);
        assert_eq!(dst[2] & 0xff_ffff, 2);
        assert_eq!(dst[4], -1);
    }
}
