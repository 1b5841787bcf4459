//! The command line of `pertinax-bench`: one struct per subcommand, the
//! options every benchmark shares in [`Common`].

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

mod coll;
mod ft;
mod msglog;
mod offload;
mod resilient;
mod worker;

pub use coll::{
    cases, ops_arg, CollArgs, CollCounts, CollOp, CollOpts, COLL_CALIBRATION, MIN_COLL_REPS,
};
pub use ft::{FtMode, FtOpts, FtPart};
pub use msglog::{Grid3, MsglogApp, MsglogOpts, MsglogPart, Policy};
pub use offload::{FwiFault, NbodyMode, OffloadOpts};
pub use resilient::{
    reps_for, ResCheck, ResComm, ResPart, ResilientOpts, REPAIR_AFTER, REPAIR_WARMUP, RES_OPS,
};
pub use worker::{WorkerArgs, WorkerKind};

/// Benchmarks of pertinax, launch by launch against Open MPI where it is
/// installed.
#[derive(Debug, Parser)]
#[command(name = "pertinax-bench", version)]
pub struct Cli {
    /// What to measure.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Ping-pong latency and bandwidth between 2 ranks.
    Pingpong(Bench<P2pArgs>),
    /// Ping-ping (both ranks send at once) between 2 ranks.
    Pingping(Bench<P2pArgs>),
    /// Wall time of launching an init/finalize-only program.
    Launch(Bench<LaunchArgs>),
    /// Collective latency (barrier, bcast, reduce, allreduce, allgather,
    /// alltoall) at several rank counts and sizes.
    Coll(Bench<CollArgs>),
    /// Fault handling against the Open MPI anchor `ft.c` (detection,
    /// revoke, shrink, agree, kill -> first collective), the cost of
    /// failure detection on ping-pong, and pertinax's non-shrinking
    /// recovery (replace_failed, spares) and spawn.
    Ft(Bench<FtOpts>),
    /// Error propagation: `propagate-ranks bench` (guard, signal from
    /// rank 0, every rank has the error, clean up) against ULFM revoke +
    /// agree (`c/propagate.c`), at several rank counts.
    Propagate(Bench<PropagateOpts>),
    /// Offload (issue 18): the hello microbenchmark, N-body (global and
    /// partial) and FWI in the configurations original, error-free, error
    /// and error-spare, interleaved launch by launch (`pertinax-offhello`,
    /// `pertinax-nbody`, `pertinax-fwi` of pertinax-apps).
    Offload(Bench<OffloadOpts>),
    /// Message logging (issue 19): `pertinax-cg` and `pertinax-stencil`
    /// plain, transactional and logged without failure (overheads, log
    /// sizes), and killed at each iteration of a window with local, global
    /// and hybrid rollback (recomputed iterations, time).
    Msglog(Bench<MsglogOpts>),
    /// Resilient communicators: per-operation cost of `Resilient` (agree,
    /// log) and `Hierarchical` against the plain communicator, repair time
    /// after a kill (flat; hierarchical master, deputy and member), and EP
    /// and screening end to end.
    Resilient(Bench<ResilientOpts>),
    /// pingpong, pingping, launch, coll, ft, propagate, resilient and
    /// msglog, one after another.
    All(Bench<AllArgs>),
    /// No-regression check against an older build: 0 and 8 B ping-pong,
    /// 8 B allreduce at 2 and 8 ranks and detection at 16 ranks, launches
    /// alternating between DIR's binaries and these, ratio of medians.
    Regress(Bench<RegressArgs>),
    /// Draws the figures (SVG) of saved JSON rows: `plot --in ROWS.json
    /// --out DIR` (what `--plot DIR` draws at the end of a run).
    Plot(PlotArgs),
    /// The measuring side, run inside a job (`pertinax run -n 2 -- pertinax-bench worker pingpong`).
    Worker(WorkerArgs),
}

/// A benchmark's command line: the options every benchmark shares, then
/// its own.
#[derive(Clone, Debug, Args)]
pub struct Bench<T: Args> {
    /// `--launches`, `--json`, `--no-ompi`, `--timeout`...
    #[command(flatten)]
    pub common: Common,
    /// The benchmark's own options.
    #[command(flatten)]
    pub opts: T,
}

