//! The job's shared-memory segment: layout, creation, attachment.
//!
//! The launcher creates one anonymous `memfd` per job, sized for a fixed
//! number of process *slots* (the ranks, spares and room for spawned
//! processes), and every process of the job inherits the descriptor. There is
//! no name in `/dev/shm`: when the last process holding it exits, the kernel
//! frees it, whatever killed whom. The descriptor is `0600`.
//!
//! Layout (every part page-aligned, pages materialize only when touched):
//!
//! | part | size |
//! |---|---|
//! | [`Header`] | one page |
//! | [`ProcBlock`] per slot | 128 bytes each |
//! | [`FtBlock`] per slot | 33 KiB each (revoke flags, agreements, publications) |
//! | [`RingCtrl`] per ordered pair of slots | 128 bytes each |
//! | ring data per ordered pair | `ring_bytes` each |
//!
//! Ring `(from, to)` carries records from slot `from` to slot `to`.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU32, AtomicU64};
use std::sync::Arc;

use crate::ring::{Consumer, Producer, RingCtrl, MIN_RING_BYTES};

/// "PERTINAX" in ASCII.
pub const MAGIC: u64 = u64::from_be_bytes(*b"PERTINAX");
/// Bumped whenever the layout changes.
pub const VERSION: u32 = 2;
const PAGE: usize = 4096;

/// The first page of the segment.
#[repr(C)]
#[derive(Debug)]
pub struct Header {
    magic: AtomicU64,
    version: AtomicU32,
    capacity: AtomicU32,
    ring_bytes: AtomicU64,
    /// Incremented (and all sleepers woken) whenever the launcher publishes
    /// news that every process should look at (failures, shutdown), and by
    /// a process after it bumped another's `news` (a revocation): the one
    /// word every process polls for news.
    pub event_epoch: AtomicU64,
    /// Free-form words for the runtime's job-wide state.
    pub words: [AtomicU64; 16],
}

/// Per-slot control block: two cache lines.
#[repr(C, align(64))]
#[derive(Debug)]
pub struct ProcBlock {
    /// Futex word: bumped by anyone who wants this process to wake up.
    pub wake: AtomicU32,
    /// Non-zero while the process sleeps (or is about to) on `wake`.
    pub sleeping: AtomicU32,
    /// Process id of the slot's current occupant (0: empty).
    pub pid: AtomicU32,
    /// Slot state, owned by the launcher (see the runtime's docs).
    pub state: AtomicU32,
    /// Bumped by a process that left news for this one in the slot's
    /// [`FtBlock`] (a revoked communicator), before it bumps the header's
    /// `event_epoch`; read when the epoch moved.
    pub news: AtomicU64,
    _pad: [u64; 5],
    /// Heartbeat counter, bumped by the process while it is alive and
    /// watched by the launcher (second cache line: the owner writes it).
    pub beat: AtomicU64,
    /// The robust futex word the process holds while alive (see
    /// [`crate::robust`]): its thread id, `OWNER_DIED` once it died.
    pub alive: AtomicU32,
    _pad2: u32,
    /// Free-form words for the runtime.
    pub words: [AtomicU64; 6],
}

/// Number of fault-tolerance entries per slot: one per communicator that
/// the process holds at once.
pub const FT_ENTRIES: usize = 512;

/// Most process slots one [`Publication`] can name.
pub const PUBLISH_MAX: usize = 252;

/// One contribution to an agreement: written by its owner only, stamped
/// last (release) with `(ctx << 32) | seq`.
#[repr(C)]
#[derive(Debug)]
pub struct FtRecord {
    /// `(ctx << 32) | seq` of the agreement the words belong to.
    pub stamp: AtomicU64,
    /// The contribution.
    pub words: [AtomicU32; 4],
}

/// The shared state of one communicator at one process: its key (the
/// context id and state bits), and the last two agreement contributions
/// (by parity of the agreement's sequence number).
#[repr(C, align(64))]
#[derive(Debug)]
pub struct FtEntry {
    /// `ctx | (bits << 32)`; see the native engine's `registry` module for
    /// the bits.
    pub key: AtomicU64,
    /// Contributions, indexed by agreement sequence number modulo 2.
    pub rec: [FtRecord; 2],
    _pad: u64,
}

/// Where the launcher answers a request for new processes: their slots,
/// readable by everyone even if the requester died after asking.
#[repr(C, align(64))]
#[derive(Debug)]
pub struct Publication {
    /// The requester's stamp for this answer (written last, release).
    pub stamp: AtomicU64,
    /// Number of slots (or 0 on failure).
    pub count: AtomicU32,
    /// 0: the processes were started; otherwise an error code.
    pub status: AtomicU32,
    /// The slots, in order.
    pub slots: [AtomicU32; PUBLISH_MAX],
}

