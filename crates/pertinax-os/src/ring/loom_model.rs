//! The loom build's ring memory: a heap model of the data area and of the
//! two positions (see the module documentation of [`super`]).

use std::sync::Arc;

use loom::cell::UnsafeCell;

use super::{Mapping, HEADER_BYTES, LINE, META_BYTES};
use crate::sync::{AtomicU64, Ordering::Relaxed};

/// Bytes of a line after its stamp word.
const REST: usize = LINE - 8;

struct Line {
    /// Bytes 0..8: the stamp word, and payload where a record spans
    /// the line.
    stamp: AtomicU64,
    /// Bytes 8..64.
    rest: UnsafeCell<[u8; REST]>,
}

struct Mem {
    head: AtomicU64,
    tail: AtomicU64,
    lines: Box<[Line]>,
}

/// One ring, shared by the producer's and the consumer's `Raw`.
pub(super) struct Raw {
    mem: Arc<Mem>,
    pub(super) size: u64,
}

// SAFETY: as for the shared-memory `Raw`: the SPSC protocol makes each
// end usable from one thread at a time (`&mut self` methods), and it is
// what the models check; loom's cells and atomics see every access.
unsafe impl Send for Raw {}

/// The shared-memory constructor has no model: the loom tests build
/// their rings with [`pair`].
pub(super) fn new_raw(_: Arc<Mapping>, _: usize, _: usize, _: usize) -> Raw {
    unreachable!("the loom build models rings on the heap (ring::loom_model::pair)")
}

/// A ring of `lines` lines whose ends both start at position `start`
/// (a line boundary); the stamp word of every other line holds
/// `garbage(line)` and the rest of every line 0xAB, as stale bytes of
/// earlier laps would.
pub(super) fn pair(lines: usize, start: u64, garbage: impl Fn(usize) -> u64) -> (Raw, Raw) {
    let first = (start / LINE as u64) as usize % lines;
    let mem = Arc::new(Mem {
        head: AtomicU64::new(start),
        tail: AtomicU64::new(start),
        lines: (0..lines)
            .map(|i| Line {
                stamp: AtomicU64::new(if i == first { 0 } else { garbage(i) }),
                rest: UnsafeCell::new([0xAB; REST]),
            })
            .collect(),
    });
    let size = (lines * LINE) as u64;
    (
        Raw {
            mem: mem.clone(),
            size,
        },
        Raw { mem, size },
    )
}

impl Raw {
    pub(super) fn head(&self) -> &AtomicU64 {
        &self.mem.head
    }

    pub(super) fn tail(&self) -> &AtomicU64 {
        &self.mem.tail
    }

    pub(super) fn stamp(&self, off: u64) -> &AtomicU64 {
        assert!(off.is_multiple_of(LINE as u64) && off < self.size);
        &self.mem.lines[off as usize / LINE].stamp
    }

    /// Writes `bytes` at byte `at` of the record at `off`, line by
    /// line: the part on a stamp word through the atomic (the producer
    /// owns the word, so it reads back its own last value), the rest
    /// through the cell.
    fn put(&self, off: u64, mut at: usize, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let line = &self.mem.lines[off as usize / LINE + at / LINE];
            let col = at % LINE;
            let n = bytes.len().min(LINE - col);
            let (now, later) = bytes.split_at(n);
            for (i, &b) in now.iter().enumerate() {
                let c = col + i;
                if c < 8 {
                    let mut w = line.stamp.load(Relaxed).to_ne_bytes();
                    w[c] = b;
                    line.stamp.store(u64::from_ne_bytes(w), Relaxed);
                }
            }
            if col + n > 8 {
                let from = col.max(8);
                line.rest.with_mut(|r| {
                    // SAFETY: loom checks this access; the bytes lie in
                    // the line.
                    let r = unsafe { &mut *r };
                    r[from - 8..col + n - 8].copy_from_slice(&now[from - col..]);
                });
            }
            at += n;
            bytes = later;
        }
    }

    /// Reads `out.len()` bytes at byte `at` of the record at `off`.
    fn get(&self, off: u64, mut at: usize, mut out: &mut [u8]) {
        while !out.is_empty() {
            let line = &self.mem.lines[off as usize / LINE + at / LINE];
            let col = at % LINE;
            let n = out.len().min(LINE - col);
            let (now, later) = out.split_at_mut(n);
            if col < 8 {
                let w = line.stamp.load(Relaxed).to_ne_bytes();
                let k = n.min(8 - col);
                now[..k].copy_from_slice(&w[col..col + k]);
            }
            if col + n > 8 {
                let from = col.max(8);
                line.rest.with(|r| {
                    // SAFETY: loom checks this access; the bytes lie in
                    // the line.
                    let r = unsafe { &*r };
                    now[from - col..].copy_from_slice(&r[from - 8..col + n - 8]);
                });
            }
            at += n;
            out = later;
        }
    }

    pub(super) unsafe fn write_header(&self, off: u64, len: u32, flags: u32) {
        self.put(off, 8, &len.to_ne_bytes());
        self.put(off, 12, &flags.to_ne_bytes());
    }

    pub(super) unsafe fn write_record(
        &self,
        off: u64,
        meta: &[u8],
        len: usize,
        fill: impl FnOnce(&mut [u8]),
    ) {
        let mut payload = vec![0u8; len];
        fill(&mut payload);
        self.put(off, 8, &(len as u32).to_ne_bytes());
        self.put(off, 12, &0u32.to_ne_bytes());
        self.put(off, 16, meta);
        self.put(off, HEADER_BYTES, &payload);
    }

    pub(super) unsafe fn header(&self, off: u64) -> (u32, u32) {
        let mut b = [0u8; 8];
        self.get(off, 8, &mut b);
        let [l0, l1, l2, l3, f0, f1, f2, f3] = b;
        (
            u32::from_ne_bytes([l0, l1, l2, l3]),
            u32::from_ne_bytes([f0, f1, f2, f3]),
        )
    }

    pub(super) unsafe fn len(&self, off: u64) -> u32 {
        // SAFETY: the caller's contract.
        unsafe { self.header(off).0 }
    }

    pub(super) unsafe fn meta<M: bytemuck::Pod>(&self, off: u64) -> M {
        let mut b = [0u8; META_BYTES];
        self.get(off, 16, &mut b);
        bytemuck::pod_read_unaligned(&b)
    }

    pub(super) fn payload_into(&self, off: u64, len: usize, out: &mut Vec<u8>) {
        out.clear();
        out.resize(len, 0);
        self.get(off, HEADER_BYTES, out);
    }
}
