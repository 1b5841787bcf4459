//! A lock-free single-producer/single-consumer ring of variable-size records
//! in shared memory.
//!
//! # Record format
//!
//! Records start on a 64-byte cache line. Each begins with a 40-byte header:
//! an 8-byte *stamp*, the payload length (4 bytes), flags (4 bytes) and 24
//! bytes of caller metadata, followed by the payload, padded to a whole line.
//! A small message (header plus up to 24 payload bytes) therefore travels in
//! one cache line.
//!
//! # Protocol
//!
//! Positions are monotonically increasing byte counts; the offset in the
//! ring is `pos % size`. The producer writes the header fields and payload of
//! the record at `tail`, then publishes it by storing `stamp = tail + 1` with
//! release ordering. The consumer polls the stamp at `head` with acquire
//! ordering; no separate index is shared on the fast path.
//!
//! Stale bytes from an earlier lap can never look like a stamp: before
//! publishing a record, the producer zeroes the stamp word of the line that
//! follows it, which is why it keeps one line of slack (`need + 64` bytes
//! free). The line the consumer polls next is therefore either zero or a
//! fresh stamp. The consumer hands space back by storing `head` (release) in
//! its own cache line; the producer reads it only when its cached copy says
//! the ring is full.
//!
//! A record never wraps: when it does not fit before the end, the producer
//! fills the rest with a padding record and starts again at offset 0.
//! A producer that dies halfway through a record never publishes it.
//!
//! # Model checking
//!
//! The protocol's atomics go through `crate::sync`, and the memory through
//! `Raw`. Under `--cfg loom` (tests only), `Raw` is a heap model of the ring
//! instead of the shared mapping: each line's stamp word is a loom atomic
//! (payload bytes that fall on it are written and read through it, as they
//! are in the real ring) and the rest of the line a loom cell, so that the
//! models in `loom_tests` check every interleaving of one producer and one
//! consumer: no access to a record's bytes without the stamp's
//! happens-before, no stale line taken for a record, the wrap and its
//! padding record, and the hand-back of space through `head`.

#[cfg(not(all(test, loom)))]
use std::ptr::NonNull;
use std::sync::atomic::AtomicU64 as ShmAtomicU64;
use std::sync::Arc;

use bytemuck::Pod;

use crate::segment::Mapping;
#[cfg(not(all(test, loom)))]
use crate::sync::AtomicU64;
use crate::sync::Ordering;

/// Size of a cache line, the unit of record alignment.
pub const LINE: usize = 64;
/// Bytes of caller metadata carried in every record header.
pub const META_BYTES: usize = 24;
/// Bytes of the record header (stamp, length, flags, metadata).
pub const HEADER_BYTES: usize = 16 + META_BYTES;
/// Smallest ring size accepted.
pub const MIN_RING_BYTES: usize = 4096;

const FLAG_PAD: u32 = 1;

/// The part of a ring shared by both ends besides the data: the consumer's
/// position in a line of its own, and the producer's in another.
#[repr(C, align(64))]
#[derive(Debug)]
pub struct RingCtrl {
    head: ShmAtomicU64,
    _pad0: [u64; 7],
    tail: ShmAtomicU64,
    _pad1: [u64; 7],
}

impl RingCtrl {
    /// Bytes the producer has published so far.
    pub fn tail(&self) -> u64 {
        self.tail.load(std::sync::atomic::Ordering::Acquire)
    }
    /// Bytes the consumer has released so far.
    pub fn head(&self) -> u64 {
        self.head.load(std::sync::atomic::Ordering::Acquire)
    }
}

fn round_up(n: usize) -> usize {
    (n + LINE - 1) & !(LINE - 1)
}

/// Largest payload of one record in a ring of `size` bytes: a record of
/// at most half the ring less a line, so that a record, the padding before
/// it and the slack line after it always fit in an empty ring.
pub fn max_payload(size: usize) -> usize {
    size / 2 - LINE - HEADER_BYTES
}

