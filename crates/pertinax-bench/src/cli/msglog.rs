//! Options of `pertinax-bench msglog` (message logging, issue 19).

use std::fmt;
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use pertinax_apps::cg::Class;

/// What the `msglog` benchmark runs (launches: `--launches`, default 3).
#[derive(Clone, Debug, PartialEq, Eq, Args)]
pub struct MsglogOpts {
    /// Parts: `overhead` (tables 3 and 4: plain, transactional and logged
    /// runs without failure) and `rollback` (figures 6-8: one run per
    /// crash iteration, local, global and hybrid).
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        value_enum,
        default_value = "overhead,rollback"
    )]
    pub parts: Vec<MsglogPart>,
    /// Programs: `cg` (`pertinax-cg`) and `stencil` (`pertinax-stencil`).
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        value_enum,
        default_value = "cg,stencil"
    )]
    pub cases: Vec<MsglogApp>,
    /// Overhead: the CG classes (S, W, A).
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "A",
          value_parser = parse_class)]
    pub classes: Vec<Class>,
    /// Overhead: rank counts (CG needs powers of two).
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "8")]
    pub ranks: Vec<usize>,
    /// Overhead: the stencil's grid, NXxNYxNZ.
    #[arg(long, value_name = "GRID", default_value = "96x96x96", value_parser = parse_grid)]
    pub grid: Grid3,
    /// Overhead: the stencil's iterations (CG runs its class's 15).
    #[arg(long, value_name = "N", default_value_t = 40)]
    pub stencil_iters: u64,
    /// Overhead: the checkpoint interval (`--cp-int` of the programs).
    #[arg(long, value_name = "N", default_value_t = 5,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub cp_int: u64,
    /// Rollback: the CG class.
    #[arg(long, value_name = "CLASS", default_value = "W", value_parser = parse_class)]
    pub rollback_class: Class,
    /// Rollback: the stencil's grid.
    #[arg(long, value_name = "GRID", default_value = "96x96x96", value_parser = parse_grid)]
    pub rollback_grid: Grid3,
    /// Rollback: the stencil's iterations.
    #[arg(long, value_name = "N", default_value_t = 15)]
    pub rollback_iters: u64,
    /// Rollback: ranks of every run.
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub rollback_ranks: usize,
    /// Rollback: the checkpoint interval.
    #[arg(long, value_name = "N", default_value_t = 5,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub rollback_cp_int: u64,
    /// Rollback: the rank killed (`--kill V@iter#K`, K = crash iteration + 1).
    #[arg(long, value_name = "RANK", default_value_t = 1)]
    pub victim: usize,
    /// Rollback: crash iterations from the first checkpoint after 0 over
    /// this many checkpoint intervals (cut at the run's last iteration).
    #[arg(long, value_name = "INTERVALS", default_value_t = 2,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub window: u64,
    /// Rollback: the hybrid policy's log cap (`--log-cap N`: iterations
    /// logged after each checkpoint).
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub hybrid_log_cap: u64,
    /// Rollback: the policies (local = `--rollback auto`, global =
    /// `--rollback global`, hybrid = auto with `--log-cap`).
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        value_enum,
        default_value = "local,global,hybrid"
    )]
    pub policies: Vec<Policy>,
    /// Directory of the programs (default: next to this executable).
    #[arg(long, value_name = "DIR")]
    pub apps: Option<PathBuf>,
}

/// A part of the `msglog` benchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum MsglogPart {
    /// Plain, transactional and logged runs without failure.
    Overhead,
    /// One run per crash iteration and policy.
    Rollback,
}

/// A program of the `msglog` benchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum MsglogApp {
    /// `pertinax-cg CLASS`.
    Cg,
    /// `pertinax-stencil --nx --ny --nz --iters`.
    Stencil,
}

impl MsglogApp {
    /// The binary's name.
    pub fn binary(self) -> &'static str {
        match self {
            MsglogApp::Cg => "pertinax-cg",
            MsglogApp::Stencil => "pertinax-stencil",
        }
    }

    /// The first word of its summary line, and the rows' `app`.
    pub fn name(self) -> &'static str {
        match self {
            MsglogApp::Cg => "cg",
            MsglogApp::Stencil => "stencil",
        }
    }
}

/// A rollback policy of the rollback part.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Policy {
    /// `--rollback auto`, the log unlimited: local rollback.
    Local,
    /// `--rollback global`.
    Global,
    /// `--rollback auto --log-cap N`: local early in an interval, global
    /// past the log.
    Hybrid,
}

impl Policy {
    /// The name in rows.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Local => "local",
            Policy::Global => "global",
            Policy::Hybrid => "hybrid",
        }
    }
}

/// A 3-D grid `NXxNYxNZ`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grid3 {
    /// Cells along x.
    pub nx: usize,
    /// Cells along y.
    pub ny: usize,
    /// Cells along z.
    pub nz: usize,
}

impl fmt::Display for Grid3 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}x{}", self.nx, self.ny, self.nz)
    }
}

/// `48x48x48` (or `48`, a cube).
pub fn parse_grid(s: &str) -> Result<Grid3, String> {
    let dims: Vec<usize> = s
        .split('x')
        .map(|d| d.trim().parse::<usize>().ok().filter(|&n| n > 0))
        .collect::<Option<_>>()
        .ok_or_else(|| format!("{s:?}: expected NXxNYxNZ, e.g. 48x48x48"))?;
    match dims[..] {
        [n] => Ok(Grid3 {
            nx: n,
            ny: n,
            nz: n,
        }),
        [nx, ny, nz] => Ok(Grid3 { nx, ny, nz }),
        _ => Err(format!("{s:?}: expected NXxNYxNZ, e.g. 48x48x48")),
    }
}

fn parse_class(s: &str) -> Result<Class, String> {
    s.parse()
        .map_err(|e: pertinax_apps::cg::CgError| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_parse_and_print() {
        let g = parse_grid("96x64x48").unwrap();
        assert_eq!((g.nx, g.ny, g.nz), (96, 64, 48));
        assert_eq!(g.to_string(), "96x64x48");
        assert_eq!(parse_grid("32").unwrap().to_string(), "32x32x32");
        assert!(parse_grid("4x4").is_err());
        assert!(parse_grid("0x4x4").is_err());
        assert!(parse_grid("ax4x4").is_err());
    }

    #[test]
    fn defaults_are_the_command_line_ones() {
        let d = MsglogOpts::default();
        assert_eq!(d.parts, [MsglogPart::Overhead, MsglogPart::Rollback]);
        assert_eq!(d.classes, [Class::A]);
        assert_eq!(d.ranks, [8]);
        assert_eq!(d.rollback_class, Class::W);
        assert_eq!(d.policies.len(), 3);
        assert_eq!(d.grid.to_string(), "96x96x96");
    }
}
