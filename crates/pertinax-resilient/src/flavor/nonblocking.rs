//! Non-blocking resilient collectives: requests posted before a failure
//! are re-posted on the repaired communicator.
//!
//! [`Resilient::scope`] opens a scope, like [`pertinax::scope`], in which
//! [`NbScope::ibarrier`], [`NbScope::ibcast`], [`NbScope::ireduce`],
//! [`NbScope::iallreduce`] and [`NbScope::iallgather`] post collectives
//! that run while the program computes. Each returns an [`NbRequest`] to
//! [`wait`](NbRequest::wait) or [`test`](NbRequest::test) (or
//! [`pertinax::wait_all`]); its [`Outcome`] is what the blocking operation would
//! have returned.
//!
//! # Buffers
//!
//! The buffers a request uses are borrowed for the whole scope: outputs
//! are written into them when the scope ends, and the program reads them
//! after [`Resilient::scope`] returns. This follows from the core's
//! lending rule (see [`pertinax::scope`]): a buffer lent to the engine can
//! be touched again only once the scope that lent it has ended, and a
//! request that may be posted again after a failure must lend a fresh
//! buffer each time. So the layer lends the caller's output buffer to the
//! first attempt (no copy on the fault-free path) and buffers of its own
//! to later attempts, and copies the final result into the caller's
//! buffer when the scope ends. Inputs are borrowed shared, so every
//! attempt sends the original inputs; a broadcast root's buffer is both,
//! so the root keeps a copy of its data for the attempts after the first.
//!
//! # Order, agreement and re-posting
//!
//! - Every rank posts the same requests in the same order (the MPI rule
//!   for collectives); they are numbered in that order.
//! - Requests complete in posting order: waiting (or testing) a request
//!   first completes every request posted before it. Ranks may wait in
//!   different orders and still complete, agree and repair identically.
//! - Under [`Check::Agree`] a request that completed locally is followed by
//!   an agreement on the collective communicator, as a blocking collective
//!   is: it succeeded everywhere, or everybody repairs (a shrink, the same
//!   repair as the blocking operations) and then posts again, on the
//!   repaired communicator and in posting order, every request not yet
//!   agreed complete, with its original inputs and its root mapped from
//!   its original rank. A root that has failed by then goes to the
//!   [`Policy`](crate::Policy), as in the blocking operations: the outcome
//!   names it as skipped (its buffers are not written) or the request
//!   ends with [`Error::Failed`].
//! - [`NbRequest::test`] never waits for other ranks' operations or
//!   agreements (it contributes to the agreement with
//!   [`Comm::iagree`](pertinax::Comm::iagree)), but a repair, once a
//!   failure is agreed, runs to its end inside the call that learns of it.
//! - A blocking collective, `dup` or `split` of the same communicator while
//!   requests of the scope are not yet complete is refused with
//!   `InvalidArgument` (its agreement would come before theirs at this rank
//!   only); once every posted request was waited for, blocking collectives
//!   may be called inside the scope again. Only one scope may be open on a
//!   communicator at a time.
//! - When the scope ends, requests that were never waited for are
//!   completed (and agreed) in order; their results are still written to
//!   their buffers, their errors are dropped (wait a request to see them).
//! - [`Check::Log`] has no agreement to learn of a failure in a request
//!   that completed here, so it is not supported: [`Resilient::scope`]
//!   returns [`Error::Unsupported`].
//!
//! As with the blocking operations, an attempt that failed may have
//! written part of an output buffer before the failure (when it was the
//! caller's buffer); when the request then ends skipped or with an error,
//! that content is unspecified. Fault points (for tests): `res.nb.local`
//! (a request completed locally, before its agreement) and
//! `res.nb.repost` (after each re-post of a repair).
//!
//! # Example
//! ```
//! use pertinax::Op;
//! use pertinax_resilient::{Communicator, Resilient};
//!
//! let universe = pertinax::init()?;
//! let res = Resilient::new(&universe.world())?;
//! let mut table = vec![0u64; 4];
//! if res.rank().0 == 0 {
//!     table = vec![1, 2, 3, 4];
//! }
//! let mine = [res.rank().0 as u64 + 1];
//! let mut sum = [0u64];
//! let mut all = vec![0u64; res.size()];
//! let (t, s, a) = res.scope(|s| {
//!     let t = s.ibcast(&mut table, 0)?;
//!     let r = s.iallreduce(&mine, &mut sum, &Op::sum())?;
//!     let g = s.iallgather(&mine, &mut all)?;
//!     // ... compute while they run ...
//!     let s = r.wait()?; // completes the bcast first
//!     Ok::<_, pertinax_resilient::Error>((t.wait()?, s, g.wait()?))
//! })??;
//! // The buffers hold the results now; the outcomes say who contributed.
//! assert!(t.is_complete() && s.is_complete() && a.is_complete());
//! assert_eq!(table, [1, 2, 3, 4]);
//! assert_eq!(sum[0], (1..=res.size() as u64).sum::<u64>());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A buffer stays borrowed until the scope has ended, so this does not
//! compile:
//!
//! ```compile_fail
//! # let universe = pertinax::init()?;
//! # let res = pertinax_resilient::Resilient::new(&universe.world())?;
//! let mut buf = [0u32; 2];
//! res.scope(|s| {
//!     let r = s.ibcast(&mut buf, 0)?;
//!     let early = buf[0]; // error: `buf` is borrowed by the scope
//!     r.wait()
//! })??;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::cell::{Cell, RefCell};

