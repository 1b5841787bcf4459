//! Jobs of rank programs: `pertinax run -n N [LAUNCHER OPTIONS] -- PROGRAM
//! ARGS` (or, with `PERTINAX_TEST_BACKEND=mpi`, `mpirun ... -n N PROGRAM
//! ARGS`: [`crate::mpi`]) in a [`Sandbox`], with a wall-clock bound, kills
//! through the launcher's options, and the leftover check.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::mpi::TestBackend;
use crate::program::launcher;
use crate::rank::Scenarios;
use crate::sandbox::Sandbox;

/// How long a job's processes may take to disappear after the launcher
/// ended.
const JOB_GRACE: Duration = Duration::from_secs(2);

/// A finished job.
#[derive(Debug)]
pub struct Job {
    /// The launcher's exit code; `None` if the job ran past its bound (its
    /// stdout then ends with a line that says so).
    pub code: Option<i32>,
    /// The job's stdout (every rank's, through the launcher).
    pub stdout: String,
    /// The job's stderr.
    pub stderr: String,
    /// Wall-clock time from the launcher's start to its end.
    pub elapsed: Duration,
    /// The job's directory (its working directory), kept until the job is
    /// dropped.
    pub dir: tempfile::TempDir,
}

impl Job {
    /// Number of ranks that printed `OK`.
    pub fn oks(&self) -> usize {
        self.stdout.lines().filter(|l| l.starts_with("OK ")).count()
    }

    /// The `OK` lines, sorted (as text: `rank=10` before `rank=2`).
    pub fn ok_lines(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self
            .stdout
            .lines()
            .filter(|l| l.starts_with("OK "))
            .collect();
        v.sort_unstable();
        v
    }

    /// Number of lines that start with `FAIL` (a rank whose checks failed).
    pub fn fails(&self) -> usize {
        self.stdout
            .lines()
            .filter(|l| l.starts_with("FAIL"))
            .count()
    }

    /// The lines of stdout that start with `kind` (`OK`, `LEFT`, `FAIL`)
    /// and name `rank=R` (the rank programs' outcome lines).
    pub fn rank_lines(&self, kind: &str, rank: usize) -> Vec<&str> {
        let want = format!("rank={rank}");
        self.stdout
            .lines()
            .filter(|l| {
                l.strip_prefix(kind).is_some_and(|r| r.starts_with(' '))
                    && l.split_whitespace()
                        .any(|f| f.trim_end_matches(':') == want)
            })
            .collect()
    }

    /// Checks a job of a resilient program: exit 0, at least `survivors`
    /// ranks finished, none failed a check, all printed the same
    /// `digest=`; returns the digest.
    pub fn agreed(&self, survivors: usize, what: &str) -> String {
        assert!(
            self.code == Some(0) && self.oks() >= survivors && self.fails() == 0,
            "{what}: code {:?}, {} OK\n{}\n{}",
            self.code,
            self.oks(),
            self.stdout,
            self.stderr
        );
        let digests: Vec<&str> = self
            .stdout
            .lines()
            .filter(|l| l.starts_with("OK "))
            .filter_map(|l| l.split("digest=").nth(1))
            .collect();
        assert!(
            digests.windows(2).all(|w| w[0] == w[1]),
            "{what}: survivors disagree {digests:?}\n{}",
            self.stdout
        );
        digests.first().map_or_else(String::new, |d| d.to_string())
    }

    /// Panics with the job's output unless every one of `n` ranks printed OK
    /// and the job exited 0.
    pub fn assert_ok(&self, n: usize) {
        self.expect(0, n, "");
    }

    /// Panics with `what` and the job's output unless the job exited with
    /// `code` (as given: [`crate::job_code`] translates a native code for
    /// MPI), exactly `oks` ranks printed OK and none printed FAIL.
    pub fn expect(&self, code: i32, oks: usize, what: &str) {
        let (got, fails) = (self.oks(), self.fails());
        assert!(
            self.code == Some(code) && got == oks && fails == 0,
            "{what}{}expected code {code} and {oks} OK: code {:?}, {got} OK, {fails} FAIL\n\
             stdout:\n{}\nstderr:\n{}",
            if what.is_empty() { "" } else { ": " },
            self.code,
            self.stdout,
            self.stderr
        );
    }
}

