//! Collective schedules: rounds of point-to-point steps and local steps.
//!
//! Every collective is compiled into a [`Schedule`] (the approach of
//! libNBC): a list of rounds, each a set of sends and receives that run
//! concurrently, followed by local steps (combine, copy) that run in order
//! once the round's messages are done. The backend advances every active
//! schedule on each round of progress, so a non-blocking collective moves
//! while the program waits on anything else; a blocking collective is a
//! schedule plus a wait.
//!
//! Buffers are shared cells: scratch owned by the schedule, or the caller's
//! lent buffers. Messages travel on the communicator's collective context
//! with tags that carry the collective's sequence number and the round, so
//! overlapping collectives on one communicator never match each other's
//! messages.

use std::cell::RefCell;
use std::ops::Range;
use std::rc::Rc;

use crate::backend::{Cell, Peers, Store};
use crate::error::{Error, Result};
use crate::op::ErasedOp;

/// One step of a round.
#[derive(Debug, Clone)]
pub(crate) enum Step {
    /// Send `range` of buffer `buf` to comm rank `peer`, tagged with
    /// `phase`.
    Send {
        peer: u32,
        buf: usize,
        range: Range<usize>,
        phase: u32,
    },
    /// Receive exactly `range.len()` bytes from `peer` into `range` of
    /// `buf`, tagged with `phase`.
    Recv {
        peer: u32,
        buf: usize,
        range: Range<usize>,
        phase: u32,
    },
    /// `acc = acc ⊕ rhs` (or `rhs ⊕ acc` when `acc_is_left` is false).
    Combine {
        acc: usize,
        acc_range: Range<usize>,
        rhs: usize,
        rhs_range: Range<usize>,
        acc_is_left: bool,
    },
    /// Copy `src_range` of `src` to `dst_range` of `dst`.
    Copy {
        src: usize,
        src_range: Range<usize>,
        dst: usize,
        dst_range: Range<usize>,
    },
}

/// Messages of one round, then local steps. `phase` numbers the round's
/// messages: sender and receiver use the same phase for the same message,
/// whatever else each of them does before.
#[derive(Debug, Default, Clone)]
pub(crate) struct Round {
    pub phase: u32,
    pub comm: Vec<Step>,
    pub local: Vec<Step>,
}

/// A compiled collective.
#[derive(Debug)]
pub(crate) struct Schedule {
    pub ctx: u32,
    pub peers: Peers,
    pub rank: u32,
    pub seq: u32,
    pub bufs: Vec<Cell>,
    pub op: Option<ErasedOp>,
    pub rounds: Vec<Round>,
    /// Next round to start.
    pub cur: usize,
}

/// Builds a schedule round by round.
#[derive(Debug)]
pub(crate) struct Builder {
    pub rank: u32,
    pub size: u32,
    bufs: Vec<Cell>,
    rounds: Vec<Round>,
    op: Option<ErasedOp>,
}

impl Builder {
    pub fn new(rank: u32, size: u32) -> Builder {
        Builder {
            rank,
            size,
            bufs: Vec::new(),
            rounds: Vec::new(),
            op: None,
        }
    }

    /// Adds a buffer; returns its index.
    pub fn buf(&mut self, s: Store) -> usize {
        self.bufs.push(Rc::new(RefCell::new(s)));
        self.bufs.len() - 1
    }

    /// Adds zeroed scratch of `len` bytes.
    pub fn scratch(&mut self, len: usize) -> usize {
        self.buf(Store::scratch(len))
    }

    pub fn set_op(&mut self, op: ErasedOp) {
        self.op = Some(op);
    }

    /// Starts a new round whose messages belong to `phase`.
    pub fn round(&mut self, phase: u32) {
        self.rounds.push(Round {
            phase,
            ..Round::default()
        });
    }

    /// The current round (a new one, phase 0, if there is none).
    fn last(&mut self) -> &mut Round {
        if self.rounds.is_empty() {
            self.rounds.push(Round::default());
        }
        let n = self.rounds.len();
        &mut self.rounds[n - 1]
    }

    /// A send in the current round, tagged with the round's phase.
    pub fn send(&mut self, peer: u32, buf: usize, range: Range<usize>) {
        let phase = self.last().phase;
        self.send_phase(peer, buf, range, phase);
    }

