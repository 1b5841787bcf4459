//! Collectives of real jobs against a sequential reference: every
//! collective, communicator sizes 1 to 16, every root, counts from 0 to
//! over 1 MiB, several element types, built-in and user operations
//! (non-commutative ones included), overlapping non-blocking collectives
//! on several communicators, long runs, typed errors, and bitwise
//! reproducible floating point. The rank program is `collective-ranks`
//! (its module docs list the scenarios).

use pertinax_harness::{Job, Spec};
use pertinax_tests::scenario::Collective;

use std::path::PathBuf;

fn collective_ranks() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_collective-ranks"))
}

/// [`pertinax_harness::run`] with the collective rank program.
fn run(spec: Spec<'_>) -> Job {
    pertinax_harness::run(spec.program(collective_ranks()))
}

/// `n` ranks of `scenario` with `args`, every rank OK within `secs`.
fn check_in(n: usize, scenario: Collective, args: &[&str], secs: u64) -> Job {
    let j = run(Spec::scenario(n, scenario, args).bound(secs));
    j.assert_ok(n);
    j
}

fn check(n: usize, scenario: Collective, args: &[&str]) -> Job {
    check_in(n, scenario, args, 120)
}

/// Runs every job (so that one failure does not hide the next) and
/// panics with all failures: jobs where not every rank printed OK.
fn check_each(specs: Vec<Spec<'_>>) {
    let mut failed = Vec::new();
    for spec in specs {
        let (n, what) = (
            spec.ranks,
            format!("{:?} {:?} {:?}", spec.args, spec.env, spec.launcher_args),
        );
        let j = run(spec);
        if j.code != Some(0) || j.oks() != n {
            failed.push(format!(
                "{n} ranks {what}: code {:?}, {} of {n} OK\nstdout:\n{}\nstderr:\n{}",
                j.code,
                j.oks(),
                j.stdout,
                j.stderr.lines().take(40).collect::<Vec<_>>().join("\n")
            ));
        }
    }
    assert!(
        failed.is_empty(),
        "{} job(s) failed:\n\n{}",
        failed.len(),
        failed.join("\n\n")
    );
}

#[test]
fn every_collective_matches_the_reference_at_sizes_1_to_16() {
    let seeds: Vec<String> = (1..=16).map(|n| (100 + n).to_string()).collect();
    check_each(
        (1..=16)
            .map(|n| Spec::scenario(n, Collective::All, &[&seeds[n - 1], "world"]).bound(60))
            .collect(),
    );
}

#[test]
fn every_collective_on_split_and_self_communicators() {
    let mut specs: Vec<Spec> = [4, 5, 7, 12, 16]
        .into_iter()
        .map(|n| Spec::scenario(n, Collective::All, &[&format!("{}", 200 + n), "split"]).bound(60))
        .collect();
    specs.push(Spec::scenario(3, Collective::All, &["300", "self"]).bound(60));
    check_each(specs);
}

/// The same plan with other message protocols: single-copy and streamed
/// large messages, and eager limits below the collectives' small-message
/// path (a lower `PERTINAX_EAGER_LIMIT`, or the smaller rings that jobs of
/// more than 64 ranks get by default).
#[test]
fn every_collective_with_other_message_protocols() {
    check_each(vec![
        Spec::scenario(5, Collective::All, &["331", "world"])
            .env(pertinax_wire::env::tune::LARGE, "cma")
            .bound(60),
        Spec::scenario(3, Collective::All, &["332", "world"])
            .env(pertinax_wire::env::tune::LARGE, "stream")
            .bound(60),
        Spec::scenario(3, Collective::All, &["333", "world"])
            .env(pertinax_wire::env::tune::EAGER_LIMIT, "512")
            .bound(15),
        Spec::scenario(5, Collective::All, &["334", "world"])
            .launcher_arg("--ring-bytes")
            .launcher_arg("16384")
            .bound(15),
    ]);
}

/// A blocking allreduce whose message is above the eager limit but within
/// the straight-line small-message path (8 KiB): jobs of more than 64 ranks
/// have 16 KiB rings by default, hence an eager limit of 8088 bytes.
#[test]
fn allreduce_between_the_eager_limit_and_the_small_path_limit() {
    check_each(vec![
        Spec::scenario(65, Collective::Allreduce, &["1024"]).bound(60),
        Spec::scenario(2, Collective::Allreduce, &["1011"])
            .launcher_arg("--ring-bytes")
            .launcher_arg("16384")
            .bound(10),
        Spec::scenario(2, Collective::Allreduce, &["1012"])
            .launcher_arg("--ring-bytes")
            .launcher_arg("16384")
            .bound(10),
        Spec::scenario(3, Collective::Allreduce, &["100"])
            .env(pertinax_wire::env::tune::EAGER_LIMIT, "512")
            .bound(10),
    ]);
}

/// allgatherv with equal counts and displacements out of rank order, with
/// gaps, or with zero counts (power-of-two sizes take another algorithm).
#[test]
fn allgatherv_with_equal_counts_and_any_displacements() {
    let mut specs = Vec::new();
    for n in [3, 4, 8] {
        for layout in ["reversed", "gaps", "zeros"] {
            specs.push(Spec::scenario(n, Collective::Agv, &[layout]).bound(20));
        }
    }
    check_each(specs);
}

