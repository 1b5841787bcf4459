//! Fault injection: the kills a job asks for, and the seeded schedule.
//!
//! The grammar (`RANK@TIME[:SIGNAL]`, `RANK@NAME#K[:SIGNAL]`) and the seeded
//! schedule live in [`pertinax_wire::kill`], so that the launcher and every
//! rank (a job started by `mpirun` reads its kills from its environment)
//! share one parser and one generator. The launcher carries out the
//! time-based kills itself and passes the point-based ones to their victim
//! in its `PERTINAX_FAULTS` as `NAME@K:SIGNAL` ([`faults_env`]); the rank
//! announces the death with `ToLauncher::Injected` first.
//!
//! ```
//! use pertinax_launch::{Kill, RandomFaults};
//!
//! let k: Kill = "2@1.5s:stop".parse().unwrap();
//! assert_eq!(k.to_string(), "rank 2 at 1.5 s (stop)");
//! let schedule = RandomFaults { seed: 7, count: 2, max_hit: 20 }.schedule(8).unwrap();
//! assert_eq!(schedule.len(), 2);
//! assert!(schedule.iter().all(|k| k.rank != 0));
//! ```

/// How an injected fault kills: `kill` (SIGKILL), `segv`, `stop` (SIGSTOP:
/// the process hangs until the launcher kills it for its silent heartbeat;
/// a job with a stop and without heartbeats is refused,
/// [`crate::LaunchError::StopWithoutHeartbeat`], since nothing else would
/// ever notice the process) or `panic` (fault points only). The names are
/// part of the wire format ([`pertinax_wire::fault`]).
pub use pertinax_wire::fault::FaultSignal;
pub use pertinax_wire::kill::{parse_time, Kill, KillParseError, KillWhen, RandomFaults};

/// The `PERTINAX_FAULTS` value of rank `rank`: its point-based kills as
/// a plan (`NAME@K:SIGNAL,...`), or `None` when it has none.
pub(crate) fn faults_env(kills: &[Kill], rank: u32) -> Option<String> {
    pertinax_wire::kill::plan_of(kills, rank).map(|p| p.to_string())
}
