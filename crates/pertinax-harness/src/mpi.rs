//! The harness's backends: a job of [`crate::Spec`] runs through `pertinax
//! run` (native, the default) or through `mpirun` (the MPI backend), chosen
//! by `PERTINAX_TEST_BACKEND=native|mpi` ([`backend`]).
//!
//! On MPI a job is
//!
//! ```text
//! $PERTINAX_MPIRUN --allow-run-as-root --oversubscribe --with-ft ulfm
//!     --mca async_mpi_finalize 1 --mca coll ^han
//!     $PERTINAX_MPIRUN_ARGS -n N -x PERTINAX_TEST_MARK -x K=V ... PROGRAM ARGS
//! ```
//!
//! (`PERTINAX_MPIRUN` defaults to `/tmp/ompi/bin/mpirun`), with the same
//! wall-clock bound, kill-on-drop and leftover check as a native job:
//! `mpirun`, its daemons (`prterun`, `prted`) and the ranks all carry the
//! test's mark, so a job past its bound loses its whole process tree, and
//! none may be left after it. The tests must be built with the `mpi`
//! feature (`--features pertinax-tests/mpi`, in `target/mpi`): their rank
//! programs and those the harness builds ([`crate::Program`]) then carry
//! the MPI backend. A [`crate::Spec`] may also pick its backend itself
//! ([`crate::Spec::on`]; the contract suite runs every row).
//!
//! The Spec's launcher options are translated ([`translate`]): point-based
//! kills (`--kill RANK@NAME#K[:SIGNAL]`) become one job-wide
//! `PERTINAX_FAULTS`, a seeded schedule (`--fault-seed`, `--fault-count`,
//! `--fault-max-hit`) `PERTINAX_FAULT_SEED`, the resilient settings
//! (`--resilient[=MODE]`, `--resilient-k`, ...) their `PERTINAX_RESILIENT*`
//! variables. Every other launcher option is native-only (time-based
//! kills, spares, heartbeats, spawn limits, output tags, ...): the job is refused with a panic that names the
//! option, and a test that needs one is listed as native-only
//! ([`native_only`], `native-only.txt`) with its reason, so that it is left out on MPI
//! deliberately (`cargo test ... -- --skip NAME`, `.ci/mpi-tests`), never
//! silently.
//!
//! Open MPI may hang in `MPI_Finalize` after a failure: such a job runs
//! into its bound and is killed whole; its output then says that the job
//! was killed at its bound under `mpirun`, which ranks had printed their
//! outcome line, and which processes were still alive (an Open MPI hang
//! when every rank had reported).

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use pertinax_wire::env::test as tenv;
use pertinax_wire::fault::Plan;
use pertinax_wire::kill::{Kill, KillWhen, RandomFaults};

use crate::sandbox::{marked, MARK_VAR};

const FINALIZE_BOUND: &str = pertinax_wire::env::tune::MPI_FINALIZE_BOUND;
const SPAWN_BOUND: &str = pertinax_wire::env::tune::MPI_SPAWN_BOUND;

/// What a job runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TestBackend {
    /// `pertinax run` (shared memory).
    Native,
    /// `mpirun --with-ft ulfm` (Open MPI with ULFM).
    Mpi,
}

/// The backend of this test process's jobs (`PERTINAX_TEST_BACKEND`;
/// native when unset). Panics on another value, and on `mpi` when the
/// tests were built without the feature (`--features pertinax-tests/mpi`).
pub fn backend() -> TestBackend {
    match std::env::var(tenv::BACKEND).as_deref().map(str::trim) {
        Err(_) | Ok("") | Ok("native") => TestBackend::Native,
        Ok("mpi") if cfg!(feature = "mpi") => TestBackend::Mpi,
        Ok("mpi") => panic!(
            "{}=mpi needs the tests built with the mpi feature: \
             cargo test --features pertinax-tests/mpi (CARGO_TARGET_DIR=target/mpi)",
            tenv::BACKEND
        ),
        Ok(other) => panic!("{}={other}: expected native or mpi", tenv::BACKEND),
    }
}

