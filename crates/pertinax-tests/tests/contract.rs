//! The backend contract tests: what every backend must do, checked through
//! the public API with real processes (`contract-ranks` is the rank
//! program; see ARCHITECTURE.md, "The backend contract"). The suite runs
//! once per backend of [`backends`]: the native shared-memory backend
//! always, and the MPI backend (jobs under `mpirun --with-ft ulfm`, kills by
//! a job-wide fault plan) when the tests are built with the `mpi` feature
//! (`--features pertinax-tests/mpi`) and Open MPI's `mpirun` is there
//! (`PERTINAX_MPIRUN`, default `/tmp/ompi/bin/mpirun`). A new backend adds
//! its row (how the harness starts it, the launcher arguments and
//! environment that select it) and must pass every test unchanged.

use std::time::Duration;

use pertinax_harness::{kill_rank, mpi_ready, run, run_with, wait_file, Job, Spec, TestBackend};
use pertinax_tests::scenario::{Contract, P2p};

/// A backend under test: how a job selects it.
struct Backend {
    name: &'static str,
    /// How the harness starts the job (`pertinax run` or `mpirun`).
    on: TestBackend,
    launcher_args: &'static [&'static str],
    env: &'static [(&'static str, &'static str)],
}

/// Every backend the suite can run on.
const BACKENDS: &[Backend] = &[
    Backend {
        name: "native",
        on: TestBackend::Native,
        launcher_args: &[],
        env: &[],
    },
    Backend {
        name: "mpi",
        on: TestBackend::Mpi,
        launcher_args: &[],
        env: &[],
    },
];

/// The backends this build runs on: native, and MPI when built with the
/// feature and Open MPI is there.
fn backends() -> impl Iterator<Item = &'static Backend> {
    BACKENDS
        .iter()
        .filter(|b| b.on == TestBackend::Native || mpi_ready())
}

fn prog() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_BIN_EXE_contract-ranks"))
}

/// A job of `n` ranks of `scenario` on backend `b`, with extra launcher
/// arguments (kill plans).
fn job(b: &Backend, n: usize, scenario: Contract, extra: &[&str]) -> Job {
    let mut s = Spec::scenario(n, scenario, &[])
        .program(prog())
        .on(b.on)
        .bound(60);
    for a in b.launcher_args.iter().chain(extra) {
        s = s.launcher_arg(a);
    }
    for (k, v) in b.env {
        s = s.env(k, v);
    }
    run(s)
}

/// The value of `key=` in an OK line.
fn field<'a>(line: &'a str, key: &str) -> &'a str {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
        .unwrap_or("")
}

/// Posting order, arrival order and non-overtaking (eager and large
/// messages on one tag, two interleaved tags).
#[test]
fn matching_order() {
    for b in backends() {
        for n in [2, 3] {
            let j = job(b, n, Contract::Order, &[]);
            j.expect(0, n, b.name);
            assert!(j.stdout.contains("in-order"), "{}", j.stdout);
        }
    }
}

/// Any-source, any-tag receives: every message once, per-sender order,
/// right status, nothing left.
#[test]
fn any_source() {
    for b in backends() {
        for n in [3, 5] {
            let j = job(b, n, Contract::Anysource, &[]);
            j.expect(0, n, b.name);
            let want = format!("received={}", (n - 1) * 50);
            assert!(j.stdout.contains(&want), "{}", j.stdout);
        }
    }
}

/// MPI's receive semantics: a truncated receive (or one whose message is not
/// a whole number of elements) consumes the message, and the next receive
/// gets the next one; eager and rendezvous, blocking and posted early.
#[test]
fn truncated_receive_consumes_the_message() {
    for b in backends() {
        let j = job(b, 2, Contract::Truncation, &[]);
        j.expect(0, 2, b.name);
        assert!(j.stdout.contains("consumed"), "{}", j.stdout);
    }
}

/// A revocation ends pending receives everywhere; agree and shrink still
/// work on the revoked communicator, with the same outcome everywhere.
#[test]
fn revoke_then_recover() {
    for b in backends() {
        let n = 4;
        let j = job(b, n, Contract::Revoke, &[]);
        j.expect(0, n, b.name);
        for l in j.ok_lines() {
            assert_eq!(field(l, "flags"), "101", "{l}");
            assert_eq!(field(l, "sum"), "6", "{l}");
        }
    }
}

/// An agreement during which a rank is killed, before it contributes and
/// right after: every survivor returns the same, exact outcome. With flags
/// of 32 bits and of 23 (on MPI: the full rounds, and the fast round that
/// must give way to them).
#[test]
fn agree_under_kills() {
    for b in backends() {
        for (scenario, mask) in [
            (Contract::Agree, u32::MAX),
            (Contract::AgreeSmall, (1u32 << 23) - 1),
        ] {
            agree_under_kills_with(b, scenario, mask);
        }
    }
}

fn agree_under_kills_with(b: &Backend, scenario: Contract, mask: u32) {
    for (n, victim) in [(4usize, 1usize), (6, 5)] {
        let others = (0..n)
            .filter(|&r| r != victim)
            .fold(0u32, |m, r| m | 1 << r);
        for (point, contributed) in [("ft.agree.enter", false), ("ft.agree.contributed", true)] {
            let kill = format!("{victim}@{point}#1");
            let j = job(b, n, scenario, &["--kill", &kill]);
            j.expect(0, n - 1, b.name);
            let counted = (
                format!("{:x}", mask & !(others | 1 << victim)),
                "[]".to_string(),
            );
            let not_counted = (format!("{:x}", mask & !others), format!("[{victim}]"));
            let lines = j.ok_lines();
            let seen = (
                field(lines[0], "flags").to_string(),
                field(lines[0], "failed").to_string(),
            );
            // The victim's contribution counts exactly when it was made,
            // but on MPI for flags the fast round carries: as in ULFM's
            // MPIX_Comm_agree, a member that fails during the agreement
            // may count or not (the same at every survivor; see
            // pertinax-mpi/src/agree.rs).
            let may_not_count = b.on == TestBackend::Mpi && mask >> 23 == 0;
            let expected = if contributed && !(may_not_count && seen == not_counted) {
                counted
            } else {
                not_counted
            };
            for l in &lines {
                assert_eq!(field(l, "flags"), expected.0, "{point}: {l}");
                assert_eq!(field(l, "failed"), expected.1, "{point}: {l}");
                assert_eq!(field(l, "finalized"), "0", "{point}: {l}");
            }
        }
    }
}

