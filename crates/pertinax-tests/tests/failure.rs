//! A rank that dies never leaves the others hanging, and nothing is left
//! behind.

use pertinax_harness::{run, run_with, shm_leftovers, wait_file, Spec};
use pertinax_tests::scenario::P2p;

/// The rank program of these tests.
fn p2p_ranks() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_BIN_EXE_p2p-ranks"))
}

/// A job of `n` ranks of `p2p-ranks SCENARIO ARGS`.
fn spec(n: usize, scenario: P2p, args: &[&str]) -> Spec<'static> {
    Spec::scenario(n, scenario, args).program(p2p_ranks())
}

#[test]
fn a_crashing_peer_gives_proc_failed_not_a_hang() {
    let j = run(spec(3, P2p::Peerdeath, &[]).bound(30));
    assert_eq!(j.code, Some(134), "{}", j.stderr);
    assert_eq!(j.oks(), 2, "{}\n{}", j.stdout, j.stderr);
    assert!(
        j.stderr.contains("rank 2") && j.stderr.contains("SIGABRT"),
        "{}",
        j.stderr
    );
}

/// With resilient communicators the survivors continue by design: a rank
/// that crashes on its own (not an injected fault, which never fails the
/// job) is reported, but the job exits 0 when the others exit 0; unless
/// every rank died.
#[test]
fn with_resilient_a_crashing_peer_does_not_fail_the_job() {
    let j = run(spec(3, P2p::Peerdeath, &[])
        .launcher_arg("--resilient")
        .bound(30));
    assert_eq!(j.code, Some(0), "{}", j.stderr);
    assert_eq!(j.oks(), 2, "{}\n{}", j.stdout, j.stderr);
    assert!(
        j.stderr.contains("rank 2") && j.stderr.contains("SIGABRT"),
        "{}",
        j.stderr
    );
    let j = run(spec(1, P2p::Peerdeath, &[])
        .launcher_arg("--resilient")
        .bound(30));
    assert_eq!(j.code, Some(134), "the only rank died: {}", j.stderr);
}

#[test]
fn sigkill_of_a_rank_reaches_blocked_receivers() {
    for n in [2, 4, 8] {
        let j = run_with(spec(n, P2p::Victim, &["victim.pid"]).bound(30), |dir, _| {
            let pid = wait_file(&dir.join("victim.pid"), 20);
            std::thread::sleep(std::time::Duration::from_millis(100));
            let st = std::process::Command::new("kill")
                .arg("-9")
                .arg(pid.trim())
                .status()
                .expect("kill");
            assert!(st.success());
        });
        assert_eq!(j.code, Some(137), "{}", j.stderr);
        assert_eq!(j.oks(), n - 1, "{}\n{}", j.stdout, j.stderr);
        assert!(
            j.stderr.contains(&format!("rank {}", n - 1)) && j.stderr.contains("SIGKILL"),
            "{}",
            j.stderr
        );
    }
    assert!(shm_leftovers().is_empty());
}

#[test]
fn sigkill_of_the_launcher_ends_every_rank() {
    let j = run_with(spec(4, P2p::Hang, &[]).bound(30), |dir, launcher| {
        // Let the ranks start, then kill the launcher.
        std::thread::sleep(std::time::Duration::from_millis(300));
        let _ = dir;
        std::process::Command::new("kill")
            .arg("-9")
            .arg(launcher.to_string())
            .status()
            .expect("kill");
    });
    // The harness already checked that no rank survived (within 2 s).
    assert_eq!(j.code, None, "killed by a signal");
    assert!(j.elapsed < std::time::Duration::from_secs(5));
}

/// Several ranks abort at once with long messages, and the launcher stops
/// the others (SIGTERM) while they may be writing theirs: every line of
/// the job's stderr is whole (one message, never two run together, never
/// a cut one with something else after it), and the job exits with the
/// abort's code.
#[test]
fn simultaneous_aborts_never_share_a_line() {
    const LEN: usize = 3000;
    let xs = "x".repeat(LEN);
    for (n, tag) in [(8, false), (8, true), (6, false)] {
        let mut spec = spec(n, P2p::Abortall, &[&LEN.to_string()]).bound(30);
        if tag {
            spec = spec.launcher_arg("--tag-output");
        }
        let j = run(spec);
        assert_eq!(j.code, Some(3), "{}", j.stderr);
        let mut aborted = 0;
        for line in j.stderr.lines() {
            // With tags, a rank's own line is "[R] pertinax: ...".
            let line = match line.strip_prefix('[') {
                Some(rest) if tag => rest.split_once("] ").map_or(line, |(_, l)| l),
                _ => line,
            };
            assert!(
                line.starts_with("pertinax: ") && line.matches("pertinax:").count() == 1,
                "a line with two messages or a cut one:\n{line}\n---\n{}",
                j.stderr
            );
            if let Some((head, xs_seen)) = line.split_once(" gives up: ") {
                let r = head.rsplit("rank ").next().unwrap_or_default();
                assert!(r.parse::<usize>().is_ok_and(|r| r < n), "{line}");
                assert!(xs_seen == xs, "a cut message: {line}");
            }
            if line.contains(" aborted the job (code 3): rank ") {
                aborted += 1;
            }
        }
        assert!(aborted >= 1, "{}", j.stderr);
        assert!(
            j.stderr.contains(" aborted the job (code 3) at ")
                && j.stderr.contains("; ranks still running were terminated"),
            "{}",
            j.stderr
        );
    }
}

/// A replacement (started by `replace_failed`, from a spare or as a new
/// process) is named by the launcher with the rank it calls itself: in the
/// summary `rank 2 (replacement, slot 4)`, and with `--tag-output`
/// `[2 (replacement, slot 4)] `. The kill plan of rank 2 struck the original
/// only: the replacement passes the same fault point and lives on.
#[test]
fn a_replacement_is_named_by_the_rank_it_calls_itself() {
    for spares in ["0", "1"] {
        let j = run(spec(4, P2p::Replacement, &["2"])
            .launcher_arg("--tag-output")
            .launcher_arg("--spares")
            .launcher_arg(spares)
            .launcher_arg("--kill")
            .launcher_arg("2@doomed#1")
            .bound(30));
        let ctx = format!("spares {spares}\n{}\n{}", j.stdout, j.stderr);
        assert_eq!(j.code, Some(3), "the replacement's code: {ctx}");
        for r in [0, 1, 3] {
            assert!(
                j.stdout
                    .contains(&format!("[{r}] OK replacement rank={r}\n")),
                "{ctx}"
            );
        }
        // What the process says of itself, and how the launcher tags it.
        assert!(
            j.stdout
                .contains("[2 (replacement, slot 4)] replacement rank=2 size=4\n"),
            "{ctx}"
        );
        assert!(
            j.stderr
                .contains("[2 (replacement, slot 4)] replacement rank=2 gives up\n"),
            "{ctx}"
        );
        // In the order the launcher reaped them, which need not be the
        // order of the deaths.
        let summary: Vec<&str> = j
            .stderr
            .lines()
            .filter(|l| l.starts_with("pertinax: "))
            .collect();
        assert_eq!(summary.len(), 2, "{ctx}");
        let original = |l: &&str| {
            l.starts_with("pertinax: rank 2 (pid ")
                && l.ends_with("(injected at hit 1 of point doomed)")
        };
        let replacement = |l: &&str| {
            l.starts_with("pertinax: rank 2 (replacement, slot 4) (pid ")
                && l.contains(") exited with code 3 at ")
        };
        assert!(summary.iter().any(original), "{ctx}");
        assert!(summary.iter().any(replacement), "{ctx}");
    }
}
