//! The control protocol, driven by `pertinax-fake-rank`: bootstrap fences,
//! finalization, the hello check, failure publication, abort, launch time.

use std::time::Duration;

use pertinax_harness::{fake_rank, Outcome, Sandbox};

const BOUND: Duration = Duration::from_secs(30);

/// Runs `n` fake ranks with `flags`; rank `special`, if given, gets
/// `special_flags` instead.
fn run_fake(n: usize, flags: &[&str], special: Option<(usize, &[&str])>) -> Outcome {
    run_fake_with(&[], n, flags, special)
}

/// [`run_fake`] with launcher options `opts`.
fn run_fake_with(
    opts: &[&str],
    n: usize,
    flags: &[&str],
    special: Option<(usize, &[&str])>,
) -> Outcome {
    let sb = Sandbox::new();
    let n = n.to_string();
    let quote = |f: &[&str]| f.join(" ");
    let fake = fake_rank();
    let script = match special {
        None => format!("exec {fake} {}", quote(flags)),
        Some((r, special_flags)) => format!(
            "if [ $PERTINAX_RANK = {r} ]; then exec {fake} {}; else exec {fake} {}; fi",
            quote(special_flags),
            quote(flags)
        ),
    };
    let mut args = vec!["run", "-n", &n];
    args.extend_from_slice(opts);
    args.extend(["--", "sh", "-c", &script]);
    sb.run(&args, BOUND)
}

#[test]
fn fences_across_16_ranks_see_every_key() {
    let o = run_fake(16, &["--fences", "3"], None);
    assert_eq!(o.code, Some(0), "{o:?}");
    assert_eq!(o.stderr, "");
    for r in 0..16 {
        assert!(
            o.stdout
                .contains(&format!("fake-rank {r}: 3 fence(s) ok\n")),
            "{}",
            o.stdout
        );
    }
}

#[test]
fn exit_0_without_finalizing_is_reported() {
    let o = run_fake(2, &[], Some((1, &["--no-finalize"])));
    assert_eq!(o.code, Some(0), "{o:?}");
    let lines: Vec<&str> = o.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", o.stderr);
    assert!(
        lines[0].starts_with("pertinax: rank 1 (pid "),
        "{}",
        o.stderr
    );
    assert!(
        lines[0].contains("exited with code 0 without finalizing at "),
        "{}",
        o.stderr
    );
}

#[test]
fn a_hello_with_a_wrong_secret_is_dropped() {
    let o = run_fake(1, &["--bad-secret"], None);
    assert_eq!(o.code, Some(0), "{o:?}");
    assert_eq!(o.stdout, "fake-rank 0: EOF after hello\n");
}

#[test]
fn a_wrong_secret_does_not_hold_back_the_others() {
    let o = run_fake(3, &[], Some((2, &["--bad-secret"])));
    // The fake ranks 0 and 1 exit 10 when a key is missing.
    assert_eq!(o.code, Some(10), "{o:?}");
    assert!(
        o.stdout.contains("fake-rank 2: EOF after hello"),
        "{}",
        o.stdout
    );
    // Ranks 0 and 1 fenced; rank 2 never joined and ended, which completes
    // the fence without its key: the fake rank reports the missing key.
    assert!(o.stderr.contains("round0/rank2 missing"), "{}", o.stderr);
}

#[test]
fn a_failure_is_published_to_the_survivors() {
    // --keep-going: failing fast, the launcher may stop rank 0 before it
    // prints what it saw.
    let o = run_fake_with(
        &["--keep-going"],
        2,
        &["--watch", "1"],
        Some((1, &["--exit", "3"])),
    );
    assert_eq!(o.code, Some(3), "{o:?}");
    assert!(
        o.stdout.contains("fake-rank 0: saw slot 1 fail"),
        "{}",
        o.stdout
    );
    assert!(o.stderr.contains("rank 1 (pid "), "{}", o.stderr);
    assert!(o.stderr.contains("exited with code 3"), "{}", o.stderr);
}

#[test]
fn abort_ends_the_job_with_its_code() {
    let o = run_fake(3, &["--wait-shutdown"], Some((1, &["--abort", "5"])));
    assert_eq!(o.code, Some(5), "{o:?}");
    assert!(
        o.stderr
            .contains("pertinax: rank 1 aborted the job (code 5): fake-rank 1 gives up"),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr.contains("ranks still running were terminated"),
        "{}",
        o.stderr
    );
}

#[test]
fn launch_of_16_fake_ranks_is_quick() {
    let sb = Sandbox::new();
    let fake = fake_rank();
    let o = sb.run(&["run", "-n", "16", "--", &fake], BOUND);
    assert_eq!(o.code, Some(0), "{o:?}");
    println!(
        "pertinax run -n 16 of fake ranks (debug build, under test load): {:?}",
        o.elapsed
    );
    assert!(o.elapsed < Duration::from_secs(5), "{:?}", o.elapsed);
}