use bytemuck::Pod;
use pertinax::{Comm, Op, PendingAgreement, Rank};

use crate::flavor::flat::View;
use crate::policy::Kind;
use crate::{Check, Communicator, Error, Outcome, Resilient};

type CoreScope<'c, 'e> = pertinax::Scope<'c, 'e>;
type CoreRequest<'c> = pertinax::Request<'c>;

/// Whether `PERTINAX_RESILIENT_TRACE` asks for a line per repair.
fn trace() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| {
        std::env::var_os(pertinax_wire::env::RESILIENT_TRACE).is_some_and(|v| v != "0")
    })
}

// ---- buffers -------------------------------------------------------------

/// A buffer of the layer's own, kept as its element type (so that it is
/// aligned for it) and seen as bytes.
trait ByteBuf {
    fn bytes(&self) -> &[u8];
    fn bytes_mut(&mut self) -> &mut [u8];
}

impl<T: Pod> ByteBuf for Vec<T> {
    // (Never empty by mistake: zero-sized element types are refused when
    // a request is posted.)
    fn bytes(&self) -> &[u8] {
        bytemuck::try_cast_slice(self).unwrap_or_default()
    }
    fn bytes_mut(&mut self) -> &mut [u8] {
        bytemuck::try_cast_slice_mut(self).unwrap_or_default()
    }
}

/// One buffer of a scope.
#[derive(Default)]
enum Slot<'b> {
    #[default]
    Empty,
    /// A caller's output buffer.
    User(&'b mut [u8]),
    /// The layer's own.
    Own(Box<dyn ByteBuf>),
}

/// The buffers of a scope, a list that grows while its earlier nodes are
/// lent: it is owned outside the core's scope and borrowed for it, and each
/// new buffer splits the borrow of the list's last node into its slot and
/// the rest. After the core's scope, the list is whole again and the
/// results are read from it.
#[derive(Default)]
struct Chain<'b> {
    slot: Slot<'b>,
    next: Option<Box<Chain<'b>>>,
}

impl Drop for Chain<'_> {
    /// Iterative, so that a long scope does not drop recursively.
    fn drop(&mut self) {
        let mut next = self.next.take();
        while let Some(mut n) = next {
            next = n.next.take();
        }
    }
}

impl<'b> Chain<'b> {
    /// The slots in the order they were handed out.
    fn into_slots(mut self) -> Vec<Slot<'b>> {
        let mut out = vec![std::mem::take(&mut self.slot)];
        let mut next = self.next.take();
        while let Some(mut n) = next {
            out.push(std::mem::take(&mut n.slot));
            next = n.next.take();
        }
        out
    }
}

/// Where a request's agreed result is, to be copied into the caller's
/// buffer when the scope ends.
#[derive(Debug)]
enum Place {
    /// Already there (the caller's buffer was lent).
    Direct,
    /// In slot `from`, same layout.
    Copy { from: usize },
    /// In slot `from`, `block` bytes per member of the collective
    /// communicator, member `c` at original position `map[c]`.
    Permute {
        from: usize,
        block: usize,
        map: Vec<usize>,
    },
}

// ---- requests ------------------------------------------------------------

/// The typed part of a reduction: element type, input and operation.
trait Reducer<'b> {
    /// Posts the reduction into `out` (`None`: a non-root, which gets
    /// nothing) on `comm`; `root`: a reduce's root in `comm`, `None` for
    /// an allreduce.
    fn post<'c, 'e>(
        &self,
        comm: &Comm,
        s: &'c CoreScope<'c, 'e>,
        out: Option<&'c mut [u8]>,
        root: Option<usize>,
    ) -> Result<CoreRequest<'c>, Error>
    where
        'b: 'c;
    /// A result buffer of the input's length.
    fn scratch(&self) -> Box<dyn ByteBuf>;
}

struct Typed<'b, T> {
    send: &'b [T],
    op: Op<T>,
}

