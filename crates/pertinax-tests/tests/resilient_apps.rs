//! The applications of `pertinax-apps` (`pertinax-ep`, `pertinax-screen`)
//! through the real launcher, plain and with `--resilient`, with ranks
//! killed (SIGKILL) at chosen points by the launcher's fault injection
//! (`--kill RANK@POINT#1`; the programs' fault points are listed in their
//! documentation).
//!
//! The programs check their own results (the reporter recomputes the
//! survivors' work sequentially) and say so in one summary line; these
//! tests read that line and check it against what the kills must have
//! cost. The programs are built by `cargo test --workspace` (their crate
//! has integration tests) next to the launcher.

mod common;
use common::{run, Job, Spec};

use std::collections::HashMap;
use std::path::PathBuf;

/// A program of `pertinax-apps`.
fn app(name: &str) -> PathBuf {
    let p = common::testprog().with_file_name(name);
    assert!(
        p.exists(),
        "{} is missing: run the tests with `cargo test --workspace`",
        p.display()
    );
    p
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
}

/// Runs `program args` on `n` ranks with `kills` (`RANK@POINT#K`).
fn job(program: &str, n: usize, args: &[&str], mode: Mode, kills: &[String]) -> Job {
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
    lines[0]
        .split_whitespace()
        .filter_map(|f| f.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
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
        .matches(|ch: char| ch.is_ascii_digit())
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
        let l = list([v]);
        check_ep(n, Mode::Resilient, &kills(&[v], "ep.compute"), &[v], &[&l]);
    }
}

/// A rank that dies entering the allreduce, which the others are entering
/// or waiting in, is missing.
#[test]
fn ep_loses_the_portion_of_a_rank_killed_entering_the_allreduce() {
    for (n, v) in [(4, 1), (4, 0), (8, 6), (8, 0)] {
        let l = list([v]);
        check_ep(
            n,
            Mode::Resilient,
            &kills(&[v], "ep.allreduce"),
            &[v],
            &[&l],
        );
    }
}

/// A rank that dies as soon as the allreduce returned to it contributed
/// wherever the allreduce completed; where it did not (the others learnt
/// of the death inside it), it runs again without the dead rank. Either
/// way the same at every survivor, and the result is checked against the
/// outcome: with nothing missing it passes the official verification.
#[test]
fn ep_keeps_the_portion_of_a_rank_killed_after_the_allreduce() {
    for (n, v) in [(4, 3), (4, 0), (8, 2), (8, 0)] {
        let l = list([v]);
        check_ep(
            n,
            Mode::Resilient,
            &kills(&[v], "ep.after"),
            &[v],
            &["[]", &l],
        );
    }
}

/// EP meets only in collectives, so the replay log may stand in for the
/// agreement after every collective; two failures, the second in the
/// repair of the first.
#[test]
fn ep_with_the_replay_log_survives_kills_at_every_phase() {
    for point in ["ep.compute", "ep.allreduce"] {
        check_ep(8, Mode::Log, &kills(&[0], point), &[0], &["[0]"]);
    }
    check_ep(8, Mode::Log, &kills(&[0], "ep.after"), &[0], &["[]", "[0]"]);
    // The resilient communicator's construction makes two agreements; the
    // third is the repair after rank 3's death.
    let two = [
        "3@ep.allreduce#1".to_string(),
        "6@ft.agree.enter#3".to_string(),
    ];
    check_ep(8, Mode::Log, &two, &[3, 6], &["[3,6]"]);
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

/// What the kills must have cost a screening.
struct Loss<'a> {
    /// The ranks killed.
    failed: &'a [usize],
    /// The ranks whose molecules are not in the result.
    lost: &'a [usize],
    /// The ranks whose best `k` the collector did not receive (any of these
    /// lists).
    not_sent: &'a [&'a [usize]],
    /// The ranks missing from the allgather of the best.
    not_gathered: &'a [usize],
    /// The possible numbers of molecules counted as screened.
    screened: &'a [u64],
}