    /// A receive in the current round, tagged with the round's phase.
    pub fn recv(&mut self, peer: u32, buf: usize, range: Range<usize>) {
        let phase = self.last().phase;
        self.recv_phase(peer, buf, range, phase);
    }

    /// A send in the current round with its own phase.
    pub fn send_phase(&mut self, peer: u32, buf: usize, range: Range<usize>, phase: u32) {
        self.last().comm.push(Step::Send {
            peer,
            buf,
            range,
            phase,
        });
    }

    /// A receive in the current round with its own phase.
    pub fn recv_phase(&mut self, peer: u32, buf: usize, range: Range<usize>, phase: u32) {
        self.last().comm.push(Step::Recv {
            peer,
            buf,
            range,
            phase,
        });
    }

    pub fn combine(
        &mut self,
        acc: usize,
        acc_range: Range<usize>,
        rhs: usize,
        rhs_range: Range<usize>,
        acc_is_left: bool,
    ) {
        self.last().local.push(Step::Combine {
            acc,
            acc_range,
            rhs,
            rhs_range,
            acc_is_left,
        });
    }

    pub fn copy(
        &mut self,
        src: usize,
        src_range: Range<usize>,
        dst: usize,
        dst_range: Range<usize>,
    ) {
        if src_range.is_empty() {
            return;
        }
        self.last().local.push(Step::Copy {
            src,
            src_range,
            dst,
            dst_range,
        });
    }

    pub fn finish(mut self, ctx: u32, peers: Peers, seq: u32) -> Schedule {
        self.rounds
            .retain(|r| !r.comm.is_empty() || !r.local.is_empty());
        Schedule {
            ctx,
            peers,
            rank: self.rank,
            seq,
            bufs: self.bufs,
            op: self.op,
            rounds: self.rounds,
            cur: 0,
        }
    }
}

/// The tag of phase `phase` of collective number `seq`.
pub(crate) fn tag(seq: u32, phase: u32) -> i32 {
    (((seq & 0x3_FFFF) << 12) | (phase & 0xFFF)) as i32
}

impl Schedule {
    /// Runs the local steps of round `i`.
    pub fn run_local(&self, i: usize) -> Result<()> {
        for step in &self.rounds[i].local {
            match step {
                Step::Combine {
                    acc,
                    acc_range,
                    rhs,
                    rhs_range,
                    acc_is_left,
                } => {
                    let op = self.op.as_ref().ok_or_else(|| {
                        Error::InvalidArgument("combine step without an operation".into())
                    })?;
                    if acc == rhs {
                        let mut b = self.bufs[*acc].borrow_mut();
                        let bytes = b.bytes_mut();
                        let (a, r) = disjoint(bytes, acc_range.clone(), rhs_range.clone())?;
                        op.combine_bytes(a, r, *acc_is_left)?;
                    } else {
                        let mut a = self.bufs[*acc].borrow_mut();
                        let mut r = self.bufs[*rhs].borrow_mut();
                        op.combine_bytes(
                            &mut a.bytes_mut()[acc_range.clone()],
                            &r.bytes()[rhs_range.clone()],
                            *acc_is_left,
                        )?;
                    }
                }
                Step::Copy {
                    src,
                    src_range,
                    dst,
                    dst_range,
                } => {
                    if src == dst {
                        let mut b = self.bufs[*src].borrow_mut();
                        b.bytes_mut()
                            .copy_within(src_range.clone(), dst_range.start);
                    } else {
                        let mut s = self.bufs[*src].borrow_mut();
                        let mut d = self.bufs[*dst].borrow_mut();
                        d.bytes_mut()[dst_range.clone()]
                            .copy_from_slice(&s.bytes()[src_range.clone()]);
                    }
                }
                Step::Send { .. } | Step::Recv { .. } => {}
            }
        }
        Ok(())
    }
}

/// Two disjoint ranges of one slice, the first mutable.
fn disjoint(b: &mut [u8], a: Range<usize>, r: Range<usize>) -> Result<(&mut [u8], &[u8])> {
    if a.end <= r.start {
        let (lo, hi) = b.split_at_mut(r.start);
        Ok((&mut lo[a], &hi[..r.len()]))
    } else if r.end <= a.start {
        let (lo, hi) = b.split_at_mut(a.start);
        Ok((&mut hi[..a.len()], &lo[r]))
    } else {
        Err(Error::InvalidArgument("overlapping combine ranges".into()))
    }
}