#[test]
fn large_counts_over_1_mib() {
    for n in [1, 2, 3, 5, 8, 16] {
        let seed = (400 + n).to_string();
        check(n, Collective::Large, &[&seed]);
    }
}

#[test]
fn non_commutative_and_user_ops() {
    for n in [1, 2, 3, 5, 7, 8, 12, 16] {
        let seed = (500 + n).to_string();
        check(n, Collective::Noncomm, &[&seed]);
    }
}

#[test]
fn overlapping_nonblocking_on_different_communicators() {
    for (n, iters) in [(2, 300), (3, 300), (5, 200), (8, 100), (16, 40)] {
        let seed = (600 + n).to_string();
        check(n, Collective::Overlap, &[&seed, &iters.to_string()]);
    }
    // The same with every message above 1 KiB going by rendezvous, and
    // with single-copy large messages.
    run(Spec::scenario(6, Collective::Overlap, &["611", "100"])
        .env(pertinax_wire::env::tune::EAGER_LIMIT, "1024"))
    .assert_ok(6);
    run(Spec::scenario(4, Collective::Overlap, &["612", "100"])
        .env(pertinax_wire::env::tune::LARGE, "cma"))
    .assert_ok(4);
}

/// Blocking collectives while a rank's receives (a large message, a
/// synchronous any-source one) and a non-blocking agreement that its peers
/// wait for are pending: they complete, and every value is right. On MPI
/// (`.ci/mpi-coll`) this needs the progress the backend runs inside MPI's
/// blocking collectives.
#[test]
fn blocking_collectives_while_receives_are_pending() {
    for n in [2, 3, 5] {
        check(n, Collective::Pending, &["20"]);
    }
}

/// 400 000 collectives on one pair of communicators cross the wrap of the
/// 18-bit collective sequence number carried in the tags.
#[test]
fn long_runs_back_to_back() {
    let j = check(4, Collective::Longrun, &["400000", "700"]);
    eprintln!("400 000 collectives on 4 ranks in {:?}", j.elapsed);
    check(7, Collective::Longrun, &["20000", "701"]);
    check(16, Collective::Longrun, &["4000", "702"]);
}

#[test]
fn bad_arguments_are_typed_errors() {
    for n in [1, 2, 3, 5, 16] {
        check_in(n, Collective::Badargs, &[], 60);
    }
}

/// Every rank's hash line of an `fp` job.
fn hashes(j: &Job) -> Vec<String> {
    let mut v: Vec<String> = j
        .stdout
        .lines()
        .filter(|l| l.starts_with("HASH "))
        .map(String::from)
        .collect();
    v.sort();
    v
}

/// Full-precision float sums and products: close to the rank-order
/// reference, bitwise the same on every rank, for every variant and root,
/// and across runs whose timing and message protocols differ.
#[test]
fn floating_point_results_are_bitwise_identical_and_repeatable() {
    for n in [3, 5, 12] {
        let seed = (800 + n).to_string();
        let first = check(n, Collective::Fp, &[&seed, "0"]);
        let want = hashes(&first);
        assert_eq!(want.len(), n, "{}", first.stdout);
        let runs = [
            Spec::scenario(n, Collective::Fp, &[&seed, "300"]),
            Spec::scenario(n, Collective::Fp, &[&seed, "100"])
                .env(pertinax_wire::env::tune::EAGER_LIMIT, "512"),
            Spec::scenario(n, Collective::Fp, &[&seed, "0"])
                .env(pertinax_wire::env::tune::LARGE, "cma"),
            Spec::scenario(n, Collective::Fp, &[&seed, "0"])
                .env(pertinax_wire::env::tune::LARGE, "stream"),
        ];
        for spec in runs {
            let env = format!("{:?} {:?}", spec.args, spec.env);
            let j = run(spec);
            j.assert_ok(n);
            assert_eq!(hashes(&j), want, "results differ between runs ({env})");
        }
    }
}

/// Receivers whose bcast buffer is larger than the root's get
/// `InvalidArgument`, the root finishes, and the communicator still works.
#[test]
fn bcast_receivers_expecting_more_get_invalid_argument() {
    for (n, bytes) in [(2, 64), (3, 64), (3, 40_000), (3, 1 << 20)] {
        check_in(n, Collective::Mismatch, &[&bytes.to_string(), "more"], 30);
    }
}

/// Receivers whose bcast buffer is smaller than the root's: documented as
/// `InvalidArgument` at the receivers; the root must not be left waiting.
#[test]
fn bcast_receivers_expecting_less_get_invalid_argument() {
    check_each(vec![
        Spec::scenario(3, Collective::Mismatch, &["64", "less"]).bound(10),
        Spec::scenario(2, Collective::Mismatch, &["40000", "less"]).bound(10),
        Spec::scenario(3, Collective::Mismatch, &["1048576", "less"]).bound(10),
    ]);
}

/// alltoallv where one block is above the pairwise threshold and the others
/// are tiny, so that the ranks see different largest blocks.
#[test]
fn alltoallv_with_a_single_large_block() {
    check_each(vec![
        Spec::scenario(2, Collective::Skew, &["20000"]).bound(10),
        Spec::scenario(3, Collective::Skew, &["20000"]).bound(10),
        Spec::scenario(4, Collective::Skew, &["100000"]).bound(10),
        Spec::scenario(8, Collective::Skew, &["1048576"]).bound(10),
    ]);
}