fn check_screen(n: usize, mode: Mode, kills: &[&str], loss: &Loss<'_>) {
    let kills: Vec<String> = kills.iter().map(|k| k.to_string()).collect();
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
    let fraction = 1.0
        - loss
            .lost
            .iter()
            .map(|&r| {
                let (a, b) = portion(COUNT, r, n);
                (b - a) as f64
            })
            .sum::<f64>()
            / COUNT as f64;
    let others = |out: &[usize]| list((0..n).filter(|r| !out.contains(r)));
    let sent: Vec<String> = loss.not_sent.iter().map(|l| others(l)).collect();
    let sent: Vec<&str> = sent.iter().map(String::as_str).collect();
    let screened: Vec<String> = loss.screened.iter().map(u64::to_string).collect();
    let screened: Vec<&str> = screened.iter().map(String::as_str).collect();
    c.is("n", &n.to_string())
        .is("count", &count)
        .is("failed", &list(loss.failed))
        .is("lost", &list(lost_ranges))
        .is("fraction", &format!("{fraction:.4}"))
        .one_of("from_p2p", &sent)
        .is("from_allgather", &others(loss.not_gathered))
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

#[test]
fn screening_without_failures_plain_and_resilient() {
    let none = Loss {
        failed: &[],
        lost: &[],
        not_sent: &[&[]],
        not_gathered: &[],
        screened: &[COUNT],
    };
    check_screen(4, Mode::Plain, &[], &none);
    check_screen(4, Mode::Resilient, &[], &none);
}

/// A rank killed while it scores loses its share: it is in no count,
/// message or allgather, and never wrote its scores.
#[test]
fn screening_loses_the_share_of_ranks_killed_during_the_work() {
    for (n, victims) in [(4, &[2][..]), (8, &[0]), (6, &[1, 4])] {
        let k: Vec<String> = victims
            .iter()
            .map(|v| format!("{v}@screen.molecule#100"))
            .collect();
        let k: Vec<&str> = k.iter().map(String::as_str).collect();
        let loss = Loss {
            failed: victims,
            lost: victims,
            not_sent: &[victims],
            not_gathered: victims,
            screened: &[COUNT - share(victims, n)],
        };
        check_screen(n, Mode::Resilient, &k, &loss);
    }
}

/// Kills during the exchange: before the count, as soon as the count
/// returned (before the message to the collector), between the message
/// and the allgather; the collector itself; and one kill during the work
/// with another during the exchange.
#[test]
fn screening_survives_kills_during_the_exchange() {
    // Before the count: in nothing.
    check_screen(
        6,
        Mode::Resilient,
        &["3@screen.exchange#1"],
        &Loss {
            failed: &[3],
            lost: &[3],
            not_sent: &[&[3]],
            not_gathered: &[3],
            screened: &[COUNT - share(&[3], 6)],
        },
    );
    // After the count (which may have run again without it): no message,
    // not in the allgather.
    check_screen(
        8,
        Mode::Resilient,
        &["5@screen.send#1"],
        &Loss {
            failed: &[5],
            lost: &[5],
            not_sent: &[&[5]],
            not_gathered: &[5],
            screened: &[COUNT, COUNT - share(&[5], 8)],
        },
    );
    // After its message: its best k arrived, its share is not lost.
    check_screen(
        8,
        Mode::Resilient,
        &["4@screen.allgather#1"],
        &Loss {
            failed: &[4],
            lost: &[],
            not_sent: &[&[]],
            not_gathered: &[4],
            screened: &[COUNT],
        },
    );
    // The collector (rank 0) dies: the messages are lost with it, the
    // allgather stands alone and rank 1 reports.
    check_screen(
        4,
        Mode::Resilient,
        &["0@screen.send#1"],
        &Loss {
            failed: &[0],
            lost: &[0],
            not_sent: &[&[0, 1, 2, 3]],
            not_gathered: &[0],
            screened: &[COUNT, COUNT - share(&[0], 4)],
        },
    );
    // One during the work, one during the exchange.
    check_screen(
        8,
        Mode::Resilient,
        &["2@screen.molecule#100", "6@screen.send#1"],
        &Loss {
            failed: &[2, 6],
            lost: &[2, 6],
            not_sent: &[&[2, 6]],
            not_gathered: &[2, 6],
            screened: &[COUNT - share(&[2], 8), COUNT - share(&[2, 6], 8)],
        },
    );
}