/// Options of one job.
#[derive(Clone, Debug)]
pub struct Spec<'a> {
    /// Number of ranks (`-n`).
    pub ranks: usize,
    /// The rank program's arguments.
    pub args: Vec<String>,
    /// Options of `pertinax run` (kills, spares, resilience, ...).
    pub launcher_args: Vec<String>,
    /// Variables the ranks get (`-x K=V`).
    pub env: Vec<(&'a str, String)>,
    /// The wall-clock bound (120 s by default).
    pub bound: Duration,
    /// The rank program (required: [`Spec::program`]).
    pub program: Option<PathBuf>,
    /// What the job runs on ([`crate::backend`] by default).
    pub backend: TestBackend,
}

impl<'a> Spec<'a> {
    /// `ranks` ranks of the rank program with `args` (a program with
    /// scenarios: [`Spec::scenario`]).
    pub fn new(ranks: usize, args: &[&str]) -> Spec<'a> {
        Spec {
            ranks,
            args: args.iter().map(|s| s.to_string()).collect(),
            launcher_args: Vec::new(),
            env: Vec::new(),
            bound: Duration::from_secs(120),
            program: None,
            backend: crate::mpi::backend(),
        }
    }

    /// `ranks` ranks of scenario `scenario` of a rank program with its
    /// `args` (`PROGRAM SCENARIO ARGS`: [`crate::Scenario`]): the scenario
    /// is a variant of the program's enum, never a string.
    pub fn scenario(ranks: usize, scenario: impl Scenarios, args: &[&str]) -> Spec<'a> {
        let mut spec = Spec::new(ranks, args);
        spec.args.insert(0, scenario.as_str().to_string());
        spec
    }

    /// The backend the job runs on, whatever `PERTINAX_TEST_BACKEND` says.
    pub fn on(mut self, backend: TestBackend) -> Self {
        self.backend = backend;
        self
    }

    /// The rank program.
    pub fn program(mut self, p: impl Into<PathBuf>) -> Self {
        self.program = Some(p.into());
        self
    }

    /// A variable for the ranks.
    pub fn env(mut self, k: &'a str, v: &str) -> Self {
        self.env.push((k, v.to_string()));
        self
    }

    /// The wall-clock bound in seconds.
    pub fn bound(mut self, secs: u64) -> Self {
        self.bound = Duration::from_secs(secs);
        self
    }

    /// One option of `pertinax run`.
    pub fn launcher_arg(mut self, a: &str) -> Self {
        self.launcher_args.push(a.to_string());
        self
    }

    /// [`Spec::protocol_mix`] by the job's fault plan, as given to
    /// [`Spec::launcher_arg`]: its `--fault-seed`, else a hash (FNV-1a) of
    /// its `--kill` shots and its `PERTINAX_FAULTS` plan ([`Spec::env`]); a
    /// job without any keeps the defaults. So the
    /// jobs of a campaign of drawn kills run each protocol in turn, and
    /// their kills land inside them.
    pub fn protocol_mix_by_faults(self) -> Self {
        let args = &self.launcher_args;
        let seed = args
            .windows(2)
            .find(|w| w[0] == "--fault-seed")
            .and_then(|w| w[1].parse::<u64>().ok());
        let kills: Vec<&str> = args
            .windows(2)
            .filter(|w| w[0] == "--kill")
            .map(|w| w[1].as_str())
            .chain(args.iter().filter_map(|a| a.strip_prefix("--kill=")))
            .chain(
                self.env
                    .iter()
                    .filter(|(k, _)| *k == pertinax_wire::env::FAULTS)
                    .map(|(_, v)| v.as_str()),
            )
            .collect();
        let hashed = (!kills.is_empty()).then(|| {
            kills
                .iter()
                .flat_map(|k| k.bytes())
                .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                    (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
                })
        });
        match seed.or(hashed) {
            Some(seed) => self.protocol_mix(seed),
            None => self,
        }
    }

    /// Varies the large-message protocol by `seed`, so that a campaign's
    /// messages cross the eager limit and its kills (at `*`, which counts
    /// the protocols' own fault points `p2p.*`) land mid-transfer: see
    /// [`PROTOCOL_MIX`], variant `seed % 4`, on this job's backend.
    pub fn protocol_mix(mut self, seed: u64) -> Self {
        let mpi = self.backend == TestBackend::Mpi;
        let p = PROTOCOL_MIX[(seed % PROTOCOL_MIX.len() as u64) as usize];
        for &(k, v) in if mpi { p.ompi } else { p.native } {
            self.env.push((k, v.to_string()));
        }
        self
    }
}

