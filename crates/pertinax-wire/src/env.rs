//! Every `PERTINAX_*` environment variable, by name.
//!
//! - Set by the launcher for every process it starts: [`RANK`], [`SIZE`],
//!   [`SLOT`], [`JOB_ID`], [`SECRET`], [`SHM_FD`], [`CTRL_FD`], [`ROLE`],
//!   [`HEARTBEAT`], [`CMA_ALL`]. A process that finds no [`RANK`] runs as a
//!   singleton job of size 1.
//! - Read by the runtime whoever started the process (see the crate
//!   documentation for this contract): [`FAULTS`] (a
//!   [`crate::fault::Plan`]), the resilient settings [`RESILIENT`] and the
//!   `RESILIENT_*` variables (a [`crate::resilient::Settings`]), and the
//!   tunables of [`tune`].
//! - Diagnostics and tools: [`RESILIENT_TRACE`], [`mod@bench`], [`mod@test`].

/// Rank in the world communicator (decimal).
pub const RANK: &str = "PERTINAX_RANK";
/// The backend a process runs on, `native` or `mpi`, overriding the
/// choice from the environment (an MPI launcher's variables mean `mpi`,
/// anything else `native`). `mpi` needs a build with the `mpi` feature.
pub const BACKEND: &str = "PERTINAX_BACKEND";
/// On the MPI backend, which collectives run: `mpi` (the default: MPI's
/// own, the cluster's tuned algorithms) or `portable` (pertinax's
/// schedules over point-to-point, the native backend's algorithms).
pub const MPI_COLLECTIVES: &str = "PERTINAX_MPI_COLLECTIVES";
/// Number of ranks in the world communicator (decimal).
pub const SIZE: &str = "PERTINAX_SIZE";
/// Number of CPUs the job may use (decimal: the launcher's own CPU mask).
/// A process waits as one of `SIZE` ranks on this many CPUs, even when
/// `--bind-to core` pinned it to one of them.
pub const CPUS: &str = "PERTINAX_CPUS";
/// Slot of this process in the shared segment (decimal).
pub const SLOT: &str = "PERTINAX_SLOT";
/// Job id (32 hex digits).
pub const JOB_ID: &str = "PERTINAX_JOB_ID";
/// Per-job secret (64 hex digits) that the process presents to the launcher.
pub const SECRET: &str = "PERTINAX_SECRET";
/// Inherited descriptor of the job's shared-memory segment (decimal).
pub const SHM_FD: &str = "PERTINAX_SHM_FD";
/// Inherited descriptor of this process's control socket (decimal).
pub const CTRL_FD: &str = "PERTINAX_CTRL_FD";

/// What the process is: `rank` (default when unset: a rank of the job),
/// `spare` (an idle process that waits in `init` for [`crate::ctrl::ToRank::Assign`]
/// or shutdown), or `spawned` (started by a spawn request; its assignment
/// follows the welcome at once). Spares and spawned processes do not take
/// part in the start-up fence.
pub const ROLE: &str = "PERTINAX_ROLE";
/// Fault injection: comma-separated `NAME@K:SIGNAL` entries for this
/// process (`NAME` a fault point or `*` for any point, `K` the hit number
/// counted from 1, `SIGNAL` one of `kill`, `segv`, `stop`, `panic`) and
/// `RANK@NAME#K[:SIGNAL]` entries for the rank `RANK` of the job's world
/// only (the grammar of `pertinax run --kill`), so that one value serves a
/// whole job: `mpirun -x PERTINAX_FAULTS=3@chunk#6`. See
/// [`crate::fault::Plan`].
pub const FAULTS: &str = "PERTINAX_FAULTS";
/// A seeded schedule of kills for the whole job, `SEED[:COUNT[:MAX_HIT]]`
/// (`pertinax run --fault-seed SEED --fault-count COUNT --fault-max-hit
/// MAX_HIT`; defaults 1 and 20): every rank of the job's world draws the
/// same schedule ([`crate::kill::RandomFaults`]) and keeps its own kills.
/// For jobs that no `pertinax run` starts (`mpirun -x
/// PERTINAX_FAULT_SEED=42:2`).
pub const FAULT_SEED: &str = "PERTINAX_FAULT_SEED";
/// Heartbeat: `thread:MS` (a runtime thread beats every MS milliseconds;
/// catches stopped or deadlocked processes) or `progress:MS` (beats come
/// from library calls; also catches a rank stuck outside the library).
pub const HEARTBEAT: &str = "PERTINAX_HEARTBEAT";
/// `1` when the launcher found that every process may read the others'
/// memory (single copy); set for spares and spawned processes, which do not
/// take part in the fence where ranks learn it.
pub const CMA_ALL: &str = "PERTINAX_CMA_ALL";

