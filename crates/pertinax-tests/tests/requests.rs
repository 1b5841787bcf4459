//! Non-blocking requests under real failures (`requests-ranks`): waits
//! return a failure as soon as it is known and leave the other requests
//! pending, cancel and revoke end requests so that every scope ends, and a
//! randomized campaign of rings of non-blocking messages with seeded
//! kills. Every job goes through the launcher with a wall-clock bound and
//! the harness checks that none of its processes survives it.

use pertinax_harness::{run, Job, Spec};
use pertinax_tests::scenario::Requests;

fn requests_ranks() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_BIN_EXE_requests-ranks"))
}

fn req(n: usize, scenario: Requests, args: &[&str]) -> Spec<'static> {
    Spec::scenario(n, scenario, args)
        .program(requests_ranks())
        .bound(60)
}

/// The OK line of rank `r`.
fn line(j: &Job, r: usize) -> String {
    j.rank_lines("OK", r)
        .first()
        .unwrap_or_else(|| panic!("no OK line of rank {r}\n{}\n{}", j.stdout, j.stderr))
        .to_string()
}

/// Issue 15, item 7, as reported: rank 3 is killed; rank 2's `wait_all`
/// over {an `irecv` from rank 1, itself blocked in a receive from rank 2;
/// an `isend` to rank 3} returns rank 3's failure at once with index 1
/// while the receive stays pending; rank 2 revokes, which frees ranks 0
/// and 1 (`Revoked`); all three shrink and end. Three timings: rank 3
/// dead for 100 ms before the posts (small and large message: the send
/// fails at its post) and rank 3 dying during the wait (large message:
/// the announced send fails with its receiver).
#[test]
fn wait_all_returns_a_failure_at_once() {
    for args in [["early", "small"], ["early", "large"], ["late", "large"]] {
        let j = run(req(4, Requests::Waitall, &args)
            .bound(30)
            .launcher_arg("--kill")
            .launcher_arg("3@victim#1"));
        j.expect(0, 3, "");
        assert!(
            line(&j, 2).contains("first=PROC_FAILED index=1 pending=1 size=3"),
            "{args:?}: {}",
            j.stdout
        );
        for r in [0, 1] {
            assert!(
                line(&j, r).contains("blocked=REVOKED size=3"),
                "{args:?}: {}",
                j.stdout
            );
        }
        assert!(
            j.elapsed < std::time::Duration::from_secs(10),
            "{args:?}: {:?}",
            j.elapsed
        );
    }
    // The blocking `sendrecv` over the same pair: the send's failure
    // returns although the receive is pending.
    let j = run(req(4, Requests::Waitall, &["early", "small", "sendrecv"])
        .bound(30)
        .launcher_arg("--kill")
        .launcher_arg("3@victim#1"));
    j.expect(0, 3, "");
    assert!(
        line(&j, 2).contains("sendrecv=PROC_FAILED size=3"),
        "{}",
        j.stdout
    );
}

/// `wait_any` and a `test_any` loop over {a receive from blocked rank 1,
/// an any-source receive, a receive from rank 3} while rank 3 is killed:
/// the any-source receive fails with `ProcFailedPending` and the named
/// one with `ProcFailed`, each reported with its index; the pending
/// receive is then cancelled (reported as `Cancelled` at index 0), rank 2
/// revokes, and everyone shrinks.
#[test]
fn wait_any_and_test_any_report_failures_with_their_index() {
    for mode in ["wait", "test"] {
        let j = run(req(4, Requests::Waitany, &[mode])
            .bound(30)
            .launcher_arg("--kill")
            .launcher_arg("3@victim#1"));
        j.expect(0, 3, "");
        assert!(
            line(&j, 2).contains("failures=PENDING,PROC_FAILED cancelled=1 size=3"),
            "{mode}: {}",
            j.stdout
        );
        assert!(line(&j, 0).contains("blocked=REVOKED"), "{}", j.stdout);
        assert!(line(&j, 1).contains("blocked=REVOKED"), "{}", j.stdout);
    }
}

/// Cancel: a pending receive is cancelled and its scope ends; a dropped
/// pending receive is cancelled too; neither wrote its buffer, and the
/// message they would have matched goes to a later receive; a taken
/// request, an eager send and a rendezvous send are not cancelled.
#[test]
fn cancel_ends_a_scope_with_a_pending_receive() {
    let j = run(req(2, Requests::Cancel, &[]).bound(30));
    j.expect(0, 2, "");
    assert!(
        line(&j, 0).contains("cancelled=2 got=[5, 6, 7, 8]"),
        "{}",
        j.stdout
    );
}

