//! Ping-pong and ping-ping between 2 ranks: pertinax against the Open MPI
//! anchor `pingpong.c` (ping-pong) or this crate's `c/pingping.c`.
//!
//! Each launch prints one `PP`/`PI` line per size with the median over its
//! batches (`t_half_us_med`); the tables give the median and the minimum of
//! those values over launches, as the Open MPI baselines do.

use anyhow::Result;
use serde_json::json;

use super::{head, Campaign, Context};
use crate::cli::{BenchBackend, Reps};
use crate::report::{bandwidth, bytes, jnum, med_min, num, ratio, verdict, Table};
use crate::run::Variant;
use crate::setup;
use crate::stats::{self, find, Selector, Series};

/// Which pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// Rank 0 sends, rank 1 answers (`PP` lines).
    PingPong,
    /// Both ranks send at once (`PI` lines).
    PingPing,
}

impl Pattern {
    fn name(self) -> &'static str {
        match self {
            Pattern::PingPong => "pingpong",
            Pattern::PingPing => "pingping",
        }
    }

    fn key(self) -> &'static str {
        match self {
            Pattern::PingPong => "PP",
            Pattern::PingPing => "PI",
        }
    }
}

/// Smallest size whose bandwidth is reported.
const BW_FROM: u64 = 64 << 10;

/// Runs the benchmark and prints its tables (and JSON rows).
///
/// # Errors
/// When a program cannot be started.
pub fn run(
    ctx: &mut Context,
    reps: &Reps,
    ring_bytes: Option<usize>,
    pattern: Pattern,
) -> Result<()> {
    let sizes = reps.sizes();
    let (r, w, b) = reps.counts(ctx.quick);
    let name = pattern.name();
    let n = [r, w, b].map(|x| x.to_string());
    let counts = ["--reps", &n[0], "--warmup", &n[1], "--batches", &n[2]];
    let native: Vec<String> = ring_bytes
        .map(|rb| vec!["--ring-bytes".to_string(), rb.to_string()])
        .unwrap_or_default();
    let mut variants = vec![Variant::new(
        ctx.pertinax_name(),
        ctx.pertinax_cmd(2, &native)
            .args(["worker", name, "--sizes", &sizes.to_arg()])
            .args(counts),
    )];
    let c_counts = ["-r", &n[0], "-w", &n[1], "-b", &n[2]];
    let ompi_prog = match pattern {
        Pattern::PingPong => ctx.ompi_program("pingpong", None),
        Pattern::PingPing => ctx.ompi_program("pingping", Some(&setup::pingping_source())),
    };
    if let (Some(ompi), Some(prog)) = (&ctx.ompi, ompi_prog) {
        let mut cmd = ompi.mpirun(2, ctx.ompi_extra(), &prog).args(c_counts);
        if ctx.backend == BenchBackend::Mpi && pattern == Pattern::PingPong {
            // The pertinax ranks return errors (MPI_ERRORS_RETURN): so does C.
            cmd = cmd.args(["-e", "return"]);
        }
        if pattern == Pattern::PingPing {
            cmd = cmd.arg("-s").arg(sizes.to_arg());
        }
        variants.push(Variant::new("ompi", cmd));
    }
    let title = format!(
        "## {name}: {}; {} launches per implementation, interleaved launch by launch",
        ctx.placement(2),
        ctx.launches
    );
    let ran = variants.len() > 1;
    ctx.out
        .text(&(head(&title, &variants) + &ctx.ompi_line(ran)));
    let c = ctx.campaign(name, variants, ctx.pace())?;
    report(ctx, pattern, &c, (r, w, b));
    Ok(())
}

