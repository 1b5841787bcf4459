//! What the two parallel programs share: starting the job, the reporting
//! rank, rank lists and digests.
//!
//! Both programs end the same way: one rank, the *reporter*, checks the
//! job's result against a sequential recomputation and prints one
//! machine-readable summary line; its verdict is the job's exit status.
//! Every other rank prints one line about its own part and exits 0.

use std::process::ExitCode;

use pertinax::Rank;
use pertinax_resilient::{Communicator, World};

/// What a rank's part of a job ends with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Not the reporter: nothing to judge.
    Quiet,
    /// The reporter's checks passed.
    Pass,
    /// The reporter's checks failed (the summary line says which).
    Fail,
}

/// Starts pertinax, makes the world communicator (resilient under
/// `pertinax run --resilient`, i.e. `PERTINAX_RESILIENT=flat`), runs `job`
/// on it and turns its verdict into an exit status: 0 unless the reporter
/// found a wrong result (1) or the job stopped with an error (1, the error
/// on stderr).
pub fn main_with(name: &str, job: impl FnOnce(&World) -> anyhow::Result<Verdict>) -> ExitCode {
    let universe = match pertinax::init() {
        Ok(u) => u,
        Err(e) => {
            eprintln!("{name}: cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    let verdict = match pertinax_resilient::world(&universe) {
        Ok(world) => {
            let rank = Communicator::rank(&world).index();
            // A job that ends normally ends the world collectively (a
            // barrier): under `--resilient-check log` no survivor may leave
            // while another can still need it to replay a collective.
            // After an error the world is only dropped (local: it never
            // starts a collective that could hang the others).
            job(&world)
                .and_then(|v| {
                    world
                        .finish()
                        .map(|_| v)
                        .map_err(|e| anyhow::Error::new(e).context("finish"))
                })
                .map_err(|e| e.context(format!("rank {rank}")))
        }
        Err(e) => Err(anyhow::Error::new(e).context("cannot make the world communicator")),
    };
    drop(universe);
    match verdict {
        Ok(Verdict::Quiet | Verdict::Pass) => ExitCode::SUCCESS,
        Ok(Verdict::Fail) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("{name}: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Ranks as indices, increasing.
pub fn indices(ranks: &[Rank]) -> Vec<usize> {
    let mut v: Vec<usize> = ranks.iter().map(|r| r.index()).collect();
    v.sort_unstable();
    v
}

/// The lowest of ranks `0..n` not in `out`: the reporter, when `out` is a
/// list every survivor agrees on (an [`Outcome`]'s missing ranks).
///
/// [`Outcome`]: pertinax_resilient::Outcome
pub fn lowest_outside(n: usize, out: &[usize]) -> Option<usize> {
    (0..n).find(|r| !out.contains(r))
}

/// `[1,2,5]`.
pub fn list(items: impl IntoIterator<Item = impl std::fmt::Display>) -> String {
    let parts: Vec<String> = items.into_iter().map(|i| i.to_string()).collect();
    format!("[{}]", parts.join(","))
}

/// A digest (FNV-1a over the words' bytes), for checking that survivors
/// hold the same data without sending all of it.
pub fn digest(words: impl IntoIterator<Item = u64>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for w in words {
        for b in w.to_le_bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    h
}

/// Whether the reporter recomputes the survivors' work sequentially.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Recompute {
    /// When the problem is small enough (see each program).
    Auto,
    /// Always.
    Yes,
    /// Never: the checks use what the ranks reported.
    No,
}
