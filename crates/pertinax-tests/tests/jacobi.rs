//! A user-shaped program under real kills: the 2-D Jacobi solver with
//! buddy checkpoints of `jacobi-ranks`, which recovers by
//! `replace_failed_with` (the replacements learn the checkpoint's
//! iteration from the survivors' values). Each job must finish with every
//! rank's `OK`, rank 0's result bitwise equal to the sequential solver's
//! (computed by the program itself), the same checksum as a job without
//! failures, and every survivor listing the ranks that were replaced.
//! Spares and new processes are both used.

use pertinax_harness::{run, Job, Spec};

const N: usize = 5;
/// Rows per rank, columns, iterations, checkpoint interval.
const SHAPE: [&str; 4] = ["16", "48", "120", "10"];

fn jacobi(kills: &[&str], spares: usize) -> Job {
    let mut spec = Spec::new(N, &SHAPE)
        .program(std::path::PathBuf::from(env!("CARGO_BIN_EXE_jacobi-ranks")))
        .bound(60)
        .launcher_arg("--spares")
        .launcher_arg(&spares.to_string());
    for k in kills {
        spec = spec.launcher_arg("--kill").launcher_arg(k);
    }
    run(spec.protocol_mix_by_faults())
}

/// Checks a job: every rank finished, rank 0 saw a bitwise-equal result;
/// returns (checksum, the replaced ranks the original survivors list).
fn checked(j: &Job, kills: usize, what: &str) -> (String, Vec<String>) {
    j.expect(0, N, what);
    assert_eq!(
        j.stderr.matches("(injected").count(),
        kills,
        "{what}: not every kill landed\n{}",
        j.stderr
    );
    let sums: Vec<&str> = j
        .stdout
        .lines()
        .filter_map(|l| l.split("bitwise-equal checksum=").nth(1))
        .filter_map(|l| l.split(' ').next())
        .collect();
    assert_eq!(sums.len(), 1, "{what}: rank 0's check\n{}", j.stdout);
    let replaced: Vec<String> = j
        .stdout
        .lines()
        .filter(|l| l.contains("role=original"))
        .filter_map(|l| l.split("replaced=").nth(1))
        .map(str::to_string)
        .collect();
    (sums[0].to_string(), replaced)
}

/// The checksum of the job without failures.
fn reference() -> String {
    let j = jacobi(&[], 0);
    let (sum, replaced) = checked(&j, 0, "no failure");
    assert!(replaced.iter().all(|r| r == "[]"), "{}", j.stdout);
    sum
}

/// Runs each case with `--spares` 0 and `spares`, checks it against the
/// reference, and that every original survivor lists `want` as replaced.
fn cases(list: &[(&[&str], &str)], spares: usize) {
    let want_sum = reference();
    for (kills, want) in list {
        for k in [0, spares] {
            let what = format!("kills {kills:?} spares {k}");
            let j = jacobi(kills, k);
            let (sum, replaced) = checked(&j, kills.len(), &what);
            assert_eq!(sum, want_sum, "{what}: another result\n{}", j.stdout);
            assert!(!replaced.is_empty(), "{what}: no original survived");
            assert!(
                replaced.iter().all(|r| r == want),
                "{what}: survivors list {replaced:?}, want {want}\n{}",
                j.stdout
            );
            if k > 0 {
                assert!(
                    j.stdout.contains("role=replacement(spare)"),
                    "{what}: no spare used\n{}",
                    j.stdout
                );
            } else {
                assert!(
                    !j.stdout.contains("role=replacement(spare)"),
                    "{what}\n{}",
                    j.stdout
                );
            }
        }
    }
}

/// One death in the middle of a segment.
#[test]
fn one_death() {
    cases(&[(&["2@iter#37"], "[2]"), (&["4@ckpt#3"], "[4]")], 1);
}

/// Two deaths per run: one after the other (two recoveries), and at the
/// same iteration (one recovery replacing both).
#[test]
fn two_deaths() {
    cases(
        &[
            (&["1@iter#25", "3@iter#90"], "[1, 3]"),
            (&["1@iter#40", "3@iter#40"], "[1, 3]"),
        ],
        2,
    );
}

/// Deaths inside the recovery itself: a survivor dies in the restore
/// (the program's `restore` point), when entering the replacement's
/// agreement (`ft.agree.enter`, the 5th agreement is the first
/// replacement's), right after contributing to it (`ft.agree.contributed`),
/// and the rank that asks the launcher for processes dies just before
/// asking (`ft.replace.request`).
#[test]
fn deaths_inside_the_recovery() {
    cases(
        &[
            (&["2@iter#37", "0@restore#1"], "[0, 2]"),
            (&["2@iter#37", "4@ft.agree.enter#5"], "[2, 4]"),
            (&["2@iter#37", "4@ft.agree.contributed#5"], "[2, 4]"),
            (&["2@iter#37", "0@ft.replace.request#1"], "[0, 2]"),
        ],
        2,
    );
}

/// A sweep of two-death plans: the first victim dies in an iteration, the
/// second (never its buddy or the rank it backs up, which the buddy scheme
/// cannot survive together) at one of the program's points or inside the
/// library's agreement, so that it often dies inside the first recovery;
/// spares none, one or two. Every job must give the reference result.
/// `PERTINAX_JACOBI_RUNS` sets the number of jobs (12 by default).
#[test]
fn two_death_sweep() {
    let runs: u64 = pertinax_harness::env_count(pertinax_wire::env::test::JACOBI_RUNS, 12);
    let want_sum = reference();
    let points = [
        "iter",
        "ckpt",
        "restore",
        "ft.agree.enter",
        "ft.agree.contributed",
    ];
    let t = std::time::Instant::now();
    for i in 0..runs {
        let v1 = (i % N as u64) as usize;
        let v2 = (v1 + 2 + (i / N as u64 % 2) as usize) % N;
        let h1 = 5 + (i * 37) % 100;
        let point = points[(i / 2 % points.len() as u64) as usize];
        // The 12th agreement is the last one: die before it.
        let h2 = match point {
            "iter" => 1 + (i * 53) % 110,
            "restore" => 1,
            _ => 1 + (i * 7) % 10,
        };
        let kills = [format!("{v1}@iter#{h1}"), format!("{v2}@{point}#{h2}")];
        let kills: Vec<&str> = kills.iter().map(String::as_str).collect();
        let spares = (i % 3) as usize;
        let what = format!("job {i}: kills {kills:?} spares {spares}");
        let j = jacobi(&kills, spares);
        let (sum, replaced) = checked(&j, 2, &what);
        assert_eq!(sum, want_sum, "{what}: another result\n{}", j.stdout);
        let mut want = [v1, v2];
        want.sort_unstable();
        let want = format!("{want:?}");
        assert!(
            !replaced.is_empty() && replaced.iter().all(|r| *r == want),
            "{what}: survivors list {replaced:?}, want {want}\n{}",
            j.stdout
        );
    }
    eprintln!(
        "two_death_sweep: {runs} jobs, 0 hangs, 0 wrong answers, {:.1} s",
        t.elapsed().as_secs_f64()
    );
}