/// `Default` for each benchmark's options (what `all` runs): the command
/// line's defaults ([`defaults`]).
macro_rules! command_line_defaults {
    ($($t:ty),+) => {
        $(impl Default for $t {
            fn default() -> $t {
                $crate::cli::defaults()
            }
        })+
    };
}
command_line_defaults!(FtOpts, PropagateOpts, ResilientOpts, MsglogOpts);

/// For tests: what the command line `args` (after the program's name,
/// split at white space) parses to.
#[cfg(test)]
pub fn parse(args: &str) -> Result<Command, clap::Error> {
    Cli::try_parse_from(std::iter::once("b").chain(args.split_whitespace())).map(|c| c.command)
}

/// A rank count of at least `MIN`, for `--ranks` lists.
fn ranks<const MIN: usize>(s: &str) -> Result<usize, String> {
    let n: usize = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a rank count"))?;
    if n < MIN {
        return Err(format!(
            "this benchmark needs at least {MIN} ranks, not {n}"
        ));
    }
    Ok(n)
}

/// The options of `T` as the command line gives them when none is typed.
/// The defaults are written once, in the `#[arg]` attributes; the
/// `Default` of each benchmark's options (what `all` runs) comes from
/// here, so the two cannot drift apart.
///
/// # Panics
/// When the defaults do not parse: a programming error, which the tests
/// of each `Default` catch.
pub fn defaults<T: Args>() -> T {
    T::augment_args(clap::Command::new("defaults"))
        .try_get_matches_from(["defaults"])
        .and_then(|m| T::from_arg_matches(&m))
        .unwrap_or_else(|e| panic!("the command line's defaults do not parse: {e}"))
}

/// Options shared by every benchmark.
#[derive(Clone, Debug, Args)]
pub struct Common {
    /// Launches per implementation (default 5, 3 for coll; 2 with --quick).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..))]
    pub launches: Option<u32>,

    /// Print one JSON object per measurement row on stdout (tables go to stderr).
    #[arg(long)]
    pub json: bool,

    /// Also write the rows as CSV to FILE (the same rows as --json, one
    /// column per key; rewritten after every row).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,

    /// Draw the figures of this run's rows as SVG into DIR when it ends
    /// (`plot --in` draws them from saved rows).
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,

    /// Do not run Open MPI even if it is installed.
    #[arg(long)]
    pub no_ompi: bool,

    /// Open MPI installation (default: $PERTINAX_OMPI_PREFIX, else the Open
    /// MPI with ULFM whose mpirun and mpicc are on PATH, else /tmp/ompi).
    #[arg(long, value_name = "DIR")]
    pub ompi_prefix: Option<PathBuf>,

    /// The pertinax launcher (default: `pertinax` next to this executable).
    #[arg(long, value_name = "PATH")]
    pub launcher: Option<PathBuf>,

    /// The Open MPI anchor programs (default: `<repo>/../shared/anchors/ompi`).
    #[arg(long, value_name = "DIR")]
    pub anchors: Option<PathBuf>,

    /// Kill a launch (its whole process group) after this many seconds
    /// (default 120; 900 for coll, whose launches run every op and size).
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: Option<u64>,

    /// Append every launch's full output to this file.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,

    /// Fewer repetitions and launches: a smoke test, not a measurement.
    #[arg(long)]
    pub quick: bool,

    /// Where the pertinax rows run: `native` (`pertinax run`) or `mpi`
    /// (pertinax over Open MPI with ULFM: the ranks are `--mpi-exe`, started
    /// by `mpirun --with-ft ulfm`; their rows say `"impl":"pertinax-mpi"`,
    /// and the C anchors then run with `--with-ft ulfm` too). `mpi` is for
    /// pingpong, pingping, coll and ft (its compare part).
    #[arg(long, value_enum, default_value_t = BenchBackend::Native)]
    pub backend: BenchBackend,

    /// For --backend mpi: pertinax-bench built with the MPI feature
    /// (default: $PERTINAX_BENCH_MPI_EXE, else `target/mpi/release/pertinax-bench`
    /// of this repository, as `PERTINAX_MPICC=<prefix>/bin/mpicc
    /// CARGO_TARGET_DIR=target/mpi cargo build --release -p pertinax-bench
    /// --features pertinax/mpi` builds it).
    #[arg(long, value_name = "PATH")]
    pub mpi_exe: Option<PathBuf>,
}

