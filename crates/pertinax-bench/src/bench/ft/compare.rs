//! The compare part: pertinax against the Open MPI anchor `ft.c`, every
//! mode at every rank count, interleaved launch by launch; the tables and
//! the goals.

use std::collections::BTreeMap;

use anyhow::Result;
use serde_json::json;

use super::{cell, decimals, med_cell, tally, Goal, Impl, Kept};
use super::{DETECT_MAX_MS, DETECT_SPEEDUP, E2E_MAX_MS, GOAL_RANKS};
use crate::bench::{head, listed, Context, Pace, Scratch, Tally};
use crate::cli::{FtMode, FtOpts};
use crate::report::{jnum, ratio, Table};
use crate::run::Variant;
use crate::stats::{self, Summary};

/// The fields of an `FT` line, in table order: (field, column title).
const FT_FIELDS: [(&str, &str); 14] = [
    ("det_min_ms", "det min"),
    ("det_med_ms", "det med"),
    ("det_max_ms", "det max"),
    ("revoke_max_us", "revoke max µs"),
    ("shrink_med_ms", "shrink med"),
    ("shrink_max_ms", "shrink max"),
    ("revoke_shrink_max_ms", "rv+sh max"),
    ("e2e_med_ms", "e2e med"),
    ("e2e_max_ms", "e2e max"),
    ("agree_healthy_us", "agree healthy µs"),
    ("agree_shrunk_us", "agree shrunk µs"),
    ("shrink_healthy_us", "shrink healthy µs"),
    ("agree_after_fail_med_ms", "agree after fail"),
    ("agree_after_ack_med_ms", "agree after ack"),
];

type Tallies = BTreeMap<(Impl, FtMode), Tally<Kept>>;

pub(super) fn compare(ctx: &mut Context, o: &FtOpts, pace: Pace, s: &Scratch) -> Result<Vec<Goal>> {
    let prog = ctx.ompi_program("ft", None);
    let mut per_n: Vec<(usize, Tallies)> = Vec::new();
    for &n in &o.ranks {
        let mut variants = Vec::new();
        let mut index = Vec::new();
        for &m in &o.modes {
            let name = format!("{} {} n={n}", ctx.pertinax_name(), m.name());
            let kf = s.file(&name);
            let cmd = ctx
                .pertinax_cmd(n, &[])
                .args(["worker", "ft", "--mode", m.name(), "--kill-file"])
                .arg(&kf)
                .args(["--delay-ms", &o.delay_ms.to_string()])
                .args(["--agree-reps", &o.agree_reps.to_string()]);
            variants.push(Variant::new(name, cmd).scratch(kf));
            index.push((Impl::Pertinax, m));
            if let (Some(ompi), Some(prog)) = (&ctx.ompi, &prog) {
                let name = format!("ompi {} n={n}", m.name());
                let kf = s.file(&name);
                let cmd = ompi
                    .mpirun(n, crate::setup::FT, prog)
                    .args(["-m", m.name(), "-k"])
                    .arg(&kf)
                    .args(["-d", &o.delay_ms.to_string()])
                    .args(["-a", &o.agree_reps.to_string()]);
                variants.push(Variant::new(name, cmd).scratch(kf));
                index.push((Impl::Ompi, m));
            }
        }
        let title = format!(
            "## ft compare: {}; {} launches per implementation and mode, interleaved launch by \
             launch; time limit {} s per launch",
            ctx.placement(n),
            pace.rounds,
            pace.limit.as_secs()
        );
        let shown = &variants[..2.min(variants.len())];
        let ran = prog.is_some() && ctx.ompi.is_some();
        ctx.out.text(&(head(&title, shown) + &ctx.ompi_line(ran)));
        let c = ctx.campaign(&format!("ft n={n}"), variants, pace)?;
        let mut tallies = Tallies::new();
        for (i, key) in index.iter().enumerate() {
            tallies.insert(*key, tally(&c, i, "FT"));
        }
        let mut text = full_table(n, &tallies);
        text.push_str(&compare_table(n, &tallies).render());
        text.push_str(&c.hosts());
        ctx.out.text(&text);
        json_rows(ctx, n, &tallies);
        per_n.push((n, tallies));
    }
    Ok(compare_goals(
        &per_n,
        &o.modes,
        ctx.backend == crate::cli::BenchBackend::Mpi,
    ))
}

