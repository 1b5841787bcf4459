//! The repair part's tests: lines, tallies against each scheme's victim,
//! the table, the weighted average and the command.

use super::line::{HierFields, Line};
use super::scheme::{deputy_victim, master_victim, member_victim};
use super::*;
use crate::bench::Campaign;
use crate::cli::ResCheck;
use crate::parse::{parse_line, parse_output};
use crate::run::{Exit, Launch};

const LINE: &str = "REPAIR check=log ranks=8 survivors=7 spanned=7 failed=7 repairs=1 \
    iters=450 span_iter=349..349 repair_max_us=812.5 repair_min_us=640.2 span_max_us=830.1 \
    base_med_us=17.6 after_med_us=16.9 proc_max_us=402.7 bad=0";

/// A hierarchical line at 8 ranks, k=3, whose victim is rank 6.
const HIER: &str = "REPAIR shape=hier check=agree ranks=8 survivors=7 spanned=7 failed=6 \
    repairs=2 iters=450 span_iter=351..351 repair_max_us=1500.0 repair_min_us=900.0 \
    span_max_us=1520.0 base_med_us=20.0 after_med_us=21.0 bad=0 k=3 masters=0,3,6 \
    deputies=1,4,7 local_repairs=1 global_repairs=1";

fn line() -> Line {
    Line {
        check: ResCheck::Log,
        ranks: 8,
        survivors: 7,
        spanned: 7,
        failed: vec![7],
        repairs: 1,
        repair_max: 812.5,
        repair_min: 640.2,
        span_max: 830.1,
        base: 17.6,
        after: Some(16.9),
        proc_max: Some(402.7),
        bad: 0,
        hier: None,
    }
}

fn check(text: &str, expected: Option<Line>) {
    let r = parse_line(text).unwrap_or_else(|| panic!("no record in {text:?}"));
    assert_eq!(Line::parse(&r), expected, "{text}");
}

#[test]
fn lines_parse() {
    check(LINE, Some(line()));
    check(&LINE.replace("REPAIR ", "REPAIR shape=flat "), Some(line()));
    // An older worker's line, without the repair procedure's time.
    let mut old = line();
    old.proc_max = None;
    check(&LINE.replace(" proc_max_us=402.7", ""), Some(old));
    let mut none = line();
    none.failed = Vec::new();
    none.after = None;
    check(
        &LINE
            .replace("failed=7", "failed=-")
            .replace("after_med_us=16.9", "after_med_us=-inf"),
        Some(none),
    );
    let mut two = line();
    two.failed = vec![3, 7];
    check(&LINE.replace("failed=7", "failed=3,7"), Some(two));
    check(&LINE.replace("failed=7", "failed=3,x"), None);
    check(&LINE.replace("check=log", "check=hier"), None);
    check(&LINE.replace("REPAIR ", "REPAIR shape=tree "), None);
    check(&LINE.replace(" bad=0", ""), None);
    let cut = parse_output(&LINE.replace(" bad=0", ""));
    let t = tally(
        &[launch(0, Exit::Code(0), &LINE.replace(" bad=0", ""))],
        0,
        8,
        Scheme::Flat(ResCheck::Log),
        3,
    );
    assert_eq!(cut.len(), 1);
    assert!(t.failed[0].contains("incomplete"), "{:?}", t.failed);
    check(
        "RES comm=log op=bcast bytes=1 ranks=8 t_max_us=1 reps=2",
        None,
    );
    let r = parse_line(HIER).unwrap();
    let h = Line::parse(&r).unwrap();
    assert_eq!((h.check, h.failed.clone()), (ResCheck::Agree, vec![6]));
    assert_eq!(
        h.hier,
        Some(HierFields {
            k: 3,
            masters: vec![0, 3, 6],
            deputies: vec![1, 4, 7],
            local_repairs: 1,
            global_repairs: 1
        })
    );
    // A hierarchical line must carry the hierarchy's fields.
    check(&HIER.replace(" k=3", ""), None);
    check(&HIER.replace("masters=0,3,6", "masters=0,x"), None);
    check(&HIER.replace(" deputies=1,4,7", ""), None);
    let r = parse_line(&HIER.replace("deputies=1,4,7", "deputies=-")).unwrap();
    let h = Line::parse(&r).unwrap().hier.unwrap();
    assert_eq!(h.deputies, Vec::<usize>::new());
}