impl<'b, T: Pod> Reducer<'b> for Typed<'b, T> {
    fn post<'c, 'e>(
        &self,
        comm: &Comm,
        s: &'c CoreScope<'c, 'e>,
        out: Option<&'c mut [u8]>,
        root: Option<usize>,
    ) -> Result<CoreRequest<'c>, Error>
    where
        'b: 'c,
    {
        let out: &'c mut [T] = match out {
            Some(b) => bytemuck::try_cast_slice_mut(b)
                .map_err(|e| Error::Internal(format!("a reduction's buffer: {e}")))?,
            None => &mut [],
        };
        Ok(match root {
            Some(rc) => comm.ireduce(s, self.send, out, &self.op, rc)?,
            None => comm.iallreduce(s, self.send, out, &self.op)?,
        })
    }
    fn scratch(&self) -> Box<dyn ByteBuf> {
        Box::new(vec![T::zeroed(); self.send.len()])
    }
}

/// A request's operation (original ranks).
enum Spec<'b> {
    Barrier,
    Bcast {
        root: usize,
    },
    Reduce {
        root: usize,
        red: Box<dyn Reducer<'b> + 'b>,
    },
    Allreduce {
        red: Box<dyn Reducer<'b> + 'b>,
    },
    Allgather {
        send: &'b [u8],
    },
}

/// A request's current attempt.
#[derive(Default)]
struct Attempt<'c> {
    /// The core operation, until it completes here.
    core: Option<CoreRequest<'c>>,
    /// The local result, once known (at once when nothing was posted).
    local: Option<Result<Outcome, Error>>,
    /// The outcome if the core operation succeeds.
    then: Outcome,
    /// Where its result goes.
    place: Option<Place>,
}

impl<'c> Attempt<'c> {
    fn posted(r: Result<CoreRequest<'c>, Error>, then: Outcome, place: Option<Place>) -> Self {
        match r {
            Ok(core) => Attempt {
                core: Some(core),
                local: None,
                then,
                place,
            },
            Err(e) => Attempt {
                local: Some(Err(e)),
                ..Attempt::default()
            },
        }
    }
}

struct Req<'c, 'b> {
    spec: Spec<'b>,
    /// A broadcast root's copy of its data.
    input: Option<&'c [u8]>,
    /// Bytes of the caller's output buffer.
    len: usize,
    /// The caller's output buffer's slot.
    user: Option<usize>,
    /// The caller's output buffer, until an attempt uses it.
    lend: Option<&'c mut [u8]>,
    /// A reduce root's receive length did not fit: it takes part with
    /// scratch and reports this.
    bad: Option<String>,
    att: Attempt<'c>,
    /// The agreed result, until taken.
    result: Option<Result<Outcome, Error>>,
}

/// The requests of a scope.
struct Queue<'c, 'b> {
    reqs: Vec<Req<'c, 'b>>,
    /// The first request not agreed complete.
    head: usize,
    /// The agreement on `reqs[head]`, started by a test.
    agreeing: Option<PendingAgreement>,
    view: View,
    /// Results to copy into the caller's buffers (slot, where).
    deliveries: Vec<(usize, Place)>,
    /// Set when a repair failed: nothing can complete any more.
    broken: Option<String>,
}

/// A scope's state, inside the core's scope.
struct Inner<'r, 'c, 'e, 'b> {
    res: &'r Resilient,
    cs: &'c CoreScope<'c, 'e>,
    /// The list's last node (the next buffer's).
    tail: RefCell<Option<&'c mut Chain<'b>>>,
    slots: Cell<usize>,
    q: RefCell<Queue<'c, 'b>>,
}

/// The type-erased side of a scope that posts (see [`NbScope`]).
trait Post<'b> {
    fn post(
        &self,
        spec: Spec<'b>,
        out: Option<&'b mut [u8]>,
        input: Option<Vec<u8>>,
        bad: Option<String>,
    ) -> Result<usize, Error>;
    fn waiter(&self) -> &dyn Wait;
}

/// The type-erased side of a scope that completes (see [`NbRequest`]).
trait Wait {
    /// Completes requests in order through `upto`; `block`: wait for them
    /// (else only what needs no waiting). True once `upto` is complete.
    fn advance(&self, upto: usize, block: bool) -> Result<bool, Error>;
    /// Takes request `id`'s result (complete).
    fn take(&self, id: usize) -> Result<Outcome, Error>;
}

