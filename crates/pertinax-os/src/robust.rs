//! Death notices from the kernel, before the dying process is torn down.
//!
//! Every process of a job *holds* a robust futex word in its control
//! block: the word holds its thread id, and the word is on the thread's
//! robust list. When the thread dies, the kernel, as one of the first steps
//! of the exit (before the process's memory is unmapped, which takes about
//! a millisecond for a process that touched its rings), sets the word's
//! `OWNER_DIED` bit and wakes one waiter. The launcher waits on all the
//! words at once (`futex_waitv`) and so learns of a death well before
//! `SIGCHLD`. A process that finishes cleanly releases the word first.
//!
//! The robust list of the registering thread is replaced: glibc's own list
//! (for robust pthread mutexes, which Rust's standard library does not use)
//! no longer applies to that thread.

use std::io;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use rustix::io::Errno;
use rustix::thread::futex;
use rustix::time::{clock_gettime, ClockId, Timespec};

/// Bit the kernel sets in the word of a holder that died.
pub const OWNER_DIED: u32 = 0x4000_0000;
/// Bit a waiter sets so that the kernel wakes it.
const WAITERS: u32 = 0x8000_0000;
/// The holder's thread id.
const TID_MASK: u32 = 0x3fff_ffff;

/// `struct robust_list` of the kernel ABI.
#[repr(C)]
struct RobustList {
    next: *mut RobustList,
}

/// `struct robust_list_head` of the kernel ABI.
#[repr(C)]
struct RobustListHead {
    list: RobustList,
    futex_offset: libc::c_long,
    list_op_pending: *mut RobustList,
}

/// Takes `word` (it must live in memory shared with the watcher and never
/// be unmapped before the process exits) as this thread's robust futex.
/// When this thread dies, the kernel sets [`OWNER_DIED`] in the word and
/// wakes a waiter.
///
/// # Errors
/// The OS error of `set_robust_list`.
pub fn hold(word: &AtomicU32) -> io::Result<()> {
    let tid = rustix::thread::gettid().as_raw_nonzero().get() as u32 & TID_MASK;
    word.store(tid, Ordering::SeqCst);
    // The list lives as long as the process: leak it.
    let head = Box::leak(Box::new(RobustListHead {
        list: RobustList {
            next: std::ptr::null_mut(),
        },
        futex_offset: 0,
        list_op_pending: std::ptr::null_mut(),
    }));
    let entry = Box::leak(Box::new(RobustList {
        next: std::ptr::null_mut(),
    }));
    let head_ptr: *mut RobustListHead = head;
    entry.next = head_ptr.cast();
    let entry_ptr: *mut RobustList = entry;
    head.list.next = entry_ptr;
    head.futex_offset = (word as *const AtomicU32 as isize - entry_ptr as isize) as libc::c_long;
    // SAFETY: `head` points to a valid, leaked (never freed) list whose
    // single entry points back to the head, as the kernel ABI requires;
    // the futex word at entry + offset is `word`, valid for the process's
    // life per this function's contract.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_set_robust_list,
            head_ptr,
            std::mem::size_of::<RobustListHead>(),
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Gives the word up (a clean end): the kernel will find nothing to do.
pub fn release(word: &AtomicU32) {
    word.store(0, Ordering::SeqCst);
    crate::futex::wake(word, i32::MAX);
}

/// Most words one wait can watch (the kernel's limit).
pub const WAIT_MAX: usize = 128;

/// Waits until one of `words` (at most [`WAIT_MAX`], each held by a live
/// process or 0) has [`OWNER_DIED`] set, or the timeout passes, or a word
/// changes; the caller then looks at the words. Returns at once if a word
/// already has the bit.
///
/// # Errors
/// The OS error of `futex_waitv` other than a timeout or a changed word.
pub fn wait_for_death(words: &[&AtomicU32], timeout: Duration) -> io::Result<()> {
    let mut v = Vec::with_capacity(words.len().min(WAIT_MAX));
    for w in words.iter().take(WAIT_MAX) {
        let mut cur = w.load(Ordering::SeqCst);
        if cur & OWNER_DIED != 0 {
            return Ok(());
        }
        if cur & TID_MASK == 0 {
            continue;
        }
        if cur & WAITERS == 0 {
            match w.compare_exchange(cur, cur | WAITERS, Ordering::SeqCst, Ordering::SeqCst) {
                Ok(_) => cur |= WAITERS,
                // Changed under us: let the caller look again.
                Err(_) => return Ok(()),
            }
        }
        let mut wait = futex::Wait::new();
        wait.val = cur.into();
        wait.uaddr = futex::WaitPtr::new(w.as_ptr().cast());
        wait.flags = futex::WaitFlags::SIZE_U32;
        v.push(wait);
    }
    if v.is_empty() {
        std::thread::sleep(timeout);
        return Ok(());
    }
    let now = clock_gettime(ClockId::Monotonic);
    let end = Duration::new(now.tv_sec as u64, now.tv_nsec as u32) + timeout;
    let end = Timespec {
        tv_sec: end.as_secs() as i64,
        tv_nsec: end.subsec_nanos().into(),
    };
    match futex::waitv(
        &v,
        futex::WaitvFlags::empty(),
        Some(&end),
        ClockId::Monotonic,
    ) {
        Ok(_) | Err(Errno::TIMEDOUT | Errno::AGAIN | Errno::INTR) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::segment::{Layout, Segment};
    use std::time::Instant;

    #[test]
    fn a_dying_thread_marks_its_word_and_wakes_the_watcher() {
        let seg = Segment::create_anonymous(Layout::new(2, 4096)).unwrap();
        let s2 = seg.clone();
        let t = std::thread::spawn(move || {
            hold(&s2.proc_block(1).alive).unwrap();
            std::thread::sleep(Duration::from_millis(50));
            // The thread ends without releasing: the kernel marks it.
        });
        let w = &seg.proc_block(1).alive;
        let t0 = Instant::now();
        while w.load(Ordering::SeqCst) == 0 {
            std::thread::yield_now();
        }
        while w.load(Ordering::SeqCst) & OWNER_DIED == 0 {
            assert!(t0.elapsed() < Duration::from_secs(10), "never marked");
            wait_for_death(&[w], Duration::from_secs(1)).unwrap();
        }
        t.join().unwrap();
    }

    #[test]
    fn a_released_word_is_not_marked() {
        let seg = Segment::create_anonymous(Layout::new(1, 4096)).unwrap();
        let s2 = seg.clone();
        std::thread::spawn(move || {
            hold(&s2.proc_block(0).alive).unwrap();
            release(&s2.proc_block(0).alive);
        })
        .join()
        .unwrap();
        assert_eq!(seg.proc_block(0).alive.load(Ordering::SeqCst), 0);
        let t = Instant::now();
        wait_for_death(&[&seg.proc_block(0).alive], Duration::from_millis(20)).unwrap();
        assert!(t.elapsed() >= Duration::from_millis(15));
    }
}
