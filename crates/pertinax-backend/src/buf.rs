//! Buffers that backend requests read from or write into.
//!
//! A point-to-point request holds the caller's lent buffer. A collective
//! schedule keeps its buffers in shared cells ([`Cell`]) so that several of
//! its requests can use disjoint ranges of one buffer at once; each request
//! holds a clone of the cell and its range. Cells are never resized while a
//! request may use them, so the address handed to a peer stays valid.

use std::cell::RefCell;
use std::ops::Range;
use std::rc::Rc;

use pertinax_os::lend::{Lent, LentMut};

/// What a schedule buffer holds.
#[derive(Debug)]
pub enum Store {
    /// Scratch memory owned by the schedule, 16-byte aligned.
    Owned { words: Box<[u128]>, len: usize },
    /// The caller's output buffer.
    Out(LentMut),
    /// The caller's input buffer (read-only).
    In(Lent),
}

thread_local! {
    /// Scratch blocks of finished schedules, kept for the next ones: fresh
    /// large allocations come from `mmap` and cost a page fault per 4 KiB
    /// on every call.
    static POOL: std::cell::RefCell<Vec<Box<[u128]>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Blocks kept in the pool at most, and their largest total size.
const POOL_BLOCKS: usize = 16;
const POOL_BYTES: usize = 64 << 20;

impl Store {
    /// Scratch of `len` bytes. Its contents are unspecified (a reused
    /// block keeps old bytes): schedules write scratch before reading it.
    pub fn scratch(len: usize) -> Store {
        let words = len.div_ceil(16);
        let reused = POOL.with(|p| {
            let mut p = p.borrow_mut();
            let best = p
                .iter()
                .enumerate()
                .filter(|(_, b)| b.len() >= words && b.len() <= 2 * words.max(64))
                .min_by_key(|(_, b)| b.len())
                .map(|(i, _)| i);
            best.map(|i| p.swap_remove(i))
        });
        Store::Owned {
            words: reused.unwrap_or_else(|| vec![0u128; words].into_boxed_slice()),
            len,
        }
    }

    pub fn bytes(&mut self) -> &[u8] {
        match self {
            Store::Owned { words, len } => &bytemuck::cast_slice(words)[..*len],
            Store::Out(b) => b.as_mut_slice(),
            Store::In(b) => b.as_slice(),
        }
    }

    /// Writable bytes; the caller's input buffer has none.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        match self {
            Store::Owned { words, len } => &mut bytemuck::cast_slice_mut(words)[..*len],
            Store::Out(b) => b.as_mut_slice(),
            Store::In(_) => &mut [],
        }
    }

    fn addr(&mut self) -> u64 {
        self.bytes().as_ptr() as u64
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        if let Store::Owned { words, .. } = self {
            let block = std::mem::take(words);
            if block.is_empty() {
                return;
            }
            POOL.with(|p| {
                let mut p = p.borrow_mut();
                let total: usize = p.iter().map(|b| b.len() * 16).sum();
                if p.len() < POOL_BLOCKS && total + block.len() * 16 <= POOL_BYTES {
                    p.push(block);
                }
            });
        }
    }
}

/// A schedule buffer shared between the schedule and its requests.
pub type Cell = Rc<RefCell<Store>>;

/// Where a receive writes.
#[derive(Debug)]
pub enum RecvBuf {
    Lent(LentMut),
    Part(Cell, Range<usize>),
}

impl RecvBuf {
    /// Its length in bytes.
    pub fn len(&self) -> usize {
        match self {
            RecvBuf::Lent(b) => b.len(),
            RecvBuf::Part(_, r) => r.len(),
        }
    }

    /// Whether it holds no byte.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Runs `f` on the writable bytes.
    pub fn with_mut<R>(&mut self, f: impl FnOnce(&mut [u8]) -> R) -> R {
        match self {
            RecvBuf::Lent(b) => f(b.as_mut_slice()),
            RecvBuf::Part(c, r) => f(&mut c.borrow_mut().bytes_mut()[r.clone()]),
        }
    }
}

/// What a send reads.
#[derive(Debug)]
pub enum SendBuf {
    Lent(Lent),
    Part(Cell, Range<usize>),
}

impl SendBuf {
    /// Its length in bytes.
    pub fn len(&self) -> usize {
        match self {
            SendBuf::Lent(b) => b.len(),
            SendBuf::Part(_, r) => r.len(),
        }
    }

    /// Whether it holds no byte.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Runs `f` on the bytes.
    pub fn with<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        match self {
            SendBuf::Lent(b) => f(b.as_slice()),
            SendBuf::Part(c, r) => f(&c.borrow_mut().bytes()[r.clone()]),
        }
    }

    /// Address of the first byte in this process.
    pub fn addr(&self) -> u64 {
        match self {
            SendBuf::Lent(b) => b.addr(),
            SendBuf::Part(c, r) => c.borrow_mut().addr() + r.start as u64,
        }
    }
}
