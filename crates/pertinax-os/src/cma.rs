//! Cross-memory attach: copy straight from or into another process's
//! memory (`process_vm_readv`, `process_vm_writev`), the single-copy path
//! for large messages and for one-sided communication.
//!
//! The kernel allows it only when the caller may ptrace the target (same
//! user, and Yama or a seccomp filter permitting). [`probe`] finds out once;
//! callers fall back to copies through shared memory when it says no.

use std::io;

/// Copies `dst.len()` bytes from address `remote_addr` of process `pid` into
/// `dst`.
///
/// # Errors
/// The OS error (`EPERM` when not allowed, `ESRCH` when the process is gone,
/// `EFAULT` when the remote range is not mapped), or `UnexpectedEof` on a
/// short read.
pub fn read_from(pid: u32, remote_addr: u64, dst: &mut [u8]) -> io::Result<()> {
    let mut done = 0usize;
    while done < dst.len() {
        let local = libc::iovec {
            iov_base: dst[done..].as_mut_ptr().cast(),
            iov_len: dst.len() - done,
        };
        let remote = libc::iovec {
            iov_base: (remote_addr as usize + done) as *mut libc::c_void,
            iov_len: dst.len() - done,
        };
        // SAFETY: `local` describes the writable tail of `dst`, which we
        // borrow mutably for the whole call. The remote iovec is only
        // dereferenced by the kernel in the other process's address space,
        // where a bad address yields EFAULT, never undefined behaviour here.
        let n = unsafe { libc::process_vm_readv(pid as libc::pid_t, &local, 1, &remote, 1, 0) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "process_vm_readv copied nothing",
            ));
        }
        done += n as usize;
    }
    Ok(())
}

/// Copies `src` to address `remote_addr` of process `pid`.
///
/// # Errors
/// As [`read_from`].
pub fn write_to(pid: u32, remote_addr: u64, src: &[u8]) -> io::Result<()> {
    writev_to(pid, src, &[(remote_addr, src.len())])
}

/// Most iovecs one system call takes (the kernel's `UIO_MAXIOV`).
const IOV_MAX: usize = 1024;

/// Copies the remote ranges `remote` (address, length) of process `pid`,
/// one after the other, into `dst` (as long as their total).
///
/// # Errors
/// As [`read_from`]; `InvalidInput` if `dst` is shorter than the ranges.
pub fn readv_from(pid: u32, dst: &mut [u8], remote: &[(u64, usize)]) -> io::Result<()> {
    vectored(pid, dst.as_mut_ptr(), dst.len(), remote, false)
}

/// Copies `src` into the remote ranges `remote` (address, length) of
/// process `pid`, filling them one after the other.
///
/// # Errors
/// As [`readv_from`].
pub fn writev_to(pid: u32, src: &[u8], remote: &[(u64, usize)]) -> io::Result<()> {
    // The kernel only reads the local side of a write.
    vectored(pid, src.as_ptr().cast_mut(), src.len(), remote, true)
}