fn report(ctx: &Context, pattern: Pattern, c: &Campaign, (r, w, b): (usize, usize, usize)) {
    let name = pattern.name();
    let sel = Selector {
        key: pattern.key(),
        group: &["size"],
        value: "t_half_us_med",
    };
    let p = c.series(0, sel);
    let o = (c.variants.len() > 1).then(|| c.series(1, sel));
    let mut labels: Vec<u64> = p.iter().filter_map(|s| s.label.parse().ok()).collect();
    for s in o.iter().flatten() {
        if let Ok(n) = s.label.parse::<u64>() {
            if !labels.contains(&n) {
                labels.push(n);
            }
        }
    }
    labels.sort_unstable();
    let unit = match pattern {
        Pattern::PingPong => format!("half round trip (batch time / 2×{r})"),
        Pattern::PingPing => format!("time per crossing exchange (batch time / {r})"),
    };
    let mut text = format!(
        "\n{name}, µs: {unit}; per launch the median over {b} batches after {w} warm-up \
         iterations ({} above 1 MiB); below, the median over launches (min over launches). \
         Ratios are pertinax / Open MPI (< 1: pertinax faster). GB/s = 1e9 B/s, from the median \
         (best launch in parentheses).\n\n",
        (r / 4).max(10)
    );
    let mut t = Table::new([
        "bytes",
        "pertinax µs",
        "Open MPI µs",
        "ratio med",
        "ratio min",
        "pertinax GB/s",
        "Open MPI GB/s",
        "BW ratio",
    ]);
    fn get(set: Option<&Vec<Series>>, n: u64) -> Option<&Series> {
        set.and_then(|s| find(s, &n.to_string()))
    }
    for &n in &labels {
        let ps = get(Some(&p), n).and_then(Series::all);
        let os = get(o.as_ref(), n).and_then(Series::all);
        let rmed = stats::ratio(ps.map(|s| s.median), os.map(|s| s.median));
        let rmin = stats::ratio(ps.map(|s| s.min), os.map(|s| s.min));
        let bw = |s: Option<stats::Summary>| {
            (
                bandwidth(n, s.map(|s| s.median)),
                bandwidth(n, s.map(|s| s.min)),
            )
        };
        let (pbw, pbest) = bw(ps);
        let (obw, obest) = bw(os);
        let bwr = stats::ratio(pbw, obw);
        let show_bw = n >= BW_FROM;
        let bw_cell = |m: Option<f64>, best: Option<f64>| match (show_bw, m, best) {
            (true, Some(m), Some(best)) => format!("{m:.2} ({best:.2})"),
            _ => "-".into(),
        };
        t.row(vec![
            bytes(n),
            med_min(ps),
            med_min(os),
            ratio(rmed),
            ratio(rmin),
            bw_cell(pbw, pbest),
            bw_cell(obw, obest),
            if show_bw { ratio(bwr) } else { "-".into() },
        ]);
        for (impl_name, s, bwv) in [(ctx.pertinax_name(), ps, pbw), ("ompi", os, obw)] {
            if let Some(s) = s {
                ctx.out.json(&json!({
                    "bench": name, "impl": impl_name, "ranks": 2, "cores": ctx.cores, "bytes": n,
                    "median_us": jnum(Some(s.median)), "min_us": jnum(Some(s.min)),
                    "launches": s.n, "bw_GBps": jnum(bwv.filter(|_| show_bw)),
                }));
            }
        }
        if let (Some(ps), Some(os)) = (ps, os) {
            ctx.out.json(&json!({
                "bench": name, "backend": ctx.backend.name(), "ranks": 2, "cores": ctx.cores,
                "bytes": n,
                "pertinax_us": jnum(Some(ps.median)), "ompi_us": jnum(Some(os.median)),
                "ratio": jnum(rmed), "ratio_min": jnum(rmin),
                "bw_ratio": jnum(bwr.filter(|_| show_bw)),
            }));
        }
    }
    text.push_str(&t.render());
    if o.is_none() {
        text.push_str("\n(no Open MPI column: Open MPI was not run)\n");
    } else if pattern == Pattern::PingPong {
        text.push_str(
            "\n(the Open MPI anchor pingpong.c measures 0, 8, 1024, 65536 and 1048576 bytes \
             only, so the other rows have no ratio)\n",
        );
    }
    text.push_str(&spread(&c.variants, &[Some(&p), o.as_ref()]));
    text.push_str(&fast_table(&labels, &p, o.as_ref()));
    if pattern == Pattern::PingPong {
        text.push_str(&goals(&p, o.as_ref(), Goals::of(ctx.backend)));
    }
    text.push_str(&c.hosts());
    ctx.out.text(&text);
}

