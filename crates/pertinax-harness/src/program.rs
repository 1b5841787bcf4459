//! The binaries a test runs, built on demand.
//!
//! Cargo builds, for an integration test, only its own package's binaries
//! (`CARGO_BIN_EXE_<name>`). The launcher (`pertinax-cli`), the fake rank
//! (this crate), the applications (`pertinax-apps`) and the examples of
//! `pertinax-propagate` belong to other packages, so a test declares them as
//! [`Program`]s and [`Program::path`] builds each once per test process:
//!
//! ```text
//! $CARGO build --manifest-path <workspace>/Cargo.toml --target-dir <dir>
//!              --profile <profile> [--target <triple>] -p <package> --bin|--example <name>
//! ```
//!
//! with the target directory, profile and target triple read from the test
//! executable's own path (`<dir>/[<triple>/]<profile>/deps/<test>-<hash>`),
//! so the binary is built exactly where and how the test itself was
//! (`CARGO_TARGET_DIR`, `--release`, `--profile`, `--target` are all
//! honoured), and `$CARGO` is the cargo that runs the test. Cargo's own lock
//! on the target directory serialises concurrent builds (other test
//! processes, other `cargo` commands); a process-wide once-cell makes the
//! test threads of one process build each program once. When the binary is
//! fresh, the build is a no-op of a few hundred milliseconds. The build
//! happens before a job's wall-clock bound starts.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

/// What kind of Cargo target a program is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Kind {
    Bin,
    Example,
    /// A library's dynamic form (`name` is its file name).
    Lib,
}

/// A binary of some workspace package that a test runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Program {
    package: &'static str,
    kind: Kind,
    name: &'static str,
}

/// The launcher, `pertinax` of `pertinax-cli`.
pub const LAUNCHER: Program = Program::bin("pertinax-cli", "pertinax");
/// The protocol-speaking test rank of this crate (see its documentation in
/// `src/bin/pertinax-fake-rank.rs`).
pub const FAKE_RANK: Program = Program::bin("pertinax-harness", "pertinax-fake-rank");
/// `libmpi.so` of `pertinax-abi` (the MPICH ABI over pertinax).
pub const MPI_ABI: Program = Program {
    package: "pertinax-abi",
    kind: Kind::Lib,
    name: "libmpi.so",
};

impl Program {
    /// Binary `name` of `package`.
    pub const fn bin(package: &'static str, name: &'static str) -> Program {
        Program {
            package,
            kind: Kind::Bin,
            name,
        }
    }

    /// Example `name` of `package`.
    pub const fn example(package: &'static str, name: &'static str) -> Program {
        Program {
            package,
            kind: Kind::Example,
            name,
        }
    }

    /// The path of the binary, built (once per process) if needed. Panics
    /// with Cargo's output if the build fails.
    pub fn path(&self) -> PathBuf {
        type Cell = Arc<OnceLock<PathBuf>>;
        static BUILT: OnceLock<Mutex<HashMap<Program, Cell>>> = OnceLock::new();
        let cell: Cell = {
            let mut map = BUILT
                .get_or_init(Default::default)
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            map.entry(*self).or_default().clone()
        };
        cell.get_or_init(|| self.build()).clone()
    }

    fn build(&self) -> PathBuf {
        let out = OutputDir::of_this_test();
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml");
        let mut cmd = Command::new(cargo);
        cmd.arg("build")
            .arg("--quiet")
            .arg("--manifest-path")
            .arg(&manifest)
            .arg("--target-dir")
            .arg(&out.target_dir)
            .arg("--profile")
            .arg(&out.profile);
        if let Some(t) = &out.triple {
            cmd.arg("--target").arg(t);
        }
        cmd.arg("-p").arg(self.package);
        // Tests built for MPI build their programs with the feature too (it
        // changes nothing on the native backend: the backend is chosen at
        // start-up); the launcher and the fake rank do not use pertinax.
        if cfg!(feature = "mpi") && !matches!(self.package, "pertinax-cli" | "pertinax-harness") {
            cmd.arg("--features").arg("pertinax/mpi");
        }
        match self.kind {
            Kind::Bin => cmd.arg("--bin").arg(self.name),
            Kind::Example => cmd.arg("--example").arg(self.name),
            Kind::Lib => cmd.arg("--lib"),
        };
        let t = Instant::now();
        let res = cmd
            .output()
            .unwrap_or_else(|e| panic!("cannot run cargo to build {}: {e}", self.name));
        assert!(
            res.status.success(),
            "building {} of {} failed ({:?}):\n{}",
            self.name,
            self.package,
            cmd,
            String::from_utf8_lossy(&res.stderr)
        );
        let path = match self.kind {
            Kind::Bin | Kind::Lib => out.dir.join(self.name),
            Kind::Example => out.dir.join("examples").join(self.name),
        };
        assert!(
            path.exists(),
            "cargo built {} but {} is missing",
            self.name,
            path.display()
        );
        eprintln!(
            "pertinax-harness: {} built or found fresh in {:.1} s",
            path.display(),
            t.elapsed().as_secs_f64()
        );
        path
    }
}

