//! Non-blocking collectives on a resilient communicator (`pertinax run
//! --resilient`): `MPI_Ibarrier`, `MPI_Ibcast`, `MPI_Ireduce`,
//! `MPI_Iallreduce`, `MPI_Igather`, `MPI_Iscatter`, `MPI_Iallgather`,
//! `MPI_Ialltoall`, `MPI_Iscan`, `MPI_Iexscan`, `MPI_Ireduce_scatter` and
//! `MPI_Ireduce_scatter_block` (and their large-count forms).
//!
//! Each is the blocking collective of the resilient communicator (the
//! same policies, repairs and outcomes), prepared at the call
//! (`ready.rs`: the arguments checked, the buffers described) and run
//! when the program completes it: at its `MPI_Wait`/`MPI_Test` (any form),
//! or before the next blocking collective, `MPI_Comm_dup` or
//! `MPI_Comm_split` on the same communicator. Collectives of one
//! communicator run in the order they were started, whatever the order
//! they are completed in, so every member runs the same sequence (MPI's
//! rule that all members start collectives in the same order).
//!
//! What this gives up: a started collective does not progress while the
//! program does other things; it runs, blocking, inside the call that
//! completes it. A program that completes it only after a point-to-point
//! exchange that needs another member to have completed it first waits
//! forever (MPI lets that program finish). An `MPI_Test` of one runs it
//! (so it blocks until every member has started it), never returning
//! "not done". Why not the core's own non-blocking collectives: the
//! resilient layer repairs and replays its blocking collectives in its
//! own order (`pertinax-resilient`); its non-blocking scope
//! (`Resilient::scope`) writes outputs only when the scope ends, which
//! MPI's requests, completed one by one, cannot wait for.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::ffi::c_int;
use std::rc::Rc;

use pertinax::{Backoff, Communicator, Completion, Outcome, Pending, PendingOp};
use pertinax_resilient::Error;

use crate::consts::*;
use crate::ready::Ready;
use crate::resilient::Res;
use crate::serial::Serial;

/// What a resilient communicator's collectives run on.
type Dyn = dyn Communicator<Error = Error>;

/// A collective ready to run (`ready.rs`).
type Run = Box<dyn FnOnce(&Dyn) -> Result<Outcome, Error>>;

/// A started collective: its communicator, then the operation until it
/// ran, then its result until the request takes it.
struct Slot {
    res: Res,
    run: Option<Run>,
    result: Option<Result<Outcome, Error>>,
}

type Shared = Rc<RefCell<Slot>>;

/// Per communicator (the address of its resilient communicator), its
/// started collectives not yet run, oldest first.
type Queues = Vec<(usize, VecDeque<Shared>)>;

/// The started collectives not yet run (the slots keep their
/// communicators alive, so an address is not reused while queued).
static QUEUES: Serial<RefCell<Queues>> = Serial::new(RefCell::new(Vec::new()));

fn key(r: &Res) -> usize {
    Rc::as_ptr(r).cast::<u8>() as usize
}

/// Runs `r`'s started collectives, oldest first: all of them, or (`upto`)
/// up to and including that one.
fn run_queued(r: &Res, upto: Option<&Shared>) {
    let k = key(r);
    loop {
        let next = QUEUES.with(|q| {
            let mut q = q.borrow_mut();
            let i = q.iter().position(|(kk, _)| *kk == k)?;
            let s = q[i].1.pop_front();
            if q[i].1.is_empty() {
                q.swap_remove(i);
            }
            s
        });
        let Some(s) = next else { return };
        // Not borrowed while it runs (it may take long; nothing it calls
        // comes back here, but a user reduction could call MPI).
        let (res, run) = {
            let mut b = s.borrow_mut();
            (b.res.clone(), b.run.take())
        };
        if let Some(run) = run {
            let got = run(&*res);
            s.borrow_mut().result = Some(got);
        }
        if upto.is_some_and(|u| Rc::ptr_eq(u, &s)) {
            return;
        }
    }
}

/// Runs every collective started on `r` and not yet run: before a
/// blocking collective, a dup or a split of it, so that every member
/// runs them in the same order.
pub(crate) fn flush(r: &Res) {
    if QUEUES.with(|q| q.borrow().is_empty()) {
        return;
    }
    run_queued(r, None);
}

/// Forgets the collectives nobody completed (`MPI_Finalize`: an erroneous
/// program's; they never run).
pub(crate) fn clear() {
    let gone = QUEUES.with(|q| std::mem::take(&mut *q.borrow_mut()));
    drop(gone);
}

/// A started collective as a request (see the module documentation).
struct Deferred {
    slot: Shared,
    active: bool,
}

impl Deferred {
    /// Runs it (and the ones started before it) unless it ran.
    fn complete(&self) {
        let (ran, res) = {
            let b = self.slot.borrow();
            (b.run.is_none(), b.res.clone())
        };
        if !ran {
            run_queued(&res, Some(&self.slot));
        }
    }
}

impl Pending for Deferred {
    type Output = Completion;
    type Error = Error;

    fn is_active(&self) -> bool {
        self.active
    }
    /// Runs it: a test completes it (see the module documentation).
    fn is_done(&mut self) -> bool {
        if self.active {
            self.complete();
        }
        true
    }
    fn has_failed(&mut self) -> bool {
        matches!(self.slot.borrow().result, Some(Err(_)))
    }
    fn take(&mut self) -> Result<Completion, Error> {
        if !self.active {
            return Err(pertinax::Error::RequestInactive.into());
        }
        self.complete();
        self.active = false;
        let got = self.slot.borrow_mut().result.take();
        got.unwrap_or_else(|| Err(Error::Internal("a started collective did not run".into())))
            .map(|outcome| Completion {
                status: None,
                outcome,
            })
    }
    fn step(&self, b: &mut Backoff) {
        b.snooze();
    }
    /// Collectives cannot be cancelled (false, as MPI says).
    fn cancel(&mut self) -> Result<bool, Error> {
        if !self.active {
            return Err(pertinax::Error::RequestInactive.into());
        }
        Ok(false)
    }
}

/// Starts `run` on resilient communicator `r` (handle `comm`, for its
/// error handler) and writes its request's handle to `req`.
pub(crate) fn start(
    r: &Res,
    run: impl Ready<Dyn>,
    comm: c_int,
    req: *mut c_int,
) -> Result<(), c_int> {
    if req.is_null() {
        return Err(MPI_ERR_ARG);
    }
    let slot = Rc::new(RefCell::new(Slot {
        res: r.clone(),
        run: Some(Box::new(run)),
        result: None,
    }));
    let k = key(r);
    QUEUES.with(|q| {
        let mut q = q.borrow_mut();
        match q.iter_mut().find(|(kk, _)| *kk == k) {
            Some((_, d)) => d.push_back(slot.clone()),
            None => q.push((k, VecDeque::from([slot.clone()]))),
        }
    });
    let op = PendingOp::new(Deferred { slot, active: true });
    crate::resilient_req::keep(Ok(op), comm, false, None, None, req)
}
