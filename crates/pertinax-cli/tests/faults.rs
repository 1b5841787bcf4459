//! Fault injection and heartbeats, driven by `pertinax-fake-rank`:
//! time-based kills, fault points, the seeded schedule, heartbeat timeouts.

use std::time::Duration;

use pertinax_harness::{run_fake_job, summary_time};
use pertinax_launch::RandomFaults;

const BOUND: Duration = Duration::from_secs(30);

#[test]
fn a_timed_kill_is_injected_and_the_job_succeeds() {
    let o = run_fake_job(
        2,
        &["--kill", "1@200ms"],
        &[("rank:1", "--hang"), ("rank:0", "--watch 1")],
        BOUND,
    );
    assert_eq!(o.code, Some(0), "{o:?}");
    assert!(
        o.stdout.contains("fake-rank 0: saw slot 1 fail\n"),
        "{}",
        o.stdout
    );
    let lines: Vec<&str> = o.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", o.stderr);
    assert!(
        lines[0].starts_with("pertinax: rank 1 (pid ")
            && lines[0].ends_with("s (injected: SIGKILL from the launcher)"),
        "{}",
        o.stderr
    );
    // Counted from the fence, which comes a few milliseconds after the start.
    let at = summary_time(&o.stderr, "rank 1");
    assert!((0.2..2.0).contains(&at), "{at}");
}

#[test]
fn a_fault_point_reaches_its_rank_which_dies_there() {
    let o = run_fake_job(
        3,
        &["--kill", "2@step#3:segv"],
        &[("*", "--print-env --point step --hits 5")],
        BOUND,
    );
    assert_eq!(o.code, Some(0), "an injected death: {o:?}");
    assert!(
        o.stdout.contains(
            "fake-rank 2: env role=rank rank=2 size=3 slot=2 cma_all=- faults=step@3:segv"
        ),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout
            .contains("fake-rank 0: env role=rank rank=0 size=3 slot=0 cma_all=- faults=- "),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout.contains("fake-rank 1: 5 hit(s) of step\n"),
        "{}",
        o.stdout
    );
    assert!(!o.stdout.contains("fake-rank 2: 5 hit(s)"), "{}", o.stdout);
    let lines: Vec<&str> = o.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", o.stderr);
    assert!(
        lines[0].starts_with("pertinax: rank 2 (pid ")
            && lines[0].contains("killed by SIGSEGV")
            && lines[0].ends_with("(injected at hit 3 of point step)"),
        "{}",
        o.stderr
    );
}

#[test]
fn a_seeded_schedule_is_printed_and_its_deaths_are_injected() {
    let o = run_fake_job(
        5,
        &[
            "--fault-seed",
            "7",
            "--fault-count",
            "2",
            "--fault-max-hit",
            "4",
        ],
        &[("*", "--point step --hits 4")],
        BOUND,
    );
    assert_eq!(o.code, Some(0), "{o:?}");
    let schedule = RandomFaults {
        seed: 7,
        count: 2,
        max_hit: 4,
    }
    .schedule(5)
    .unwrap();
    let lines: Vec<String> = schedule
        .iter()
        .map(|k| format!("pertinax: fault schedule: {k}"))
        .collect();
    let stderr: Vec<&str> = o.stderr.lines().collect();
    // Printed at the start, then again in the summary with the two deaths.
    assert_eq!(stderr.len(), 6, "{}", o.stderr);
    assert_eq!(stderr[..2], lines[..], "{}", o.stderr);
    assert_eq!(stderr[2..4], lines[..], "{}", o.stderr);
    for k in &schedule {
        assert_ne!(k.rank, 0);
        let pertinax_launch::KillWhen::Hit { hit, .. } = &k.when else {
            panic!("{k}");
        };
        let died = format!("(injected at hit {hit} of point step)");
        assert!(
            stderr[4..].iter().any(
                |l| l.starts_with(&format!("pertinax: rank {} (pid ", k.rank))
                    && l.ends_with(&died)
            ),
            "{}",
            o.stderr
        );
    }
}

#[test]
fn a_silent_process_is_killed_after_the_heartbeat_timeout() {
    let o = run_fake_job(
        2,
        &["--heartbeat", "50", "--heartbeat-timeout", "400"],
        &[
            ("rank:1", "--beat --stop-self"),
            // Outlives the timeout while beating.
            ("rank:0", "--beat --watch 1 --sleep-ms 500"),
        ],
        BOUND,
    );
    assert_eq!(o.code, Some(128 + libc::SIGKILL), "{o:?}");
    assert!(
        o.stdout.contains("fake-rank 0: saw slot 1 fail\n"),
        "{}",
        o.stdout
    );
    let lines: Vec<&str> = o.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", o.stderr);
    assert!(
        lines[0].starts_with("pertinax: rank 1 (pid ")
            && lines[0].contains("killed by SIGKILL")
            && lines[0].ends_with("(heartbeat timeout)"),
        "{}",
        o.stderr
    );
    // Silent for the timeout, noticed at the next sample (50 ms), with
    // room for a loaded machine.
    let at = summary_time(&o.stderr, "rank 1");
    assert!((0.4..2.0).contains(&at), "{at}");
}

#[test]
fn an_injected_stop_ends_in_an_injected_heartbeat_kill() {
    let o = run_fake_job(
        2,
        &[
            "--heartbeat",
            "50",
            "--heartbeat-timeout",
            "300",
            "--kill",
            "1@100ms:stop",
        ],
        &[("rank:1", "--beat --hang"), ("rank:0", "--beat --watch 1")],
        BOUND,
    );
    assert_eq!(o.code, Some(0), "{o:?}");
    let lines: Vec<&str> = o.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", o.stderr);
    assert!(
        lines[0].starts_with("pertinax: rank 1 (pid ")
            && lines[0].contains("killed by SIGKILL")
            && lines[0].ends_with("(injected stop, then heartbeat timeout)"),
        "{}",
        o.stderr
    );
    let at = summary_time(&o.stderr, "rank 1");
    assert!((0.4..2.0).contains(&at), "{at}");
}

#[test]
fn idle_spares_are_judged_by_thread_heartbeats_only() {
    // The spare does not beat: with thread heartbeats it is killed (and,
    // being idle, not reported); with progress heartbeats it is not judged.
    let cases = [("spare:*", ""), ("rank:*", "--beat --sleep-ms 500")];
    let opts = [
        "--spares",
        "1",
        "--heartbeat",
        "50",
        "--heartbeat-timeout",
        "200",
    ];
    let o = run_fake_job(1, &opts, &cases, BOUND);
    assert_eq!(o.code, Some(0), "{o:?}");
    assert_eq!(o.stderr, "");
    assert!(!o.stdout.contains("idle spare shut down"), "{}", o.stdout);

    let mut progress = opts.to_vec();
    progress.extend(["--heartbeat-mode", "progress"]);
    let o = run_fake_job(1, &progress, &cases, BOUND);
    assert_eq!(o.code, Some(0), "{o:?}");
    assert_eq!(o.stderr, "");
    assert!(
        o.stdout
            .contains("fake-rank slot 1: idle spare shut down\n"),
        "{}",
        o.stdout
    );
}