/// Where Cargo put the running test executable.
#[derive(Debug)]
struct OutputDir {
    /// `<target>/[<triple>/]<profile dir>`.
    dir: PathBuf,
    target_dir: PathBuf,
    profile: String,
    triple: Option<String>,
}

impl OutputDir {
    /// Reads `<target>/[<triple>/]<profile>/deps/<exe>` (integration tests)
    /// or `<target>/[<triple>/]<profile>/<exe>` (binaries).
    fn of_this_test() -> OutputDir {
        OutputDir::of(&std::env::current_exe().expect("the test executable's path"))
    }

    fn of(exe: &Path) -> OutputDir {
        let parent = exe.parent().expect("the test executable's directory");
        let dir = if parent.file_name().is_some_and(|n| n == "deps") {
            parent.parent().expect("the profile directory")
        } else {
            parent
        }
        .to_path_buf();
        let profile_dir = dir
            .file_name()
            .and_then(|n| n.to_str())
            .expect("a profile directory name");
        // The profile `dev` builds into `debug`, `test` and `bench` into
        // their parent profiles' directories; any other name is the
        // profile's own.
        let profile = match profile_dir {
            "debug" => "dev",
            other => other,
        }
        .to_string();
        let up = dir.parent().expect("the target directory");
        // Cargo marks the target directory's root with CACHEDIR.TAG; one
        // level below it, the directory is a target triple's.
        let (target_dir, triple) = if up.join("CACHEDIR.TAG").exists()
            || !up.parent().is_some_and(|p| p.join("CACHEDIR.TAG").exists())
        {
            (up.to_path_buf(), None)
        } else {
            (
                up.parent().map(Path::to_path_buf).unwrap_or_default(),
                up.file_name().map(|t| t.to_string_lossy().into_owned()),
            )
        };
        OutputDir {
            dir,
            target_dir,
            profile,
            triple,
        }
    }
}

/// The launcher's path (see [`LAUNCHER`]).
pub fn launcher() -> PathBuf {
    LAUNCHER.path()
}

/// The fake rank's path as a string, for command lines and shell scripts
/// (see [`FAKE_RANK`]).
pub fn fake_rank() -> String {
    FAKE_RANK.path().to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_output_directory_follows_the_test_executable() {
        let t = tempfile::tempdir().expect("temp dir");
        let root = t.path().join("tgt");
        std::fs::create_dir_all(root.join("release/deps")).expect("dirs");
        std::fs::create_dir_all(root.join("x86_64-unknown-linux-gnu/debug/deps")).expect("dirs");
        std::fs::create_dir_all(root.join("fast")).expect("dirs");
        std::fs::write(root.join("CACHEDIR.TAG"), "").expect("tag");
        let o = OutputDir::of(&root.join("release/deps/p2p-0123"));
        assert_eq!((o.profile.as_str(), o.triple), ("release", None));
        assert_eq!((o.target_dir, o.dir), (root.clone(), root.join("release")));
        let o = OutputDir::of(&root.join("x86_64-unknown-linux-gnu/debug/deps/p2p-0123"));
        assert_eq!(o.profile, "dev");
        assert_eq!(o.triple.as_deref(), Some("x86_64-unknown-linux-gnu"));
        assert_eq!(o.target_dir, root);
        let o = OutputDir::of(&root.join("fast/p2p-ranks"));
        assert_eq!((o.profile.as_str(), o.triple), ("fast", None));
        assert_eq!(o.target_dir, root);
    }

    #[test]
    fn this_test_finds_its_own_target_directory() {
        // Its executable is in `TARGET[/TRIPLE]/PROFILE/deps`. Cargo's
        // CACHEDIR.TAG is not always at TARGET: a target directory first
        // made by `cargo package` or `cargo install --target-dir` (as in
        // CI) has none.
        let o = OutputDir::of_this_test();
        let exe = std::env::current_exe().expect("the test executable's path");
        assert!(exe.starts_with(o.dir.join("deps")), "{o:?}");
        let above = match &o.triple {
            Some(t) => o.target_dir.join(t),
            None => o.target_dir.clone(),
        };
        assert_eq!(o.dir.parent(), Some(above.as_path()), "{o:?}");
    }
}
