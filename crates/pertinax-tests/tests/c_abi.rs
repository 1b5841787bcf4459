//! Unchanged C MPI programs on pertinax: the programs of
//! `crates/pertinax-abi/tests/c/`, built by MPICH's own `mpicc` (so
//! against MPICH's `mpi.h` and `libmpi.so.12`), run under `pertinax run`
//! with `pertinax-abi`'s `libmpi.so.12` first on the loader's path.
//!
//! MPICH's compiler wrapper comes from `pip install mpich`:
//! `PERTINAX_MPICH_CC`, else `/tmp/mpich/bin/mpicc` (the venv `.ci/run`
//! makes); the Python tests use the `python3` beside it, with `pip install
//! mpi4py` in the same venv. Native backend only: these programs bring
//! their own MPI.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use pertinax_harness::{run, Job, Spec, MPI_ABI};

/// MPICH's `mpicc`.
fn mpicc() -> PathBuf {
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
fn abi_dir() -> &'static Path {
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
fn program(name: &str) -> PathBuf {
    static BUILT: std::sync::Mutex<Vec<(String, PathBuf)>> = std::sync::Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, p)) = built.iter().find(|(n, _)| n == name) {
        return p.clone();
    }
    let p = build(name);
    built.push((name.to_string(), p.clone()));
    p
}

fn build(name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../pertinax-abi/tests/c")
        .join(format!("{name}.c"));
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("c-{name}"));
    let res = Command::new(mpicc())
        .arg("-O1")
        .arg("-o")
        .arg(&out)
        .arg(&src)
        .output()
        .expect("run mpicc");
    assert!(
        res.status.success(),
        "mpicc {}:\n{}",
        src.display(),
        String::from_utf8_lossy(&res.stderr)
    );
    out
}

fn job(n: usize, name: &str, kills: &[&str]) -> Job {
    bounded(Spec::new(n, &[]).program(program(name)), kills)
}

fn bounded<'a>(spec: Spec<'a>, kills: &[&str]) -> Job {
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

/// Every program of `tests/c/` but the ULFM one (which is run with kills
/// below), fault-free at 2, 3 and 4 ranks: each checks its area and
/// prints `OK` per rank when every check held. `basics.c`: point-to-point
/// in every size class, requests, probes, truncation as a visible error,
/// bad arguments as errors, an unimplemented call's
/// `MPI_ERR_UNSUPPORTED_OPERATION`, collectives with `MPI_IN_PLACE`,
/// split and dup, groups, attributes; `datatypes.c`: derived datatypes
/// (constructors, bounds, Pack/Unpack) through point-to-point, the
/// collectives and the reductions; the others say what they check at
/// their top.
#[test]
fn unchanged_c_programs_run_on_pertinax() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../pertinax-abi/tests/c");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("tests/c")
        .filter_map(|e| {
            let p = e.ok()?.path();
            if p.extension()? != "c" {
                return None;
            }
            Some(p.file_stem()?.to_string_lossy().into_owned())
        })
        .filter(|n| n != "ulfm")
        .collect();
    names.sort();
    assert!(names.contains(&"basics".to_string()), "{names:?}");
    for name in &names {
        for n in [2, 3, 4] {
            let j = job(n, name, &[]);
            j.expect(0, n, &format!("{name} on {n} ranks"));
        }
    }
}

/// The ULFM loop of `ulfm.c` (revoke, shrink, agree, redo) with one and
/// with two ranks killed inside their `MPI_Allreduce` (fault points by
/// call name): every survivor ends with the survivors' count as the sum.
#[test]
fn an_unchanged_c_ulfm_program_recovers_from_kills() {
    for (n, kills) in [
        (4, &["2@mpi.Allreduce#3"][..]),
        (5, &["1@mpi.Allreduce#2", "3@mpi.Allreduce#5"][..]),
        (4, &["0@mpi.Allreduce#1"][..]),
    ] {
        let j = job(n, "ulfm", kills);
        let survivors = n - kills.len();
        let what = format!("ulfm on {n} ranks, kills {kills:?}");
        j.expect(0, survivors, &what);
        for l in j.ok_lines() {
            assert!(
                l.contains(&format!("size={survivors} sum={survivors} ")),
                "{what}: {l}\n{}",
                j.stderr
            );
        }
        assert_eq!(j.stderr.matches("(injected").count(), kills.len(), "{what}");
    }
}

