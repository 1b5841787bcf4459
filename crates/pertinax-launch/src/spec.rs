//! What to launch: the job specification and the resolution of its program.

use std::ffi::{OsStr, OsString};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::ProgramProblem;
use crate::fault::{Kill, RandomFaults};
use crate::resilient::Resilient;

/// Search path used when `PATH` is not set (as `execvp` does).
const DEFAULT_PATH: &str = "/bin:/usr/bin";

/// A job to launch: `ranks` copies of `program args...` on this machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobSpec {
    /// Number of rank processes (at least 1).
    pub ranks: usize,
    /// The program every rank runs; searched in `PATH` when it has no `/`.
    pub program: PathBuf,
    /// Arguments after the program name.
    pub args: Vec<OsString>,
    /// Prefix every line of output with `[R] ` (a rank) or `[slot S] ` (a
    /// spare or spawned process).
    pub tag_output: bool,
    /// Terminate the job when it runs longer than this.
    pub timeout: Option<Duration>,
    /// Bytes of each shared-memory ring; [`default_ring_bytes`] of the
    /// number of ranks when `None`.
    pub ring_bytes: Option<usize>,
    /// Extra environment variables for every process (the launcher's own
    /// `PERTINAX_*` variables take precedence).
    pub env: Vec<(OsString, OsString)>,
    /// Idle processes of the same program started with the ranks, handed
    /// out by spawn requests that ask for spares.
    pub spares: usize,
    /// Slots reserved for processes started by spawn requests; `None`: as
    /// many as there are ranks (less if that would exceed
    /// [`MAX_SLOTS`](crate::MAX_SLOTS)).
    pub max_spawn: Option<usize>,
    /// What happens to the processes a process spawned when it fails.
    pub on_parent_failure: ParentFailure,
    /// Heartbeat watching; off when `None`.
    pub heartbeat: Option<Heartbeat>,
    /// Injected faults (`--kill`). They strike the processes started as
    /// the job's ranks, never a process that later takes over a rank
    /// (`replace_failed`, a spare or a spawned process): a kill plan is
    /// the original rank's only, and with SIGSTOP it needs `heartbeat`.
    pub kills: Vec<Kill>,
    /// A seeded schedule of injected faults, added to `kills`.
    pub random_faults: Option<RandomFaults>,
    /// Resilient communicators: their settings go to every process, and
    /// ranks that die do not fail the job while one survives; off when
    /// `None` (the `PERTINAX_RESILIENT*` variables are then not set, not
    /// even inherited from the launcher's environment).
    pub resilient: Option<Resilient>,
    /// Let the other processes run when a rank exits with a non-zero code
    /// (`--keep-going`). Off (the default), such an exit ends the job as
    /// `mpirun` does ([`StopCause::RankExited`](crate::StopCause::RankExited)),
    /// except with `resilient` or a fault plan (`kills`, `random_faults`),
    /// where survivors are expected to outlive failures. Deaths by a signal
    /// never end the job: the survivors recover from them.
    pub keep_going: bool,
    /// Where the launcher's standard input goes; the other processes get
    /// `/dev/null`.
    pub stdin: StdinTo,
    /// Copy every process's output into files under this directory too
    /// (`--output-filename`).
    pub output_files: Option<OutputFiles>,
    /// Prefix every line of output with the wall-clock time (UTC).
    pub timestamp_output: bool,
    /// Working directory of every process (default: the launcher's).
    pub wdir: Option<PathBuf>,
    /// CPU binding of the ranks.
    pub bind: Binding,
    /// Print each rank's binding on stderr when it starts.
    pub report_bindings: bool,
    /// Further application contexts (`pertinax run -n 2 a : -n 2 b`,
    /// MIMD): the first `ranks - sum of their ranks` ranks run `program`,
    /// the next ones each context's program, in order. Spares, and spawn
    /// requests that name no program, run `program`.
    pub apps: Vec<App>,
}

/// One more application context of a MIMD job ([`JobSpec::apps`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct App {
    /// Number of its ranks (at least 1).
    pub ranks: usize,
    /// Its program; searched in `PATH` when it has no `/`.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Variables set in its ranks only, after the job's `env`.
    pub env: Vec<(OsString, OsString)>,
}

/// Where the launcher's standard input goes (`--stdin`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StdinTo {
    /// Nobody: every process reads `/dev/null` (the default of the
    /// library: a program calling [`run`](crate::run) twice must not have
    /// two threads reading its input).
    #[default]
    Nobody,
    /// Rank 0 (the process started as rank 0, not one that replaces it),
    /// through a pipe that a thread of the launcher fills; end of file on
    /// the launcher's input closes it. `pertinax run`'s default.
    Rank0,
}

