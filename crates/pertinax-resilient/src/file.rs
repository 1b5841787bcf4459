//! File output that every survivor can still write after failures.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::{Communicator, Error};

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
    /// Creates (or empties) `path` and opens it at every rank. Collective:
    /// the lowest live rank empties the file between two barriers.
    ///
    /// # Errors
    /// [`Error::Io`], or the barriers' errors.
    pub fn create<C: Communicator>(comm: &C, path: impl AsRef<Path>) -> Result<SharedFile, Error> {
        let path = path.as_ref().to_path_buf();
        let io = |op, source| Error::Io {
            op,
            path: path.display().to_string(),
            source,
        };
        comm.barrier()?;
        let failed = comm.failed_ranks();
        let first = (0..comm.size()).find(|&r| !failed.iter().any(|f| f.index() == r));
        if first == Some(comm.rank().index()) {
            File::create(&path).map_err(|e| io("create", e))?;
        }
        comm.barrier()?;
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
