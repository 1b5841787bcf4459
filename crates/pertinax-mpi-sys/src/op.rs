//! [`Op`]: a non-blocking send or receive that owns its buffer until MPI
//! is done with it: the safe form of `MPI_Isend` / `MPI_Irecv`.
//!
//! The buffer is either lent by a lending scope (`pertinax_os::lend`:
//! [`Lent`] / [`LentMut`], whose scope cannot end while the handle lives)
//! or owned (a boxed slice, whose heap address does not move with the box).
//! The op gives the buffer back only once MPI has completed the request
//! ([`Op::test`], [`Op::wait`]); dropping a pending op waits for it (a
//! receive is cancelled first), so MPI never writes into memory that was
//! returned. A caller that does not want to wait keeps the op and tests it
//! later (the backend's `forget`).

use pertinax_os::lend::{Lent, LentMut};

use crate::{Code, Comm, Request, Result, Status};

/// What a send reads.
#[derive(Debug)]
pub enum SendData {
    /// A buffer lent by a lending scope.
    Lent(Lent),
    /// An owned copy.
    Owned(Box<[u8]>),
}

/// Where a receive writes.
#[derive(Debug)]
pub enum RecvData {
    /// A buffer lent by a lending scope.
    Lent(LentMut),
    /// Owned scratch space.
    Owned(Box<[u8]>),
}

impl SendData {
    pub(crate) fn span(&self) -> (*const u8, usize) {
        match self {
            SendData::Lent(b) => (b.as_slice().as_ptr(), b.len()),
            SendData::Owned(b) => (b.as_ptr(), b.len()),
        }
    }
}

impl RecvData {
    pub(crate) fn span(&mut self) -> (*mut u8, usize) {
        match self {
            RecvData::Lent(b) => (b.as_mut_slice().as_mut_ptr(), b.len()),
            RecvData::Owned(b) => (b.as_mut_ptr(), b.len()),
        }
    }
}

/// A pending send or receive holding its buffer `D`.
#[derive(Debug)]
pub struct Op<D> {
    req: Request,
    /// `None` once given back.
    data: Option<D>,
    /// A receive that may be cancelled (and is, when dropped pending).
    recv: bool,
}

impl Op<SendData> {
    /// `MPI_Isend` of `data` to `dest` with `tag` on `comm`.
    ///
    /// # Errors
    /// The MPI's code (the buffer is dropped: nothing was started).
    pub fn send(data: SendData, dest: i32, tag: i32, comm: Comm) -> Result<Op<SendData>> {
        let (ptr, len) = data.span();
        // SAFETY: `data` moves into the op, which keeps it until MPI has
        // completed the request (see `Drop`); a lent buffer's scope cannot
        // end while its handle lives, and an owned box's heap memory does
        // not move when the box does.
        let req = unsafe { crate::isend(ptr, len, dest, tag, comm)? };
        Ok(Op {
            req,
            data: Some(data),
            recv: false,
        })
    }

    /// `MPI_Issend` of `data` to `dest` with `tag` on `comm`: complete
    /// once a receive matched it.
    ///
    /// # Errors
    /// As [`Op::send`].
    pub fn ssend(data: SendData, dest: i32, tag: i32, comm: Comm) -> Result<Op<SendData>> {
        let (ptr, len) = data.span();
        // SAFETY: as for `send`.
        let req = unsafe { crate::issend(ptr, len, dest, tag, comm)? };
        Ok(Op {
            req,
            data: Some(data),
            recv: false,
        })
    }
}

impl Op<RecvData> {
    /// `MPI_Irecv` into `data` from `src` with `tag` on `comm` (wildcards:
    /// [`crate::any_source`], [`crate::any_tag`]).
    ///
    /// # Errors
    /// The MPI's code (the buffer is given back).
    pub fn recv(
        mut data: RecvData,
        src: i32,
        tag: i32,
        comm: Comm,
    ) -> std::result::Result<Op<RecvData>, (Code, RecvData)> {
        let (ptr, len) = data.span();
        // SAFETY: as for `send`; the op holds the only handle to the
        // buffer until MPI has completed, so nothing else reads or writes it.
        match unsafe { crate::irecv(ptr, len, src, tag, comm) } {
            Ok(req) => Ok(Op {
                req,
                data: Some(data),
                recv: true,
            }),
            Err(c) => Err((c, data)),
        }
    }
}

