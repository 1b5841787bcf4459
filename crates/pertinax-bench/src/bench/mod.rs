//! The benchmarks. Each one follows the same pipeline: build the variants
//! (pertinax and, where installed, Open MPI), run them interleaved with
//! [`crate::run::interleave`], group the parsed records with
//! [`crate::stats::series`], and print tables and JSON rows through
//! [`crate::report`]. A new benchmark (fault timings against `ft.c`, say)
//! is one more module here that names its record key, grouping fields and
//! value field. Benchmarks that set pertinax against one Open MPI program
//! and tally each variant's launches (`ft`, `propagate`) share [`Impl`] and
//! [`Ended`] (runs, hangs, failures); every row goes through
//! [`crate::report::Out`], which adds the provenance and feeds `--csv` and
//! `--plot`.

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
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Result};

use crate::cli::{BenchBackend, Common};
use crate::host::{percent, Sample, Sentinel};
use crate::report::{Out, Table};
use crate::run::{open_log, Cmd, Exit, Launch, Variant};
use crate::setup::{self, Ompi};
use crate::stats::median;

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

/// How the launches of one variant ended: what every tally of a variant's
/// results starts with.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ended {
    /// Launches run.
    pub runs: usize,
    /// Launches that printed their results and then ran into the time
    /// limit (Open MPI's finalize hang).
    pub hung_after: usize,
    /// Launches that ran into the time limit without results.
    pub hung_before: usize,
    /// Launches without usable results that did not hang: why.
    pub failed: Vec<String>,
}

impl Ended {
    /// Counts launch `l`, which printed its result line or not
    /// (`printed`); returns whether it ran into the time limit.
    pub fn count(&mut self, l: &Launch, printed: bool) -> bool {
        self.runs += 1;
        let timed_out = l.outcome.exit == Exit::TimedOut;
        match (timed_out, printed) {
            (true, true) => self.hung_after += 1,
            (true, false) => self.hung_before += 1,
            _ => {}
        }
        timed_out
    }

    /// Launches that ran into the time limit.
    pub fn hangs(&self) -> usize {
        self.hung_after + self.hung_before
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
    /// Launches per variant.
    pub launches: usize,
    /// Time limit per launch: `--timeout`, else 120 s.
    pub limit: Duration,
    /// `--timeout`, if given (benchmarks with long launches pick their own
    /// default).
    pub timeout: Option<Duration>,
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
            timeout: c.timeout.map(Duration::from_secs),
            out: Out::new(c)?,
            log,
            quick: c.quick,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            backend: c.backend,
            mpi_exe,
        })
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
    /// or on MPI `mpirun --oversubscribe --allow-run-as-root --with-ft ulfm
    /// -n N <mpi-exe>` (`native` is ignored there).
    pub fn pertinax_cmd(&self, ranks: usize, native: &[String]) -> Cmd {
        match (&self.mpi_exe, &self.ompi) {
            (Some(exe), Some(ompi)) => ompi.mpirun(ranks, &["--with-ft", "ulfm"], exe),
            _ => Cmd::new(&self.launcher)
                .args(["run", "-n", &ranks.to_string()])
                .args(native)
                .arg("--")
                .arg(&self.exe),
        }
    }

    /// Extra `mpirun` options of the Open MPI anchors: none natively; on
    /// the MPI backend `--with-ft ulfm`, as the pertinax ranks run.
    pub fn ompi_extra(&self) -> &'static [&'static str] {
        match self.backend {
            BenchBackend::Native => &[],
            BenchBackend::Mpi => &["--with-ft", "ulfm"],
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

/// Per-variant sentinel summary: how many launches were in the fast state,
/// the median one-way latency, and every launch's reading.
pub fn sentinel_summary(variants: &[Variant], launches: &[Launch]) -> String {
    let mut t = Table::new([
        "variant",
        "launches ok/run",
        "fast before",
        "fast before+after",
        "c2c one-way ns median",
        "memcpy GB/s median",
        "load1 median",
        "others' CPU median",
    ]);
    let mut detail = String::new();
    for (i, v) in variants.iter().enumerate() {
        let mine: Vec<&Launch> = launches.iter().filter(|l| l.variant == i).collect();
        let samples: Vec<_> = mine.iter().filter_map(|l| l.sentinel).collect();
        let ok = mine.iter().filter(|l| l.outcome.ok()).count();
        let fast = samples.iter().filter(|s| s.fast()).count();
        let med = |f: &dyn Fn(&Sample) -> Option<f64>| {
            median(&samples.iter().filter_map(f).collect::<Vec<_>>())
                .map_or("-".into(), |m| format!("{m:.1}"))
        };
        t.row(vec![
            v.name.clone(),
            format!("{ok}/{}", mine.len()),
            if samples.is_empty() {
                "n/a".into()
            } else {
                format!("{fast}/{}", samples.len())
            },
            if samples.is_empty() {
                "n/a".into()
            } else {
                let both = mine.iter().filter(|l| l.fast() == Some(true)).count();
                format!("{both}/{}", samples.len())
            },
            med(&|s| Some(s.oneway_ns)),
            med(&|s| Some(s.memcpy_gbps)),
            med(&|s| s.load1),
            percent(median(
                &mine.iter().filter_map(|l| l.others_cpu).collect::<Vec<_>>(),
            )),
        ]);
        let per: Vec<String> = mine
            .iter()
            .map(|l| {
                let ns =
                    |s: Option<Sample>| s.map_or("n/a".into(), |s| format!("{:.0}", s.oneway_ns));
                let c2c = format!("{}>{}", ns(l.sentinel), ns(l.sentinel_after));
                let cell = format!("{c2c}/{}", percent(l.others_cpu));
                if l.outcome.ok() {
                    cell
                } else {
                    format!("{cell}[{}]", l.outcome.status())
                }
            })
            .collect();
        detail.push_str(&format!("{:<24} {}\n", v.name, per.join(" ")));
    }
    let mut s = String::from(
        "\nHost state per launch: the c2c.c sentinel right before and right after it \
         (fast = one-way <= 60 ns; a launch counts as fast-state when both readings are fast), \
         the 1-minute load average, and others' CPU = the share of both cores' time that processes \
         outside this session (other people's builds and tests, kernel threads) used while the \
         launch ran (a lower bound; 10 ms ticks, so rough for launches under a second). Per launch \
         below: one-way ns before>after / others' CPU.\n\n",
    );
    s.push_str(&t.render());
    s.push_str("\n```\n");
    s.push_str(&detail);
    s.push_str("```\n");
    s
}
