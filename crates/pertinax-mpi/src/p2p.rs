//! Point-to-point on MPI: sends that MPI completes in the background
//! (an envelope first when long),
//! receives matched here (a matched probe per unmatched receive, in
//! posting order; see "Mapping" in the crate documentation), their
//! delivery and outcome ([`received`]), and the checks of a source that is
//! gone.
//!
//! A message longer than [`sys::SMALL`] travels as an envelope and a
//! payload ([`sys::SMALL`] says why): a matched envelope is received at
//! once and its payload's receive posted right after it
//! ([`Op::recv_payload`]), into the receive's buffer if it fits, else
//! into a sink. An envelope a probe received to learn the length
//! ([`Mpi::find_message`]) is remembered as [`Taken`]: the next message
//! matched from its source with its tag is its payload.

use std::cell::Cell;

use pertinax_mpi_sys::{self as sys, Code, Kind, Op, RecvData, SendData};

use super::{error_of, recv_error_of, Mpi, Slot};
use crate::backend::{MatchSpec, ReqKey, SendBuf};
use crate::error::{Error, Result};
use crate::types::{Rank, Status, Tag};

/// The outcome of a completed receive.
pub(super) fn received(
    st: sys::Status,
    mut data: RecvData,
    part: Option<(crate::backend::Cell, std::ops::Range<usize>)>,
    elem: usize,
    comm: Option<sys::Comm>,
    src: Option<u32>,
) -> Result<Status> {
    let capacity = match &data {
        RecvData::Lent(b) => b.len(),
        RecvData::Owned(b) => b.len(),
    };
    if st.cancelled != 0 {
        return Err(Error::Cancelled);
    }
    if st.error != 0 {
        let code = sys::Code(st.error);
        if code.kind() == Kind::Truncated {
            // Open MPI's status counts what was sent; the standard
            // leaves it open, so never report less than one byte over.
            return Err(Error::Truncated {
                sent: usize::try_from(st.bytes).unwrap_or(0).max(capacity + 1),
                capacity,
            });
        }
        return Err(recv_error_of(code, comm, src));
    }
    let len = usize::try_from(st.bytes).unwrap_or(0);
    if elem > 1 && len % elem != 0 {
        return Err(Error::LengthNotMultiple { len, elem });
    }
    if let (Some((cell, range)), RecvData::Owned(b)) = (part, &mut data) {
        let n = len.min(range.len());
        let mut s = cell.borrow_mut();
        if let Some(dst) = s.bytes_mut().get_mut(range.start..range.start + n) {
            dst.copy_from_slice(&b[..n]);
        }
    }
    Ok(Status {
        source: Rank(st.source),
        tag: Tag(st.tag),
        len,
    })
}

/// An envelope a probe received: its payload, still in MPI, is the next
/// message from `source` with `tag` on context `ctx`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Taken {
    pub(super) ctx: u32,
    source: i32,
    tag: i32,
}

/// A message matched for a receive, still in MPI's hands: a matched
/// probe's handle, or the payload an envelope announced (the next message
/// from its source with its tag on the communicator).
enum Incoming {
    Matched(sys::Message),
    Payload(sys::Comm, i32, i32),
}

impl Incoming {
    /// Starts receiving it into `data`.
    fn receive(self, data: RecvData) -> std::result::Result<Op<RecvData>, (Code, RecvData)> {
        match self {
            Incoming::Matched(m) => Op::mrecv(data, m),
            Incoming::Payload(comm, source, tag) => Op::recv_payload(data, source, tag, comm),
        }
    }
}

/// Why a receive of `capacity` bytes and `elem`-byte elements refuses a
/// message of `len` bytes, if it does.
fn refusal(len: usize, capacity: usize, elem: usize) -> Option<Error> {
    if len > capacity {
        Some(Error::Truncated {
            sent: len,
            capacity,
        })
    } else if elem > 1 && !len.is_multiple_of(elem) {
        Some(Error::LengthNotMultiple { len, elem })
    } else {
        None
    }
}

impl Mpi {
    /// The MPI communicator of point-to-point context `ctx`, or why there is
    /// none (freed, or the error its creation left).
    pub(super) fn p2p_comm(&self, ctx: u32) -> Result<sys::Comm> {
        self.comm(ctx)
            .map(|(c, _)| c)
            .ok_or_else(|| self.trio(ctx).err().unwrap_or(Error::CommFreed))
    }

