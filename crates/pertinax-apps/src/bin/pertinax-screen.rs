//! `pertinax-screen [--count N] [--work W] [--k K] [--db PATH] [--out PATH]`:
//! a virtual screening on every rank of a job, unchanged whether the job is
//! plain or resilient.
//!
//! ```sh
//! pertinax run -n 4 -- target/release/pertinax-screen --count 20000 --work 16
//! pertinax run -n 8 --resilient --kill 3@screen.molecule#100 -- target/release/pertinax-screen
//! ```
//!
//! # What it does
//!
//! 1. The lowest live rank writes the molecule database `--db` if there is
//!    none (`--count` molecules generated from `--seed`, deterministic;
//!    written aside and renamed into place), then a barrier. An existing
//!    database is used as it is, whatever its size.
//! 2. Every rank reads its share of the records ([`screen::portion`],
//!    [`screen::read_range`]), scores each molecule and keeps its best
//!    `--k`. It writes every score (an `f64`, little-endian) to the output
//!    file `--out` at offset `8 × molecule index`, through a
//!    [`SharedFile`].
//! 3. The exchange: an allreduce adds up the number of molecules screened;
//!    its outcome names the *collector*, the lowest rank whose count is in
//!    the sum. Every other rank sends its best `k` to the collector
//!    (point to point), then the ranks allgather their encoded best `k`,
//!    and last allgather a digest of what they got. The lowest rank present
//!    in that last allgather is the *reporter* (the collector, unless it
//!    died on the way: then the messages are lost and the allgather
//!    stands alone).
//! 4. The reporter merges the best `k` of every rank it heard from (by the
//!    allgather, or else by its message), and checks: the result equals the
//!    best `k` over exactly those ranks' molecules, recomputed sequentially
//!    (with `--recompute yes`, and by default when `count × work` is at most
//!    2^22; otherwise the scores in the output file stand in); every one of
//!    those molecules has its score in the output file; a rank's message
//!    and its allgather slot agree; the count is the sum of the shares of
//!    the ranks its outcome does not list as missing; every survivor holds
//!    the same results (the digests).
//!
//! On a resilient communicator a rank that dies costs its share: the
//! report lists the molecule ranges lost (the shares of the ranks heard
//! from by neither path). A rank that died after the count still counts in
//! `screened`; the allgather's and the messages' contributors are checked
//! separately. Only the reporter's own death during its checks loses the
//! report.
//!
//! # Output
//!
//! Every rank prints two lines `screen: rank R: ...` about its part (after
//! the count, and at the end). The reporter prints the best
//! hits and one machine-readable line:
//!
//! ```text
//! SCREEN n=4 count=4000 work=8 k=10 mode=resilient failed=[2] lost=[2000..3000]
//!    screened=3000 fraction=0.7500 best=[17:12.345678,...] from_p2p=[0,1,3]
//!    from_allgather=[0,1,3] exact_survivors=true file_ok=true consistent=true
//!    count_ok=true recomputed=true time_s=0.412 check_s=0.380
//! ```
//!
//! (on one line). The exit status is 0 when every check passed, 1 otherwise
//! or on an error (a failure on a plain communicator is one).
//!
//! # Fault points
//!
//! For `pertinax run --kill RANK@NAME#K`: `screen.molecule` (before each
//! molecule is scored: the rank's share is lost, its scores never
//! written), `screen.exchange` (after its scores are written, before the
//! count), `screen.send` (as soon as the count returns, before the
//! message to the collector), `screen.allgather` (after the message, before the
//! allgather).

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Parser;
use pertinax::{Op, Rank};
use pertinax_apps::screen::{self, Hit, TopK};
use pertinax_resilient::{Communicator, CommunicatorExt, Error, SharedFile};

mod common;
use common::{digest, indices, list, lowest_outside, Recompute, Verdict};

/// A virtual screening on every rank; plain or resilient as the job says.
#[derive(Debug, Parser)]
#[command(name = "pertinax-screen", version)]
struct Args {
    /// Molecules of the database, when it has to be generated.
    #[arg(long, default_value_t = screen::DEFAULT_COUNT)]
    count: u64,
    /// Poses tried per molecule (the cost of a score).
    #[arg(long, default_value_t = screen::DEFAULT_WORK)]
    work: u32,
    /// How many of the best molecules to report.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    k: u64,
    /// The molecule database (generated if absent).
    #[arg(long, default_value = "pertinax-screen.db")]
    db: PathBuf,
    /// The output file of the scores (8 bytes per molecule).
    #[arg(long, default_value = "pertinax-screen.scores")]
    out: PathBuf,
    /// The seed of a generated database.
    #[arg(long, default_value_t = 2026)]
    seed: u64,
    /// Whether the reporter recomputes the survivors' scores sequentially
    /// (auto: when count × work is at most 2^22).
    #[arg(long, value_enum, default_value = "auto")]
    recompute: Recompute,
}

