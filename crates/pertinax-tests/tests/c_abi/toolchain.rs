//! The library, its headers and the compiler wrappers: every symbol of
//! MPICH's `libmpi.so.12` exported, `include/mpi.h` generated and equal to
//! MPICH's in value, `pertinax mpicc`/`mpicxx`, and how `pertinax run`
//! loads the library and sets the initial error handler.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use pertinax_harness::{launcher, Spec};

use super::support::{abi_dir, bounded, include_dir, inline, mpicc, mpich_include, pertinax_cc};

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
    // And every function pertinax's headers declare.
    let mut declared = 0;
    for h in ["mpi.h", "mpi-ext.h"] {
        let text = std::fs::read_to_string(include_dir().join(h)).expect("header");
        for line in text
            .lines()
            .filter(|l| l.ends_with(");") && !l.starts_with("typedef"))
        {
            let Some(name) = line
                .split('(')
                .next()
                .and_then(|head| head.rsplit([' ', '*']).next())
            else {
                continue;
            };
            assert!(
                have.contains(name) || name == "MPIR_Dup_fn",
                "{h} declares {name}, not exported"
            );
            declared += 1;
        }
    }
    assert!(declared > 1400, "{declared} functions declared");
}

/// `include/mpi.h`, `include/mpi-ext.h` and the tables of
/// `docs/c-functions.md` are what `gen/header.py` writes from the sources
/// now (re-run it after changing a constant or a function).
#[test]
fn the_generated_headers_and_tables_are_up_to_date() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../pertinax-abi/gen/header.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg("--check")
        .arg(mpich_include().join("mpi_proto.h"))
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every constant pertinax's `mpi.h` and `mpi-ext.h` define has the value
/// MPICH's `mpi.h` gives it (the ABI), and `MPI_Status` the same layout: a
/// program printing them, built against each header.
#[test]
fn the_headers_values_are_mpichs() {
    let text = std::fs::read_to_string(include_dir().join("mpi.h")).expect("mpi.h")
        + &std::fs::read_to_string(include_dir().join("mpi-ext.h")).expect("mpi-ext.h");
    let mut body = String::new();
    let mut n = 0;
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("#define ") else {
            continue;
        };
        let Some((name, value)) = rest.split_once(' ') else {
            continue;
        };
        if !name.starts_with("MPI") || name == "MPIX_ULFM" || value.contains("_function") {
            continue;
        }
        if value.starts_with('"') {
            body += &format!("    printf(\"{name} %s\\n\", {name});\n");
        } else {
            body += &format!("    printf(\"{name} %lld\\n\", (long long)({name}));\n");
        }
        n += 1;
    }
    assert!(n > 350, "{n} constants");
    for f in [
        "count_lo",
        "count_hi_and_cancelled",
        "MPI_SOURCE",
        "MPI_TAG",
        "MPI_ERROR",
    ] {
        body += &format!("    printf(\"{f} %zu\\n\", offsetof(MPI_Status, {f}));\n");
    }
    body += "    printf(\"MPI_Status %zu\\n\", sizeof(MPI_Status));\n";
    let src = format!(
        "#include <mpi.h>\n#include <stddef.h>\n#include <stdio.h>\nint main(void) {{\n{body}    return 0;\n}}\n"
    );
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let file = dir.join("values.c");
    std::fs::write(&file, src).expect("values.c");
    let print = |inc: &Path, tag: &str| {
        let exe = dir.join(format!("values-{tag}"));
        let res = Command::new("cc")
            .arg("-w")
            .arg("-I")
            .arg(inc)
            .arg("-o")
            .arg(&exe)
            .arg(&file)
            .output()
            .expect("run cc");
        assert!(
            res.status.success(),
            "cc with {tag}'s mpi.h:\n{}",
            String::from_utf8_lossy(&res.stderr)
        );
        let out = Command::new(&exe).output().expect("run the values program");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let (ours, theirs) = (
        print(&include_dir(), "pertinax"),
        print(&mpich_include(), "mpich"),
    );
    let differ: Vec<(&str, &str)> = ours
        .lines()
        .zip(theirs.lines())
        .filter(|(a, b)| a != b)
        .collect();
    assert!(differ.is_empty(), "(ours, MPICH's): {differ:?}");
    assert_eq!(ours.lines().count(), theirs.lines().count());
}

