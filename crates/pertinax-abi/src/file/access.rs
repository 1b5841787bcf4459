//! What the data calls are built on: moving bytes between a buffer and
//! the file through the view ([`transfer`]), atomic mode's `fcntl` byte
//! range locks, the shared file pointer ([`Shared`]), and the collectives
//! on the file's communicator (the library's own `PMPI_` calls).

use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::{io_class, ok, FileEntry};
use crate::consts::*;
use crate::datatype::{RecvBuf, SendBuf, Ty};
use crate::state::{self, ReqEntry};

/// The longest side-file path rank 0 sends the others.
pub(crate) const SIDE_NAME_MAX: usize = 4096;

/// The shared file pointer, in etypes of the view.
#[derive(Debug)]
pub(crate) enum Shared {
    /// One process: in memory.
    Local(Cell<i64>),
    /// 8 bytes at the start of a side file every process has open,
    /// changed under an `fcntl` write lock.
    File(std::fs::File),
}

impl Shared {
    pub(crate) fn get(&self) -> Result<i64, c_int> {
        self.fetch_add(0)
    }

    pub(crate) fn set(&self, v: i64) -> Result<(), c_int> {
        self.update(|_| v).map(drop)
    }

    /// Adds `d`; the value before.
    pub(crate) fn fetch_add(&self, d: i64) -> Result<i64, c_int> {
        self.update(|v| v + d)
    }

    /// Replaces the value by `f` of it; the value before.
    fn update(&self, f: impl FnOnce(i64) -> i64) -> Result<i64, c_int> {
        match self {
            Shared::Local(c) => {
                let v = c.get();
                c.set(f(v));
                Ok(v)
            }
            Shared::File(file) => {
                let _lock = Lock::take(file, true, 0, 8)?;
                let mut b = [0u8; 8];
                let n = read_full(file, &mut b, 0)?;
                let v = if n == 8 { i64::from_ne_bytes(b) } else { 0 };
                let new = f(v);
                if new != v || n != 8 {
                    file.write_all_at(&new.to_ne_bytes(), 0)
                        .map_err(|e| io_class(&e))?;
                }
                Ok(v)
            }
        }
    }
}

/// A side file for the shared pointer, beside `path` (or in the
/// temporary directory if that one is not writable): made by rank 0.
pub(crate) fn make_side(path: &Path) -> Result<(std::fs::File, PathBuf), c_int> {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let name = format!(
        ".pertinax-shfp-{}-{nanos}-{}",
        std::process::id(),
        N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let mut last = MPI_ERR_IO;
    for d in [dir.to_path_buf(), std::env::temp_dir()] {
        let p = d.join(&name);
        if p.as_os_str().as_bytes().len() >= SIDE_NAME_MAX {
            continue;
        }
        match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o666)
            .open(&p)
        {
            Ok(f) => return Ok((f, p)),
            Err(e) => last = io_class(&e),
        }
    }
    Err(last)
}

/// Opens the side file rank 0 made.
pub(crate) fn open_side(p: &Path) -> Result<std::fs::File, c_int> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(p)
        .map_err(|e| io_class(&e))
}

/// An `fcntl` lock on bytes `[start, start + len)` of a file, released
/// when dropped.
struct Lock<'a> {
    file: &'a std::fs::File,
    start: u64,
    len: u64,
}

impl<'a> Lock<'a> {
    fn take(file: &'a std::fs::File, write: bool, start: u64, len: u64) -> Result<Lock<'a>, c_int> {
        let ty = if write { libc::F_WRLCK } else { libc::F_RDLCK };
        loop {
            match fcntl_lock(file, ty as libc::c_short, start, len) {
                Ok(()) => return Ok(Lock { file, start, len }),
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e) => return Err(io_class(&e)),
            }
        }
    }
}

impl Drop for Lock<'_> {
    fn drop(&mut self) {
        let _ = fcntl_lock(
            self.file,
            libc::F_UNLCK as libc::c_short,
            self.start,
            self.len,
        );
    }
}

fn fcntl_lock(
    file: &std::fs::File,
    ty: libc::c_short,
    start: u64,
    len: u64,
) -> std::io::Result<()> {
    // SAFETY: a plain C struct, all zeros is a valid value.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = ty;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_start = start as libc::off_t;
    fl.l_len = len as libc::off_t;
    // SAFETY: an open descriptor and a valid `flock`.
    let rc = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLKW, &fl) };
    if rc == -1 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Reads into `buf` from file byte `at` until it is full or the file
/// ends; the bytes read.
fn read_full(file: &std::fs::File, buf: &mut [u8], at: u64) -> Result<usize, c_int> {
    let mut n = 0;
    while n < buf.len() {
        match file.read_at(&mut buf[n..], at + n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_class(&e)),
        }
    }
    Ok(n)
}

/// The file's size in bytes.
pub(crate) fn size(file: &std::fs::File) -> Result<u64, c_int> {
    file.metadata().map(|m| m.len()).map_err(|e| io_class(&e))
}

