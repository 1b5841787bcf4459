//! Matching state and requests: posted receives, the unexpected queue,
//! the request slab, and the handling of every arriving record.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;

use pertinax_os::cma;
use pertinax_os::segment::Segment;
use pertinax_wire::msg::{Kind, Meta, Rts};

use super::outbox::Outbox;
use std::rc::Rc;

use super::{control, Body, RecvReq, ReqKey, ReqSlot, ReqState, Unexp};
use crate::backend::{Cell, MatchSpec, Peers, RecvBuf, Store};
use crate::error::{Error, Result};
use crate::types::{Rank, Status, Tag};

/// Matching state and requests.
pub(super) struct Matcher {
    pub(super) seg: Segment,
    pub(super) reqs: Vec<ReqSlot>,
    pub(super) free: Vec<u32>,
    pub(super) posted: Vec<ReqKey>,
    pub(super) unexpected: VecDeque<Unexp>,
    /// Send requests streaming fragments (no cross-memory attach).
    pub(super) streams: Vec<ReqKey>,
    pub(super) cma: bool,
    /// A refusal (FIN with a flag) arrived: the doom rules must run.
    pub(super) nacked: bool,
    /// Receives taking refused rendezvous messages, for the engine to free
    /// once complete.
    pub(super) sinks: Vec<ReqKey>,
}

impl Matcher {
    pub(super) fn alloc(&mut self, st: ReqState) -> ReqKey {
        if let Some(idx) = self.free.pop() {
            let s = &mut self.reqs[idx as usize];
            s.st = st;
            ReqKey { idx, gen: s.gen }
        } else {
            self.reqs.push(ReqSlot { gen: 1, st });
            ReqKey {
                idx: (self.reqs.len() - 1) as u32,
                gen: 1,
            }
        }
    }

    pub(super) fn get(&mut self, k: ReqKey) -> Option<&mut ReqState> {
        let s = self.reqs.get_mut(k.idx as usize)?;
        (s.gen == k.gen).then_some(&mut s.st)
    }

    /// Completes a request; dropping its old state returns the lent buffer.
    pub(super) fn complete(&mut self, k: ReqKey, r: Result<Status>) {
        if let Some(st) = self.get(k) {
            if !matches!(
                st,
                ReqState::Free | ReqState::Done(_) | ReqState::Task(_) | ReqState::Busy
            ) {
                *st = ReqState::Done(r);
            }
        }
    }

    /// Checks a message against a receive buffer.
    pub(super) fn fits(len: usize, cap: usize, elem: usize) -> Result<()> {
        if len > cap {
            return Err(Error::Truncated {
                sent: len,
                capacity: cap,
            });
        }
        if elem > 1 && !len.is_multiple_of(elem) {
            return Err(Error::LengthNotMultiple { len, elem });
        }
        Ok(())
    }

    /// Delivers unexpected message `i` to receive `key` (not posted). A
    /// message that does not fit is consumed all the same (a rendezvous is
    /// taken into a scratch buffer, so that its sender completes) and the
    /// receive fails with `Truncated` / `LengthNotMultiple`, as MPI's
    /// `MPI_ERR_TRUNCATE` does.
    pub(super) fn deliver_unexpected(&mut self, out: &mut Outbox, key: ReqKey, i: usize) {
        let Some(ReqState::Recv(r)) = self.get(key) else {
            return;
        };
        let (cap, elem, peers) = (r.buf.len(), r.elem, r.peers.clone());
        let Some(u) = self.unexpected.remove(i) else {
            return;
        };
        let status = u.status();
        if let Err(e) = Self::fits(u.len, cap, elem) {
            self.complete(key, Err(e));
            if let Body::Rts { addr, cookie } = u.body {
                let spec = MatchSpec {
                    ctx: u.ctx,
                    src: Some(u.src),
                    tag: Some(u.tag),
                };
                self.sink(out, (spec, peers), u.slot, status, (addr, cookie));
            }
            return;
        }
        match u.body {
            Body::Eager(data) => {
                if let Some(ReqState::Recv(r)) = self.get(key) {
                    r.buf.with_mut(|b| b[..data.len()].copy_from_slice(&data));
                }
                self.complete(key, Ok(status));
            }
            Body::Rts { addr, cookie } => self.pull(out, key, u.slot, status, addr, cookie),
        }
    }

