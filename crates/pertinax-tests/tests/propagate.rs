//! Error propagation (`pertinax-propagate`) with real jobs: every rank
//! gets the same error, whatever it was blocked in, and nobody hangs.

mod common;
use common::{run, Job, Spec};

fn propprog() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_BIN_EXE_pertinax-propprog"))
}

/// Runs `args` on `n` ranks and returns what each surviving rank saw; all
/// must have seen the same.
fn seen(n: usize, args: &[&str], code: i32, survivors: usize) -> (Job, String) {
    let j = run(Spec::new(n, args).program(propprog()).bound(60));
    assert!(
        j.code == Some(code) && j.oks() == survivors && !j.stdout.contains("FAIL"),
        "code {:?}, {} OK\n{}\n{}",
        j.code,
        j.oks(),
        j.stdout,
        j.stderr
    );
    let views: Vec<&str> = j
        .stdout
        .lines()
        .filter(|l| l.starts_with("OK "))
        .map(|l| l.split("seen=").nth(1).unwrap_or(""))
        .collect();
    assert!(
        views.windows(2).all(|w| w[0] == w[1]),
        "ranks disagree: {views:?}"
    );
    let v = views[0].to_string();
    (j, v)
}

#[test]
fn one_signaller_reaches_everyone() {
    let (_, v) = seen(4, &["one"], 0, 4);
    assert_eq!(v, "sig1:42:diverged");
}

#[test]
fn simultaneous_signallers_are_all_listed() {
    let (_, v) = seen(5, &["many"], 0, 5);
    // Both in one error, or (when one signal caught a rank before it
    // reached the step where it signals) one after the other; the same at
    // every rank either way.
    let mut all: Vec<&str> = v.split(['|', ',']).collect();
    all.sort_unstable();
    assert_eq!(all, ["sig1:1:from 1", "sig3:3:from 3"], "{v}");
}

#[test]
fn a_signal_interrupts_blocked_receives_and_collectives() {
    let (_, v) = seen(4, &["blocked"], 0, 4);
    assert_eq!(v, "sig1:9:stop");
}

#[test]
fn a_signal_reaches_waits_on_requests_and_awaited_futures() {
    // Round 1: a blocking wait on a guarded request; round 2: the same
    // request awaited as a future; round 3 (no error): a ring exchange and
    // an iallreduce through guarded requests, with checked data.
    let (_, v) = seen(4, &["nonblocking"], 0, 4);
    assert_eq!(v, "sig1:1:nb|sig2:2:nb");
}

#[test]
fn a_panic_inside_a_guard_corrupts_the_communicator_everywhere() {
    let (j, v) = seen(4, &["panic"], 101, 3);
    assert_eq!(v, "panic2:solver blew up|dead2");
    assert!(j.stderr.contains("solver blew up"), "{}", j.stderr);
    // The launcher's summary says which rank panicked, where, and why.
    let summary = j
        .stderr
        .lines()
        .find(|l| l.starts_with("pertinax: rank 2 (pid"))
        .unwrap_or("");
    assert!(
        summary.contains(") panicked at crates/pertinax-tests/src/bin/pertinax-propprog.rs:")
            && summary.ends_with(" s: solver blew up"),
        "{}",
        j.stderr
    );
}

#[test]
fn a_killed_rank_corrupts_the_communicator_everywhere() {
    let (_, v) = seen(4, &["kill"], 137, 3);
    assert_eq!(v, "dead2");
}

#[test]
fn a_hundred_signal_and_recover_cycles() {
    let (_, v) = seen(4, &["cycles", "100"], 0, 4);
    // Every cycle's signal was seen (some resolutions hold two).
    for s in 0..100 {
        assert!(
            v.contains(&format!(":{s}:cycle {s}")),
            "cycle {s} missing: {v}"
        );
    }
}

/// The paper's three situations, as runnable examples of
/// `pertinax-propagate` (built by `cargo test --workspace`).
#[test]
fn the_three_examples_recover_and_verify_their_results() {
    let dir = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent()?.parent().map(|d| d.join("examples")))
        .expect("target directory");
    for (name, want) in [
        ("local_recovery", "every global checksum verified"),
        ("krylov_restart", "with 1 restart(s)"),
        ("rollback", "final state verified on 4/4 ranks"),
    ] {
        let exe = dir.join(name);
        assert!(
            exe.exists(),
            "{} is missing: run `cargo test --workspace`",
            exe.display()
        );
        let j = run(Spec::new(4, &[]).program(exe).bound(60));
        assert!(
            j.code == Some(0) && j.stdout.contains(want) && j.stdout.contains("signalled"),
            "{name}: code {:?}\n{}\n{}",
            j.code,
            j.stdout,
            j.stderr
        );
    }
}
