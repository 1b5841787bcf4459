//! The applications of `pertinax-apps` (`pertinax-ep`, `pertinax-screen`)
//! through the real launcher, plain and with `--resilient` (flat, and
//! hierarchical: `--resilient=hier`), with ranks killed (SIGKILL) at chosen
//! points by the launcher's fault injection (`--kill RANK@POINT#1`; the
//! programs' fault points are listed in their documentation).
//!
//! The programs check their own results (the reporter recomputes the
//! survivors' work sequentially) and say so in one summary line; these
//! tests read that line and check it against what the kills must have
//! cost. The programs are built on first use (see `pertinax-harness`).

use pertinax_harness::{run, Job, Program, Spec};

use std::collections::HashMap;
use std::path::PathBuf;

/// A program of `pertinax-apps` (built on first use).
fn app(name: &'static str) -> PathBuf {
    Program::bin("pertinax-apps", name).path()
}

/// How a job runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Plain,
    /// `--resilient` with the default check (an agreement after every
    /// collective).
    Resilient,
    /// `--resilient --resilient-check log` (the replay log; for programs
    /// whose ranks meet only in collectives, like EP).
    Log,
    /// `--resilient=hier` with local groups of at most `k` ranks, from
    /// [`HIER_FROM`] ranks on: rank `r` is in group `r / k`, whose master is
    /// its lowest live rank (at the start, the ranks `r % k == 0`; rank 0
    /// is master of group 0 and the usual root).
    Hier {
        k: usize,
    },
}

/// The `--resilient-threshold` of [`Mode::Hier`]: every hierarchical job
/// has at least this many ranks, so that the hierarchy is really built
/// (below the threshold the library stays flat).
const HIER_FROM: usize = 4;

/// Runs `program args` on `n` ranks with `kills` (`RANK@POINT#K`).
fn job(program: &'static str, n: usize, args: &[&str], mode: Mode, kills: &[String]) -> Job {
    let mut spec = Spec::new(n, args).program(app(program)).bound(60);
    match mode {
        Mode::Plain => {}
        Mode::Resilient => spec = spec.launcher_arg("--resilient"),
        Mode::Log => {
            spec = spec
                .launcher_arg("--resilient")
                .launcher_arg("--resilient-check")
                .launcher_arg("log")
        }
        Mode::Hier { k } => {
            assert!(n >= HIER_FROM, "{n} ranks would not be hierarchical");
            spec = spec
                .launcher_arg("--resilient=hier")
                .launcher_arg("--resilient-k")
                .launcher_arg(&k.to_string())
                .launcher_arg("--resilient-threshold")
                .launcher_arg(&HIER_FROM.to_string())
        }
    }
    for k in kills {
        spec = spec.launcher_arg("--kill").launcher_arg(k);
    }
    run(spec)
}

/// The `KEY=VALUE` fields of the job's summary line (the one that starts
/// with `tag`); fails with the job's output unless the job exited 0 and
/// printed exactly one.
fn summary(j: &Job, tag: &str, what: &str) -> HashMap<String, String> {
    let lines: Vec<&str> = j.stdout.lines().filter(|l| l.starts_with(tag)).collect();
    assert!(
        j.code == Some(0) && lines.len() == 1,
        "{what}: code {:?}, {} summary line(s) after {:.1?}\nstdout:\n{}\nstderr:\n{}",
        j.code,
        lines.len(),
        j.elapsed,
        j.stdout,
        j.stderr
    );
    pertinax_tests::fields(lines[0]).collect()
}

/// Checks one job's summary: `want` are exact fields; `either` fields may
/// take any of several values.
struct Check<'a> {
    what: String,
    fields: HashMap<String, String>,
    job: &'a Job,
}

impl Check<'_> {
    fn get(&self, key: &str) -> &str {
        self.fields.get(key).map_or("", String::as_str)
    }

    fn is(&self, key: &str, want: &str) -> &Self {
        assert_eq!(
            self.get(key),
            want,
            "{}: {key} in {:?}\nstdout:\n{}",
            self.what,
            self.fields,
            self.job.stdout
        );
        self
    }

    fn one_of(&self, key: &str, wants: &[&str]) -> &Self {
        assert!(
            wants.contains(&self.get(key)),
            "{}: {key} should be one of {wants:?} in {:?}\nstdout:\n{}",
            self.what,
            self.fields,
            self.job.stdout
        );
        self
    }
}

