//! `pertinax-ep CLASS`: the NAS Parallel Benchmarks EP kernel on every rank
//! of a job, unchanged whether the job is plain or resilient.
//!
//! ```sh
//! pertinax run -n 4 -- target/release/pertinax-ep S
//! pertinax run -n 8 --resilient --kill 2@ep.allreduce#1 -- target/release/pertinax-ep S
//! ```
//!
//! # What it does
//!
//! Each rank computes its portion of the class's batches
//! ([`ep::portion`]), the twelve sums (sx, sy, q[0..10]) are added up with
//! one allreduce, as in NPB's MPI EP. Then the ranks allgather a *check
//! row* each: their own portion's sums, the allreduce's result and a digest
//! of its outcome. The lowest rank present in that allgather reports.
//!
//! On a resilient communicator a rank that dies costs only its portion.
//! The allreduce's [`Outcome::missing`](pertinax_resilient::Outcome) lists
//! the ranks whose contribution is *not* in the result: a rank that died
//! before contributing is there, a rank that contributed and died later is
//! not (its portion counts, and the result can still pass the official
//! verification). The reporter checks exactly that:
//!
//! - **exact_survivors**: the result equals the sum of the portions of the
//!   contributors (every rank not missing): the portions that ranks
//!   reported in their check rows, and, recomputed sequentially, those of
//!   contributors that died before reporting. With `--recompute yes` (the
//!   default for class S, `auto`) the reporter also recomputes every
//!   reported portion and requires it to match bit for bit. The counts
//!   must be equal; sx and sy agree to 1e-12 (the allreduce adds in
//!   another order).
//! - **consistent**: every rank present in the check allgather got
//!   bitwise the same result and the same outcome.
//! - **verified**: NPB's official verification, when no contribution is
//!   missing (`n/a` otherwise: the official values are for the whole).
//!
//! Only the reporter's own death during its checks loses the report.
//!
//! # Output
//!
//! Every rank prints `ep: rank R: ...` about its part. The reporter prints
//! one line for people and one for programs:
//!
//! ```text
//! EP class=S n=4 mode=resilient failed=[2] missing=[2] fraction=0.7500
//!    sx=... sy=... gaussian=... verified=n/a exact_survivors=true
//!    consistent=true recomputed=3 time_s=0.512 check_s=0.731
//! ```
//!
//! (on one line). `failed` is every rank known to have failed at the end,
//! `fraction` the share of the class's batches in the result, `time_s` the
//! parallel part (start to check allgather), `check_s` the reporter's
//! checks. The exit status is 0 when every check passed, 1 otherwise or on
//! an error (a failure on a plain communicator is one).
//!
//! # Fault points
//!
//! For `pertinax run --kill RANK@NAME#K`: `ep.compute` (before the rank
//! computes its portion: it never contributes), `ep.allreduce` (on entering
//! the allreduce, which the others are entering or waiting in) and
//! `ep.after` (after the allreduce: the rank contributed, then dies before
//! its check row is sent).

use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Parser;
use pertinax::Op;
use pertinax_apps::ep::{self, Class, EpSums};
use pertinax_resilient::{Communicator, CommunicatorExt, Error};

mod common;
use common::{digest, indices, list, lowest_outside, Recompute, Verdict};

/// NPB EP on every rank; plain or resilient as the job says.
#[derive(Debug, Parser)]
#[command(name = "pertinax-ep", version)]
struct Args {
    /// The problem class: S, W, A, B, C, D or E (2^24 to 2^40 pairs).
    #[arg(value_parser = parse_class)]
    class: Class,
    /// Whether the reporter recomputes every contributor's portion
    /// sequentially (auto: for class S only).
    #[arg(long, value_enum, default_value = "auto")]
    recompute: Recompute,
}

fn parse_class(s: &str) -> Result<Class, String> {
    Class::parse(s)
        .ok_or_else(|| format!("unknown class {s:?}: expected one of S, W, A, B, C, D, E"))
}

/// Words of a check row: the rank's own sums, the allreduce's result, the
/// digest of its outcome.
const ROW: usize = 2 * EpSums::LEN + 1;

fn main() -> ExitCode {
    let args = Args::parse();
    common::main_with("pertinax-ep", |world| {
        job(world, &args, world.is_resilient())
    })
}

/// Sums as the bits of their doubles (for exact comparisons and transport
/// in `u64` rows).
fn bits(s: &EpSums) -> [u64; EpSums::LEN] {
    s.to_array().map(f64::to_bits)
}

fn from_bits(w: &[u64]) -> EpSums {
    let mut a = [0.0; EpSums::LEN];
    for (x, b) in a.iter_mut().zip(w) {
        *x = f64::from_bits(*b);
    }
    EpSums::from_array(a)
}

/// `"true"`, `"false"`, or `"n/a"` for a check that does not apply.
fn yes_no(check: Option<bool>) -> &'static str {
    match check {
        Some(true) => "true",
        Some(false) => "false",
        None => "n/a",
    }
}