/// Which backend the pertinax side of a benchmark runs on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum BenchBackend {
    /// The native shared-memory runtime, started by `pertinax run`.
    #[default]
    Native,
    /// The MPI backend, started by Open MPI's `mpirun --with-ft ulfm`.
    Mpi,
}

impl BenchBackend {
    /// `native` or `mpi` (as in JSON rows).
    pub fn name(self) -> &'static str {
        match self {
            BenchBackend::Native => "native",
            BenchBackend::Mpi => "mpi",
        }
    }
}

impl Common {
    /// Launches per implementation: `--launches`, else 5 (2 with --quick).
    pub fn launches(&self) -> usize {
        self.launches_or(5)
    }

    /// Launches per implementation: `--launches`, else `default` (2 with
    /// --quick).
    pub fn launches_or(&self, default: usize) -> usize {
        self.launches
            .map_or(if self.quick { 2 } else { default }, |k| k as usize)
    }
}

/// Repetition counts of one ping-pong or ping-ping launch.
#[derive(Clone, Debug, Args)]
pub struct Reps {
    /// Message sizes in bytes, e.g. `0,8,1K,64KiB,1M` (default 0 B to 4 MiB).
    #[arg(long, value_name = "LIST", value_parser = parse_sizes)]
    pub sizes: Option<Sizes>,

    /// Round trips per timed batch (default 1000, 100 with --quick; a
    /// quarter above 1 MiB).
    #[arg(long, value_name = "N")]
    pub reps: Option<usize>,

    /// Untimed round trips before the batches (default 100, 10 with --quick).
    #[arg(long, value_name = "N")]
    pub warmup: Option<usize>,

    /// Timed batches per size (default 7, 3 with --quick).
    #[arg(long, value_name = "N")]
    pub batches: Option<usize>,
}

/// Options of `pingpong` and `pingping`.
#[derive(Clone, Debug, Args)]
pub struct P2pArgs {
    #[command(flatten)]
    pub reps: Reps,
    /// Bytes per shared-memory ring, passed to `pertinax run --ring-bytes`.
    #[arg(long, value_name = "BYTES")]
    pub ring_bytes: Option<usize>,
}

/// Options of `launch` (and of `all`'s launch part).
#[derive(Clone, Debug, Args)]
pub struct LaunchArgs {
    /// Rank counts for the launch benchmark.
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "1,2,4,8,16"
    )]
    pub ranks: Vec<usize>,
}

/// Options of `plot`.
#[derive(Clone, Debug, Args)]
pub struct PlotArgs {
    /// Saved `--json` output (one row per line; other lines are skipped);
    /// repeat or separate with commas for several files.
    #[arg(
        long = "in",
        value_name = "ROWS.json",
        value_delimiter = ',',
        required = true
    )]
    pub input: Vec<PathBuf>,
    /// Where the SVG files go (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// Options of `regress`.
#[derive(Clone, Debug, Args)]
pub struct RegressArgs {
    /// Directory holding the old build's `pertinax` and `pertinax-bench`.
    #[arg(long, value_name = "DIR")]
    pub against: PathBuf,
    /// Largest slow-down (percent, new over old median) that meets the goal.
    #[arg(long, value_name = "PCT", default_value_t = 3.0)]
    pub tolerance: f64,
}

/// Options of `all`.
#[derive(Clone, Debug, Args)]
pub struct AllArgs {
    #[command(flatten)]
    pub reps: Reps,
    #[command(flatten)]
    pub launch: LaunchArgs,
    /// Rank counts for the collective benchmark (default ops and sizes).
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "2,4,8,16",
          value_parser = ranks::<2>)]
    pub coll_ranks: Vec<usize>,
}

/// What the `propagate` benchmark runs (launches: `--launches`, default 3).
#[derive(Clone, Debug, PartialEq, Eq, Args)]
pub struct PropagateOpts {
    /// Rank counts (at least 2); each gets its own interleaved launches.
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "2,4,8,16",
          value_parser = ranks::<2>)]
    pub ranks: Vec<usize>,

    /// Repetitions of the cycle per launch (default 1000, 200 with --quick).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub reps: Option<u32>,

    /// The rank program (default: `propagate-ranks` next to this executable;
    /// `--propprog` is its former name).
    #[arg(long = "propagate-ranks", alias = "propprog", value_name = "PATH")]
    pub propagate_ranks: Option<PathBuf>,
}