/// One protocol setting of [`Spec::protocol_mix`].
#[derive(Clone, Copy, Debug)]
pub struct Protocol {
    /// What it is.
    pub name: &'static str,
    /// The native engine's variables.
    pub native: &'static [(&'static str, &'static str)],
    /// Open MPI's.
    pub ompi: &'static [(&'static str, &'static str)],
}

/// The protocol settings of [`Spec::protocol_mix`]. On the native
/// backend, eager limits of 64 bytes or 4 KiB make nearly every message of
/// a campaign (agreement payloads, reductions, rings, the libraries'
/// control messages) a rendezvous, streamed in 1 or 4 KiB fragments or
/// read by single copy (cross-memory attach). On MPI, Open MPI's
/// shared-memory transport copies large messages in and out, or reads
/// them by single copy (`smsc`); its eager limit stays at its 4 KiB, which
/// the MPI backend's blocking sends of up to 4 KiB rely on (they return
/// at once, as the backend contract's `send_eager` must).
pub const PROTOCOL_MIX: [Protocol; 4] = [
    Protocol {
        name: "defaults",
        native: &[],
        ompi: &[],
    },
    Protocol {
        name: "eager 64 B, streamed in 1 KiB fragments",
        native: &[
            ("PERTINAX_EAGER_LIMIT", "64"),
            ("PERTINAX_LARGE", "stream"),
            ("PERTINAX_FRAG", "1024"),
        ],
        ompi: &[("OMPI_MCA_smsc", "^cma")],
    },
    Protocol {
        name: "eager 64 B, single copy",
        native: &[("PERTINAX_EAGER_LIMIT", "64"), ("PERTINAX_LARGE", "cma")],
        ompi: &[("OMPI_MCA_smsc", "cma")],
    },
    Protocol {
        name: "eager 4 KiB, streamed in 4 KiB fragments",
        native: &[
            ("PERTINAX_EAGER_LIMIT", "4096"),
            ("PERTINAX_LARGE", "stream"),
            ("PERTINAX_FRAG", "4096"),
        ],
        ompi: &[("OMPI_MCA_smsc", "^cma")],
    },
];

