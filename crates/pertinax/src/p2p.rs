//! Point-to-point communication on a communicator.
//!
//! Buffers are slices of plain-old-data types ([`bytemuck::Pod`]): sent and
//! received without conversion or copies at the call site. Values of any
//! `serde` type can be sent with [`CommunicatorExt::send_value`](crate::CommunicatorExt::send_value).
//!
//! # Example
//! ```
//! use pertinax::prelude::*;
//!
//! let u = pertinax::init()?;
//! let world = u.world();
//! // A singleton job sends to itself.
//! world.send(&[1.5f64, 2.5], 0, 7)?;
//! let mut got = [0f64; 2];
//! // `None` only where a resilient communicator skips the receive.
//! let st = world.recv(&mut got, 0, 7)?;
//! assert_eq!((got, st.map(|s| s.len)), ([1.5, 2.5], Some(16)));
//! # Ok::<(), pertinax::Error>(())
//! ```

use bytemuck::Pod;
use pertinax_os::lend;
use serde::Serialize;

use crate::backend::{Backend, DirectP2p, MatchSpec, Now, RecvBuf, SendBuf};
use crate::comm::Comm;
use crate::error::{Error, Result};
use crate::request::{Request, Scope};
use crate::types::{Rank, Source, Status, Tag, TagMatch};
use crate::wait::Backoff;

impl Comm {
    /// Sends bytes on context `ctx` (validated rank).
    #[inline(always)]
    pub(crate) fn raw_send(&self, ctx: u32, data: &[u8], dest: u32, tag: i32) -> Result<()> {
        let rt = &self.inner.rt;
        let slot = self.slot_of(dest);
        if data.len() <= rt.b.eager_limit() {
            return rt.b.send_eager(slot, dest, ctx, self.inner.rank, tag, data);
        }
        self.send_lent(slot, ctx, data, dest, tag)
    }

    /// [`Comm::raw_send`] of a message past the eager limit: the buffer is
    /// lent to the backend until the receiver has it. Out of line, so that
    /// a short send's path stays small enough to inline.
    #[inline(never)]
    fn send_lent(&self, slot: usize, ctx: u32, data: &[u8], dest: u32, tag: i32) -> Result<()> {
        let rt = &self.inner.rt;
        let mut b = Backoff::default();
        lend::scope(
            |s| {
                let e = &rt.b;
                let k = e.isend(
                    slot,
                    dest,
                    ctx,
                    self.inner.rank,
                    tag,
                    SendBuf::Lent(s.lend(data)),
                )?;
                e.wait(k).map(|_| ())
            },
            || rt.drain_step(&mut b),
        )
    }

    /// Receives into bytes (elements of `elem` bytes).
    #[inline(always)]
    pub(crate) fn raw_recv(&self, spec: MatchSpec, buf: &mut [u8], elem: usize) -> Result<Status> {
        if let Some(r) = self.inner.rt.b.recv_direct(&spec, buf, elem) {
            return r;
        }
        self.recv_lent(spec, buf, elem)
    }

    /// [`Comm::raw_recv`] when the backend cannot receive at once: the
    /// buffer is lent to it until the message is in. Out of line, as
    /// [`Comm::send_lent`].
    #[inline(never)]
    fn recv_lent(&self, spec: MatchSpec, buf: &mut [u8], elem: usize) -> Result<Status> {
        let rt = &self.inner.rt;
        let mut b = Backoff::default();
        lend::scope(
            |s| {
                rt.b.recv(
                    spec,
                    self.targets().clone(),
                    RecvBuf::Lent(s.lend_mut(buf)),
                    elem,
                )
            },
            || rt.drain_step(&mut b),
        )
    }

    #[inline]
    pub(crate) fn spec(&self, src: Source, tag: TagMatch) -> Result<MatchSpec> {
        Ok(MatchSpec {
            ctx: self.inner.ctx,
            src: match src {
                Source::Any => None,
                Source::Rank(r) => Some(self.check_rank(r)?),
            },
            tag: match tag {
                TagMatch::Any => None,
                TagMatch::Tag(t) => Some(Self::check_tag(t)?),
            },
        })
    }

    /// Sends `buf` to rank `dest` with `tag`. Returns when the buffer may be
    /// reused: small messages are copied out at once, large ones when the
    /// receiver has taken them.
    ///
    /// # Errors
    /// `InvalidRank`, `InvalidTag`, `CommFreed`, `Finalized`; `ProcFailed`
    /// if the destination has failed.
    pub(crate) fn send<T: Pod>(
        &self,
        buf: &[T],
        dest: impl Into<Rank>,
        tag: impl Into<Tag>,
    ) -> Result<()> {
        let (dest, tag) = self.send_args(dest.into(), tag.into())?;
        self.raw_send(self.inner.ctx, bytemuck::cast_slice(buf), dest, tag)
    }

