//! `Comm::intercomm_create` through the real launcher (see
//! `intercomm-ranks` for each scenario's program): healthy creations
//! with several layouts, overlapping groups, and ranks SIGKILLed at the
//! operation's fault points, after which every survivor must get the same
//! outcome and none may hang. Every job has a wall-clock bound and the
//! harness checks that none of its processes survives it.

use pertinax_harness::{run, Job, Spec};
use pertinax_tests::scenario::Intercomm;
use pertinax_wire::rng::SplitMix64;

fn intercomm_ranks() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_BIN_EXE_intercomm-ranks"))
}

fn job(n: usize, scenario: Intercomm, args: &[&str]) -> Spec<'static> {
    Spec::scenario(n, scenario, args)
        .program(intercomm_ranks())
        .bound(60)
}

/// The `fault` scenario with `victim` killed at its first pass through
/// fault point `comm.intercomm.POINT`.
fn killed(n: usize, layout: &str, victim: usize, point: &str) -> Job {
    run(job(n, Intercomm::Fault, &[layout])
        .launcher_arg("--kill")
        .launcher_arg(&format!("{victim}@comm.intercomm.{point}#1")))
}

/// The outcome every survivor of a `fault` job printed, checked to be the
/// same everywhere; `n - 1` survivors if the victim died (it reached the
/// point), `n` otherwise.
fn uniform(j: &Job, n: usize) -> String {
    let lines: Vec<&str> = j.stdout.lines().filter(|l| l.starts_with("OK ")).collect();
    let survivors = lines.len();
    assert!(
        j.code == Some(0) && (survivors == n || survivors == n - 1) && j.fails() == 0,
        "code {:?}, {survivors} OK of {n}\nstdout:\n{}\nstderr:\n{}",
        j.code,
        j.stdout,
        j.stderr
    );
    // "OK fault rank=R outcome=... survivors=K"
    let outcome = |l: &str| l.split_whitespace().skip(3).collect::<Vec<_>>().join(" ");
    let first = outcome(lines[0]);
    assert!(
        lines.iter().all(|l| outcome(l) == first),
        "the survivors disagree:\n{}\nstderr:\n{}",
        j.stdout,
        j.stderr
    );
    assert!(
        first.ends_with(&format!("survivors={survivors}")),
        "{first} with {survivors} survivors"
    );
    if survivors == n {
        assert!(first.starts_with("outcome=ok merge=ok"), "{first}");
    } else {
        assert!(
            first.starts_with("outcome=PROC_FAILED")
                || first.starts_with("outcome=ok merge=PROC_FAILED"),
            "{first}"
        );
    }
    first
}

/// Two halves of the world, leaders at rank 0 of each, the world as peer:
/// remote group, messages both ways, agreement, merge, checked allreduce
/// (twice in a row).
#[test]
fn halves_exchange_merge_and_allreduce() {
    for n in [4, 8] {
        let j = run(job(n, Intercomm::Basic, &["halves"]));
        j.expect(0, n, "");
    }
}

/// One rank against all the others (whose leader is their last rank, the
/// peer a duplicate of the world), and even against odd ranks.
#[test]
fn uneven_and_interleaved_groups() {
    for n in [4, 5] {
        let j = run(job(n, Intercomm::Basic, &["uneven"]));
        j.expect(0, n, "");
    }
    let j = run(job(5, Intercomm::Basic, &["interleaved"]));
    j.expect(0, 5, "");
}

/// Overlapping groups fail with `InvalidArgument` at every member of both
/// groups, also for a process in both groups that calls the operation on
/// each of them in turn; a clean creation works afterwards.
#[test]
fn overlapping_groups_fail_everywhere() {
    let j = run(job(3, Intercomm::OverlapSame, &[]));
    j.expect(0, 3, "");
    let j = run(job(4, Intercomm::OverlapPartial, &[]));
    j.expect(0, 4, "");
}

/// Argument errors are typed at the rank that checks them, and the
/// leader's own errors reach its members.
#[test]
fn argument_errors() {
    let j = run(job(4, Intercomm::BadArgs, &[]));
    j.expect(0, 4, "");
}

/// A group whose communicator was revoked before the call: `Revoked` at
/// every member of both groups.
#[test]
fn revoked_group_fails_both_sides() {
    let j = run(job(4, Intercomm::Revoked, &[]));
    j.expect(0, 4, "");
}

/// The remote leader dies after the leaders' exchange, before its group
/// learned anything of the other side: every survivor of both groups
/// returns `ProcFailed`.
#[test]
fn leader_killed_after_the_exchange() {
    for n in [4, 8] {
        let j = killed(n, "halves", n / 2, "exchanged");
        assert_eq!(
            uniform(&j, n),
            format!("outcome=PROC_FAILED survivors={}", n - 1)
        );
    }
    // Rank 0 is the lone group of the uneven layout.
    let j = killed(5, "uneven", 0, "exchanged");
    assert_eq!(uniform(&j, 5), "outcome=PROC_FAILED survivors=4");
}

/// A leader dies before the exchange, or half-way through telling its
/// group about the other side.
#[test]
fn leader_killed_before_the_exchange_or_while_distributing() {
    let j = killed(4, "halves", 0, "enter");
    assert_eq!(uniform(&j, 4), "outcome=PROC_FAILED survivors=3");
    let j = killed(8, "halves", 0, "distributing");
    assert_eq!(uniform(&j, 8), "outcome=PROC_FAILED survivors=7");
}

