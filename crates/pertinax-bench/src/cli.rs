//! The command line of `pertinax-bench`: one struct per subcommand, the
//! options every benchmark shares in [`Common`].

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

mod msglog;
mod offload;
mod resilient;

pub use msglog::{Grid3, MsglogApp, MsglogOpts, MsglogPart, Policy};
pub use offload::{FwiFault, NbodyMode, OffloadOpts};
pub use resilient::{
    reps_for, ResCheck, ResComm, ResPart, ResilientOpts, REPAIR_AFTER, REPAIR_WARMUP, RES_OPS,
};

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

/// Options of `coll`.
#[derive(Clone, Debug, Args)]
pub struct CollArgs {
    /// Rank counts; each gets its own interleaved launches.
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "2,4,8,16",
          value_parser = ranks::<2>)]
    pub ranks: Vec<usize>,
    #[command(flatten)]
    pub coll: CollOpts,
}

/// What one collective launch measures and how (shared by `coll` and
/// `worker coll`; the Open MPI program `c/coll_sweep.c` takes the same).
#[derive(Clone, Debug, Default, Args)]
pub struct CollOpts {
    /// Operations, e.g. `barrier,allreduce` (default: all six).
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_enum)]
    pub ops: Vec<CollOp>,

    /// Message sizes, e.g. `8,1K,64K,1M` (default); barrier ignores them.
    /// bcast/reduce/allreduce: the whole vector; allgather: each rank's
    /// block; alltoall: the block for each destination.
    #[arg(long, value_name = "LIST", value_parser = parse_sizes)]
    pub sizes: Option<Sizes>,

    /// Upper bound on calls per timed batch (default 1000, 100 with --quick).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_reps: Option<u32>,

    /// Untimed calls before the calibration (default 20, 5 with --quick).
    #[arg(long, value_name = "N")]
    pub warmup: Option<u32>,

    /// Timed batches per case (default 5, 3 with --quick).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub batches: Option<u32>,

    /// Target duration of one batch in ms; calls per batch =
    /// clamp(target / slowest rank's calibrated call time, 20, max-reps)
    /// (default 300, 50 with --quick).
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u32).range(1..))]
    pub target_ms: Option<u32>,
}

/// The counts of a collective launch with the defaults filled in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CollCounts {
    /// Upper bound on calls per batch (the lower bound is [`MIN_COLL_REPS`]).
    pub max_reps: usize,
    /// Untimed calls before the calibration.
    pub warmup: usize,
    /// Timed batches.
    pub batches: usize,
    /// Target batch duration, ms.
    pub target_ms: u32,
}

/// Calls in the calibration step (as the anchor `coll.c`).
pub const COLL_CALIBRATION: usize = 10;

/// Lower bound on calls per batch (as the anchor `coll.c`).
pub const MIN_COLL_REPS: usize = 20;

/// The default collective sizes: 8 B, 1 KiB, 64 KiB, 1 MiB.
pub const COLL_SIZES: [usize; 4] = [8, 1 << 10, 64 << 10, 1 << 20];

impl CollOpts {
    /// The operations, or all of them.
    pub fn ops(&self) -> Vec<CollOp> {
        if self.ops.is_empty() {
            CollOp::ALL.to_vec()
        } else {
            self.ops.clone()
        }
    }

    /// The sizes, or [`COLL_SIZES`].
    pub fn sizes(&self) -> Sizes {
        self.sizes.clone().unwrap_or(Sizes(COLL_SIZES.to_vec()))
    }

    /// The counts, defaults filled in (those of the anchor `coll.c`).
    pub fn counts(&self, quick: bool) -> CollCounts {
        let (r, w, b, t) = if quick {
            (100, 5, 3, 50)
        } else {
            (1000, 20, 5, 300)
        };
        CollCounts {
            max_reps: self.max_reps.map_or(r, |x| x as usize).max(MIN_COLL_REPS),
            warmup: self.warmup.map_or(w, |x| x as usize),
            batches: self.batches.map_or(b, |x| x as usize),
            target_ms: self.target_ms.unwrap_or(t),
        }
    }

    /// The (op, bytes) cases in the order a launch measures them.
    pub fn cases(&self) -> Vec<(CollOp, usize)> {
        cases(&self.ops(), &self.sizes().0)
    }
}