#[test]
fn problems_are_named() {
    assert_eq!(line().problem(8, &[7]), None);
    assert!(line().problem(4, &[3]).unwrap().contains("N=8"));
    assert!(line().problem(8, &[6]).unwrap().contains("expected [6]"));
    let mut l = line();
    l.spanned = 6;
    assert!(l.problem(8, &[7]).unwrap().contains("6 of 7"));
    let mut l = line();
    l.failed = vec![3];
    assert!(l.problem(8, &[7]).unwrap().contains("[3]"));
    let mut l = line();
    l.bad = 2;
    assert!(l.problem(8, &[7]).unwrap().contains("wrong"));
    let mut l = line();
    l.repair_max = f64::NEG_INFINITY;
    assert!(l.problem(8, &[7]).unwrap().contains("no repair"));
}

fn launch(variant: usize, exit: Exit, out: &str) -> Launch {
    Launch::fake(variant, exit, out)
}

fn tally(launches: &[Launch], v: usize, n: usize, scheme: Scheme, k: usize) -> SchemeTally {
    SchemeTally::of(&Campaign::fake(launches), v, n, scheme, k)
}

#[test]
fn tallies_and_table() {
    let agree = LINE.replace("check=log", "check=agree");
    let launches = [
        launch(0, Exit::Code(0), &agree),
        launch(1, Exit::Code(0), LINE),
        launch(1, Exit::Code(0), &LINE.replace("812.5", "900.5")),
        launch(1, Exit::Code(1), LINE),
        launch(1, Exit::Code(0), ""),
        launch(1, Exit::Code(0), &agree),
        launch(1, Exit::Code(0), &LINE.replace("bad=0", "bad=1")),
    ];
    let t = tally(&launches, 1, 8, Scheme::Flat(ResCheck::Log), 3);
    assert_eq!((t.runs, t.lines.len(), t.failed.len()), (6, 2, 4));
    assert!(t.failed[0].contains("rc=1: last words"), "{:?}", t.failed);
    assert!(t.failed[1].contains("no REPAIR line"), "{:?}", t.failed);
    assert!(t.failed[2].contains("flat agree"), "{:?}", t.failed);
    assert!(t.failed[3].contains("wrong"), "{:?}", t.failed);
    assert_eq!(t.summary(|l| Some(l.repair_max)).unwrap().median, 856.5);
    let a = tally(&launches, 0, 8, Scheme::Flat(ResCheck::Agree), 3);
    let text = table(&[a, t], &[8], 300, 2);
    let log = text.lines().find(|l| l.contains("| flat log")).unwrap();
    assert!(log.contains("| 856.5 (812.5–900.5) "), "{log}");
    assert!(log.contains("| 2/6 "), "{log}");
    assert!(log.contains("| 8 on 2 cores (4 per core) "), "{log}");
    assert!(log.contains("| 7 (N-1) "), "{log}");
    assert!(text.contains("iteration 351"), "{text}");
    assert!(
        text.contains("- flat log n=8: 1 allreduce results were wrong"),
        "{text}"
    );
    // Without hierarchical launches the weighted row has no value.
    let w = text
        .lines()
        .find(|l| l.contains("| hier weighted"))
        .unwrap();
    assert!(
        w.contains(
            "| P(master) = 3/8 = 0.375, P(deputy) = 3/8 = 0.375, P(member) = 2/8 = 0.250 | - "
        ),
        "{w}"
    );
    assert!(!text.contains("schemes skipped"), "{text}");
}