/// A seeded campaign of the ULFM loop: 3 to 6 ranks, one or two of them
/// killed inside a random `MPI_Allreduce` (the round, or a redo) by the
/// launcher, and in one job of three one more killing itself with
/// `raise(SIGKILL)`; several at once or in turn, never all but one. Every
/// job: the exit code (0, or 137 for the unplanned death), one `OK` per
/// survivor, each with the survivors' count as size and sum.
/// `PERTINAX_ABI_CAMPAIGN_RUNS` jobs (40 by default).
#[test]
fn the_c_ulfm_loop_survives_a_seeded_campaign() {
    let runs: u64 = std::env::var("PERTINAX_ABI_CAMPAIGN_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40);
    let mut killed = 0;
    for seed in 0..runs {
        let mut r = pertinax_wire::rng::SplitMix64::new(seed);
        let n = 3 + r.below(4) as usize;
        let mut victims: Vec<usize> = (0..n).collect();
        let mut kills = Vec::new();
        for _ in 0..1 + r.below(2) {
            let v = victims.remove(r.below(victims.len() as u64) as usize);
            kills.push(format!("{v}@mpi.Allreduce#{}", 1 + r.below(8)));
        }
        // One job in three: one more rank kills itself (raise(SIGKILL)
        // before its N-th round), a death the launcher did not plan.
        let own = (r.below(3) == 0).then(|| {
            let v = victims.remove(r.below(victims.len() as u64) as usize);
            [v.to_string(), (1 + r.below(8)).to_string()]
        });
        let kills: Vec<&str> = kills.iter().map(String::as_str).collect();
        let args: Vec<&str> = own.iter().flatten().map(String::as_str).collect();
        let spec = Spec::new(n, &args).program(program("ulfm"));
        let j = bounded(spec, &kills);
        let dead = kills.len() + usize::from(own.is_some());
        let survivors = n - dead;
        let what = format!("seed {seed}: ulfm on {n} ranks, kills {kills:?}, own kill {own:?}");
        // An unplanned death is the job's failure: 128 + SIGKILL.
        j.expect(if own.is_some() { 137 } else { 0 }, survivors, &what);
        for l in j.ok_lines() {
            assert!(
                l.contains(&format!("size={survivors} sum={survivors} ")),
                "{what}: {l}\n{}",
                j.stderr
            );
        }
        killed += dead;
    }
    eprintln!("c ulfm campaign: {runs} jobs, {killed} ranks killed, 0 hangs, 0 wrong answers");
}

/// Python script `name` (`tests/py/<name>.py` of pertinax-abi) under the
/// venv's `python3`.
fn python(n: usize, name: &str) -> Job {
    let py = mpicc().with_file_name("python3");
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../pertinax-abi/tests/py")
        .join(format!("{name}.py"));
    let script = script.to_string_lossy().into_owned();
    bounded(Spec::new(n, &[&script]).program(py), &[])
}

/// The mpi4py wheel, unchanged, on pertinax: objects through every
/// collective mpi4py builds on, buffers (a 1 MiB message among them),
/// split, and an error class as `MPI.Exception`, at 1 to 4 ranks.
#[test]
fn the_mpi4py_wheel_runs_on_pertinax() {
    for n in [1, 2, 3, 4] {
        let j = python(n, "basics");
        j.expect(0, n, &format!("mpi4py basics on {n} ranks"));
    }
}

/// The functions and data `nm -D` lists as defined in a shared library,
/// whose names start with `MPI_`, `PMPI_`, `MPIX_` or `PMPIX_`.
fn exported(lib: &Path) -> std::collections::BTreeSet<String> {
    let out = Command::new("nm")
        .arg("-D")
        .arg("--defined-only")
        .arg(lib)
        .output()
        .expect("run nm (binutils)");
    assert!(out.status.success(), "nm {}", lib.display());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .filter(|s| {
            ["MPI_", "PMPI_", "MPIX_", "PMPIX_"]
                .iter()
                .any(|p| s.starts_with(p))
        })
        .map(str::to_string)
        .collect()
}

/// Every `MPI_`, `PMPI_` and `MPIX_` symbol MPICH's `libmpi.so.12`
/// exports is exported by ours, so a program linked against MPICH never
/// fails to load on pertinax.
#[test]
fn every_symbol_of_mpichs_libmpi_is_exported() {
    let theirs = mpicc()
        .parent()
        .and_then(Path::parent)
        .map(|v| v.join("lib/libmpi.so.12"))
        .expect("MPICH's lib directory");
    let ours = abi_dir().join("libmpi.so.12");
    let (want, have) = (exported(&theirs), exported(&ours));
    assert!(
        want.len() > 1400,
        "{}: {} symbols",
        theirs.display(),
        want.len()
    );
    let missing: Vec<&String> = want.difference(&have).collect();
    assert!(missing.is_empty(), "missing from ours: {missing:?}");
}