/// `[a,b]`.
fn list(items: impl IntoIterator<Item = impl ToString>) -> String {
    let s: Vec<String> = items.into_iter().map(|r| r.to_string()).collect();
    format!("[{}]", s.join(","))
}

/// The items of `total` that `rank` of `n` gets: the block split of
/// `pertinax_apps` (the first `total % n` ranks take one more).
fn portion(total: u64, rank: usize, n: usize) -> (u64, u64) {
    let (r, n) = (rank as u64, n as u64);
    let (base, large) = (total / n, total % n);
    let start = r * base + r.min(large);
    (start, start + base + u64::from(r < large))
}

/// `RANK@POINT#1` for each victim.
fn kills(victims: &[usize], point: &str) -> Vec<String> {
    victims.iter().map(|v| format!("{v}@{point}#1")).collect()
}

// ---------------------------------------------------------------- EP

/// Class S on `n` ranks with `kills`, of which `victims` are the ranks.
/// The result must be exactly the sum over the contributors (every rank
/// the allreduce's outcome does not list as missing), whose portions the
/// reporter recomputed (class S); `missing` is what the outcome must say.
fn check_ep(n: usize, mode: Mode, kills: &[String], victims: &[usize], missing: &[&str]) {
    let what = format!("EP S on {n} ranks, {mode:?}, kills {kills:?}");
    let j = job("pertinax-ep", n, &["S"], mode, kills);
    let c = Check {
        fields: summary(&j, "EP ", &what),
        what,
        job: &j,
    };
    c.is("class", "S")
        .is("n", &n.to_string())
        .is(
            "mode",
            if mode == Mode::Plain {
                "plain"
            } else {
                "resilient"
            },
        )
        .is("failed", &list(victims))
        .one_of("missing", missing)
        .is("exact_survivors", "true")
        .is("consistent", "true");
    let lost = c
        .get("missing")
        .trim_matches(['[', ']'])
        .split(',')
        .filter(|r| !r.is_empty())
        .count();
    // Every contributor's portion but the reporter's own was recomputed.
    c.is("recomputed", &(n - lost - 1).to_string());
    if lost == 0 {
        c.is("verified", "true").is("fraction", "1.0000");
    } else {
        let fraction = (n - lost) as f64 / n as f64;
        c.is("verified", "n/a")
            .is("fraction", &format!("{fraction:.4}"));
    }
}

/// `victim` of `n` killed at EP's fault point `point`: before it computed
/// its portion (`ep.compute`) or entering the allreduce (`ep.allreduce`),
/// its portion is missing; as soon as the allreduce returned to it
/// (`ep.after`), it contributed wherever the allreduce completed, and where
/// it did not (the others learnt of the death inside it), the allreduce
/// ran again without it. Either way the same at every survivor, and the
/// result is checked against the outcome: with nothing missing it passes
/// the official verification.
fn check_ep_kill(n: usize, mode: Mode, victim: usize, point: &str) {
    let alone = list([victim]);
    let missing: &[&str] = if point == "ep.after" {
        &["[]", &alone]
    } else {
        &[&alone]
    };
    check_ep(n, mode, &kills(&[victim], point), &[victim], missing);
}

#[test]
fn ep_without_failures_verifies_plain_and_resilient() {
    for mode in [Mode::Plain, Mode::Resilient, Mode::Log] {
        check_ep(4, mode, &[], &[], &["[]"]);
    }
}

/// A rank that dies before it computed its portion is missing.
#[test]
fn ep_loses_the_portion_of_a_rank_killed_before_the_allreduce() {
    for (n, v) in [(4, 2), (4, 0), (8, 5), (8, 0)] {
        check_ep_kill(n, Mode::Resilient, v, "ep.compute");
    }
}