/// Min..max of the per-launch values, per variant and size.
fn spread(variants: &[Variant], sets: &[Option<&Vec<Series>>]) -> String {
    let mut s =
        String::from("\nspread over launches (min..max of the per-launch medians), µs:\n\n```\n");
    for (v, set) in variants.iter().zip(sets) {
        let Some(set) = set else { continue };
        let cells: Vec<String> = set
            .iter()
            .filter_map(|x| {
                let a = x.all()?;
                let n: u64 = x.label.parse().ok()?;
                Some(format!(
                    "{} {}..{}",
                    bytes(n).replace(' ', ""),
                    num(a.min),
                    num(a.max)
                ))
            })
            .collect();
        s.push_str(&format!("{:<9} {}\n", v.name, cells.join("  ")));
    }
    s.push_str("```\n");
    s
}

/// Medians over the fast-state launches only, if any launch was fast.
fn fast_table(labels: &[u64], p: &[Series], o: Option<&Vec<Series>>) -> String {
    let any_fast = p.iter().any(|s| s.fast().is_some());
    if !any_fast {
        return "\nno pertinax launch ran in the host's fast state, so there are no fast-state medians\n".into();
    }
    let mut t = Table::new([
        "bytes",
        "pertinax fast launches",
        "pertinax µs",
        "Open MPI fast launches",
        "Open MPI µs",
        "ratio med",
    ]);
    for &n in labels {
        let label = n.to_string();
        let pf = find(p, &label).and_then(Series::fast);
        let of = o.and_then(|o| find(o, &label)).and_then(Series::fast);
        let count = |s: Option<&Series>, f: Option<stats::Summary>| match s {
            Some(s) => format!("{}/{}", f.map_or(0, |f| f.n), s.points.len()),
            None => "-".into(),
        };
        t.row(vec![
            bytes(n),
            count(find(p, &label), pf),
            med_min(pf),
            count(o.and_then(|o| find(o, &label)), of),
            med_min(of),
            ratio(stats::ratio(pf.map(|s| s.median), of.map(|s| s.median))),
        ]);
    }
    format!(
        "\nfast-state launches only (sentinel one-way <= 60 ns right before and right after \
         the launch), median (min), µs:\n\n{}",
        t.render()
    )
}

/// The ping-pong goals of a backend, as ratios pertinax / Open MPI.
#[derive(Clone, Copy, Debug)]
struct Goals {
    /// Largest latency ratio (0 and 8 B).
    latency: f64,
    /// Smallest bandwidth ratio (64 KiB and 1 MiB).
    bandwidth: f64,
}

impl Goals {
    /// Native: at least Open MPI's speed (issues 2 and 21). MPI: the Rust
    /// layer costs at most 5% on 8-byte latency and 2% on 1 MiB bandwidth
    /// over raw C on the same MPI (issue 17).
    fn of(b: BenchBackend) -> Self {
        match b {
            BenchBackend::Native => Goals {
                latency: 1.0,
                bandwidth: 1.0,
            },
            BenchBackend::Mpi => Goals {
                latency: 1.05,
                bandwidth: 0.98,
            },
        }
    }
}

