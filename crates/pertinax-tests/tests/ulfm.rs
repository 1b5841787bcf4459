//! The ULFM validation scenarios, with real processes killed at chosen
//! points (see `ulfm-ranks` for each scenario's program), and a
//! bounded randomized campaign. Every job has a wall-clock bound and the
//! harness checks that none of its processes survives it.

use pertinax_harness::{backend, env_count, job_code, on_mpi, run, Spec, TestBackend};
use pertinax_tests::scenario::Ulfm;

fn ulfm_ranks() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_BIN_EXE_ulfm-ranks"))
}

fn ft(n: usize, scenario: Ulfm, args: &[&str]) -> Spec<'static> {
    Spec::scenario(n, scenario, args)
        .program(ulfm_ranks())
        .bound(60)
}

/// Scenario 1: The last rank is SIGKILLed during a series of collectives: every
/// survivor gets `ProcFailed` (nobody revokes), and a communicator split
/// earlier without the dead rank still works.
#[test]
fn s1_kill_during_collectives() {
    for n in [4, 8] {
        let j = run(ft(n, Ulfm::CollKill, &["5"]));
        j.expect(job_code(137), n - 1, "");
        assert!(
            j.ok_lines().iter().all(|l| l.contains("first=PROC_FAILED")),
            "{}",
            j.stdout
        );
    }
}

/// Scenario 2: As 1, with survivors that revoke on error, one of them computing for
/// 300 ms outside the library, then shrink and a checked allreduce.
#[test]
fn s2_kill_revoke_and_long_computation() {
    for n in [4, 8] {
        let j = run(ft(n, Ulfm::CollKillRevoke, &["3"]));
        j.expect(job_code(137), n - 1, "");
    }
}

/// Scenario 3: Any-source receives report `ProcFailedPending` while the failure is
/// unacknowledged, a named receive from the dead reports `ProcFailed`,
/// and any-source receives work again after `ack_failed`.
#[test]
fn s3_any_source_pending_then_ack() {
    let j = run(ft(5, Ulfm::Anysource, &[]));
    j.expect(job_code(137), 4, "");
}

/// Scenario 3b: a message that arrived before its sender died is
/// probed and received (by any source and by the named source), and a
/// receive from the dead after it fails.
#[test]
fn s3_a_message_sent_before_a_death_is_received() {
    for how in ["any", "named"] {
        let j = run(ft(3, Ulfm::SentBeforeDeath, &[how]));
        j.expect(job_code(137), 2, "");
    }
}

/// Scenario 4: Insulation: no error at all in the half whose communicator holds no
/// failed rank.
#[test]
fn s4_insulation() {
    let j = run(ft(6, Ulfm::Insulation, &[]));
    j.expect(job_code(137), 5, "");
    let lines = j.ok_lines();
    assert_eq!(
        lines.iter().filter(|l| l.contains("lower-clean")).count(),
        3
    );
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.contains("upper-saw-failure"))
            .count(),
        2
    );
}

/// Scenario 5: The acknowledged group has as many members as failures observed,
/// after each of two failures, and acknowledgements are per communicator.
#[test]
fn s5_acknowledged_group() {
    let j = run(ft(5, Ulfm::Acked, &[]));
    j.expect(job_code(137), 3, "");
}

/// Scenario 6a: A revocation interrupts pending receives, and reaches everyone even
/// though the revoker is killed in the middle of revoking.
#[test]
fn s6_revoke_interrupts_pending_requests() {
    let j = run(ft(5, Ulfm::RevokePending, &[])
        .launcher_arg("--kill")
        .launcher_arg("1@ft.revoke.partial#1"));
    j.expect(0, 4, "");
    assert!(!j.stdout.contains("revoker-survived"), "{}", j.stdout);
}

/// Scenario 6b: The same on an intercommunicator made by spawn: a parent revokes,
/// pending receives on both sides end with `Revoked`.
#[test]
fn s6_revoke_interrupts_intercommunicator_requests() {
    let j = run(ft(3, Ulfm::RevokeInter, &["2"]));
    j.expect(0, 5, "");
    let lines = j.ok_lines();
    assert_eq!(
        lines.iter().filter(|l| l.contains("child")).count(),
        2,
        "{}",
        j.stdout
    );
}

