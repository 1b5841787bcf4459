//! The backend's agreements, non-blocking: an agreement is started by
//! `contribute` and advanced by `poll_agreement` and by every progress
//! round of the backend (a member may contribute and then wait for
//! something else: its step that starts `MPIX_Comm_iagree` must still
//! come), so `iagree` returns at once and a rank waiting for one keeps
//! progressing its other requests. While one runs, the blocking fast
//! paths stay off (`Mpi::quiet`). The running agreements of a
//! communicator that is freed are let go, never advanced again.
//!
//! Every member sends its record (the kind of call and four words) to
//! every other on the agreement's communicator; once every receive has
//! ended (a record, or the sender's failure), the members agree
//! (`MPIX_Comm_iagree`, a fault-tolerant AND, 32 members per round) on the
//! set every survivor heard from. Members in that set read `Contributed`
//! (every survivor has their records), the others `Failed`: the same at
//! every member.

use pertinax_mpi_sys::{self as sys, Kind, Op, RecvData, SendData};

use super::super::Record;
use super::Trio;

/// Records exchanged by an agreement: kind, then the four words.
pub(super) const REC_WORDS: usize = 5;

/// One agreement of this process.
#[derive(Debug)]
pub(super) enum Agreement {
    /// Decided: one record per member (by member: group, then remote group).
    Done(Vec<Record>),
    /// Under way.
    Running(Box<Running>),
}

/// An agreement under way.
#[derive(Debug)]
pub(super) struct Running {
    comm: sys::Comm,
    /// Member (group, then remote group) → index in the agreement's
    /// communicator.
    order: Vec<u32>,
    sends: Vec<Op<SendData>>,
    recvs: Vec<(usize, Op<RecvData>)>,
    heard: Vec<Option<[u32; REC_WORDS]>>,
    /// The round (32 members each) whose `MPIX_Comm_iagree` runs, and it.
    round: usize,
    agreeing: Option<sys::IAgree>,
    /// Decided records so far, by index in the agreement's communicator.
    out: Vec<Record>,
}

impl Agreement {
    /// Starts agreement `seq` on `t` with this member's record `mine`.
    pub(super) fn start(t: &Trio, seq: u32, mine: [u32; REC_WORDS]) -> Agreement {
        let n = t.all.len();
        let comm = t.comms[3];
        let tag = (seq & 0x3fff_ffff) as i32;
        let me = t.me_all as usize;
        let bytes: Vec<u8> = mine.iter().flat_map(|w| w.to_le_bytes()).collect();
        let mut sends = Vec::new();
        let mut recvs = Vec::new();
        for r in (0..n).filter(|&r| r != me) {
            // A send or receive that cannot start counts as not heard.
            if let Ok(op) = Op::send(
                SendData::Owned(bytes.clone().into_boxed_slice()),
                r as i32,
                tag,
                comm,
            ) {
                sends.push(op);
            }
            let buf = RecvData::Owned(vec![0u8; REC_WORDS * 4].into_boxed_slice());
            if let Ok(op) = Op::recv(buf, r as i32, tag, comm) {
                recvs.push((r, op));
            }
        }
        let mut heard = vec![None; n];
        if let Some(h) = heard.get_mut(me) {
            *h = Some(mine);
        }
        Agreement::Running(Box::new(Running {
            comm,
            order: t.order.clone(),
            sends,
            recvs,
            heard,
            round: 0,
            agreeing: None,
            out: Vec::with_capacity(n),
        }))
    }

    /// Whether it is still under way.
    pub(super) fn running(&self) -> bool {
        matches!(self, Agreement::Running(_))
    }

    /// Advances the agreement; its records once decided.
    pub(super) fn poll(&mut self) -> Option<&[Record]> {
        if let Agreement::Running(r) = self {
            let recs = r.advance()?;
            *self = Agreement::Done(recs);
        }
        match self {
            Agreement::Done(recs) => Some(recs),
            Agreement::Running(_) => None,
        }
    }
}

impl Running {
    /// One step: `Some` with the records by member once decided.
    fn advance(&mut self) -> Option<Vec<Record>> {
        let heard = &mut self.heard;
        self.recvs.retain_mut(|(r, op)| match op.test() {
            Ok(None) => true,
            Ok(Some((st, RecvData::Owned(b)))) => {
                if st.error == 0 && st.cancelled == 0 && b.len() == REC_WORDS * 4 {
                    let mut w = [0u32; REC_WORDS];
                    for (i, c) in b.chunks_exact(4).enumerate() {
                        w[i] = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                    }
                    heard[*r] = Some(w);
                }
                false
            }
            // A lent buffer (never here) or a failed sender: not heard.
            Ok(Some(_)) | Err(_) => false,
        });
        self.sends.retain_mut(|op| matches!(op.test(), Ok(None)));
        if !self.recvs.is_empty() || !self.sends.is_empty() {
            return None;
        }
        let n = self.heard.len();
        while self.round < n.div_ceil(32) {
            let base = self.round * 32;
            let agreeing = match &mut self.agreeing {
                Some(a) => a,
                None => {
                    let mut mask: u32 = 0;
                    for i in 0..32 {
                        if self.heard.get(base + i).is_some_and(Option::is_some) {
                            mask |= 1 << i;
                        }
                    }
                    match self.comm.iagree(mask as i32) {
                        Ok(a) => self.agreeing.insert(a),
                        // Not started: nobody in this round is agreed on.
                        Err(_) => {
                            self.decide_round(0);
                            continue;
                        }
                    }
                }
            };
            let agreed = match agreeing.test()? {
                Ok(f) => f as u32,
                Err((c, f)) if c.kind() == Kind::ProcFailed => f as u32,
                Err(_) => 0,
            };
            self.agreeing = None;
            self.decide_round(agreed);
        }
        // By member (group, then remote group).
        Some(
            self.order
                .iter()
                .map(|&r| self.out.get(r as usize).copied().unwrap_or(Record::Failed))
                .collect(),
        )
    }

    /// Records the current round's members from the agreed mask.
    fn decide_round(&mut self, agreed: u32) {
        let base = self.round * 32;
        for i in 0..32 {
            let Some(h) = self.heard.get(base + i) else {
                break;
            };
            self.out.push(match h {
                Some(w) if agreed & (1 << i) != 0 => Record::Contributed {
                    kind: w[0] as u8,
                    words: [w[1], w[2], w[3], w[4]],
                },
                _ => Record::Failed,
            });
        }
        self.round += 1;
    }
}