impl<'r, 'c, 'e, 'b: 'c> Inner<'r, 'c, 'e, 'b> {
    /// The next slot of the list.
    fn slot(&self) -> Result<(usize, &'c mut Slot<'b>), Error> {
        let mut tail = self.tail.borrow_mut();
        let node = tail
            .take()
            .ok_or_else(|| Error::Internal("the scope's buffer list lost its end".into()))?;
        let Chain { slot, next } = node;
        *tail = Some(&mut **next.get_or_insert_with(Box::default));
        let i = self.slots.get();
        self.slots.set(i + 1);
        Ok((i, slot))
    }

    /// Keeps a caller's buffer (to lend to an attempt, and for the result).
    fn keep(&self, buf: &'b mut [u8]) -> Result<(usize, &'c mut [u8]), Error> {
        let (i, slot) = self.slot()?;
        *slot = Slot::User(buf);
        match slot {
            Slot::User(b) => Ok((i, &mut **b)),
            _ => Err(Error::Internal("a slot changed under the scope".into())),
        }
    }

    /// A buffer of the layer's own.
    fn own(&self, buf: Box<dyn ByteBuf>) -> Result<(usize, &'c mut [u8]), Error> {
        let (i, slot) = self.slot()?;
        *slot = Slot::Own(buf);
        match slot {
            Slot::Own(b) => Ok((i, b.bytes_mut())),
            _ => Err(Error::Internal("a slot changed under the scope".into())),
        }
    }

    /// The caller's buffer if no attempt used it yet, else a new one.
    fn out_buf(
        &self,
        lend: &mut Option<&'c mut [u8]>,
        fresh: impl FnOnce() -> Box<dyn ByteBuf>,
    ) -> Result<(&'c mut [u8], Place), Error> {
        if let Some(b) = lend.take() {
            return Ok((b, Place::Direct));
        }
        let (from, b) = self.own(fresh())?;
        Ok((b, Place::Copy { from }))
    }

    /// Posts request `i` on the current collective communicator (its first
    /// attempt, or again after a repair).
    fn attempt(&self, q: &mut Queue<'c, 'b>, i: usize) -> Result<(), Error> {
        let Queue { reqs, view, .. } = q;
        let r = reqs
            .get_mut(i)
            .ok_or_else(|| Error::Internal(format!("no request {i}")))?;
        let cs = self.cs;
        let cur = &view.cur;
        let me = self.res.rank().index();
        let missing = || Outcome {
            skipped: None,
            missing: view.missing.clone(),
        };
        let root_at = |root: usize| view.orig_to_cur.get(root).copied().flatten();
        r.att = match &r.spec {
            Spec::Barrier => Attempt::posted(
                cur.ibarrier(cs).map_err(Error::from),
                Outcome::default(),
                None,
            ),
            Spec::Bcast { root } => match root_at(*root) {
                None => Attempt {
                    local: Some(self.res.gone(Kind::Bcast, *root)),
                    ..Attempt::default()
                },
                Some(rc) => {
                    let (input, len) = (r.input, r.len);
                    let (buf, place) = self.out_buf(&mut r.lend, || match input {
                        Some(d) => Box::new(d.to_vec()),
                        None => Box::new(vec![0u8; len]),
                    })?;
                    Attempt::posted(
                        cur.ibcast(cs, buf, rc).map_err(Error::from),
                        Outcome::default(),
                        Some(place),
                    )
                }
            },
            Spec::Reduce { root, red } => match root_at(*root) {
                None => Attempt {
                    local: Some(self.res.gone(Kind::Reduce, *root)),
                    ..Attempt::default()
                },
                Some(rc) if me == *root && r.bad.is_some() => {
                    let (_, buf) = self.own(red.scratch())?;
                    Attempt::posted(red.post(cur, cs, Some(buf), Some(rc)), missing(), None)
                }
                Some(rc) if me == *root => {
                    let (buf, place) = self.out_buf(&mut r.lend, || red.scratch())?;
                    Attempt::posted(
                        red.post(cur, cs, Some(buf), Some(rc)),
                        missing(),
                        Some(place),
                    )
                }
                Some(rc) => Attempt::posted(red.post(cur, cs, None, Some(rc)), missing(), None),
            },
            Spec::Allreduce { red } => {
                let (buf, place) = self.out_buf(&mut r.lend, || red.scratch())?;
                Attempt::posted(red.post(cur, cs, Some(buf), None), missing(), Some(place))
            }
            Spec::Allgather { send } => {
                let block = send.len();
                let send: &'c [u8] = send;
                if cur.size() == self.res.size() {
                    let len = r.len;
                    let (buf, place) = self.out_buf(&mut r.lend, || Box::new(vec![0u8; len]))?;
                    Attempt::posted(
                        cur.iallgather(cs, send, buf).map_err(Error::from),
                        Outcome::default(),
                        Some(place),
                    )
                } else {
                    // Survivors in the communicator's order, to their
                    // original positions when the scope ends.
                    let (from, tmp) = self.own(Box::new(vec![0u8; cur.size() * block]))?;
                    Attempt::posted(
                        cur.iallgather(cs, send, tmp).map_err(Error::from),
                        missing(),
                        Some(Place::Permute {
                            from,
                            block,
                            map: view.cur_to_orig.clone(),
                        }),
                    )
                }
            }
        };
        Ok(())
    }

    /// The current view, taken again after a repair elsewhere (a blocking
    /// collective of the same communicator while nothing was outstanding).
    fn refresh(&self, q: &mut Queue<'c, 'b>) {
        if q.view.repairs != self.res.repairs() {
            q.view = self.res.view();
        }
    }

    fn outstanding(&self, q: &Queue<'c, 'b>) {
        self.res.set_nb_state(Some(q.reqs.len() - q.head));
    }

    fn advance_inner(
        &self,
        q: &mut Queue<'c, 'b>,
        upto: usize,
        block: bool,
    ) -> Result<bool, Error> {
        loop {
            let h = q.head;
            if h > upto || h >= q.reqs.len() {
                return Ok(true);
            }
            // 1. Local completion.
            let r = &mut q.reqs[h];
            if r.att.local.is_none() {
                let got = match r.att.core.take() {
                    None => Err(pertinax::Error::InvalidArgument(
                        "a request with no operation".into(),
                    )),
                    Some(c) if block => c.wait().map(|_| ()),
                    Some(mut c) => match c.test() {
                        Ok(None) => {
                            r.att.core = Some(c);
                            return Ok(false);
                        }
                        Ok(Some(_)) => Ok(()),
                        Err(e) => Err(e),
                    },
                };
                r.att.local = Some(match (got, &r.bad) {
                    (Ok(()), None) => Ok(std::mem::take(&mut r.att.then)),
                    (Ok(()), Some(m)) => Err(pertinax::Error::InvalidArgument(m.clone()).into()),
                    (Err(e), _) => Err(e.into()),
                });
                pertinax::fault_point("res.nb.local");
            }
            let fault = matches!(&r.att.local, Some(Err(e)) if e.is_fault());
            if fault && q.agreeing.is_none() {
                // Free the ranks still inside the operation (a peer that
                // left, dropping the communicator, fails only the requests
                // that name it), as a blocking collective does.
                let _ = q.view.cur.revoke();
            }
            // 2. The agreement (Legio's, as after a blocking collective).
            let ok = u32::from(!fault);
            let a = match (q.agreeing.take(), block) {
                (Some(p), true) => p.wait()?,
                (None, true) => q.view.cur.agree_detailed(ok)?,
                (pending, false) => {
                    let mut p = match pending {
                        Some(p) => p,
                        None => q.view.cur.iagree(ok)?,
                    };
                    match p.test()? {
                        Some(a) => a,
                        None => {
                            q.agreeing = Some(p);
                            return Ok(false);
                        }
                    }
                }
            };
            let r = &mut q.reqs[h];
            let local = r
                .att
                .local
                .take()
                .ok_or_else(|| Error::Internal("a completed request lost its result".into()))?;
            let again = fault || (local.is_ok() && a.flags != 1);
            if !again {
                // 3a. Agreed complete (an error other than a failure is
                // this rank's own, as in a blocking collective).
                if let (Ok(o), Some(u), Some(p)) = (&local, r.user, r.att.place.take()) {
                    if o.skipped.is_none() {
                        q.deliveries.push((u, p));
                    }
                }
                r.result = Some(local);
                q.head += 1;
                self.outstanding(q);
                self.res.nb_completed()?;
                continue;
            }
            // 3b. Somebody failed: repair, then post every request not
            // agreed complete again, in order.
            if trace() {
                let why = match &local {
                    Err(e) => e.to_string(),
                    Ok(_) => "failed elsewhere".to_string(),
                };
                eprintln!(
                    "resilient[{}]: non-blocking request {h} of {}: {why}; repairing",
                    self.res.rank().0,
                    q.reqs.len()
                );
            }
            self.res.repair()?;
            q.view = self.res.view();
            for r in &mut q.reqs[h..] {
                // Ended (revoked) by the repair; their buffers stay lent
                // until the engine is done with them.
                if let Some(c) = r.att.core.take() {
                    let _ = c.wait();
                }
            }
            for i in h..q.reqs.len() {
                self.attempt(q, i)?;
                pertinax::fault_point("res.nb.repost");
            }
        }
    }

    /// Completes every request (the end of the scope).
    fn finish(&self) -> Result<(), Error> {
        let n = self.q.borrow().reqs.len();
        match n {
            0 => Ok(()),
            n => self.advance(n - 1, true).map(|_| ()),
        }
    }
}