/// A member that is not a leader dies before it could take part, or once
/// it knows everything but before committing.
#[test]
fn non_leader_killed_before_committing() {
    let j = killed(6, "halves", 4, "enter");
    assert_eq!(uniform(&j, 6), "outcome=PROC_FAILED survivors=5");
    for n in [4, 8] {
        let j = killed(n, "halves", 1, "received");
        assert_eq!(
            uniform(&j, n),
            format!("outcome=PROC_FAILED survivors={}", n - 1)
        );
    }
}

/// A member that dies right after committing: the creation succeeds at
/// every survivor, and the merge right after fails at every survivor.
#[test]
fn member_killed_after_committing() {
    let j = killed(4, "halves", 3, "committed");
    assert_eq!(uniform(&j, 4), "outcome=ok merge=PROC_FAILED survivors=3");
}

/// Every rank of 4 killed at every fault point, in two layouts: the
/// outcome is the same at every survivor each time, and it is the one the
/// point implies (a victim that never passes the point survives).
#[test]
fn every_rank_at_every_fault_point() {
    let n = 4;
    for layout in ["halves", "uneven"] {
        // World ranks of the leaders, with how many other members each has.
        let leaders = match layout {
            "halves" => [(0, n / 2 - 1), (n / 2, n - n / 2 - 1)],
            _ => [(0, 0), (n - 1, n - 2)],
        };
        for victim in 0..n {
            let leads = leaders.iter().find(|l| l.0 == victim).map(|l| l.1);
            for point in [
                "enter",
                "exchanged",
                "distributing",
                "received",
                "committed",
            ] {
                let dies = match point {
                    "exchanged" => leads.is_some(),
                    "distributing" => leads.is_some_and(|others| others >= 2),
                    "received" => leads.is_none(),
                    _ => true,
                };
                let j = killed(n, layout, victim, point);
                let got = uniform(&j, n);
                let want = match (dies, point) {
                    (false, _) => format!("outcome=ok merge=ok survivors={n}"),
                    (true, "committed") => {
                        format!("outcome=ok merge=PROC_FAILED survivors={}", n - 1)
                    }
                    (true, _) => format!("outcome=PROC_FAILED survivors={}", n - 1),
                };
                assert_eq!(got, want, "{layout}: rank {victim} at {point}");
            }
        }
    }
}

/// A rank killed at a random time (seeded) while the groups create,
/// merge and agree in a loop: every survivor stops at the same iteration
/// and step.
#[test]
fn random_kills_during_repeated_creations() {
    let mut rng = SplitMix64::new(0x1C0C);
    for n in [4, 6] {
        for _ in 0..4 {
            let victim = rng.below_mod(n as u64);
            let ms = 100 + rng.below_mod(200);
            let layout = ["halves", "uneven", "interleaved"][rng.below_mod(3) as usize];
            let j = run(job(n, Intercomm::Repeat, &["100000000", layout])
                .launcher_arg("--kill")
                .launcher_arg(&format!("{victim}@{ms}ms")));
            let what = format!("{n} ranks, {layout}, rank {victim} killed at {ms} ms");
            j.expect(0, n - 1, "");
            let stops: Vec<String> = j
                .stdout
                .lines()
                .filter(|l| l.starts_with("OK "))
                .map(|l| l.split_whitespace().skip(3).collect::<Vec<_>>().join(" "))
                .collect();
            assert!(
                stops.iter().all(|s| s == &stops[0]),
                "{what}: the survivors disagree:\n{}",
                j.stdout
            );
            assert!(
                !stops[0].starts_with("stop=none")
                    && stops[0].ends_with(&format!("survivors={}", n - 1)),
                "{what}: {}",
                stops[0]
            );
        }
    }
}

/// A join as the hierarchical mode of `pertinax-resilient` makes one (a
/// lone rank against the others, a message from their leader across, then
/// the merge), with the lone rank, the other group's leader or another
/// member of it killed right after committing: the receive from any source
/// at the lone rank may fail (`PROC_FAILED_PENDING`, also when the dead
/// member is not the sender), yet every survivor that calls the merge gets
/// `ProcFailed` from it, and none hangs. (A caller that skips the merge on
/// such a point-to-point error leaves the others waiting in it.)
#[test]
fn join_with_a_member_killed_after_committing() {
    for n in [3, 5] {
        for victim in [0, 1, n - 1] {
            let j = run(job(n, Intercomm::Join, &[])
                .launcher_arg("--kill")
                .launcher_arg(&format!("{victim}@comm.intercomm.committed#1")));
            let what = format!("{n} ranks, rank {victim} killed");
            j.expect(0, n - 1, "");
            let want = format!("outcome=ok merge=PROC_FAILED survivors={}", n - 1);
            for l in j.stdout.lines().filter(|l| l.starts_with("OK ")) {
                // "OK join rank=R outcome=ok merge=... survivors=K p2p=..."
                let f: Vec<&str> = l.split_whitespace().collect();
                assert!(
                    f.len() == 7
                        && f[3..6].join(" ") == want
                        && ["p2p=ok", "p2p=PROC_FAILED", "p2p=PROC_FAILED_PENDING"].contains(&f[6]),
                    "{what}: {l}\nstdout:\n{}\nstderr:\n{}",
                    j.stdout,
                    j.stderr
                );
            }
        }
    }
}