/// The tag of the point-to-point messages carrying a rank's best `k`.
const TAG: i32 = 17;

/// Words of a consistency row: digests of the count's and the allgather's
/// missing ranks, the count, a digest of the allgather's data.
const ROW: usize = 4;

fn main() -> ExitCode {
    let args = Args::parse();
    common::main_with("pertinax-screen", |world| {
        job(world, &args, world.is_resilient())
    })
}

/// Makes sure the database exists: the lowest live rank writes it (aside,
/// then renamed into place, so nobody reads half a file), then a barrier;
/// again, should that rank die before it is done.
fn ensure_db<C: Communicator<Error = Error>>(comm: &C, args: &Args) -> Result<()> {
    let me = comm.rank().index();
    for _ in 0..comm.size() {
        if !args.db.exists() {
            let failed = indices(&comm.failed_ranks());
            if lowest_outside(comm.size(), &failed) == Some(me) {
                let mut aside = args.db.clone().into_os_string();
                aside.push(format!(".{me}.tmp"));
                let aside = PathBuf::from(aside);
                screen::generate(&aside, args.count, args.seed)?;
                std::fs::rename(&aside, &args.db).with_context(|| {
                    format!("cannot rename {} to {}", aside.display(), args.db.display())
                })?;
            }
        }
        comm.barrier().context("barrier after the database")?;
        if args.db.exists() {
            return Ok(());
        }
    }
    bail!("{} was not written", args.db.display())
}

/// The program, on any communicator.
fn job<C: Communicator<Error = Error>>(comm: &C, args: &Args, resilient: bool) -> Result<Verdict> {
    let (n, me) = (comm.size(), comm.rank().index());
    let t0 = Instant::now();
    ensure_db(comm, args)?;
    let count = screen::record_count(&args.db)?;
    let out = SharedFile::create(comm, &args.out)?;
    let range = screen::portion(count, me, n);
    let best = score_share(args, &out, range.clone())?;
    pertinax::fault_point("screen.exchange");
    let ex = exchange(comm, &best, &range)?;
    let time_s = t0.elapsed().as_secs_f64();
    if lowest_outside(n, &ex.absent) != Some(me) {
        return Ok(Verdict::Quiet);
    }
    if me != ex.collector {
        println!(
            "screen: the collector, rank {}, has failed: its messages are lost",
            ex.collector
        );
    }
    report(comm, args, count, &ex, resilient, time_s)
}

/// Scores the molecules `range`, writes their scores to `out` and returns
/// their best `k`.
fn score_share(args: &Args, out: &SharedFile, range: Range<u64>) -> Result<TopK> {
    let k = usize::try_from(args.k).context("--k")?;
    let molecules = screen::read_range(&args.db, range.clone())?;
    let mut scores = Vec::with_capacity(molecules.len());
    let mut best = TopK::new(k);
    for m in &molecules {
        pertinax::fault_point("screen.molecule");
        let s = screen::score(m, args.work);
        scores.push(s);
        best.push(Hit { id: m.id, score: s });
    }
    let bytes: Vec<u8> = scores.iter().flat_map(|s| s.to_le_bytes()).collect();
    out.write_at(&bytes, range.start * 8)?;
    Ok(best)
}

/// What the exchange brought a rank (step 3 of the module docs).
#[derive(Debug)]
struct Exchanged {
    /// The count's sum.
    screened: u64,
    /// The ranks whose count is not in it.
    uncounted: Vec<usize>,
    /// The lowest rank not in `uncounted`.
    collector: usize,
    /// At the collector: each rank's best `k` by its message.
    by_message: Vec<Option<TopK>>,
    /// Each rank's best `k` by the allgather (`None`: missing).
    gathered: Vec<Option<TopK>>,
    /// This rank's consistency row and everyone's.
    row: [u64; ROW],
    rows: Vec<u64>,
    /// The ranks missing from the allgather of the rows.
    absent: Vec<usize>,
}