    /// A blocking send through the backend's direct call
    /// ([`DirectP2p::send_now`]; the caller has seen
    /// `caps.direct_p2p`) when the arguments are valid; [`Now::General`],
    /// with nothing done, otherwise (the general path then reports what is
    /// wrong).
    #[inline(always)]
    pub(crate) fn send_now(&self, data: &[u8], dest: Rank, tag: Tag) -> Now {
        let i = &*self.inner;
        if self.live_p2p().is_err()
            || dest.0 < 0
            || dest.index() >= self.targets().len()
            || Self::check_tag(tag).is_err()
        {
            return Now::General;
        }
        i.rt.b.send_now(i.ctx, dest.0 as u32, tag.0, data)
    }

    /// A blocking receive from a named source through the backend's direct
    /// call ([`DirectP2p::recv_now`]), as [`Comm::send_now`]; on
    /// [`Now::Done`] the status is in `st`.
    #[inline(always)]
    pub(crate) fn recv_now(
        &self,
        buf: &mut [u8],
        elem: usize,
        src: Source,
        tag: TagMatch,
        st: &mut Status,
    ) -> Now {
        let i = &*self.inner;
        let Source::Rank(src) = src else {
            return Now::General;
        };
        let tag = match tag {
            TagMatch::Any => None,
            TagMatch::Tag(t) => match Self::check_tag(t) {
                Ok(t) => Some(t),
                Err(_) => return Now::General,
            },
        };
        if self.live_p2p().is_err() || src.0 < 0 || src.index() >= self.targets().len() {
            return Now::General;
        }
        i.rt.b.recv_now(i.ctx, src.0 as u32, tag, buf, elem, st)
    }

    /// The checked destination and tag of a blocking send.
    #[inline]
    fn send_args(&self, dest: Rank, tag: Tag) -> Result<(u32, i32)> {
        self.live_p2p()?;
        Ok((self.check_rank(dest)?, Self::check_tag(tag)?))
    }

    /// [`CommunicatorExt::recv`] into bytes that hold elements of `elem` bytes.
    pub(crate) fn recv_elems(
        &self,
        buf: &mut [u8],
        elem: usize,
        src: Source,
        tag: TagMatch,
    ) -> Result<Status> {
        self.live_p2p()?;
        let spec = self.spec(src, tag)?;
        self.raw_recv(spec, buf, elem)
    }

    /// [`CommunicatorExt::bsend`](crate::CommunicatorExt::bsend) on a plain communicator.
    pub(crate) fn bsend<T: Pod>(
        &self,
        buf: &[T],
        dest: impl Into<Rank>,
        tag: impl Into<Tag>,
    ) -> Result<()> {
        let (dest, tag) = self.send_args(dest.into(), tag.into())?;
        self.inner.rt.b.bsend(
            self.slot_of(dest),
            dest,
            self.inner.ctx,
            self.inner.rank,
            tag,
            bytemuck::cast_slice(buf),
        )
    }

    /// Waits for a matching message and describes it without receiving it.
    ///
    /// # Errors
    /// `InvalidRank`, `InvalidTag`, `CommFreed`, `Finalized`, or a failure
    /// of the peer(s) it could come from.
    pub(crate) fn probe(&self, src: impl Into<Source>, tag: impl Into<TagMatch>) -> Result<Status> {
        self.live()?;
        let spec = self.spec(src.into(), tag.into())?;
        self.probe_spec(spec)
    }

    /// Waits for a message matching `spec` (any context) without taking it.
    pub(crate) fn probe_spec(&self, spec: MatchSpec) -> Result<Status> {
        let e = &self.inner.rt.b;
        let mut out = None;
        let peers = self.targets().clone();
        e.wait_until(|e| {
            if let Some(st) = e.find(&spec) {
                out = Some(Ok(st));
            } else if let Some(err) = e.probe_doomed(&spec, &peers) {
                out = Some(Err(err));
            }
            out.is_some()
        });
        out.unwrap_or(Err(Error::Finalized))
    }

