//! Options of `pertinax-bench worker`, the measuring side run inside a
//! job: what it measures ([`WorkerKind`]) and every benchmark's worker
//! options in one struct ([`WorkerArgs`]), with their views per benchmark.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::{parse_sizes, CollOp, CollOpts, FtMode, Reps, ResCheck, ResComm, Sizes};

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