impl Op<RecvData> {
    /// `MPI_Irecv` of the payload an envelope announced
    /// ([`crate::mrecv_envelope`]): `data` is exactly its length, `src` and
    /// `tag` the envelope's. Posted right after the envelope was received,
    /// it matches that payload. It is never cancelled (a payload left in
    /// MPI would be matched by a later receive as a message of its own):
    /// [`Op::cancel`] does nothing and dropping it waits for it.
    ///
    /// # Errors
    /// As [`Op::recv`].
    pub fn recv_payload(
        data: RecvData,
        src: i32,
        tag: i32,
        comm: Comm,
    ) -> std::result::Result<Op<RecvData>, (Code, RecvData)> {
        let mut op = Op::recv(data, src, tag, comm)?;
        op.recv = false;
        Ok(op)
    }
}

/// A message matched by [`crate::improbe`], not received yet.
#[derive(Debug)]
pub struct Message(pub(crate) isize);

impl Op<RecvData> {
    /// `MPI_Imrecv` of a matched message into `data`.
    ///
    /// # Errors
    /// The MPI's code (the buffer is given back; the message is gone).
    pub fn mrecv(
        mut data: RecvData,
        mut msg: Message,
    ) -> std::result::Result<Op<RecvData>, (Code, RecvData)> {
        let (ptr, len) = data.span();
        let mut r: isize = 0;
        // SAFETY: as for `recv`: the op keeps the buffer until MPI has
        // completed the request; the shim writes `msg` and `r`.
        let rc = unsafe { crate::ffi::pxm_imrecv(ptr.cast(), len, &mut msg.0, &mut r) };
        if rc != 0 {
            return Err((Code(rc), data));
        }
        Ok(Op {
            req: Request(r),
            data: Some(data),
            recv: true,
        })
    }
}

impl<D> Op<D> {
    /// Tests the request: once complete, its status (`error` set if it
    /// failed) and the buffer. `Err` while still pending when MPI reports
    /// an error for the test (ULFM: `MPIX_ERR_PROC_FAILED_PENDING` for an
    /// any-source receive); the op stays pending.
    ///
    /// # Errors
    /// As above; also after the buffer was given back (`MPI_ERR_REQUEST`
    /// class code -1).
    pub fn test(&mut self) -> Result<Option<(Status, D)>> {
        if self.data.is_none() {
            return Err(Code(-1));
        }
        match self.req.test()? {
            Some(st) => Ok(self.data.take().map(|d| (st, d))),
            None => Ok(None),
        }
    }

    /// Waits for the request: its status and the buffer (`None` if given
    /// back before).
    pub fn wait(&mut self) -> Option<(Status, D)> {
        let d = self.data.take()?;
        let st = if self.req.is_null() {
            Status::EMPTY
        } else {
            self.req.wait()
        };
        Some((st, d))
    }

    /// Asks MPI to cancel the request (a receive not matched yet; not a
    /// send or a payload's receive); it still completes (test it:
    /// `cancelled` tells).
    ///
    /// # Errors
    /// The MPI's code.
    pub fn cancel(&mut self) -> Result<()> {
        if self.req.is_null() || !self.recv {
            return Ok(());
        }
        self.req.cancel()
    }

    /// Whether the buffer was given back (the op is finished).
    pub fn finished(&self) -> bool {
        self.data.is_none()
    }
}

impl<D> Drop for Op<D> {
    fn drop(&mut self) {
        if self.data.is_some() && !self.req.is_null() {
            if self.recv {
                let _ = self.req.cancel();
            }
            let _ = self.req.wait();
        }
    }
}