/// A rank that dies entering the allreduce, which the others are entering
/// or waiting in, is missing.
#[test]
fn ep_loses_the_portion_of_a_rank_killed_entering_the_allreduce() {
    for (n, v) in [(4, 1), (4, 0), (8, 6), (8, 0)] {
        check_ep_kill(n, Mode::Resilient, v, "ep.allreduce");
    }
}

/// A rank that dies as soon as the allreduce returned to it contributed,
/// unless the allreduce ran again without it.
#[test]
fn ep_keeps_the_portion_of_a_rank_killed_after_the_allreduce() {
    for (n, v) in [(4, 3), (4, 0), (8, 2), (8, 0)] {
        check_ep_kill(n, Mode::Resilient, v, "ep.after");
    }
}

/// EP meets only in collectives, so the replay log may stand in for the
/// agreement after every collective; two failures, the second in the
/// repair of the first.
#[test]
fn ep_with_the_replay_log_survives_kills_at_every_phase() {
    for point in ["ep.compute", "ep.allreduce", "ep.after"] {
        check_ep_kill(8, Mode::Log, 0, point);
    }
    // The resilient communicator's construction makes two agreements; the
    // third is the repair after rank 3's death.
    let two = [
        "3@ep.allreduce#1".to_string(),
        "6@ft.agree.enter#3".to_string(),
    ];
    check_ep(8, Mode::Log, &two, &[3, 6], &["[3,6]"]);
}

#[test]
fn ep_hierarchical_without_failures_verifies() {
    for (n, k) in [(4, 2), (8, 3), (16, 4)] {
        check_ep(n, Mode::Hier { k }, &[], &[], &["[]"]);
    }
}

/// Hierarchical jobs `cases` (ranks, k, victim), each victim killed at
/// `point`. The cases take a non-master (its group shrinks), a master other
/// than rank 0 (its deputy takes over and a new deputy joins the global
/// communicator), rank 0 (master of group 0, root and
/// reporter), and one job of 16 ranks.
fn check_ep_hier(point: &str, cases: [(usize, usize, usize); 4]) {
    for (n, k, v) in cases {
        check_ep_kill(n, Mode::Hier { k }, v, point);
    }
}

#[test]
fn ep_hierarchical_loses_the_portion_of_a_rank_killed_before_the_allreduce() {
    check_ep_hier("ep.compute", [(8, 3, 4), (8, 3, 3), (16, 4, 8), (4, 2, 0)]);
}

#[test]
fn ep_hierarchical_loses_the_portion_of_a_rank_killed_entering_the_allreduce() {
    // Rank 6 is the master of the last, smaller group ([6, 7]).
    check_ep_hier(
        "ep.allreduce",
        [(8, 3, 5), (8, 3, 6), (16, 4, 13), (8, 3, 0)],
    );
}

#[test]
fn ep_hierarchical_keeps_the_portion_of_a_rank_killed_after_the_allreduce() {
    check_ep_hier("ep.after", [(8, 3, 7), (8, 3, 3), (16, 4, 12), (8, 3, 0)]);
}

#[test]
fn ep_plain_stops_with_an_error_when_a_rank_dies() {
    let j = job(
        "pertinax-ep",
        4,
        &["S"],
        Mode::Plain,
        &kills(&[2], "ep.allreduce"),
    );
    assert_eq!(j.code, Some(1), "{}\n{}", j.stdout, j.stderr);
    assert!(!j.stdout.contains("EP "), "{}", j.stdout);
    assert!(j.stderr.contains("allreduce of the sums"), "{}", j.stderr);
}

// ----------------------------------------------------------- screening

/// Molecules of the screening tests (1,500 per rank at 8 ranks) and the
/// poses per molecule: a fraction of a second in all, recomputed by the
/// reporter.
const COUNT: u64 = 12_000;
const WORK: &str = "16";

/// Where a screening rank is killed (the first hit of a fault point, the
/// 100th for [`At::Molecule`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum At {
    /// `screen.molecule`, while it scores: it is in no count, message or
    /// allgather, and never wrote its scores.
    Molecule,
    /// `screen.exchange`, before the count: in nothing either (its scores
    /// are written).
    Exchange,
    /// `screen.send`, as soon as the count returned (which may have run
    /// again without it): no message, not in the allgather.
    Send,
    /// `screen.allgather`, after its message: its best `k` arrived, its
    /// share is not lost, but it is not in the allgather.
    Allgather,
}