impl<'b: 'c, 'c> Post<'b> for Inner<'_, 'c, '_, 'b> {
    fn post(
        &self,
        spec: Spec<'b>,
        out: Option<&'b mut [u8]>,
        input: Option<Vec<u8>>,
        bad: Option<String>,
    ) -> Result<usize, Error> {
        let mut q = self.q.borrow_mut();
        if let Some(m) = &q.broken {
            return Err(Error::Internal(m.clone()));
        }
        self.refresh(&mut q);
        let len = out.as_ref().map_or(0, |b| b.len());
        let (user, lend) = match out {
            Some(b) => {
                let (i, l) = self.keep(b)?;
                (Some(i), Some(l))
            }
            None => (None, None),
        };
        let input: Option<&'c [u8]> = match input {
            Some(d) => Some(self.own(Box::new(d))?.1),
            None => None,
        };
        q.reqs.push(Req {
            spec,
            input,
            len,
            user,
            lend,
            bad,
            att: Attempt::default(),
            result: None,
        });
        let i = q.reqs.len() - 1;
        self.attempt(&mut q, i)?;
        self.outstanding(&q);
        Ok(i)
    }

    fn waiter(&self) -> &dyn Wait {
        self
    }
}

impl<'b: 'c, 'c> Wait for Inner<'_, 'c, '_, 'b> {
    fn advance(&self, upto: usize, block: bool) -> Result<bool, Error> {
        let mut q = self.q.borrow_mut();
        if let Some(m) = &q.broken {
            return Err(Error::Internal(m.clone()));
        }
        let r = self.advance_inner(&mut q, upto, block);
        if let Err(e) = &r {
            q.broken = Some(format!(
                "non-blocking requests abandoned after an error of the layer: {e}"
            ));
        }
        r
    }

    fn take(&self, id: usize) -> Result<Outcome, Error> {
        let mut q = self.q.borrow_mut();
        match q.reqs.get_mut(id).map(|r| r.result.take()) {
            Some(Some(r)) => r,
            Some(None) => Err(pertinax::Error::RequestInactive.into()),
            None => Err(Error::Internal(format!("no request {id}"))),
        }
    }
}