/// `--output-filename DIR[:nocopy]`: Open MPI's layout, `DIR/1/rank.N/stdout`
/// and `DIR/1/rank.N/stderr` for rank N (`DIR/1/slot.S/...` for a spare or
/// spawned process in slot S).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputFiles {
    /// The directory (created if needed).
    pub dir: PathBuf,
    /// Also forward the output to the launcher's stdout and stderr (Open
    /// MPI's default; `:nocopy` turns it off).
    pub copy: bool,
}

/// How ranks are pinned to CPUs (`--bind-to`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Binding {
    /// Not at all: the kernel places them (the default; see
    /// ARCHITECTURE.md, "Binding").
    #[default]
    None,
    /// Rank R on the R-th CPU the launcher may use (wrapping around when
    /// ranks outnumber them). Spares and spawned processes are not bound.
    Core,
}

impl JobSpec {
    /// A job of `ranks` copies of `program` without arguments and with every
    /// option at its default.
    pub fn new(ranks: usize, program: impl Into<PathBuf>) -> JobSpec {
        JobSpec {
            ranks,
            program: program.into(),
            args: Vec::new(),
            tag_output: false,
            timeout: None,
            ring_bytes: None,
            env: Vec::new(),
            spares: 0,
            max_spawn: None,
            on_parent_failure: ParentFailure::Continue,
            heartbeat: None,
            kills: Vec::new(),
            random_faults: None,
            resilient: None,
            keep_going: false,
            stdin: StdinTo::Nobody,
            output_files: None,
            timestamp_output: false,
            wdir: None,
            bind: Binding::None,
            report_bindings: false,
            apps: Vec::new(),
        }
    }
}

/// What the launcher does to the processes started by a process's spawn
/// requests when that process fails (`--on-parent-failure`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ParentFailure {
    /// Nothing: they are members of the job like any other (the default).
    #[default]
    Continue,
    /// SIGKILL them (they are reported as killed because of their parent).
    End,
}

/// Where a process's heartbeat comes from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HeartbeatMode {
    /// A runtime thread beats: catches stopped and deadlocked processes.
    #[default]
    Thread,
    /// Library calls beat: also catches a process stuck outside the
    /// library. Idle spares are not judged in this mode.
    Progress,
}

/// Heartbeat watching (`--heartbeat`): every process beats every `period`
/// (the runtime bumps its slot's `beat` word); the launcher samples the
/// words every `period` and SIGKILLs a process whose word has not changed
/// for `timeout`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Heartbeat {
    /// Beat and sampling period.
    pub period: Duration,
    /// Silence after which a process is killed (longer than `period`).
    pub timeout: Duration,
    /// Who beats.
    pub mode: HeartbeatMode,
}

impl Heartbeat {
    /// Heartbeats every `period` with the default timeout, ten periods.
    pub fn new(period: Duration, mode: HeartbeatMode) -> Heartbeat {
        Heartbeat {
            period,
            timeout: period.saturating_mul(10),
            mode,
        }
    }

    /// The `PERTINAX_HEARTBEAT` value: `thread:MS` or `progress:MS`.
    pub(crate) fn env(&self) -> String {
        let mode = match self.mode {
            HeartbeatMode::Thread => "thread",
            HeartbeatMode::Progress => "progress",
        };
        format!("{mode}:{}", self.period.as_millis().max(1))
    }
}

/// Size of each shared-memory ring for a job of `ranks` ranks: 256 KiB up
/// to 8 ranks (room to pipeline large messages in 32 KiB fragments), 64 KiB
/// up to 16, 32 KiB up to 64, 16 KiB above. The segment holds one ring per
/// ordered pair of slots (ranks, spares and room for spawned processes), so
/// its virtual size grows with the square of the capacity; pages exist only
/// once touched, and each process touches only the rings to and from the
/// peers it talks to.
///
/// ```
/// assert_eq!(pertinax_launch::default_ring_bytes(8), 256 * 1024);
/// assert_eq!(pertinax_launch::default_ring_bytes(16), 64 * 1024);
/// assert_eq!(pertinax_launch::default_ring_bytes(17), 32 * 1024);
/// assert_eq!(pertinax_launch::default_ring_bytes(65), 16 * 1024);
/// ```
pub fn default_ring_bytes(ranks: usize) -> usize {
    match ranks {
        0..=8 => 256 * 1024,
        9..=16 => 64 * 1024,
        17..=64 => 32 * 1024,
        _ => 16 * 1024,
    }
}

