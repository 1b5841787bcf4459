//! The programs' command lines, run as singletons (one rank, no launcher).
//! Their parallel runs, with and without failures, are tested through the
//! launcher in `crates/pertinax-tests/tests/resilient_apps.rs`; this file
//! also makes `cargo test --workspace` build the programs for those tests.

use std::path::Path;
use std::process::{Command, Output};

fn run(program: &str, args: &[&str], dir: &Path) -> Output {
    Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("start the program")
}

/// The `KEY=VALUE` fields of the summary line that starts with `tag`.
fn summary(out: &Output, tag: &str) -> Vec<(String, String)> {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.starts_with(tag))
        .unwrap_or_else(|| panic!("no {tag} line in:\n{stdout}"));
    line.split_whitespace()
        .filter_map(|f| f.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn field<'a>(fields: &'a [(String, String)], key: &str) -> &'a str {
    fields
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no {key} in {fields:?}"))
}

#[test]
fn bad_command_lines_exit_2() {
    let dir = tempfile::tempdir().expect("temp dir");
    let ep = env!("CARGO_BIN_EXE_pertinax-ep");
    let screen = env!("CARGO_BIN_EXE_pertinax-screen");
    for (program, args) in [
        (ep, &["X"][..]),
        (ep, &[][..]),
        (screen, &["--k", "0"][..]),
        (screen, &["--count", "many"][..]),
        (screen, &["--recompute", "maybe"][..]),
    ] {
        let out = run(program, args, dir.path());
        assert_eq!(out.status.code(), Some(2), "{program} {args:?}: {out:?}");
    }
}

#[test]
fn a_singleton_screening_writes_its_database_and_scores() {
    let dir = tempfile::tempdir().expect("temp dir");
    let screen = env!("CARGO_BIN_EXE_pertinax-screen");
    let args = ["--count", "500", "--work", "4", "--k", "5", "--db", "m.db"];
    let out = run(screen, &args, dir.path());
    assert!(out.status.success(), "{out:?}");
    let f = summary(&out, "SCREEN ");
    for (k, v) in [
        ("n", "1"),
        ("count", "500"),
        ("lost", "[]"),
        ("screened", "500"),
        ("exact_survivors", "true"),
        ("file_ok", "true"),
        ("recomputed", "true"),
    ] {
        assert_eq!(field(&f, k), v, "{k}: {f:?}");
    }
    assert_eq!(field(&f, "best").matches(':').count(), 5, "{f:?}");
    let db = std::fs::metadata(dir.path().join("m.db")).expect("the database");
    assert_eq!(db.len(), 500 * 64);
    let scores = std::fs::metadata(dir.path().join("pertinax-screen.scores")).expect("the scores");
    assert_eq!(scores.len(), 500 * 8);

    // A second run uses the database as it is, whatever --count says.
    let again = run(
        screen,
        &["--count", "7", "--db", "m.db", "--k", "5"],
        dir.path(),
    );
    assert!(again.status.success(), "{again:?}");
    assert_eq!(field(&summary(&again, "SCREEN "), "count"), "500");

    // Not a database: an error, exit 1.
    std::fs::write(dir.path().join("bad.db"), b"junk").expect("write");
    let bad = run(screen, &["--db", "bad.db"], dir.path());
    assert_eq!(bad.status.code(), Some(1), "{bad:?}");
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("not a molecule database"),
        "{bad:?}"
    );
}