/// The ring's memory: the shared mapping (see the module documentation for
/// the loom build's model).
#[cfg(not(all(test, loom)))]
struct Raw {
    _map: Arc<Mapping>,
    ctrl: NonNull<RingCtrl>,
    data: NonNull<u8>,
    size: u64,
}

#[cfg(not(all(test, loom)))]
impl Raw {
    fn ctrl(&self) -> &RingCtrl {
        // SAFETY: `ctrl` points into the mapping kept alive by `_map`, is
        // aligned (checked at construction) and RingCtrl is all atomics.
        unsafe { self.ctrl.as_ref() }
    }

    /// The consumer's position.
    #[inline]
    fn head(&self) -> &AtomicU64 {
        &self.ctrl().head
    }

    /// The producer's position.
    #[inline]
    fn tail(&self) -> &AtomicU64 {
        &self.ctrl().tail
    }

    /// The stamp word of the line at ring offset `off`.
    #[inline]
    fn stamp(&self, off: u64) -> &AtomicU64 {
        debug_assert!(off.is_multiple_of(LINE as u64) && off < self.size);
        // SAFETY: `off` is a line offset inside the data area (callers mask
        // positions with `size - 1`); lines are 64-byte aligned, so the word
        // is aligned for AtomicU64; the mapping outlives `self`.
        unsafe { &*(self.data.as_ptr().add(off as usize) as *const AtomicU64) }
    }

    #[inline]
    fn at(&self, off: u64) -> *mut u8 {
        // SAFETY: callers pass offsets inside the data area.
        unsafe { self.data.as_ptr().add(off as usize) }
    }

    /// Writes the length and flags of the header at `off`.
    ///
    /// # Safety
    /// The line at `off` is inside the data area and is free space that
    /// only the producer writes until its stamp is published.
    #[inline]
    unsafe fn write_header(&self, off: u64, len: u32, flags: u32) {
        let p = self.at(off);
        // SAFETY: the caller's contract; the fields lie within the line.
        unsafe {
            std::ptr::write(p.add(8).cast::<u32>(), len);
            std::ptr::write(p.add(12).cast::<u32>(), flags);
        }
    }

    /// Writes the header (no flags), metadata and payload of the record at
    /// `off`, the payload by `fill`.
    ///
    /// # Safety
    /// `[off, off + HEADER_BYTES + len)` lies inside the data area and is
    /// free space that only the producer writes until the stamp is
    /// published.
    #[inline]
    unsafe fn write_record(&self, off: u64, meta: &[u8], len: usize, fill: impl FnOnce(&mut [u8])) {
        debug_assert_eq!(meta.len(), META_BYTES);
        let p = self.at(off);
        // SAFETY: the caller's contract; `meta` holds META_BYTES bytes; the
        // payload slice covers exactly `len` bytes after the header.
        unsafe {
            std::ptr::write(p.add(8).cast::<u32>(), len as u32);
            std::ptr::write(p.add(12).cast::<u32>(), 0);
            std::ptr::copy_nonoverlapping(meta.as_ptr(), p.add(16), META_BYTES);
            fill(std::slice::from_raw_parts_mut(p.add(HEADER_BYTES), len));
        }
    }

    /// The length and flags of the header at `off`.
    ///
    /// # Safety
    /// The record at `off` is published (its stamp was loaded with
    /// acquire) and not yet released.
    #[inline]
    unsafe fn header(&self, off: u64) -> (u32, u32) {
        let p = self.at(off);
        // SAFETY: the caller's contract: the header bytes are initialized
        // and no longer written; they lie in the line at `off`.
        unsafe {
            (
                std::ptr::read(p.add(8).cast::<u32>()),
                std::ptr::read(p.add(12).cast::<u32>()),
            )
        }
    }

    /// The length field of the header at `off`.
    ///
    /// # Safety
    /// As [`Raw::header`].
    #[inline]
    unsafe fn len(&self, off: u64) -> u32 {
        // SAFETY: the caller's contract, as for `header`.
        unsafe { std::ptr::read(self.at(off).add(8).cast::<u32>()) }
    }

