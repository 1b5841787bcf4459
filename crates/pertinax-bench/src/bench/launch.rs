//! Launch cost: wall time of `pertinax run -n N -- <self> worker hello`
//! (init + finalize only) against `mpirun -n N hello` (anchor `hello.c`),
//! with Open MPI's default settings and with `--mca btl ^ofi`, which
//! removes the ~1 s libfabric probe from `MPI_Init`.

use anyhow::Result;
use serde_json::json;

use super::{head, Campaign, Context};
use crate::report::{jnum, med_min, ratio, verdict, Table};
use crate::run::{Cmd, Variant, WALL};
use crate::stats::{self, Selector, Summary};

/// The goal for `pertinax run -n 16` of an init/finalize program.
const GOAL_MS: f64 = 50.0;

/// Which launcher a variant uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Impl {
    Pertinax,
    Ompi,
    OmpiNoOfi,
}

impl Impl {
    fn name(self) -> &'static str {
        match self {
            Impl::Pertinax => "pertinax",
            Impl::Ompi => "ompi",
            Impl::OmpiNoOfi => "ompi-btl^ofi",
        }
    }
}

/// Runs the benchmark for every rank count and prints its tables.
///
/// # Errors
/// When a program cannot be started.
pub fn run(ctx: &mut Context, ranks: &[usize]) -> Result<()> {
    let hello = ctx.ompi_program("hello", None);
    let mut variants = Vec::new();
    let mut index = Vec::new(); // (ranks, impl) per variant
    for &n in ranks {
        let cmd = Cmd::new(&ctx.launcher)
            .args(["run", "-n", &n.to_string(), "--"])
            .arg(&ctx.exe)
            .args(["worker", "hello"]);
        variants.push(Variant::new(format!("pertinax n={n}"), cmd));
        index.push((n, Impl::Pertinax));
        if let (Some(ompi), Some(prog)) = (&ctx.ompi, &hello) {
            for (i, mca) in [
                (Impl::Ompi, &[][..]),
                (Impl::OmpiNoOfi, &["--mca", "btl", "^ofi"]),
            ] {
                let name = format!("{} n={n}", i.name());
                variants.push(Variant::new(name, ompi.mpirun(n, mca, prog)));
                index.push((n, i));
            }
        }
    }
    let title = format!(
        "## launch: N ranks on {} cores (N > {} oversubscribed); {} launches per configuration, \
         interleaved launch by launch",
        ctx.cores, ctx.cores, ctx.launches
    );
    let shown = &variants[..3.min(variants.len())];
    let ran = ctx.ompi.is_some() && hello.is_some();
    ctx.out.text(&(head(&title, shown) + &ctx.ompi_line(ran)));
    let c = ctx.campaign("launch", variants, ctx.pace())?;
    report(ctx, ranks, &index, &c);
    Ok(())
}

/// Wall time (ms) and slowest-rank init time (ms) of one variant.
fn summaries(c: &Campaign, variant: usize) -> (Option<Summary>, Option<Summary>) {
    let one = |key, group, value| {
        let s = c.series(variant, Selector { key, group, value });
        s.first().and_then(|s| s.all())
    };
    (
        one(WALL, &["variant"], "elapsed_ms"),
        one("HELLO", &["ranks"], "init_max_ms"),
    )
}

fn report(ctx: &Context, ranks: &[usize], index: &[(usize, Impl)], c: &Campaign) {
    let with_ompi = index.iter().any(|(_, i)| *i != Impl::Pertinax);
    let mut t = Table::new([
        "N",
        "pertinax ms",
        "pertinax init ms",
        "Open MPI ms",
        "Open MPI init ms",
        "Open MPI btl^ofi ms",
        "btl^ofi init ms",
        "ratio vs default",
        "ratio vs btl^ofi",
    ]);
    let mut goal16 = None;
    for &n in ranks {
        let get = |which: Impl| {
            index
                .iter()
                .position(|&(m, i)| m == n && i == which)
                .map(|v| summaries(c, v))
                .unwrap_or((None, None))
        };
        let (pw, pi) = get(Impl::Pertinax);
        let (ow, oi) = get(Impl::Ompi);
        let (nw, ni) = get(Impl::OmpiNoOfi);
        let med = |s: Option<Summary>| s.map(|s| s.median);
        let r_def = stats::ratio(med(pw), med(ow));
        let r_no = stats::ratio(med(pw), med(nw));
        if n == 16 {
            goal16 = pw;
        }
        t.row(vec![
            n.to_string(),
            med_min(pw),
            med_min(pi),
            med_min(ow),
            med_min(oi),
            med_min(nw),
            med_min(ni),
            ratio(r_def),
            ratio(r_no),
        ]);
        for (which, w, i) in [
            (Impl::Pertinax, pw, pi),
            (Impl::Ompi, ow, oi),
            (Impl::OmpiNoOfi, nw, ni),
        ] {
            if let Some(w) = w {
                ctx.out.json(&json!({
                    "bench": "launch", "impl": which.name(), "ranks": n,
                    "median_ms": jnum(Some(w.median)), "min_ms": jnum(Some(w.min)),
                    "launches": w.n, "init_max_ms": jnum(med(i)),
                }));
            }
        }
        if let (Some(p), Some(o)) = (pw, ow) {
            ctx.out.json(&json!({
                "bench": "launch", "ranks": n,
                "pertinax_ms": jnum(Some(p.median)), "ompi_ms": jnum(Some(o.median)),
                "ratio": jnum(r_def), "ompi_btl_no_ofi_ms": jnum(med(nw)), "ratio_btl_no_ofi": jnum(r_no),
            }));
        }
    }
    let mut text = String::from(
        "\nlaunch, ms: wall time of the whole launcher command (spawn to exit), median over \
         launches (min over launches); init = slowest rank's time from entering main to the end \
         of init, as printed by the program (HELLO line).\n\n",
    );
    text.push_str(&t.render());
    if !with_ompi {
        text.push_str("\n(no Open MPI columns: Open MPI was not run)\n");
    }
    text.push_str(&format!(
        "\ngoal: `pertinax run -n 16` of an init/finalize program under {GOAL_MS:.0} ms: median {} ms: {}; best launch {} ms: {}\n",
        goal16.map_or("-".into(), |s| format!("{:.1}", s.median)),
        verdict(goal16.map(|s| s.median), |x| x < GOAL_MS),
        goal16.map_or("-".into(), |s| format!("{:.1}", s.min)),
        verdict(goal16.map(|s| s.min), |x| x < GOAL_MS),
    ));
    text.push_str(&c.hosts());
    ctx.out.text(&text);
}
