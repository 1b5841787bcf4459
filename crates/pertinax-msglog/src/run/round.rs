//! The recovery round (see the documentation of [`super`]): every rank's
//! word ([`Info`]), the rollback decided from them ([`decide`]), the
//! restore, and what each rank replays.

use pertinax::CommunicatorExt as _;
use std::time::Instant;

use pertinax::Error as CoreError;
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::{Driver, Replay, Stop};
use crate::logged::SERVE_TAG;
use crate::{Error, Mode, Rollback, RollbackPolicy};

/// One rank's word in a recovery round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Info {
    /// The iteration it restarts at (its state is that iteration's start).
    pub it: u64,
    /// Whether it has a state (false: a replacement, or memory lost).
    pub has_state: bool,
    /// Its log covers `lo..hi`.
    pub lo: u64,
    pub hi: u64,
    /// Whether it holds a committed checkpoint.
    pub has_ckpt: bool,
}

/// A recovery's rollback and every rank's restart iteration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Decision {
    pub rollback: Rollback,
    pub start: Vec<u64>,
}

/// Decides the rollback of a recovery from every rank's [`Info`] and the
/// checkpoint `ckpt` every rank can restore: local when every rank that
/// is ahead of another can replay to it from its log (and the mode and
/// policy allow), global otherwise.
pub(crate) fn decide(info: &[Info], ckpt: u64, mode: Mode, policy: RollbackPolicy) -> Decision {
    let global = Decision {
        rollback: Rollback::Global,
        start: vec![ckpt; info.len()],
    };
    if mode != Mode::Logged || policy == RollbackPolicy::Global {
        return global;
    }
    let start: Vec<u64> = info
        .iter()
        .map(|i| if i.has_state { i.it } else { ckpt })
        .collect();
    if start.iter().any(|&s| s < ckpt) {
        return global;
    }
    let covered = info.iter().enumerate().all(|(q, iq)| {
        !iq.has_state
            || start
                .iter()
                .enumerate()
                .all(|(p, &sp)| p == q || sp >= iq.it || (iq.lo <= sp && iq.hi >= iq.it))
    });
    if !covered {
        return global;
    }
    Decision {
        rollback: Rollback::Local,
        start,
    }
}

impl<'c, S, R> Driver<'c, S, R>
where
    S: Clone + Serialize + DeserializeOwned,
{
    /// A recovery round (see the module documentation); returns what to
    /// replay.
    pub(super) fn round(&mut self) -> Result<Vec<Replay>, Stop> {
        let t = Instant::now();
        let r = self.round_inner();
        let plan = match r {
            Ok(plan) => plan,
            // Before the restore: this rank has not voted yet.
            Err(RoundError::Fault) => return Err(self.failed()),
            // The restore ended with its agreement: that was the vote.
            Err(RoundError::Voted) => return Err(Stop::Failed),
            Err(RoundError::Fatal(e)) => return Err(Stop::Fatal(e)),
        };
        if !self.vote(true)? {
            let _ = self.comm().revoke();
            return Err(Stop::Failed);
        }
        let dt = t.elapsed().as_secs_f64();
        self.lg.with_stats(|s| {
            s.recovery_s += dt;
            s.replayed += plan.len() as u64;
        });
        Ok(plan)
    }

    fn round_inner(&mut self) -> Result<Vec<Replay>, RoundError> {
        let c = self.lg.comm().clone();
        let (me, n) = (c.rank().index(), c.size());
        let (lo, hi) = self.lg.with_log(|l| (l.lo(), l.hi()));
        let has_ckpt = self.ckpt.latest().is_some();
        let mine = [self.it, self.has_state as u64, lo, hi, has_ckpt as u64];
        let mut all = vec![0u64; 5 * n];
        c.allgather(&mine, &mut all)
            .map_err(RoundError::from_core)?;
        let info: Vec<Info> = all
            .chunks_exact(5)
            .map(|w| Info {
                it: w[0],
                has_state: w[1] != 0,
                lo: w[2],
                hi: w[3],
                has_ckpt: w[4] != 0,
            })
            .collect();
        // No checkpoint committed yet (a failure during the first one):
        // everyone starts again from iteration 0.
        let (ckpt, bytes) = if info.iter().all(|i| !i.has_ckpt) {
            (0, None)
        } else {
            // Only the first restore of a new process is `fresh`: a retry
            // keeps what the failed one received.
            let fresh = std::mem::take(&mut self.fresh);
            match self.ckpt.restore(&c, fresh) {
                Ok((v, b)) => (v, Some(b)),
                Err(e) if e.is_fault() => return Err(RoundError::Voted),
                Err(e) => return Err(RoundError::Fatal(Error::Checkpoint(e))),
            }
        };
        let d = decide(&info, ckpt, self.cfg.mode, self.cfg.rollback);
        let furthest = info.iter().filter(|i| i.has_state).map(|i| i.it).max();
        self.redo_until = self.redo_until.max(furthest.unwrap_or(0));
        if d.rollback == Rollback::Global || !self.has_state {
            let t = Instant::now();
            self.state = match (&bytes, &self.initial) {
                (Some(b), _) => postcard::from_bytes(b).map_err(|e| {
                    RoundError::Fatal(Error::State {
                        what: "decoded",
                        why: e.to_string(),
                    })
                })?,
                (None, Some(init)) => init.clone(),
                (None, None) => {
                    return Err(RoundError::Fatal(Error::State {
                        what: "restored",
                        why: "no checkpoint and no initial state (a bug)".into(),
                    }))
                }
            };
            self.snapshot.clone_from(&self.state);
            let dt = t.elapsed().as_secs_f64();
            self.lg.with_stats(|s| s.txn_copy_s += dt);
            self.it = ckpt;
            self.result = None;
            self.lg.with_log(|l| l.reset(ckpt));
            self.has_state = true;
        }
        self.rollback = self.rollback.max(d.rollback);
        // What this rank replays: to every rank that restarts before it,
        // its logged sends of those iterations, and the collective results
        // of the iterations it serves (the lowest rank past them).
        let my = d.start[me];
        let mut plan = Vec::new();
        if d.rollback == Rollback::Local {
            self.lg.with_log(|l| {
                for (p, &sp) in d.start.iter().enumerate() {
                    if p == me || sp >= my {
                        continue;
                    }
                    for s in l.sends_to(p, sp, my) {
                        plan.push((p, s.tag, s.data));
                    }
                    for k in sp..my {
                        if d.start.iter().position(|&s| s > k) == Some(me) {
                            for g in l.got_in(k) {
                                plan.push((p, SERVE_TAG, g.data));
                            }
                        }
                    }
                }
            });
        }
        self.lg.set_start(d.start);
        Ok(plan)
    }
}