    /// The metadata of the record at `off`.
    ///
    /// # Safety
    /// As [`Raw::header`]; `M` is META_BYTES long.
    #[inline]
    unsafe fn meta<M: Pod>(&self, off: u64) -> M {
        // SAFETY: the caller's contract; `M` is Pod, so any bytes are a
        // valid value.
        unsafe { std::ptr::read_unaligned(self.at(off).add(16).cast::<M>()) }
    }

    /// The payload of the record at `off`.
    ///
    /// # Safety
    /// As [`Raw::header`], and `[off, off + HEADER_BYTES + len)` was
    /// checked to lie inside the data area.
    #[inline]
    unsafe fn payload(&self, off: u64, len: usize) -> &[u8] {
        // SAFETY: the caller's contract: published, inside the data area,
        // and the producer does not touch it until `head` passes it.
        unsafe { std::slice::from_raw_parts(self.at(off).add(HEADER_BYTES), len) }
    }
}

// SAFETY: the raw pointers point into a shared mapping that lives as long as
// the Arc we hold; the SPSC protocol makes each end usable from one thread at
// a time, which `&mut self` methods enforce.
#[cfg(not(all(test, loom)))]
unsafe impl Send for Raw {}

#[cfg(not(all(test, loom)))]
fn new_raw(map: Arc<Mapping>, ctrl_off: usize, data_off: usize, size: usize) -> Raw {
    assert!(size.is_power_of_two() && size >= MIN_RING_BYTES);
    assert!(ctrl_off.is_multiple_of(64) && data_off.is_multiple_of(LINE));
    assert!(ctrl_off + std::mem::size_of::<RingCtrl>() <= map.len());
    assert!(data_off + size <= map.len());
    let base = map.as_ptr();
    // SAFETY: offsets were checked against the mapping's length just above.
    let (ctrl, data) = unsafe { (base.add(ctrl_off), base.add(data_off)) };
    Raw {
        ctrl: NonNull::new(ctrl.cast()).expect("mapping is non-null"),
        data: NonNull::new(data).expect("mapping is non-null"),
        _map: map,
        size: size as u64,
    }
}

#[cfg(all(test, loom))]
use loom_model::{new_raw, Raw};

/// The writing end of a ring.
pub struct Producer {
    raw: Raw,
    tail: u64,
    head_cache: u64,
}

impl std::fmt::Debug for Producer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Producer")
            .field("size", &self.raw.size)
            .field("tail", &self.tail)
            .finish()
    }
}

impl Producer {
    /// Opens the producing end of the ring whose control block is at
    /// `ctrl_off` and whose data (`size` bytes, a power of two) is at
    /// `data_off` of `map`. There must be at most one producer per ring.
    pub(crate) fn new(map: Arc<Mapping>, ctrl_off: usize, data_off: usize, size: usize) -> Self {
        let raw = new_raw(map, ctrl_off, data_off, size);
        Producer::over(raw)
    }

    fn over(raw: Raw) -> Producer {
        let tail = raw.tail().load(Ordering::Acquire);
        let head_cache = raw.head().load(Ordering::Acquire);
        Producer {
            raw,
            tail,
            head_cache,
        }
    }

    /// Largest payload one record may carry.
    pub fn max_payload(&self) -> usize {
        max_payload(self.raw.size as usize)
    }

    fn has_room(&mut self, need: u64) -> bool {
        if self.raw.size - (self.tail - self.head_cache) >= need {
            return true;
        }
        self.head_cache = self.raw.head().load(Ordering::Acquire);
        self.raw.size - (self.tail - self.head_cache) >= need
    }

    /// Says whether a record with `len` payload bytes would fit now.
    pub fn can_push(&mut self, len: usize) -> bool {
        let rec = round_up(HEADER_BYTES + len) as u64;
        let off = self.tail & (self.raw.size - 1);
        let pad = if rec > self.raw.size - off {
            self.raw.size - off
        } else {
            0
        };
        self.has_room(pad + rec + LINE as u64)
    }