/// Whether this harness was built for MPI (the `mpi` feature) and Open
/// MPI's `mpirun` is there: the contract suite's `mpi` row runs then.
pub fn mpi_ready() -> bool {
    cfg!(feature = "mpi") && mpi_available()
}

/// Whether jobs run on MPI.
pub fn on_mpi() -> bool {
    backend() == TestBackend::Mpi
}

/// The `mpirun` of MPI jobs.
pub fn mpirun() -> PathBuf {
    std::env::var_os(tenv::MPIRUN)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/tmp/ompi/bin/mpirun"))
}

/// Whether an MPI is there to run jobs on (its `mpirun` exists).
pub fn mpi_available() -> bool {
    mpirun().is_file()
}

/// The exit code a job that the native launcher ends with `native` has on
/// this process's backend ([`backend`]): on MPI, a job where a rank died by
/// a signal while the others finished (the native launcher's `128 +
/// signal`) exits 0, as `mpirun --with-ft ulfm` does (deaths are the
/// program's business under ULFM); every other code is the same.
pub fn job_code(native: i32) -> i32 {
    match backend() {
        TestBackend::Mpi if (129..=191).contains(&native) => 0,
        _ => native,
    }
}

/// The list of native-only tests (`native-only.txt` of this crate): one a
/// line, `FILE::TEST  REASON` (`#` starts a comment).
pub const NATIVE_ONLY_LIST: &str = include_str!("../native-only.txt");

/// The tests that run on the native backend only, `(file, test, reason)`:
/// the test file (`tests/FILE.rs` of `pertinax-tests`), the test's name,
/// and the native-only feature it tests. `.ci/mpi-tests` skips exactly
/// these on MPI (`--skip TEST --exact`); every other test of a suite must
/// pass on MPI.
pub fn native_only() -> Vec<(&'static str, &'static str, &'static str)> {
    NATIVE_ONLY_LIST
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            let (name, reason) = l.split_once(char::is_whitespace)?;
            let (file, test) = name.split_once("::")?;
            Some((file, test, reason.trim()))
        })
        .collect()
}

/// The variables that carry a Spec's launcher options to the ranks of an
/// MPI job.
///
/// # Errors
/// The first native-only option, with why.
pub fn translate(launcher_args: &[String]) -> Result<Vec<(String, String)>, String> {
    let mut kills: Vec<Kill> = Vec::new();
    let mut env = Vec::new();
    let mut seed: Option<u64> = None;
    let (mut count, mut max_hit) = (1usize, 20u64);
    let mut it = launcher_args.iter();
    while let Some(a) = it.next() {
        let (opt, inline) = match a.split_once('=') {
            Some((o, v)) if o.starts_with("--") => (o, Some(v.to_string())),
            _ => (a.as_str(), None),
        };
        let mut value = || -> Result<String, String> {
            inline
                .clone()
                .or_else(|| it.next().cloned())
                .ok_or_else(|| format!("{opt} needs a value"))
        };
        match opt {
            "--kill" => {
                let v = value()?;
                let k: Kill = v.parse().map_err(|e| format!("--kill {v}: {e}"))?;
                if let KillWhen::After(_) = k.when {
                    return Err(format!(
                        "--kill {v}: a time-based kill is native-only (the launcher keeps the \
                         job's time); use a fault point, RANK@NAME#K"
                    ));
                }
                kills.push(k);
            }
            // The resilient settings are variables the runtime reads,
            // whoever started it.
            "--resilient" => env.push((
                pertinax_wire::env::RESILIENT.to_string(),
                inline.clone().unwrap_or_else(|| "flat".into()),
            )),
            "--resilient-k" => env.push((pertinax_wire::env::RESILIENT_K.to_string(), value()?)),
            "--resilient-threshold" => env.push((
                pertinax_wire::env::RESILIENT_THRESHOLD.to_string(),
                value()?,
            )),
            "--resilient-policy" => {
                env.push((pertinax_wire::env::RESILIENT_POLICY.to_string(), value()?))
            }
            "--resilient-check" => {
                env.push((pertinax_wire::env::RESILIENT_CHECK.to_string(), value()?))
            }
            // mpirun --with-ft ulfm keeps the others running when a rank
            // fails; pertinax's fail-fast rule has no counterpart to turn off.
            "--keep-going" => {}
            "--fault-seed" => seed = Some(num(opt, &value()?)?),
            "--fault-count" => count = num(opt, &value()?)? as usize,
            "--fault-max-hit" => max_hit = num(opt, &value()?)?,
            other => {
                return Err(format!(
                    "the launcher option {other} is native-only (no mpirun equivalent)"
                ))
            }
        }
    }
    if !kills.is_empty() {
        let shots = kills
            .iter()
            .filter_map(|k| {
                let mut s = k.shot()?;
                s.rank = Some(k.rank);
                Some(s)
            })
            .collect();
        env.push((
            pertinax_wire::env::FAULTS.to_string(),
            Plan { shots }.to_string(),
        ));
    }
    if let Some(seed) = seed {
        let r = RandomFaults {
            seed,
            count,
            max_hit,
        };
        env.push((pertinax_wire::env::FAULT_SEED.to_string(), r.to_string()));
    }
    Ok(env)
}

