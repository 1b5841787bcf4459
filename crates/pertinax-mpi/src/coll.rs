//! MPI's own collectives for the MPI backend ([`OwnCollectives::start_coll`](crate::backend::OwnCollectives::start_coll)):
//! every collective of the public API, blocking and non-blocking, as the
//! MPI call of the same name on the communicator's collective MPI
//! communicator (context `ctx + 1`), so that the cluster's tuned
//! algorithms run.
//!
//! - Data movement is in `MPI_BYTE`s. Reductions: a built-in operation on
//!   a primitive integer maps to MPI's (`MPI_SUM`, `MPI_MIN`, `MPI_BAND`,
//!   `MPI_LAND`, ... on `MPI_INT32_T`, `MPI_UINT64_T`, ...), except `sum`
//!   on 8- and 16-bit integers (Open MPI 5.0's vectorized `MPI_SUM` on
//!   them saturates; pertinax's wraps); on `f32` / `f64` only `sum` and
//!   `prod` do (`MPI_FLOAT`, `MPI_DOUBLE`): pertinax's float `min`/`max`
//!   are IEEE 754-2019 `minimum`/`maximum` (NaN propagates, -0.0 < +0.0),
//!   which MPI's are not. Everything else (those, `minloc`/`maxloc`, user
//!   operations, user element types)
//!   runs the Rust operation through `MPI_Op_create` (commutativity passed
//!   through) on a contiguous datatype of the element's bytes. MPI applies
//!   a non-commutative operation in rank order, so its result is the
//!   native backend's for an associative operation.
//! - Float `sum`/`prod` group as MPI's algorithm does: the result may
//!   differ in the last bits from the native backend's (whose fixed
//!   grouping makes it the same at every rank and in every run); MPI does
//!   not promise that every rank gets the same bits.
//! - A blocking call is MPI's blocking one (`MPI_Allreduce`,
//!   [`Mpi::run_own_coll`]; a barrier, bcast, or reduce, allreduce or
//!   scan by a predefined operation with nothing of ours pending goes
//!   straight there, with no allocation: [`sys::coll_now`]) and a
//!   non-blocking call MPI's non-blocking one
//!   (`MPI_Iallreduce`) behind a request key: MPI never matches one with
//!   the other, and every member makes the same call. Inside a blocking
//!   call, MPI's progress runs this backend's progress round through the
//!   hook ([`sys::with_progress`]) whenever something of its own is pending
//!   (an unmatched receive, which only this backend matches, so a peer's
//!   large send to it would otherwise wait forever; a task; an agreement).
//!   An MPI without the hook gets the non-blocking form and a wait for
//!   every call, and so does `allgatherv` everywhere (Open MPI 5.0.11's
//!   blocking one reports success without data after a failure:
//!   `pertinax-mpi-sys/checks/blocking_after_failure.c`). A non-blocking
//!   collective completes by `MPI_Test` on progress rounds, or, when the
//!   caller waits for it and this backend has nothing else to progress, by
//!   `MPI_Wait`. Blocking forms matter for speed: in C, `MPI_Iallreduce` +
//!   `MPI_Wait` is 1.55× `MPI_Allreduce` at 8 ranks, and one finished
//!   non-blocking collective leaves libnbc's progress function in every
//!   later MPI call (`pertinax-mpi-sys/checks/allreduce_forms.c`,
//!   `recv_cost.c`).
//! - Errors: ULFM's classes as for point-to-point (`ProcFailed` with the
//!   failed members known, `Revoked`). Open MPI fails every collective on a
//!   communicator with a failed member, as the native backend does; like
//!   there, a rank that completed a collective before it heard of a failure
//!   may return success.

use std::rc::Rc;

use pertinax_mpi_sys::{
    self as sys, Args, Builtin, CollKind as K, Input, Layout, Outcome, Prim, RecvData, Reduction,
    SendData,
};

use super::{error_of, Mpi, Slot};
use crate::backend::{Coll, CollKind, CollOut, ReqKey};
use crate::error::{Error, Result};
use crate::op::{ErasedOp, Scalar};
use crate::types::{Rank, Status, Tag};

/// A collective in flight.
#[derive(Debug)]
pub(super) struct Running {
    op: sys::Coll,
    comm: sys::Comm,
    rank: u32,
}

impl Running {
    /// The outcome once MPI is done, `None` while it runs.
    pub(super) fn test(&mut self) -> Option<Result<Status>> {
        let out = self.op.test()?;
        Some(self.outcome(out))
    }