/// The fault-tolerance block of one slot.
#[repr(C)]
#[derive(Debug)]
pub struct FtBlock {
    /// The launcher's last answer to this slot's request for processes.
    pub publication: Publication,
    /// One entry per communicator.
    pub entries: [FtEntry; FT_ENTRIES],
}

/// The shape of a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    capacity: usize,
    ring_bytes: usize,
}

fn page_round(n: usize) -> usize {
    n.div_ceil(PAGE) * PAGE
}

impl Layout {
    /// A layout for `capacity` process slots and rings of `ring_bytes`
    /// (rounded up to a power of two, at least 4 KiB).
    pub fn new(capacity: usize, ring_bytes: usize) -> Layout {
        Layout {
            capacity: capacity.max(1),
            ring_bytes: ring_bytes.max(MIN_RING_BYTES).next_power_of_two(),
        }
    }
    /// Number of process slots.
    pub fn capacity(&self) -> usize {
        self.capacity
    }
    /// Bytes of each ring's data area.
    pub fn ring_bytes(&self) -> usize {
        self.ring_bytes
    }
    fn procs_off(&self) -> usize {
        PAGE
    }
    fn ft_off(&self) -> usize {
        self.procs_off() + page_round(self.capacity * std::mem::size_of::<ProcBlock>())
    }
    fn ctrl_off(&self) -> usize {
        self.ft_off() + page_round(self.capacity * std::mem::size_of::<FtBlock>())
    }
    fn data_off(&self) -> usize {
        self.ctrl_off()
            + page_round(self.capacity * self.capacity * std::mem::size_of::<RingCtrl>())
    }
    /// Total bytes of the segment (virtual; untouched pages cost nothing).
    pub fn total_bytes(&self) -> usize {
        self.data_off() + self.capacity * self.capacity * self.ring_bytes
    }
    fn pair_index(&self, from: usize, to: usize) -> usize {
        assert!(
            from < self.capacity && to < self.capacity,
            "slot out of range"
        );
        from * self.capacity + to
    }
}

