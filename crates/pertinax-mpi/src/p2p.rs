//! Point-to-point on MPI: sends that MPI completes in the background,
//! receives matched here (a matched probe per unmatched receive, in
//! posting order; see "Mapping" in the crate documentation), their
//! delivery and outcome ([`received`]), and the checks of a source that is
//! gone.

use std::cell::Cell;

use pertinax_mpi_sys::{self as sys, Kind, Op, RecvData, SendData};

use super::{error_of, recv_error_of, Mpi, Slot};
use crate::backend::ReqKey;
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

impl Mpi {
    /// The MPI communicator of point-to-point context `ctx`, or why there is
    /// none (freed, or the error its creation left).
    pub(super) fn p2p_comm(&self, ctx: u32) -> Result<sys::Comm> {
        self.comm(ctx)
            .map(|(c, _)| c)
            .ok_or_else(|| self.trio(ctx).err().unwrap_or(Error::CommFreed))
    }

    /// Sends a copy of `data` in a send MPI completes in the background
    /// (its request forgotten): the data is out of `data` at once.
    pub(super) fn send_copy(
        &self,
        comm: sys::Comm,
        dest_rank: u32,
        tag: i32,
        data: &[u8],
    ) -> Result<()> {
        let op = Op::send(SendData::Owned(data.into()), dest_rank as i32, tag, comm)
            .map_err(|c| error_of(c, Some(comm), Some(dest_rank)))?;
        self.insert(Slot::Send {
            op,
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
                    self.deliver(target, msg, st);
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

    /// Gives matched message `msg` to the unmatched receive `idx`:
    /// received if it fits, else consumed into a scratch buffer (a request
    /// nobody waits for) while the receive fails.
    fn deliver(&self, idx: u32, msg: sys::Message, st: sys::Status) {
        let mut slab = self.slab.borrow_mut();
        let Some(e) = slab.get_mut(idx as usize) else {
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
            self.sink(msg, st);
            return;
        };
        let (spec, elem, forgotten) = (*spec, *elem, *forgotten);
        let len = usize::try_from(st.bytes).unwrap_or(0);
        let capacity = match data {
            RecvData::Lent(b) => b.len(),
            RecvData::Owned(b) => b.len(),
        };
        let refusal = if len > capacity {
            Some(Error::Truncated {
                sent: len,
                capacity,
            })
        } else if elem > 1 && len % elem != 0 {
            Some(Error::LengthNotMultiple { len, elem })
        } else {
            None
        };
        if let Some(err) = refusal {
            drop(slab);
            self.sink(msg, st);
            self.settle(idx, Err(err));
            return;
        }
        let Slot::Posted { data, part, .. } = std::mem::replace(&mut e.1, Slot::Free) else {
            return;
        };
        let comm = self.comm(spec.ctx).map(|c| c.0);
        e.1 = match Op::mrecv(data, msg) {
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

    /// Receives matched message `msg` into a scratch buffer nobody reads
    /// (a refused message is consumed, as MPI consumes it).
    fn sink(&self, msg: sys::Message, st: sys::Status) {
        let len = usize::try_from(st.bytes).unwrap_or(0);
        if let Ok(op) = Op::mrecv(RecvData::Owned(vec![0; len].into()), msg) {
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