    /// Waits for the outcome inside MPI (`MPI_Wait`).
    fn wait(&mut self) -> Result<Status> {
        let out = self.op.wait();
        self.outcome(out)
    }

    fn outcome(&self, out: Outcome) -> Result<Status> {
        match out {
            Outcome::Done(_) => Ok(Status {
                source: Rank(self.rank as i32),
                tag: Tag(0),
                len: 0,
            }),
            Outcome::Failed(c) => Err(error_of(c, Some(self.comm), None)),
            Outcome::Panicked => Err(Error::InvalidArgument(
                "the user reduction operation panicked inside an MPI collective".into(),
            )),
        }
    }
}

fn prim(s: Scalar) -> Prim {
    match s {
        Scalar::I8 => Prim::I8,
        Scalar::U8 => Prim::U8,
        Scalar::I16 => Prim::I16,
        Scalar::U16 => Prim::U16,
        Scalar::I32 => Prim::I32,
        Scalar::U32 => Prim::U32,
        Scalar::I64 => Prim::I64,
        Scalar::U64 => Prim::U64,
        Scalar::F32 => Prim::F32,
        Scalar::F64 => Prim::F64,
    }
}

/// How MPI runs `op` (see the module documentation).
fn reduction(op: &ErasedOp) -> Reduction {
    let (name, scalar) = op.builtin();
    let b = match name {
        "sum" => Some(Builtin::Sum),
        "prod" => Some(Builtin::Prod),
        "min" => Some(Builtin::Min),
        "max" => Some(Builtin::Max),
        "band" => Some(Builtin::Band),
        "bor" => Some(Builtin::Bor),
        "bxor" => Some(Builtin::Bxor),
        "land" => Some(Builtin::Land),
        "lor" => Some(Builtin::Lor),
        "lxor" => Some(Builtin::Lxor),
        _ => None,
    };
    let narrow = |s: Scalar| matches!(s, Scalar::I8 | Scalar::U8 | Scalar::I16 | Scalar::U16);
    match (b, scalar) {
        // Open MPI 5's vectorized `MPI_SUM` on 8- and 16-bit integers
        // saturates (its op/avx component); pertinax's sum wraps.
        (Some(Builtin::Sum), Some(s)) if narrow(s) => user(op),
        (Some(b @ (Builtin::Sum | Builtin::Prod)), Some(s)) => Reduction::Builtin(prim(s), b),
        (Some(b), Some(s)) if !matches!(s, Scalar::F32 | Scalar::F64) => {
            Reduction::Builtin(prim(s), b)
        }
        _ => user(op),
    }
}

/// `op` as a user operation of MPI's (`MPI_Op_create`).
fn user(op: &ErasedOp) -> Reduction {
    let op = op.clone();
    Reduction::User {
        elem: op.elem_size(),
        commutative: op.is_commutative(),
        // MPI's order: inout = in ⊕ inout. The lengths are whole elements
        // (MPI passes whole elements of the datatype).
        f: Rc::new(move |inout: &mut [u8], inp: &[u8]| {
            let _ = op.combine_bytes(inout, inp, false);
        }),
    }
}

fn too_big() -> Error {
    Error::Unsupported {
        feature: "collective blocks of 2^31 or more elements on the MPI backend",
    }
}

impl Mpi {
    /// Waits for the collective `k` inside MPI (`MPI_Wait`, no polling
    /// loop) when nothing else needs this backend's progress meanwhile: no
    /// unmatched receive (only this backend matches them) and no task.
    /// `None` (the caller polls) otherwise, or if `k` is not a collective.
    pub(super) fn wait_own_coll(&self, k: ReqKey) -> Option<Result<Status>> {
        if !self.posted.borrow().is_empty() {
            return None;
        }
        let mut slab = self.slab.borrow_mut();
        if slab.iter().any(|e| matches!(e.1, Slot::Task(_))) {
            return None;
        }
        let e = slab.get_mut(k.idx as usize)?;
        if e.0 != k.gen {
            return None;
        }
        let Slot::Coll { run, .. } = &mut e.1 else {
            return None;
        };
        let r = run.wait();
        e.1 = Slot::Free;
        drop(slab);
        self.free.borrow_mut().push(k.idx);
        Some(r)
    }