impl CollCounts {
    /// Calls per batch for a calibrated time per call (slowest rank), as
    /// the anchor: clamp(target / t_call, 20, max_reps).
    pub fn reps(&self, t_call_s: f64) -> usize {
        let raw = f64::from(self.target_ms) * 1e-3 / t_call_s.max(1e-9);
        // `as` saturates: an absurdly fast call gives usize::MAX, then the clamp.
        (raw as usize).clamp(MIN_COLL_REPS, self.max_reps.max(MIN_COLL_REPS))
    }
}

/// Every op at every size, barrier once (bytes 0), in the given order.
pub fn cases(ops: &[CollOp], sizes: &[usize]) -> Vec<(CollOp, usize)> {
    let mut out = Vec::new();
    for &op in ops {
        if op == CollOp::Barrier {
            if !out.contains(&(op, 0)) {
                out.push((op, 0));
            }
            continue;
        }
        for &n in sizes {
            if !out.contains(&(op, n)) {
                out.push((op, n));
            }
        }
    }
    out
}

/// A collective operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, ValueEnum)]
pub enum CollOp {
    /// No data.
    Barrier,
    /// From rank 0, bytes.
    Bcast,
    /// Sum to rank 0: f64 elements (u8 if the size is not a multiple of 8).
    Reduce,
    /// Sum to all: f64 elements (u8 if the size is not a multiple of 8).
    Allreduce,
    /// Every rank's block to every rank, bytes.
    Allgather,
    /// One block from every rank to every rank, bytes.
    Alltoall,
}

impl CollOp {
    /// All operations in report order.
    pub const ALL: [CollOp; 6] = [
        CollOp::Barrier,
        CollOp::Bcast,
        CollOp::Reduce,
        CollOp::Allreduce,
        CollOp::Allgather,
        CollOp::Alltoall,
    ];

    /// The name in `COLL op=<name>` lines and on command lines.
    pub fn name(self) -> &'static str {
        match self {
            CollOp::Barrier => "barrier",
            CollOp::Bcast => "bcast",
            CollOp::Reduce => "reduce",
            CollOp::Allreduce => "allreduce",
            CollOp::Allgather => "allgather",
            CollOp::Alltoall => "alltoall",
        }
    }

    /// The operation named `name`.
    pub fn from_name(name: &str) -> Option<CollOp> {
        CollOp::ALL.into_iter().find(|o| o.name() == name)
    }
}

/// A list of ops as a command-line argument: `barrier,bcast`.
pub fn ops_arg(ops: &[CollOp]) -> String {
    ops.iter().map(|o| o.name()).collect::<Vec<_>>().join(",")
}

/// What the `ft` benchmark runs.
#[derive(Clone, Debug, PartialEq, Eq, Args)]
pub struct FtOpts {
    /// Rank counts (at least 3; the victim is rank N-1).
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "4,8,16",
          value_parser = ranks::<3>)]
    pub ranks: Vec<usize>,

    /// Scenarios compared with Open MPI's ft.c.
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        value_enum,
        default_value = "recv,allreduce,agreeblk,agree"
    )]
    pub modes: Vec<FtMode>,

    /// Parts to run: compare (pertinax vs ft.c), cost (ping-pong with and
    /// without failure detection), replace (replace_failed with and without
    /// a spare), spawn (spawn + merge + barrier).
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        value_enum,
        default_value = "compare,cost,replace,spawn"
    )]
    pub parts: Vec<FtPart>,

    /// The victim's sleep between the barrier and its death, ms (ft.c -d).
    #[arg(long, value_name = "MS", default_value_t = 300)]
    pub delay_ms: u64,

    /// Calls per healthy-agree measurement (ft.c -a).
    #[arg(long, value_name = "N", default_value_t = 50, value_parser = clap::value_parser!(u64).range(1..))]
    pub agree_reps: u64,

    /// Spawn part: repetitions of each spawn size per launch.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..))]
    pub spawn_reps: u64,

    /// Launches per variant of the cost part (default: 2x --launches, at
    /// least 6: the difference sought is small).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..))]
    pub cost_launches: Option<u32>,
}

impl FtOpts {
    /// Whether `part` is to run.
    pub fn wants(&self, part: FtPart) -> bool {
        self.parts.contains(&part)
    }
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

