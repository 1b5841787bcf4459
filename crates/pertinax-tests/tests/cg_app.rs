//! `pertinax-cg` (NPB CG of `pertinax-apps`, the MPI version's grid and
//! point-to-point exchanges) through the real launcher, without failures:
//! on the world communicator (`--plain`), class S on 1, 2, 4 and 8 ranks
//! (square and 1 x 2 / 2 x 4 grids) and class W on 4 must end with rank
//! 0's one line `cg ... verified=true` (zeta within NPB's 1e-10 of the
//! official value) and exit 0, and a second run gives bitwise the same
//! zeta; under `pertinax-msglog` (the default), class S on 2 and 4 ranks
//! gives bitwise the plain run's zeta, also when a rank is killed in the
//! middle of an iteration (recovered by a local rollback). Every job is bounded, and the harness
//! checks that none of its processes survives it. The program is built on
//! first use (see `pertinax-harness`). Class A is for manual runs.

use pertinax_harness::{run, Program, Spec};
use pertinax_tests::field;

/// Runs `pertinax-cg CLASS [--plain]` on `ranks` ranks; checks the exit status and
/// the summary line (the only line of stdout), and returns its
/// `KEY=VALUE` fields.
fn check(ranks: usize, class: &str, plain: bool) -> Vec<(String, String)> {
    check_with(ranks, class, plain, None)
}

/// [`check`], with rank `victim.0` killed at its fault point `victim.1`
/// (`cg.iter#K`, `cg.step#K`): then rollback and recoveries are not
/// checked here.
fn check_with(
    ranks: usize,
    class: &str,
    plain: bool,
    victim: Option<(usize, &str)>,
) -> Vec<(String, String)> {
    let program = Program::bin("pertinax-apps", "pertinax-cg").path();
    let args: &[&str] = if plain { &[class, "--plain"] } else { &[class] };
    let mut spec = Spec::new(ranks, args).program(program).bound(60);
    let kill = victim.map(|(r, point)| format!("{r}@{point}"));
    if let Some(k) = &kill {
        spec = spec.launcher_arg("--kill").launcher_arg(k);
    }
    let j = run(spec);
    let f = pertinax_tests::verified_summary(&j, "cg ", j.code == Some(0));
    assert_eq!(field(&f, "class"), class, "{f:?}");
    assert_eq!(field(&f, "ranks"), ranks.to_string(), "{f:?}");
    if kill.is_none() {
        assert_eq!(field(&f, "rollback"), "none", "{f:?}");
        assert_eq!(field(&f, "recoveries"), "0", "{f:?}");
    }
    f
}

#[test]
fn class_s_verifies_on_1_2_4_8_ranks() {
    for ranks in [1, 2, 4, 8] {
        check(ranks, "S", true);
    }
}

#[test]
fn class_w_verifies_on_4_ranks_and_reruns_bitwise() {
    let first = check(4, "W", true);
    let again = check(4, "W", true);
    assert_eq!(
        field(&first, "zeta_bits"),
        field(&again, "zeta_bits"),
        "{first:?}\n{again:?}"
    );
}

#[test]
fn class_s_under_msglog_gives_the_plain_zeta() {
    for ranks in [2, 4] {
        let plain = check(ranks, "S", true);
        let logged = check(ranks, "S", false);
        assert_eq!(
            field(&plain, "zeta_bits"),
            field(&logged, "zeta_bits"),
            "{ranks} ranks\n{plain:?}\n{logged:?}"
        );
    }
}

#[test]
fn class_s_a_rank_killed_mid_iteration_is_rolled_back_locally() {
    // Rank 2 of 4 dies at inner step 100 (iteration 4 of 15, between
    // the checkpoints at 0 and 5): the others roll back at most their
    // current iteration and replay it from their logs.
    let plain = check(4, "S", true);
    let f = check_with(4, "S", false, Some((2, "cg.step#100")));
    assert_eq!(field(&f, "rollback"), "local", "{f:?}");
    assert_eq!(field(&f, "recoveries"), "1", "{f:?}");
    assert_eq!(field(&plain, "zeta_bits"), field(&f, "zeta_bits"), "{f:?}");
}

#[test]
fn a_class_or_rank_count_cg_cannot_run_fails() {
    let program = Program::bin("pertinax-apps", "pertinax-cg").path();
    // Not a power of two: every rank says why on stderr and exits 1.
    let j = run(Spec::new(3, &["S", "--plain"])
        .program(program.clone())
        .bound(30));
    assert!(
        j.code != Some(0) && j.stdout.is_empty() && j.stderr.contains("power-of-two"),
        "code {:?}\nstdout:\n{}\nstderr:\n{}",
        j.code,
        j.stdout,
        j.stderr
    );
    // An unknown class: clap's usage error (2) on the singleton.
    let out = std::process::Command::new(&program)
        .arg("B")
        .output()
        .expect("start pertinax-cg");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("expected S, W or A"),
        "{out:?}"
    );
}
