//! A process dies while a message is between two processes: on every
//! protocol (eager, streamed rendezvous, single copy), with every kind of
//! receive, and at fault points inside the protocols, no survivor hangs,
//! none takes a partial message for a whole one, and each ends with the
//! victim's failure (rank program: `midtransfer-ranks`).
//!
//! Jobs per case in CI are few; the goal run is
//! `PERTINAX_MIDTRANSFER_RUNS=1000 cargo test --release -p pertinax-tests
//! --test midtransfer -- --nocapture`, which prints a summary line per case
//! (10 jobs per case by default, 2 on MPI).

use std::time::Duration;

use pertinax_harness::{kill_rank, on_mpi, run, run_with, wait_file, Job, Spec};
use pertinax_tests::scenario::Midtransfer;
use pertinax_wire::rng::SplitMix64;

fn program() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_BIN_EXE_midtransfer-ranks"))
}

/// Jobs per case: `PERTINAX_MIDTRANSFER_RUNS`, or 10 (2 on MPI, where a
/// job takes about a second to start).
fn runs() -> u64 {
    pertinax_harness::env_count("PERTINAX_MIDTRANSFER_RUNS", if on_mpi() { 2 } else { 10 })
}

/// The large-message protocols a case runs on: the native engine's
/// streamed rendezvous and single copy (`PERTINAX_LARGE`), or on MPI
/// whatever Open MPI chooses.
fn protocols() -> &'static [&'static str] {
    if on_mpi() {
        &["mpi"]
    } else {
        &["stream", "cma"]
    }
}

fn spec<'a>(n: usize, scenario: Midtransfer, args: &[&str], protocol: &str) -> Spec<'a> {
    let s = Spec::scenario(n, scenario, args)
        .program(program())
        .bound(40);
    if protocol == "mpi" {
        s
    } else {
        s.env("PERTINAX_LARGE", protocol)
    }
}

/// Checks one job: every survivor printed `OK` with an error class in
/// `classes`, and nobody printed `FAIL` or ran past the bound.
fn check_job(j: &Job, survivors: &[usize], classes: &[&str], what: &str) {
    assert!(
        j.code.is_some() && !j.stdout.lines().any(|l| l.starts_with("FAIL")),
        "{what}: code {:?}\n{}\n{}",
        j.code,
        j.stdout,
        j.stderr
    );
    for &r in survivors {
        let lines = j.rank_lines("OK", r);
        assert_eq!(
            lines.len(),
            1,
            "{what}: rank {r}\n{}\n{}",
            j.stdout,
            j.stderr
        );
        let class = lines[0].rsplit("err=").next().unwrap_or("");
        assert!(
            classes.contains(&class),
            "{what}: rank {r} ended with {class}, not one of {classes:?}\n{}",
            j.stdout
        );
    }
}

/// `runs` jobs of `scenario` with `args` on `n` ranks, each with `victim`
/// SIGKILLed from outside a seeded 0-30 ms after it initialized.
fn timed_kills(
    n: usize,
    scenario: Midtransfer,
    args: &[&str],
    victim: usize,
    survivors: &[usize],
    classes: &[&str],
) {
    for protocol in protocols() {
        let count = runs();
        // Seeded by the number of words after the program (the scenario
        // and its arguments).
        let words = 1 + args.len() as u64;
        let mut rng = SplitMix64::new(0x6d69_6474 ^ words ^ victim as u64);
        let t = std::time::Instant::now();
        for i in 0..count {
            let delay = rng.below_mod(31);
            let what = format!(
                "{protocol}: {scenario} {} on {n} ranks, rank {victim} killed {delay} ms after its start (job {i})",
                args.join(" ")
            );
            let j = run_with(spec(n, scenario, args, protocol), |dir, launcher| {
                wait_file(&dir.join(format!("ready.{victim}")), 30);
                std::thread::sleep(Duration::from_millis(delay));
                kill_rank(launcher, victim, Duration::from_secs(10));
            });
            check_job(&j, survivors, classes, &what);
        }
        eprintln!(
            "midtransfer: {protocol} {scenario} {} n={n} victim={victim}: {count} jobs in {:.1} s, 0 hangs, 0 wrong answers",
            args.join(" "),
            t.elapsed().as_secs_f64()
        );
    }
}

