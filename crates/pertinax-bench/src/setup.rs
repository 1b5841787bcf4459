//! Finding the pieces a benchmark needs (the `pertinax` launcher, the Open
//! MPI anchors, Open MPI itself) and compiling the C programs once.
//!
//! C programs are compiled into `target/ompi-anchors/` and recompiled only
//! when their source is newer than the binary. Open MPI is optional: when
//! it is absent, benchmarks report pertinax alone.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};

use crate::host::Sentinel;
use crate::run::{run, Cmd};

/// Where this crate's own C programs live (`c/pingping.c`, `c/coll_sweep.c`,
/// `c/propagate.c`).
const CRATE_DIR: &str = env!("CARGO_MANIFEST_DIR");

/// The directory of the running executable.
fn exe_dir() -> Result<PathBuf> {
    let exe = std::env::current_exe().context("cannot find the running executable")?;
    exe.parent()
        .map(Path::to_path_buf)
        .ok_or_else(|| anyhow!("executable {} has no parent directory", exe.display()))
}

/// The running executable (ranks run `<self> worker ...`).
///
/// # Errors
/// When the OS cannot tell.
pub fn this_exe() -> Result<PathBuf> {
    std::env::current_exe().context("cannot find the running executable")
}

/// The `pertinax` launcher: `given`, or next to this executable.
///
/// # Errors
/// When it does not exist.
pub fn launcher(given: Option<&Path>) -> Result<PathBuf> {
    let path = match given {
        Some(p) => p.to_path_buf(),
        None => exe_dir()?.join("pertinax"),
    };
    if !path.is_file() {
        bail!(
            "launcher {} not found; build it with `cargo build --release -p pertinax-cli` \
             or pass --launcher PATH",
            path.display()
        );
    }
    Ok(path)
}

/// For `--backend mpi`: pertinax-bench built with the MPI feature: `given`,
/// else `$PERTINAX_BENCH_MPI_EXE`, else `target/mpi/release/pertinax-bench`
/// of this repository (or of this executable's target directory).
///
/// # Errors
/// When it does not exist (with the command that builds it).
pub fn mpi_exe(given: Option<&Path>) -> Result<PathBuf> {
    let path = match (given, std::env::var_os("PERTINAX_BENCH_MPI_EXE")) {
        (Some(p), _) => p.to_path_buf(),
        (None, Some(p)) => PathBuf::from(p),
        (None, None) => {
            let in_repo = repo_root().join("target/mpi/release/pertinax-bench");
            if in_repo.is_file() {
                in_repo
            } else {
                exe_dir()?.join("../../mpi/release/pertinax-bench")
            }
        }
    };
    if !path.is_file() {
        bail!(
            "--backend mpi: the MPI build of pertinax-bench {} not found; build it with \
             `PERTINAX_MPICC=/tmp/ompi/bin/mpicc CARGO_TARGET_DIR=target/mpi cargo build \
             --release -p pertinax-bench --features pertinax/mpi` or pass --mpi-exe PATH",
            path.display()
        );
    }
    Ok(path.canonicalize().unwrap_or(path))
}

/// The error-propagation rank program `propagate-ranks` (crate
/// `pertinax-tests`): `given`, or next to this executable.
///
/// # Errors
/// When it does not exist.
pub fn propagate_ranks(given: Option<&Path>) -> Result<PathBuf> {
    let path = match given {
        Some(p) => p.to_path_buf(),
        None => exe_dir()?.join("propagate-ranks"),
    };
    if !path.is_file() {
        bail!(
            "rank program {} not found; build it with `cargo build --release -p pertinax-tests` \
             or pass --propagate-ranks PATH",
            path.display()
        );
    }
    Ok(path)
}

/// The directory of pertinax-apps' programs: `given`, or the one of this
/// executable.
///
/// # Errors
/// When the OS cannot tell where this executable is.
pub fn apps_dir(given: Option<&Path>) -> Result<PathBuf> {
    match given {
        Some(d) => Ok(d.to_path_buf()),
        None => exe_dir(),
    }
}

/// The program `name` of pertinax-apps in `dir`.
///
/// # Errors
/// When it is not there (the error names the command that builds it).
pub fn app(dir: &Path, name: &str) -> Result<PathBuf> {
    let p = dir.join(name);
    if !p.is_file() {
        bail!(
            "{} not found; build it with `cargo build --release -p pertinax-apps` or pass \
             --apps DIR",
            p.display()
        );
    }
    Ok(p)
}

/// The repository root as known at compile time (`crates/pertinax-bench/../..`).
fn repo_root() -> PathBuf {
    Path::new(CRATE_DIR).join("..").join("..")
}