    /// Appends a record with `meta` and a `len`-byte payload written by
    /// `fill`. Returns `false` (and calls nothing) when the ring is full.
    ///
    /// # Panics
    /// If `len` exceeds [`Producer::max_payload`] or `M` is not
    /// [`META_BYTES`] long: both are programming errors of the caller.
    pub fn try_push_with<M: Pod>(
        &mut self,
        meta: &M,
        len: usize,
        fill: impl FnOnce(&mut [u8]),
    ) -> bool {
        assert_eq!(std::mem::size_of::<M>(), META_BYTES, "ring metadata size");
        assert!(
            len <= self.max_payload(),
            "record payload too large for the ring"
        );
        let size = self.raw.size;
        let mask = size - 1;
        let rec = round_up(HEADER_BYTES + len) as u64;
        let off = self.tail & mask;
        let pad = if rec > size - off { size - off } else { 0 };
        if !self.has_room(pad + rec + LINE as u64) {
            return false;
        }
        if pad > 0 {
            // Zero the line the consumer will poll after the pad, then publish the pad.
            self.raw.stamp(0).store(0, Ordering::Relaxed);
            // SAFETY: [off, size) is free space owned by the producer until
            // the stamp below is published; the header fields lie within it.
            unsafe { self.raw.write_header(off, 0, FLAG_PAD) };
            self.raw.stamp(off).store(self.tail + 1, Ordering::Release);
            self.tail += pad;
        }
        let off = self.tail & mask;
        // One line of slack after the record: zero its stamp word so the
        // consumer never mistakes stale bytes for a record.
        self.raw
            .stamp((self.tail + rec) & mask)
            .store(0, Ordering::Relaxed);
        // SAFETY: [off, off + rec) lies inside the data area (records never
        // wrap) and is free space that only the producer writes until the
        // stamp is published; `meta` is Pod so a byte copy is a valid write.
        unsafe {
            self.raw
                .write_record(off, bytemuck::bytes_of(meta), len, fill)
        };
        self.raw.stamp(off).store(self.tail + 1, Ordering::Release);
        self.tail += rec;
        self.raw.tail().store(self.tail, Ordering::Relaxed);
        true
    }

    /// Appends a record with `meta` and a copy of `payload`; `false` when full.
    pub fn try_push<M: Pod>(&mut self, meta: &M, payload: &[u8]) -> bool {
        self.try_push_with(meta, payload.len(), |dst| dst.copy_from_slice(payload))
    }

    /// Bytes published and not yet released by the consumer (as last seen).
    pub fn backlog(&mut self) -> u64 {
        self.head_cache = self.raw.head().load(Ordering::Acquire);
        self.tail - self.head_cache
    }
}

/// The reading end of a ring.
pub struct Consumer {
    raw: Raw,
    head: u64,
    corrupt: bool,
    /// The loom model's payloads are gathered here (its lines are not one
    /// piece of memory).
    #[cfg(all(test, loom))]
    scratch: Vec<u8>,
}

impl std::fmt::Debug for Consumer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Consumer")
            .field("size", &self.raw.size)
            .field("head", &self.head)
            .finish()
    }
}

impl Consumer {
    /// Opens the consuming end; at most one per ring.
    pub(crate) fn new(map: Arc<Mapping>, ctrl_off: usize, data_off: usize, size: usize) -> Self {
        let raw = new_raw(map, ctrl_off, data_off, size);
        Consumer::over(raw)
    }

    fn over(raw: Raw) -> Consumer {
        let head = raw.head().load(Ordering::Acquire);
        Consumer {
            raw,
            head,
            corrupt: false,
            #[cfg(all(test, loom))]
            scratch: Vec::new(),
        }
    }

    /// Cheap check (one load) for a published record at the head.
    #[inline]
    pub fn ready(&self) -> bool {
        let off = self.head & (self.raw.size - 1);
        self.raw.stamp(off).load(Ordering::Acquire) == self.head + 1
    }

    /// True once a record header failed validation; the ring is then dead.
    pub fn is_corrupt(&self) -> bool {
        self.corrupt
    }

