//! Point-to-point communication on a communicator.
//!
//! Buffers are slices of plain-old-data types ([`bytemuck::Pod`]): sent and
//! received without conversion or copies at the call site. Values of any
//! `serde` type can be sent with [`Comm::send_value`].
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
use serde::{de::DeserializeOwned, Serialize};

use crate::backend::{Backend, MatchSpec, RecvBuf, SendBuf};
use crate::comm::Comm;
use crate::error::{Error, Result};
use crate::request::{Request, Scope};
use crate::types::{Rank, Source, Status, Tag, TagMatch};
use crate::wait::Backoff;

impl Comm {
    /// Sends bytes on context `ctx` (validated rank).
    pub(crate) fn raw_send(&self, ctx: u32, data: &[u8], dest: u32, tag: i32) -> Result<()> {
        let rt = &self.inner.rt;
        let slot = self.slot_of(dest);
        if data.len() <= rt.b.eager_limit() {
            return rt.b.send_eager(slot, dest, ctx, self.inner.rank, tag, data);
        }
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
    pub(crate) fn raw_recv(&self, spec: MatchSpec, buf: &mut [u8], elem: usize) -> Result<Status> {
        let rt = &self.inner.rt;
        if let Some(r) = rt.b.recv_direct(&spec, buf, elem) {
            return r;
        }
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

    /// The checked destination and tag of a blocking send.
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

    /// Receives a message into a new vector of exactly its length.
    ///
    /// # Errors
    /// As [`CommunicatorExt::recv`](crate::CommunicatorExt::recv) (never `Truncated`).
    pub fn recv_vec<T: Pod>(
        &self,
        src: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<(Vec<T>, Status)> {
        self.live()?;
        let st = self.probe(src, tag)?;
        let elem = std::mem::size_of::<T>().max(1);
        let spec = MatchSpec {
            ctx: self.inner.ctx,
            src: Some(st.source.0 as u32),
            tag: Some(st.tag.0),
        };
        if st.len % elem != 0 {
            // Consumed, as every refused receive consumes its message.
            let mut sink = vec![0u8; st.len];
            self.raw_recv(spec, &mut sink, 1)?;
            return Err(Error::LengthNotMultiple { len: st.len, elem });
        }
        let mut v = vec![T::zeroed(); st.len / elem];
        let st = self.raw_recv(spec, bytemuck::cast_slice_mut(&mut v), elem)?;
        Ok((v, st))
    }

    /// Sends any serializable value, encoded with postcard (compact, not
    /// self-describing: a type whose `Deserialize` needs
    /// `deserialize_any`, such as `#[serde(untagged)]`, `#[serde(flatten)]`
    /// or an internally tagged enum, fails to decode at the receiver).
    /// Sender and receiver are ranks of one job, built from the same
    /// pertinax: the encoding is not a stable format across versions.
    ///
    /// # Errors
    /// `Serialization` if encoding fails; otherwise as [`CommunicatorExt::send`](crate::CommunicatorExt::send).
    pub fn send_value<V: Serialize + ?Sized>(
        &self,
        value: &V,
        dest: impl Into<Rank>,
        tag: impl Into<Tag>,
    ) -> Result<()> {
        self.send(&encode(value)?, dest, tag)
    }

    /// Sends `buf` in buffered mode (`MPI_Bsend`): returns once the data
    /// is copied out, whatever its size, without waiting for the receiver
    /// to post a receive (on the native backend, a message that fits one
    /// ring record goes out as one record whatever the eager limit; a
    /// longer one by rendezvous from a copy the runtime owns until the
    /// receiver has taken it; on MPI, a copy in a send MPI completes in
    /// the background), so no buffer need be attached. Use it where a send must not wait for its receiver: a
    /// message the receiver reads only after a collective step the sender
    /// takes part in too, or one of several redundant copies of which the
    /// receiver reads one. Finalize completes a buffered send still
    /// moving: it waits until the receiver took it or ended, so a message
    /// past one ring record (on the native backend, half a ring: 128 KiB
    /// up to 8 ranks, 8 KiB past 64) must be received; one up to that is
    /// held by its receiver once sent.
    ///
    /// # Errors
    /// As [`CommunicatorExt::send`](crate::CommunicatorExt::send); a failure of the receiver after the call is not
    /// reported (the copy is dropped).
    ///
    /// # Example
    /// ```
    /// let u = pertinax::init()?;
    /// let world = u.world();
    /// // 1 MiB to itself: a blocking `send` would wait for the receive
    /// // below forever.
    /// let big = vec![7u8; 1 << 20];
    /// world.bsend(&big, 0, 3)?;
    /// let (got, _) = world.recv_vec::<u8>(0, 3)?;
    /// assert_eq!(got, big);
    /// # Ok::<(), pertinax::Error>(())
    /// ```
    pub fn bsend<T: Pod>(
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

    /// [`Comm::send_value`] in buffered mode ([`Comm::bsend`]).
    ///
    /// # Errors
    /// As [`Comm::send_value`].
    pub fn bsend_value<V: Serialize + ?Sized>(
        &self,
        value: &V,
        dest: impl Into<Rank>,
        tag: impl Into<Tag>,
    ) -> Result<()> {
        self.bsend(&encode(value)?, dest, tag)
    }

    /// Receives a value sent with [`Comm::send_value`].
    ///
    /// # Errors
    /// `Serialization` if the message does not decode as `V` (it is
    /// consumed); otherwise as [`Comm::recv_vec`].
    pub fn recv_value<V: DeserializeOwned>(
        &self,
        src: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<(V, Status)> {
        let (bytes, st) = self.recv_vec::<u8>(src, tag)?;
        let v = postcard::from_bytes(&bytes).map_err(|e| Error::Serialization(e.to_string()))?;
        Ok((v, st))
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

    /// Sends `buf` in synchronous mode (`MPI_Ssend`): returns only once a
    /// receive at `dest` has matched the message, whatever its size (a
    /// standard [`CommunicatorExt::send`](crate::CommunicatorExt::send) of a small message returns as soon as it is
    /// copied out). On the native backend the message goes by rendezvous;
    /// on MPI it is an `MPI_Issend`.
    ///
    /// # Errors
    /// As [`CommunicatorExt::send`](crate::CommunicatorExt::send): `ProcFailed` when the destination fails before
    /// it matched the message (the call does not wait for it forever).
    pub fn ssend<T: Pod>(
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

    /// Starts a synchronous send (`MPI_Issend`): as [`CommunicatorExt::isend`](crate::CommunicatorExt::isend), but
    /// the request completes only once a receive at `dest` has matched the
    /// message (see [`Comm::ssend`]).
    ///
    /// # Errors
    /// As [`CommunicatorExt::isend`](crate::CommunicatorExt::isend).
    pub fn issend<'s, T: Pod>(
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

    /// [`Comm::issend`] of a buffer lent without a scope (see
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

/// A value's postcard encoding ([`Comm::send_value`]).
fn encode<V: Serialize + ?Sized>(value: &V) -> Result<Vec<u8>> {
    postcard::to_allocvec(value).map_err(|e| Error::Serialization(e.to_string()))
}