fn num(opt: &str, v: &str) -> Result<u64, String> {
    v.parse()
        .map_err(|_| format!("{opt} {v}: expected a whole number"))
}

/// The `mpirun` command of a job: `ranks` ranks of `program args`, the
/// ranks' variables `env` (the mark is added), Open MPI's shared-memory
/// files in `shm` (see [`Leftovers`]).
pub(crate) fn command(
    ranks: usize,
    env: &[(String, String)],
    program: &std::path::Path,
    args: &[String],
    shm: &std::path::Path,
) -> Command {
    let mut cmd = Command::new(mpirun());
    // Root in CI containers; more ranks than cores; ULFM's failure
    // semantics with the MCA settings of docs/cluster.md.
    cmd.args(["--allow-run-as-root", "--oversubscribe"]);
    cmd.args(pertinax_wire::mpirun::FT);
    if let Ok(extra) = std::env::var(tenv::MPIRUN_ARGS) {
        cmd.args(extra.split_whitespace());
    }
    cmd.arg("-n").arg(ranks.to_string());
    cmd.arg("--mca").arg("btl_sm_backing_directory").arg(shm);
    cmd.arg("-x").arg(MARK_VAR);
    // Open MPI's hang in MPI_Finalize after a failure (see the MPI
    // backend) ends after 3 s, not the default 10 s, unless a test says.
    if !env.iter().any(|(k, _)| k == FINALIZE_BOUND) {
        cmd.arg("-x").arg(format!("{FINALIZE_BOUND}=3000"));
    }
    // Open MPI's intermittent spawn hang after a failure (see the MPI
    // backend) ends after 15 s, not the default 60 s, within the jobs'
    // bounds. Spawned processes do not get `-x` variables but inherit
    // mpirun's environment: set there too, for their `MPI_Init`.
    if !env.iter().any(|(k, _)| k == SPAWN_BOUND) {
        cmd.arg("-x").arg(format!("{SPAWN_BOUND}=15000"));
        cmd.env(SPAWN_BOUND, "15000");
    }
    for (k, v) in env {
        cmd.arg("-x").arg(format!("{k}={v}"));
        // Open MPI's own settings reach spawned processes too.
        if k.starts_with("OMPI_MCA_") {
            cmd.env(k, v);
        }
    }
    cmd.arg(program).args(args);
    cmd
}