    /// Takes a refused rendezvous message into a scratch buffer nobody
    /// reads: a receive the engine frees once it completes.
    /// It keeps the refused receive's match and peers, so the doom rules
    /// fail it if the sender dies mid-message.
    fn sink(
        &mut self,
        out: &mut Outbox,
        (spec, peers): (MatchSpec, Peers),
        from: usize,
        status: Status,
        (addr, cookie): (u64, u64),
    ) {
        let len = status.len;
        let cell: Cell = Rc::new(std::cell::RefCell::new(Store::scratch(len)));
        let key = self.alloc(ReqState::Recv(RecvReq {
            spec,
            peers,
            buf: RecvBuf::Part(cell, 0..len),
            elem: 1,
            stream: None,
        }));
        self.sinks.push(key);
        self.pull(out, key, from, status, addr, cookie);
    }

    /// Fetches a rendezvous message for receive `key` (already matched).
    pub(super) fn pull(
        &mut self,
        out: &mut Outbox,
        key: ReqKey,
        from: usize,
        status: Status,
        addr: u64,
        cookie: u64,
    ) {
        if self.cma && status.len > 0 {
            let pid = self.seg.proc_block(from).pid.load(Ordering::Acquire);
            crate::inject::protocol_point("p2p.pull");
            let Some(ReqState::Recv(r)) = self.get(key) else {
                return;
            };
            match r
                .buf
                .with_mut(|b| cma::read_from(pid, addr, &mut b[..status.len]))
            {
                Ok(()) => {
                    self.complete(key, Ok(status));
                    out.send(from, &control(Kind::Fin, cookie), &[]);
                    return;
                }
                // EPERM or ENOSYS: the kernel forbids it; stream instead.
                Err(e) if matches!(e.raw_os_error(), Some(1) | Some(38)) => self.cma = false,
                Err(_) => {
                    self.complete(
                        key,
                        Err(Error::ProcFailed {
                            ranks: vec![status.source],
                        }),
                    );
                    return;
                }
            }
        }
        if status.len == 0 {
            self.complete(key, Ok(status));
            out.send(from, &control(Kind::Fin, cookie), &[]);
            return;
        }
        if let Some(ReqState::Recv(r)) = self.get(key) {
            r.stream = Some((status, 0));
        }
        out.send(
            from,
            &control(Kind::Cts, cookie),
            &key.cookie().to_le_bytes(),
        );
        crate::inject::protocol_point("p2p.cts");
    }

