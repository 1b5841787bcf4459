//! Point-to-point and communicator behaviour of real jobs.

use pertinax_harness::{run, Job, Spec};
use pertinax_tests::scenario::P2p;

/// The rank program of these tests.
fn p2p_ranks() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_BIN_EXE_p2p-ranks"))
}

/// A job of `n` ranks of `p2p-ranks SCENARIO ARGS`.
fn spec(n: usize, scenario: P2p, args: &[&str]) -> Spec<'static> {
    Spec::scenario(n, scenario, args).program(p2p_ranks())
}

/// `n` ranks of `scenario` with `args`, every rank OK.
fn check(n: usize, scenario: P2p, args: &[&str]) -> Job {
    pertinax_harness::check(spec(n, scenario, args))
}

#[test]
fn pingpong_every_size_and_protocol() {
    check(2, P2p::Pingpong, &[]);
    for large in ["stream", "cma"] {
        run(spec(2, P2p::Pingpong, &[]).env(pertinax_wire::env::tune::LARGE, large)).assert_ok(2);
    }
    run(spec(2, P2p::Pingpong, &[])
        .env(pertinax_wire::env::tune::CMA, "0")
        .env(pertinax_wire::env::tune::LARGE, "cma"))
    .assert_ok(2);
}

#[test]
fn ring_at_many_sizes_including_oversubscribed() {
    for n in [1, 3, 5, 16] {
        check(n, P2p::Ring, &["20"]);
    }
    check(64, P2p::Ring, &["3"]);
}

#[test]
fn any_source_fan_in_keeps_per_sender_order() {
    check(4, P2p::Fanin, &["5000"]);
    check(16, P2p::Fanin, &["200"]);
}

/// Over a million messages of 0 B to 4 MiB between all pairs, every byte
/// and the order per sender checked, on both large-message protocols.
#[test]
fn ordering_under_load() {
    let j = check(4, P2p::Order, &["85000", "11"]);
    eprintln!("1.02 M messages (4 ranks, stream) in {:?}", j.elapsed);
    run(spec(3, P2p::Order, &["4000", "12"]).env(pertinax_wire::env::tune::LARGE, "cma"))
        .assert_ok(3);
    run(spec(3, P2p::Order, &["2000", "13"])
        .env(pertinax_wire::env::tune::CMA, "0")
        .env(pertinax_wire::env::tune::LARGE, "cma"))
    .assert_ok(3);
    run(spec(8, P2p::Order, &["300", "14"])
        .launcher_arg("--ring-bytes")
        .launcher_arg("8192"))
    .assert_ok(8);
}

#[test]
fn dup_split_create_are_isolated() {
    for n in [2, 4, 7] {
        check(n, P2p::Isolation, &[]);
    }
    check(64, P2p::Isolation, &[]);
}

#[test]
fn bad_input_gives_typed_errors() {
    check(3, P2p::Badinput, &[]);
    check(1, P2p::Badinput, &[]);
}

#[test]
fn probe_sendrecv_values_wait_any() {
    check(4, P2p::Misc, &[]);
    check(1, P2p::Misc, &[]);
}

#[test]
fn singleton_without_launcher() {
    for scenario in [P2p::Ring, P2p::Misc, P2p::Badinput, P2p::Isolation] {
        let out = std::process::Command::new(p2p_ranks())
            .arg(scenario.as_str())
            .env_remove(pertinax_wire::env::RANK)
            .output()
            .expect("run the rank program alone");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains(&format!("OK {scenario} rank=0")),
            "{scenario}: {stdout} {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Arguments only the root checks, wrong at the root alone: the root
/// reports them and nobody is left waiting.
#[test]
fn root_only_argument_errors_leave_nobody_waiting() {
    for n in [2, 3, 5] {
        run(spec(n, P2p::Rootargs, &[]).bound(60)).assert_ok(n);
    }
}