/// What Open MPI leaves behind when a whole job is killed at its bound
/// (SIGKILL, so neither `mpirun` nor a rank cleans up): its session
/// directory `$TMPDIR/ompi.<mpirun's pid>` (PMIx sockets and job data) and
/// the ranks' 16 MiB shared-memory segments, which a job puts in a
/// directory of its own under `/dev/shm` (`btl_sm_backing_directory`).
/// Dropping it removes both; a job that ended by itself has removed
/// them already.
#[derive(Debug)]
pub(crate) struct Leftovers {
    shm: std::path::PathBuf,
    session: Option<std::path::PathBuf>,
}

impl Leftovers {
    /// The shared-memory directory of the job marked `mark`, made now.
    pub(crate) fn new(mark: &str) -> Leftovers {
        let base = std::path::Path::new("/dev/shm");
        let base = if base.is_dir() {
            base.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        let shm = base.join(format!("ompi-sm-{mark}"));
        if let Err(e) = std::fs::create_dir_all(&shm) {
            panic!("cannot make {}: {e}", shm.display());
        }
        Leftovers { shm, session: None }
    }

    /// Where the job's shared-memory files go.
    pub(crate) fn shm(&self) -> &std::path::Path {
        &self.shm
    }

    /// The job's `mpirun` has pid `pid`.
    pub(crate) fn launched(&mut self, pid: u32) {
        self.session = Some(std::env::temp_dir().join(format!("ompi.{pid}")));
    }
}

impl Drop for Leftovers {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.shm);
        if let Some(session) = &self.session {
            let _ = std::fs::remove_dir_all(session);
        }
    }
}

/// What was alive of an MPI job when it was killed at its bound: its
/// `prte`/`mpirun` processes and its ranks (by world rank).
pub(crate) fn alive_at_bound(mark: &str) -> String {
    let mut parts = Vec::new();
    for pid in marked(mark) {
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        let rank = environ_value(pid, "OMPI_COMM_WORLD_RANK");
        parts.push(match rank {
            Some(r) => {
                if std::env::var_os(tenv::STACKS).is_some() {
                    eprintln!(
                        "pertinax-harness: rank {r} (pid {pid}) at the bound:\n{}",
                        stacks(pid)
                    );
                }
                format!("rank {r} (pid {pid})")
            }
            None => format!("{} (pid {pid})", comm.trim()),
        });
    }
    parts.join(", ")
}

/// How long Open MPI's launcher may outlive the last of its ranks before
/// [`LauncherWatch`] calls it wedged. A launcher whose ranks have all
/// ended, whatever their codes, exits within milliseconds; one that does
/// not has stopped forwarding the ranks' output too (seen in CI after a
/// replacement: only `prterun` alive and nothing printed, every rank gone).
pub(crate) const LAUNCHER_GRACE: Duration = Duration::from_secs(10);

/// Watches an MPI job for a launcher left alone: once a rank has run, a
/// moment with no rank alive starts a clock, a rank alive stops it, and
/// the grace ([`LAUNCHER_GRACE`]) on it means the job cannot end by itself.
#[derive(Debug)]
pub(crate) struct LauncherWatch {
    grace: Duration,
    saw_rank: bool,
    alone_since: Option<std::time::Instant>,
}

impl LauncherWatch {
    /// A watch that calls a launcher wedged after `grace` alone.
    pub(crate) fn new(grace: Duration) -> LauncherWatch {
        LauncherWatch {
            grace,
            saw_rank: false,
            alone_since: None,
        }
    }

