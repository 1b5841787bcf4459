//! Options of `pertinax-bench offload` (a submodule, so that `cli.rs`
//! stays one screenful per benchmark).

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// What the `offload` benchmark runs (launches: `--launches`, default 3).
#[derive(Clone, Debug, PartialEq, Eq, Args)]
pub struct OffloadOpts {
    /// Cases to run (default all): hello, nbody-global, nbody-partial, fwi.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub cases: Vec<String>,
    /// Master counts of `hello` (one booster each).
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "1,2,4,8,16"
    )]
    pub masters: Vec<usize>,
    /// Rounds of `hello` per launch (40 with --quick).
    #[arg(long, default_value_t = 200)]
    pub reps: usize,
    /// Masters (= boosters) of the N-body cases (1 with `--nbody-mode
    /// error-each`).
    #[arg(long, default_value_t = 4)]
    pub nbody_boosters: usize,
    /// Bodies of the N-body cases.
    #[arg(long, default_value_t = 2048)]
    pub bodies: u64,
    /// The N-body cases' configurations: `standard` (original, error-free,
    /// error, error-spare) or `error-each` (figure 10: one booster;
    /// original, error-free, and an error in each task: `error` for
    /// `nbody-global`, `error-1`, `error-2`, ... for `nbody-partial`, one
    /// per task of the middle time step, in offload order).
    #[arg(long, value_enum, default_value_t = NbodyMode::Standard)]
    pub nbody_mode: NbodyMode,
    /// Shots (slaves) of the FWI case.
    #[arg(long, default_value_t = 2)]
    pub shots: usize,
    /// The process the FWI case's `error` and `error-spare` kill (figure
    /// 15): a `worker` (recovered by its slave) or a `slave` (recovered by
    /// the masters).
    #[arg(long, value_enum, default_value_t = FwiFault::Slave)]
    pub fwi_faults: FwiFault,
    /// Failures in one FWI run (figure 16: time against the number of
    /// errors), each at the first kernel of a different wait, spread over
    /// the run (at most 8, the run's waits).
    #[arg(long, value_name = "K", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub fwi_errors: u32,
    /// Directory of the programs (default: next to this executable).
    #[arg(long, value_name = "DIR")]
    pub apps: Option<PathBuf>,
}

/// The FWI process that fails (see [`OffloadOpts::fwi_faults`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FwiFault {
    /// A worker of the last slave (its fault point `worker.S.N.W`).
    Worker,
    /// The last slave (its fault point `slave.S.N`).
    Slave,
}

impl FwiFault {
    /// The name on the command line and in the rows.
    pub fn name(self) -> &'static str {
        match self {
            FwiFault::Worker => "worker",
            FwiFault::Slave => "slave",
        }
    }
}

/// The N-body cases' configurations (see [`OffloadOpts::nbody_mode`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum NbodyMode {
    /// original, error-free, error, error-spare at `--nbody-boosters`.
    Standard,
    /// One booster, an error in each task (figure 10).
    ErrorEach,
}

impl NbodyMode {
    /// The name on the command line and in the rows.
    pub fn name(self) -> &'static str {
        match self {
            NbodyMode::Standard => "standard",
            NbodyMode::ErrorEach => "error-each",
        }
    }
}