// ---- the public side -----------------------------------------------------

/// A scope for non-blocking resilient collectives: see [`Resilient::scope`]
/// and the [crate documentation](crate). `'b` is the lifetime of the
/// buffers its requests borrow (they outlive the scope).
pub struct NbScope<'x, 'b> {
    q: &'x (dyn Post<'b> + 'x),
    res: &'x Resilient,
}

/// A non-blocking resilient collective: see [`NbScope`].
#[must_use = "a request's outcome is only known by waiting for it or testing it"]
pub struct NbRequest<'x> {
    w: &'x (dyn Wait + 'x),
    id: usize,
    active: bool,
    /// Its result, once it completed while advancing without waiting (so
    /// that whether it failed is known before it is taken), until taken.
    done: Option<Result<Outcome, Error>>,
}

impl std::fmt::Debug for NbScope<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NbScope").field("res", self.res).finish()
    }
}

impl std::fmt::Debug for NbRequest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NbRequest")
            .field("id", &self.id)
            .field("active", &self.active)
            .finish()
    }
}

fn bad(what: &str, detail: String) -> Error {
    pertinax::Error::InvalidArgument(format!("{what}: {detail}")).into()
}

/// `buf` as bytes (a zero-sized element type is refused, not a panic).
fn bytes_mut<'a, T: Pod>(what: &str, buf: &'a mut [T]) -> Result<&'a mut [u8], Error> {
    bytemuck::try_cast_slice_mut(buf).map_err(|e| bad(what, format!("buffer: {e}")))
}

/// `buf` as bytes (a zero-sized element type is refused, not a panic).
fn bytes<'a, T: Pod>(what: &str, buf: &'a [T]) -> Result<&'a [u8], Error> {
    bytemuck::try_cast_slice(buf).map_err(|e| bad(what, format!("buffer: {e}")))
}