    /// A non-blocking send (`sync`: a synchronous one) of `buf` to
    /// `dest_rank` on context `ctx`: its request, done at once with the
    /// error when the send cannot start.
    pub(super) fn start_send(
        &self,
        dest_rank: u32,
        ctx: u32,
        tag: i32,
        buf: SendBuf,
        sync: bool,
    ) -> ReqKey {
        let comm = match self.p2p_comm(ctx) {
            Ok(c) => c,
            Err(e) => return self.done(Err(e)),
        };
        let data = match buf {
            SendBuf::Lent(l) => SendData::Lent(l),
            SendBuf::Part(c, r) => {
                let bytes = c.borrow_mut().bytes().get(r).map(Box::<[u8]>::from);
                SendData::Owned(bytes.unwrap_or_default())
            }
        };
        match self.start_message(data, dest_rank, tag, (comm, ctx), sync) {
            Ok(op) => self.insert(Slot::Send {
                op,
                ctx,
                dest_rank,
                forgotten: false,
            }),
            Err(c) => self.done(Err(error_of(c, Some(comm), Some(dest_rank)))),
        }
    }

    /// Starts sending a point-to-point message: when longer than
    /// [`sys::SMALL`], its envelope first, in a send nobody waits for.
    /// With `sync` (`MPI_Issend`) the message itself, or the payload after
    /// an envelope, is an `MPI_Issend`: this backend receives a message
    /// (`MPI_Improbe` then `MPI_Imrecv`, an envelope's payload at once)
    /// only when a receive here matched it, so it completes only then.
    pub(super) fn start_message(
        &self,
        data: SendData,
        dest_rank: u32,
        tag: i32,
        (comm, ctx): (sys::Comm, u32),
        sync: bool,
    ) -> std::result::Result<Op<SendData>, Code> {
        let len = match &data {
            SendData::Lent(b) => b.len(),
            SendData::Owned(b) => b.len(),
        };
        if len > sys::SMALL {
            let e = SendData::Owned(sys::envelope(len));
            let op = Op::send(e, dest_rank as i32, tag, comm)?;
            self.insert(Slot::Send {
                op,
                ctx,
                dest_rank,
                forgotten: true,
            });
        }
        if sync {
            Op::ssend(data, dest_rank as i32, tag, comm)
        } else {
            Op::send(data, dest_rank as i32, tag, comm)
        }
    }

    /// Sends a copy of `data` in a send MPI completes in the background
    /// (its request forgotten): the data is out of `data` at once.
    pub(super) fn send_copy(
        &self,
        (comm, ctx): (sys::Comm, u32),
        dest_rank: u32,
        tag: i32,
        data: &[u8],
    ) -> Result<()> {
        let op = self
            .start_message(
                SendData::Owned(data.into()),
                dest_rank,
                tag,
                (comm, ctx),
                false,
            )
            .map_err(|c| error_of(c, Some(comm), Some(dest_rank)))?;
        self.insert(Slot::Send {
            op,
            ctx,
            dest_rank,
            forgotten: true,
        });
        Ok(())
    }

    /// The error of an unmatched receive on context `ctx` from `src`
    /// (`None`: any source) because of failed processes, checked on every
    /// 64th call (a failed list costs more than a probe): `ProcFailed` when
    /// `src` failed or, on a collective context, any member did;
    /// `ProcFailedPending` for any source when a failure is not
    /// acknowledged.
    fn dead_source(&self, ctx: u32, src: Option<u32>) -> Option<Error> {
        thread_local! {
            static EMPTY_POLLS: Cell<u32> = const { Cell::new(0) };
        }
        let n = EMPTY_POLLS.with(|c| {
            let n = c.get().wrapping_add(1);
            c.set(n);
            n
        });
        if !n.is_multiple_of(64) {
            return None;
        }
        let t = self.trio(ctx).ok()?;
        let (comm, _) = self.comm(ctx)?;
        let failed = comm.get_failed().ok()?;
        if !failed.is_empty() {
            // Told to the other jobs, which may not know (see `tell`).
            t.failed_pids();
        }
        // A collective's schedule waits for peers that may wait for the
        // dead: on the collective communicator, any failed member fails it,
        // as on the native backend.
        if ctx & 3 == 1 && !failed.is_empty() {
            return Some(Error::ProcFailed {
                ranks: failed.into_iter().map(Rank).collect(),
            });
        }
        match src {
            Some(s) => {
                failed
                    .iter()
                    .any(|&r| u32::try_from(r) == Ok(s))
                    .then(|| Error::ProcFailed {
                        ranks: vec![Rank(s as i32)],
                    })
            }
            None => (failed.len() > t.acked.get()).then(|| Error::ProcFailedPending {
                ranks: failed.into_iter().map(Rank).collect(),
            }),
        }
    }

