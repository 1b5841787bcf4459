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
mod tests;

#[cfg(all(test, loom))]
// The lines are loom cells shared by the two ends on purpose: loom checks
// every access to them.
#[allow(clippy::arc_with_non_send_sync)]
mod loom_model;

#[cfg(all(test, loom))]
mod loom_tests;