#[test]
fn hierarchical_victims_are_checked_and_weighted() {
    let master = Scheme::Hier(Victim::Master);
    let deputy = Scheme::Hier(Victim::Deputy);
    let member = Scheme::Hier(Victim::Member);
    // At 8 ranks, k=3: master 6, deputy 7, member 5.
    let dep = HIER
        .replace("failed=6", "failed=7")
        .replace("1500.0", "1400.0");
    let mem = HIER
        .replace("failed=6", "failed=5")
        .replace("1500.0", "600.0")
        .replace("global_repairs=1", "global_repairs=0");
    let launches = [
        launch(0, Exit::Code(0), HIER),
        launch(0, Exit::Code(0), &HIER.replace("1500.0", "1700.0")),
        // Rank 6 was not a master in this one.
        launch(
            0,
            Exit::Code(0),
            &HIER.replace("masters=0,3,6", "masters=0,3,7"),
        ),
        launch(0, Exit::Code(0), &HIER.replace("k=3", "k=4")),
        launch(0, Exit::Code(0), LINE),
        launch(1, Exit::Code(0), &dep),
        // Rank 7 was a master here, not a deputy.
        launch(
            1,
            Exit::Code(0),
            &dep.replace("masters=0,3,6", "masters=0,3,7")
                .replace("deputies=1,4,7", "deputies=1,4"),
        ),
        // ... and both here.
        launch(
            1,
            Exit::Code(0),
            &dep.replace("masters=0,3,6", "masters=0,3,7"),
        ),
        launch(2, Exit::Code(0), &mem),
        // Rank 5 was a deputy in this one.
        launch(
            2,
            Exit::Code(0),
            &mem.replace("deputies=1,4,7", "deputies=1,5,7"),
        ),
    ];
    let m = tally(&launches, 0, 8, master, 3);
    assert_eq!((m.runs, m.lines.len()), (5, 2), "{:?}", m.failed);
    assert!(
        m.failed[0].contains("victim 6 was a member, expected a master"),
        "{:?}",
        m.failed
    );
    assert!(m.failed[1].contains("k=4, expected k=3"), "{:?}", m.failed);
    assert!(m.failed[2].contains("line for flat log"), "{:?}", m.failed);
    let d = tally(&launches, 1, 8, deputy, 3);
    assert_eq!((d.runs, d.lines.len()), (3, 1), "{:?}", d.failed);
    assert!(
        d.failed[0].contains("victim 7 was a master, expected a deputy"),
        "{:?}",
        d.failed
    );
    assert!(
        d.failed[1].contains("victim 7 was both a master and a deputy"),
        "{:?}",
        d.failed
    );
    let r = tally(&launches, 2, 8, member, 3);
    assert_eq!((r.runs, r.lines.len()), (2, 1), "{:?}", r.failed);
    assert!(
        r.failed[0].contains("victim 5 was a deputy, expected a member"),
        "{:?}",
        r.failed
    );
    assert_eq!(
        (m.repairs_cell(), d.repairs_cell(), r.repairs_cell()),
        ("1/1".into(), "1/1".into(), "1/0".into())
    );
    let all = [m.clone(), d.clone(), r.clone()];
    let w = Weighted::of(&all, 8).unwrap();
    // 3 masters, 3 deputies and 2 members among 8 ranks:
    // 3/8·1600 + 3/8·1400 + 2/8·600.
    assert_eq!(
        (w.master, w.deputy, w.member, w.value),
        (1600.0, 1400.0, Some(600.0), 1275.0)
    );
    // Without a deputy or (when there are members) a member median,
    // there is no weighted value.
    assert_eq!(Weighted::of(std::slice::from_ref(&m), 8), None);
    assert_eq!(Weighted::of(&[m.clone(), d.clone()], 8), None);
    let text = table(&all, &[8], 300, 2);
    let row = |name: &str| {
        text.lines()
            .find(|l| l.contains(&format!("| {name} ")))
            .unwrap_or_else(|| panic!("no {name} row in\n{text}"))
            .to_string()
    };
    assert!(row("hier master").contains("| 6: master of group 2 (ranks 6–7) "));
    assert!(row("hier master").contains("| 1600.0 (1500.0–1700.0) "));
    assert!(row("hier master").contains("| 3 "));
    assert!(row("hier deputy").contains("| 7: deputy of group 2 (ranks 6–7) "));
    assert!(row("hier deputy").contains("| 1400.0 (1400.0–1400.0) "));
    assert!(row("hier deputy").contains("| 1/3 "));
    assert!(row("hier member").contains("| 5: member of group 1 (ranks 3–5) "));
    assert!(
        row("hier weighted").contains("| 1275.0 (= 0.375·1600.0 + 0.375·1400.0 + 0.250·600.0) ")
    );
}