/// A live `mmap` of a segment; unmapped on drop.
#[derive(Debug)]
pub struct Mapping {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the mapping is plain shared memory; all concurrent access goes
// through atomics or the ring protocol.
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

impl Mapping {
    fn map(fd: RawFd, len: usize) -> io::Result<Mapping> {
        // SAFETY: a fresh shared mapping of `len` bytes of `fd`; no existing
        // memory is affected. The result is checked for MAP_FAILED.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_NORESERVE,
                fd,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Mapping {
            ptr: ptr.cast(),
            len,
        })
    }
    pub(crate) fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }
    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` came from a successful mmap and nothing can
        // reference the mapping any more (every user holds the Arc).
        unsafe {
            libc::munmap(self.ptr.cast(), self.len);
        }
    }
}

/// A mapped segment. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Segment {
    map: Arc<Mapping>,
    layout: Layout,
}

fn memfd(name: &str) -> io::Result<OwnedFd> {
    let fd = rustix::fs::memfd_create(name, rustix::fs::MemfdFlags::CLOEXEC)?;
    rustix::fs::fchmod(&fd, rustix::fs::Mode::from_raw_mode(0o600))?;
    Ok(fd)
}

impl Segment {
    /// Creates a zero-filled segment for `layout` and returns it with its
    /// descriptor (close-on-exec; the launcher clears that flag in the
    /// children that must inherit it).
    ///
    /// # Errors
    /// The OS error of `memfd_create`, `ftruncate` or `mmap`.
    pub fn create(layout: Layout) -> io::Result<(Segment, OwnedFd)> {
        let fd = memfd("pertinax-job")?;
        let len = layout.total_bytes();
        rustix::fs::ftruncate(&fd, len as u64)?;
        let map = Mapping::map(fd.as_raw_fd(), len)?;
        let seg = Segment {
            map: Arc::new(map),
            layout,
        };
        let h = seg.header();
        h.version
            .store(VERSION, std::sync::atomic::Ordering::Relaxed);
        h.capacity
            .store(layout.capacity as u32, std::sync::atomic::Ordering::Relaxed);
        h.ring_bytes.store(
            layout.ring_bytes as u64,
            std::sync::atomic::Ordering::Relaxed,
        );
        h.magic.store(MAGIC, std::sync::atomic::Ordering::Release);
        Ok((seg, fd))
    }

    /// A private segment for a singleton or a test: created and mapped, the
    /// descriptor closed at once.
    ///
    /// # Errors
    /// As [`Segment::create`].
    pub fn create_anonymous(layout: Layout) -> io::Result<Segment> {
        Segment::create(layout).map(|(s, _fd)| s)
    }

    /// Maps the segment behind an inherited descriptor and checks its header.
    ///
    /// # Errors
    /// `InvalidData` when the descriptor does not hold a pertinax segment of
    /// this version; OS errors of `fstat` and `mmap`.
    pub fn attach(fd: RawFd) -> io::Result<Segment> {
        // SAFETY: the caller hands over a descriptor that stays open for
        // this call (a closed or reused number would make fstat fail or
        // describe the wrong file, which the checks below reject; it can
        // never touch memory).
        let st = rustix::fs::fstat(unsafe { BorrowedFd::borrow_raw(fd) })?;
        let len = st.st_size as usize;
        let bad = |why: &str| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("not a pertinax segment: {why}"),
            )
        };
        if len < PAGE {
            return Err(bad("too small"));
        }
        let map = Arc::new(Mapping::map(fd, len)?);
        // SAFETY: the mapping is at least one page, page-aligned, and the
        // Header is all atomics, so any bytes form a valid value.
        let h = unsafe { &*(map.as_ptr() as *const Header) };
        use std::sync::atomic::Ordering::{Acquire, Relaxed};
        if h.magic.load(Acquire) != MAGIC {
            return Err(bad("bad magic"));
        }
        if h.version.load(Relaxed) != VERSION {
            return Err(bad("version mismatch"));
        }
        let layout = Layout {
            capacity: h.capacity.load(Relaxed) as usize,
            ring_bytes: h.ring_bytes.load(Relaxed) as usize,
        };
        if layout.total_bytes() != len || !layout.ring_bytes.is_power_of_two() {
            return Err(bad("size does not match its header"));
        }
        Ok(Segment { map, layout })
    }

    /// The segment's layout.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// The job-wide header.
    pub fn header(&self) -> &Header {
        // SAFETY: the first page of the mapping holds the header; all atomics.
        unsafe { &*(self.map.as_ptr() as *const Header) }
    }

    /// The control block of slot `slot`.
    ///
    /// # Panics
    /// If `slot` is not below the capacity.
    pub fn proc_block(&self, slot: usize) -> &ProcBlock {
        assert!(slot < self.layout.capacity, "slot out of range");
        let off = self.layout.procs_off() + slot * std::mem::size_of::<ProcBlock>();
        // SAFETY: `off` lies inside the procs area (checked index), which is
        // 64-byte aligned; ProcBlock is all atomics and padding.
        unsafe { &*(self.map.as_ptr().add(off) as *const ProcBlock) }
    }

    /// The fault-tolerance block of slot `slot`.
    ///
    /// # Panics
    /// If `slot` is not below the capacity.
    pub fn ft_block(&self, slot: usize) -> &FtBlock {
        assert!(slot < self.layout.capacity, "slot out of range");
        let off = self.layout.ft_off() + slot * std::mem::size_of::<FtBlock>();
        // SAFETY: `off` lies inside the ft area (checked index), which is
        // page aligned, and FtBlock's size is a multiple of its 64-byte
        // alignment; FtBlock is all atomics and padding.
        unsafe { &*(self.map.as_ptr().add(off) as *const FtBlock) }
    }

    fn ring_offsets(&self, from: usize, to: usize) -> (usize, usize) {
        let i = self.layout.pair_index(from, to);
        (
            self.layout.ctrl_off() + i * std::mem::size_of::<RingCtrl>(),
            self.layout.data_off() + i * self.layout.ring_bytes,
        )
    }

    /// The producing end of ring `(from, to)`: only slot `from` may hold it.
    ///
    /// # Panics
    /// If a slot is out of range.
    pub fn producer(&self, from: usize, to: usize) -> Producer {
        let (c, d) = self.ring_offsets(from, to);
        Producer::new(self.map.clone(), c, d, self.layout.ring_bytes)
    }

    /// The consuming end of ring `(from, to)`: only slot `to` may hold it.
    ///
    /// # Panics
    /// If a slot is out of range.
    pub fn consumer(&self, from: usize, to: usize) -> Consumer {
        let (c, d) = self.ring_offsets(from, to);
        Consumer::new(self.map.clone(), c, d, self.layout.ring_bytes)
    }

    /// Allocates, without changing their contents, the pages that slot
    /// `slot` will use: its control block and every ring it reads or
    /// writes. Called once at start-up so that the first messages do not
    /// pay a page fault per 4 KiB. Safe while peers already use the rings.
    ///
    /// # Errors
    /// The OS error of `madvise` (older kernels lack `MADV_POPULATE_WRITE`;
    /// callers may ignore the error, pages are then faulted in on use).
    pub fn prefault(&self, slot: usize, peers: usize) -> io::Result<()> {
        let peers = peers.min(self.layout.capacity);
        let mut ranges = vec![(self.layout.procs_off(), PAGE)];
        let ft = self.layout.ft_off() + slot * std::mem::size_of::<FtBlock>();
        ranges.push((ft, 2 * PAGE));
        for p in 0..peers {
            for (from, to) in [(slot, p), (p, slot)] {
                let (c, d) = self.ring_offsets(from, to);
                ranges.push((c, std::mem::size_of::<RingCtrl>()));
                ranges.push((d, self.layout.ring_bytes));
            }
        }
        for (off, len) in ranges {
            let start = off / PAGE * PAGE;
            let end = (off + len).div_ceil(PAGE) * PAGE;
            // SAFETY: [start, end) lies inside the mapping (offsets come
            // from the layout, rounded to pages within the page-aligned
            // segment); MADV_POPULATE_WRITE only allocates pages and never
            // changes their contents.
            let rc = unsafe {
                libc::madvise(
                    self.map.as_ptr().add(start).cast(),
                    (end - start).min(self.map.len() - start),
                    libc::MADV_POPULATE_WRITE,
                )
            };
            if rc != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }

    /// The control block of ring `(from, to)` (for diagnostics).
    pub fn ring_ctrl(&self, from: usize, to: usize) -> &RingCtrl {
        let (c, _) = self.ring_offsets(from, to);
        // SAFETY: `c` is an in-bounds, 64-byte aligned offset of the ctrl
        // area; RingCtrl is all atomics and padding.
        unsafe { &*(self.map.as_ptr().add(c) as *const RingCtrl) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_aligned_and_sparse() {
        let l = Layout::new(64, 32 * 1024);
        assert_eq!(l.ring_bytes(), 32768);
        assert_eq!(l.data_off() % PAGE, 0);
        assert!(l.total_bytes() > 64 * 64 * 32768);
        assert_eq!(Layout::new(3, 1000).ring_bytes(), 4096);
    }

    #[test]
    fn attach_sees_the_same_memory() {
        let (s, fd) = Segment::create(Layout::new(4, 4096)).unwrap();
        let t = Segment::attach(fd.as_raw_fd()).unwrap();
        assert_eq!(s.layout(), t.layout());
        s.proc_block(3)
            .pid
            .store(77, std::sync::atomic::Ordering::SeqCst);
        assert_eq!(
            t.proc_block(3)
                .pid
                .load(std::sync::atomic::Ordering::SeqCst),
            77
        );
        let mut p = s.producer(2, 1);
        let mut c = t.consumer(2, 1);
        assert!(p.try_push(&[1u64, 2, 3], b"hello"));
        let (m, pl) = c.peek::<[u64; 3]>().unwrap();
        assert_eq!((m, pl), ([1, 2, 3], &b"hello"[..]));
    }

    #[test]
    fn prefault_keeps_contents() {
        let s = Segment::create_anonymous(Layout::new(3, 8192)).unwrap();
        let mut p = s.producer(0, 1);
        assert!(p.try_push(&[1u64, 2, 3], b"kept"));
        // Kernels without MADV_POPULATE_WRITE say so; contents stay either way.
        let _ = s.prefault(1, 3);
        let mut c = s.consumer(0, 1);
        let (m, pl) = c.peek::<[u64; 3]>().unwrap();
        assert_eq!((m, pl), ([1, 2, 3], &b"kept"[..]));
    }

    #[test]
    fn ft_blocks_are_distinct_and_aligned() {
        assert_eq!(std::mem::size_of::<ProcBlock>(), 128);
        assert_eq!(std::mem::size_of::<FtEntry>(), 64);
        assert_eq!(std::mem::size_of::<Publication>(), 1024);
        let s = Segment::create_anonymous(Layout::new(3, 4096)).unwrap();
        use std::sync::atomic::Ordering::SeqCst;
        s.ft_block(2).entries[FT_ENTRIES - 1].key.store(9, SeqCst);
        s.ft_block(1).publication.stamp.store(5, SeqCst);
        assert_eq!(s.ft_block(1).entries[0].key.load(SeqCst), 0);
        assert_eq!(s.ft_block(2).entries[FT_ENTRIES - 1].key.load(SeqCst), 9);
        assert_eq!(s.ring_ctrl(2, 2) as *const _ as usize % 64, 0);
        let end = s.ft_block(2) as *const FtBlock as usize + std::mem::size_of::<FtBlock>();
        assert!(end <= s.ring_ctrl(0, 0) as *const _ as usize);
    }

    #[test]
    fn attach_rejects_foreign_descriptors() {
        let f = std::fs::File::open("/proc/self/exe").unwrap();
        assert!(Segment::attach(f.as_raw_fd()).is_err());
    }
}