    /// Handles one record that arrived from slot `from`.
    pub(super) fn on_record(&mut self, out: &mut Outbox, from: usize, meta: Meta, payload: &[u8]) {
        match Kind::from_u8(meta.kind) {
            Some(Kind::Eager) => {
                let hit = self.posted.iter().position(|&k| {
                    matches!(&self.reqs[k.idx as usize].st, ReqState::Recv(r) if r.spec.matches(meta.ctx, meta.src, meta.tag))
                });
                let status = Status {
                    source: Rank(meta.src as i32),
                    tag: Tag(meta.tag),
                    len: payload.len(),
                };
                if let Some(i) = hit {
                    let key = self.posted.remove(i);
                    let Some(ReqState::Recv(r)) = self.get(key) else {
                        return;
                    };
                    // A message that does not fit is consumed all the same.
                    let r = Self::fits(payload.len(), r.buf.len(), r.elem).map(|()| {
                        r.buf
                            .with_mut(|b| b[..payload.len()].copy_from_slice(payload));
                        status
                    });
                    self.complete(key, r);
                    return;
                }
                self.unexpected.push_back(Unexp {
                    ctx: meta.ctx,
                    src: meta.src,
                    tag: meta.tag,
                    slot: from,
                    len: payload.len(),
                    body: Body::Eager(payload.to_vec()),
                });
            }
            Some(Kind::Rts) => {
                let Ok(rts) = bytemuck::try_pod_read_unaligned::<Rts>(payload) else {
                    return;
                };
                let u = Unexp {
                    ctx: meta.ctx,
                    src: meta.src,
                    tag: meta.tag,
                    slot: from,
                    len: meta.len as usize,
                    body: Body::Rts {
                        addr: rts.addr,
                        cookie: rts.cookie,
                    },
                };
                let hit = self.posted.iter().position(|&k| {
                    matches!(&self.reqs[k.idx as usize].st, ReqState::Recv(r) if r.spec.matches(meta.ctx, meta.src, meta.tag))
                });
                self.unexpected.push_back(u);
                if let Some(i) = hit {
                    let key = self.posted.remove(i);
                    let last = self.unexpected.len() - 1;
                    self.deliver_unexpected(out, key, last);
                }
            }
            Some(Kind::Fin) => {
                let key = ReqKey::from_cookie(meta.len);
                if let Some(ReqState::Send(s)) = self.get(key) {
                    if meta.flags != 0 {
                        // Refused: the receiver never reads the buffer.
                        s.nacked = true;
                        self.nacked = true;
                        return;
                    }
                    let st = s.status;
                    self.complete(key, Ok(st));
                }
            }
            Some(Kind::Cts) => {
                let key = ReqKey::from_cookie(meta.len);
                let Ok(rc) = <[u8; 8]>::try_from(payload) else {
                    return;
                };
                if let Some(ReqState::Send(s)) = self.get(key) {
                    s.stream = Some((u64::from_le_bytes(rc), 0));
                    self.streams.push(key);
                }
            }
            Some(Kind::Frag) => {
                let key = ReqKey::from_cookie(meta.len);
                let Some(ReqState::Recv(r)) = self.get(key) else {
                    return;
                };
                let Some((status, got)) = r.stream else {
                    return;
                };
                let end = (got + payload.len()).min(status.len);
                r.buf
                    .with_mut(|b| b[got..end].copy_from_slice(&payload[..end - got]));
                r.stream = Some((status, end));
                if end == status.len {
                    self.complete(key, Ok(status));
                } else {
                    crate::inject::protocol_point("p2p.frag.recv");
                }
            }
            None => {}
        }
    }

    /// Sends fragments of streaming sends while the rings have room.
    pub(super) fn pump_streams(&mut self, out: &mut Outbox, frag: usize) -> bool {
        let mut moved = false;
        let mut i = 0;
        while i < self.streams.len() {
            let key = self.streams[i];
            let Some(ReqState::Send(s)) = self.get(key) else {
                self.streams.swap_remove(i);
                continue;
            };
            let Some((rc, mut sent)) = s.stream else {
                self.streams.swap_remove(i);
                continue;
            };
            let dest = s.dest;
            let meta = control(Kind::Frag, rc);
            let total = s.buf.len();
            let before = sent;
            s.buf.with(|data| {
                while sent < data.len() && out.backlog[dest].is_empty() {
                    let n = frag.min(data.len() - sent);
                    if !out.out[dest].try_push(&meta, &data[sent..sent + n]) {
                        break;
                    }
                    sent += n;
                    crate::inject::protocol_point("p2p.frag");
                }
            });
            if sent > before {
                moved = true;
                out.wake(dest);
            }
            s.stream = Some((rc, sent));
            if sent == total {
                let st = s.status;
                self.complete(key, Ok(st));
                self.streams.swap_remove(i);
            } else {
                i += 1;
            }
        }
        moved
    }
}
