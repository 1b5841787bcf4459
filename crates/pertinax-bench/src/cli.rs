//! The command line of `pertinax-bench`: one struct per subcommand, the
//! options every benchmark shares in [`Common`].

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

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
    Pingpong(P2pArgs),
    /// Ping-ping (both ranks send at once) between 2 ranks.
    Pingping(P2pArgs),
    /// Wall time of launching an init/finalize-only program.
    Launch(LaunchArgs),
    /// pingpong, pingping and launch, one after another.
    All(AllArgs),
    /// The measuring side, run inside a job (`pertinax run -n 2 -- pertinax-bench worker pingpong`).
    Worker(WorkerArgs),
}

/// Options shared by every benchmark.
#[derive(Clone, Debug, Args)]
pub struct Common {
    /// Launches per implementation (default 5; 2 with --quick).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..))]
    pub launches: Option<u32>,

    /// Print one JSON object per measurement row on stdout (tables go to stderr).
    #[arg(long)]
    pub json: bool,

    /// Do not run Open MPI even if it is installed.
    #[arg(long)]
    pub no_ompi: bool,

    /// Open MPI installation (default: $PERTINAX_OMPI_PREFIX, else /tmp/ompi).
    #[arg(long, value_name = "DIR")]
    pub ompi_prefix: Option<PathBuf>,

    /// The pertinax launcher (default: `pertinax` next to this executable).
    #[arg(long, value_name = "PATH")]
    pub launcher: Option<PathBuf>,

    /// The Open MPI anchor programs (default: <repo>/../shared/anchors/ompi).
    #[arg(long, value_name = "DIR")]
    pub anchors: Option<PathBuf>,

    /// Kill a launch (its whole process group) after this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 120)]
    pub timeout: u64,

    /// Append every launch's full output to this file.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,

    /// Fewer repetitions and launches: a smoke test, not a measurement.
    #[arg(long)]
    pub quick: bool,
}

impl Common {
    /// Launches per implementation.
    pub fn launches(&self) -> usize {
        self.launches
            .map_or(if self.quick { 2 } else { 5 }, |k| k as usize)
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
    pub common: Common,
    #[command(flatten)]
    pub reps: Reps,
    /// Bytes per shared-memory ring, passed to `pertinax run --ring-bytes`.
    #[arg(long, value_name = "BYTES")]
    pub ring_bytes: Option<usize>,
}

/// Options of `launch`.
#[derive(Clone, Debug, Args)]
pub struct LaunchArgs {
    #[command(flatten)]
    pub common: Common,
    /// Rank counts.
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "1,2,4,8,16"
    )]
    pub ranks: Vec<usize>,
}

/// Options of `all`.
#[derive(Clone, Debug, Args)]
pub struct AllArgs {
    #[command(flatten)]
    pub common: Common,
    #[command(flatten)]
    pub reps: Reps,
    /// Rank counts for the launch benchmark.
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "1,2,4,8,16"
    )]
    pub ranks: Vec<usize>,
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
}

/// Options of `worker`.
#[derive(Clone, Debug, Args)]
pub struct WorkerArgs {
    /// What to measure.
    #[arg(value_enum)]
    pub kind: WorkerKind,
    #[command(flatten)]
    pub reps: Reps,
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
        let cli =
            Cli::try_parse_from(["b", "pingpong", "--launches", "3", "--json", "--quick"]).unwrap();
        let Command::Pingpong(a) = cli.command else {
            panic!("not pingpong")
        };
        assert_eq!(a.common.launches(), 3);
        assert!(a.common.json);
        assert_eq!(a.reps.counts(true), (100, 10, 3));
        assert_eq!(a.reps.sizes().0, DEFAULT_SIZES.to_vec());

        let cli = Cli::try_parse_from(["b", "launch", "--ranks", "2,16"]).unwrap();
        let Command::Launch(a) = cli.command else {
            panic!("not launch")
        };
        assert_eq!(a.ranks, vec![2, 16]);
        assert_eq!(a.common.launches(), 5);

        let cli =
            Cli::try_parse_from(["b", "worker", "pingping", "--sizes", "0,1M", "--reps", "7"])
                .unwrap();
        let Command::Worker(w) = cli.command else {
            panic!("not worker")
        };
        assert_eq!(w.kind, WorkerKind::Pingping);
        assert_eq!(w.reps.counts(false), (7, 100, 7));
        assert!(Cli::try_parse_from(["b", "pingpong", "--launches", "0"]).is_err());
    }
}