    /// The rank program (default: `propagate-ranks` next to this executable).
    #[arg(long, value_name = "PATH")]
    pub propprog: Option<PathBuf>,
}

impl PropagateOpts {
    /// Repetitions per launch with the default filled in.
    pub fn reps(&self, quick: bool) -> usize {
        self.reps
            .map_or(if quick { 200 } else { 1000 }, |r| r as usize)
    }
}

/// A fault-handling scenario of `worker ft`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, ValueEnum)]
pub enum FtMode {
    /// Survivors blocked in a receive from the victim; no revoke.
    Recv,
    /// Survivors blocked in an allreduce on the world.
    Allreduce,
    /// Survivors blocked in an agreement on the world.
    Agreeblk,
    /// As recv, then agree (unacknowledged), ack, agree again.
    Agree,
    /// Survivors blocked in an allreduce; replace_failed (pertinax only).
    Replace,
    /// spawn of 1 and N processes + merge + barrier (pertinax only).
    Spawn,
}

impl FtMode {
    /// The modes that ft.c has too.
    pub const COMPARED: [FtMode; 4] = [
        FtMode::Recv,
        FtMode::Allreduce,
        FtMode::Agreeblk,
        FtMode::Agree,
    ];

    /// The name on command lines and in `FT mode=` lines.
    pub fn name(self) -> &'static str {
        match self {
            FtMode::Recv => "recv",
            FtMode::Allreduce => "allreduce",
            FtMode::Agreeblk => "agreeblk",
            FtMode::Agree => "agree",
            FtMode::Replace => "replace",
            FtMode::Spawn => "spawn",
        }
    }
}

/// A part of the `ft` benchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, ValueEnum)]
pub enum FtPart {
    /// pertinax vs Open MPI ft.c.
    Compare,
    /// Ping-pong with failure detection on and off.
    Cost,
    /// replace_failed with a spare and with a new process.
    Replace,
    /// spawn + merge + barrier.
    Spawn,
}

/// What a worker measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum WorkerKind {
    /// Ping-pong between ranks 0 and 1 (`PP` lines).
    Pingpong,
    /// Ping-ping between ranks 0 and 1 (`PI` lines).
    Pingping,
    /// init + finalize only (`HELLO` line).
    Hello,
    /// Collectives (`COLL` lines); takes --ops, --sizes, --max-reps,
    /// --warmup, --batches, --target-ms.
    Coll,
    /// Fault handling (`FT`/`FTRANK`, `REPL`, `SPAWN` lines); takes
    /// --mode, --kill-file, --victim, --delay-ms, --agree-reps, --revoke,
    /// --spawn-reps.
    Ft,
    /// Plain vs resilient collectives (`RES` lines); takes --comms, --ops,
    /// --sizes, --reps, --warmup.
    Resilient,
    /// An allreduce loop through a failure (`REPAIR` line); takes --check,
    /// --iters, --warmup; the victim dies at its fault point
    /// `resilient.iter` (`pertinax run --kill V@resilient.iter#K`); the
    /// hierarchical communicator under `pertinax run --resilient=hier`.
    Repair,
}