    /// Asked by [`crate::sandbox::Running::wait_watching`]: why the job
    /// marked `mark` is wedged, if it is (with the launcher's stacks on
    /// stderr when stacks are asked for).
    pub(crate) fn wedged(&mut self, mark: &str) -> Option<String> {
        let procs = marked(mark);
        let (ranks, launchers): (Vec<u32>, Vec<u32>) = procs
            .into_iter()
            .partition(|&p| environ_value(p, "OMPI_COMM_WORLD_RANK").is_some());
        if !ranks.is_empty() {
            self.saw_rank = true;
            self.alone_since = None;
            return None;
        }
        if !self.saw_rank {
            return None;
        }
        let since = *self.alone_since.get_or_insert_with(std::time::Instant::now);
        if since.elapsed() < self.grace {
            return None;
        }
        let names: Vec<String> = launchers
            .iter()
            .map(|&pid| {
                let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
                if std::env::var_os(tenv::STACKS).is_some() {
                    eprintln!(
                        "pertinax-harness: {} (pid {pid}) alone:\n{}",
                        comm.trim(),
                        stacks(pid)
                    );
                }
                format!("{} (pid {pid})", comm.trim())
            })
            .collect();
        Some(format!(
            "{LAUNCHER_ALONE} {:?}: {}",
            self.grace,
            names.join(", ")
        ))
    }
}

/// What [`LauncherWatch::wedged`] says of a wedged job.
pub(crate) const LAUNCHER_ALONE: &str = "Open MPI's launcher outlived every rank by";

/// Every thread's backtrace of process `pid` by `gdb -batch`, or why not.
fn stacks(pid: u32) -> String {
    let out = Command::new("gdb")
        .args(["-p", &pid.to_string(), "-batch", "-nx"])
        .args(["-ex", "set pagination off", "-ex", "thread apply all bt 30"])
        .stdin(std::process::Stdio::null())
        .output();
    match out {
        Ok(o) => String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| l.starts_with('#') || l.starts_with("Thread"))
            .collect::<Vec<_>>()
            .join("\n"),
        Err(e) => format!("(no backtrace: gdb: {e})"),
    }
}

/// The value of `key` in the environment of process `pid`.
pub fn environ_value(pid: u32, key: &str) -> Option<String> {
    let env = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    env.split(|&b| b == 0).find_map(|kv| {
        let kv = std::str::from_utf8(kv).ok()?;
        let (k, v) = kv.split_once('=')?;
        (k == key).then(|| v.to_string())
    })
}

