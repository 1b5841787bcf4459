//! `pertinax-stencil` (the 3-D seven-point stencil of `pertinax-apps`,
//! with LULESH's six-face halo exchange, its iterations run by
//! `pertinax-msglog` with the default options) through the real launcher,
//! without failures, on several rank counts: every job must end with rank
//! 0's one line `stencil ... verified=true` (each rank compared its block
//! bitwise with the one-process run) and exit 0, and the whole field's
//! checksum must not depend on the number of ranks. Every job is bounded,
//! and the harness checks that none of its processes survives it. The
//! program is built on first use (see `pertinax-harness`). The kill tests
//! are in `tests/msglog.rs`.

use pertinax_harness::{run, Program, Spec};
use pertinax_tests::field;

/// Runs `pertinax-stencil args` on `ranks` ranks; checks the exit status
/// and the summary line (the only line of stdout), and returns its
/// `KEY=VALUE` fields.
fn check(ranks: usize, args: &str) -> Vec<(String, String)> {
    let program = Program::bin("pertinax-apps", "pertinax-stencil").path();
    let args: Vec<&str> = args.split_whitespace().collect();
    let j = run(Spec::new(ranks, &args).program(program).bound(60));
    let f = pertinax_tests::verified_summary(&j, "stencil ", j.code == Some(0));
    assert_eq!(field(&f, "ranks"), ranks.to_string(), "{f:?}");
    assert_eq!(field(&f, "rollback"), "none", "{f:?}");
    assert_eq!(field(&f, "recoveries"), "0", "{f:?}");
    f
}

/// The same checksum on every rank count in `ranks`.
fn check_same_field(ranks: &[usize], args: &str) {
    let sums: Vec<(usize, String)> = ranks
        .iter()
        .map(|&n| (n, field(&check(n, args), "checksum").to_string()))
        .collect();
    assert!(
        sums.iter().all(|(_, s)| *s == sums[0].1),
        "{args:?}: {sums:?}"
    );
}

#[test]
fn default_grid_on_1_2_4_8_ranks() {
    check_same_field(&[1, 2, 4, 8], "");
}

#[test]
fn uneven_grid_on_3_and_6_ranks() {
    // Axes that the process grid does not divide, and a 3 x 2 x 1 grid.
    check_same_field(&[1, 3, 6], "--nx 17 --ny 13 --nz 11 --iters 12");
}