/// A rank dies: receives from it fail with `ProcFailed`, and shrink gives
/// every survivor the same communicator, on which an allreduce works.
#[test]
fn shrink_after_a_kill() {
    for b in backends() {
        for n in [3, 5] {
            let kill = format!("{}@contract.victim#1", n - 1);
            let j = job(b, n, Contract::Shrink, &["--kill", &kill]);
            j.expect(0, n - 1, b.name);
            let want = format!("size={} sum={}", n - 1, (n - 1) * n / 2);
            assert_eq!(j.stdout.matches(&want).count(), n - 1, "{}", j.stdout);
        }
    }
}

/// A synchronous send completes only once its receive is posted, and fails
/// with `ProcFailed` (never hangs) when its receiver dies first.
#[test]
fn synchronous_send() {
    for b in backends() {
        let j = job(b, 2, Contract::Ssend, &[]);
        j.expect(0, 2, b.name);
        assert!(j.stdout.contains("synchronous"), "{}", j.stdout);
        for n in [2, 3] {
            let kill = format!("{}@contract.victim#1", n - 1);
            let j = job(b, n, Contract::SsendDead, &["--kill", &kill]);
            j.expect(0, n - 1, b.name);
            assert_eq!(j.stdout.matches("failed").count(), n - 1, "{}", j.stdout);
        }
    }
}

/// `kill -9` from outside: the harness finds the last rank's process (by
/// the test's mark and its rank in the environment, `PERTINAX_RANK` or
/// `OMPI_COMM_WORLD_RANK`) and SIGKILLs it while the others wait for it:
/// a receive from it fails with `ProcFailed`, any-source receives with
/// `ProcFailedPending`, on every backend, and nothing is left behind.
#[test]
fn sigkill_from_outside_fails_the_receives_from_the_dead() {
    let testprog = std::path::PathBuf::from(env!("CARGO_BIN_EXE_p2p-ranks"));
    for b in backends() {
        let n = 4;
        let spec = Spec::scenario(n, P2p::Victim, &["victim.pid"])
            .program(&testprog)
            .on(b.on)
            .bound(60);
        let mut killed = 0;
        let j = run_with(spec, |dir, launcher| {
            // The victim writes its pid file once it is past init.
            let pid = wait_file(&dir.join("victim.pid"), 30);
            killed = kill_rank(launcher, n - 1, Duration::from_secs(10));
            assert_eq!(pid.trim(), killed.to_string(), "[{}] the victim", b.name);
        });
        assert!(killed > 0);
        assert!(
            j.oks() == n - 1 && j.fails() == 0,
            "[{}] {} OK\nstdout:\n{}\nstderr:\n{}",
            b.name,
            j.oks(),
            j.stdout,
            j.stderr
        );
    }
}

/// A job killed at its bound (SIGKILL to `mpirun` and every rank, so no
/// one cleans up) leaves no file behind: on MPI, Open MPI's session
/// directory (`$TMPDIR/ompi.<mpirun's pid>`) and its ranks' shared-memory
/// segments (in the job's own directory under `/dev/shm`) are removed by
/// the harness. The native backend's segment is an anonymous memfd, which
/// the kernel frees with its last process (checked by `failure.rs`).
#[test]
fn a_job_killed_at_its_bound_leaves_no_file_behind() {
    if !mpi_ready() {
        eprintln!("skipped: the MPI backend is not built or Open MPI is not there");
        return;
    }
    let prog = std::path::PathBuf::from(env!("CARGO_BIN_EXE_p2p-ranks"));
    let spec = Spec::scenario(2, P2p::Hang, &[])
        .program(prog)
        .on(TestBackend::Mpi)
        .bound(8);
    let mut seen = None;
    let j = run_with(spec, |_, mpirun| {
        let session = std::env::temp_dir().join(format!("ompi.{mpirun}"));
        // Until mpirun has exec'd, its environment is this test's (no mark).
        let mut mark = None;
        pertinax_harness::wait_for(Duration::from_secs(7), || {
            mark = pertinax_harness::environ_value(mpirun, pertinax_harness::MARK_VAR);
            mark.is_some()
        });
        let mark = mark.expect("mpirun's environment has the test mark");
        let shm = std::path::Path::new("/dev/shm").join(format!("ompi-sm-{mark}"));
        // Both exist once the ranks are up (the segments by MPI_Init).
        let up = pertinax_harness::wait_for(Duration::from_secs(7), || {
            session.is_dir() && std::fs::read_dir(&shm).is_ok_and(|mut d| d.next().is_some())
        });
        assert!(
            up,
            "{} or the segments in {} never appeared",
            session.display(),
            shm.display()
        );
        seen = Some((session, shm));
    });
    assert_eq!(
        j.code, None,
        "the job was not killed at its bound:\n{}",
        j.stderr
    );
    let (session, shm) = seen.expect("the job started");
    assert!(!session.exists(), "{} left behind", session.display());
    assert!(!shm.exists(), "{} left behind", shm.display());
}