/// SIGKILL from outside to the world's rank `rank` of the running job
/// whose launcher (`pertinax run` or `mpirun`) is `launcher` (the pid
/// [`crate::run_with`] gives): the marked process whose environment says
/// `PERTINAX_RANK=rank` (native) or `OMPI_COMM_WORLD_RANK=rank` (MPI),
/// waited for up to `within`. Returns its pid; panics if no such process
/// appeared.
pub fn kill_rank(launcher: u32, rank: usize, within: Duration) -> u32 {
    let mark = environ_value(launcher, MARK_VAR)
        .unwrap_or_else(|| panic!("the launcher {launcher} carries no {MARK_VAR}"));
    let want = rank.to_string();
    let mut victim = None;
    let found = crate::sandbox::wait_for(within, || {
        victim = marked(&mark).into_iter().find(|&p| {
            p != launcher
                && (environ_value(p, "OMPI_COMM_WORLD_RANK").as_deref() == Some(&want)
                    || environ_value(p, pertinax_wire::env::RANK).as_deref() == Some(&want))
        });
        victim.is_some()
    });
    let pid = match victim {
        Some(p) if found => p,
        _ => panic!("rank {rank} of the job of launcher {launcher} never appeared"),
    };
    crate::sandbox::kill_all(&[pid]);
    pid
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(args: &[&str]) -> Result<Vec<(String, String)>, String> {
        translate(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    /// A stand-in launcher whose one "rank" ends at once while it sleeps
    /// on is called wedged after the grace, well before the bound, and
    /// killed; one whose rank outlives the grace is not.
    #[test]
    fn a_launcher_left_alone_is_wedged_after_the_grace() {
        let run = |rank_secs: &str, then_secs: &str| {
            let sb = crate::sandbox::Sandbox::new();
            let mut cmd = Command::new("sh");
            cmd.arg("-c").arg(format!(
                "OMPI_COMM_WORLD_RANK=0 sleep {rank_secs}; sleep {then_secs}; exit 3"
            ));
            let mut watch = LauncherWatch::new(Duration::from_millis(1500));
            let ended = sb.spawn_command(cmd).wait_watching(
                Duration::from_secs(30),
                |mark| watch.wedged(mark),
                |_| String::new(),
            );
            sb.assert_no_leftovers();
            ended
        };
        let e = run("1.5", "60");
        let why = e.wedged.expect("the launcher was left alone");
        assert!(why.starts_with(LAUNCHER_ALONE), "{why}");
        assert!(e.status.is_none());
        assert!(e.elapsed < Duration::from_secs(10), "{:?}", e.elapsed);
        // A rank alive all along (3 s, past the grace): the job ends by itself.
        let e = run("3", "0.2");
        assert!(e.wedged.is_none());
        assert_eq!(e.status.and_then(|s| s.code()), Some(3));
    }

    #[test]
    fn the_native_only_list_is_well_formed() {
        let list = native_only();
        let lines = NATIVE_ONLY_LIST
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.trim().starts_with('#'))
            .count();
        assert_eq!(list.len(), lines, "every entry is FILE::TEST REASON");
        for (file, test, reason) in list {
            assert!(!file.is_empty() && !test.is_empty() && !reason.is_empty());
            // A test file, or a test directory's `main.rs` (its tests are
            // there).
            let tests = format!("{}/../pertinax-tests/tests", env!("CARGO_MANIFEST_DIR"));
            let path = [
                format!("{tests}/{file}.rs"),
                format!("{tests}/{file}/main.rs"),
            ]
            .into_iter()
            .find(|p| std::path::Path::new(p).is_file())
            .unwrap_or_else(|| panic!("{tests}: no test file {file}"));
            let src = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
            assert!(
                src.contains(&format!("fn {test}(")),
                "{file}::{test} does not exist"
            );
        }
    }

    #[test]
    fn kills_become_one_job_wide_plan() {
        assert_eq!(t(&[]), Ok(vec![]));
        assert_eq!(
            t(&["--kill", "3@chunk#6", "--kill=1@*#2:panic"]),
            Ok(vec![(
                "PERTINAX_FAULTS".into(),
                "3@chunk#6:kill,1@*#2:panic".into()
            )])
        );
        assert_eq!(
            t(&["--fault-seed", "42", "--fault-count", "2"]),
            Ok(vec![("PERTINAX_FAULT_SEED".into(), "42:2:20".into())])
        );
    }

    #[test]
    fn resilient_settings_become_their_variables() {
        assert_eq!(
            t(&[
                "--resilient=hier",
                "--resilient-k",
                "4",
                "--resilient-check=agree"
            ]),
            Ok(vec![
                ("PERTINAX_RESILIENT".into(), "hier".into()),
                ("PERTINAX_RESILIENT_K".into(), "4".into()),
                ("PERTINAX_RESILIENT_CHECK".into(), "agree".into()),
            ])
        );
        assert_eq!(
            t(&["--resilient"]),
            Ok(vec![("PERTINAX_RESILIENT".into(), "flat".into())])
        );
    }

    #[test]
    fn keep_going_translates_to_nothing() {
        assert_eq!(t(&["--keep-going"]), Ok(vec![]));
    }

    #[test]
    fn native_only_options_are_refused_by_name() {
        let e = t(&["--kill", "2@1s"]).unwrap_err();
        assert!(e.contains("time-based"), "{e}");
        let e = t(&["--spares", "1"]).unwrap_err();
        assert!(e.contains("--spares is native-only"), "{e}");
        let e = t(&["--heartbeat", "100"]).unwrap_err();
        assert!(e.contains("--heartbeat is native-only"), "{e}");
        assert!(t(&["--kill", "x"]).is_err());
        assert!(t(&["--kill"]).is_err());
    }
}