    /// Starts `c` as MPI's own collective (see the module documentation).
    ///
    /// # Errors
    /// `CommFreed` (or why the communicator could not be made), and
    /// `Unsupported` for a block MPI's `int` counts cannot express. A
    /// failure of MPI's call is the request's outcome.
    pub(super) fn start_own_coll(&self, c: Coll) -> Result<ReqKey> {
        let (args, comm, rank) = self.own_args(c, false)?;
        Ok(match sys::Coll::start(args) {
            Ok(op) => {
                let k = self.insert(Slot::Coll {
                    run: Box::new(Running { op, comm, rank }),
                    forgotten: false,
                });
                self.poll(k.idx);
                k
            }
            Err(code) => self.done(Err(error_of(code, Some(comm), None))),
        })
    }

    /// Runs `c` as MPI's blocking collective (`MPI_Allreduce`, ...) when
    /// this process has MPI's progress hook ([`sys::with_progress`]): while
    /// something of this backend's own is pending, the hook moves it
    /// inside MPI's call, so a peer that waits for it (a large send to an
    /// unmatched receive of ours, a schedule's step, an agreement's)
    /// reaches the collective. Without the hook (another MPI), the
    /// non-blocking form and a wait, as [`Mpi::start_own_coll`]: the choice
    /// is the same at every member, since it depends only on the library.
    pub(super) fn run_own_coll(&self, mut c: Coll) -> Result<Status> {
        // Open MPI 5.0.11's blocking `MPI_Allgatherv` on a communicator
        // with a failed member returns `MPI_SUCCESS` at every survivor and
        // writes nothing, its own block included; `MPI_Iallgatherv` fails
        // with `MPIX_ERR_PROC_FAILED` (`pertinax-mpi-sys/checks/
        // blocking_after_failure.c`). The choice depends on the kind only,
        // so it is the same at every member.
        let blocking_broken = matches!(c.kind, CollKind::Allgatherv { .. });
        if !self.hook || blocking_broken {
            let k = self.start_own_coll(c)?;
            return crate::backend::Backend::wait(self, k);
        }
        if let Some(r) = self.coll_now(&mut c) {
            return r;
        }
        let (args, comm, rank) = self.own_args(c, true)?;
        // No borrow of this backend's cells is held across the call.
        let started = if self.quiet() {
            sys::Coll::start(args)
        } else {
            sys::with_progress(&|| self.round(), || sys::Coll::start(args))
        };
        match started {
            Ok(op) => {
                let mut run = Running { op, comm, rank };
                match run.test() {
                    Some(r) => r,
                    None => run.wait(),
                }
            }
            Err(code) => Err(error_of(code, Some(comm), None)),
        }
    }

    /// `c` straight through MPI's blocking call ([`sys::coll_now`]: no
    /// argument block, no allocation, no request) when it is a barrier, a
    /// bcast, or a reduce, allreduce or scan by one of MPI's predefined
    /// operations, into the caller's buffer, and nothing of this backend's
    /// own is pending (so MPI's progress need not run ours); `None`, with
    /// nothing done, for [`Mpi::run_own_coll`]'s general path.
    fn coll_now(&self, c: &mut Coll) -> Option<Result<Status>> {
        let (kind, root) = match c.kind {
            CollKind::Barrier => (K::Barrier, 0),
            CollKind::Bcast { root } => (K::Bcast, root),
            CollKind::Reduce { root } => (K::Reduce, root),
            CollKind::Allreduce => (K::Allreduce, 0),
            CollKind::Scan => (K::Scan, 0),
            _ => return None,
        };
        let (prim, op) = match c.op.as_ref().map(reduction) {
            None => (Prim::Byte, None),
            Some(Reduction::Builtin(p, b)) => (p, Some(b)),
            Some(_) => return None,
        };
        let CollOut::Lent(out) = &mut c.out else {
            return None;
        };
        if !self.quiet() {
            return None;
        }
        let (comm, rank) = self.comm(c.ctx)?;
        let send = c.inp.as_ref().map(|l| l.as_slice());
        // In place at a reduce's non-root: MPI's form passes the buffer as
        // the input (`own_args`), which this call does not.
        if send.is_none() && kind == K::Reduce && rank != root {
            return None;
        }
        let len = send.map_or(out.len(), <[u8]>::len);
        let count = len / prim.size();
        // An output shorter than the count (a reduce's non-root may pass
        // none, and MPI ignores it there): the general path.
        // So is a count MPI's `int` cannot hold (`Unsupported` there).
        if count * prim.size() > out.len() || i32::try_from(count).is_err() {
            return None;
        }
        Some(
            match sys::coll_now(
                kind,
                send,
                out.as_mut_slice(),
                count,
                prim,
                op,
                root as i32,
                comm,
            ) {
                Ok(()) => Ok(Status {
                    source: Rank(rank as i32),
                    tag: Tag(0),
                    len: 0,
                }),
                Err(code) => Err(error_of(code, Some(comm), None)),
            },
        )
    }

