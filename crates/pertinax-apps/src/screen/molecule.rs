//! Molecule records, a deterministic database generator, positioned reads.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use pertinax_wire::rng::{mix, SplitMix64};

use super::error::ScreenError;

/// Atoms per molecule.
pub const ATOMS: usize = 4;

/// Bytes of a molecule's name.
pub const NAME_LEN: usize = 8;

/// Bytes of one record: the id (`u64`), the atoms (`f32` x, y, z each) and
/// the name, little-endian, no padding.
pub const RECORD_SIZE: usize = 8 + ATOMS * 3 * 4 + NAME_LEN;

const _: () = assert!(RECORD_SIZE == 64);

/// One database record: a small rigid molecule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Molecule {
    /// The molecule's id; [`generate`] numbers records from 0.
    pub id: u64,
    /// Atom positions (x, y, z) around the molecule's origin, in units of
    /// the Lennard-Jones radius.
    pub atoms: [[f32; 3]; ATOMS],
    /// A name of capital letters, not terminated.
    pub name: [u8; NAME_LEN],
}

impl Molecule {
    /// Molecule `index` of the database generated from `seed`: a
    /// deterministic function of both, independent of every other record.
    pub fn generate(seed: u64, index: u64) -> Molecule {
        let mut rng = SplitMix64::new(mix(seed) ^ mix(index ^ 0x6A09_E667_F3BC_C908));
        let mut atoms = [[0.0f32; 3]; ATOMS];
        for c in atoms.iter_mut().flatten() {
            // 24 random bits: exact in an f32, uniform in [-2.5, 2.5).
            *c = (rng.next_u64() >> 40) as f32 / (1u32 << 24) as f32 * 5.0 - 2.5;
        }
        let mut name = [0u8; NAME_LEN];
        for b in &mut name {
            *b = b'A' + rng.below_mod(26) as u8;
        }
        Molecule {
            id: index,
            atoms,
            name,
        }
    }

    /// The record's bytes.
    pub fn to_bytes(&self) -> [u8; RECORD_SIZE] {
        let mut out = [0u8; RECORD_SIZE];
        out[..8].copy_from_slice(&self.id.to_le_bytes());
        for (i, c) in self.atoms.iter().flatten().enumerate() {
            out[8 + 4 * i..12 + 4 * i].copy_from_slice(&c.to_le_bytes());
        }
        out[RECORD_SIZE - NAME_LEN..].copy_from_slice(&self.name);
        out
    }

    /// The molecule of a record's bytes (any bytes make a molecule).
    pub fn from_bytes(bytes: &[u8; RECORD_SIZE]) -> Molecule {
        decode(bytes)
    }
}

/// [`Molecule::from_bytes`] on a slice of exactly [`RECORD_SIZE`] bytes.
fn decode(bytes: &[u8]) -> Molecule {
    debug_assert_eq!(bytes.len(), RECORD_SIZE);
    let mut id = [0u8; 8];
    id.copy_from_slice(&bytes[..8]);
    let mut atoms = [[0.0f32; 3]; ATOMS];
    for (i, c) in atoms.iter_mut().flatten().enumerate() {
        let mut b = [0u8; 4];
        b.copy_from_slice(&bytes[8 + 4 * i..12 + 4 * i]);
        *c = f32::from_le_bytes(b);
    }
    let mut name = [0u8; NAME_LEN];
    name.copy_from_slice(&bytes[RECORD_SIZE - NAME_LEN..]);
    Molecule {
        id: u64::from_le_bytes(id),
        atoms,
        name,
    }
}

/// Writes a database of `count` molecules generated from `seed` to `path`
/// (replacing any file there): record `i` is
/// [`Molecule::generate`]`(seed, i)`.
///
/// # Errors
///
/// [`ScreenError::Io`] if the file cannot be created or written.
pub fn generate(path: &Path, count: u64, seed: u64) -> Result<(), ScreenError> {
    let file = File::create(path).map_err(io_error("create", path))?;
    let mut out = BufWriter::new(file);
    for i in 0..count {
        out.write_all(&Molecule::generate(seed, i).to_bytes())
            .map_err(io_error("write", path))?;
    }
    out.flush().map_err(io_error("write", path))
}

