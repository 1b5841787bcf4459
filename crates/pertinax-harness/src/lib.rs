//! The test harness of pertinax (a development crate, not published).
//!
//! Every test that starts processes goes through here:
//!
//! - [`Spec`] / [`run`] / [`run_with`]: a job of a rank program through the
//!   real launcher (`pertinax run -n N [OPTIONS] -- PROGRAM ARGS`): launcher
//!   options for kills (`--kill`, `--fault-seed`), spares and resilience;
//!   variables for the ranks; a wall-clock bound past which the launcher
//!   and its whole job are killed ([`kill_job`]: every marked process and
//!   each rank's process group; the [`Job`] then has no exit code and says
//!   why); and the leftover check.
//! - Backends ([`mpi`](backend)): with `PERTINAX_TEST_BACKEND=mpi` the same
//!   jobs run under `mpirun --with-ft ulfm` (kills by a job-wide fault
//!   plan; native-only launcher options refused by name; the tests that
//!   need them listed in [`native_only`]); [`kill_rank`] SIGKILLs a rank
//!   of a running job from outside, on either backend.
//! - [`Sandbox`] / [`Running`]: the launcher with any arguments (its own
//!   tests), in a temporary directory, in the background if need be
//!   (signals, kills from outside). Dropping either kills what is left of
//!   it (also when the test panics).
//! - The leftover check ([`Sandbox::assert_no_leftovers`]): every process
//!   a test starts carries `PERTINAX_TEST_MARK=<unique>` in its environment,
//!   so after the launcher ended no live process may carry it (a grace of
//!   1 s, 2 s for jobs, for deaths under way). Segments are anonymous
//!   `memfd`s and sockets socket pairs, so a job leaves no name behind.
//! - Output: each job's stdout and stderr in full; the rank programs'
//!   outcome lines (`OK|LEFT|FAIL SCENARIO rank=R ...`) by rank with
//!   [`Job::rank_lines`], counted with [`Job::oks`].
//! - [`Program`]: the binaries a test needs from other packages (the
//!   launcher, the fake rank, applications, examples), built on first use
//!   with the same cargo, target directory and profile as the test (see
//!   [`program`](Program)), so `cargo test -p <one crate>` works from a
//!   clean target directory. A package's own binaries come from Cargo
//!   (`env!("CARGO_BIN_EXE_<name>")`).
//! - [`rank`](Scenario): the rank programs' scaffolding (command line,
//!   setup, outcome line) and their scenarios as enums
//!   ([`scenario_enum!`], [`Scenarios`]), which the tests pass to
//!   [`Spec::scenario`].
//! - The fake rank (`src/bin/pertinax-fake-rank.rs`, [`FAKE_RANK`]) and the
//!   scripts that drive it ([`fake_script`], [`run_fake_job`]).
#![forbid(unsafe_code)]

mod fake;
mod job;
mod mpi;
mod program;
mod rank;
mod sandbox;

pub use fake::{fake_script, run_fake_job, sh, summary_time};
pub use job::{check, env_count, run, run_with, wait_file, Job, Protocol, Spec, PROTOCOL_MIX};
pub use mpi::{
    backend, environ_value, job_code, kill_rank, mpi_available, mpi_ready, mpirun, native_only,
    on_mpi, translate, TestBackend, NATIVE_ONLY_LIST,
};
pub use program::{fake_rank, launcher, Program, FAKE_RANK, LAUNCHER, MPI_ABI};
pub use rank::{report, setup, Reported, Scenario, Scenarios, UnknownScenario, LEFT};
pub use sandbox::{
    alive, kill_all, kill_job, marked, shm_leftovers, wait_for, Ended, Outcome, Running, Sandbox,
    LEFTOVER_GRACE, MARK_VAR,
};