/// Finds the file that `program` names, as `execvp` would: a name with a `/`
/// is taken as a path, any other name is searched in the directories of
/// `path_var` (the value of `PATH`; an empty entry means the current
/// directory).
///
/// # Errors
/// The [`ProgramProblem`] that prevents running it: no such file, a
/// directory, or no execute permission. When a search finds only files that
/// are not executable, the problem is `PermissionDenied`, as with `execvp`.
pub fn resolve_program(
    program: &Path,
    path_var: Option<&OsStr>,
) -> Result<PathBuf, ProgramProblem> {
    if program.as_os_str().is_empty() {
        return Err(ProgramProblem::NoSuchFile);
    }
    if program.as_os_str().as_encoded_bytes().contains(&b'/') {
        return check_executable(program).map(|()| program.to_path_buf());
    }
    let path_var = path_var.unwrap_or(OsStr::new(DEFAULT_PATH));
    let mut denied = false;
    for dir in std::env::split_paths(path_var) {
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        let candidate = dir.join(program);
        match check_executable(&candidate) {
            Ok(()) => return Ok(candidate),
            Err(ProgramProblem::PermissionDenied) => denied = true,
            Err(_) => {}
        }
    }
    Err(if denied {
        ProgramProblem::PermissionDenied
    } else {
        ProgramProblem::NotInPath
    })
}

/// Whether `path` is a regular file with an execute bit.
///
/// Any execute bit counts: the precise check (`access(X_OK)` for this user)
/// needs libc, and `exec` reports the rare remaining cases as a spawn error.
fn check_executable(path: &Path) -> Result<(), ProgramProblem> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            return Err(ProgramProblem::PermissionDenied)
        }
        Err(_) => return Err(ProgramProblem::NoSuchFile),
    };
    if meta.is_dir() {
        return Err(ProgramProblem::IsADirectory);
    }
    if !meta.is_file() {
        return Err(ProgramProblem::NotAFile);
    }
    if meta.permissions().mode() & 0o111 == 0 {
        return Err(ProgramProblem::PermissionDenied);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn file(dir: &Path, name: &str, mode: u32) -> PathBuf {
        let p = dir.join(name);
        fs::write(&p, "#!/bin/sh\n").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(mode)).unwrap();
        p
    }

    #[test]
    fn ring_sizes_shrink_with_the_job() {
        assert_eq!(default_ring_bytes(1), 262144);
        assert_eq!(default_ring_bytes(16), 65536);
        assert_eq!(default_ring_bytes(64), 32768);
        assert_eq!(default_ring_bytes(1000), 16384);
    }

    #[test]
    fn path_search_finds_the_first_executable() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        let (a, b) = (d.join("a"), d.join("b"));
        fs::create_dir_all(&a).unwrap();
        fs::create_dir_all(&b).unwrap();
        file(&a, "tool", 0o644);
        let exe = file(&b, "tool", 0o755);
        let path = std::env::join_paths([&a, &b]).unwrap();
        assert_eq!(resolve_program(Path::new("tool"), Some(&path)), Ok(exe));
        assert_eq!(
            resolve_program(Path::new("nope"), Some(&path)),
            Err(ProgramProblem::NotInPath)
        );
        let only_a = std::env::join_paths([&a]).unwrap();
        assert_eq!(
            resolve_program(Path::new("tool"), Some(&only_a)),
            Err(ProgramProblem::PermissionDenied)
        );
    }

    #[test]
    fn names_with_a_slash_are_paths() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        let exe = file(d, "run.sh", 0o700);
        let data = file(d, "data.txt", 0o600);
        assert_eq!(resolve_program(&exe, None), Ok(exe.clone()));
        assert_eq!(
            resolve_program(&data, None),
            Err(ProgramProblem::PermissionDenied)
        );
        assert_eq!(resolve_program(d, None), Err(ProgramProblem::IsADirectory));
        assert_eq!(
            resolve_program(&d.join("missing"), None),
            Err(ProgramProblem::NoSuchFile)
        );
        assert_eq!(
            resolve_program(Path::new(""), None),
            Err(ProgramProblem::NoSuchFile)
        );
    }

    #[test]
    fn default_path_finds_sh() {
        assert!(resolve_program(Path::new("sh"), None).is_ok());
    }
}