/// Starts a job; `during` runs while it is alive (for kills from outside)
/// with the job's directory and the launcher's pid; then waits for it
/// within the bound, kills everything if the bound is exceeded, and checks
/// that no process of the job survives.
pub fn run_with(spec: Spec<'_>, during: impl FnOnce(&Path, u32)) -> Job {
    let program = spec
        .program
        .clone()
        .expect("a job needs a rank program: Spec::program");
    let sb = Sandbox::with_grace(JOB_GRACE);
    let mpi = spec.backend == TestBackend::Mpi;
    // Built (if need be) before the bound starts.
    let mut leftovers = mpi.then(|| crate::mpi::Leftovers::new(sb.mark()));
    let cmd = if let Some(leftovers) = &leftovers {
        let mut env = crate::mpi::translate(&spec.launcher_args).unwrap_or_else(|e| {
            panic!(
                "this job cannot run on MPI: {e}; a test that needs it is native-only \
                 (list it in crates/pertinax-harness/native-only.txt with its reason)"
            )
        });
        env.extend(spec.env.iter().map(|(k, v)| (k.to_string(), v.clone())));
        crate::mpi::command(spec.ranks, &env, &program, &spec.args, leftovers.shm())
    } else {
        let mut cmd = Command::new(launcher());
        cmd.arg("run").arg("-n").arg(spec.ranks.to_string());
        cmd.args(&spec.launcher_args);
        for (k, v) in &spec.env {
            cmd.arg("-x").arg(format!("{k}={v}"));
        }
        cmd.arg("--").arg(&program).args(&spec.args);
        cmd
    };
    let running = sb.spawn_command(cmd);
    if let Some(leftovers) = &mut leftovers {
        leftovers.launched(running.pid());
    }
    during(sb.dir(), running.pid());
    let mut watch = crate::mpi::LauncherWatch::new(crate::mpi::LAUNCHER_GRACE);
    let ended = running.wait_watching(
        spec.bound,
        |mark| if mpi { watch.wedged(mark) } else { None },
        |mark| {
            if mpi {
                crate::mpi::alive_at_bound(mark)
            } else {
                String::new()
            }
        },
    );
    sb.assert_no_leftovers();
    drop(leftovers);
    // A job past its bound was killed: it has no exit code, and its output
    // says why, so callers that check the outcome fail with the reason.
    let stdout = if let Some(why) = &ended.wedged {
        format!(
            "{}\n[job of {} ranks `{}` killed after {:?}: {why}]",
            ended.stdout,
            spec.ranks,
            spec.args.join(" "),
            ended.elapsed
        )
    } else if ended.status.is_none() {
        let alive = if mpi {
            format!(
                "; under mpirun, alive at the bound: {} (if every rank had printed its \
                 outcome line, Open MPI hung, e.g. in MPI_Finalize after a failure)",
                ended.alive
            )
        } else {
            String::new()
        };
        format!(
            "{}\n[job of {} ranks `{}` exceeded its bound of {:?} and was killed{alive}]",
            ended.stdout,
            spec.ranks,
            spec.args.join(" "),
            spec.bound
        )
    } else {
        ended.stdout
    };
    Job {
        code: ended.status.and_then(|s| s.code()),
        stdout,
        stderr: ended.stderr,
        elapsed: ended.elapsed,
        dir: sb.into_dir(),
    }
}

/// What the MPI backend prints when a spawn (`MPI_Comm_spawn` and its
/// set-up) passed its bound
/// (`PERTINAX_MPI_SPAWN_BOUND`): Open MPI at times never completes a spawn
/// after a failure (seen here about once in 30 replacements on a loaded
/// host); the job ends with [`SPAWN_HUNG_CODE`], and [`run`] runs it again
/// (at most twice), saying so.
const SPAWN_HUNG: &str =
    "MPI_Comm_spawn and the set-up with the new processes have not ended within";
/// The exit code of that job (`EX_TEMPFAIL`).
const SPAWN_HUNG_CODE: i32 = 75;

/// What Open MPI's launcher prints when its PMIx server cannot start: a
/// transient failure of the runtime's start-up (seen about once in a few
/// hundred `mpirun`s here), before any rank ran.
const PMIX_LISTENER_FAILED: &str = "The PMIx server's listener thread failed to start";