impl At {
    /// `RANK@POINT#K`.
    fn kill(self, rank: usize) -> String {
        match self {
            At::Molecule => format!("{rank}@screen.molecule#100"),
            At::Exchange => format!("{rank}@screen.exchange#1"),
            At::Send => format!("{rank}@screen.send#1"),
            At::Allgather => format!("{rank}@screen.allgather#1"),
        }
    }
}

/// What the kills must have cost a screening.
#[derive(Debug)]
struct Loss {
    /// The ranks killed.
    failed: Vec<usize>,
    /// The ranks whose molecules are not in the result.
    lost: Vec<usize>,
    /// The ranks whose best `k` the collector did not receive.
    not_sent: Vec<usize>,
    /// The ranks missing from the allgather of the best.
    not_gathered: Vec<usize>,
    /// The possible numbers of molecules counted as screened.
    screened: Vec<u64>,
}

impl Loss {
    /// The cost of `kills` (rank, where) on `n` ranks, each rank killed
    /// once. The collector is the lowest rank in the count; when it dies
    /// after the count, the messages are lost with it, the allgather stands
    /// alone and the lowest survivor reports.
    fn of(n: usize, kills: &[(usize, At)]) -> Loss {
        let killed = |at: &[At]| -> Vec<usize> {
            let mut v: Vec<usize> = kills
                .iter()
                .filter(|(_, a)| at.contains(a))
                .map(|&(r, _)| r)
                .collect();
            v.sort_unstable();
            v
        };
        let failed = killed(&[At::Molecule, At::Exchange, At::Send, At::Allgather]);
        let uncounted = killed(&[At::Molecule, At::Exchange]);
        let silent = killed(&[At::Molecule, At::Exchange, At::Send]);
        let collector = (0..n).find(|r| !uncounted.contains(r));
        let (lost, not_sent) = if collector.is_some_and(|c| failed.contains(&c)) {
            (failed.clone(), (0..n).collect())
        } else {
            (silent.clone(), silent)
        };
        // Those killed after the count are counted or not, each.
        let maybe = killed(&[At::Send]);
        let screened = (0..1usize << maybe.len())
            .map(|set| {
                let out = maybe
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| set & (1 << i) != 0)
                    .map(|(_, &r)| r);
                let out: Vec<usize> = uncounted.iter().copied().chain(out).collect();
                COUNT - share(&out, n)
            })
            .collect();
        Loss {
            not_gathered: failed.clone(),
            failed,
            lost,
            not_sent,
            screened,
        }
    }
}

/// A screening on `n` ranks with `kills`, checked against what they must
/// have cost ([`Loss::of`]).
fn check_screen(n: usize, mode: Mode, kills: &[(usize, At)]) {
    let loss = Loss::of(n, kills);
    let kills: Vec<String> = kills.iter().map(|&(r, at)| at.kill(r)).collect();
    let what = format!("screening on {n} ranks, {mode:?}, kills {kills:?}");
    let count = COUNT.to_string();
    let args = [
        "--count", &count, "--work", WORK, "--k", "8", "--db", "m.db", "--out", "s.f64",
    ];
    let j = job("pertinax-screen", n, &args, mode, &kills);
    let c = Check {
        fields: summary(&j, "SCREEN ", &what),
        what,
        job: &j,
    };
    let lost_ranges = loss.lost.iter().map(|&r| {
        let (a, b) = portion(COUNT, r, n);
        format!("{a}..{b}")
    });
    let fraction = 1.0 - share(&loss.lost, n) as f64 / COUNT as f64;
    let others = |out: &[usize]| list((0..n).filter(|r| !out.contains(r)));
    let screened: Vec<String> = loss.screened.iter().map(u64::to_string).collect();
    let screened: Vec<&str> = screened.iter().map(String::as_str).collect();
    c.is("n", &n.to_string())
        .is("count", &count)
        .is("failed", &list(&loss.failed))
        .is("lost", &list(lost_ranges))
        .is("fraction", &format!("{fraction:.4}"))
        .is("from_p2p", &others(&loss.not_sent))
        .is("from_allgather", &others(&loss.not_gathered))
        .one_of("screened", &screened)
        .is("exact_survivors", "true")
        .is("file_ok", "true")
        .is("consistent", "true")
        .is("count_ok", "true")
        .is("recomputed", "true");
    assert_eq!(c.get("best").matches(':').count(), 8, "{:?}", c.fields);
    // The scores of the molecules of ranks that were never killed are in
    // the output file (the reporter compared them with its own).
    let scores = std::fs::metadata(j.dir.path().join("s.f64")).map(|m| m.len());
    assert!(scores.is_ok_and(|l| l > 0), "{}: no output file", c.what);
}