    /// Describes a matching message if one is here, without waiting.
    ///
    /// # Errors
    /// As [`Communicator::probe`](crate::Communicator::probe).
    pub(crate) fn iprobe(
        &self,
        src: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<Option<Status>> {
        self.live()?;
        let spec = self.spec(src.into(), tag.into())?;
        let e = &self.inner.rt.b;
        e.progress();
        if let Some(st) = e.find(&spec) {
            return Ok(Some(st));
        }
        match e.probe_doomed(&spec, self.targets()) {
            Some(err) => Err(err),
            None => Ok(None),
        }
    }

    /// Starts sending `buf`; it stays borrowed until the request completes
    /// (at once for a message up to the eager limit, whose data is copied
    /// out; see [`Request`] for when a larger one completes).
    ///
    /// # Errors
    /// `InvalidRank`, `InvalidTag`, `CommFreed`, `Finalized` at once. A
    /// failure (`ProcFailed` for a destination known to be gone, even if
    /// it died while this rank was busy elsewhere; `Revoked`) is the
    /// request's result, returned by its wait.
    pub(crate) fn isend<'s, T: Pod>(
        &self,
        scope: &'s Scope<'s, '_>,
        buf: &'s [T],
        dest: impl Into<Rank>,
        tag: impl Into<Tag>,
    ) -> Result<Request<'s>> {
        self.start_send(
            scope.lend(bytemuck::cast_slice(buf)),
            dest.into(),
            tag.into(),
            false,
        )
    }

    /// Starts a send (`sync`: a synchronous one) of lent bytes: the
    /// checks and the backend call every non-blocking send shares.
    fn start_send<'s>(
        &self,
        buf: lend::Lent,
        dest: Rank,
        tag: Tag,
        sync: bool,
    ) -> Result<Request<'s>> {
        self.live()?;
        let dest = self.check_rank(dest)?;
        let tag = Self::check_tag(tag)?;
        let slot = self.slot_of(dest);
        let (ctx, me, data) = (self.inner.ctx, self.inner.rank, SendBuf::Lent(buf));
        let b = &self.inner.rt.b;
        let k = if sync {
            b.issend(slot, dest, ctx, me, tag, data)
        } else {
            b.isend(slot, dest, ctx, me, tag, data)
        }?;
        Ok(Request::new(self.inner.rt.clone(), k))
    }

    /// `irecv` into bytes that hold elements of `elem` bytes.
    pub(crate) fn irecv_elems<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [u8],
        elem: usize,
        src: Source,
        tag: TagMatch,
    ) -> Result<Request<'s>> {
        self.live()?;
        let spec = self.spec(src, tag)?;
        let lent = RecvBuf::Lent(scope.lend_mut(buf));
        let k = self
            .inner
            .rt
            .b
            .irecv(spec, self.targets().clone(), lent, elem);
        Ok(Request::new(self.inner.rt.clone(), k))
    }

    /// [`CommunicatorExt::isend`](crate::CommunicatorExt::isend) of a buffer lent without a scope
    /// (`pertinax_os::lend::lend_raw`): for a foreign caller, such as the C
    /// ABI, whose buffer stays valid until the request completes by its
    /// own contract.
    ///
    /// # Errors
    /// As [`CommunicatorExt::isend`](crate::CommunicatorExt::isend).
    pub fn isend_lent(
        &self,
        buf: lend::Lent,
        dest: impl Into<Rank>,
        tag: impl Into<Tag>,
    ) -> Result<Request<'static>> {
        self.start_send(buf, dest.into(), tag.into(), false)
    }

    /// [`CommunicatorExt::irecv`](crate::CommunicatorExt::irecv) into a buffer lent without a scope
    /// (`pertinax_os::lend::lend_mut_raw`) of `elem`-byte elements.
    ///
    /// # Errors
    /// As [`CommunicatorExt::irecv`](crate::CommunicatorExt::irecv).
    pub fn irecv_lent(
        &self,
        buf: lend::LentMut,
        elem: usize,
        src: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<Request<'static>> {
        self.live()?;
        let spec = self.spec(src.into(), tag.into())?;
        let k = self
            .inner
            .rt
            .b
            .irecv(spec, self.targets().clone(), RecvBuf::Lent(buf), elem);
        Ok(Request::new(self.inner.rt.clone(), k))
    }

    /// [`CommunicatorExt::ssend`](crate::CommunicatorExt::ssend) on a plain communicator.
    pub(crate) fn ssend<T: Pod>(
        &self,
        buf: &[T],
        dest: impl Into<Rank>,
        tag: impl Into<Tag>,
    ) -> Result<()> {
        let (dest, tag) = self.send_args(dest.into(), tag.into())?;
        let rt = &self.inner.rt;
        let slot = self.slot_of(dest);
        let data: &[u8] = bytemuck::cast_slice(buf);
        let mut b = Backoff::default();
        lend::scope(
            |s| {
                let k = rt.b.issend(
                    slot,
                    dest,
                    self.inner.ctx,
                    self.inner.rank,
                    tag,
                    SendBuf::Lent(s.lend(data)),
                )?;
                rt.b.wait(k).map(|_| ())
            },
            || rt.drain_step(&mut b),
        )
    }

    /// [`CommunicatorExt::issend`](crate::CommunicatorExt::issend) on a plain communicator.
    pub(crate) fn issend<'s, T: Pod>(
        &self,
        scope: &'s Scope<'s, '_>,
        buf: &'s [T],
        dest: impl Into<Rank>,
        tag: impl Into<Tag>,
    ) -> Result<Request<'s>> {
        self.start_send(
            scope.lend(bytemuck::cast_slice(buf)),
            dest.into(),
            tag.into(),
            true,
        )
    }

    /// [`CommunicatorExt::issend`](crate::CommunicatorExt::issend) of a buffer lent without a scope (see
    /// [`Comm::isend_lent`]).
    ///
    /// # Errors
    /// As [`CommunicatorExt::isend`](crate::CommunicatorExt::isend).
    pub fn issend_lent(
        &self,
        buf: lend::Lent,
        dest: impl Into<Rank>,
        tag: impl Into<Tag>,
    ) -> Result<Request<'static>> {
        self.start_send(buf, dest.into(), tag.into(), true)
    }
}

/// A value's postcard encoding ([`CommunicatorExt::send_value`](crate::CommunicatorExt::send_value)).
pub(crate) fn encode<V: Serialize + ?Sized>(value: &V) -> Result<Vec<u8>> {
    postcard::to_allocvec(value).map_err(|e| Error::Serialization(e.to_string()))
}
