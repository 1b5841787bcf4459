//! Time-driven duties of the loop: time-based fault injection and
//! heartbeat watching.
//!
//! Time-based kills count from the moment every rank has passed the
//! start-up fence (the first fence), so that `--kill 1@250ms` strikes a
//! quarter of a second into the application, however long the start took.
//! A job whose ranks never fence (a program that does not speak the
//! protocol) never fires them.
//!
//! Heartbeats: every `period` the loop reads the `beat` word of every live
//! process that has said hello and not finalized (a process may work long
//! after `finalize`, outside the library). A process whose word has not
//! changed for
//! `timeout` is SIGKILLed and reported with cause "heartbeat timeout"
//! (injected, if an injected fault had stopped it). Idle spares are judged
//! too in thread mode; in progress mode they make no library calls, so they
//! are not.

use std::sync::atomic::Ordering::SeqCst;
use std::time::Instant;

use pertinax_os::process::kill_group;

use super::Supervisor;
use crate::fault::{Kill, KillWhen};
use crate::report::Cause;
use crate::spec::HeartbeatMode;

impl Supervisor<'_> {
    /// When the next time-based kill is due, once the fence has passed.
    pub(super) fn next_timed_kill(&self) -> Option<Instant> {
        let fence = self.fence_at.filter(|_| self.stop.is_none())?;
        self.timed
            .iter()
            .filter_map(|k| match k.when {
                KillWhen::After(t) => fence.checked_add(t),
                KillWhen::Hit { .. } => None,
            })
            .min()
    }

    /// Fires the time-based kills that are due. None fires once the job is
    /// being stopped.
    pub(super) fn fire_timed_kills(&mut self, now: Instant) {
        let Some(fence) = self.fence_at else {
            return;
        };
        if self.stop.is_some() {
            self.timed.clear();
            return;
        }
        let due = |k: &Kill| match k.when {
            KillWhen::After(t) => fence.checked_add(t).is_some_and(|at| at <= now),
            KillWhen::Hit { .. } => true,
        };
        let (fire, later): (Vec<Kill>, Vec<Kill>) = self.timed.drain(..).partition(due);
        self.timed = later;
        for k in fire {
            self.inject(&k);
        }
    }

    /// Sends a time-based kill's signal to its rank, if it still runs.
    fn inject(&mut self, k: &Kill) {
        // A panic cannot be sent (validated before the job started).
        let Some(sig) = k.signal.number() else {
            return;
        };
        let Some(p) = self.procs.get_mut(k.rank as usize) else {
            return;
        };
        if !p.is_live() {
            return;
        }
        let _ = kill_group(p.pid, sig);
        if sig == libc::SIGSTOP {
            p.stopped = true;
        } else {
            p.cause.get_or_insert(Cause::Launcher { signal: sig });
        }
    }

    /// When the heartbeats are next sampled.
    pub(super) fn next_beat(&self) -> Option<Instant> {
        if self.stop.is_some() || !self.procs.iter().any(|p| p.is_live()) {
            return None;
        }
        self.beat_next
    }

    /// Samples every heartbeat, if it is time, and kills the silent.
    pub(super) fn sample_beats(&mut self, now: Instant) {
        let (Some(hb), Some(next)) = (self.cfg.heartbeat, self.beat_next) else {
            return;
        };
        if now < next {
            return;
        }
        let mut following = next + hb.period;
        if following <= now {
            // The loop fell behind: no burst of catch-up samples.
            following = now + hb.period;
        }
        self.beat_next = Some(following);
        if self.stop.is_some() {
            return;
        }
        let seg = self.seg;
        for (s, p) in self.procs.iter_mut().enumerate() {
            // A finalized process has left the job's communication.
            if !p.is_live() || p.joined_at.is_none() || p.finalized || p.beat_killed {
                continue;
            }
            if hb.mode == HeartbeatMode::Progress && p.is_idle_spare() {
                continue;
            }
            let beat = seg.proc_block(s).beat.load(SeqCst);
            if beat != p.beat.0 {
                p.beat = (beat, now);
            } else if now.duration_since(p.beat.1) >= hb.timeout {
                let _ = kill_group(p.pid, libc::SIGKILL);
                p.beat_killed = true;
                p.cause.get_or_insert(Cause::Heartbeat {
                    injected: p.stopped,
                });
            }
        }
    }
}