/// The ping-pong goals, on all launches and on fast-state launches.
fn goals(p: &[Series], o: Option<&Vec<Series>>, g: Goals) -> String {
    let Some(o) = o else {
        return "\ngoals: not assessed (no Open MPI to compare with)\n".into();
    };
    let mut s = String::from(
        "\ngoals (pertinax / Open MPI, medians over launches; fast-state launches in brackets):\n\n",
    );
    let pair = |n: u64, fast: bool| {
        let pick = |set: &[Series]| {
            let x = find(set, &n.to_string())?;
            if fast { x.fast() } else { x.all() }.map(|s| s.median)
        };
        (pick(p), pick(o))
    };
    for n in [0u64, 8] {
        let (a, b) = pair(n, false);
        let (fa, fb) = pair(n, true);
        let r = stats::ratio(a, b);
        let fr = stats::ratio(fa, fb);
        s.push_str(&format!(
            "- latency {:>6}: ratio {} (goal <= {:.2}): {}   [fast: {} {}]\n",
            bytes(n),
            ratio(r),
            g.latency,
            verdict(r, |x| x <= g.latency),
            ratio(fr),
            verdict(fr, |x| x <= g.latency)
        ));
    }
    for n in [64u64 << 10, 1 << 20] {
        let (a, b) = pair(n, false);
        let (fa, fb) = pair(n, true);
        let r = stats::ratio(b, a);
        let fr = stats::ratio(fb, fa);
        s.push_str(&format!(
            "- bandwidth {:>6}: ratio {} (goal >= {:.2}): {}   [fast: {} {}]\n",
            bytes(n),
            ratio(r),
            g.bandwidth,
            verdict(r, |x| x >= g.bandwidth),
            ratio(fr),
            verdict(fr, |x| x >= g.bandwidth)
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Point;

    fn rows(values: &[(u64, f64)]) -> Vec<Series> {
        values
            .iter()
            .map(|&(n, v)| Series {
                label: n.to_string(),
                points: vec![Point {
                    value: v,
                    fast: Some(true),
                }],
            })
            .collect()
    }

    #[test]
    fn goals_compare_latency_and_bandwidth() {
        let p = rows(&[(0, 0.10), (8, 0.15), (65536, 5.0), (1 << 20, 150.0)]);
        let o = rows(&[(0, 0.11), (8, 0.13), (65536, 10.0), (1 << 20, 120.0)]);
        let g = goals(&p, Some(&o), Goals::of(BenchBackend::Native));
        let lines: Vec<&str> = g.lines().filter(|l| l.contains("ratio")).collect();
        assert_eq!(lines.len(), 4, "{g}");
        assert!(
            lines[0].contains("ratio 0.91 (goal <= 1.00): met"),
            "{}",
            lines[0]
        );
        assert!(
            lines[1].contains("ratio 1.15 (goal <= 1.00): NOT met"),
            "{}",
            lines[1]
        );
        assert!(
            lines[2].contains("ratio 2.00 (goal >= 1.00): met"),
            "{}",
            lines[2]
        );
        assert!(
            lines[3].contains("ratio 0.80 (goal >= 1.00): NOT met"),
            "{}",
            lines[3]
        );
        assert!(goals(&p, None, Goals::of(BenchBackend::Native)).contains("not assessed"));
        // On MPI: within 5% of C's latency, 2% of its bandwidth.
        let m = goals(&p, Some(&o), Goals::of(BenchBackend::Mpi));
        let lines: Vec<&str> = m.lines().filter(|l| l.contains("ratio")).collect();
        assert!(lines[0].contains("(goal <= 1.05): met"), "{}", lines[0]);
        assert!(
            lines[1].contains("ratio 1.15 (goal <= 1.05): NOT met"),
            "{}",
            lines[1]
        );
        assert!(
            lines[3].contains("ratio 0.80 (goal >= 0.98): NOT met"),
            "{}",
            lines[3]
        );
        let o2 = rows(&[(0, 0.10), (8, 0.15), (65536, 5.0), (1 << 20, 152.0)]);
        let m = goals(&p, Some(&o2), Goals::of(BenchBackend::Mpi));
        assert!(m.contains("ratio 1.01 (goal >= 0.98): met"), "{m}");
    }

    #[test]
    fn fast_table_counts_fast_launches() {
        let p = rows(&[(0, 0.10)]);
        let t = fast_table(&[0, 8], &p, None);
        assert!(t.contains("| 0     | 1/1"), "{t}");
        assert!(t.contains("| 8     | -"), "{t}");
        let slow = vec![Series {
            label: "0".into(),
            points: vec![Point {
                value: 1.0,
                fast: Some(false),
            }],
        }];
        assert!(fast_table(&[0], &slow, None).contains("no pertinax launch"));
    }
}