/// Sizes across the eager limit (32 KiB): one eager, three large.
const SIZES: [&str; 4] = ["16384", "33792", "65536", "1048576"];

#[test]
fn a_sender_killed_mid_message_fails_every_kind_of_receive() {
    for size in SIZES {
        for how in ["recv", "irecv", "probe", "vec"] {
            timed_kills(2, Midtransfer::P2p, &[size, how], 0, &[1], &["PROC_FAILED"]);
        }
        timed_kills(
            2,
            Midtransfer::P2p,
            &[size, "any"],
            0,
            &[1],
            &["PENDING", "PROC_FAILED"],
        );
    }
}

#[test]
fn a_receiver_killed_mid_message_fails_the_send() {
    for size in SIZES {
        timed_kills(
            2,
            Midtransfer::P2p,
            &[size, "recv"],
            1,
            &[0],
            &["PROC_FAILED"],
        );
    }
}

#[test]
fn a_sixteen_mebibyte_message_whose_sender_dies() {
    timed_kills(
        2,
        Midtransfer::P2p,
        &["16777216", "recv"],
        0,
        &[1],
        &["PROC_FAILED"],
    );
}

#[test]
fn a_member_killed_during_large_broadcasts() {
    for size in ["65536", "1048576"] {
        for how in ["blocking", "nonblocking"] {
            timed_kills(
                4,
                Midtransfer::Bcast,
                &[size, how],
                2,
                &[0, 1, 3],
                &["PROC_FAILED"],
            );
        }
    }
}

/// Kills at the fault points inside the native protocols: the sender
/// after its RTS is out (`p2p.rts`) and after each fragment
/// (`p2p.frag`), the receiver after its CTS (`p2p.cts`), after each
/// fragment it took (`p2p.frag.recv`) and before a single-copy read
/// (`p2p.pull`).
#[test]
fn kills_at_the_protocols_fault_points() {
    if on_mpi() {
        // Open MPI's protocols have no pertinax fault points; the timed
        // kills above cover them.
        return;
    }
    let cases: &[(&str, &str, usize, &[u64])] = &[
        ("stream", "p2p.rts", 0, &[1, 2, 5]),
        ("stream", "p2p.frag", 0, &[1, 2, 7, 40]),
        ("stream", "p2p.cts", 1, &[1, 3]),
        ("stream", "p2p.frag.recv", 1, &[1, 2, 9]),
        ("cma", "p2p.rts", 0, &[1, 4]),
        ("cma", "p2p.pull", 1, &[1, 3]),
    ];
    for &(protocol, point, victim, hits) in cases {
        for &hit in hits {
            for size in ["65536", "1048576"] {
                let survivor = 1 - victim;
                let kill = format!("{victim}@{point}#{hit}");
                let what = format!("{protocol}: p2p {size}, --kill {kill}");
                let j = run(spec(2, Midtransfer::P2p, &[size, "recv"], protocol)
                    .launcher_arg("--kill")
                    .launcher_arg(&kill));
                check_job(&j, &[survivor], &["PROC_FAILED"], &what);
                assert_eq!(j.code, Some(0), "{what}: an injected kill\n{}", j.stderr);
                assert!(
                    j.stderr.contains(&format!("point {point}")),
                    "{what}: the kill was not at {point}\n{}",
                    j.stderr
                );
            }
        }
    }
}

/// Buffered sends of every size return before their receivers post: every
/// rank sends to every other, then a barrier, then receives.
#[test]
fn buffered_sends_do_not_wait_for_their_receivers() {
    for protocol in protocols() {
        for size in ["16", "65536", "1048576"] {
            let what = format!("{protocol}: bsend {size} on 4 ranks");
            let j = run(spec(4, Midtransfer::Bsend, &[size], protocol));
            assert_eq!(j.code, Some(0), "{what}\n{}\n{}", j.stdout, j.stderr);
            assert_eq!(j.oks(), 4, "{what}\n{}\n{}", j.stdout, j.stderr);
        }
    }
}
