//! Where pertinax's C MPI library (`libmpi.so.12`, crate `pertinax-abi`)
//! and its headers (`mpi.h`, `mpi-ext.h`) are, for `pertinax mpicc` and
//! for `pertinax run`, which puts the library first on the processes'
//! `LD_LIBRARY_PATH`.
//!
//! The library: `$PERTINAX_ABI_DIR` when set, else the directory of the
//! `pertinax` executable (Cargo puts `libmpi.so` beside it in
//! `target/release/`), else `../lib` from there (an installed layout:
//! `bin/pertinax`, `lib/libmpi.so.12`). Where only Cargo's `libmpi.so` is
//! found, the link `libmpi.so.12 -> libmpi.so` (the soname programs ask
//! for) is made beside it.
//!
//! The headers: `$PERTINAX_INCLUDE_DIR` when set, else `include/` beside
//! the executable, `../include/pertinax` or `../include` from there, else
//! the checkout the executable was built from
//! (`crates/pertinax-abi/include`). A directory counts only if its `mpi.h`
//! is pertinax's (another MPI's `mpi.h` in `/usr/include` is not).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Overrides the library's directory.
pub const LIB_ENV: &str = "PERTINAX_ABI_DIR";
/// Overrides the headers' directory.
pub const INCLUDE_ENV: &str = "PERTINAX_INCLUDE_DIR";
/// The name programs built against the MPICH ABI load.
pub const SONAME: &str = "libmpi.so.12";
/// The headers of the checkout this executable was built from.
const CHECKOUT_INCLUDE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../pertinax-abi/include");

/// The directory of the running `pertinax` executable.
fn exe_dir() -> Result<PathBuf, String> {
    let exe =
        std::env::current_exe().map_err(|e| format!("cannot find the pertinax executable: {e}"))?;
    let exe = exe.canonicalize().unwrap_or(exe);
    exe.parent()
        .map(Path::to_path_buf)
        .ok_or_else(|| format!("{}: no parent directory", exe.display()))
}

/// The directory holding `libmpi.so.12` (and `libmpi.so`, for `-lmpi`).
///
/// # Errors
/// When no library is found (a message saying how to get one), or the
/// `libmpi.so.12` link cannot be made.
pub fn lib_dir() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os(LIB_ENV).filter(|v| !v.is_empty()) {
        let dir = PathBuf::from(dir);
        return if dir.join(SONAME).exists() {
            Ok(dir)
        } else if dir.join("libmpi.so").is_file() {
            soname_link(&dir)
        } else {
            Err(format!("{LIB_ENV}={}: no {SONAME} there", dir.display()))
        };
    }
    let exe = exe_dir()?;
    for dir in [exe.clone(), exe.join("../lib")] {
        if dir.join(SONAME).exists() {
            return Ok(dir);
        }
        if dir.join("libmpi.so").is_file() {
            return soname_link(&dir);
        }
    }
    Err(format!(
        "no {SONAME} beside {} (build it: cargo build --release -p pertinax-abi), \
         nor in ../lib; or set {LIB_ENV}",
        exe.display()
    ))
}

/// Makes `dir/libmpi.so.12 -> libmpi.so` (Cargo names the library
/// `libmpi.so`; its soname is `libmpi.so.12`).
fn soname_link(dir: &Path) -> Result<PathBuf, String> {
    match std::os::unix::fs::symlink("libmpi.so", dir.join(SONAME)) {
        Ok(()) => Ok(dir.to_path_buf()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(dir.to_path_buf()),
        Err(e) => Err(format!(
            "cannot make {}: {e} (ln -s libmpi.so {SONAME} there, or set {LIB_ENV})",
            dir.join(SONAME).display()
        )),
    }
}

/// Whether `dir` holds pertinax's `mpi.h` and `mpi-ext.h`.
fn is_ours(dir: &Path) -> bool {
    dir.join("mpi-ext.h").is_file()
        && std::fs::read_to_string(dir.join("mpi.h")).is_ok_and(|t| t.contains("PERTINAX_MPI_H"))
}

/// The directory holding pertinax's `mpi.h` and `mpi-ext.h`.
///
/// # Errors
/// When none is found.
pub fn include_dir() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os(INCLUDE_ENV).filter(|v| !v.is_empty()) {
        let dir = PathBuf::from(dir);
        return if is_ours(&dir) {
            Ok(dir)
        } else {
            Err(format!(
                "{INCLUDE_ENV}={}: no pertinax mpi.h and mpi-ext.h there",
                dir.display()
            ))
        };
    }
    let exe = exe_dir()?;
    let candidates = [
        exe.join("include"),
        exe.join("../include/pertinax"),
        exe.join("../include"),
        PathBuf::from(CHECKOUT_INCLUDE),
    ];
    candidates
        .iter()
        .find(|d| is_ours(d))
        .map(|d| d.canonicalize().unwrap_or_else(|_| d.clone()))
        .ok_or_else(|| {
            format!(
                "pertinax's mpi.h is not beside {} nor in {CHECKOUT_INCLUDE}; set {INCLUDE_ENV}",
                exe.display()
            )
        })
}

/// `LD_LIBRARY_PATH` with `dir` first: before `current` (the value the
/// job's processes would otherwise get), without repeating `dir`.
pub fn library_path(dir: &Path, current: Option<&OsString>) -> OsString {
    let mut dirs = vec![dir.to_path_buf()];
    if let Some(cur) = current {
        dirs.extend(std::env::split_paths(cur).filter(|d| d != dir && !d.as_os_str().is_empty()));
    }
    std::env::join_paths(dirs).unwrap_or_else(|_| dir.as_os_str().to_owned())
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;
    use std::path::Path;

    #[test]
    fn the_library_comes_first_once() {
        let d = Path::new("/opt/p/lib");
        assert_eq!(super::library_path(d, None), OsString::from("/opt/p/lib"));
        let cur = OsString::from("/a:/opt/p/lib:/b");
        assert_eq!(
            super::library_path(d, Some(&cur)),
            OsString::from("/opt/p/lib:/a:/b")
        );
    }
}