/// Resilient communicators (`pertinax run --resilient[=MODE]`): `flat` or
/// `hier`. Set, the program's communicators continue with the survivors
/// when ranks fail; unset, the program behaves as a plain MPI program. The
/// four `RESILIENT_*` variables below are set only with it, and each only
/// when its option was given (the runtime's default applies otherwise).
pub const RESILIENT: &str = "PERTINAX_RESILIENT";
/// Largest size of the local groups of the hierarchical mode (decimal, at
/// least 2; `--resilient-k`).
pub const RESILIENT_K: &str = "PERTINAX_RESILIENT_K";
/// Communicator size from which the hierarchical mode builds its hierarchy;
/// smaller communicators are handled flat (decimal, at least 1;
/// `--resilient-threshold`).
pub const RESILIENT_THRESHOLD: &str = "PERTINAX_RESILIENT_THRESHOLD";
/// What an operation does when the rank it depends on has failed:
/// comma-separated `KIND=ACTION` items, `KIND` one of `bcast`, `reduce`,
/// `gather`, `scatter`, `send`, `recv` and `ACTION` `ignore` or `stop`;
/// kinds not named keep their default (`--resilient-policy`). The launcher
/// checks the syntax and passes the items on, comma-separated.
pub const RESILIENT_POLICY: &str = "PERTINAX_RESILIENT_POLICY";
/// The failure check of resilient collectives: `log` or `agree` (an
/// agreement after every collective, the Legio baseline;
/// `--resilient-check`).
pub const RESILIENT_CHECK: &str = "PERTINAX_RESILIENT_CHECK";
/// Set and not `0`: resilient communicators write a line on stderr for
/// every repair (a diagnostic; the launcher never sets it).
pub const RESILIENT_TRACE: &str = "PERTINAX_RESILIENT_TRACE";

/// Tunables read by the runtime (all optional).
pub mod tune {
    /// Largest message sent eagerly through the ring (bytes).
    pub const EAGER_LIMIT: &str = "PERTINAX_EAGER_LIMIT";
    /// Fragment size (bytes) of large messages streamed through a ring.
    pub const FRAG: &str = "PERTINAX_FRAG";
    /// `0` disables the single-copy (cross-memory attach) path.
    pub const CMA: &str = "PERTINAX_CMA";
    /// Protocol for large messages: `stream` (pipelined copies through the
    /// ring), `cma` (single copy), or `auto` (the default: single copy when
    /// ranks outnumber cores more than twice and the kernel allows it, so
    /// that sender and receiver rarely run at once; stream otherwise).
    pub const LARGE: &str = "PERTINAX_LARGE";
    /// `0` turns failure detection off in the progress engine (the failure
    /// epoch and revocation news are not polled): only for measuring what
    /// detection costs; a failed peer can then hang the job.
    pub const DETECT: &str = "PERTINAX_DETECT";
    /// Microseconds a waiting process polls before it starts yielding.
    pub const SPIN: &str = "PERTINAX_SPIN";
    /// Microseconds it then polls and yields before it sleeps on its futex.
    pub const YIELDS: &str = "PERTINAX_YIELDS";
    /// MPI backend: milliseconds a process waits in `MPI_Finalize` before
    /// it ends without it, exit code 0 (Open MPI hangs there at times after
    /// a process failure); `0`: no bound. Default 10000.
    pub const MPI_FINALIZE_BOUND: &str = "PERTINAX_MPI_FINALIZE_BOUND";
    /// MPI backend: milliseconds a process waits in `MPI_Comm_spawn`, and a
    /// spawned process in `MPI_Init`, before it ends with exit code 75
    /// (Open MPI at times never completes a spawn after a process failure);
    /// `0`: no bound. Default 60000.
    pub const MPI_SPAWN_BOUND: &str = "PERTINAX_MPI_SPAWN_BOUND";
    /// MPI backend, for tests: the `MPI_COMM_WORLD` rank of the process
    /// (of the job `mpirun` started) whose agreements on a communicator of
    /// several jobs act as if Open MPI never ended their fast round when it
    /// ended without a decision, as Open MPI at times leaves a process of
    /// another job; it must go on from the other members' records.
    pub const MPI_LOSE_FAST_ROUND: &str = "PERTINAX_MPI_LOSE_FAST_ROUND";
}

/// Read by `pertinax-bench`.
pub mod bench {
    /// Installation prefix of the Open MPI that benchmarks compare with
    /// (default `/tmp/ompi`; `--ompi-prefix` wins).
    pub const OMPI_PREFIX: &str = "PERTINAX_OMPI_PREFIX";
}