    /// Matches the unmatched receives in posting order: each asks MPI for
    /// a message (`MPI_Improbe`). A message taken from MPI goes to the
    /// *first* unmatched receive that matches it (it may have arrived after
    /// an earlier receive found nothing: MPI would have given it to that
    /// one) and is received (`MPI_Imrecv`); one that does not fit is
    /// consumed all the same and fails its receive (`Truncated` /
    /// `LengthNotMultiple`). True if any receive matched.
    pub(super) fn match_posted(&self) -> bool {
        if self.posted.borrow().is_empty() {
            return false;
        }
        let order: Vec<u32> = self.posted.borrow().iter().copied().collect();
        let mut moved = false;
        for idx in order {
            let spec = match self.slab.borrow().get(idx as usize).map(|e| &e.1) {
                Some(Slot::Posted { spec, .. }) => *spec,
                _ => continue,
            };
            let Some((comm, _)) = self.comm(spec.ctx) else {
                let err = self.trio(spec.ctx).err().unwrap_or(Error::CommFreed);
                self.settle(idx, Err(err));
                moved = true;
                continue;
            };
            let src = spec.src.map_or_else(sys::any_source, |s| s as i32);
            let tag = spec.tag.unwrap_or_else(sys::any_tag);
            match sys::improbe(src, tag, comm) {
                Ok(None) => {
                    // Open MPI's probe does not fail for a dead source:
                    // look at the failed list now and then.
                    if let Some(err) = self.dead_source(spec.ctx, spec.src) {
                        self.settle(idx, Err(err));
                        moved = true;
                    }
                }
                Ok(Some((msg, st))) => {
                    // The first unmatched receive it matches (at latest
                    // this one).
                    let target = self
                        .posted
                        .borrow()
                        .iter()
                        .copied()
                        .find(|&k| {
                            matches!(
                                self.slab.borrow().get(k as usize).map(|e| &e.1),
                                Some(Slot::Posted { spec: s, .. })
                                    if s.matches(spec.ctx, st.source as u32, st.tag)
                            )
                        })
                        .unwrap_or(idx);
                    let len = usize::try_from(st.bytes).unwrap_or(0);
                    if self.untake(spec.ctx, st.source, st.tag) || len != sys::ENVELOPE {
                        self.deliver(target, Incoming::Matched(msg), len);
                    } else {
                        match sys::mrecv_envelope(msg) {
                            Ok(len) => self.deliver(
                                target,
                                Incoming::Payload(comm, st.source, st.tag),
                                len,
                            ),
                            Err(c) => {
                                self.settle(target, Err(recv_error_of(c, Some(comm), spec.src)))
                            }
                        }
                    }
                    moved = true;
                }
                Err(c) => {
                    self.settle(idx, Err(recv_error_of(c, Some(comm), spec.src)));
                    moved = true;
                }
            }
        }
        moved
    }

    /// Ends the unmatched receive `idx` with `r` (freeing it if it was
    /// forgotten).
    fn settle(&self, idx: u32, r: Result<Status>) {
        let mut slab = self.slab.borrow_mut();
        let Some(e) = slab.get_mut(idx as usize) else {
            return;
        };
        let forgotten = matches!(
            e.1,
            Slot::Posted {
                forgotten: true,
                ..
            }
        );
        e.1 = if forgotten { Slot::Free } else { Slot::Done(r) };
        drop(slab);
        self.unpost(idx, forgotten);
    }