/// The loop of [`readv_from`] and [`writev_to`]: at most [`IOV_MAX`]
/// remote ranges a call, resumed after a partial copy.
fn vectored(
    pid: u32,
    local: *mut u8,
    len: usize,
    remote: &[(u64, usize)],
    write: bool,
) -> io::Result<()> {
    let total = remote.iter().try_fold(0usize, |a, r| a.checked_add(r.1));
    if total.is_none_or(|t| t > len) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the remote ranges are longer than the local buffer",
        ));
    }
    let mut done = 0usize; // bytes copied
    let mut i = 0usize; // the first remote range not copied whole
    let mut skip = 0usize; // bytes of range `i` copied
    let mut iov: Vec<libc::iovec> = Vec::with_capacity(remote.len().min(IOV_MAX));
    while i < remote.len() {
        if remote[i].1 == skip {
            i += 1;
            skip = 0;
            continue;
        }
        iov.clear();
        let mut want = 0usize;
        for (k, &(addr, n)) in remote[i..].iter().take(IOV_MAX).enumerate() {
            let off = if k == 0 { skip } else { 0 };
            iov.push(libc::iovec {
                iov_base: (addr as usize).wrapping_add(off) as *mut libc::c_void,
                iov_len: n - off,
            });
            want += n - off;
        }
        let lv = libc::iovec {
            iov_base: local.wrapping_add(done).cast(),
            iov_len: want,
        };
        // SAFETY: `lv` describes bytes `done..done + want` of the caller's
        // buffer (`want <= len - done`, checked above), which the caller
        // borrows for the call (mutably for a read; a write only reads
        // them). The remote iovecs are dereferenced by the kernel in the
        // other process only, where a bad address is EFAULT.
        let n = unsafe {
            if write {
                libc::process_vm_writev(
                    pid as libc::pid_t,
                    &lv,
                    1,
                    iov.as_ptr(),
                    iov.len() as libc::c_ulong,
                    0,
                )
            } else {
                libc::process_vm_readv(
                    pid as libc::pid_t,
                    &lv,
                    1,
                    iov.as_ptr(),
                    iov.len() as libc::c_ulong,
                    0,
                )
            }
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "process_vm_readv/writev copied nothing",
            ));
        }
        let mut n = n as usize;
        done += n;
        while n > 0 && i < remote.len() {
            let left = remote[i].1 - skip;
            if n >= left {
                n -= left;
                i += 1;
                skip = 0;
            } else {
                skip += n;
                n = 0;
            }
        }
    }
    Ok(())
}

/// Says whether this process may use cross-memory attach on a process of
/// the same user, by reading a few bytes of its own memory through the
/// system call (which goes through the same permission and seccomp checks).
pub fn probe() -> bool {
    let src = [0x5au8; 64];
    let mut dst = [0u8; 64];
    read_from(std::process::id(), src.as_ptr() as u64, &mut dst).is_ok() && dst == src
}

/// Allows every process of this user to use cross-memory attach on the
/// calling process even under Yama's restricted ptrace scope
/// (`PR_SET_PTRACER_ANY`). A no-op where Yama is absent.
pub fn allow_peers() {
    // Failure (EINVAL without Yama) is harmless and ignored.
    let _ = rustix::process::set_ptracer(rustix::process::PTracer::Any);
}

#[cfg(test)]
mod tests {
    #[test]
    fn probe_and_self_read() {
        if super::probe() {
            let src: Vec<u8> = (0..100_000u32).map(|i| i as u8).collect();
            let mut dst = vec![0u8; src.len()];
            super::read_from(std::process::id(), src.as_ptr() as u64, &mut dst).unwrap();
            assert_eq!(src, dst);
        }
    }

    #[test]
    fn vectored_write_and_read_back() {
        if !super::probe() {
            return;
        }
        let mut target = vec![0u8; 64];
        let base = target.as_mut_ptr() as u64;
        let src: Vec<u8> = (1..=12).collect();
        let ranges = [(base + 2, 4), (base + 10, 0), (base + 20, 8)];
        super::writev_to(std::process::id(), &src, &ranges).unwrap();
        // The kernel wrote `target` behind the compiler's back.
        let seen = std::hint::black_box(&target);
        assert_eq!(&seen[2..6], &src[..4]);
        assert_eq!(&seen[20..28], &src[4..]);
        let mut back = vec![0u8; 12];
        super::readv_from(std::process::id(), &mut back, &ranges).unwrap();
        assert_eq!(back, src);
        assert!(super::readv_from(std::process::id(), &mut back[..3], &ranges).is_err());
        super::write_to(std::process::id(), base, &[7u8; 3]).unwrap();
        assert_eq!(&std::hint::black_box(&target)[..3], &[7, 7, 7]);
    }

    #[test]
    fn bad_address_is_an_error_not_a_crash() {
        let mut dst = [0u8; 16];
        assert!(super::read_from(std::process::id(), 8, &mut dst).is_err());
    }
}