impl PropagateOpts {
    /// Repetitions per launch with the default filled in.
    pub fn reps(&self, quick: bool) -> usize {
        self.reps
            .map_or(if quick { 200 } else { 1000 }, |r| r as usize)
    }
}

/// A list of message sizes in bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sizes(pub Vec<usize>);

/// The default sizes: 0 B to 4 MiB.
pub const DEFAULT_SIZES: [usize; 9] = [
    0,
    8,
    1 << 10,
    8 << 10,
    16 << 10,
    64 << 10,
    256 << 10,
    1 << 20,
    4 << 20,
];

impl Sizes {
    /// The list as the worker's `--sizes` argument (plain byte counts).
    pub fn to_arg(&self) -> String {
        self.0
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(",")
    }
}

impl Reps {
    /// Sizes, or the defaults.
    pub fn sizes(&self) -> Sizes {
        self.sizes.clone().unwrap_or(Sizes(DEFAULT_SIZES.to_vec()))
    }

    /// (reps, warmup, batches) with the defaults filled in.
    pub fn counts(&self, quick: bool) -> (usize, usize, usize) {
        let (r, w, b) = if quick { (100, 10, 3) } else { (1000, 100, 7) };
        (
            self.reps.unwrap_or(r).max(1),
            self.warmup.unwrap_or(w),
            self.batches.unwrap_or(b).max(1),
        )
    }
}

/// Parses `0,8,1K,64KiB,1M,4MiB` (K/KiB = 1024, M/MiB = 1024²).
pub fn parse_sizes(s: &str) -> Result<Sizes, String> {
    let mut out = Vec::new();
    for item in s.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let digits = item
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(item.len());
        let (num, unit) = item.split_at(digits);
        let n: usize = num
            .parse()
            .map_err(|_| format!("`{item}` is not a size (e.g. 0, 8, 64K, 1MiB)"))?;
        let scale = match unit.trim().to_ascii_lowercase().as_str() {
            "" | "b" => 1,
            "k" | "kib" => 1 << 10,
            "m" | "mib" => 1 << 20,
            _ => return Err(format!("unknown unit in `{item}` (use K, KiB, M or MiB)")),
        };
        out.push(
            n.checked_mul(scale)
                .ok_or_else(|| format!("`{item}` is too large"))?,
        );
    }
    if out.is_empty() {
        return Err("no sizes given".into());
    }
    Ok(Sizes(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        let s = parse_sizes("0, 8,1K,64KiB,1M,4mib,3b").unwrap();
        assert_eq!(s.0, vec![0, 8, 1024, 65536, 1 << 20, 4 << 20, 3]);
        assert_eq!(s.to_arg(), "0,8,1024,65536,1048576,4194304,3");
        assert!(parse_sizes("").is_err());
        assert!(parse_sizes("1G").is_err());
        assert!(parse_sizes("x").is_err());
        assert!(parse_sizes("-1").is_err());
    }

    #[test]
    fn command_lines() {
        let Ok(Command::Pingpong(a)) = parse("pingpong --launches 3 --json --quick") else {
            panic!("not pingpong")
        };
        assert_eq!(a.common.launches(), 3);
        assert!(a.common.json);
        assert_eq!(a.opts.reps.counts(true), (100, 10, 3));
        assert_eq!(a.opts.reps.sizes().0, DEFAULT_SIZES.to_vec());

        let Ok(Command::Launch(a)) = parse("launch --ranks 2,16") else {
            panic!("not launch")
        };
        assert_eq!(a.opts.ranks, vec![2, 16]);
        assert_eq!(a.common.launches(), 5);

        let Ok(Command::Worker(w)) = parse("worker pingping --sizes 0,1M --reps 7") else {
            panic!("not worker")
        };
        assert_eq!(w.kind, WorkerKind::Pingping);
        assert_eq!(w.reps().counts(false), (7, 100, 7));
        assert!(parse("pingpong --launches 0").is_err());
    }
}