/// Options of `worker`.
#[derive(Clone, Debug, Args)]
pub struct WorkerArgs {
    /// What to measure.
    #[arg(value_enum)]
    pub kind: WorkerKind,
    /// Message sizes (see `pingpong --sizes` and `coll --sizes`).
    #[arg(long, value_name = "LIST", value_parser = parse_sizes)]
    pub sizes: Option<Sizes>,
    /// Ping-pong/ping-ping: round trips per timed batch.
    #[arg(long, value_name = "N")]
    pub reps: Option<usize>,
    /// Ping-pong/ping-ping: untimed round trips; coll: untimed calls.
    #[arg(long, value_name = "N")]
    pub warmup: Option<usize>,
    /// Timed batches per size.
    #[arg(long, value_name = "N")]
    pub batches: Option<usize>,
    /// coll: operations.
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_enum)]
    pub ops: Vec<CollOp>,
    /// coll: upper bound on calls per batch.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_reps: Option<u32>,
    /// coll: target batch duration in ms.
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u32).range(1..))]
    pub target_ms: Option<u32>,
    /// ft: the scenario.
    #[arg(long, value_enum, default_value = "recv")]
    pub mode: FtMode,
    /// ft: where the victim writes its kill time (ft.c -k).
    #[arg(short = 'k', long, value_name = "FILE")]
    pub kill_file: Option<PathBuf>,
    /// ft: the victim's rank (default N-1; ft.c -v).
    #[arg(long, value_name = "RANK")]
    pub victim: Option<usize>,
    /// ft: the victim's sleep before it dies, ms (ft.c -d).
    #[arg(long, value_name = "MS", default_value_t = 300)]
    pub delay_ms: u64,
    /// ft: calls per healthy-agree measurement (ft.c -a).
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub agree_reps: usize,
    /// ft: revoke before shrinking, 0 or 1 (default: 1 except in recv; ft.c -R).
    #[arg(long, value_name = "0|1", value_parser = clap::value_parser!(u8).range(0..=1))]
    pub revoke: Option<u8>,
    /// ft spawn: repetitions of each spawn size.
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub spawn_reps: usize,
    /// resilient: the communicators, in order (default plain,agree,log;
    /// hier: the hierarchical one).
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_enum)]
    pub comms: Vec<ResComm>,
    /// repair: the check of the resilient communicator.
    #[arg(long, value_enum, default_value = "agree")]
    pub check: ResCheck,
    /// repair: allreduce iterations in all.
    #[arg(long, value_name = "N")]
    pub iters: Option<usize>,
}

impl WorkerArgs {
    /// The ping-pong/ping-ping options.
    pub fn reps(&self) -> Reps {
        Reps {
            sizes: self.sizes.clone(),
            reps: self.reps,
            warmup: self.warmup,
            batches: self.batches,
        }
    }

    /// The fault-handling options; `t_main` is CLOCK_REALTIME at `main`.
    pub fn ft(&self, t_main: f64) -> crate::worker::FtParams {
        crate::worker::FtParams {
            mode: self.mode,
            kill_file: self.kill_file.clone(),
            victim: self.victim,
            delay_ms: self.delay_ms,
            agree_reps: self.agree_reps.max(1),
            revoke: self.revoke.map(|r| r == 1),
            spawn_reps: self.spawn_reps.max(1),
            t_main,
        }
    }

