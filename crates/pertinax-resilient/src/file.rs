//! File output that every survivor can still write after failures.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use pertinax::Op;

use crate::{Communicator, CommunicatorExt, Error};

/// A file that every rank of a communicator writes its part of, at
/// offsets the program computes from original ranks (which never change),
/// so survivors keep writing at the same places after failures. Every rank
/// opens the file itself: no collective file operation can be caught by a
/// failure half-way.
#[derive(Debug)]
pub struct SharedFile {
    file: File,
    path: PathBuf,
}

impl SharedFile {
    /// Creates (or empties) `path` and opens it at every rank. Collective.
    /// One rank empties the file, chosen by an agreed operation (an
    /// allreduce of the ranks, whose result is the same at every survivor:
    /// the lowest rank that took part); a second allreduce confirms that it
    /// did, and if it died first, the survivors choose again. So exactly the
    /// ranks' own writes after this call are in the file, whoever fails.
    /// Fault point (for tests): `res.file.truncate` (the chosen rank, before
    /// it empties the file).
    ///
    /// # Errors
    /// [`Error::Io`] (at the rank that failed to create the file; the
    /// others get `Error::Io` from the confirmation), or the allreduces'
    /// errors.
    pub fn create<C>(comm: &C, path: impl AsRef<Path>) -> Result<SharedFile, Error>
    where
        C: Communicator + ?Sized,
        Error: From<C::Error>,
    {
        let path = path.as_ref().to_path_buf();
        let io = |op, source| Error::Io {
            op,
            path: path.display().to_string(),
            source,
        };
        let me = comm.rank().0 as u64;
        loop {
            let mut lowest = [0u64];
            comm.allreduce(&[me], &mut lowest, &Op::min())?;
            // 0: not chosen; 1: emptied it; 2: chosen but could not.
            let mut done = 0u64;
            let mut made = Ok(());
            if lowest[0] == me {
                pertinax::fault_point("res.file.truncate");
                made = File::create(&path).map(|_| ()).map_err(|e| io("create", e));
                done = if made.is_ok() { 1 } else { 2 };
            }
            let mut any = [0u64];
            comm.allreduce(&[done], &mut any, &Op::max())?;
            made?;
            match any[0] {
                1 => break,
                0 => continue, // the chosen rank died before it reported
                _ => {
                    return Err(io(
                        "create (at the rank that empties it)",
                        std::io::Error::other("failed at another rank"),
                    ))
                }
            }
        }
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| io("open", e))?;
        Ok(SharedFile { file, path })
    }

    /// Writes all of `data` at `offset`.
    ///
    /// # Errors
    /// [`Error::Io`].
    pub fn write_at(&self, data: &[u8], offset: u64) -> Result<(), Error> {
        self.file
            .write_all_at(data, offset)
            .map_err(|source| Error::Io {
                op: "write",
                path: self.path.display().to_string(),
                source,
            })
    }

    /// Flushes the data to the storage device.
    ///
    /// # Errors
    /// [`Error::Io`].
    pub fn sync(&self) -> Result<(), Error> {
        self.file.sync_data().map_err(|source| Error::Io {
            op: "sync",
            path: self.path.display().to_string(),
            source,
        })
    }
}
