//! Records the commit this binary is built from, which every JSON row
//! carries (`PERTINAX_BENCH_COMMIT`, read by `src/rows.rs`): `HEAD` of the
//! source tree (12 hex digits), `-dirty` when its tracked files differed
//! from `HEAD` when this script last ran, `unknown` without git.
//!
//! The script reruns when `HEAD` moves (the git directory's `HEAD`, the
//! branch it names, `packed-refs`) and when this package's files change;
//! not on every edit elsewhere in the tree, so `-dirty` is as of the last
//! rerun.

use std::path::PathBuf;
use std::process::{Command, Output};

fn git(dir: &str, args: &[&str]) -> Option<Output> {
    Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()
}

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let commit =
        match git(&dir, &["rev-parse", "--short=12", "HEAD"]).filter(|o| o.status.success()) {
            Some(o) => {
                let head = String::from_utf8_lossy(&o.stdout).trim().to_string();
                // `diff --quiet` exits 1 when something differs.
                let dirty = git(&dir, &["diff", "--quiet", "HEAD", "--"])
                    .is_some_and(|o| o.status.code() == Some(1));
                if dirty {
                    format!("{head}-dirty")
                } else {
                    head
                }
            }
            None => "unknown".into(),
        };
    println!("cargo:rustc-env=PERTINAX_BENCH_COMMIT={commit}");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=c");
    println!("cargo:rerun-if-changed=Cargo.toml");
    let git_dir = git(&dir, &["rev-parse", "--absolute-git-dir"])
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    if let Some(g) = git_dir {
        println!("cargo:rerun-if-changed={}", g.join("HEAD").display());
        println!("cargo:rerun-if-changed={}", g.join("packed-refs").display());
        if let Ok(head) = std::fs::read_to_string(g.join("HEAD")) {
            if let Some(r) = head.trim().strip_prefix("ref: ") {
                println!("cargo:rerun-if-changed={}", g.join(r).display());
            }
        }
    }
}