/// The molecules of `ranks` of `n`.
fn share(ranks: &[usize], n: usize) -> u64 {
    ranks
        .iter()
        .map(|&r| {
            let (a, b) = portion(COUNT, r, n);
            b - a
        })
        .sum()
}

/// `victims`, each killed at `at`.
fn each(victims: &[usize], at: At) -> Vec<(usize, At)> {
    victims.iter().map(|&v| (v, at)).collect()
}

#[test]
fn screening_without_failures_plain_and_resilient() {
    for mode in [Mode::Plain, Mode::Resilient] {
        check_screen(4, mode, &[]);
    }
}

/// A rank killed while it scores loses its share.
#[test]
fn screening_loses_the_share_of_ranks_killed_during_the_work() {
    for (n, victims) in [(4, &[2][..]), (8, &[0]), (6, &[1, 4])] {
        check_screen(n, Mode::Resilient, &each(victims, At::Molecule));
    }
}

/// Kills during the exchange: before the count, as soon as the count
/// returned (before the message to the collector), between the message
/// and the allgather; the collector itself (rank 0: rank 1 reports); and
/// one kill during the work with another during the exchange.
#[test]
fn screening_survives_kills_during_the_exchange() {
    check_screen(6, Mode::Resilient, &[(3, At::Exchange)]);
    check_screen(8, Mode::Resilient, &[(5, At::Send)]);
    check_screen(8, Mode::Resilient, &[(4, At::Allgather)]);
    check_screen(4, Mode::Resilient, &[(0, At::Send)]);
    check_screen(8, Mode::Resilient, &[(2, At::Molecule), (6, At::Send)]);
}

#[test]
fn screening_hierarchical_without_failures() {
    for (n, k) in [(4, 2), (8, 3), (16, 4)] {
        check_screen(n, Mode::Hier { k }, &[]);
    }
}

/// Hierarchical, kills during the work: a non-master, a master other than
/// rank 0, a master and a non-master of other groups at 16 ranks, rank 0
/// (master of group 0, which writes the database and collects).
#[test]
fn screening_hierarchical_loses_the_share_of_ranks_killed_during_the_work() {
    for (n, k, victims) in [
        (8, 3, &[4][..]),
        (8, 3, &[3]),
        (16, 4, &[8, 13]),
        (8, 3, &[0]),
    ] {
        check_screen(n, Mode::Hier { k }, &each(victims, At::Molecule));
    }
}

/// Hierarchical, kills during the exchange at each of its points, of
/// masters and non-masters; the collector (rank 0) after the count and
/// after the messages; a non-master during the work with a master during
/// the exchange.
#[test]
fn screening_hierarchical_survives_kills_during_the_exchange() {
    let hier = |k| Mode::Hier { k };
    check_screen(6, hier(3), &[(3, At::Exchange)]);
    check_screen(8, hier(3), &[(4, At::Exchange)]);
    check_screen(8, hier(3), &[(5, At::Send)]);
    check_screen(16, hier(4), &[(8, At::Send)]);
    check_screen(8, hier(3), &[(7, At::Allgather)]);
    check_screen(16, hier(4), &[(12, At::Allgather)]);
    check_screen(4, hier(2), &[(0, At::Send)]);
    check_screen(8, hier(3), &[(0, At::Allgather)]);
    check_screen(8, hier(3), &[(2, At::Molecule), (6, At::Send)]);
}
