//! Environment variables set by the launcher for every process it starts.
//!
//! A process that finds none of them runs as a singleton job of size 1.

/// Rank in the world communicator (decimal).
pub const RANK: &str = "PERTINAX_RANK";
/// Number of ranks in the world communicator (decimal).
pub const SIZE: &str = "PERTINAX_SIZE";
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
/// Fault injection for this process: comma-separated `NAME@K:SIGNAL`
/// entries (`NAME` a fault point or `*` for any point, `K` the hit number
/// counted from 1, `SIGNAL` one of `kill`, `segv`, `stop`, `panic`).
pub const FAULTS: &str = "PERTINAX_FAULTS";
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
}

/// Formats bytes as lowercase hex.
pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Parses lowercase or uppercase hex; `None` on odd length or a bad digit.
pub fn from_hex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 {
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
