//! Non-blocking resilient collectives (`Resilient::scope`) with real jobs
//! and real kills: several requests outstanding at once, waited for in
//! different orders at different ranks, roots and non-roots killed before
//! posting, between post and wait and inside the wait (the program's fault
//! points, the layer's `res.nb.local` and `res.nb.repost`, the core's
//! agreements and revocation). Every survivor must check every result
//! against the contributors its outcome names and print the same digest.

use pertinax_harness::{run, Job, Spec};
use pertinax_tests::scenario::ResilientNb;
use pertinax_wire::rng::SplitMix64;

fn resilient_nb_ranks() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_BIN_EXE_resilient-nb-ranks"))
}

/// Policy under which a failed root is skipped (the program checks the
/// outcomes).
const IGNORE: &str = "bcast=ignore,scatter=ignore,recv=ignore";

/// Runs `resilient-nb-ranks rounds ROUNDS BATCH` on `n` ranks under `policy`
/// (`None`: the default, stop on a failed bcast root) with `--kill`s.
fn rounds(n: usize, rounds: u32, batch: u32, policy: Option<&str>, kills: &[String]) -> Job {
    let (r, b) = (rounds.to_string(), batch.to_string());
    let mut s = Spec::scenario(n, ResilientNb::Rounds, &[&r, &b])
        .program(resilient_nb_ranks())
        .bound(60)
        .launcher_arg("--resilient");
    if let Some(p) = policy {
        s = s.launcher_arg("--resilient-policy").launcher_arg(p);
    }
    for k in kills {
        s = s.launcher_arg("--kill").launcher_arg(k);
    }
    run(s.protocol_mix_by_faults())
}

/// Checks that the victims of `kills` (all reached) are reported failed
/// by every survivor.
fn reported(j: &Job, victims: &[usize], what: &str) {
    let want = format!("failed={victims:?}");
    let oks = j.stdout.lines().filter(|l| l.starts_with("OK ")).count();
    assert!(
        oks > 0 && j.stdout.lines().filter(|l| l.contains(&want)).count() == oks,
        "{what}: not every survivor reports {want}\n{}",
        j.stdout
    );
}

#[test]
fn without_failures_every_result_is_exact() {
    for (n, batch) in [(4, 1), (7, 4)] {
        let j = rounds(n, 16, batch, Some(IGNORE), &[]);
        j.agreed(n, &format!("{n} ranks, batch {batch}"));
        reported(&j, &[], "no failure");
    }
}

#[test]
fn errors_and_refusals() {
    let j = run(Spec::scenario(4, ResilientNb::Rules, &[])
        .program(resilient_nb_ranks())
        .bound(60)
        .launcher_arg("--resilient"));
    j.assert_ok(4);
    let j = run(Spec::scenario(3, ResilientNb::Log, &[])
        .program(resilient_nb_ranks())
        .bound(60)
        .launcher_arg("--resilient")
        .launcher_arg("--resilient-check")
        .launcher_arg("log"));
    j.assert_ok(3);
}

#[test]
fn a_failed_root_stops_a_posted_bcast_under_the_default_policy() {
    let j = run(Spec::scenario(5, ResilientNb::Stop, &[])
        .program(resilient_nb_ranks())
        .bound(60)
        .launcher_arg("--resilient"));
    j.expect(0, 4, "");
    assert_eq!(j.stdout.matches("sum=13").count(), 4, "{}", j.stdout);
}