/// The number of records in the database at `path`.
///
/// # Errors
///
/// [`ScreenError::Io`] if the file cannot be opened, [`ScreenError::BadSize`]
/// if its size is not a whole number of records.
pub fn record_count(path: &Path) -> Result<u64, ScreenError> {
    Ok(Database::open(path)?.count)
}

/// Reads records `range` (`[start, end)`, counted from 0) of the database at
/// `path`, with one positioned read.
///
/// # Errors
///
/// [`ScreenError::Io`] if the file cannot be opened or read,
/// [`ScreenError::BadSize`] if its size is not a whole number of records,
/// [`ScreenError::OutOfRange`] if `range` ends past the last record or
/// before it starts.
pub fn read_range(path: &Path, range: Range<u64>) -> Result<Vec<Molecule>, ScreenError> {
    let db = Database::open(path)?;
    db.check(&range)?;
    db.read(range)
}

/// An open database whose size has been checked.
#[derive(Debug)]
pub(super) struct Database {
    file: File,
    path: PathBuf,
    count: u64,
}

impl Database {
    pub(super) fn open(path: &Path) -> Result<Database, ScreenError> {
        let file = File::open(path).map_err(io_error("open", path))?;
        let len = file.metadata().map_err(io_error("open", path))?.len();
        if len % RECORD_SIZE as u64 != 0 {
            return Err(ScreenError::BadSize {
                path: path.to_path_buf(),
                len,
            });
        }
        Ok(Database {
            file,
            path: path.to_path_buf(),
            count: len / RECORD_SIZE as u64,
        })
    }

    /// Fails with [`ScreenError::OutOfRange`] unless `range` is within the
    /// database.
    pub(super) fn check(&self, range: &Range<u64>) -> Result<(), ScreenError> {
        if range.start <= range.end && range.end <= self.count {
            Ok(())
        } else {
            Err(ScreenError::OutOfRange {
                path: self.path.clone(),
                range: range.clone(),
                count: self.count,
            })
        }
    }

    /// Reads the records `range`, which [`Database::check`] accepted.
    pub(super) fn read(&self, range: Range<u64>) -> Result<Vec<Molecule>, ScreenError> {
        let out_of_range = || ScreenError::OutOfRange {
            path: self.path.clone(),
            range: range.clone(),
            count: self.count,
        };
        let records = range
            .end
            .checked_sub(range.start)
            .ok_or_else(out_of_range)?;
        let len = usize::try_from(records)
            .ok()
            .and_then(|r| r.checked_mul(RECORD_SIZE))
            .ok_or_else(out_of_range)?;
        let mut buf = vec![0u8; len];
        self.file
            .read_exact_at(&mut buf, range.start * RECORD_SIZE as u64)
            .map_err(io_error("read", &self.path))?;
        Ok(buf.chunks_exact(RECORD_SIZE).map(decode).collect())
    }
}

/// A maker of [`ScreenError::Io`] for `map_err`.
fn io_error<'a>(
    op: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> ScreenError + 'a {
    move |source| ScreenError::Io {
        op,
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_round_trip() {
        for i in [0, 1, 77, u64::MAX] {
            let m = Molecule::generate(9, i);
            assert_eq!(Molecule::from_bytes(&m.to_bytes()), m);
            assert_eq!(m.id, i);
            assert!(m.name.iter().all(u8::is_ascii_uppercase));
            assert!(m.atoms.iter().flatten().all(|c| (-2.5..2.5).contains(c)));
        }
    }

    #[test]
    fn molecules_depend_on_seed_and_index() {
        let a = Molecule::generate(1, 5);
        assert_eq!(a, Molecule::generate(1, 5));
        assert_ne!(a.atoms, Molecule::generate(2, 5).atoms);
        assert_ne!(a.atoms, Molecule::generate(1, 6).atoms);
    }
}
