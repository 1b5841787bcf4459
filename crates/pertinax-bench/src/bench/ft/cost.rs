//! The cost part: ping-pong at 0 and 8 B with failure detection on and
//! off (`PERTINAX_DETECT=0`), interleaved.

use anyhow::Result;
use serde_json::json;

use super::Goal;
use super::COST_PCT;
use crate::bench::{head, Context, Pace};
use crate::report::{jnum, Table};
use crate::run::{Cmd, Variant};
use crate::stats::{self, Selector, Summary};

pub(super) fn cost(ctx: &mut Context, launches: usize) -> Result<Vec<Goal>> {
    let worker = |c: Cmd| {
        c.arg("--")
            .arg(&ctx.exe)
            .args(["worker", "pingpong", "--sizes", "0,8"])
            .args(["--reps", "1000", "--warmup", "100", "--batches", "7"])
    };
    let base = Cmd::new(&ctx.launcher).args(["run", "-n", "2"]);
    let detect_off = format!("{}=0", pertinax_wire::env::tune::DETECT);
    let variants = vec![
        Variant::new("detect on", worker(base.clone())),
        Variant::new(&detect_off, worker(base.args(["-x", detect_off.as_str()]))),
    ];
    let title = format!(
        "## ft cost: ping-pong with failure detection on and off; {}; {launches} launches per \
         variant, interleaved launch by launch",
        ctx.placement(2)
    );
    ctx.out.text(&head(&title, &variants));
    let pace = Pace {
        rounds: launches,
        limit: ctx.limit,
    };
    let c = ctx.campaign("ft cost", variants, pace)?;
    let sel = Selector {
        key: "PP",
        group: &["size"],
        value: "t_half_us_med",
    };
    let (on, off) = (c.series(0, sel), c.series(1, sel));
    let mut t = Table::new([
        "bytes",
        "detect on µs",
        "detect off µs",
        "cost % (medians)",
        "cost % (minima)",
        "cost % (fast-state medians, launches on/off)",
    ]);
    let pct = |a: Option<f64>, b: Option<f64>| stats::ratio(a, b).map(|r| (r - 1.0) * 100.0);
    let fmt = |p: Option<f64>| p.map_or("-".into(), |p| format!("{p:+.1}"));
    let mut goals = Vec::new();
    for label in ["0", "8"] {
        let a = stats::find(&on, label);
        let b = stats::find(&off, label);
        let (sa, sb) = (a.and_then(|s| s.all()), b.and_then(|s| s.all()));
        let (fa, fb) = (a.and_then(|s| s.fast()), b.and_then(|s| s.fast()));
        let p_med = pct(sa.map(|s| s.median), sb.map(|s| s.median));
        let p_min = pct(sa.map(|s| s.min), sb.map(|s| s.min));
        let p_fast = pct(fa.map(|s| s.median), fb.map(|s| s.median));
        let mm = |s: Option<Summary>| {
            s.map_or("-".into(), |s| format!("{:.3} ({:.3})", s.median, s.min))
        };
        t.row(vec![
            label.into(),
            mm(sa),
            mm(sb),
            fmt(p_med),
            fmt(p_min),
            format!(
                "{} ({}/{})",
                fmt(p_fast),
                fa.map_or(0, |s| s.n),
                fb.map_or(0, |s| s.n)
            ),
        ]);
        ctx.out.json(&json!({
            "bench": "ft-cost", "bytes": label.parse::<u64>().unwrap_or(0),
            "detect_on_us": jnum(sa.map(|s| s.median)), "detect_off_us": jnum(sb.map(|s| s.median)),
            "cost_pct": jnum(p_med), "cost_pct_min": jnum(p_min), "cost_pct_fast": jnum(p_fast),
        }));
        goals.push(Goal {
            name: format!("cost of failure detection on {label} B ping-pong (%)"),
            ranks: Some(2),
            mode: None,
            value: p_med,
            target: format!("<= {COST_PCT}"),
            note: format!("minima {}, fast-state {}", fmt(p_min), fmt(p_fast)),
            ok: |v| v <= COST_PCT,
            reference: false,
        });
    }
    let mut text = String::from(
        "\nft cost, µs: half round trip, per launch the median over 7 batches of 1000 round \
         trips; below, median over launches (min over launches). cost % = on / off - 1 (> 0: \
         detection costs time).\n\n",
    );
    text.push_str(&t.render());
    text.push_str(&c.hosts());
    ctx.out.text(&text);
    Ok(goals)
}
