//! What the tests of `c_abi` share: MPICH's `mpicc` and the programs it
//! builds ([`program`]), pertinax's `libmpi.so.12` ([`abi_dir`]), the jobs
//! that run them with a bound ([`job`], [`bounded`]), and `pertinax
//! mpicc`/`mpicxx` against pertinax's own headers ([`ours`], [`inline`]).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use pertinax_harness::{launcher, run, Job, Spec, MPI_ABI};

/// MPICH's `mpicc`.
pub(super) fn mpicc() -> PathBuf {
    let cc = std::env::var_os("PERTINAX_MPICH_CC")
        .map_or_else(|| PathBuf::from("/tmp/mpich/bin/mpicc"), PathBuf::from);
    assert!(
        cc.exists(),
        "{} is missing: these tests build C programs with MPICH's mpicc \
         (python3 -m venv /tmp/mpich && /tmp/mpich/bin/pip install mpich, \
         or set PERTINAX_MPICH_CC)",
        cc.display()
    );
    cc
}

/// A directory holding `libmpi.so.12`, the library's soname, linked to
/// the `libmpi.so` Cargo built.
pub(super) fn abi_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let lib = MPI_ABI.path();
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mpi-abi");
        std::fs::create_dir_all(&dir).expect("mpi-abi dir");
        let link = dir.join("libmpi.so.12");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&lib, &link).expect("libmpi.so.12 link");
        dir
    })
}

/// C program `name` (`tests/c/<name>.c` of pertinax-abi), built once per
/// test process (tests run in parallel threads: a second build would
/// rewrite the binary under a running job).
pub(super) fn program(name: &str) -> PathBuf {
    static BUILT: std::sync::Mutex<Vec<(String, PathBuf)>> = std::sync::Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, p)) = built.iter().find(|(n, _)| n == name) {
        return p.clone();
    }
    let p = build(name);
    built.push((name.to_string(), p.clone()));
    p
}

pub(super) fn build(name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../pertinax-abi/tests/c")
        .join(format!("{name}.c"));
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("c-{name}"));
    compile(Command::new(mpicc()), &src, &out);
    out
}

/// `cc` (a compiler wrapper) `-O1 -pthread -o out src`, which must
/// succeed (`threads.c` uses POSIX threads).
pub(super) fn compile(mut cc: Command, src: &Path, out: &Path) {
    let res = cc
        .arg("-O1")
        .arg("-pthread")
        .arg("-o")
        .arg(out)
        .arg(src)
        .output()
        .expect("run mpicc");
    assert!(
        res.status.success(),
        "{cc:?} {}:\n{}",
        src.display(),
        String::from_utf8_lossy(&res.stderr)
    );
}

pub(super) fn job(n: usize, name: &str, kills: &[&str]) -> Job {
    bounded(Spec::new(n, &[]).program(program(name)), kills)
}

pub(super) fn bounded<'a>(spec: Spec<'a>, kills: &[&str]) -> Job {
    let lib = abi_dir().join("libmpi.so.12");
    let mut spec = spec
        .env("LD_LIBRARY_PATH", &abi_dir().to_string_lossy())
        // mpi4py's `MPI.mpich` loads this library by path.
        .env("MPI4PY_LIBMPI", &lib.to_string_lossy())
        .bound(60);
    for k in kills {
        spec = spec.launcher_arg("--kill").launcher_arg(k);
    }
    run(spec)
}

/// The headers of pertinax-abi (`include/`).
pub(super) fn include_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../pertinax-abi/include")
}

/// `pertinax mpicc` (or `mpicxx`), with the library Cargo built.
pub(super) fn pertinax_cc(sub: &str) -> Command {
    let mut c = Command::new(launcher());
    c.arg(sub).env("PERTINAX_ABI_DIR", abi_dir());
    c
}

/// C program `name` of `tests/c/` built by `pertinax mpicc` against
/// pertinax's own `mpi.h`, once per test process.
pub(super) fn ours(name: &str) -> PathBuf {
    static BUILT: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("c-ours-{name}"));
    let mut built = BUILT.lock().unwrap_or_else(|p| p.into_inner());
    if !built.iter().any(|n| n == name) {
        let src = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../pertinax-abi/tests/c")
            .join(format!("{name}.c"));
        compile(pertinax_cc("mpicc"), &src, &out);
        built.push(name.to_string());
    }
    out
}

/// A program written here (`src`, C or C++ by `ext`) built by `cc`.
pub(super) fn inline(name: &str, ext: &str, src: &str, cc: Command) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let file = dir.join(format!("{name}.{ext}"));
    std::fs::write(&file, src).expect("write the source");
    let out = dir.join(format!("inline-{name}"));
    compile(cc, &file, &out);
    out
}

/// The MPICH 5 `mpi_proto.h` and `include/` beside MPICH's `mpicc`.
pub(super) fn mpich_include() -> PathBuf {
    mpicc()
        .parent()
        .and_then(Path::parent)
        .map(|v| v.join("include"))
        .expect("MPICH's include directory")
}