/// Makes the file at least `size` bytes, its storage allocated.
pub(crate) fn preallocate(file: &std::fs::File, cur: u64, size: u64) -> Result<(), c_int> {
    if size <= cur {
        return Ok(());
    }
    // SAFETY: an open descriptor; plain integers.
    let rc = unsafe {
        libc::posix_fallocate(
            file.as_raw_fd(),
            cur as libc::off_t,
            (size - cur) as libc::off_t,
        )
    };
    match rc {
        0 => Ok(()),
        libc::EOPNOTSUPP | libc::EINVAL => file.set_len(size).map_err(|e| io_class(&e)),
        e => Err(io_class(&std::io::Error::from_raw_os_error(e))),
    }
}

/// Whether the file may be read (`write`: written), as its access mode
/// says: `MPI_ERR_ACCESS` (`MPI_ERR_READ_ONLY`) if not.
pub(crate) fn may(g: &FileEntry, write: bool) -> Result<(), c_int> {
    match (write, g.amode) {
        (false, a) if a & MPI_MODE_WRONLY != 0 => Err(MPI_ERR_ACCESS),
        (true, a) if a & MPI_MODE_RDONLY != 0 => Err(MPI_ERR_READ_ONLY),
        _ => Ok(()),
    }
}

/// Moves `count` elements of `ty` at `buf` to (`write`) or from the
/// file at view offset `offset` (in etypes); the bytes moved (a read
/// stops at the end of the file).
///
/// # Safety
/// `buf` holds `count` elements of `ty` (MPI's contract).
pub(crate) unsafe fn transfer(
    g: &FileEntry,
    write: bool,
    offset: i64,
    buf: *mut c_void,
    count: usize,
    ty: &Ty,
) -> Result<u64, c_int> {
    may(g, write)?;
    let start = u64::try_from(offset).map_err(|_| MPI_ERR_ARG)?;
    let len = ty.bytes(count)? as u64;
    let start = start.checked_mul(g.view.esize).ok_or(MPI_ERR_ARG)?;
    let segs = g.view.segments(start, len)?;
    let _lock = match (g.atomic, segs.first(), segs.iter().map(|s| s.0 + s.1).max()) {
        (true, Some(first), Some(end)) => {
            let lo = segs.iter().map(|s| s.0).min().unwrap_or(first.0);
            Some(Lock::take(&g.file, write, lo, end - lo)?)
        }
        _ => None,
    };
    if write {
        // SAFETY: by the caller's contract.
        let data = unsafe { SendBuf::new(buf, count, ty) }?;
        let mut at = 0usize;
        for &(off, n) in &segs {
            let part = &data.bytes()[at..at + n as usize];
            g.file.write_all_at(part, off).map_err(|e| io_class(&e))?;
            at += n as usize;
        }
        return Ok(len);
    }
    // SAFETY: by the caller's contract.
    let mut rb = unsafe { RecvBuf::new(buf, count, ty) }?;
    let mut got = 0usize;
    {
        let dst = rb.bytes_mut();
        for &(off, n) in &segs {
            let k = read_full(&g.file, &mut dst[got..got + n as usize], off)?;
            got += k;
            if k < n as usize {
                break;
            }
        }
    }
    rb.finish(got);
    Ok(got as u64)
}

/// The status of an access that moved `n` bytes.
pub(crate) fn status(n: u64) -> MpiStatus {
    crate::p2p::status(MPI_ANY_SOURCE, MPI_ANY_TAG, n as usize, MPI_SUCCESS)
}

/// A request already complete with `st`, written to `req`.
///
/// # Safety
/// `req` is null or valid for a write.
pub(crate) unsafe fn done_request(req: *mut c_int, st: MpiStatus) -> Result<(), c_int> {
    if req.is_null() {
        return Err(MPI_ERR_ARG);
    }
    let h = state::with(|s| {
        REQUEST_DIRECT | state::insert(&mut s.requests, ReqEntry::Done(st)) as c_int
    })
    .ok_or(MPI_ERR_INTERN)?;
    // SAFETY: checked non-null; MPI's contract.
    unsafe { *req = h };
    Ok(())
}

/// `MPI_Bcast` of `buf`'s bytes from rank 0 of `comm`.
pub(crate) fn bcast(comm: c_int, buf: &mut [u8]) -> Result<(), c_int> {
    let n = c_int::try_from(buf.len()).map_err(|_| MPI_ERR_COUNT)?;
    // SAFETY: `buf` holds `n` bytes.
    ok(unsafe { crate::coll::PMPI_Bcast(buf.as_mut_ptr().cast(), n, MPI_BYTE, 0, comm) })
}

pub(crate) use crate::coll::barrier_of as barrier;

/// Every process's `v`, by rank.
pub(crate) fn allgather(comm: c_int, v: i64) -> Result<Vec<i64>, c_int> {
    let mut n = 0;
    // SAFETY: a communicator handle and an int to write.
    ok(unsafe { crate::comm::PMPI_Comm_size(comm, &mut n) })?;
    let mut all = vec![0i64; usize::try_from(n).map_err(|_| MPI_ERR_COMM)?];
    // SAFETY: one value in, `n` out.
    ok(unsafe {
        crate::coll::PMPI_Allgather(
            (&raw const v).cast(),
            1,
            MPI_INT64_T,
            all.as_mut_ptr().cast(),
            1,
            MPI_INT64_T,
            comm,
        )
    })?;
    Ok(all)
}