impl<'x, 'b> NbScope<'x, 'b> {
    fn request(&self, id: usize) -> NbRequest<'x> {
        NbRequest {
            w: self.q.waiter(),
            id,
            active: true,
            done: None,
        }
    }

    /// Non-blocking [`Communicator::barrier`].
    ///
    /// # Errors
    /// [`Error::Internal`] after a failed repair (see [`NbRequest::wait`]).
    pub fn ibarrier(&self) -> Result<NbRequest<'x>, Error> {
        let id = self.q.post(Spec::Barrier, None, None, None)?;
        Ok(self.request(id))
    }

    /// Non-blocking [`CommunicatorExt::bcast`](pertinax::CommunicatorExt::bcast): `buf` holds the result when
    /// the scope has ended (unless the root failed).
    ///
    /// # Errors
    /// `InvalidRank` for a bad root (nothing is posted).
    pub fn ibcast<T: Pod>(
        &self,
        buf: &'b mut [T],
        root: impl Into<Rank>,
    ) -> Result<NbRequest<'x>, Error> {
        let root = self.res.check_rank(root.into())?;
        let buf: &'b mut [u8] = bytes_mut("bcast", buf)?;
        let input = (root == self.res.rank().index()).then(|| buf.to_vec());
        let id = self.q.post(Spec::Bcast { root }, Some(buf), input, None)?;
        Ok(self.request(id))
    }

    /// Non-blocking [`CommunicatorExt::reduce`](pertinax::CommunicatorExt::reduce): at the root, `recv` holds the
    /// result when the scope has ended; elsewhere it is not used (it may
    /// be empty).
    ///
    /// # Errors
    /// `InvalidRank` for a bad root (nothing is posted). A root whose
    /// `recv` is not as long as `send` takes part with a scratch buffer and
    /// its request ends with `InvalidArgument`.
    pub fn ireduce<T: Pod>(
        &self,
        send: &'b [T],
        recv: &'b mut [T],
        op: &Op<T>,
        root: impl Into<Rank>,
    ) -> Result<NbRequest<'x>, Error> {
        let root = self.res.check_rank(root.into())?;
        let bad = (root == self.res.rank().index() && recv.len() != send.len()).then(|| {
            format!(
                "reduce: send has {} elements, receive has {}",
                send.len(),
                recv.len()
            )
        });
        let recv = bytes_mut("reduce", recv)?;
        bytes("reduce", send)?;
        let red = Box::new(Typed {
            send,
            op: op.clone(),
        });
        let id = self
            .q
            .post(Spec::Reduce { root, red }, Some(recv), None, bad)?;
        Ok(self.request(id))
    }

    /// Non-blocking [`CommunicatorExt::allreduce`](pertinax::CommunicatorExt::allreduce): `recv` holds the result
    /// when the scope has ended.
    ///
    /// # Errors
    /// `InvalidArgument` if `send` and `recv` differ in length (nothing is
    /// posted).
    pub fn iallreduce<T: Pod>(
        &self,
        send: &'b [T],
        recv: &'b mut [T],
        op: &Op<T>,
    ) -> Result<NbRequest<'x>, Error> {
        if send.len() != recv.len() {
            return Err(bad(
                "allreduce",
                format!(
                    "send has {} elements, receive has {}",
                    send.len(),
                    recv.len()
                ),
            ));
        }
        let recv = bytes_mut("allreduce", recv)?;
        let red = Box::new(Typed {
            send,
            op: op.clone(),
        });
        let id = self
            .q
            .post(Spec::Allreduce { red }, Some(recv), None, None)?;
        Ok(self.request(id))
    }

    /// Non-blocking [`CommunicatorExt::allgather`](pertinax::CommunicatorExt::allgather): `recv` holds every
    /// contributor's `send` at its original position when the scope has
    /// ended (the missing ranks' blocks are not written).
    ///
    /// # Errors
    /// `InvalidArgument` unless `recv` holds `size × send.len()` elements
    /// (nothing is posted).
    pub fn iallgather<T: Pod>(
        &self,
        send: &'b [T],
        recv: &'b mut [T],
    ) -> Result<NbRequest<'x>, Error> {
        let size = self.res.size();
        if recv.len() != size * send.len() {
            return Err(bad(
                "allgather",
                format!(
                    "receive holds {} elements, {size} × {} needed",
                    recv.len(),
                    send.len()
                ),
            ));
        }
        let id = self.q.post(
            Spec::Allgather {
                send: bytes("allgather", send)?,
            },
            Some(bytes_mut("allgather", recv)?),
            None,
            None,
        )?;
        Ok(self.request(id))
    }
}

impl NbRequest<'_> {
    /// Waits until the request (and every request posted before it) has
    /// completed and been agreed; returns its outcome, the one the blocking
    /// operation would have returned. Its output buffer holds the result
    /// once the scope has ended.
    ///
    /// # Errors
    /// [`Error::Failed`] when its root has failed and the policy says stop;
    /// an argument error of the core (e.g. a count that differs between
    /// ranks); [`Error::Internal`] once a repair has failed (no request of
    /// the scope can complete after that).
    pub fn wait(mut self) -> Result<Outcome, Error> {
        self.wait_outcome()
    }

    fn wait_outcome(&mut self) -> Result<Outcome, Error> {
        if let Some(r) = self.done.take() {
            self.active = false;
            return r;
        }
        self.complete(true).and_then(|o| {
            o.ok_or_else(|| Error::Internal("a waited request did not complete".into()))
        })
    }

    /// Completes the request if that needs no waiting for other ranks (a
    /// repair, once a failure is agreed, runs to its end here): `Ok(None)`
    /// while it is pending. Completes earlier requests first.
    ///
    /// # Errors
    /// As [`NbRequest::wait`]; `RequestInactive` once the outcome was
    /// returned.
    pub fn test(&mut self) -> Result<Option<Outcome>, Error> {
        if let Some(r) = self.done.take() {
            self.active = false;
            return r.map(Some);
        }
        self.complete(false)
    }

    /// Whether the outcome has not been returned yet.
    pub fn is_active(&self) -> bool {
        self.active
    }

    fn complete(&mut self, block: bool) -> Result<Option<Outcome>, Error> {
        if !self.active {
            return Err(pertinax::Error::RequestInactive.into());
        }
        if !self.w.advance(self.id, block)? {
            return Ok(None);
        }
        self.active = false;
        self.w.take(self.id).map(Some)
    }
}