/// Runs a job to completion. On MPI, a job whose `mpirun` could not start
/// its runtime (no rank ran: `PMIX_LISTENER_FAILED`), that ended on the
/// backend's bound on a spawn Open MPI never completed (`SPAWN_HUNG`), or
/// whose `mpirun` outlived every rank (`LAUNCHER_ALONE`: it holds their
/// output, so the outcome is unknown) is started again, at most twice,
/// saying so on stderr: none is an outcome of the program under test.
pub fn run(spec: Spec<'_>) -> Job {
    let mut tries = 0;
    loop {
        let j = run_with(spec.clone(), |_, _| {});
        let mpi = spec.backend == TestBackend::Mpi;
        let unstarted =
            mpi && j.stdout.trim().is_empty() && j.stderr.contains(PMIX_LISTENER_FAILED);
        let spawn_hung = mpi && j.code == Some(SPAWN_HUNG_CODE) && j.stderr.contains(SPAWN_HUNG);
        let alone = mpi && j.code.is_none() && j.stdout.contains(crate::mpi::LAUNCHER_ALONE);
        if !(unstarted || spawn_hung || alone) || tries == 2 {
            return j;
        }
        tries += 1;
        let why = if unstarted {
            format!("mpirun could not start its runtime ({PMIX_LISTENER_FAILED})")
        } else if alone {
            format!(
                "{} {:?}, holding their output",
                crate::mpi::LAUNCHER_ALONE,
                crate::mpi::LAUNCHER_GRACE
            )
        } else {
            "Open MPI never completed a spawn (the backend's bound ended the job, exit code 75)"
                .to_string()
        };
        eprintln!("pertinax-harness: {why}; starting the job again ({tries} of 2)");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Runs a job that must succeed: every one of its ranks prints `OK`.
pub fn check(spec: Spec<'_>) -> Job {
    let n = spec.ranks;
    let j = run(spec);
    j.assert_ok(n);
    j
}

/// Waits up to `secs` for a file to appear with some content and returns
/// its content.
pub fn wait_file(path: &Path, secs: u64) -> String {
    let t = Instant::now();
    loop {
        if let Ok(s) = std::fs::read_to_string(path) {
            if !s.is_empty() {
                return s;
            }
        }
        assert!(
            t.elapsed() < Duration::from_secs(secs),
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A campaign's size or first seed: the number in environment variable
/// `var`, or `default` when it is unset or not a number.
pub fn env_count(var: &str, default: u64) -> u64 {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_lines_pick_the_kind_and_the_rank() {
        let j = Job {
            code: Some(0),
            stdout: "OK ring rank=1 sum=3\nOK ring rank=10\nLEFT ring rank=1: gone\n\
                     FAIL ring rank=2: bad\nOKAY rank=1\n[0] OK ring rank=0\n"
                .into(),
            stderr: String::new(),
            elapsed: Duration::ZERO,
            dir: tempfile::tempdir().expect("temp dir"),
        };
        assert_eq!(j.rank_lines("OK", 1), ["OK ring rank=1 sum=3"]);
        assert_eq!(j.rank_lines("OK", 10), ["OK ring rank=10"]);
        assert_eq!(j.rank_lines("LEFT", 1), ["LEFT ring rank=1: gone"]);
        assert_eq!(j.rank_lines("FAIL", 2), ["FAIL ring rank=2: bad"]);
        assert!(j.rank_lines("OK", 0).is_empty());
        assert_eq!(j.oks(), 2);
        assert_eq!(j.ok_lines(), ["OK ring rank=1 sum=3", "OK ring rank=10"]);
        assert_eq!(j.fails(), 1);
    }

    #[test]
    fn expect_checks_code_oks_and_fails() {
        let job = |code, stdout: &str| Job {
            code,
            stdout: stdout.into(),
            stderr: String::new(),
            elapsed: Duration::ZERO,
            dir: tempfile::tempdir().expect("temp dir"),
        };
        let ok = "OK a rank=0 first=PROC_FAILED\nOK a rank=1\n";
        job(Some(137), ok).expect(137, 2, "");
        job(Some(0), ok).assert_ok(2);
        let fails =
            |j: Job, code, oks| std::panic::catch_unwind(|| j.expect(code, oks, "x")).is_err();
        assert!(fails(job(Some(0), ok), 137, 2), "wrong code");
        assert!(fails(job(None, ok), 0, 2), "past its bound");
        assert!(fails(job(Some(0), ok), 0, 3), "too few OK");
        let failed = format!("{ok}FAIL a rank=2: no\n");
        assert!(fails(job(Some(0), &failed), 0, 2), "a FAIL line");
    }
}