/// `pertinax mpicc -show` prints the command with pertinax's headers and
/// library; `--version` names pertinax's version and the compiler's.
#[test]
fn pertinax_mpicc_shows_its_command_and_versions() {
    let out = pertinax_cc("mpicc")
        .args(["-show", "-O2", "-o", "prog", "prog.c"])
        .output()
        .expect("pertinax mpicc -show");
    let line = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{line}");
    let inc = include_dir().canonicalize().expect("include dir");
    for want in [
        format!("-I{}", inc.display()),
        "-O2 -o prog prog.c".to_string(),
        format!("-L{}", abi_dir().display()),
        format!("-Wl,-rpath,{}", abi_dir().display()),
        // abi_dir() holds only the soname.
        "-l:libmpi.so.12".to_string(),
    ] {
        assert!(line.contains(&want), "{want} in {line}");
    }
    let out = pertinax_cc("mpicc")
        .arg("-c")
        .arg("-show")
        .arg("x.c")
        .output()
        .expect("-c -show");
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("-lmpi"),
        "compile only: no link options"
    );
    for sub in ["mpicc", "mpicxx"] {
        let out = pertinax_cc(sub)
            .arg("--version")
            .output()
            .expect("--version");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{sub} --version: {text}");
        assert!(
            text.starts_with(&format!("pertinax {sub} {}\n", env!("CARGO_PKG_VERSION"))),
            "{text}"
        );
        // The compiler's own `--version` follows (gcc, clang: "Copyright").
        assert!(text.lines().count() > 3, "{text}");
    }
}

/// A C++ program built by `pertinax mpicxx`: the headers compile as C++
/// (`extern "C"`), `mpi-ext.h` says ULFM is there, and the calls work.
#[test]
fn a_cxx_program_built_by_pertinax_mpicxx_runs() {
    let src = r#"#include <mpi.h>
#include <mpi-ext.h>
#include <cstdio>
#include <vector>
#ifndef MPIX_ULFM
#error "mpi-ext.h: no MPIX_ULFM"
#endif
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<int> all(size);
    MPI_Allgather(&rank, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
    int flag = 1;
    int rc = MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
    long sum = 0;
    for (int v : all) sum += v;
    if (rc == MPI_SUCCESS && flag == 1 && sum == (long)size * (size - 1) / 2)
        std::printf("OK cxx rank=%d\n", rank);
    MPI_Finalize();
    return 0;
}
"#;
    let prog = inline("cxx", "cpp", src, pertinax_cc("mpicxx"));
    let j = bounded(Spec::new(3, &[]).program(prog), &[]);
    j.expect(0, 3, "a C++ program on 3 ranks");
}

/// A C program (built by MPICH's `mpicc`) that sends to a rank that does
/// not exist and says what the call returned, and which library it runs
/// on.
fn erroneous() -> PathBuf {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| {
        let src = r#"#include <mpi.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, x = 1, len, class;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_library_version(lib, &len);
    int rc = MPI_Send(&x, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD);
    MPI_Error_class(rc, &class);
    printf("OK errors rank=%d class=%d lib=%s\n", rank, class, strtok(lib, " "));
    MPI_Finalize();
    return 0;
}
"#;
        inline("erroneous", "c", src, Command::new(mpicc()))
    })
    .clone()
}

/// `pertinax run -initial-errhandler mpi_errors_return` (mpiexec's key):
/// an erroneous call returns its error class instead of ending the job,
/// as it does by default (`MPI_ERRORS_ARE_FATAL`).
#[test]
fn initial_errhandler_makes_errors_return() {
    let j = bounded(Spec::new(2, &[]).program(erroneous()), &[]);
    assert_ne!(j.code, Some(0), "fatal by default:\n{}", j.stderr);
    assert_eq!(j.oks(), 0, "{}", j.stderr);
    assert!(j.stderr.contains("MPI_Send"), "{}", j.stderr);
    let spec = Spec::new(2, &[])
        .program(erroneous())
        .launcher_arg("-initial-errhandler")
        .launcher_arg("mpi_errors_return");
    let j = bounded(spec, &[]);
    j.expect(0, 2, "-initial-errhandler mpi_errors_return");
    for l in j.ok_lines() {
        assert!(l.contains("class=6 lib=pertinax"), "MPI_ERR_RANK: {l}");
    }
}

/// A program built by MPICH's `mpicc` runs on pertinax's library under
/// `pertinax run` with no `LD_LIBRARY_PATH` set by anyone: the launcher
/// puts the library's directory first (its `RUNPATH` names MPICH's).
#[test]
fn pertinax_run_needs_no_library_path() {
    let _ = abi_dir(); // Cargo's libmpi.so beside the launcher
    let out = Command::new(launcher())
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("PERTINAX_ABI_DIR")
        .args(["run", "-n", "2", "--timeout", "60", "-host", "localhost:2"])
        .args(["-initial-errhandler", "mpi_errors_return", "-wdir", "/"])
        .arg(erroneous())
        .output()
        .expect("run the launcher");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.matches("OK errors").count(), 2, "{stdout}");
    assert_eq!(stdout.matches("lib=pertinax").count(), 2, "{stdout}");
}
