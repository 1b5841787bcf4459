//! A rank that dies never leaves the others hanging, and nothing is left
//! behind.

mod common;
use common::{run, run_with, shm_leftovers, wait_file, Spec};

#[test]
fn a_crashing_peer_gives_proc_failed_not_a_hang() {
    let j = run(Spec::new(3, &["peerdeath"]).bound(30));
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
    let j = run(Spec::new(3, &["peerdeath"])
        .launcher_arg("--resilient")
        .bound(30));
    assert_eq!(j.code, Some(0), "{}", j.stderr);
    assert_eq!(j.oks(), 2, "{}\n{}", j.stdout, j.stderr);
    assert!(
        j.stderr.contains("rank 2") && j.stderr.contains("SIGABRT"),
        "{}",
        j.stderr
    );
    let j = run(Spec::new(1, &["peerdeath"])
        .launcher_arg("--resilient")
        .bound(30));
    assert_eq!(j.code, Some(134), "the only rank died: {}", j.stderr);
}

#[test]
fn sigkill_of_a_rank_reaches_blocked_receivers() {
    for n in [2, 4, 8] {
        let j = run_with(
            Spec::new(n, &["victim", "victim.pid"]).bound(30),
            |dir, _| {
                let pid = wait_file(&dir.join("victim.pid"), 20);
                std::thread::sleep(std::time::Duration::from_millis(100));
                let st = std::process::Command::new("kill")
                    .arg("-9")
                    .arg(pid.trim())
                    .status()
                    .expect("kill");
                assert!(st.success());
            },
        );
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
    let j = run_with(Spec::new(4, &["hang"]).bound(30), |dir, launcher| {
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