    /// MPI's arguments for `c` (see the module documentation), its
    /// collective communicator and this process's rank there.
    fn own_args(&self, c: Coll, blocking: bool) -> Result<(Args, sys::Comm, u32)> {
        let t = self.trio(c.ctx)?;
        let comm = t.comms[1];
        let me = t.rank as usize;
        let red = c.op.as_ref().map_or(Reduction::None, reduction);
        let elem = red.elem();
        let el = |b: usize| -> Result<i32> {
            i32::try_from(b.checked_div(elem).unwrap_or(0)).map_err(|_| too_big())
        };
        let els = |v: &[usize]| -> Result<Vec<i32>> { v.iter().map(|&b| el(b)).collect() };
        let mut out = match c.out {
            CollOut::Lent(l) => RecvData::Lent(l),
            CollOut::Scratch(n) => RecvData::Owned(vec![0u8; n].into_boxed_slice()),
        };
        let out_len = match &out {
            RecvData::Lent(l) => l.len(),
            RecvData::Owned(b) => b.len(),
        };
        let mut send = match c.inp {
            Some(l) => Input::Buf(SendData::Lent(l)),
            None => Input::InPlace,
        };
        let in_len = match &send {
            Input::Buf(SendData::Lent(l)) => l.len(),
            Input::Buf(SendData::Owned(b)) => b.len(),
            Input::InPlace | Input::Output => out_len,
        };
        let mut layout = Layout::default();
        let mut root = 0u32;
        let mut count = 0;
        let kind = match c.kind {
            CollKind::Barrier => K::Barrier,
            CollKind::Bcast { root: r } => {
                root = r;
                count = el(out_len)?;
                K::Bcast
            }
            CollKind::Reduce { root: r } => {
                root = r;
                count = el(in_len)?;
                if matches!(send, Input::InPlace) && me != r as usize {
                    // In place at a non-root: the buffer is the input only.
                    send = Input::Output;
                }
                K::Reduce
            }
            CollKind::Allreduce => {
                count = el(in_len)?;
                K::Allreduce
            }
            CollKind::Scan => {
                count = el(in_len)?;
                K::Scan
            }
            CollKind::Exscan => {
                count = el(in_len)?;
                if me == 0 {
                    // Rank 0's output is left as it was (MPI leaves it
                    // undefined): it gets scratch.
                    out = RecvData::Owned(vec![0u8; out_len].into_boxed_slice());
                }
                K::Exscan
            }
            CollKind::ReduceScatter { lens } => {
                layout.rcounts = els(&lens)?;
                K::ReduceScatter
            }
            CollKind::Gather { root: r, len } => {
                root = r;
                count = el(len)?;
                K::Gather
            }
            CollKind::Gatherv {
                root: r,
                lens,
                offs,
            } => {
                root = r;
                count = el(lens.get(me).copied().unwrap_or(0))?;
                layout.rcounts = els(&lens)?;
                layout.rdispls = els(&offs)?;
                K::Gatherv
            }
            CollKind::Scatter { root: r, len } => {
                root = r;
                count = el(len)?;
                K::Scatter
            }
            CollKind::Scatterv {
                root: r,
                lens,
                offs,
            } => {
                root = r;
                count = el(lens.get(me).copied().unwrap_or(0))?;
                layout.scounts = els(&lens)?;
                layout.sdispls = els(&offs)?;
                K::Scatterv
            }
            CollKind::Allgather { len } => {
                count = el(len)?;
                K::Allgather
            }
            CollKind::Allgatherv { lens, offs } => {
                count = el(lens.get(me).copied().unwrap_or(0))?;
                layout.rcounts = els(&lens)?;
                layout.rdispls = els(&offs)?;
                K::Allgatherv
            }
            CollKind::Alltoall { len } => {
                count = el(len)?;
                K::Alltoall
            }
            CollKind::Alltoallv { sl, so, rl, ro } => {
                layout.scounts = els(&sl)?;
                layout.sdispls = els(&so)?;
                layout.rcounts = els(&rl)?;
                layout.rdispls = els(&ro)?;
                K::Alltoallv
            }
        };
        let args = Args {
            kind,
            blocking,
            send,
            recv: out,
            count: usize::try_from(count).unwrap_or(0),
            layout,
            reduction: red,
            root: root as i32,
            comm,
        };
        Ok((args, comm, t.rank))
    }
}