    /// Gives the matched message `m` of `len` bytes to the unmatched
    /// receive `idx`: received if it fits, else consumed into a scratch
    /// buffer (a request nobody waits for) while the receive fails.
    fn deliver(&self, idx: u32, m: Incoming, len: usize) {
        let mut slab = self.slab.borrow_mut();
        let Some(e) = slab.get_mut(idx as usize) else {
            drop(slab);
            self.sink(m, len);
            return;
        };
        let Slot::Posted {
            spec,
            data,
            elem,
            forgotten,
            ..
        } = &e.1
        else {
            drop(slab);
            self.sink(m, len);
            return;
        };
        let (spec, elem, forgotten) = (*spec, *elem, *forgotten);
        let capacity = match data {
            RecvData::Lent(b) => b.len(),
            RecvData::Owned(b) => b.len(),
        };
        if let Some(err) = refusal(len, capacity, elem) {
            drop(slab);
            self.sink(m, len);
            self.settle(idx, Err(err));
            return;
        }
        let Slot::Posted { data, part, .. } = std::mem::replace(&mut e.1, Slot::Free) else {
            return;
        };
        let comm = self.comm(spec.ctx).map(|c| c.0);
        e.1 = match m.receive(data) {
            Ok(op) => Slot::Recv {
                op,
                part,
                elem,
                ctx: spec.ctx,
                src: spec.src,
                forgotten,
            },
            Err(_) if forgotten => Slot::Free,
            Err((c, _)) => Slot::Done(Err(recv_error_of(c, comm, spec.src))),
        };
        let freed = matches!(e.1, Slot::Free);
        drop(slab);
        self.unpost(idx, freed);
    }

    /// Receives matched message `m` of `len` bytes into a scratch buffer
    /// nobody reads (a refused message is consumed, as MPI consumes it).
    fn sink(&self, m: Incoming, len: usize) {
        if let Ok(op) = m.receive(RecvData::Owned(vec![0; len].into())) {
            let slot = Slot::Recv {
                op,
                part: None,
                elem: 1,
                ctx: 0,
                src: None,
                forgotten: true,
            };
            self.insert(slot);
        }
    }

    /// The message a probe for `spec` finds, with its length: an
    /// envelope's is the payload's, so the envelope is received (and
    /// remembered as [`Taken`]; its payload stays in MPI for the receive).
    pub(super) fn find_message(&self, spec: &MatchSpec) -> Option<Status> {
        let (comm, _) = self.comm(spec.ctx)?;
        let src = spec.src.map_or_else(sys::any_source, |s| s as i32);
        let tag = spec.tag.unwrap_or_else(sys::any_tag);
        let st = sys::iprobe(src, tag, comm).ok().flatten()?;
        let mut len = usize::try_from(st.bytes).unwrap_or(0);
        let taken = |t: &Taken| t.ctx == spec.ctx && t.source == st.source && t.tag == st.tag;
        if len == sys::ENVELOPE && !self.taken.borrow().iter().any(taken) {
            // The earliest message from that source with that tag: this one.
            let (msg, _) = sys::improbe(st.source, st.tag, comm).ok().flatten()?;
            len = sys::mrecv_envelope(msg).ok()?;
            self.taken.borrow_mut().push(Taken {
                ctx: spec.ctx,
                source: st.source,
                tag: st.tag,
            });
            self.stir();
        }
        Some(Status {
            source: Rank(st.source),
            tag: Tag(st.tag),
            len,
        })
    }

    /// Whether a message just matched from `source` with `tag` on `ctx`
    /// is the payload of an envelope a probe received (then forgotten).
    fn untake(&self, ctx: u32, source: i32, tag: i32) -> bool {
        let mut taken = self.taken.borrow_mut();
        match taken
            .iter()
            .position(|t| t.ctx == ctx && t.source == source && t.tag == tag)
        {
            Some(i) => {
                taken.remove(i);
                true
            }
            None => false,
        }
    }

    /// Removes a receive from the unmatched ones (and its slot, if it was
    /// forgotten and is now free).
    pub(super) fn unpost(&self, idx: u32, freed: bool) {
        self.posted.borrow_mut().retain(|&i| i != idx);
        if freed {
            self.free.borrow_mut().push(idx);
        }
    }

    /// The slot of a live key, if it is one.
    pub(super) fn live(&self, k: ReqKey) -> bool {
        self.slab
            .borrow()
            .get(k.idx as usize)
            .is_some_and(|e| e.0 == k.gen && !matches!(e.1, Slot::Free))
    }
}
