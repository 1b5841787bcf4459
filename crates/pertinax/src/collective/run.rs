//! The schedule interpreter: a [`Schedule`] as a backend [`Task`].
//!
//! The backend advances every running task on each progress round; this
//! file decides what one advance does: start the current round's sends and
//! receives, and once they are all done check them, run the round's local
//! steps and go on. A collective that fails midway lets go of the requests
//! of its round ([`TaskIo::abandon`]); a receive that met a longer message
//! consumed it (the backend's receives are MPI's), so its sender is not
//! left waiting.

use super::schedule::{tag, Schedule, Step};
use crate::backend::{MatchSpec, RecvBuf, ReqKey, SendBuf, Task, TaskIo};
use crate::error::{Error, Result};
use crate::types::{Rank, Status, Tag};

/// A schedule and the requests of its current round.
pub(crate) struct Running {
    sched: Schedule,
    /// In-flight requests and, for receives, the length they expect.
    pending: Vec<(ReqKey, Option<usize>)>,
    started: bool,
}

impl Running {
    pub(crate) fn new(sched: Schedule) -> Running {
        Running {
            sched,
            pending: Vec::new(),
            started: false,
        }
    }

    /// Starts the sends and receives of the current round.
    fn start_round(&mut self, io: &mut dyn TaskIo) -> Result<()> {
        let c = &mut self.sched;
        let r = c.cur;
        for i in 0..c.rounds[r].comm.len() {
            match c.rounds[r].comm[i].clone() {
                Step::Send {
                    peer,
                    buf,
                    range,
                    phase,
                } => {
                    let tag = tag(c.seq, phase);
                    let slot = c.peers[peer as usize] as usize;
                    let b = SendBuf::Part(c.bufs[buf].clone(), range);
                    let k = io.isend(slot, peer, c.ctx, c.rank, tag, b)?;
                    self.pending.push((k, None));
                }
                Step::Recv {
                    peer,
                    buf,
                    range,
                    phase,
                } => {
                    let tag = tag(c.seq, phase);
                    let spec = MatchSpec {
                        ctx: c.ctx,
                        src: Some(peer),
                        tag: Some(tag),
                    };
                    let len = range.len();
                    let b = RecvBuf::Part(c.bufs[buf].clone(), range);
                    let k = io.irecv(spec, c.peers.clone(), b, 1);
                    self.pending.push((k, Some(len)));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Takes the results of the finished round; the first error wins.
    fn finish_round(&mut self, io: &mut dyn TaskIo) -> Result<()> {
        let mut err = None;
        for (k, expect) in std::mem::take(&mut self.pending) {
            match io.take(k) {
                Ok(Some(Ok(st))) => {
                    if let Some(n) = expect {
                        if st.len != n && err.is_none() {
                            err = Some(Error::InvalidArgument(format!(
                                "collective count mismatch: rank {} sent {} bytes where {n} were expected",
                                st.source, st.len
                            )));
                        }
                    }
                }
                Ok(Some(Err(Error::Truncated { sent, capacity }))) => {
                    // Another rank sent more than this one expects (the
                    // message is consumed all the same).
                    err.get_or_insert(Error::InvalidArgument(format!(
                        "collective count mismatch: a rank sent {sent} bytes where {capacity} were expected"
                    )));
                }
                Ok(Some(Err(e))) => {
                    err.get_or_insert(e);
                }
                _ => {}
            }
        }
        match err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Task for Running {
    fn advance(&mut self, io: &mut dyn TaskIo) -> (bool, Option<Result<Status>>) {
        let mut moved = false;
        let outcome = loop {
            if !self.started {
                if self.sched.cur == self.sched.rounds.len() {
                    break Ok(());
                }
                let r = self.start_round(io);
                self.started = true;
                moved = true;
                if let Err(e) = r {
                    break Err(e);
                }
                // A kill here lands between a collective's rounds: this
                // rank's sends of the round are out (an eager one whole),
                // its later rounds' never will be.
                crate::inject::protocol_point("coll.round");
            }
            if !self.pending.iter().all(|(k, _)| io.is_done(*k)) {
                return (moved, None);
            }
            if let Err(e) = self.finish_round(io) {
                break Err(e);
            }
            if let Err(e) = self.sched.run_local(self.sched.cur) {
                break Err(e);
            }
            self.sched.cur += 1;
            self.started = false;
            moved = true;
        };
        for (k, _) in std::mem::take(&mut self.pending) {
            io.abandon(k);
        }
        let status = Status {
            source: Rank(self.sched.rank as i32),
            tag: Tag(0),
            len: 0,
        };
        (moved, Some(outcome.map(|()| status)))
    }
}