/// Every field of every configuration (as RESULTS.md section 3).
fn full_table(n: usize, tallies: &Tallies) -> String {
    let mut header = vec![
        "config".to_string(),
        "ok/runs [hangs after results, before]".into(),
    ];
    header.extend(FT_FIELDS.iter().map(|f| f.1.to_string()));
    header.push("error classes (last run)".into());
    header.push("exits".into());
    let mut t = Table::new(header);
    let mut problems = String::new();
    let mut order: Vec<(&(Impl, FtMode), &Tally<Kept>)> = tallies.iter().collect();
    order.sort_by_key(|((imp, m), _)| (*m, *imp));
    for ((imp, m), tl) in order {
        let config = format!("{} {} n={n}", imp.name(), m.name());
        let e = &tl.ended;
        let mut row = vec![
            config.clone(),
            format!("{} [{}, {}]", tl.ok_of_runs(), e.hung_after, e.hung_before),
        ];
        row.extend(
            FT_FIELDS
                .iter()
                .map(|(f, _)| med_cell(tl.get(f), decimals(f))),
        );
        row.push(tl.classes().unwrap_or("-").into());
        row.push(
            e.exits
                .iter()
                .map(|(k, v)| format!("{k}×{v}"))
                .collect::<Vec<_>>()
                .join(" "),
        );
        t.row(row);
        problems.push_str(&e.failures(&config));
    }
    let mut s = format!(
        "\nft, {n} ranks, every field, median over the valid launches (ms unless marked µs). \
         det = kill -> the blocked call returns (min/median/max over survivors); shrink = the \
         shrink call after the failure; rv+sh = revoke + shrink, max over survivors; e2e = kill -> \
         first allreduce on the shrunk communicator done; agree/shrink healthy = mean per call \
         before the failure, slowest rank. Hangs after results: the launch printed its FT line and \
         then ran into the time limit (Open MPI: stuck in MPI_Finalize). Exits: pertinax \
         launches end with status 137 because `pertinax run` reports the victim's SIGKILL (the \
         first failure of the job); mpirun --with-ft ulfm ends with 0.\n\n"
    );
    s.push_str(&t.render());
    s.push_str(&listed("launches without valid results", &problems));
    s
}

/// The modes where a failure interrupts a blocked call (detection).
const DETECT: &[FtMode] = &[FtMode::Recv, FtMode::Allreduce];
/// Every mode ft.c has too.
const ALL: &[FtMode] = &FtMode::COMPARED;

/// The comparison rows: (title, field, modes, pooled over modes); the
/// decimals follow the unit ([`decimals`]).
const COMPARED: [(&str, &str, &[FtMode], bool); 13] = [
    ("detection min", "det_min_ms", DETECT, false),
    ("detection med", "det_med_ms", DETECT, false),
    ("detection max", "det_max_ms", DETECT, false),
    (
        "detection med (agree in flight)",
        "det_med_ms",
        &[FtMode::Agreeblk],
        false,
    ),
    (
        "revoke max µs",
        "revoke_max_us",
        &[FtMode::Allreduce],
        false,
    ),
    ("revoke+shrink max", "revoke_shrink_max_ms", ALL, false),
    ("shrink med (after failure)", "shrink_med_ms", ALL, false),
    ("shrink healthy µs", "shrink_healthy_us", ALL, true),
    ("agree healthy µs", "agree_healthy_us", ALL, true),
    ("agree on shrunk comm µs", "agree_shrunk_us", ALL, true),
    (
        "agree after failure (unacked)",
        "agree_after_fail_med_ms",
        &[FtMode::Agree],
        false,
    ),
    (
        "agree after ack",
        "agree_after_ack_med_ms",
        &[FtMode::Agree],
        false,
    ),
    (
        "e2e max (kill -> allreduce on shrunk)",
        "e2e_max_ms",
        ALL,
        false,
    ),
];

/// The values of `field` over the valid launches of `imp`, for one mode
/// or pooled over `modes`.
fn values(
    tallies: &Tallies,
    imp: Impl,
    modes: &[FtMode],
    field: &str,
    quiet: bool,
) -> Option<Summary> {
    let v: Vec<f64> = modes
        .iter()
        .filter_map(|m| tallies.get(&(imp, *m)))
        .flat_map(|t| t.values(field, quiet))
        .collect();
    Summary::of(&v)
}

/// One compared quantity at one rank count.
#[derive(Clone, Debug, PartialEq)]
struct Compared {
    title: &'static str,
    field: &'static str,
    /// A mode name, or "all" when pooled.
    mode: &'static str,
    p: Option<Summary>,
    o: Option<Summary>,
    /// The same over the quiet launches only.
    pq: Option<Summary>,
    oq: Option<Summary>,
    decimals: usize,
}

