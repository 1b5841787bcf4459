//! One rank's checkpoint files: `DIR/rank-R/ckpt-ITERATION.bin`, each an
//! image of [`crate::format`].
//!
//! A file is written atomically: the image goes to a hidden temporary
//! file `.ckpt-ITERATION.bin.tmp` in the same folder, which is flushed to
//! the device (`fsync`), renamed to its final name (atomic on POSIX file
//! systems), and the folder is flushed so that the rename itself is
//! durable. A crash leaves either no file or the whole file under the
//! final name, plus at most a temporary file, which the listing ignores
//! and the next write of that iteration replaces. Only names of the exact
//! form `ckpt-<decimal>.bin` are listed; whether a listed file verifies
//! is for the caller to check ([`crate::format::verify`]).

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::Error;

/// The folder of one rank's files.
#[derive(Clone, Debug)]
pub(crate) struct Disk {
    dir: PathBuf,
}

fn io(what: &str, p: &Path, e: std::io::Error) -> Error {
    Error::Io(format!("{what} {}: {e}", p.display()))
}

/// The iteration of a file name `ckpt-<decimal>.bin` (canonical decimal,
/// so that names and iterations correspond one to one).
fn parse(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("ckpt-")?.strip_suffix(".bin")?;
    let it: u64 = digits.parse().ok()?;
    (it.to_string() == digits).then_some(it)
}

impl Disk {
    /// The folder `root/rank-R`, created if need be.
    pub(crate) fn create(root: &Path, rank: usize) -> Result<Disk, Error> {
        let dir = root.join(format!("rank-{rank}"));
        fs::create_dir_all(&dir).map_err(|e| io("create", &dir, e))?;
        Ok(Disk { dir })
    }

    /// The folder.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of `iteration`.
    pub(crate) fn path(&self, iteration: u64) -> PathBuf {
        self.dir.join(format!("ckpt-{iteration}.bin"))
    }

    fn tmp_path(&self, iteration: u64) -> PathBuf {
        self.dir.join(format!(".ckpt-{iteration}.bin.tmp"))
    }

    /// Writes `image` as the file of `iteration`, atomically and durably
    /// (see the module documentation); replaces a file of that iteration.
    pub(crate) fn write(&self, iteration: u64, image: &[u8]) -> Result<(), Error> {
        let tmp = self.tmp_path(iteration);
        let mut f = File::create(&tmp).map_err(|e| io("create", &tmp, e))?;
        f.write_all(image).map_err(|e| io("write", &tmp, e))?;
        f.sync_all().map_err(|e| io("fsync", &tmp, e))?;
        drop(f);
        let fin = self.path(iteration);
        fs::rename(&tmp, &fin).map_err(|e| io("rename to", &fin, e))?;
        self.sync_dir()
    }

    fn sync_dir(&self) -> Result<(), Error> {
        File::open(&self.dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| io("fsync folder", &self.dir, e))
    }

    /// The iterations that have a file, in increasing order.
    pub(crate) fn list(&self) -> Result<Vec<u64>, Error> {
        let rd = fs::read_dir(&self.dir).map_err(|e| io("list", &self.dir, e))?;
        let mut v = Vec::new();
        for ent in rd {
            let ent = ent.map_err(|e| io("list", &self.dir, e))?;
            if let Some(it) = ent.file_name().to_str().and_then(parse) {
                v.push(it);
            }
        }
        v.sort_unstable();
        Ok(v)
    }

    /// The bytes of the file of `iteration`.
    pub(crate) fn read(&self, iteration: u64) -> Result<Vec<u8>, Error> {
        let p = self.path(iteration);
        fs::read(&p).map_err(|e| io("read", &p, e))
    }

    /// Removes the file of `iteration` (and its temporary file), if any.
    pub(crate) fn remove(&self, iteration: u64) -> Result<(), Error> {
        for p in [self.path(iteration), self.tmp_path(iteration)] {
            match fs::remove_file(&p) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io("remove", &p, e)),
            }
        }
        Ok(())
    }

    /// Removes every file of this crate in the folder, then the folder if
    /// it is empty (something else in it stays, and so does the folder).
    pub(crate) fn remove_all(&self) -> Result<(), Error> {
        let rd = match fs::read_dir(&self.dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(io("list", &self.dir, e)),
        };
        for ent in rd {
            let ent = ent.map_err(|e| io("list", &self.dir, e))?;
            let name = ent.file_name();
            let name = name.to_str().unwrap_or_default();
            let tmp = name
                .strip_prefix('.')
                .and_then(|n| n.strip_suffix(".tmp"))
                .and_then(parse);
            if parse(name).is_some() || tmp.is_some() {
                let p = ent.path();
                fs::remove_file(&p).map_err(|e| io("remove", &p, e))?;
            }
        }
        // Not empty (the user's files): leave it.
        let _ = fs::remove_dir(&self.dir);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(parse("ckpt-0.bin"), Some(0));
        assert_eq!(parse("ckpt-120.bin"), Some(120));
        assert_eq!(parse("ckpt-012.bin"), None);
        assert_eq!(parse("ckpt-.bin"), None);
        assert_eq!(parse("ckpt-1.bin.tmp"), None);
        assert_eq!(parse(".ckpt-1.bin.tmp"), None);
        assert_eq!(parse("ckpt-1x.bin"), None);
    }

    #[test]
    fn write_list_read_remove() {
        let t = tempfile::tempdir().expect("temp dir");
        let d = Disk::create(t.path(), 3).expect("create");
        assert_eq!(d.dir(), t.path().join("rank-3"));
        d.write(20, b"twenty").expect("write");
        d.write(10, b"ten").expect("write");
        // A leftover temporary file (a crash mid-write) and a foreign file
        // are not listed.
        fs::write(d.tmp_path(30), b"half").expect("tmp");
        fs::write(d.dir().join("notes.txt"), b"mine").expect("foreign");
        assert_eq!(d.list().expect("list"), [10, 20]);
        assert_eq!(d.read(20).expect("read"), b"twenty");
        d.write(20, b"again").expect("rewrite");
        assert_eq!(d.read(20).expect("read"), b"again");
        d.remove(10).expect("remove");
        d.remove(10).expect("remove twice");
        assert_eq!(d.list().expect("list"), [20]);
        d.remove_all().expect("remove all");
        // The foreign file and the folder stay.
        assert!(d.dir().join("notes.txt").exists());
        assert!(!d.tmp_path(30).exists());
        assert_eq!(d.list().expect("list"), Vec::<u64>::new());
        fs::remove_file(d.dir().join("notes.txt")).expect("rm");
        d.remove_all().expect("remove all");
        assert!(!d.dir().exists());
        assert!(t.path().exists());
    }
}
