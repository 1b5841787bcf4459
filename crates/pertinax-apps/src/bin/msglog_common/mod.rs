//! What the message-logging programs (`pertinax-cg`, `pertinax-stencil`)
//! share: the options of `pertinax-msglog` and the summary line's common
//! fields.

use pertinax::CommunicatorExt as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use pertinax::{Op, Universe};
use pertinax_msglog::{Config, LogCap, Mode, Report, RollbackPolicy};

/// The message-logging options (`--help` lists them under this heading).
#[derive(clap::Args, Clone, Debug)]
#[command(next_help_heading = "Message logging and checkpoints")]
pub struct MsgLogArgs {
    /// A coordinated checkpoint every N iterations (at 0, N, 2N, ...).
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub cp_int: u64,
    /// Log only the first N iterations after each checkpoint (a failure
    /// past them is recovered by a global rollback); no cap by default.
    #[arg(long, value_name = "N", conflicts_with = "log_cap_bytes")]
    pub log_cap: Option<u64>,
    /// Log at most BYTES of payload after each checkpoint.
    #[arg(long, value_name = "BYTES")]
    pub log_cap_bytes: Option<u64>,
    /// plain (no recovery), transactional (checkpoints and transactional
    /// iterations: global rollback), logged (and the payload log: local
    /// rollback).
    #[arg(long, value_name = "MODE", default_value = "logged")]
    pub mode: String,
    /// auto (local rollback when the logs allow, global otherwise) or
    /// global (always).
    #[arg(long, value_name = "POLICY", default_value = "auto")]
    pub rollback: String,
    /// Also keep the checkpoints on disk under DIR (one folder per rank).
    #[arg(long, value_name = "DIR")]
    pub ckpt_dir: Option<PathBuf>,
}

impl MsgLogArgs {
    /// The library's configuration.
    pub fn config(&self) -> anyhow::Result<Config> {
        let log_cap = match (self.log_cap, self.log_cap_bytes) {
            (Some(n), _) => LogCap::Iterations(n),
            (None, Some(b)) => LogCap::Bytes(b),
            (None, None) => LogCap::Unlimited,
        };
        let cfg = Config {
            cp_int: self.cp_int,
            log_cap,
            mode: self.mode.parse::<Mode>()?,
            rollback: self.rollback.parse::<RollbackPolicy>()?,
            ckpt_dir: self.ckpt_dir.clone(),
        };
        cfg.validate().context("message-logging options")?;
        Ok(cfg)
    }
}

/// The summary's common fields: the rollback, the recoveries (the most
/// any rank went through), and the
/// job's totals and maxima over the ranks (collective over the report's
/// communicator, after the run: diagnostics, outside the protection; the
/// result is gathered in the run's final step). `iters` is the number of
/// iterations of the run.
pub fn summary<S, R>(r: &Report<S, R>, iters: u64, time_s: f64) -> anyhow::Result<String> {
    let s = &r.stats;
    let sums = [s.iterations_run, s.recomputed, s.logged_bytes, s.replayed];
    let mut tot = [0u64; 4];
    let mut recoveries = [0u32];
    r.comm
        .allreduce(&[r.recoveries], &mut recoveries, &Op::max())
        .context("the most recoveries")?;
    r.comm
        .allreduce(&sums, &mut tot, &Op::sum())
        .context("summing the ranks' counts")?;
    let maxs = [
        time_s,
        s.comm_s,
        s.log_copy_s,
        s.txn_copy_s,
        s.ckpt_s,
        s.recovery_s,
        s.log_peak_bytes as f64,
        s.state_bytes as f64,
    ];
    let mut mx = [0f64; 8];
    r.comm
        .allreduce(&maxs, &mut mx, &Op::max())
        .context("the ranks' maxima")?;
    let n = r.comm.size() as u64;
    let per_iter = if iters > 0 {
        tot[2] / (n * iters).max(1)
    } else {
        0
    };
    Ok(format!(
        "rollback={} recoveries={} iterations_run={} recomputed={} replayed={} \
         logged_bytes_per_rank_iter={per_iter} log_peak_bytes={:.0} state_bytes={:.0} \
         comm_s={:.6} log_copy_s={:.6} txn_copy_s={:.6} ckpt_s={:.6} recovery_s={:.6} \
         time_s={:.6}",
        r.rollback,
        r.recoveries,
        tot[0],
        tot[1],
        tot[3],
        mx[6],
        mx[7],
        mx[1],
        mx[2],
        mx[3],
        mx[4],
        mx[5],
        mx[0],
    ))
}

/// Starts pertinax, runs `job` (true: the result verified) and finalizes;
/// the exit status is 0 iff the job verified and everything went well
/// (errors on stderr, after `name`).
pub fn main_with(name: &str, job: impl FnOnce(&Universe) -> anyhow::Result<bool>) -> ExitCode {
    let universe = match pertinax::init() {
        Ok(u) => u,
        Err(e) => {
            eprintln!("{name}: cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    let verdict = job(&universe);
    let finalized = universe.finalize();
    match (verdict, finalized) {
        (Ok(true), Ok(())) => ExitCode::SUCCESS,
        (Ok(false), _) => ExitCode::FAILURE,
        (Err(e), _) => {
            eprintln!("{name}: {e:#}");
            ExitCode::FAILURE
        }
        (Ok(true), Err(e)) => {
            eprintln!("{name}: finalize: {e}");
            ExitCode::FAILURE
        }
    }
}
