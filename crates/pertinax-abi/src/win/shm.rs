//! Memory the members of a window share: a memfd rank 0 makes and the
//! others map through `/proc/<pid>/fd/<fd>` ([`shared`]). It holds the
//! control words (per target: the lock of `MPI_Win_lock` and the mutex
//! of the accumulates, each with a count of waiters) or the data of
//! `MPI_Win_allocate_shared`.
//!
//! The lock word is 0 when free, `HELD | pid` when held exclusively, else
//! the number of shared holders; the mutex word 0 or `HELD | pid`.
//! Waiters sleep on the word (a futex) and look every [`POLL`] whether an
//! exclusive holder is still alive: a dead one is `MPIX_ERR_PROC_FAILED`
//! to the waiter rather than a wait forever.

use std::ffi::c_int;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use crate::consts::*;

/// An exclusive holder's bit; the rest of the word is its pid.
const HELD: u32 = 0x8000_0000;
/// How long a waiter sleeps before it looks at the holder again.
const POLL: Duration = Duration::from_millis(100);
/// Words per target: lock, its waiters, mutex, its waiters.
const WORDS: usize = 4;

/// A shared mapping, unmapped when dropped.
#[derive(Debug)]
pub(crate) struct Mapping {
    ptr: *mut u8,
    len: usize,
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: a mapping of `len` bytes this owns, unmapped once; the
        // window that used it is gone.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

impl Mapping {
    pub(crate) fn ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// Word `k` of target `t`'s control words.
    fn word(&self, t: usize, k: usize) -> Result<&AtomicU32, c_int> {
        let at = (t * WORDS + k) * 4;
        if at + 4 > self.len {
            return Err(MPI_ERR_INTERN);
        }
        // SAFETY: in the mapping (checked), 4-aligned (the mapping is
        // page-aligned), shared memory only ever accessed atomically.
        Ok(unsafe { &*self.ptr.add(at).cast::<AtomicU32>() })
    }
}

/// The length of the control words of `n` members.
pub(crate) fn control_len(n: usize) -> usize {
    n * WORDS * 4
}

/// The MPI error class of a failure to make or map the segment.
fn class(e: &std::io::Error) -> c_int {
    match e.raw_os_error() {
        Some(libc::ENOMEM | libc::ENOSPC) => MPI_ERR_NO_MEM,
        Some(libc::EACCES | libc::EPERM) => MPI_ERR_UNSUPPORTED_OPERATION,
        _ => MPI_ERR_OTHER,
    }
}

fn map(fd: &OwnedFd, len: usize) -> std::io::Result<Mapping> {
    // SAFETY: a new shared mapping of an open descriptor; no memory of
    // this process is touched.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd.as_raw_fd(),
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    Ok(Mapping { ptr: p.cast(), len })
}

/// A new memfd of `len` bytes (zeros), mapped.
fn make(len: usize) -> std::io::Result<(Mapping, OwnedFd)> {
    // SAFETY: a NUL-terminated name; the call makes a new descriptor.
    let fd = unsafe { libc::memfd_create(c"pertinax-win".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a descriptor just made, owned from here on.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: an open descriptor.
    if unsafe { libc::ftruncate(fd.as_raw_fd(), len as libc::off_t) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok((map(&fd, len)?, fd))
}

/// Maps descriptor `fd` of process `pid` (rank 0's memfd).
fn open(pid: u32, fd: i64, len: usize) -> std::io::Result<Mapping> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(format!("/proc/{pid}/fd/{fd}"))?;
    map(&OwnedFd::from(f), len)
}

/// A segment of `len` bytes (at least one) every member of `comm` maps:
/// collective; the outcome is the same everywhere.
pub(crate) fn shared(comm: c_int, rank: usize, len: usize) -> Result<Mapping, c_int> {
    let len = len.max(1);
    let mut msg = [0i64; 3];
    let mut made = None;
    if rank == 0 {
        match make(len) {
            Ok((m, fd)) => {
                msg = [0, i64::from(pertinax_os::pid()), i64::from(fd.as_raw_fd())];
                made = Some((m, fd));
            }
            Err(e) => msg[0] = i64::from(class(&e)),
        }
    }
    // SAFETY: three values from rank 0.
    super::ok(unsafe {
        crate::coll::PMPI_Bcast(msg.as_mut_ptr().cast(), 3, MPI_INT64_T, 0, comm)
    })?;
    let (mine, fd) = match made {
        Some((m, fd)) => (Ok(m), Some(fd)),
        None if msg[0] != 0 => (Err(msg[0] as c_int), None),
        None => (
            open(msg[1] as u32, msg[2], len).map_err(|e| class(&e)),
            None,
        ),
    };
    let local = mine.as_ref().err().copied().unwrap_or(MPI_SUCCESS);
    // Every member has it mapped (or failed): the descriptor can go.
    let worst = super::allreduce_max(comm, local);
    drop(fd);
    match worst? {
        MPI_SUCCESS => mine,
        w => Err(if local != MPI_SUCCESS { local } else { w }),
    }
}

/// Whether process `pid` is gone.
fn dead(pid: u32) -> bool {
    // SAFETY: signal 0 only checks the process exists.
    let rc = unsafe { libc::kill(pid as libc::pid_t, 0) };
    rc == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

/// Sleeps on `w` while it holds `v` (at most [`POLL`]);
/// `MPIX_ERR_PROC_FAILED` if `v` is held by a dead process.
fn park(w: &AtomicU32, waiters: &AtomicU32, v: u32) -> Result<(), c_int> {
    waiters.fetch_add(1, Ordering::SeqCst);
    pertinax_os::futex::wait(w, v, Some(POLL));
    waiters.fetch_sub(1, Ordering::SeqCst);
    if v & HELD != 0 && w.load(Ordering::SeqCst) == v && dead(v & !HELD) {
        return Err(MPIX_ERR_PROC_FAILED);
    }
    Ok(())
}

fn wake(w: &AtomicU32, waiters: &AtomicU32) {
    if waiters.load(Ordering::SeqCst) > 0 {
        pertinax_os::futex::wake(w, i32::MAX);
    }
}

/// Takes target `t`'s lock (`MPI_Win_lock`), shared or exclusive.
pub(crate) fn lock(m: &Mapping, t: usize, exclusive: bool) -> Result<(), c_int> {
    let (w, waiters) = (m.word(t, 0)?, m.word(t, 1)?);
    let me = HELD | pertinax_os::pid();
    loop {
        let v = w.load(Ordering::SeqCst);
        let free = if exclusive {
            v == 0
        } else {
            v & HELD == 0 && v < HELD - 1
        };
        if free {
            let new = if exclusive { me } else { v + 1 };
            if w.compare_exchange(v, new, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
            {
                return Ok(());
            }
            continue;
        }
        park(w, waiters, v)?;
    }
}

/// Releases target `t`'s lock.
pub(crate) fn unlock(m: &Mapping, t: usize, exclusive: bool) -> Result<(), c_int> {
    let (w, waiters) = (m.word(t, 0)?, m.word(t, 1)?);
    if exclusive {
        w.store(0, Ordering::SeqCst);
    } else {
        w.fetch_sub(1, Ordering::SeqCst);
    }
    wake(w, waiters);
    Ok(())
}

/// Target `t`'s accumulate mutex, held until dropped.
pub(crate) struct Held<'a> {
    w: &'a AtomicU32,
    waiters: &'a AtomicU32,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.w.store(0, Ordering::SeqCst);
        wake(self.w, self.waiters);
    }
}

/// Takes target `t`'s accumulate mutex.
pub(crate) fn mutex(m: &Mapping, t: usize) -> Result<Held<'_>, c_int> {
    let (w, waiters) = (m.word(t, 2)?, m.word(t, 3)?);
    let me = HELD | pertinax_os::pid();
    loop {
        match w.compare_exchange(0, me, Ordering::SeqCst, Ordering::SeqCst) {
            Ok(_) => return Ok(Held { w, waiters }),
            Err(v) => park(w, waiters, v)?,
        }
    }
}