/// The count, the messages to the collector, the allgathers.
fn exchange<C: Communicator<Error = Error>>(
    comm: &C,
    best: &TopK,
    range: &Range<u64>,
) -> Result<Exchanged> {
    let (n, me, k) = (comm.size(), comm.rank().index(), best.k());
    let scored = range.end - range.start;

    // The number screened; its outcome names the collector.
    let mut screened = [0u64];
    let counted = comm
        .allreduce(&[scored], &mut screened, &Op::sum())
        .context("allreduce of the count")?;
    pertinax::fault_point("screen.send");
    let uncounted = indices(&counted.missing);
    println!(
        "screen: rank {me}: molecules {}..{} scored, count {counted}",
        range.start, range.end
    );
    let Some(collector) = lowest_outside(n, &uncounted) else {
        bail!("the count's outcome misses every rank");
    };

    // Everyone's best k to the collector, point to point.
    let encoded = best.encode();
    let mut by_message: Vec<Option<TopK>> = vec![None; n];
    if me == collector {
        by_message[me] = Some(best.clone());
        for r in (0..n).filter(|&r| r != me && !uncounted.contains(&r)) {
            let mut buf = vec![0u8; encoded.len()];
            match comm.recv(&mut buf, Rank::from(r), TAG) {
                Ok(Some(_)) => by_message[r] = Some(TopK::decode(k, &buf)?),
                // The sender has failed (policy ignore, or stop).
                Ok(None) | Err(Error::Failed { .. }) => {}
                Err(e) => return Err(e).with_context(|| format!("receive from rank {r}")),
            }
        }
    } else {
        // Skipped when the collector has failed (the default policy).
        comm.send(&encoded, Rank::from(collector), TAG)
            .context("send to the collector")?;
    }

    // Everyone's best k everywhere, collectively.
    pertinax::fault_point("screen.allgather");
    let mut all = TopK::new(k).encode().repeat(n);
    let outcome = comm
        .allgather(&encoded, &mut all)
        .context("allgather of the best")?;
    let ungathered = indices(&outcome.missing);
    let mut gathered = Vec::with_capacity(n);
    for (r, slot) in all.chunks_exact(encoded.len().max(1)).take(n).enumerate() {
        gathered.push(if ungathered.contains(&r) {
            None
        } else {
            Some(TopK::decode(k, slot)?)
        });
    }

    // What every survivor must hold alike.
    let row = [
        digest(uncounted.iter().map(|&r| r as u64)),
        digest(ungathered.iter().map(|&r| r as u64)),
        screened[0],
        digest(
            gathered
                .iter()
                .flatten()
                .flat_map(|t| t.hits().iter().flat_map(|h| [h.id, h.score.to_bits()])),
        ),
    ];
    let mut rows = vec![u64::MAX; ROW * n];
    let rowed = comm
        .allgather(&row, &mut rows)
        .context("allgather of the consistency rows")?;
    println!("screen: rank {me}: allgather {outcome}, rows {rowed}");
    Ok(Exchanged {
        screened: screened[0],
        uncounted,
        collector,
        by_message,
        gathered,
        row,
        rows,
        absent: indices(&rowed.missing),
    })
}