    /// The collective options.
    pub fn coll(&self) -> CollOpts {
        let u32_of = |x: Option<usize>| x.map(|v| u32::try_from(v).unwrap_or(u32::MAX));
        CollOpts {
            ops: self.ops.clone(),
            sizes: self.sizes.clone(),
            max_reps: self.max_reps,
            warmup: u32_of(self.warmup),
            batches: u32_of(self.batches).map(|b| b.max(1)),
            target_ms: self.target_ms,
        }
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

    #[test]
    fn coll_command_lines() {
        let Ok(Command::Coll(a)) =
            parse("coll --ranks 2,16 --ops barrier,allreduce --sizes 8,1M --json")
        else {
            panic!("not coll")
        };
        assert_eq!(a.opts.ranks, vec![2, 16]);
        assert_eq!(a.opts.coll.ops(), vec![CollOp::Barrier, CollOp::Allreduce]);
        assert_eq!(a.opts.coll.sizes().0, vec![8, 1 << 20]);
        assert_eq!(a.common.launches_or(3), 3);
        assert_eq!(a.common.timeout, None);
        assert!(a.common.json);

        let Ok(Command::Coll(d)) = parse("coll") else {
            panic!("not coll")
        };
        assert_eq!(d.opts.ranks, vec![2, 4, 8, 16]);
        assert_eq!(d.opts.coll.ops(), CollOp::ALL.to_vec());
        assert_eq!(d.opts.coll.sizes().0, COLL_SIZES.to_vec());
        assert_eq!(
            d.opts.coll.counts(false),
            CollCounts {
                max_reps: 1000,
                warmup: 20,
                batches: 5,
                target_ms: 300
            }
        );

        assert!(parse("coll --ranks 1,2").is_err());
        assert!(parse("coll --ops scan").is_err());
        assert!(parse("coll --timeout 0").is_err());

        let Ok(Command::Worker(w)) = parse("worker coll --ops bcast --sizes 64K --max-reps 5 --warmup 2 --batches 3 --target-ms 10") else {
            panic!("not worker")
        };
        assert_eq!(w.kind, WorkerKind::Coll);
        let c = w.coll();
        assert_eq!(c.cases(), vec![(CollOp::Bcast, 65536)]);
        // The lower bound of 20 calls per batch wins over --max-reps 5.
        assert_eq!(
            c.counts(false),
            CollCounts {
                max_reps: 20,
                warmup: 2,
                batches: 3,
                target_ms: 10
            }
        );

        let Ok(Command::All(a)) = parse("all --coll-ranks 2,4") else {
            panic!("not all")
        };
        assert_eq!(a.opts.coll_ranks, vec![2, 4]);
    }

    #[test]
    fn ft_command_lines() {
        let Ok(Command::Ft(d)) = parse("ft") else {
            panic!("not ft")
        };
        assert_eq!(d.opts, FtOpts::default());
        // What `all` runs: the defaults as the command line states them.
        let all = FtOpts::default();
        assert_eq!(all.ranks, [4, 8, 16]);
        assert_eq!(all.modes, FtMode::COMPARED);
        assert_eq!(
            all.parts,
            [
                FtPart::Compare,
                FtPart::Cost,
                FtPart::Replace,
                FtPart::Spawn
            ]
        );
        assert_eq!((all.delay_ms, all.agree_reps, all.spawn_reps), (300, 50, 2));
        assert_eq!(PropagateOpts::default().ranks, [2, 4, 8, 16]);
        assert!(d.opts.wants(FtPart::Cost));
        let Ok(Command::Ft(a)) =
            parse("ft --ranks 4,16 --modes recv,agree --parts compare --launches 3")
        else {
            panic!("not ft")
        };
        assert_eq!(a.opts.ranks, vec![4, 16]);
        assert_eq!(a.opts.modes, vec![FtMode::Recv, FtMode::Agree]);
        assert!(a.opts.wants(FtPart::Compare) && !a.opts.wants(FtPart::Spawn));
        assert_eq!(a.common.launches(), 3);
        assert!(parse("ft --ranks 2").is_err());

        let Ok(Command::Worker(w)) =
            parse("worker ft --mode agreeblk -k /tmp/k --revoke 0 --delay-ms 10")
        else {
            panic!("not worker")
        };
        assert_eq!(w.kind, WorkerKind::Ft);
        let p = w.ft(1.0);
        assert_eq!(p.mode, FtMode::Agreeblk);
        assert_eq!(p.revoke, Some(false));
        assert_eq!((p.delay_ms, p.agree_reps, p.t_main), (10, 50, 1.0));
        assert_eq!(p.kill_file.as_deref(), Some(std::path::Path::new("/tmp/k")));
        assert!(parse("worker ft --revoke 2").is_err());
        for m in FtMode::COMPARED {
            assert_eq!(FtMode::from_str(m.name(), false), Ok(m));
        }
    }

    #[test]
    fn coll_cases_and_reps() {
        let ops = [
            CollOp::Bcast,
            CollOp::Barrier,
            CollOp::Bcast,
            CollOp::Barrier,
        ];
        assert_eq!(
            cases(&ops, &[8, 1024, 8]),
            vec![
                (CollOp::Bcast, 8),
                (CollOp::Bcast, 1024),
                (CollOp::Barrier, 0)
            ]
        );
        assert_eq!(
            cases(&[CollOp::Barrier], &[8, 16]),
            vec![(CollOp::Barrier, 0)]
        );
        assert_eq!(
            ops_arg(&CollOp::ALL),
            "barrier,bcast,reduce,allreduce,allgather,alltoall"
        );
        for op in CollOp::ALL {
            assert_eq!(CollOp::from_name(op.name()), Some(op));
        }
        assert_eq!(CollOp::from_name("bcast_8B"), None);

        let c = CollCounts {
            max_reps: 1000,
            warmup: 20,
            batches: 5,
            target_ms: 300,
        };
        assert_eq!(c.reps(1e-6), 1000); // 300 000 calls would fit: capped
        assert_eq!(c.reps(1e-3), 300);
        assert_eq!(c.reps(0.05), 20); // 6 would fit: at least 20
        assert_eq!(c.reps(0.0), 1000);
        assert_eq!(c.reps(f64::NAN), 1000); // as coll.c: a NaN time counts as 1 ns
    }
}