/// Runs `resilient-nb-ranks early ROUNDS` on `n` ranks with `--kill`s (rank 3
/// among them) and checks it: rank 0 left with the policy's error, every
/// other rank not killed finished with the same total and reports ranks 0
/// and 3 failed. Returns the number of ranks that finished.
fn early(n: usize, kills: &[String]) -> usize {
    let mut s = Spec::scenario(n, ResilientNb::Early, &["10"])
        .program(resilient_nb_ranks())
        .bound(30)
        .launcher_arg("--resilient")
        .launcher_arg("--resilient-policy")
        .launcher_arg("recv=stop");
    for k in kills {
        s = s.launcher_arg("--kill").launcher_arg(k);
    }
    let j = run(s.protocol_mix_by_faults());
    let what = format!("{kills:?}: code {:?}\n{}\n{}", j.code, j.stdout, j.stderr);
    assert!(
        j.code == Some(0) && j.fails() == 0 && !j.stderr.contains("internal error"),
        "{what}"
    );
    assert!(
        j.stdout
            .contains("LEFT early rank=0: recv: rank 3 has failed"),
        "{what}"
    );
    let totals: Vec<&str> = j
        .stdout
        .lines()
        .filter(|l| l.starts_with("OK "))
        .inspect(|l| {
            let failed: Vec<usize> = l
                .split("failed=[")
                .nth(1)
                .and_then(|x| x.split(']').next())
                .unwrap_or("")
                .split(", ")
                .filter_map(|x| x.parse().ok())
                .collect();
            assert!(failed.contains(&0) && failed.contains(&3), "{l}: {what}");
        })
        .filter_map(|l| l.split("total=").nth(1))
        .collect();
    assert!(totals.windows(2).all(|w| w[0] == w[1]), "{what}");
    totals.len()
}

/// Issue 15, item 1, in a non-blocking scope: rank 0 returns from inside
/// the scope with `?` (its `recv` from the dead rank 3 stopped) while the
/// others post more requests in the same scope; they complete without it.
#[test]
fn an_early_return_inside_a_scope_does_not_hang_the_others() {
    for n in [4, 6] {
        assert_eq!(early(n, &["3@nb.early.start#1".to_string()]), n - 2);
    }
}

/// (ranks, kills): roots (round k's bcast root is k mod n, its reduce
/// root k + 1 mod n; three rounds per scope) and non-roots, before
/// posting, between posts, between post and wait, inside the wait, in
/// agreements, during a re-post and a revocation (those need a first
/// failure).
const KILLS: [(usize, &[&str]); 12] = [
    (4, &["2@nb.before.post#3"]),
    (6, &["1@nb.posted#7"]),
    (8, &["0@nb.compute#2"]),
    (5, &["4@nb.compute#5"]),
    (5, &["3@nb.waited#4"]),
    (6, &["4@res.nb.local#9"]),
    (4, &["0@res.nb.local#23"]),
    (7, &["6@ft.agree.enter#12"]),
    (4, &["1@ft.agree.contributed#5"]),
    (8, &["2@nb.compute#2", "5@res.nb.repost#3"]),
    (5, &["2@nb.posted#4", "3@ft.revoke.partial#1"]),
    (6, &["5@nb.before.post#6", "0@nb.after.scope#2"]),
];

#[test]
fn survivors_agree_after_kills_at_every_stage() {
    for (n, kills) in KILLS {
        let ks: Vec<String> = kills.iter().map(|k| k.to_string()).collect();
        let mut victims: Vec<usize> = kills
            .iter()
            .filter_map(|k| k.split('@').next()?.parse().ok())
            .collect();
        victims.sort_unstable();
        let what = kills.join(" ");
        let j = rounds(n, 24, 3, Some(IGNORE), &ks);
        j.agreed(n - victims.len(), &what);
        reported(&j, &victims, &what);
        // The default policy: a dead bcast root stops that request, at
        // every survivor alike.
        let j = rounds(n, 24, 3, None, &ks);
        j.agreed(n - victims.len(), &format!("{what} (stop)"));
    }
}

#[test]
fn kills_inside_the_core_operations() {
    // Time-based kills land anywhere, mostly inside the core's operations
    // and agreements; 400 rounds take longer than the latest kill.
    for (i, (n, t)) in [(4, 5), (6, 12), (8, 20), (5, 30)].into_iter().enumerate() {
        let victim = (i * 3 + 1) % n;
        let kill = format!("{victim}@{t}ms");
        for policy in [Some(IGNORE), None] {
            let j = rounds(n, 400, 1 + i as u32, policy, std::slice::from_ref(&kill));
            let what = format!("{kill} {policy:?}");
            j.agreed(n - 1, &what);
            reported(&j, &[victim], &what);
        }
    }
}