/// Read by the workspace's tests: the sizes of the randomized campaigns
/// (`*_RUNS`: how many jobs; `*_FIRST`, `*_SEED`: the first seed), and the
/// marks the test harnesses put on the processes they start.
pub mod test {
    /// Jobs of the ULFM kill campaign (`tests/ulfm.rs`).
    pub const CAMPAIGN_RUNS: &str = "PERTINAX_CAMPAIGN_RUNS";
    /// First seed of the ULFM kill campaign.
    pub const CAMPAIGN_FIRST: &str = "PERTINAX_CAMPAIGN_FIRST";
    /// Jobs of the replace campaign (`tests/ulfm.rs`).
    pub const REPLACE_RUNS: &str = "PERTINAX_REPLACE_RUNS";
    /// First seed of the replace campaign.
    pub const REPLACE_FIRST: &str = "PERTINAX_REPLACE_FIRST";
    /// Jobs of the request campaign (`tests/requests.rs`).
    pub const REQ_CAMPAIGN_RUNS: &str = "PERTINAX_REQ_CAMPAIGN_RUNS";
    /// First seed of the request campaign.
    pub const REQ_CAMPAIGN_FIRST: &str = "PERTINAX_REQ_CAMPAIGN_FIRST";
    /// Jobs of the propagation campaign (`tests/propagate.rs`).
    pub const PROP_CAMPAIGN_RUNS: &str = "PERTINAX_PROP_CAMPAIGN_RUNS";
    /// First seed of the propagation campaign.
    pub const PROP_CAMPAIGN_SEED: &str = "PERTINAX_PROP_CAMPAIGN_SEED";
    /// Jobs of the flat resilient campaign (`tests/resilient.rs`).
    pub const RESILIENT_CAMPAIGN_RUNS: &str = "PERTINAX_RESILIENT_CAMPAIGN_RUNS";
    /// Jobs of the hierarchical resilient campaigns (`tests/resilient.rs`,
    /// `tests/resilient_hier/`).
    pub const RESILIENT_HIER_RUNS: &str = "PERTINAX_RESILIENT_HIER_RUNS";
    /// First seed of the hierarchical resilient campaign.
    pub const RESILIENT_HIER_FIRST: &str = "PERTINAX_RESILIENT_HIER_FIRST";
    /// Jobs of the non-blocking resilient campaign (`tests/resilient_nb.rs`).
    pub const RESNB_CAMPAIGN_RUNS: &str = "PERTINAX_RESNB_CAMPAIGN_RUNS";
    /// First seed of the non-blocking resilient campaign.
    pub const RESNB_CAMPAIGN_SEED: &str = "PERTINAX_RESNB_CAMPAIGN_SEED";
    /// Jobs of the Jacobi campaign (`tests/jacobi.rs`).
    pub const JACOBI_RUNS: &str = "PERTINAX_JACOBI_RUNS";
    /// Mark that the multi-process tests' harness puts on the processes it
    /// starts, to find leftovers.
    pub const TEST_MARK: &str = "PERTINAX_TEST_MARK";
    /// Mark that the launcher's tests put on the processes they start.
    pub const TEST_TAG: &str = "PERTINAX_TEST_TAG";
    /// The backend the harness runs jobs on: `native` (the default: `pertinax
    /// run`) or `mpi` (`mpirun --with-ft ulfm`; the tests must be built with
    /// the `mpi` feature, `--features pertinax/mpi`).
    pub const BACKEND: &str = "PERTINAX_TEST_BACKEND";
    /// The `mpirun` of the harness's MPI jobs (default `/tmp/ompi/bin/mpirun`).
    pub const MPIRUN: &str = "PERTINAX_MPIRUN";
    /// Extra `mpirun` options for the harness's MPI jobs, split at blanks
    /// (e.g. `--mca btl tcp,self`, the network path on one machine).
    pub const MPIRUN_ARGS: &str = "PERTINAX_MPIRUN_ARGS";
    /// Set (to anything): when an MPI job exceeds its bound, the harness
    /// prints every live rank's threads' backtraces (`gdb -batch`, if
    /// installed) before killing it, to chase a rare hang.
    pub const STACKS: &str = "PERTINAX_TEST_STACKS";
}

/// Formats bytes as lowercase hex.
pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Parses lowercase or uppercase hex; `None` on odd length or a bad digit.
pub fn from_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn hex_round_trip() {
        let b = [0u8, 1, 0xab, 0xff];
        assert_eq!(super::to_hex(&b), "0001abff");
        assert_eq!(super::from_hex("0001ABff").unwrap(), b);
        assert!(super::from_hex("abc").is_none());
        assert!(super::from_hex("zz").is_none());
    }
}