/// Spawn, then merge into one intracommunicator (parents first).
#[test]
fn spawn_and_merge() {
    let j = run(ft(2, Ulfm::SpawnMerge, &["3"])
        .launcher_arg("--max-spawn")
        .launcher_arg("3"));
    j.expect(0, 5, "");
    // Without room for them, spawn fails the same way at every parent
    // (each exits 1 after saying so: --keep-going lets the slower one
    // finish its line).
    let j = run(ft(2, Ulfm::SpawnMerge, &["3"])
        .launcher_arg("--max-spawn")
        .launcher_arg("2")
        .launcher_arg("--keep-going"));
    assert_eq!(j.code, Some(1), "{}", j.stdout);
    assert_eq!(
        j.stdout
            .matches("spawn failed: no free process slot")
            .count(),
        2,
        "{}",
        j.stdout
    );
}

/// Heartbeats: a rank stopped by SIGSTOP (injected), or stuck in a loop
/// outside the library (progress-mode heartbeat), is killed after the
/// timeout, and the others detect it, shrink and go on.
#[test]
fn heartbeats_end_stopped_and_stuck_ranks() {
    let j = run(ft(4, Ulfm::Stuck, &[])
        .launcher_arg("--heartbeat")
        .launcher_arg("20")
        .launcher_arg("--heartbeat-timeout")
        .launcher_arg("300")
        .launcher_arg("--kill")
        .launcher_arg("3@step#5:stop"));
    j.expect(0, 3, "");
    assert!(j.stderr.contains("heartbeat"), "{}", j.stderr);
    let j = run(ft(4, Ulfm::Stuck, &["spin"])
        .launcher_arg("--heartbeat")
        .launcher_arg("20")
        .launcher_arg("--heartbeat-timeout")
        .launcher_arg("300")
        .launcher_arg("--heartbeat-mode")
        .launcher_arg("progress"));
    j.expect(job_code(137), 3, "");
    assert!(j.stderr.contains("heartbeat"), "{}", j.stderr);
}

/// Fault injection by time and by signal: SIGSEGV at a point, a panic at a
/// point, and SIGKILL at a time; the survivors recover each time.
#[test]
fn injected_signals_panics_and_timed_kills() {
    let j = run(ft(6, Ulfm::Campaign, &["40", "shrink"])
        .launcher_arg("--kill")
        .launcher_arg("1@p2p#4:segv")
        .launcher_arg("--kill")
        .launcher_arg("2@coll#9:panic")
        .launcher_arg("--kill")
        .launcher_arg("3@agree#12"));
    j.expect(0, 3, "");
    assert!(
        j.ok_lines().iter().all(|l| l.contains("dead=[1,2,3]")),
        "{}",
        j.stdout
    );
    // A kill at a time: the program is busy long enough for it to land.
    let j = run(ft(4, Ulfm::Stuck, &["spin"])
        .launcher_arg("--kill")
        .launcher_arg("3@300ms"));
    j.expect(0, 3, "");
}

/// Failure isolation between process groups: a spawned process's death
/// does not harm its parents; a parent's death leaves the children running
/// (default) or ends them (`--on-parent-failure end`).
#[test]
fn failures_are_isolated_between_process_groups() {
    let j = run(ft(3, Ulfm::Groups, &["child"]));
    j.expect(job_code(137), 4, "");
    assert_eq!(
        j.ok_lines()
            .iter()
            .filter(|l| l.contains("parent-unharmed"))
            .count(),
        3
    );
    let j = run(ft(3, Ulfm::Groups, &["parent"]));
    j.expect(job_code(137), 4, "");
    assert_eq!(
        j.ok_lines()
            .iter()
            .filter(|l| l.contains("orphan-continued"))
            .count(),
        2
    );
    let j = run(ft(3, Ulfm::Groups, &["parent"])
        .launcher_arg("--on-parent-failure")
        .launcher_arg("end"));
    assert_eq!(j.oks(), 2, "{}\n{}", j.stdout, j.stderr);
    assert!(!j.stdout.contains("orphan-continued"), "{}", j.stdout);
}

/// Scenario 7: Revoke then shrink, 100 times in a row (after one failure).
#[test]
fn s7_revoke_shrink_100_times() {
    let j = run(ft(4, Ulfm::RevokeShrink, &["100"]));
    j.expect(job_code(137), 3, "");
}

/// Scenario 8: Ranks kill themselves at random one at a time; each time the
/// survivors shrink; exactly N-1 deaths and one clean finish.
#[test]
fn s8_suicide_until_one_remains() {
    for (n, seed) in [(5, "1"), (8, "2")] {
        let j = run(ft(n, Ulfm::Suicide, &[seed]));
        j.expect(job_code(137), 1, "");
        // The native launcher reports every death; `mpirun --with-ft ulfm`
        // reports none (the last survivor's OK line says it saw N-1).
        if !on_mpi() {
            assert_eq!(
                j.stderr.matches("killed by SIGKILL").count(),
                n - 1,
                "{}",
                j.stderr
            );
        }
    }
}