/// The program, on any communicator.
fn job<C: Communicator<Error = Error>>(comm: &C, args: &Args, resilient: bool) -> Result<Verdict> {
    let (n, me) = (comm.size(), comm.rank().index());
    let class = args.class;
    let t0 = Instant::now();

    let range = ep::portion(class, me, n);
    pertinax::fault_point("ep.compute");
    let mine = ep::batches(range.clone());

    pertinax::fault_point("ep.allreduce");
    let mut total = [0.0; EpSums::LEN];
    let reduced = comm
        .allreduce(&mine.to_array(), &mut total, &Op::sum())
        .context("allreduce of the sums")?;
    let missing = indices(&reduced.missing);
    pertinax::fault_point("ep.after");

    let result = EpSums::from_array(total);
    let mut row = Vec::with_capacity(ROW);
    row.extend(bits(&mine));
    row.extend(bits(&result));
    row.push(digest(missing.iter().map(|&r| r as u64)));
    let mut rows = vec![u64::MAX; ROW * n];
    let checked = comm
        .allgather(&row, &mut rows)
        .context("allgather of the check rows")?;
    let absent = indices(&checked.missing);
    let time_s = t0.elapsed().as_secs_f64();
    println!(
        "ep: rank {me}: batches {}..{}, allreduce {reduced}, check allgather {checked}",
        range.start, range.end
    );
    if lowest_outside(n, &absent) != Some(me) {
        return Ok(Verdict::Quiet);
    }
    let gathered = Gathered {
        result,
        missing,
        rows,
        absent,
    };
    report(comm, args, resilient, &gathered, time_s)
}

/// What the reporter knows after the check allgather.
#[derive(Debug)]
struct Gathered {
    /// The allreduce's result.
    result: EpSums,
    /// The ranks whose contribution is not in it.
    missing: Vec<usize>,
    /// Every rank's check row ([`ROW`] words each).
    rows: Vec<u64>,
    /// The ranks missing from the check allgather.
    absent: Vec<usize>,
}

/// The reporter's checks and summary line (`time_s`: the parallel part's
/// time).
fn report<C: Communicator<Error = Error>>(
    comm: &C,
    args: &Args,
    resilient: bool,
    g: &Gathered,
    time_s: f64,
) -> Result<Verdict> {
    let t1 = Instant::now();
    let (n, me, class) = (comm.size(), comm.rank().index(), args.class);
    let Gathered {
        result,
        missing,
        rows,
        absent,
    } = g;
    let row = &rows[me * ROW..(me + 1) * ROW];
    let recompute = match args.recompute {
        Recompute::Auto => class == Class::S,
        Recompute::Yes => true,
        Recompute::No => false,
    };
    let inconsistent: Vec<usize> = (0..n)
        .filter(|r| {
            !absent.contains(r) && rows[r * ROW + EpSums::LEN..(r + 1) * ROW] != row[EpSums::LEN..]
        })
        .collect();
    let contributors: Vec<usize> = (0..n).filter(|r| !missing.contains(r)).collect();
    let mut expected = EpSums::default();
    let mut scale = (0.0f64, 0.0f64);
    let mut recomputed = 0;
    let mut wrong_parts = Vec::new();
    for &r in &contributors {
        let reported =
            (!absent.contains(&r)).then(|| from_bits(&rows[r * ROW..r * ROW + EpSums::LEN]));
        let part = match reported {
            Some(p) if recompute && r != me => {
                let again = ep::batches(ep::portion(class, r, n));
                recomputed += 1;
                if bits(&again) != bits(&p) {
                    wrong_parts.push(r);
                }
                again
            }
            Some(p) => p,
            // It contributed, then died before reporting its part.
            None => {
                recomputed += 1;
                ep::batches(ep::portion(class, r, n))
            }
        };
        scale.0 += part.sx.abs();
        scale.1 += part.sy.abs();
        expected.merge(&part);
    }
    let close = |a: f64, b: f64, scale: f64| (a - b).abs() <= 1e-12 * (scale + b.abs()).max(1.0);
    let exact = wrong_parts.is_empty()
        && result.q == expected.q
        && close(result.sx, expected.sx, scale.0)
        && close(result.sy, expected.sy, scale.1);
    let verified = missing.is_empty().then(|| result.verify(class));
    let included: u64 = contributors
        .iter()
        .map(|&r| {
            let p = ep::portion(class, r, n);
            p.end - p.start
        })
        .sum();
    let fraction = included as f64 / class.batches() as f64;
    let failed = indices(&comm.failed_ranks());
    let check_s = t1.elapsed().as_secs_f64();

    let (rx, ry) = class.reference_sums();
    println!(
        "ep: class {class}, {n} ranks, {} pairs: sx {:.15e} sy {:.15e} (official {rx:.15e} {ry:.15e}), {} Gaussian pairs, counts {:?}",
        class.pairs(),
        result.sx,
        result.sy,
        result.gaussian_pairs(),
        result.q
    );
    if !wrong_parts.is_empty() {
        println!(
            "ep: reported portions of ranks {} differ from their recomputation",
            list(&wrong_parts)
        );
    }
    if !inconsistent.is_empty() {
        println!(
            "ep: ranks {} got another result or outcome than rank {me}",
            list(&inconsistent)
        );
    }
    if !exact {
        println!(
            "ep: the result differs from the sum of the contributors' portions: sx {:.15e} sy {:.15e} counts {:?}",
            expected.sx, expected.sy, expected.q
        );
    }
    println!(
        "EP class={class} n={n} mode={} failed={} missing={} fraction={fraction:.4} sx={:.15e} sy={:.15e} gaussian={} verified={} exact_survivors={exact} consistent={} recomputed={recomputed} time_s={time_s:.3} check_s={check_s:.3}",
        if resilient { "resilient" } else { "plain" },
        list(&failed),
        list(missing),
        result.sx,
        result.sy,
        result.gaussian_pairs(),
        yes_no(verified),
        inconsistent.is_empty(),
    );
    let pass = exact && inconsistent.is_empty() && verified != Some(false);
    Ok(if pass { Verdict::Pass } else { Verdict::Fail })
}