impl Compared {
    /// pertinax / Open MPI of the medians.
    fn ratio(&self) -> Option<f64> {
        stats::ratio(self.p.map(|s| s.median), self.o.map(|s| s.median))
    }

    /// pertinax / Open MPI of the medians over the quiet launches.
    fn ratio_quiet(&self) -> Option<f64> {
        stats::ratio(self.pq.map(|s| s.median), self.oq.map(|s| s.median))
    }
}

fn compared(tallies: &Tallies, modes: &[FtMode]) -> Vec<Compared> {
    let mut out = Vec::new();
    for (title, field, ms, pooled) in COMPARED {
        let d = decimals(field);
        let ms: Vec<FtMode> = ms.iter().copied().filter(|m| modes.contains(m)).collect();
        if ms.is_empty() {
            continue;
        }
        if pooled {
            out.push(Compared {
                title,
                field,
                mode: "all",
                p: values(tallies, Impl::Pertinax, &ms, field, false),
                o: values(tallies, Impl::Ompi, &ms, field, false),
                pq: values(tallies, Impl::Pertinax, &ms, field, true),
                oq: values(tallies, Impl::Ompi, &ms, field, true),
                decimals: d,
            });
        } else {
            for m in ms {
                out.push(Compared {
                    title,
                    field,
                    mode: m.name(),
                    p: values(tallies, Impl::Pertinax, &[m], field, false),
                    o: values(tallies, Impl::Ompi, &[m], field, false),
                    pq: values(tallies, Impl::Pertinax, &[m], field, true),
                    oq: values(tallies, Impl::Ompi, &[m], field, true),
                    decimals: d,
                });
            }
        }
    }
    out
}

fn compare_table(n: usize, tallies: &Tallies) -> Table {
    let modes: Vec<FtMode> = tallies.keys().map(|k| k.1).collect();
    let mut t = Table::new([
        "quantity (ms unless µs)".to_string(),
        "mode".into(),
        format!("pertinax n={n}"),
        format!("Open MPI n={n}"),
        "ratio p/o".into(),
        "speed-up o/p".into(),
        "quiet launches: pertinax / Open MPI (launches)".into(),
        "quiet ratio p/o".into(),
    ]);
    for c in compared(tallies, &modes) {
        let r = c.ratio();
        let d = c.decimals;
        t.row(vec![
            c.title.into(),
            c.mode.into(),
            cell(c.p, d),
            cell(c.o, d),
            ratio(r),
            r.filter(|r| *r > 0.0)
                .map_or("-".into(), |r| format!("{:.1}", 1.0 / r)),
            format!(
                "{} / {} ({}/{})",
                med_cell(c.pq, d),
                med_cell(c.oq, d),
                c.pq.map_or(0, |s| s.n),
                c.oq.map_or(0, |s| s.n)
            ),
            ratio(c.ratio_quiet()),
        ]);
    }
    t
}

fn json_rows(ctx: &Context, n: usize, tallies: &Tallies) {
    for ((imp, m), t) in tallies {
        let mut row = serde_json::Map::new();
        row.insert("bench".into(), json!("ft"));
        let name = match imp {
            Impl::Pertinax => ctx.pertinax_name(),
            Impl::Ompi => imp.name(),
        };
        row.insert("impl".into(), json!(name));
        row.insert("mode".into(), json!(m.name()));
        row.insert("ranks".into(), json!(n));
        row.insert("cores".into(), json!(ctx.cores));
        row.insert("launches".into(), json!(t.ended.runs));
        row.insert("valid".into(), json!(t.counted.len()));
        row.insert("hangs_after_results".into(), json!(t.ended.hung_after));
        row.insert("hangs_before_results".into(), json!(t.ended.hung_before));
        for (f, _) in FT_FIELDS {
            row.insert(f.into(), jnum(t.get(f).map(|s| s.median)));
        }
        ctx.out.json(&serde_json::Value::Object(row));
    }
    let modes: Vec<FtMode> = tallies.keys().map(|k| k.1).collect();
    for c in compared(tallies, &modes) {
        ctx.out.json(&json!({
            "bench": "ft", "backend": ctx.backend.name(), "quantity": c.field, "mode": c.mode,
            "ranks": n, "cores": ctx.cores,
            "pertinax": jnum(c.p.map(|s| s.median)), "ompi": jnum(c.o.map(|s| s.median)),
            "ratio": jnum(c.ratio()), "ratio_quiet": jnum(c.ratio_quiet()),
        }));
    }
}