/// Scenario 9: Non-shrinking recovery: a rank dies, the survivors put a new process
/// (a spare, or a spawned one) in its place, it reloads its data from its
/// buddy's copy, and the job finishes with a verified result.
#[test]
fn s9_replace_with_spares_and_spawned_processes() {
    // With a spare.
    let j = run(ft(4, Ulfm::Replace, &["30"])
        .launcher_arg("--spares")
        .launcher_arg("1")
        .launcher_arg("--kill")
        .launcher_arg("2@step#11"));
    j.expect(0, 4, "");
    assert!(j.stdout.contains("role=Replacement"), "{}", j.stdout);
    // Without a spare (spawned), two failures one after the other.
    let j = run(ft(4, Ulfm::Replace, &["30"])
        .launcher_arg("--kill")
        .launcher_arg("1@step#7")
        .launcher_arg("--kill")
        .launcher_arg("3@step#20"));
    j.expect(0, 4, "");
}

/// Mismatched recovery calls (issue 15, item 8): after a death, rank 0
/// calls `agree_detailed` (then, in a second job, `shrink`) where the
/// others call `replace_failed`. Every survivor gets `RecoveryMismatch`
/// naming both calls, no process is started, and the next agreement works.
#[test]
fn mismatched_recovery_calls_fail_at_every_member() {
    for (n, other) in [(4, "agree"), (5, "shrink")] {
        let j = run(ft(n, Ulfm::Mismatch, &[other])
            .launcher_arg("--spares")
            .launcher_arg("1"));
        j.expect(job_code(137), n - 1, "");
        let lines = j.ok_lines();
        assert!(
            lines
                .iter()
                .all(|l| l.contains("mismatch-detected: recovery calls do not match")),
            "{}",
            j.stdout
        );
        assert_eq!(
            lines
                .iter()
                .filter(|l| l.contains(&format!(
                    "this rank called {other} while rank 1 called replace_failed"
                )))
                .count(),
            1,
            "{}",
            j.stdout
        );
        // The spare was never used: nothing was started for the hole.
        assert!(!j.stderr.contains("(replacement"), "{}", j.stderr);
    }
}

/// A rank that finalizes early (issue 15, item 9) is not failed: it is in
/// `Agreement::finalized`, not in `failed` nor `get_failed`; it is not
/// replaced and `shrink` leaves it out. With a rank also killed, only the
/// killed rank is replaced, and its replacement learns that.
#[test]
fn a_finalized_rank_is_not_failed_nor_replaced() {
    let j = run(ft(4, Ulfm::Finalized, &[]));
    j.expect(0, 4, "");
    assert_eq!(
        j.ok_lines()
            .iter()
            .filter(|l| l.contains("finalized=[Rank(3)] failed=[] replaced=[]"))
            .count(),
        3,
        "{}",
        j.stdout
    );
    for spares in ["0", "1"] {
        let j = run(ft(4, Ulfm::Finalized, &["kill"])
            .launcher_arg("--spares")
            .launcher_arg(spares));
        // The job's code is the killed rank's (the program kills itself).
        j.expect(job_code(137), 4, "");
        let lines = j.ok_lines();
        assert_eq!(
            lines
                .iter()
                .filter(|l| l.contains("failed=[Rank(1)] replaced=[Rank(1)]"))
                .count(),
            2,
            "{}",
            j.stdout
        );
        assert!(
            lines
                .iter()
                .any(|l| l.contains("replacement finalized=[Rank(3)]")),
            "{}",
            j.stdout
        );
    }
}

/// A non-blocking agreement returns before every member contributed (on
/// the MPI backend too: `MPIX_Comm_iagree`), and decides the AND.
#[test]
fn iagree_returns_before_the_others_contribute() {
    let j = run(ft(4, Ulfm::IagreeAtOnce, &[]));
    j.expect(0, 4, "");
    assert_eq!(
        j.ok_lines()
            .iter()
            .filter(|l| l.ends_with("flags=f0"))
            .count(),
        4,
        "{}",
        j.stdout
    );
}