#[test]
fn without_members_the_member_scheme_is_skipped() {
    // At 8 ranks, k=2: masters 0,2,4,6, deputies 1,3,5,7, no member.
    assert_eq!(Scheme::Hier(Victim::Member).victim(8, 2), None);
    let why = Scheme::Hier(Victim::Member).skip_reason(8, 2).unwrap();
    assert!(why.contains("k=2"), "{why}");
    assert_eq!(Scheme::Hier(Victim::Deputy).skip_reason(8, 2), None);
    let line = HIER
        .replace("k=3", "k=2")
        .replace("masters=0,3,6", "masters=0,2,4,6")
        .replace("deputies=1,4,7", "deputies=1,3,5,7");
    let dep = line
        .replace("failed=6", "failed=7")
        .replace("1500.0", "1300.0");
    let launches = [
        launch(0, Exit::Code(0), &line),
        launch(1, Exit::Code(0), &dep),
    ];
    let tallies: Vec<SchemeTally> = Victim::ALL
        .iter()
        .enumerate()
        .map(|(i, &v)| tally(&launches, i, 8, Scheme::Hier(v), 2))
        .collect();
    assert_eq!(tallies[0].lines.len(), 1, "{:?}", tallies[0].failed);
    assert_eq!(tallies[1].lines.len(), 1, "{:?}", tallies[1].failed);
    // Never launched: no runs, whatever the variant index.
    assert_eq!((tallies[2].runs, tallies[2].lines.len()), (0, 0));
    let w = Weighted::of(&tallies, 8).unwrap();
    assert_eq!((w.member, w.value), (None, 0.5 * 1500.0 + 0.5 * 1300.0));
    let text = table(&tallies, &[8], 300, 2);
    let member = text.lines().find(|l| l.contains("| hier member ")).unwrap();
    assert!(
        member.contains("| none: no rank is neither master nor deputy"),
        "{member}"
    );
    assert!(member.contains("| skipped "), "{member}");
    assert!(text.contains("schemes skipped"), "{text}");
    assert!(
        text.contains(&format!("- hier member n=8: {why}")),
        "{text}"
    );
    let w = text
        .lines()
        .find(|l| l.contains("| hier weighted "))
        .unwrap();
    assert!(w.contains("P(member) = 0/8 = 0.000"), "{w}");
    assert!(
        w.contains("| 1400.0 (= 0.500·1500.0 + 0.500·1300.0) |"),
        "{w}"
    );
}

#[test]
fn victims_have_their_kind() {
    for n in 4..=32 {
        for k in 2..=5 {
            // The lists the worker reports: the masters and deputies
            // of the groups `rank / k` when nobody has failed.
            let masters: Vec<usize> = (0..n).filter(|r| r % k == 0).collect();
            let deputies: Vec<usize> = (0..n).filter(|r| r % k == 1).collect();
            let hier = HierFields {
                k,
                masters: masters.clone(),
                deputies: deputies.clone(),
                local_repairs: 1,
                global_repairs: 1,
            };
            let line = Line {
                check: ResCheck::Agree,
                hier: Some(hier),
                ..line()
            };
            for v in Victim::ALL {
                let s = Scheme::Hier(v);
                let Some(victim) = s.victim(n, k) else {
                    assert_eq!((v, k), (Victim::Member, 2), "n={n}");
                    assert!(s.skip_reason(n, k).is_some());
                    continue;
                };
                assert!(victim < n, "n={n} k={k} {v:?}");
                assert_eq!(s.skip_reason(n, k), None, "n={n} k={k} {v:?}");
                assert_eq!(
                    s.kind_problem(&line, victim, k),
                    None,
                    "n={n} k={k} {v:?}: victim {victim}"
                );
                // And not of the other kinds.
                for other in Victim::ALL.into_iter().filter(|&o| o != v) {
                    assert!(
                        Scheme::Hier(other).kind_problem(&line, victim, k).is_some(),
                        "n={n} k={k} {v:?} as {other:?}"
                    );
                }
            }
            let m = master_victim(n, k);
            // The master's group has a deputy to take over.
            assert!(deputies.contains(&(m + 1)), "n={n} k={k}");
            assert_eq!(deputy_victim(n, k) / k, m / k, "n={n} k={k}");
            // The member is the highest rank of its kind.
            if let Some(r) = member_victim(n, k) {
                assert!(
                    (r + 1..n).all(|x| masters.contains(&x) || deputies.contains(&x)),
                    "n={n} k={k}"
                );
            }
        }
    }
}

#[test]
fn the_victim_dies_after_the_timed_iterations() {
    let k = REPAIR_WARMUP + 300 + 1;
    assert_eq!(
        Scheme::Flat(ResCheck::Agree).worker_args(),
        ["--check", "agree"]
    );
    assert_eq!(
        Scheme::Hier(Victim::Member).worker_args(),
        ["--check", "agree"]
    );
    assert!(Scheme::Flat(ResCheck::Log).launcher_args(3).is_empty());
    assert_eq!(
        Scheme::Hier(Victim::Master).launcher_args(3)[..3],
        ["--resilient=hier", "--resilient-k", "3"]
    );
    assert_eq!(Scheme::Flat(ResCheck::Agree).victim(8, 3), Some(7));
    // The worker's loop is long enough to pass the kill and measure after it.
    assert!(REPAIR_WARMUP + 300 + REPAIR_AFTER > k + 10);
    assert_eq!(Scheme::Flat(ResCheck::Log).name(), "flat log");
    assert_eq!(Scheme::Hier(Victim::Master).name(), "hier master");
    assert_eq!(Scheme::Hier(Victim::Deputy).name(), "hier deputy");
    assert_eq!(Scheme::Hier(Victim::Member).name(), "hier member");
}
