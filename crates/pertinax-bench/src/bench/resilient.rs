//! Resilient communicators (`pertinax-resilient`): what they cost without
//! failures, how long a repair takes, and what applications pay end to end.
//!
//! Three parts, each its own interleaved series of launches per rank count:
//!
//! - [`overhead`]: `pertinax run -n N --resilient=hier --resilient-k K --
//!   <self> worker resilient`: 1-byte barrier, bcast, reduce and allreduce
//!   on the plain communicator, on `Resilient` with `Check::Agree` (an
//!   agreement after every collective, Legio's approach and the library's
//!   default) and with `Check::Log` (replay log, no agreement), and on
//!   `Hierarchical` (Legio's local groups of at most k ranks joined by a
//!   global communicator of their masters and deputies, agree), all in one launch on identical code; at the
//!   sweep's rank count also bcast, reduce and allreduce from 8 B to
//!   1 MiB. Ratios resilient / plain per launch; the goal is judged at
//!   8 ranks. (`--resilient=hier` only passes k to the worker, which
//!   builds every communicator itself.)
//! - [`repair`]: `pertinax run -n N --kill V@resilient.iter#K -- <self>
//!   worker repair --check C` (with `--resilient=hier --resilient-k K` for
//!   the hierarchical communicator, whose victim V is a master, a deputy
//!   or a member): the survivors' allreduce that spans the failure minus
//!   their fault-free call (detection + repair + redo), and for the
//!   hierarchy the average over a uniformly chosen victim.
//! - [`apps`]: `pertinax-ep` and `pertinax-screen` plain, `--resilient` and
//!   `--resilient --resilient-check log`, without failures: overhead %.
//!
//! The machine has few cores; every configuration with more ranks than
//! cores is oversubscribed, and the tables say so.

mod apps;
mod overhead;
mod repair;

use anyhow::Result;

use super::Context;
use crate::cli::{ResPart, ResilientOpts};
use crate::report::num;
use crate::stats::Summary;

/// Runs the parts `o` asks for and prints their tables.
///
/// # Errors
/// When a program cannot be started.
pub fn run(ctx: &mut Context, o: &ResilientOpts) -> Result<()> {
    ctx.out.text(&format!(
        "\n## resilient: resilient communicators (pertinax-resilient) against the plain one\n\n\
         This machine has {c} cores: every configuration with more than {c} ranks is \
         oversubscribed (N/{c} ranks per core), so its times include waiting for a time slice.\n",
        c = ctx.cores
    ));
    if o.wants(ResPart::Overhead) {
        overhead::run(ctx, o)?;
    }
    if o.wants(ResPart::Repair) {
        repair::run(ctx, o)?;
    }
    if o.wants(ResPart::Apps) {
        apps::run(ctx, o)?;
    }
    Ok(())
}

/// `median (min–max)` over launches with `d` decimals ([`num`] when `d` is
/// `None`), or `-`.
fn spread(s: Option<Summary>, d: Option<usize>) -> String {
    let f = |x: f64| d.map_or_else(|| num(x), |d| format!("{x:.d$}"));
    s.map_or("-".into(), |s| {
        format!("{} ({}–{})", f(s.median), f(s.min), f(s.max))
    })
}

/// The launcher's options that make `worker resilient` and `worker repair`
/// build the hierarchical communicator with local groups of `k` ranks
/// (the threshold, which only `pertinax_resilient::world` reads, at 1 so
/// that the command line says what is measured: the hierarchy at every
/// rank count).
fn hier_launch_args(k: usize) -> Vec<String> {
    vec![
        "--resilient=hier".into(),
        "--resilient-k".into(),
        k.to_string(),
        "--resilient-threshold".into(),
        "1".into(),
    ]
}

/// `N ranks on C cores (R per core)`: how many ranks shared each core.
fn per_core(ranks: usize, cores: usize) -> String {
    let c = cores.max(1);
    let unit = if c == 1 { "core" } else { "cores" };
    format!(
        "{ranks} on {c} {unit} ({} per core)",
        num_short(ranks as f64 / c as f64)
    )
}

/// `4` or `1.5`: a ratio without trailing zeros.
fn num_short(x: f64) -> String {
    let s = format!("{x:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_cells() {
        let s = Summary::of(&[2.0, 1.0, 4.0]);
        assert_eq!(spread(s, None), "2.000 (1.000–4.000)");
        assert_eq!(spread(s, Some(2)), "2.00 (1.00–4.00)");
        assert_eq!(spread(None, Some(1)), "-");
    }

    #[test]
    fn placement_cells() {
        assert_eq!(per_core(8, 2), "8 on 2 cores (4 per core)");
        assert_eq!(per_core(3, 2), "3 on 2 cores (1.5 per core)");
        assert_eq!(per_core(2, 0), "2 on 1 core (2 per core)");
        assert_eq!(
            hier_launch_args(3),
            [
                "--resilient=hier",
                "--resilient-k",
                "3",
                "--resilient-threshold",
                "1"
            ]
        );
    }
}