/// Scenario 10: Agreement with the rank that other implementations use as the
/// coordinator (rank 0) killed in the middle, and with several ranks
/// killed during it at different moments: every survivor decides the same.
#[test]
fn s10_agreement_with_deaths_inside() {
    let cases: [(&[&str], &str); 2] = [
        (&["0@ft.agree.contributed#3"], "failed=[0]"),
        (
            &[
                "0@ft.agree.enter#4",
                "2@ft.agree.contributed#4",
                "3@ft.agree.contributed#6",
            ],
            "failed=[0, 2, 3]",
        ),
    ];
    for (kills, want) in cases {
        let mut spec = ft(6, Ulfm::AgreeKill, &["12"]);
        for k in kills {
            spec = spec.launcher_arg("--kill").launcher_arg(k);
        }
        let j = run(spec);
        j.expect(0, 6 - kills.len(), "");
        let views: Vec<String> = j
            .ok_lines()
            .iter()
            .map(|l| {
                l.split_once(' ')
                    .map(|x| x.1)
                    .unwrap_or("")
                    .split_once(' ')
                    .map(|x| x.1)
                    .unwrap_or("")
                    .to_string()
            })
            .map(|l| l.split_once(' ').map(|x| x.1.to_string()).unwrap_or(l))
            .collect();
        assert!(
            views.windows(2).all(|w| w[0] == w[1]),
            "views differ: {views:?}"
        );
        assert!(views[0].contains(want), "{views:?} want {want}");
    }
}

/// A member dies inside an agreement on a communicator that holds a
/// replacement (on MPI, processes of two jobs), and on MPI one survivor
/// acts as if Open MPI never ended its agreement there (as it at times
/// leaves a process of another job:
/// `bench-results/2026-12-02/campaigns-mpi/`): it must go on from the
/// other members' records, and every survivor must see the same deaths.
#[test]
fn a_member_left_in_an_agreement_goes_on_from_the_others_records() {
    let lost = pertinax_wire::env::tune::MPI_LOSE_FAST_ROUND;
    let j = run(ft(4, Ulfm::Campaign, &["12", "replace"])
        .launcher_arg("--kill")
        .launcher_arg("3@coll#2")
        .launcher_arg("--kill")
        .launcher_arg("2@ft.agree.contributed#8")
        .env(lost, "1"));
    assert_eq!(j.code, Some(0), "{}\n{}", j.stdout, j.stderr);
    assert_eq!(j.fails(), 0, "{}", j.stdout);
    let oks = j.ok_lines();
    let dead: Vec<&&str> = oks.iter().filter(|l| l.contains("dead=")).collect();
    assert_eq!(dead.len(), 2, "{}", j.stdout);
    assert!(
        dead.iter().all(|l| l.contains("dead=[2,3] recoveries=2")),
        "{}",
        j.stdout
    );
    assert_eq!(oks.len(), 4, "{}", j.stdout);
    if on_mpi() {
        assert!(
            j.stderr
                .contains("rank 1: an agreement's fast round was taken as never ending here"),
            "rank 1 never went on from the others' records:\n{}",
            j.stderr
        );
    }
}

/// The randomized campaign: seeded random kills (any rank but 0, at any
/// fault point) in a program mixing point-to-point, collectives and
/// recovery. Zero hangs, zero wrong results, all survivors agree on who
/// died, and that is who the launcher killed. `PERTINAX_CAMPAIGN_RUNS`
/// sets the number of runs (200 by default) and `PERTINAX_CAMPAIGN_FIRST`
/// the first run's number (runs differ in size, seed and strategy).
#[test]
fn randomized_campaign() {
    let runs = env_count(pertinax_wire::env::test::CAMPAIGN_RUNS, 200);
    let first = env_count(pertinax_wire::env::test::CAMPAIGN_FIRST, 0);
    let t = std::time::Instant::now();
    let mut deaths = 0;
    for i in first..first + runs {
        let n = 3 + (i % 8) as usize;
        let count = (1 + i % 3).min(n as u64 - 1);
        // Every third run recovers by replacing (with spares in half of
        // those runs, with spawned processes in the others).
        let replace = i % 3 == 2;
        let spares = (replace && i % 2 == 0).then_some(2);
        deaths += campaign_job(i, n, count, replace, spares).len();
    }
    // Any hang (the bound) or wrong answer failed the test above.
    eprintln!(
        "randomized_campaign: {runs} runs from {first}: 0 hangs, 0 wrong answers, {deaths} \
         deaths the survivors agreed on, {:.1} s",
        t.elapsed().as_secs_f64()
    );
}