/// The goals of the compared rows. `mpi`: pertinax runs over Open MPI, so
/// its ULFM operations are judged against the same MPI's C calls (within
/// 5%, issue 17), not against being at least as fast.
fn compare_goals(per_n: &[(usize, Tallies)], modes: &[FtMode], mpi: bool) -> Vec<Goal> {
    let mut g = Vec::new();
    let (within, within_ok): (&str, fn(f64) -> bool) = if mpi {
        ("<= 1.05", |v| v <= 1.05)
    } else {
        ("<= 1.0", |v| v <= 1.0)
    };
    let find = |rows: &[Compared], field: &str, mode: &str| {
        rows.iter()
            .find(|c| c.field == field && c.mode == mode)
            .cloned()
    };
    for (n, tallies) in per_n {
        let rows = compared(tallies, modes);
        for mode in ["recv", "allreduce"] {
            let Some(max) = find(&rows, "det_max_ms", mode) else {
                continue;
            };
            let med = find(&rows, "det_med_ms", mode);
            let speedup = |c: &Compared| c.ratio().filter(|r| *r > 0.0).map(|r| 1.0 / r);
            g.push(Goal {
                name: "detection speed-up, det max (Open MPI / pertinax)".into(),
                ranks: Some(*n),
                mode: Some(max.mode),
                value: speedup(&max),
                target: format!(">= {DETECT_SPEEDUP}"),
                note: format!(
                    "det med: {}; quiet launches: {}",
                    med.as_ref()
                        .and_then(speedup)
                        .map_or("-".into(), |s| format!("{s:.1}x")),
                    max.ratio_quiet()
                        .filter(|r| *r > 0.0)
                        .map_or("-".into(), |r| format!("{:.1}x", 1.0 / r))
                ),
                ok: |v| v >= DETECT_SPEEDUP,
                reference: false,
            });
            if *n == GOAL_RANKS {
                g.push(Goal {
                    name: "detection, det max (ms)".into(),
                    ranks: Some(*n),
                    mode: Some(max.mode),
                    value: max.p.map(|s| s.median),
                    target: format!("< {DETECT_MAX_MS}"),
                    note: format!(
                        "det med {} ms; worst launch's det max {} ms; quiet launches {} ms",
                        med.and_then(|c| c.p)
                            .map_or("-".into(), |s| format!("{:.3}", s.median)),
                        max.p.map_or("-".into(), |s| format!("{:.3}", s.max)),
                        med_cell(max.pq, 3)
                    ),
                    ok: |v| v < DETECT_MAX_MS,
                    reference: false,
                });
            }
        }
        for c in rows.iter().filter(|c| {
            matches!(
                c.field,
                "shrink_med_ms"
                    | "shrink_healthy_us"
                    | "revoke_shrink_max_ms"
                    | "agree_healthy_us"
                    | "agree_shrunk_us"
                    | "agree_after_fail_med_ms"
                    | "agree_after_ack_med_ms"
            )
        }) {
            g.push(Goal {
                name: format!("{} ratio (pertinax / Open MPI)", c.title),
                ranks: Some(*n),
                mode: Some(c.mode),
                value: c.ratio(),
                target: within.into(),
                note: format!(
                    "{} vs {}; quiet launches {}",
                    med_cell(c.p, c.decimals),
                    med_cell(c.o, c.decimals),
                    ratio(c.ratio_quiet())
                ),
                ok: within_ok,
                reference: false,
            });
        }
        if *n == GOAL_RANKS {
            for c in rows.iter().filter(|c| c.field == "e2e_max_ms") {
                g.push(Goal {
                    name: "kill -> first allreduce on the shrunk comm, e2e max (ms)".into(),
                    ranks: Some(*n),
                    mode: Some(c.mode),
                    value: c.p.map(|s| s.median),
                    target: format!("< {E2E_MAX_MS}"),
                    note: format!(
                        "worst launch {} ms; quiet launches {} ms{}",
                        c.p.map_or("-".into(), |s| format!("{:.3}", s.max)),
                        med_cell(c.pq, 3),
                        if c.mode == "agree" {
                            "; includes the two timed agrees"
                        } else {
                            ""
                        }
                    ),
                    ok: |v| v < E2E_MAX_MS,
                    reference: false,
                });
            }
        }
    }
    let hangs = |imp: Impl, after: bool| -> (usize, usize) {
        let mut h = 0;
        let mut runs = 0;
        for (_, t) in per_n {
            for ((i, _), tl) in t {
                if *i == imp {
                    h += if after {
                        tl.ended.hung_after
                    } else {
                        tl.ended.hangs()
                    };
                    runs += tl.ended.runs;
                }
            }
        }
        (h, runs)
    };
    let (ph, pr) = hangs(Impl::Pertinax, false);
    if pr > 0 {
        g.push(Goal {
            name: "pertinax hangs (launches that ran into the time limit)".into(),
            ranks: None,
            mode: None,
            value: Some(ph as f64),
            target: "0".into(),
            note: format!("of {pr} launches"),
            ok: |v| v == 0.0,
            reference: false,
        });
    }
    let (oh, or) = hangs(Impl::Ompi, true);
    let (oh_all, _) = hangs(Impl::Ompi, false);
    if or > 0 {
        g.push(Goal {
            name: "Open MPI finalize hangs (results printed, then the time limit)".into(),
            ranks: None,
            mode: None,
            value: Some(oh as f64),
            target: "-".into(),
            note: format!(
                "of {or} launches; {} hung before printing results",
                oh_all - oh
            ),
            ok: |_| true,
            reference: true,
        });
    }
    g
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::ft::goal_text;
    use crate::bench::ft::tests::{check_tally, launch, FT_OK};
    use crate::run::Exit;

    fn tallies(p_det: f64, o_det: f64) -> Tallies {
        let mut m = Tallies::new();
        for (imp, det) in [(Impl::Pertinax, p_det), (Impl::Ompi, o_det)] {
            for mode in FtMode::COMPARED {
                let out = FT_OK
                    .replace("det_max_ms=0.3", &format!("det_max_ms={det}"))
                    .replace("mode=recv", &format!("mode={}", mode.name()));
                let l = [launch(0, Exit::Code(0), &out)];
                m.insert((imp, mode), check_tally(&l, "FT"));
            }
        }
        m
    }

    #[test]
    fn comparison_and_goals() {
        let t = tallies(0.3, 6.0);
        let rows = compared(&t, &FtMode::COMPARED);
        let det: Vec<&Compared> = rows.iter().filter(|c| c.field == "det_max_ms").collect();
        assert_eq!(det.len(), 2);
        assert!((det[0].ratio().unwrap() - 0.05).abs() < 1e-9);
        let pooled = rows.iter().find(|c| c.field == "agree_healthy_us").unwrap();
        assert_eq!(pooled.mode, "all");
        assert_eq!(pooled.p.unwrap().n, 4);
        let text = compare_table(16, &t).render();
        assert!(text.contains("20.0"), "{text}");
        let goals = compare_goals(&[(16, t)], &FtMode::COMPARED, false);
        let speed: Vec<&Goal> = goals
            .iter()
            .filter(|g| g.name.starts_with("detection speed-up"))
            .collect();
        assert_eq!(speed.len(), 2);
        assert_eq!(speed[0].met(), Some(true));
        let abs = goals
            .iter()
            .find(|g| g.name.starts_with("detection, det max"))
            .unwrap();
        assert_eq!(abs.met(), Some(true));
        let e2e = goals
            .iter()
            .find(|g| g.name.starts_with("kill ->"))
            .unwrap();
        assert_eq!(e2e.met(), Some(true)); // 0.5 ms
        let hang = goals
            .iter()
            .find(|g| g.name.starts_with("pertinax hangs"))
            .unwrap();
        assert_eq!(hang.met(), Some(true));
        let slow = compare_goals(&[(16, tallies(1.5, 6.0))], &FtMode::COMPARED, false);
        let s = slow
            .iter()
            .find(|g| g.name.starts_with("detection speed-up"))
            .unwrap();
        assert_eq!(s.met(), Some(false)); // 4x only
        assert!(goal_text(&slow).contains("NOT met"));
        // The absolute goals are judged at 16 ranks only.
        let at4 = compare_goals(&[(4, tallies(0.3, 6.0))], &FtMode::COMPARED, false);
        assert!(!at4.iter().any(|g| g.name.starts_with("detection, det max")));
        // Over MPI, the ULFM operations are judged within 5% of C.
        let agree = |mpi| {
            compare_goals(&[(16, tallies(0.3, 6.0))], &FtMode::COMPARED, mpi)
                .into_iter()
                .find(|g| g.name.contains("agree") && g.name.contains("healthy"))
                .map(|g| g.target)
        };
        assert_eq!(agree(false).as_deref(), Some("<= 1.0"));
        assert_eq!(agree(true).as_deref(), Some("<= 1.05"));
    }

    #[test]
    fn full_table_lists_every_configuration() {
        let text = full_table(4, &tallies(0.3, 6.0));
        assert!(text.contains("pertinax recv n=4"), "{text}");
        assert!(text.contains("ompi agree n=4"), "{text}");
        assert!(text.contains("1/1 [0, 0]"), "{text}");
    }
}