/// Why a round's work (before its agreement) stopped.
enum RoundError {
    /// A failure before the restore (this rank has not voted).
    Fault,
    /// A failure the restore's agreement reported (the rank voted in it).
    Voted,
    Fatal(Error),
}

impl RoundError {
    fn from_core(e: CoreError) -> RoundError {
        if e.is_fault() {
            RoundError::Fault
        } else {
            RoundError::Fatal(Error::Core {
                what: "exchanging the front line",
                source: e,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(it: u64, has_state: bool, lo: u64, hi: u64) -> Info {
        Info {
            it,
            has_state,
            lo,
            hi,
            has_ckpt: has_state,
        }
    }

    #[test]
    fn a_replacement_with_logs_that_reach_back_is_a_local_rollback() {
        // Rank 1 was replaced; ranks 0, 2 at 13, rank 3 at 14; checkpoint 10.
        let i = [
            info(13, true, 10, 13),
            info(0, false, 0, 0),
            info(13, true, 10, 13),
            info(14, true, 10, 14),
        ];
        let d = decide(&i, 10, Mode::Logged, RollbackPolicy::Auto);
        assert_eq!(d.rollback, Rollback::Local);
        assert_eq!(d.start, [13, 10, 13, 14]);
    }

    #[test]
    fn a_log_that_stops_short_forces_a_global_rollback() {
        // Rank 3's log covers only 10..12: it cannot replay 12..14.
        let i = [
            info(13, true, 10, 13),
            info(0, false, 0, 0),
            info(13, true, 10, 13),
            info(14, true, 10, 12),
        ];
        let d = decide(&i, 10, Mode::Logged, RollbackPolicy::Auto);
        assert_eq!(d.rollback, Rollback::Global);
        assert_eq!(d.start, [10; 4]);
    }

    #[test]
    fn without_logs_or_by_policy_it_is_global() {
        let i = [info(13, true, 10, 13), info(0, false, 0, 0)];
        for (m, p) in [
            (Mode::Transactional, RollbackPolicy::Auto),
            (Mode::Logged, RollbackPolicy::Global),
        ] {
            assert_eq!(decide(&i, 10, m, p).rollback, Rollback::Global);
        }
    }

    #[test]
    fn ranks_at_the_same_iteration_need_no_log() {
        let i = [info(7, true, 5, 5), info(7, true, 5, 5)];
        let d = decide(&i, 5, Mode::Logged, RollbackPolicy::Auto);
        assert_eq!((d.rollback, d.start), (Rollback::Local, vec![7, 7]));
    }
}