/// The randomized campaign of non-shrinking recovery: every run replaces
/// (`replace_failed_with`, the survivors handing the step to restart from
/// to the replacements, which check it against rank 0's), with two or
/// three victims per run, spares (none, one, or three: replacements by
/// new processes, by spares then new processes, or by spares only).
/// `PERTINAX_REPLACE_RUNS` sets the number of runs (40 by default; 1,000
/// for the full campaign) and `PERTINAX_REPLACE_FIRST` the first run's
/// number.
#[test]
fn randomized_replace_campaign() {
    let runs = env_count(pertinax_wire::env::test::REPLACE_RUNS, 40);
    let first = env_count(pertinax_wire::env::test::REPLACE_FIRST, 0);
    let t = std::time::Instant::now();
    let (mut replaced, mut two) = (0, 0);
    for i in first..first + runs {
        let n = 4 + (i % 6) as usize;
        let count = 2 + i % 2;
        let spares = [None, Some(1), Some(3)][(i % 3) as usize];
        let r = campaign_job(50_000 + i, n, count, true, spares).len();
        replaced += r;
        two += usize::from(r >= 2);
    }
    // Any hang (the bound) or wrong answer failed the test above.
    eprintln!(
        "randomized_replace_campaign: {runs} runs from {first}: 0 hangs, 0 wrong answers, \
         {replaced} ranks replaced, {two} runs with two or more replaced, {:.1} s",
        t.elapsed().as_secs_f64()
    );
}

/// One job of a randomized campaign, checked; returns the ranks the
/// survivors agree died (were replaced).
fn campaign_job(i: u64, n: usize, count: u64, replace: bool, spares: Option<usize>) -> Vec<usize> {
    let seed = (1000 + i).to_string();
    let count = count.min(n as u64 - 1).to_string();
    let mut spec = ft(
        n,
        Ulfm::Campaign,
        &["30", if replace { "replace" } else { "shrink" }],
    )
    .bound(60)
    .launcher_arg("--fault-seed")
    .launcher_arg(&seed)
    .launcher_arg("--fault-count")
    .launcher_arg(&count)
    .launcher_arg("--fault-max-hit")
    .launcher_arg("150")
    .protocol_mix_by_faults();
    // Spares are the native launcher's: on MPI, `replace_failed` always
    // spawns, so the job runs without them (the same seeds and victims).
    let spares = spares.filter(|_| backend() == TestBackend::Native);
    let k = spares.map(|k| k.to_string());
    if let Some(k) = &k {
        spec = spec.launcher_arg("--spares").launcher_arg(k);
    }
    let j = run(spec);
    let ctx =
        format!("run {i} (n={n} seed={seed} count={count} replace={replace} spares={spares:?})");
    // On MPI, a member Open MPI left in an agreement went on from the
    // others' records (see `a_member_left_in_an_agreement_...`): said, so
    // that a campaign's log counts the jobs where it happened.
    for l in j
        .stderr
        .lines()
        .filter(|l| l.contains("going on with the record exchange"))
    {
        eprintln!("{ctx}: {l}");
    }
    {
        assert_eq!(
            j.code,
            Some(0),
            "{ctx}: code {:?}\n{}\n{}",
            j.code,
            j.stdout,
            j.stderr
        );
        assert_eq!(j.fails(), 0, "{ctx}: {}", j.stdout);
        let lines: Vec<&str> = j
            .ok_lines()
            .into_iter()
            .filter(|l| l.contains("dead="))
            .collect();
        let deads: Vec<&str> = lines
            .iter()
            .map(|l| {
                l.split("dead=")
                    .nth(1)
                    .unwrap_or("")
                    .split(' ')
                    .next()
                    .unwrap_or("")
            })
            .collect();
        assert!(
            !deads.is_empty(),
            "{ctx}: no survivor\n{}\n{}",
            j.stdout,
            j.stderr
        );
        assert!(
            deads.windows(2).all(|w| w[0] == w[1]),
            "{ctx}: survivors disagree on the dead: {deads:?}"
        );
        let dead: Vec<usize> = deads[0]
            .trim_matches(|c| c == '[' || c == ']')
            .split(',')
            .filter(|x| !x.is_empty())
            .map(|x| x.parse().expect("rank"))
            .collect();
        // Who the launcher killed: its summary names every injected death.
        let killed: Vec<usize> = j
            .stderr
            .lines()
            .filter(|l| l.contains("(injected"))
            .filter_map(|l| l.split("rank ").nth(1)?.split(' ').next()?.parse().ok())
            .collect();
        assert!(
            dead.iter().all(|d| killed.contains(d)),
            "{ctx}: survivors list {dead:?} as dead, the launcher killed {killed:?}\n{}",
            j.stderr
        );
        // A rank killed right after it contributed to the last agreement is
        // not listed (it took part); it printed nothing either.
        let late = killed.len() - dead.len();
        let want = if replace { n - late } else { n - killed.len() };
        assert_eq!(
            j.oks(),
            want,
            "{ctx}: killed {killed:?}, dead {dead:?}\n{}",
            j.stdout
        );
        dead
    }
}
