//! Spawn requests and spares, driven by `pertinax-fake-rank`: the answer in
//! the requester's publication, assignments, environments, output tags,
//! isolation of spawned failures, `--on-parent-failure`, idle spares.

use std::time::Duration;

use pertinax_harness::{fake_rank, run_fake_job};

const BOUND: Duration = Duration::from_secs(30);

#[test]
fn spawned_processes_are_assigned_watched_and_reported() {
    let o = run_fake_job(
        2,
        &["--tag-output"],
        &[
            ("spawned:1", "--print-env --exit 3"),
            ("spawned:*", "--print-env"),
            ("rank:0", "--cma --spawn 2"),
            ("rank:*", "--cma"),
        ],
        BOUND,
    );
    // The spawned process's failure gives the status, and harms nobody.
    assert_eq!(o.code, Some(3), "{o:?}");
    let out = &o.stdout;
    assert!(
        out.contains("[0] fake-rank 0: spawn status 0 slots [2, 3]\n"),
        "{out}"
    );
    for (slot, index) in [(2, 0), (3, 1)] {
        let assigned = format!(
            "[slot {slot}] fake-rank slot {slot}: assigned index {index} of [2, 3] payload from slot 0\n"
        );
        assert!(out.contains(&assigned), "{out}");
        // Every rank published cma/R = 1 at the start-up fence, which ended
        // before the request.
        let env = format!(
            "[slot {slot}] fake-rank slot {slot}: env role=spawned rank={index} size=2 slot={slot} cma_all=1 faults=- heartbeat=-\n"
        );
        assert!(out.contains(&env), "{out}");
    }
    let lines: Vec<&str> = o.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", o.stderr);
    assert!(
        lines[0].starts_with("pertinax: slot 3 (spawned by rank 0) (pid ")
            && lines[0].contains(") exited with code 3 at "),
        "{}",
        o.stderr
    );
}

#[test]
fn requests_name_a_program_or_are_refused() {
    // One slot to spawn into: rank 0 takes it with another program; rank
    // 1's program does not exist.
    let spawn_fake = format!(
        "--spawn 1 --spawn-program {} --spawn-arg --print-env",
        fake_rank()
    );
    let o = run_fake_job(
        2,
        &["--max-spawn", "1"],
        &[
            ("rank:0", &spawn_fake),
            (
                "rank:1",
                "--spawn 1 --spawn-program /nonexistent/pertinax-x",
            ),
        ],
        BOUND,
    );
    assert_eq!(o.code, Some(0), "{o:?}");
    assert_eq!(o.stderr, "");
    assert!(
        o.stdout.contains("fake-rank 0: spawn status 0 slots [2]\n"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout
            .contains("fake-rank slot 2: env role=spawned rank=0 size=1 slot=2"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout.contains("fake-rank 1: spawn status 2 slots []\n"),
        "{}",
        o.stdout
    );

    // No slot at all.
    let o = run_fake_job(1, &["--max-spawn", "0"], &[("rank:0", "--spawn 1")], BOUND);
    assert_eq!(o.code, Some(0), "{o:?}");
    assert_eq!(
        o.stdout,
        "fake-rank 0: 1 fence(s) ok\nfake-rank 0: spawn status 1 slots []\n"
    );
}

#[test]
fn spares_are_taken_first_then_fresh_slots() {
    let o = run_fake_job(
        2,
        &["--spares", "2", "--max-spawn", "1"],
        &[
            ("spare:*", "--print-env"),
            ("spawned:*", ""),
            ("rank:0", "--spawn 3 --use-spares"),
            ("rank:*", ""),
        ],
        BOUND,
    );
    assert_eq!(o.code, Some(0), "{o:?}");
    assert_eq!(o.stderr, "");
    let out = &o.stdout;
    assert!(
        out.contains("fake-rank 0: spawn status 0 slots [2, 3, 4]\n"),
        "{out}"
    );
    for (slot, index) in [(2, 0), (3, 1), (4, 2)] {
        let assigned = format!(
            "fake-rank slot {slot}: assigned index {index} of [2, 3, 4] payload from slot 0\n"
        );
        assert!(out.contains(&assigned), "{out}");
    }
    // Spares start with the ranks: rank 0 of 1 until assigned, and the
    // fence had not completed.
    for slot in [2, 3] {
        let env = format!(
            "fake-rank slot {slot}: env role=spare rank=0 size=1 slot={slot} cma_all=0 faults=- heartbeat=-\n"
        );
        assert!(out.contains(&env), "{out}");
    }
}

#[test]
fn idle_spares_are_shut_down_and_not_reported() {
    let o = run_fake_job(2, &["--spares", "1"], &[("*", "")], BOUND);
    assert_eq!(o.code, Some(0), "{o:?}");
    assert_eq!(o.stderr, "");
    assert!(
        o.stdout
            .contains("fake-rank slot 2: idle spare shut down\n"),
        "{}",
        o.stdout
    );
    assert!(o.elapsed < Duration::from_secs(3), "{:?}", o.elapsed);
}

#[test]
fn spawned_processes_outlive_a_failed_parent_by_default() {
    // --keep-going: the parent's exit 3 must not end the job.
    let o = run_fake_job(
        2,
        &["--keep-going"],
        &[
            ("spawned:*", "--watch 1"),
            ("rank:1", "--spawn 1 --sleep-ms 100 --exit 3"),
            ("rank:*", ""),
        ],
        BOUND,
    );
    assert_eq!(o.code, Some(3), "{o:?}");
    assert!(
        o.stdout.contains("fake-rank slot 2: saw slot 1 fail\n"),
        "{}",
        o.stdout
    );
    assert_eq!(o.stderr.lines().count(), 1, "only the parent: {}", o.stderr);
}

#[test]
fn on_parent_failure_end_kills_what_the_parent_spawned() {
    let o = run_fake_job(
        2,
        &["--on-parent-failure", "end", "--keep-going"],
        &[
            ("spawned:*", "--hang"),
            ("rank:1", "--spawn 2 --sleep-ms 100 --exit 3"),
            ("rank:*", "--watch 1"),
        ],
        BOUND,
    );
    assert_eq!(
        o.code,
        Some(3),
        "the parent's failure gives the status: {o:?}"
    );
    assert!(o.elapsed < Duration::from_secs(5), "{:?}", o.elapsed);
    for slot in [2, 3] {
        let line = o
            .stderr
            .lines()
            .find(|l| l.starts_with(&format!("pertinax: slot {slot} (spawned by rank 1) (pid ")))
            .unwrap_or_else(|| panic!("no line for slot {slot}: {}", o.stderr));
        assert!(
            line.ends_with("s (its parent rank 1 failed)") && line.contains("killed by SIGKILL"),
            "{line}"
        );
    }
}