/// Fault points and the hits they reach in a run of `rounds` rounds
/// (about; a hit that is never reached means no kill, which must work
/// too).
fn points(rounds: u64) -> [(&'static str, u64); 9] {
    [
        ("nb.before.post", rounds),
        ("nb.posted", 5 * rounds),
        ("nb.compute", rounds),
        ("nb.waited", 5 * rounds),
        ("nb.after.scope", rounds / 3),
        ("res.nb.local", 5 * rounds),
        ("ft.agree.enter", 6 * rounds),
        ("ft.agree.contributed", 6 * rounds),
        ("res.nb.repost", 12),
    ]
}

/// A seeded random campaign: per run, 4 to 8 ranks, one victim (any rank,
/// roots included) at a random hit of a random fault point, and in one run
/// of three a second victim (often at a point that only a repair reaches);
/// the policy alternates between ignore and the default (stop). One run in
/// four is instead the `early` program: rank 0 returns from inside a scope
/// with `?` after rank 3's death, and a second victim dies at a random hit
/// of the agreements and re-posts that follow.
/// `PERTINAX_RESNB_CAMPAIGN_RUNS` sets the number of runs (30 by default),
/// `PERTINAX_RESNB_CAMPAIGN_SEED` the first seed (1).
#[test]
fn randomized_campaign_has_no_hang_and_no_wrong_answer() {
    let runs = pertinax_harness::env_count(pertinax_wire::env::test::RESNB_CAMPAIGN_RUNS, 30);
    let first = pertinax_harness::env_count(pertinax_wire::env::test::RESNB_CAMPAIGN_SEED, 1);
    let rounds_per_run = 18;
    let t0 = std::time::Instant::now();
    let (mut hit_runs, mut dead) = (0, 0);
    for seed in first..first + runs {
        let mut m = SplitMix64::new(seed);
        let n = 4 + m.below_mod(5) as usize;
        let batch = 1 + m.below_mod(4) as u32;
        let pts = points(rounds_per_run);
        let mut kills = Vec::new();
        let mut victims = Vec::new();
        let count = if m.below_mod(3) == 0 { 2 } else { 1 };
        while victims.len() < count {
            let v = m.below_mod(n as u64) as usize;
            if victims.contains(&v) {
                continue;
            }
            let (p, max) = pts[m.below_mod(pts.len() as u64) as usize];
            kills.push(format!("{v}@{p}#{}", 1 + m.below_mod(max)));
            victims.push(v);
        }
        if seed % 4 == 0 {
            // An early return inside a scope (rank 0, after rank 3's death)
            // and a second victim anywhere in the repairs that follow.
            let v = 1 + m.below_mod(n as u64 - 1) as usize;
            let v = if v == 3 { 2 } else { v };
            let (p, max) = [
                ("ft.agree.enter", 30),
                ("res.nb.local", 20),
                ("res.nb.repost", 20),
                ("ft.agree.contributed", 30),
            ][m.below_mod(4) as usize];
            let kills = vec![
                "3@nb.early.start#1".to_string(),
                format!("{v}@{p}#{}", 1 + m.below_mod(max)),
            ];
            let done = early(n, &kills);
            dead += n - 1 - done;
            hit_runs += 1;
            continue;
        }
        let policy = (seed % 2 == 0).then_some(IGNORE);
        let j = rounds(n, rounds_per_run as u32, batch, policy, &kills);
        j.agreed(
            n - victims.len(),
            &format!(
                "seed {seed}: {n} ranks, batch {batch}, {kills:?}, policy {}",
                policy.unwrap_or("default")
            ),
        );
        let gone = n - j.oks();
        dead += gone;
        hit_runs += usize::from(gone > 0);
    }
    eprintln!(
        "resilient_nb campaign: {runs} runs from seed {first} in {:.1} s; {hit_runs} runs lost ranks, {dead} ranks killed in all",
        t0.elapsed().as_secs_f64()
    );
}