    /// The record at the head, if one is published: its metadata and a view
    /// of its payload in shared memory. The record stays until [`pop`].
    ///
    /// [`pop`]: Consumer::pop
    pub fn peek<M: Pod>(&mut self) -> Option<(M, &[u8])> {
        assert_eq!(std::mem::size_of::<M>(), META_BYTES, "ring metadata size");
        let size = self.raw.size;
        loop {
            if self.corrupt {
                return None;
            }
            let off = self.head & (size - 1);
            if self.raw.stamp(off).load(Ordering::Acquire) != self.head + 1 {
                return None;
            }
            // SAFETY: the acquire load above synchronizes with the
            // producer's release store of the stamp, so the header bytes
            // are initialized and no longer written; they lie in the line
            // at `off`, inside the data area.
            let (len, flags) = unsafe { self.raw.header(off) };
            if flags & FLAG_PAD != 0 {
                self.head += size - off;
                self.raw.head().store(self.head, Ordering::Release);
                continue;
            }
            let len = len as usize;
            if off as usize + HEADER_BYTES + len > size as usize {
                self.corrupt = true;
                return None;
            }
            // SAFETY: the record [off, off + HEADER_BYTES + len) was
            // validated to lie inside the data area, is published (acquire
            // above) and the producer does not touch it until we advance
            // `head` past it; `M` is Pod and META_BYTES long (asserted).
            let meta: M = unsafe { self.raw.meta(off) };
            #[cfg(not(all(test, loom)))]
            // SAFETY: as for the metadata just above.
            let payload = unsafe { self.raw.payload(off, len) };
            #[cfg(all(test, loom))]
            let payload = {
                self.raw.payload_into(off, len, &mut self.scratch);
                &self.scratch[..]
            };
            return Some((meta, payload));
        }
    }

    /// Releases the record at the head (after [`peek`] returned it).
    ///
    /// [`peek`]: Consumer::peek
    pub fn pop(&mut self) {
        let off = self.head & (self.raw.size - 1);
        // SAFETY: pop follows a successful peek, so the record at `off` is
        // published and its length field is initialized.
        let len = unsafe { self.raw.len(off) } as usize;
        self.head += round_up(HEADER_BYTES + len) as u64;
        self.raw.head().store(self.head, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::segment::{Layout, Segment};

    fn pair(size: usize) -> (Producer, Consumer, Segment) {
        let seg = Segment::create_anonymous(Layout::new(2, size)).unwrap();
        (seg.producer(0, 1), seg.consumer(0, 1), seg)
    }

    #[test]
    fn push_peek_pop_in_order() {
        let (mut p, mut c, _s) = pair(4096);
        assert!(c.peek::<[u64; 3]>().is_none());
        for i in 0..10u64 {
            assert!(p.try_push(&[i, i + 1, i + 2], &vec![i as u8; i as usize * 3]));
        }
        for i in 0..10u64 {
            let (m, pl) = c.peek::<[u64; 3]>().unwrap();
            assert_eq!(m, [i, i + 1, i + 2]);
            assert_eq!(pl, &vec![i as u8; i as usize * 3][..]);
            c.pop();
        }
        assert!(c.peek::<[u64; 3]>().is_none());
    }

    #[test]
    fn full_ring_refuses_then_accepts() {
        let (mut p, mut c, _s) = pair(4096);
        let mut n = 0;
        while p.try_push(&[0u64; 3], &[7u8; 200]) {
            n += 1;
        }
        assert!((5..20).contains(&n), "{n}");
        c.peek::<[u64; 3]>().unwrap();
        c.pop();
        assert!(p.try_push(&[0u64; 3], &[7u8; 200]));
    }

    #[test]
    fn wraps_many_laps_with_varied_sizes_and_stale_bytes() {
        // Payloads full of values that look like stamps must never be
        // mistaken for records.
        let (mut p, mut c, _s) = pair(4096);
        let mut sent = 0u64;
        let mut got = 0u64;
        let mut x = 12345u64;
        let mut lens = std::collections::VecDeque::new();
        while got < 20_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = (x >> 33) as usize % 900;
            let pos_like: Vec<u8> = (0..len)
                .map(|i| ((sent as usize * 64 + i) >> 3) as u8)
                .collect();
            if !(x >> 7).is_multiple_of(3) && p.try_push(&[sent, len as u64, 0], &pos_like) {
                lens.push_back(pos_like);
                sent += 1;
            } else if let Some((m, pl)) = c.peek::<[u64; 3]>() {
                assert_eq!(m[0], got);
                assert_eq!(pl, &lens.pop_front().unwrap()[..]);
                c.pop();
                got += 1;
            }
        }
    }

    #[test]
    fn payload_words_that_are_next_laps_stamps_are_never_records() {
        // Every line-start word inside a payload holds the exact stamp the
        // consumer would accept there one or two laps later: only the
        // producer's zeroing of the slack line keeps them from
        // being read as records.
        let size = 4096u64;
        let (mut p, mut c, _s) = pair(size as usize);
        let mut x = 99u64;
        let (mut sent, mut got) = (0u64, 0u64);
        let mut queued = std::collections::VecDeque::new();
        while got < 50_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = (x >> 35) as usize % 700;
            let rec = round_up(HEADER_BYTES + len) as u64;
            let off = p.tail & (size - 1);
            let start = if rec > size - off {
                p.tail + size - off
            } else {
                p.tail
            };
            let lap = if (x >> 20) & 1 == 0 { size } else { 2 * size };
            let mut payload = vec![0xA5u8; len];
            let mut q = start + LINE as u64;
            while q < start + HEADER_BYTES as u64 + len as u64 {
                let at = (q - start) as usize - HEADER_BYTES;
                let w = (q + lap + 1).to_le_bytes();
                let n = (len - at).min(8);
                payload[at..at + n].copy_from_slice(&w[..n]);
                q += LINE as u64;
            }
            if (x >> 9) % 5 < 3 && p.try_push(&[sent, 0, 0], &payload) {
                queued.push_back(payload);
                sent += 1;
            } else if let Some((m, pl)) = c.peek::<[u64; 3]>() {
                assert_eq!(m[0], got, "records in order, none invented");
                assert_eq!(pl, &queued.pop_front().unwrap()[..]);
                c.pop();
                got += 1;
            } else {
                assert!(queued.is_empty(), "a published record is always seen");
            }
        }
    }

