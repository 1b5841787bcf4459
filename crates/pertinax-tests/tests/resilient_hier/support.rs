//! What the tests of `resilient_hier` share: the rank programs they run
//! ([`RankProgram`]), the policies, how a hierarchical job is started with
//! its kills ([`hier`]), and the checks of its output: the victims reported
//! ([`check_victims`]) and the survivors' trails of digests
//! ([`trails_agree`]).

use pertinax_harness::{run, Job, Scenarios, Spec};
use pertinax_tests::scenario::{Resilient, ResilientHier};

/// The rank program whose scenarios a scenario enum lists.
pub(super) trait RankProgram: Scenarios {
    fn program() -> std::path::PathBuf;
}

impl RankProgram for Resilient {
    fn program() -> std::path::PathBuf {
        std::path::PathBuf::from(env!("CARGO_BIN_EXE_resilient-ranks"))
    }
}

impl RankProgram for ResilientHier {
    fn program() -> std::path::PathBuf {
        std::path::PathBuf::from(env!("CARGO_BIN_EXE_resilient-hier-ranks"))
    }
}

/// Every failed root or peer skipped (`resilient-ranks` checks that).
pub(super) const IGNORE: &str = "bcast=ignore,scatter=ignore,recv=ignore";
/// Every operation stops on a failed root or peer.
pub(super) const STOP: &str = "bcast=stop,reduce=stop,gather=stop,scatter=stop,send=stop,recv=stop";

/// A hierarchical job of `n` ranks (local groups of `k`, or the default
/// `k` of equation 4 with `None`) running `scenario` of its program with
/// `args` under `policy` with the kills `kills`.
pub(super) fn hier<S: RankProgram>(
    scenario: S,
    args: &[&str],
    n: usize,
    k: Option<usize>,
    policy: &str,
    kills: &[String],
) -> Job {
    let mut s = Spec::scenario(n, scenario, args)
        .program(S::program())
        .bound(60)
        .launcher_arg("--resilient=hier")
        .launcher_arg("--resilient-threshold")
        .launcher_arg("4")
        .launcher_arg("--resilient-policy")
        .launcher_arg(policy);
    if let Some(k) = k {
        s = s.launcher_arg("--resilient-k").launcher_arg(&k.to_string());
    }
    for kill in kills {
        s = s.launcher_arg("--kill").launcher_arg(kill);
    }
    run(s.protocol_mix_by_faults())
}

/// The victims of `kills` that died (the launcher reports each), checked
/// against the `failed=` list of every survivor that did not leave early
/// (one that left knew only what it knew then); returns how many died.
pub(super) fn check_victims(j: &Job, kills: &[String], what: &str) -> usize {
    let mut dead: Vec<i32> = kills
        .iter()
        .filter_map(|k| k.split('@').next()?.parse().ok())
        .filter(|v| j.stderr.contains(&format!("rank {v} (pid")))
        .collect();
    dead.sort_unstable();
    dead.dedup();
    for l in j
        .stdout
        .lines()
        .filter(|l| l.starts_with("OK ") && !l.contains(" left="))
    {
        let failed = l
            .split("failed=[")
            .nth(1)
            .and_then(|x| x.split(']').next())
            .unwrap_or("");
        let failed: Vec<i32> = failed
            .split(", ")
            .filter_map(|x| x.trim().parse().ok())
            .collect();
        for v in &dead {
            assert!(
                failed.contains(v),
                "{what}: victim {v} not reported in {l}\n{}",
                j.stdout
            );
        }
    }
    dead.len()
}

pub(super) fn kills(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// The global members (master and deputy) of every group of `n` ranks in
/// groups of `k`.
pub(super) fn every_global(n: usize, k: usize) -> Vec<usize> {
    (0..n).filter(|o| o % k < 2).collect()
}

/// Checks a `resilient-hier-ranks outcomes` job in which ranks may return
/// early (`exit` ring): exit 0, no `FAIL`, no internal error, at least
/// `survivors` ranks printed `OK`; every rank's trail of per-collective
/// digests is a prefix of the longest one (every rank that completed a
/// collective got the same outcome from it), and every rank that did not
/// leave early completed all of them. Panics with the job's output.
pub(super) fn trails_agree(j: &Job, survivors: usize, what: &str) {
    let ctx = || format!("{what}: code {:?}\n{}\n{}", j.code, j.stdout, j.stderr);
    assert!(
        j.code == Some(0)
            && !j.stdout.contains("FAIL")
            && !j.stdout.contains("internal error")
            && !j.stderr.contains("internal error"),
        "{}",
        ctx()
    );
    let oks: Vec<&str> = j.stdout.lines().filter(|l| l.starts_with("OK ")).collect();
    assert!(oks.len() >= survivors, "{}: {} OK", ctx(), oks.len());
    let trail = |l: &str| -> Vec<String> {
        l.split("trail=")
            .nth(1)
            .and_then(|x| x.split(' ').next())
            .unwrap_or("")
            .split(',')
            .filter(|x| !x.is_empty())
            .map(str::to_string)
            .collect()
    };
    let longest = oks
        .iter()
        .map(|l| trail(l))
        .max_by_key(Vec::len)
        .unwrap_or_default();
    for l in &oks {
        let t = trail(l);
        assert!(
            longest.starts_with(&t),
            "{}: survivors disagree ({l})",
            ctx()
        );
        assert!(
            l.contains(" left=") || t.len() == longest.len(),
            "{}: a rank that did not leave stopped early ({l})",
            ctx()
        );
    }
}