/// The reporter's checks and summary line (`time_s`: the parallel part's
/// time).
fn report<C: Communicator<Error = Error>>(
    comm: &C,
    args: &Args,
    count: u64,
    ex: &Exchanged,
    resilient: bool,
    time_s: f64,
) -> Result<Verdict> {
    let t1 = Instant::now();
    let (n, me) = (comm.size(), comm.rank().index());
    let k = usize::try_from(args.k).context("--k")?;
    let share_len = |r: usize| {
        let p = screen::portion(count, r, n);
        p.end - p.start
    };
    let inconsistent: Vec<usize> = (0..n)
        .filter(|r| !ex.absent.contains(r) && ex.rows[r * ROW..(r + 1) * ROW] != ex.row)
        .collect();
    // Each rank's best, by the allgather or else by its message; the two
    // must agree where both arrived.
    let mut disagree = Vec::new();
    let parts: Vec<Option<TopK>> = ex
        .gathered
        .iter()
        .zip(&ex.by_message)
        .enumerate()
        .map(|(r, (g, m))| {
            if let (Some(a), Some(b)) = (g, m) {
                if a != b {
                    disagree.push(r);
                }
            }
            g.clone().or_else(|| m.clone())
        })
        .collect();
    let heard: Vec<usize> = (0..n).filter(|&r| parts[r].is_some()).collect();
    let mut result = TopK::new(k);
    for p in parts.iter().flatten() {
        result.merge(p);
    }

    // Every heard rank's best against its molecules' scores: recomputed,
    // or as written in the output file.
    let recompute = match args.recompute {
        Recompute::Auto => count.saturating_mul(u64::from(args.work)) <= 1 << 22,
        Recompute::Yes => true,
        Recompute::No => false,
    };
    let file = std::fs::read(&args.out)
        .with_context(|| format!("cannot read back {}", args.out.display()))?;
    let mut file_ok = true;
    let mut wrong_parts = Vec::new();
    let mut expected = TopK::new(k);
    for &r in &heard {
        let share = screen::portion(count, r, n);
        let written = written_scores(&file, &share);
        let truth = if recompute {
            let again = rescore(&args.db, share.clone(), args.work)?;
            file_ok &= written.as_deref().is_some_and(|w| same_bits(w, &again));
            again
        } else {
            let Some(w) = written else {
                file_ok = false;
                continue;
            };
            w
        };
        let mut own = TopK::new(k);
        own.extend(
            truth
                .iter()
                .zip(share)
                .map(|(&score, id)| Hit { id, score }),
        );
        if parts[r].as_ref() != Some(&own) {
            wrong_parts.push(r);
        }
        expected.merge(&own);
    }
    let exact = wrong_parts.is_empty() && disagree.is_empty() && result == expected;
    let counted: u64 = (0..n)
        .filter(|r| !ex.uncounted.contains(r))
        .map(share_len)
        .sum();
    let count_ok = ex.screened == counted;
    let lost: Vec<String> = (0..n)
        .filter(|r| !heard.contains(r))
        .map(|r| screen::portion(count, r, n))
        .filter(|p| !p.is_empty())
        .map(|p| format!("{}..{}", p.start, p.end))
        .collect();
    let included: u64 = heard.iter().map(|&r| share_len(r)).sum();
    let fraction = if count == 0 {
        1.0
    } else {
        included as f64 / count as f64
    };
    let failed = indices(&comm.failed_ranks());
    let check_s = t1.elapsed().as_secs_f64();

    for (i, h) in result.hits().iter().enumerate() {
        println!(
            "screen: #{:<3} molecule {:>9} score {:.6}",
            i + 1,
            h.id,
            h.score
        );
    }
    if !wrong_parts.is_empty() {
        println!(
            "screen: the best of ranks {} differ from their molecules' scores",
            list(&wrong_parts)
        );
    }
    if !disagree.is_empty() {
        println!(
            "screen: ranks {}: their message and their allgather slot differ",
            list(&disagree)
        );
    }
    if !inconsistent.is_empty() {
        println!(
            "screen: ranks {} hold other results than rank {me}",
            list(&inconsistent)
        );
    }
    let best = list(
        result
            .hits()
            .iter()
            .map(|h| format!("{}:{:.6}", h.id, h.score)),
    );
    let from_p2p = (0..n).filter(|&r| ex.by_message[r].is_some());
    let from_allgather = (0..n).filter(|&r| ex.gathered[r].is_some());
    println!(
        "SCREEN n={n} count={count} work={} k={k} mode={} failed={} lost={} screened={} fraction={fraction:.4} best={best} from_p2p={} from_allgather={} exact_survivors={exact} file_ok={file_ok} consistent={} count_ok={count_ok} recomputed={recompute} time_s={time_s:.3} check_s={check_s:.3}",
        args.work,
        if resilient { "resilient" } else { "plain" },
        list(&failed),
        list(&lost),
        ex.screened,
        list(from_p2p),
        list(from_allgather),
        inconsistent.is_empty(),
    );
    let pass = exact && file_ok && count_ok && inconsistent.is_empty();
    Ok(if pass { Verdict::Pass } else { Verdict::Fail })
}

/// The scores of molecules `share` in the output file, if it holds them.
fn written_scores(file: &[u8], share: &Range<u64>) -> Option<Vec<f64>> {
    let a = usize::try_from(share.start).ok()?.checked_mul(8)?;
    let b = usize::try_from(share.end).ok()?.checked_mul(8)?;
    let bytes = file.get(a..b)?;
    Some(
        bytes
            .chunks_exact(8)
            .map(|c| {
                let mut w = [0u8; 8];
                w.copy_from_slice(c);
                f64::from_le_bytes(w)
            })
            .collect(),
    )
}

/// The scores of molecules `share`, computed again.
fn rescore(db: &Path, share: Range<u64>, work: u32) -> Result<Vec<f64>> {
    Ok(screen::read_range(db, share)?
        .iter()
        .map(|m| screen::score(m, work))
        .collect())
}

/// Whether two lists of scores are bitwise the same.
fn same_bits(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}