    #[test]
    fn two_threads_stress() {
        let (mut p, mut c, _s) = pair(8192);
        let n = 200_000u64;
        let t = std::thread::spawn(move || {
            for i in 0..n {
                let len = (i % 97) as usize;
                let payload: Vec<u8> = (0..len).map(|j| (i as usize + j) as u8).collect();
                while !p.try_push(&[i, 0, 0], &payload) {
                    std::hint::spin_loop();
                }
            }
        });
        for i in 0..n {
            loop {
                if let Some((m, pl)) = c.peek::<[u64; 3]>() {
                    assert_eq!(m[0], i);
                    assert_eq!(pl.len(), (i % 97) as usize);
                    assert!(pl
                        .iter()
                        .enumerate()
                        .all(|(j, &b)| b == (i as usize + j) as u8));
                    c.pop();
                    break;
                }
                std::hint::spin_loop();
            }
        }
        t.join().unwrap();
    }
}

/// The loom build's ring memory: a heap model of the data area and of the
/// two positions (see the module documentation).
#[cfg(all(test, loom))]
// The lines are loom cells shared by the two ends on purpose: loom checks
// every access to them.
#[allow(clippy::arc_with_non_send_sync)]
mod loom_model {
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
            assert!(off % LINE as u64 == 0 && off < self.size);
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
            let (l, f) = b.split_at(4);
            (
                u32::from_ne_bytes(l.try_into().unwrap()),
                u32::from_ne_bytes(f.try_into().unwrap()),
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
}

/// Loom models of the ring's protocol: one producer thread and one
/// consumer thread on a ring of a few lines, every interleaving (up to the
/// preemption bound) tried. Run with
/// `RUSTFLAGS="--cfg loom" cargo test --release -p pertinax-os --lib loom`.
#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;