/// The Open MPI anchor directory: `given`, or the first of
/// `<repo>/../shared/anchors/ompi`, `<cwd>/../shared/anchors/ompi` that
/// holds `pingpong.c`; `None` if there is none.
pub fn anchors(given: Option<&Path>) -> Option<PathBuf> {
    if let Some(p) = given {
        return Some(p.to_path_buf());
    }
    let rel = Path::new("..").join("shared").join("anchors").join("ompi");
    let mut candidates = vec![repo_root().join(&rel)];
    if let Ok(cwd) = std::env::current_dir() {
        candidates.push(cwd.join(&rel));
    }
    candidates
        .into_iter()
        .find(|d| d.join("pingpong.c").is_file())
}

/// Where compiled C programs go: `<repo>/target/ompi-anchors`, or next to
/// the target directory of this executable.
///
/// # Errors
/// When the directory cannot be created.
pub fn build_dir() -> Result<PathBuf> {
    let target = repo_root().join("target");
    let base = if target.is_dir() {
        target
    } else {
        exe_dir()?.join("..")
    };
    let dir = base.join("ompi-anchors");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(dir.canonicalize().unwrap_or(dir))
}

/// The C ping-ping program that lives in this crate.
pub fn pingping_source() -> PathBuf {
    Path::new(CRATE_DIR).join("c").join("pingping.c")
}

/// The C collective sweep that lives in this crate.
pub fn coll_sweep_source() -> PathBuf {
    Path::new(CRATE_DIR).join("c").join("coll_sweep.c")
}

/// The C error-propagation program (ULFM revoke + agree) of this crate.
pub fn propagate_source() -> PathBuf {
    Path::new(CRATE_DIR).join("c").join("propagate.c")
}

/// Where Open MPI is looked for last.
pub const DEFAULT_OMPI_PREFIX: &str = "/tmp/ompi";

/// The prefix of the first directory on `path` (a `PATH` value) that
/// holds both `mpirun` and `mpicc`, when that installation is Open MPI
/// with ULFM: its `ompi_info --parsable` says `ft_mpi_support:yes`.
/// `None` when there is none or it is another MPI (MPICH, an Open MPI
/// without ULFM).
pub fn ompi_on_path(path: &std::ffi::OsStr) -> Option<PathBuf> {
    let bin = std::env::split_paths(path)
        .find(|d| d.join("mpirun").is_file() && d.join("mpicc").is_file())?;
    let info = Command::new(bin.join("ompi_info"))
        .arg("--parsable")
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&info.stdout);
    let ulfm = text
        .lines()
        .any(|l| l.trim() == "options:ft_mpi_support:yes");
    if !ulfm {
        return None;
    }
    let bin = bin.canonicalize().unwrap_or(bin);
    bin.parent().map(Path::to_path_buf)
}

/// `mpirun`'s options for the MPI backend's jobs and their C anchors
/// (the harness's too).
pub const FT: &[&str] = pertinax_wire::mpirun::FT;

/// An Open MPI installation.
#[derive(Clone, Debug)]
pub struct Ompi {
    prefix: PathBuf,
    anchors: PathBuf,
    build: PathBuf,
}

impl Ompi {
    /// The installation under `prefix` if it has `bin/mpicc` and
    /// `bin/mpirun` and the anchors are found; `None` otherwise. The prefix
    /// is `prefix` if given, else `$PERTINAX_OMPI_PREFIX`, else the
    /// installation whose `mpirun` and `mpicc` come first on `PATH` when it
    /// is Open MPI with ULFM ([`ompi_on_path`]), else `/tmp/ompi`.
    pub fn find(prefix: Option<&Path>, anchors: Option<PathBuf>, build: &Path) -> Option<Ompi> {
        let prefix = prefix.map(Path::to_path_buf).unwrap_or_else(|| {
            std::env::var_os(pertinax_wire::env::bench::OMPI_PREFIX)
                .map(PathBuf::from)
                .or_else(|| ompi_on_path(&std::env::var_os("PATH").unwrap_or_default()))
                .unwrap_or_else(|| PathBuf::from(DEFAULT_OMPI_PREFIX))
        });
        let ok = ["mpicc", "mpirun"]
            .iter()
            .all(|b| prefix.join("bin").join(b).is_file());
        match (ok, anchors) {
            (true, Some(anchors)) => Some(Ompi {
                prefix,
                anchors,
                build: build.to_path_buf(),
            }),
            _ => None,
        }
    }

    /// The installation's prefix.
    pub fn prefix(&self) -> &Path {
        &self.prefix
    }

