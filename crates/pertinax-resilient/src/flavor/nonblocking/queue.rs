//! The requests of a non-blocking scope: each request's operation and
//! current attempt, posting an attempt on the current collective
//! communicator, and completion in posting order, with the agreement after
//! each request and, after a failure, the repair and the re-posting of
//! every request not agreed complete ([`Inner`], behind the type-erased
//! [`Post`] and [`Wait`]).

use pertinax::CommunicatorExt as _;
use std::cell::{Cell, RefCell};

use bytemuck::Pod;
use pertinax::{Comm, Op, PendingAgreement};

use super::buffers::{ByteBuf, Chain, Place, Slot};
#[cfg(doc)]
use super::{NbRequest, NbScope};
use crate::flavor::flat::View;
use crate::policy::Kind;
use crate::{Communicator, Error, Outcome, Resilient};

type CoreScope<'c, 'e> = pertinax::Scope<'c, 'e>;
type CoreRequest<'c> = pertinax::PendingOp<'c>;

/// Whether `PERTINAX_RESILIENT_TRACE` asks for a line per repair.
fn trace() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| {
        std::env::var_os(pertinax_wire::env::RESILIENT_TRACE).is_some_and(|v| v != "0")
    })
}

/// The typed part of a reduction: element type, input and operation.
pub(super) trait Reducer<'b> {
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

pub(super) struct Typed<'b, T> {
    pub(super) send: &'b [T],
    pub(super) op: Op<T>,
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
pub(super) enum Spec<'b> {
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

pub(super) struct Req<'c, 'b> {
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
pub(super) struct Queue<'c, 'b> {
    pub(super) reqs: Vec<Req<'c, 'b>>,
    /// The first request not agreed complete.
    pub(super) head: usize,
    /// The agreement on `reqs[head]`, started by a test.
    pub(super) agreeing: Option<PendingAgreement>,
    pub(super) view: View,
    /// Results to copy into the caller's buffers (slot, where).
    pub(super) deliveries: Vec<(usize, Place)>,
    /// Set when a repair failed: nothing can complete any more.
    pub(super) broken: Option<String>,
}

/// A scope's state, inside the core's scope.
pub(super) struct Inner<'r, 'c, 'e, 'b> {
    pub(super) res: &'r Resilient,
    pub(super) cs: &'c CoreScope<'c, 'e>,
    /// The list's last node (the next buffer's).
    pub(super) tail: RefCell<Option<&'c mut Chain<'b>>>,
    pub(super) slots: Cell<usize>,
    pub(super) q: RefCell<Queue<'c, 'b>>,
}

/// The type-erased side of a scope that posts (see [`NbScope`]).
pub(super) trait Post<'b> {
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
pub(super) trait Wait {
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
    pub(super) fn finish(&self) -> Result<(), Error> {
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