/// A resilient non-blocking collective is a pending operation of the
/// core's kind, so code that handles several communicators' requests
/// treats it as one (its completion carries the outcome, no status).
/// A resilient non-blocking collective is a pending operation of the
/// core's kind, so the core's waits take it, alone or with other
/// communicators' requests (its completion carries the outcome, no status).
impl pertinax::Pending for NbRequest<'_> {
    type Output = pertinax::Completion;
    type Error = Error;

    fn is_active(&self) -> bool {
        self.active
    }
    fn is_done(&mut self) -> bool {
        if !self.active || self.done.is_some() {
            return true;
        }
        // Completed: its result is taken from the scope now and kept, so
        // that `has_failed` knows it.
        match self.complete(false) {
            Ok(None) => false,
            Ok(Some(o)) => {
                self.active = true;
                self.done = Some(Ok(o));
                true
            }
            Err(e) => {
                self.active = true;
                self.done = Some(Err(e));
                true
            }
        }
    }
    fn has_failed(&mut self) -> bool {
        matches!(self.done, Some(Err(_)))
    }
    fn take(&mut self) -> Result<pertinax::Completion, Error> {
        self.wait_outcome().map(|outcome| pertinax::Completion {
            status: None,
            outcome,
        })
    }
    fn step(&self, b: &mut pertinax::Backoff) {
        b.snooze();
    }
    /// Completes it in the scope's own blocking wait.
    fn wait_mut(&mut self) -> Result<pertinax::Completion, Error> {
        pertinax::Pending::take(self)
    }
    /// Collectives cannot be cancelled (false, as in the core).
    fn cancel(&mut self) -> Result<bool, Error> {
        if !self.active {
            return Err(pertinax::Error::RequestInactive.into());
        }
        Ok(false)
    }
}

/// Marks the communicator's scope closed when the scope ends, also by
/// unwinding.
struct Open<'r>(&'r Resilient);

impl Drop for Open<'_> {
    fn drop(&mut self) {
        self.0.set_nb_state(None);
    }
}

/// Copies agreed results into the callers' buffers.
fn deliver(chain: Chain<'_>, deliveries: Vec<(usize, Place)>) -> Result<(), Error> {
    let mut slots = chain.into_slots();
    let lost = || Error::Internal("a result's buffer is missing".into());
    for (user, place) in deliveries {
        let from = match &place {
            Place::Direct => continue,
            Place::Copy { from } | Place::Permute { from, .. } => *from,
        };
        let Slot::Own(src) = std::mem::take(slots.get_mut(from).ok_or_else(lost)?) else {
            return Err(lost());
        };
        let Some(Slot::User(dst)) = slots.get_mut(user) else {
            return Err(lost());
        };
        let src = src.bytes();
        match place {
            Place::Copy { .. } if dst.len() == src.len() => dst.copy_from_slice(src),
            Place::Permute { block, map, .. } => {
                for (c, &o) in map.iter().enumerate() {
                    let (Some(d), Some(s)) = (
                        dst.get_mut(o * block..(o + 1) * block),
                        src.get(c * block..(c + 1) * block),
                    ) else {
                        return Err(lost());
                    };
                    d.copy_from_slice(s);
                }
            }
            _ => return Err(lost()),
        }
    }
    Ok(())
}

impl Resilient {
    /// Runs `f` with a scope for non-blocking collectives on this
    /// communicator (see the [module documentation](crate::NbScope) and
    /// the crate's). Returns once every request posted in it has
    /// completed and been agreed; the buffers then hold the results. Every
    /// rank opens the scope and posts the same requests in the same order.
    ///
    /// # Errors
    /// [`Error::Unsupported`] under [`Check::Log`]; `InvalidArgument` when
    /// a scope is already open on this communicator; [`Error::Internal`]
    /// when completing the requests nobody waited for met an error of the
    /// layer (a failed repair). The errors of the requests themselves are
    /// their [`NbRequest::wait`]'s.
    pub fn scope<'b, R>(&self, f: impl for<'x> FnOnce(&NbScope<'x, 'b>) -> R) -> Result<R, Error> {
        if self.config().check == Check::Log {
            return Err(Error::Unsupported(
                "non-blocking collectives under the log check (it has no agreement that would \
                 tell a rank whose request completed that another rank's failed); use the \
                 agree check"
                    .into(),
            ));
        }
        if self.nb_state().is_some() {
            return Err(pertinax::Error::InvalidArgument(
                "a non-blocking scope is already open on this communicator".into(),
            )
            .into());
        }
        self.set_nb_state(Some(0));
        let _open = Open(self);
        let mut chain = Chain::default();
        let (r, fin, deliveries) = pertinax::scope(|cs| {
            let inner = Inner {
                res: self,
                cs,
                tail: RefCell::new(Some(&mut chain)),
                slots: Cell::new(0),
                q: RefCell::new(Queue {
                    reqs: Vec::new(),
                    head: 0,
                    agreeing: None,
                    view: self.view(),
                    deliveries: Vec::new(),
                    broken: None,
                }),
            };
            let r = f(&NbScope {
                q: &inner,
                res: self,
            });
            let fin = inner.finish();
            let q = inner.q.into_inner();
            (r, fin, q.deliveries)
        });
        let delivered = deliver(chain, deliveries);
        fin?;
        delivered?;
        Ok(r)
    }
}
