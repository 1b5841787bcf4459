//! The engine's sending side: eager records, buffered sends, and the
//! rendezvous announcement (RTS) of larger messages and of synchronous
//! sends, with the checks of a
//! destination that is gone and the cap on the backlog of full rings.

use std::rc::Rc;

use pertinax_wire::msg::{Kind, Meta, Rts};

use super::{Engine, ReqState, SendReq};
use crate::backend::{Cell, ReqKey, SendBuf, Store};
use crate::error::Result;
use crate::types::{Rank, Status, Tag};

/// Largest backlog a blocking send lets build up before it waits.
const BACKLOG_CAP: usize = 8 << 20;

/// Metadata of a data record.
fn data_meta(kind: Kind, ctx: u32, src: u32, tag: i32, len: usize) -> Meta {
    Meta {
        kind: kind as u8,
        flags: 0,
        _reserved: 0,
        ctx,
        src,
        tag,
        len: len as u64,
    }
}

impl Engine {
    fn check_dest(&self, ctx: u32, dest: usize, dest_rank: u32) -> Result<()> {
        match self.doom_send_to(ctx, dest, Rank(dest_rank as i32)) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Sends a message of at most the eager limit; the data is out of the
    /// caller's buffer when this returns.
    pub fn send_eager(
        &mut self,
        dest: usize,
        dest_rank: u32,
        ctx: u32,
        src: u32,
        tag: i32,
        data: &[u8],
    ) -> Result<()> {
        // A failure announced while this process was busy elsewhere fails
        // the send now, not at some later progress round.
        self.poll_events();
        self.check_dest(ctx, dest, dest_rank)?;
        let meta = data_meta(Kind::Eager, ctx, src, tag, data.len());
        self.outbox.send(dest, &meta, data);
        self.limit_backlog(dest);
        Ok(())
    }

    /// Waits while the records queued for full rings exceed the cap.
    fn limit_backlog(&mut self, dest: usize) {
        if self.outbox.backlog_bytes > BACKLOG_CAP {
            self.wait_until(|e| e.outbox.backlog_bytes <= BACKLOG_CAP / 2 || e.gone[dest]);
        }
    }

    /// Sends `data` in buffered mode: as one record, whatever the eager
    /// limit, when it fits one (the receiver holds it from then on);
    /// otherwise by rendezvous from a copy the engine owns, the request
    /// detached and listed for [`Engine::finish_buffered`].
    ///
    /// # Errors
    /// As [`Engine::send_eager`].
    pub fn bsend(
        &mut self,
        dest: usize,
        dest_rank: u32,
        ctx: u32,
        src: u32,
        tag: i32,
        data: &[u8],
    ) -> Result<()> {
        if data.len() <= self.max_record {
            return self.send_eager(dest, dest_rank, ctx, src, tag, data);
        }
        let mut copy = Store::scratch(data.len());
        copy.bytes_mut().copy_from_slice(data);
        let cell: Cell = Rc::new(std::cell::RefCell::new(copy));
        let key = self.isend(
            dest,
            dest_rank,
            ctx,
            src,
            tag,
            SendBuf::Part(cell, 0..data.len()),
        )?;
        match self.take(key)? {
            // Doomed at its post.
            Some(r) => r.map(|_| ()),
            None => {
                self.forget(key);
                self.buffered.push(key);
                Ok(())
            }
        }
    }

    /// Waits until every buffered send still moving has ended (its
    /// receiver took it, refused it, or ended): finalize's first step, so
    /// that a buffered message outlives neither its copy nor its sender.
    pub fn finish_buffered(&mut self) {
        let keys = std::mem::take(&mut self.buffered);
        if !keys.is_empty() {
            self.wait_until(|e| keys.iter().all(|&k| e.is_done(k)));
        }
    }

    /// Starts a send; messages up to the eager limit complete at once. A
    /// send to a destination known to be gone (or on a revoked
    /// communicator) gives a request already failed with that error.
    ///
    /// # Errors
    /// None today (the `Result` leaves room for resource errors).
    pub fn isend(
        &mut self,
        dest: usize,
        dest_rank: u32,
        ctx: u32,
        src: u32,
        tag: i32,
        buf: SendBuf,
    ) -> Result<ReqKey> {
        self.start_send(dest, dest_rank, ctx, src, tag, buf, false)
    }

    /// Starts a synchronous send (`MPI_Issend`): the rendezvous path
    /// whatever the size, so the request completes only once the receiver
    /// matched the message (its answer to the RTS: CTS then the last
    /// fragment, or FIN after a single copy or for an empty message). A
    /// receiver that ends first fails it with `ProcFailed` (`doom_send`).
    ///
    /// # Errors
    /// As [`Engine::isend`].
    pub fn issend(
        &mut self,
        dest: usize,
        dest_rank: u32,
        ctx: u32,
        src: u32,
        tag: i32,
        buf: SendBuf,
    ) -> Result<ReqKey> {
        self.start_send(dest, dest_rank, ctx, src, tag, buf, true)
    }

    /// [`Engine::isend`], or with `sync` [`Engine::issend`].
    #[allow(clippy::too_many_arguments)]
    fn start_send(
        &mut self,
        dest: usize,
        dest_rank: u32,
        ctx: u32,
        src: u32,
        tag: i32,
        buf: SendBuf,
        sync: bool,
    ) -> Result<ReqKey> {
        let status = Status {
            source: Rank(dest_rank as i32),
            tag: Tag(tag),
            len: buf.len(),
        };
        // Before anything else (and outside any borrow of a schedule's
        // buffer: applying a failure may deliver records into one).
        self.poll_events();
        if !sync && buf.len() <= self.eager_limit {
            // The data is copied out now: the request is complete, with
            // the error of a destination known to be gone (or revoked).
            let r = self.check_dest(ctx, dest, dest_rank).map(|()| {
                let meta = data_meta(Kind::Eager, ctx, src, tag, buf.len());
                buf.with(|b| self.outbox.send(dest, &meta, b));
                status
            });
            if r.is_ok() {
                self.limit_backlog(dest);
            }
            return Ok(self.m.alloc(ReqState::Done(r)));
        }
        if let Err(e) = self.check_dest(ctx, dest, dest_rank) {
            // Never announced: the buffer is given back at once.
            return Ok(self.m.alloc(ReqState::Done(Err(e))));
        }
        let meta = data_meta(Kind::Rts, ctx, src, tag, buf.len());
        let addr = buf.addr();
        let key = self.m.alloc(ReqState::Send(SendReq {
            ctx,
            nacked: false,
            dest,
            status,
            buf,
            stream: None,
        }));
        let rts = Rts {
            addr,
            cookie: key.cookie(),
        };
        self.outbox.send(dest, &meta, bytemuck::bytes_of(&rts));
        crate::inject::protocol_point("p2p.rts");
        Ok(key)
    }
}
