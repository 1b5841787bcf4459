//! The benchmarks. Each one follows the same pipeline ([`campaign`]):
//! build the variants (pertinax and, where installed, Open MPI), run them
//! interleaved as a [`Campaign`] at a [`Pace`] ([`Context::campaign`]),
//! read each variant's launches as [`crate::stats::series`] of one record
//! field or as a [`Tally`] of judged launches, and print tables and JSON
//! rows through [`crate::report`]. A new benchmark (fault timings against
//! `ft.c`, say) is one more module here that names its variants, its
//! record key and how a launch counts. Benchmarks that set pertinax
//! against one Open MPI program (`ft`, `propagate`) name the side with
//! [`Impl`]; every row goes through [`crate::report::Out`], which adds the
//! provenance and feeds `--csv` and `--plot`.

pub mod campaign;
pub mod coll;
pub mod ft;
pub mod launch;
pub mod msglog;
pub mod offload;
pub mod p2p;
pub mod propagate;
pub mod regress;
pub mod resilient;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context as _, Result};

pub use campaign::{head, listed, Campaign, Judged, Pace, Tally};

use crate::cli::{BenchBackend, Common};
use crate::host::Sentinel;
use crate::report::Out;
use crate::run::{open_log, Cmd};
use crate::setup::{self, Ompi};

/// Which implementation a variant runs, in benchmarks that set pertinax
/// against one Open MPI program (`ft`, `propagate`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Impl {
    /// pertinax (`ctx.pertinax_name()` names its rows on the MPI backend).
    Pertinax,
    /// The Open MPI program.
    Ompi,
}

impl Impl {
    /// `pertinax` or `ompi`.
    pub fn name(self) -> &'static str {
        match self {
            Impl::Pertinax => "pertinax",
            Impl::Ompi => "ompi",
        }
    }
}

/// Everything a benchmark needs, resolved from the common options.
#[derive(Debug)]
pub struct Context {
    /// The `pertinax` launcher.
    pub launcher: PathBuf,
    /// This executable (ranks run `<exe> worker ...`).
    pub exe: PathBuf,
    /// Open MPI, if installed and wanted.
    pub ompi: Option<Ompi>,
    /// Why Open MPI is absent, for the report.
    pub ompi_absent: Option<String>,
    /// Sampled before every launch.
    pub sentinel: Sentinel,
    /// Launches per variant: `--launches`, else 5 (2 with `--quick`).
    pub launches: usize,
    /// Time limit per launch: `--timeout`, else 120 s.
    pub limit: Duration,
    /// `--launches` and `--timeout`, if given (benchmarks pick their own
    /// defaults: [`Context::pace_or`]).
    given: (Option<usize>, Option<Duration>),
    /// Where tables and JSON rows go.
    pub out: Out,
    /// Raw log of every launch.
    pub log: Option<File>,
    /// Smoke-test mode.
    pub quick: bool,
    /// Cores this process may use.
    pub cores: usize,
    /// Where the pertinax rows run (`--backend`).
    pub backend: BenchBackend,
    /// For `--backend mpi`: this program built with the MPI feature.
    pub mpi_exe: Option<PathBuf>,
}

impl Context {
    /// Resolves the options: finds the launcher, Open MPI and the anchors,
    /// compiles the sentinel.
    ///
    /// # Errors
    /// When the launcher is missing or the log cannot be opened.
    pub fn new(c: &Common) -> Result<Context> {
        let mpi_exe = match c.backend {
            BenchBackend::Native => None,
            BenchBackend::Mpi => Some(setup::mpi_exe(c.mpi_exe.as_deref())?),
        };
        // On MPI the ranks are started by mpirun: the launcher is only
        // needed by benchmarks that have no MPI form (they refuse).
        let launcher = match setup::launcher(c.launcher.as_deref()) {
            Ok(l) => l,
            Err(_) if mpi_exe.is_some() => PathBuf::from("pertinax"),
            Err(e) => return Err(e),
        };
        let build = setup::build_dir()?;
        let anchors = setup::anchors(c.anchors.as_deref());
        let sentinel = setup::sentinel(anchors.as_deref(), &build);
        let (ompi, ompi_absent) = if c.no_ompi {
            (None, Some("--no-ompi given".to_string()))
        } else {
            match Ompi::find(c.ompi_prefix.as_deref(), anchors.clone(), &build) {
                Some(o) => (Some(o), None),
                None => (
                    None,
                    Some(format!(
                        "Open MPI not found (need <prefix>/bin/mpicc and mpirun, prefix from \
                         --ompi-prefix, $PERTINAX_OMPI_PREFIX, an Open MPI with ULFM on PATH \
                         or /tmp/ompi) or no anchors ({})",
                        anchors.map_or("none".into(), |a| a.display().to_string())
                    )),
                ),
            }
        };
        if let Some(why) = &ompi_absent {
            if mpi_exe.is_some() {
                bail!("--backend mpi needs Open MPI (with ULFM): {why}");
            }
            eprintln!("note: pertinax only: {why}");
        }
        if let Some(o) = &ompi {
            eprintln!("note: Open MPI from {}", o.prefix().display());
        }
        let log = c.log.as_deref().map(open_log).transpose()?;
        Ok(Context {
            launcher,
            exe: setup::this_exe()?,
            ompi,
            ompi_absent,
            sentinel,
            launches: c.launches(),
            limit: Duration::from_secs(c.timeout.unwrap_or(120)),
            given: (
                c.launches.map(|k| k as usize),
                c.timeout.map(Duration::from_secs),
            ),
            out: Out::new(c)?,
            log,
            quick: c.quick,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            backend: c.backend,
            mpi_exe,
        })
    }