    /// Compiles `<anchors>/<name>.c` (or `source` if given) with mpicc,
    /// unless the binary is up to date; returns the binary.
    ///
    /// # Errors
    /// When mpicc fails.
    pub fn compile(&self, name: &str, source: Option<&Path>) -> Result<PathBuf> {
        let src = source
            .map(Path::to_path_buf)
            .unwrap_or_else(|| self.anchors.join(format!("{name}.c")));
        let mpicc = self.prefix.join("bin").join("mpicc");
        let flags = ["-O2".to_string(), format!("-I{}", self.anchors.display())];
        compile(
            &mpicc,
            &flags,
            &src,
            &self.anchors.join("common.h"),
            &self.build.join(name),
        )
    }

    /// `mpirun --oversubscribe --allow-run-as-root [extra] -n N prog`.
    pub fn mpirun(&self, ranks: usize, extra: &[&str], prog: &Path) -> Cmd {
        Cmd::new(self.prefix.join("bin").join("mpirun"))
            .args(["--oversubscribe", "--allow-run-as-root"])
            .args(extra)
            .arg("-n")
            .arg(ranks.to_string())
            .arg(prog)
    }
}

/// Compiles the sentinel `c2c.c` with `gcc -O2 -pthread`; `None` (with a
/// warning) if the anchors or gcc are missing.
pub fn sentinel(anchors: Option<&Path>, build: &Path) -> Sentinel {
    let Some(dir) = anchors else {
        eprintln!("warning: no anchor directory, so no host sentinel (pass --anchors DIR)");
        return Sentinel::new(None);
    };
    let src = dir.join("c2c.c");
    match compile(
        Path::new("gcc"),
        &["-pthread".into(), "-O2".into()],
        &src,
        &src,
        &build.join("c2c"),
    ) {
        Ok(exe) => Sentinel::new(Some(exe)),
        Err(e) => {
            eprintln!("warning: no host sentinel: {e:#}");
            Sentinel::new(None)
        }
    }
}

/// `cc flags -o out src` unless `out` is newer than `src` and `header`.
fn compile(cc: &Path, flags: &[String], src: &Path, header: &Path, out: &Path) -> Result<PathBuf> {
    let mtime = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let newest_input = [mtime(src), mtime(header)].into_iter().flatten().max();
    if let (Some(o), Some(i)) = (mtime(out), newest_input) {
        if o >= i {
            return Ok(out.to_path_buf());
        }
    }
    if !src.is_file() {
        bail!("{} not found", src.display());
    }
    let tmp = out.with_extension("tmp");
    let cmd = Cmd::new(cc).args(flags).arg("-o").arg(&tmp).arg(src);
    let res = run(&cmd, Duration::from_secs(120))?;
    if !res.ok() {
        bail!(
            "`{}` failed ({}): {}",
            cmd.display(),
            res.status(),
            res.stderr.trim()
        );
    }
    std::fs::rename(&tmp, out)
        .with_context(|| format!("cannot move {} to {}", tmp.display(), out.display()))?;
    Ok(out.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mpi_exe_names_the_build_command_when_missing() {
        let missing = Path::new("/nonexistent/pertinax-bench");
        let err = mpi_exe(Some(missing)).unwrap_err().to_string();
        assert!(err.contains("/nonexistent/pertinax-bench"), "{err}");
        assert!(err.contains("--features pertinax/mpi"), "{err}");
        let here = this_exe().unwrap();
        assert_eq!(mpi_exe(Some(&here)).unwrap(), here.canonicalize().unwrap());
    }

    /// A fake MPI installation in `dir`: `mpirun`, `mpicc` and an
    /// `ompi_info` that prints `info`.
    fn fake_mpi(dir: &Path, info: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let bin = dir.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        for (name, body) in [
            ("mpirun", String::new()),
            ("mpicc", String::new()),
            ("ompi_info", format!("printf '{info}'\n")),
        ] {
            let p = bin.join(name);
            std::fs::write(&p, format!("#!/bin/sh\n{body}")).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        bin
    }

    #[test]
    fn open_mpi_with_ulfm_is_found_on_the_path() {
        let dir = std::env::temp_dir().join(format!("pertinax-bench-path-{}", std::process::id()));
        let empty = dir.join("empty");
        std::fs::create_dir_all(&empty).unwrap();
        let ulfm = fake_mpi(
            &dir.join("ulfm"),
            "options:ft_support:yes\\noptions:ft_mpi_support:yes\\n",
        );
        let plain = fake_mpi(&dir.join("plain"), "options:ft_mpi_support:no\\n");
        let path = |dirs: &[&Path]| std::env::join_paths(dirs).unwrap();
        let found = ompi_on_path(&path(&[&empty, &ulfm])).unwrap();
        assert_eq!(found, dir.join("ulfm").canonicalize().unwrap());
        // The first MPI on the PATH decides: one without ULFM is not used.
        assert_eq!(ompi_on_path(&path(&[&plain, &ulfm])), None);
        assert_eq!(ompi_on_path(&path(&[&empty])), None);
        assert_eq!(ompi_on_path(std::ffi::OsStr::new("")), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