/// A revocation completes every pending request at every rank: a named
/// receive, an any-source receive and a large (rendezvous) send nobody
/// receives all end with `Revoked`, at 4 and 6 ranks.
#[test]
fn revoke_completes_pending_requests_everywhere() {
    for n in [4, 6] {
        let j = run(req(n, Requests::Revoke, &[]).bound(30));
        j.expect(0, n, "");
        for r in 0..n {
            assert!(
                line(&j, r).contains("outcomes=REVOKED,REVOKED,REVOKED"),
                "{}",
                j.stdout
            );
        }
    }
}

/// A rank stopped by SIGSTOP (alive but silent) while rank 2 waits with
/// `wait_any` on it and on blocked rank 1: the heartbeat monitor ends it,
/// the wait returns its failure with index 1, rank 2 revokes, all shrink.
#[test]
fn stopped_peer_ended_by_the_heartbeat() {
    let j = run(req(4, Requests::Stopped, &[])
        .bound(30)
        .launcher_arg("--heartbeat")
        .launcher_arg("20")
        .launcher_arg("--heartbeat-timeout")
        .launcher_arg("300")
        .launcher_arg("--kill")
        .launcher_arg("3@victim#1:stop"));
    j.expect(0, 3, "");
    assert!(j.stderr.contains("heartbeat"), "{}", j.stderr);
    assert!(
        line(&j, 2).contains("first=PROC_FAILED index=1 size=3"),
        "{}",
        j.stdout
    );
}

/// The randomized campaign of the core with non-blocking requests:
/// seeded random kills (1 or 2 victims, any rank but 0, at any fault
/// point: posting, waiting, between `wait_any` completions, inside the
/// agreement, revocation and shrink) while 3 to 8 ranks run rounds of
/// irecv/isend rings (named and any-source receives, 8 B to 1 MiB,
/// `wait_all` or `wait_any`); on a fault, revoke, then every round ends
/// with an agreement and a shrink when needed. Checks: no hang (bound),
/// exit 0, no wrong data (the program checks every byte), every survivor
/// reports the same digest of the agreed outcome of every round, the
/// agreed dead were killed by the launcher, and every rank it did not
/// kill finished. `PERTINAX_REQ_CAMPAIGN_RUNS` sets the number of runs
/// (30 by default; 1000 for the full campaign) and
/// `PERTINAX_REQ_CAMPAIGN_FIRST` the first run's number.
#[test]
fn randomized_campaign() {
    let runs: u64 = pertinax_harness::env_count(pertinax_wire::env::test::REQ_CAMPAIGN_RUNS, 30);
    let first: u64 = pertinax_harness::env_count(pertinax_wire::env::test::REQ_CAMPAIGN_FIRST, 0);
    let t0 = std::time::Instant::now();
    let mut killed_total = 0;
    for i in first..first + runs {
        let n = 3 + (i % 6) as usize;
        let seed = (5000 + i).to_string();
        let count = (1 + i % 2).min(n as u64 - 1).to_string();
        let j = run(req(n, Requests::Campaign, &["20"])
            .launcher_arg("--fault-seed")
            .launcher_arg(&seed)
            .launcher_arg("--fault-count")
            .launcher_arg(&count)
            .launcher_arg("--fault-max-hit")
            .launcher_arg("120")
            .protocol_mix_by_faults());
        let ctx = format!("run {i} (n={n} seed={seed} count={count})");
        let killed: Vec<usize> = j
            .stderr
            .lines()
            .filter(|l| l.contains("(injected"))
            .filter_map(|l| l.split("rank ").nth(1)?.split(' ').next()?.parse().ok())
            .collect();
        killed_total += killed.len();
        let survivors = n - killed.len();
        let digest = j.agreed(survivors, &ctx);
        assert!(!digest.is_empty(), "{ctx}: no digest\n{}", j.stdout);
        assert_eq!(
            j.oks(),
            survivors,
            "{ctx}: killed {killed:?}\n{}\n{}",
            j.stdout,
            j.stderr
        );
        let deads: Vec<&str> = j
            .stdout
            .lines()
            .filter(|l| l.starts_with("OK "))
            .filter_map(|l| l.split("dead=").nth(1)?.split(' ').next())
            .collect();
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
        assert!(
            dead.iter().all(|d| killed.contains(d)),
            "{ctx}: survivors list {dead:?} as dead, the launcher killed {killed:?}\n{}",
            j.stderr
        );
    }
    println!(
        "requests campaign: {runs} runs, 0 hangs, 0 wrong answers, 0 disagreements, {killed_total} kills, {:.1} s",
        t0.elapsed().as_secs_f64()
    );
}