    /// `--launches` launches per variant and `--timeout` per launch, else
    /// 5 launches (2 with `--quick`) and 120 s.
    pub fn pace(&self) -> Pace {
        Pace {
            rounds: self.launches,
            limit: self.limit,
        }
    }

    /// The same with a benchmark's own defaults: `launches` (at most 2
    /// with `--quick`) and `limit`.
    pub fn pace_or(&self, launches: usize, limit: Duration) -> Pace {
        let (k, t) = self.given;
        let quick = if self.quick {
            launches.min(2)
        } else {
            launches
        };
        Pace {
            rounds: k.unwrap_or(quick),
            limit: t.unwrap_or(limit),
        }
    }

    /// `- Open MPI: not run (why)` for a head whose Open MPI variant did
    /// not run (`ran` false); nothing otherwise.
    pub fn ompi_line(&self, ran: bool) -> String {
        if ran {
            return String::new();
        }
        format!(
            "- Open MPI: not run ({})\n",
            self.ompi_absent.as_deref().unwrap_or("unavailable")
        )
    }

    /// The name of the pertinax rows: `pertinax`, or `pertinax-mpi` on the
    /// MPI backend.
    pub fn pertinax_name(&self) -> &'static str {
        match self.backend {
            BenchBackend::Native => "pertinax",
            BenchBackend::Mpi => "pertinax-mpi",
        }
    }

    /// The command that starts `ranks` pertinax ranks of this program (the
    /// caller appends `worker ...`): `pertinax run -n N [native] -- <exe>`,
    /// or on MPI `mpirun --oversubscribe --allow-run-as-root [setup::FT]
    /// -n N <mpi-exe>` (`native` is ignored there).
    pub fn pertinax_cmd(&self, ranks: usize, native: &[String]) -> Cmd {
        match (&self.mpi_exe, &self.ompi) {
            (Some(exe), Some(ompi)) => ompi.mpirun(ranks, setup::FT, exe),
            _ => Cmd::new(&self.launcher)
                .args(["run", "-n", &ranks.to_string()])
                .args(native)
                .arg("--")
                .arg(&self.exe),
        }
    }

    /// Extra `mpirun` options of the Open MPI anchors: none natively; on
    /// the MPI backend [`setup::FT`], as the pertinax ranks run.
    pub fn ompi_extra(&self) -> &'static [&'static str] {
        match self.backend {
            BenchBackend::Native => &[],
            BenchBackend::Mpi => setup::FT,
        }
    }

    /// Refuses `--backend mpi` for a benchmark that has no MPI form.
    ///
    /// # Errors
    /// On the MPI backend.
    pub fn native_only(&self, bench: &str) -> Result<()> {
        if self.backend == BenchBackend::Mpi {
            bail!("`{bench}` has no --backend mpi form (pingpong, pingping, coll and ft have)");
        }
        Ok(())
    }

    /// Compiles an Open MPI program, or drops Open MPI with a warning.
    pub fn ompi_program(
        &mut self,
        name: &str,
        source: Option<&std::path::Path>,
    ) -> Option<PathBuf> {
        let ompi = self.ompi.as_ref()?;
        match ompi.compile(name, source) {
            Ok(p) => Some(p),
            Err(e) => {
                eprintln!("warning: cannot build the Open MPI program {name}: {e:#}");
                self.ompi_absent = Some(format!("building {name} failed"));
                None
            }
        }
    }

    /// `ranks` ranks on `cores` cores, oversubscribed or not.
    pub fn placement(&self, ranks: usize) -> String {
        let over = if ranks > self.cores {
            format!(", oversubscribed {:.0}x", ranks as f64 / self.cores as f64)
        } else {
            String::new()
        };
        format!("{ranks} ranks on {} cores{over}", self.cores)
    }
}

/// A directory of per-run temporary files (kill times, a screening
/// database), removed with everything in it when dropped.
pub struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    /// `pertinax-bench-<tag>-<pid>` in memory (`/dev/shm`) when the machine
    /// has it and `memory` is asked for, else in the temporary directory.
    ///
    /// In memory, a file write takes a few microseconds: the fault
    /// scenarios' victim writes its kill time between taking it and
    /// killing itself, so the write is inside every kill -> X figure, of
    /// both implementations alike; on the disk-backed `/tmp` of the test
    /// machine that write (open with truncation, write, close) takes 0.2
    /// to 1.2 ms, which is most of pertinax's detection time.
    ///
    /// # Errors
    /// When the directory cannot be made.
    pub fn new(tag: &str, memory: bool) -> Result<Scratch> {
        let shm = Path::new("/dev/shm");
        let base = if memory && shm.is_dir() {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        let dir = base.join(format!("pertinax-bench-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        Ok(Scratch { dir })
    }

    /// The file `name` in it (spaces, `=` and `/` made `_`).
    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name.replace([' ', '=', '/'], "_"))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scratch_files_are_flat_and_removed() {
        let dir;
        {
            let s = Scratch::new("test", true).unwrap();
            let f = s.file("ompi recv n=4");
            assert_eq!(f.parent(), Some(s.dir.as_path()));
            assert!(!f.file_name().unwrap().to_string_lossy().contains(' '));
            std::fs::write(&f, "1").unwrap();
            dir = s.dir.clone();
        }
        assert!(!dir.exists());
    }
}
