//! The engine's receiving side: posting a receive (against the unexpected
//! queue first), the blocking receive that takes no request
//! ([`Engine::recv_direct`]), and looking for a message without taking it.

use std::rc::Rc;

use pertinax_wire::msg::{Kind, Meta};

use super::matcher::Matcher;
use super::{Body, Engine, RecvReq, ReqState, Unexp};
use crate::backend::{MatchSpec, Peers, RecvBuf, ReqKey};
use crate::error::{Error, Result};
use crate::types::{Rank, Status, Tag};
use crate::wait::{Backoff, Step};

/// The peers a posted receive matches among.
fn peers_of(m: &Matcher, key: ReqKey) -> Peers {
    match m.reqs.get(key.idx as usize).map(|s| &s.st) {
        Some(ReqState::Recv(r)) => r.peers.clone(),
        _ => Rc::from([]),
    }
}

impl Engine {
    /// Posts a receive into a lent buffer of `elem`-byte elements.
    pub fn irecv(&mut self, spec: MatchSpec, peers: Peers, buf: RecvBuf, elem: usize) -> ReqKey {
        // A failure announced while this process was busy dooms the
        // receive at once (below) rather than at the next progress round.
        self.poll_events();
        let key = self.m.alloc(ReqState::Recv(RecvReq {
            spec,
            peers,
            buf,
            elem,
            stream: None,
        }));
        if let Some(i) = self
            .m
            .unexpected
            .iter()
            .position(|u| spec.matches(u.ctx, u.src, u.tag))
        {
            let u = &self.m.unexpected[i];
            if matches!(u.body, Body::Rts { .. }) && self.gone[u.slot] {
                // A rendezvous whose sender is gone: its data went with
                // it (a stream would wait for fragments forever, a single
                // copy would read a dead address space). The receive
                // consumes the announcement and fails, as the progress
                // round that learned of the death failed every receive
                // already streaming from it.
                let src = u.src;
                self.m.unexpected.remove(i);
                self.m.complete(
                    key,
                    Err(Error::ProcFailed {
                        ranks: vec![Rank(src as i32)],
                    }),
                );
            } else {
                self.m.deliver_unexpected(&mut self.outbox, key, i);
            }
        } else {
            self.m.posted.push(key);
            if let Some(e) = self.doom_match(spec.ctx, spec.src, &peers_of(&self.m, key)) {
                self.m.posted.retain(|&k| k != key);
                self.m.complete(key, Err(e));
            }
        }
        key
    }

    /// A blocking receive into `buf` without a request, when nothing else
    /// is pending here: no posted receive (which could claim the message
    /// first), no schedule, stream or discard, no ended peer or revoked
    /// communicator (`trouble`: the doom rules), and no queued message that
    /// matches. It progresses as [`Engine::progress`] does, but an eager
    /// record that matches and fits is copied from the ring straight into
    /// `buf`. `None` hands the receive to the general path (the request,
    /// matching and doom rules) in the state a progress round leaves: when
    /// any of those conditions stops holding, or a matching record is not
    /// one this path takes (a rendezvous, or too long: it is queued as
    /// unexpected by the usual handling, so the general path finds it).
    pub fn recv_direct(
        &mut self,
        spec: &MatchSpec,
        buf: &mut [u8],
        elem: usize,
    ) -> Option<Result<Status>> {
        let quiet = |e: &Engine| {
            !e.trouble
                && e.m.posted.is_empty()
                && e.colls.is_empty()
                && e.discards.is_empty()
                && e.m.sinks.is_empty()
                && e.m.streams.is_empty()
                && !e.m.nacked
        };
        self.poll_events();
        if !quiet(self)
            || self
                .m
                .unexpected
                .iter()
                .any(|u| spec.matches(u.ctx, u.src, u.tag))
        {
            return None;
        }
        let mut b = Backoff::default();
        loop {
            if self.beat_in_progress {
                self.beat();
            }
            let mut moved = self.outbox.flush();
            for s in 0..self.poll_upto {
                while let Some((meta, payload)) = self.inb[s].peek::<Meta>() {
                    let wanted = spec.matches(meta.ctx, meta.src, meta.tag);
                    if wanted
                        && meta.kind == Kind::Eager as u8
                        && Matcher::fits(payload.len(), buf.len(), elem).is_ok()
                    {
                        let len = payload.len();
                        buf[..len].copy_from_slice(payload);
                        self.inb[s].pop();
                        return Some(Ok(Status {
                            source: Rank(meta.src as i32),
                            tag: Tag(meta.tag),
                            len,
                        }));
                    }
                    self.m.on_record(&mut self.outbox, s, meta, payload);
                    self.inb[s].pop();
                    if wanted || !quiet(self) {
                        return None;
                    }
                    moved = true;
                }
            }
            if self.poll_events() && !quiet(self) {
                return None;
            }
            if moved {
                b.reset();
                continue;
            }
            // While spinning, poll again at once: the record that ends the
            // wait arrives mid-pause otherwise, and waits for the pause.
            let step = b.next(&self.policy);
            if step != Step::Spin {
                self.idle_step(step);
            }
        }
    }

    /// A matching message already here, without receiving it.
    pub fn find(&self, spec: &MatchSpec) -> Option<Status> {
        self.m
            .unexpected
            .iter()
            .find(|u| spec.matches(u.ctx, u.src, u.tag))
            .map(Unexp::status)
    }

    /// Why a probe for `spec` on `peers` can never succeed, if so.
    pub fn probe_doomed(&self, spec: &MatchSpec, peers: &[u32]) -> Option<Error> {
        self.doom_match(spec.ctx, spec.src, peers)
    }
}