    /// Runs `f` in every interleaving of its threads (no preemption
    /// bound: the models are small enough to be explored exhaustively),
    /// and prints how many there were (seen with `--nocapture`).
    fn model(name: &str, bound: Option<usize>, f: impl Fn() + Sync + Send + 'static) {
        use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
        let runs = Arc::new(AtomicUsize::new(0));
        let counted = runs.clone();
        let mut b = loom::model::Builder::new();
        b.preemption_bound = bound;
        b.check(move || {
            counted.fetch_add(1, Relaxed);
            f()
        });
        println!("{name}: {} interleavings", runs.load(Relaxed));
    }

    /// Byte `j` of record `i`'s payload.
    fn byte(i: u64, j: usize) -> u8 {
        (i as usize * 31 + j) as u8 ^ 0x5a
    }

    /// Pushes records of these payload lengths from a second thread, and
    /// checks that the consumer gets each once, in order, whole.
    fn run(name: &str, bound: Option<usize>, lines: usize, start: u64, lens: &'static [usize]) {
        model(name, bound, move || {
            let size = (lines * LINE) as u64;
            // Stale stamp words that would pass for the record the consumer
            // expects at that line in this lap or the next: only the
            // zeroing of the line after each record keeps the consumer from
            // taking them.
            let garbage = move |line: usize| {
                let lap = start - start % size;
                let pos = lap + (line * LINE) as u64;
                if pos < start {
                    pos + size + 1
                } else {
                    pos + 1
                }
            };
            let (p, c) = loom_model::pair(lines, start, garbage);
            let (mut p, mut c) = (Producer::over(p), Consumer::over(c));
            let producer = loom::thread::spawn(move || {
                for (i, &len) in lens.iter().enumerate() {
                    let i = i as u64;
                    while !p.try_push_with(&[i, len as u64, !i], len, |dst| {
                        for (j, b) in dst.iter_mut().enumerate() {
                            *b = byte(i, j);
                        }
                    }) {
                        loom::thread::yield_now();
                    }
                }
            });
            for (i, &len) in lens.iter().enumerate() {
                let i = i as u64;
                loop {
                    if let Some((meta, payload)) = c.peek::<[u64; 3]>() {
                        assert_eq!(meta, [i, len as u64, !i], "record {i}");
                        assert_eq!(payload.len(), len);
                        assert!(payload.iter().enumerate().all(|(j, &b)| b == byte(i, j)));
                        c.pop();
                        break;
                    }
                    assert!(!c.is_corrupt(), "a stale line was taken for a record");
                    loom::thread::yield_now();
                }
            }
            assert!(c.peek::<[u64; 3]>().is_none(), "nothing more was pushed");
            producer.join().unwrap();
        });
    }

    /// Three records across the end of an 8-line ring: the second does
    /// not fit before the end, so a padding record precedes it, and the
    /// slack line after each record is a stale stamp until zeroed.
    #[test]
    fn loom_ring_publishes_and_consumes_across_the_wrap() {
        // Start at line 6 of lap 1: 10 B (1 line) at 6; 70 B (2 lines)
        // does not fit in line 7: pad, then lines 0-1; 100 B at lines 2-4.
        run("wrap", None, 8, 8 * 64 + 6 * 64, &[10, 70, 100]);
    }

    /// A producer that outruns the consumer: records of 3 lines in a ring
    /// of 8, so the producer must wait for space the consumer hands back
    /// through `head`, and then rewrites lines the consumer read.
    #[test]
    fn loom_ring_a_full_ring_waits_for_the_consumer() {
        run("full", None, 8, 0, &[100, 100, 100]);
    }

    /// Both at once, over a lap: records of 3 and 2 lines from line 4
    /// (3 lines: 4-6; 2 lines: pad at 7, then 0-1; 3 lines: 2-4; 2 lines:
    /// 5-6), so a padded wrap, with the producer waiting for space from the
    /// third record on.
    #[test]
    fn loom_ring_laps_with_padding_and_waits() {
        run("laps", Some(3), 8, 3 * 8 * 64 + 4 * 64, &[100, 30, 100, 70]);
    }
}
