//! MPI's own collectives ([`Coll`]), blocking or non-blocking, with the
//! buffers they use owned until MPI is done (as [`crate::Op`] does for
//! point-to-point), and reductions by MPI's predefined operations or by a
//! Rust function ([`Reduction::User`], through `MPI_Op_create`).
//!
//! A user operation gets its own committed datatype (`MPI_Type_contiguous`
//! of the element's bytes) for the length of one collective: the C
//! trampoline (`shim/pxm_coll.c`) passes MPI's datatype argument back here,
//! and the datatype names the Rust function in a per-thread table. So
//! several non-blocking collectives with different user operations can be
//! in flight at once. MPI calls the function only from inside MPI calls of
//! the thread that started the collective (`MPI_THREAD_FUNNELED`).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::rc::Rc;

use crate::{check, ffi, Code, Comm, RecvData, Request, Result, SendData, Status};

/// Which collective (the shim's `PXM_*` values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum CollKind {
    /// `MPI_Barrier` (`MPI_Ibarrier` non-blocking).
    Barrier = 0,
    /// `MPI_Bcast` (`MPI_Ibcast` non-blocking).
    Bcast = 1,
    /// `MPI_Reduce` (`MPI_Ireduce` non-blocking).
    Reduce = 2,
    /// `MPI_Allreduce` (`MPI_Iallreduce` non-blocking).
    Allreduce = 3,
    /// `MPI_Scan` (`MPI_Iscan` non-blocking).
    Scan = 4,
    /// `MPI_Exscan` (`MPI_Iexscan` non-blocking).
    Exscan = 5,
    /// `MPI_Reduce_scatter` (`MPI_Ireduce_scatter` non-blocking).
    ReduceScatter = 6,
    /// `MPI_Gather` (`MPI_Igather` non-blocking).
    Gather = 7,
    /// `MPI_Gatherv` (`MPI_Igatherv` non-blocking).
    Gatherv = 8,
    /// `MPI_Scatter` (`MPI_Iscatter` non-blocking).
    Scatter = 9,
    /// `MPI_Scatterv` (`MPI_Iscatterv` non-blocking).
    Scatterv = 10,
    /// `MPI_Allgather` (`MPI_Iallgather` non-blocking).
    Allgather = 11,
    /// `MPI_Allgatherv` (`MPI_Iallgatherv` non-blocking).
    Allgatherv = 12,
    /// `MPI_Alltoall` (`MPI_Ialltoall` non-blocking).
    Alltoall = 13,
    /// `MPI_Alltoallv` (`MPI_Ialltoallv` non-blocking).
    Alltoallv = 14,
}

/// MPI's predefined element types the backend maps Rust scalars to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum Prim {
    /// `MPI_BYTE` (raw bytes).
    Byte = 0,
    /// `MPI_INT8_T`.
    I8 = 1,
    /// `MPI_UINT8_T`.
    U8 = 2,
    /// `MPI_INT16_T`.
    I16 = 3,
    /// `MPI_UINT16_T`.
    U16 = 4,
    /// `MPI_INT32_T`.
    I32 = 5,
    /// `MPI_UINT32_T`.
    U32 = 6,
    /// `MPI_INT64_T`.
    I64 = 7,
    /// `MPI_UINT64_T`.
    U64 = 8,
    /// `MPI_FLOAT`.
    F32 = 9,
    /// `MPI_DOUBLE`.
    F64 = 10,
}

impl Prim {
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Prim::Byte | Prim::I8 | Prim::U8 => 1,
            Prim::I16 | Prim::U16 => 2,
            Prim::I32 | Prim::U32 | Prim::F32 => 4,
            Prim::I64 | Prim::U64 | Prim::F64 => 8,
        }
    }
}

/// MPI's predefined reduction operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum Builtin {
    /// `MPI_SUM`.
    Sum = 0,
    /// `MPI_PROD`.
    Prod = 1,
    /// `MPI_MIN`.
    Min = 2,
    /// `MPI_MAX`.
    Max = 3,
    /// `MPI_BAND` (bitwise and).
    Band = 4,
    /// `MPI_BOR` (bitwise or).
    Bor = 5,
    /// `MPI_BXOR` (bitwise exclusive or).
    Bxor = 6,
    /// `MPI_LAND` (logical and).
    Land = 7,
    /// `MPI_LOR` (logical or).
    Lor = 8,
    /// `MPI_LXOR` (logical exclusive or).
    Lxor = 9,
}

/// A user combining function on bytes: `f(inout, in)` computes
/// `inout = in ⊕ inout` elementwise (MPI's order: `in` comes from lower
/// ranks). The slices hold whole elements and need not be aligned.
pub type UserFn = Rc<dyn Fn(&mut [u8], &[u8])>;

/// How a reducing collective combines.
#[derive(Clone)]
pub enum Reduction {
    /// No reduction (data movement only): bytes.
    None,
    /// A predefined operation on a predefined type.
    Builtin(Prim, Builtin),
    /// A Rust function on `elem`-byte elements.
    User {
        /// Bytes per element.
        elem: usize,
        /// Whether MPI may combine in any order (`MPI_Op_create`'s
        /// `commute`).
        commutative: bool,
        /// The combining function.
        f: UserFn,
    },
}

impl std::fmt::Debug for Reduction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reduction::None => f.write_str("None"),
            Reduction::Builtin(p, b) => write!(f, "Builtin({p:?}, {b:?})"),
            Reduction::User {
                elem, commutative, ..
            } => write!(f, "User {{ elem: {elem}, commutative: {commutative} }}"),
        }
    }
}

impl Reduction {
    /// Bytes per element of the datatype the collective uses.
    pub fn elem(&self) -> usize {
        match self {
            Reduction::None => 1,
            Reduction::Builtin(p, _) => p.size(),
            Reduction::User { elem, .. } => *elem,
        }
    }
}

/// Counts and displacements (in elements) of the v-collectives; empty
/// where a collective does not use them. Kept by the [`Coll`] until MPI
/// is done (a non-blocking v-collective reads them until it completes).
#[derive(Clone, Debug, Default)]
pub struct Layout {
    /// Elements sent to each rank (`sendcounts`).
    pub scounts: Vec<i32>,
    /// Where each rank's elements start in the send buffer (`sdispls`).
    pub sdispls: Vec<i32>,
    /// Elements received from each rank (`recvcounts`).
    pub rcounts: Vec<i32>,
    /// Where each rank's elements go in the receive buffer (`rdispls`).
    pub rdispls: Vec<i32>,
}

/// One registered user operation: its function and whether it panicked.
struct Entry {
    elem: usize,
    f: UserFn,
    panicked: Rc<Cell<bool>>,
}

thread_local! {
    /// User operations in flight, by their datatype handle.
    static USER: RefCell<HashMap<isize, Entry>> = RefCell::new(HashMap::new());
}

/// The function the C trampoline calls for every user operation.
extern "C" fn user_combine(inp: *const c_void, inout: *mut c_void, len: c_int, dtype: isize) {
    let Some((elem, f, panicked)) = USER.with(|u| {
        u.borrow()
            .get(&dtype)
            .map(|e| (e.elem, e.f.clone(), e.panicked.clone()))
    }) else {
        return;
    };
    let n = usize::try_from(len).unwrap_or(0).saturating_mul(elem);
    if n == 0 || inp.is_null() || inout.is_null() {
        return;
    }
    // SAFETY: MPI calls the operation with two buffers of `len` elements
    // of `dtype`, which is `elem` contiguous bytes (made by
    // `pxm_type_bytes`); `inout` is MPI's to write and distinct from `inp`.
    let (a, b) = unsafe {
        (
            std::slice::from_raw_parts_mut(inout.cast::<u8>(), n),
            std::slice::from_raw_parts(inp.cast::<u8>(), n),
        )
    };
    // A panic must not unwind into C: record it, the collective reports it.
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(a, b))).is_err() {
        panicked.set(true);
    }
}

/// A user operation's datatype and `MPI_Op`, freed on drop.
#[derive(Debug)]
struct UserOp {
    dtype: isize,
    op: isize,
    panicked: Rc<Cell<bool>>,
}

impl UserOp {
    fn new(elem: usize, commutative: bool, f: UserFn) -> Result<UserOp> {
        let bytes = c_int::try_from(elem).map_err(|_| Code(-1))?;
        let mut dtype: isize = 0;
        // SAFETY: writes `dtype`.
        check(unsafe { ffi::pxm_type_bytes(bytes, &mut dtype) })?;
        let mut op: isize = 0;
        // SAFETY: `user_combine` has the signature the shim calls and lives
        // for the whole program; writes `op`.
        let rc =
            unsafe { ffi::pxm_user_op_create(user_combine, c_int::from(commutative), &mut op) };
        if let Err(c) = check(rc) {
            // SAFETY: the datatype made above, freed once.
            unsafe { ffi::pxm_type_free(&mut dtype) };
            return Err(c);
        }
        let panicked = Rc::new(Cell::new(false));
        USER.with(|u| {
            u.borrow_mut().insert(
                dtype,
                Entry {
                    elem,
                    f,
                    panicked: panicked.clone(),
                },
            )
        });
        Ok(UserOp {
            dtype,
            op,
            panicked,
        })
    }
}

impl Drop for UserOp {
    fn drop(&mut self) {
        USER.with(|u| u.borrow_mut().remove(&self.dtype));
        if crate::finalized() {
            return;
        }
        // SAFETY: the handles made in `new`, freed once (after the
        // collective using them completed: `Coll` drops this last).
        unsafe {
            ffi::pxm_op_free(&mut self.op);
            ffi::pxm_type_free(&mut self.dtype);
        }
    }
}

/// How a collective ended.
#[derive(Debug)]
pub enum Outcome {
    /// Done; the receive buffer is given back.
    Done(RecvData),
    /// MPI's error code.
    Failed(Code),
    /// A user operation panicked (the result is unspecified).
    Panicked,
}

/// A collective in flight (or completed at once, if blocking), owning
/// its buffers, layout and user operation until MPI is done. Dropping a
/// pending one waits for it (collectives cannot be cancelled).
#[derive(Debug)]
pub struct Coll {
    req: Request,
    send: Option<SendData>,
    recv: Option<RecvData>,
    _layout: Box<Layout>,
    user: Option<UserOp>,
    /// The error of a blocking call.
    early: Option<Code>,
}

/// A collective's input.
#[derive(Debug)]
pub enum Input {
    /// A buffer of its own.
    Buf(SendData),
    /// `MPI_IN_PLACE`: the input is in the receive buffer.
    InPlace,
    /// The receive buffer is the input, and the call writes nothing (a
    /// reduce at a non-root, in place): it is passed as the send buffer,
    /// with a null receive buffer.
    Output,
}

/// The arguments of [`Coll::start`].
#[derive(Debug)]
pub struct Args {
    /// Which collective.
    pub kind: CollKind,
    /// The MPI call (`MPI_Allreduce`) rather than its non-blocking form.
    pub blocking: bool,
    /// The send side: a buffer, in place, or the receive buffer as input.
    pub send: Input,
    /// The receive buffer (owned until MPI is done).
    pub recv: RecvData,
    /// The element count of the call's scalar count argument.
    pub count: usize,
    /// The v-collectives' counts and displacements.
    pub layout: Layout,
    /// How a reducing collective combines ([`Reduction::None`] otherwise).
    pub reduction: Reduction,
    /// The root's rank, for rooted collectives (ignored otherwise).
    pub root: i32,
    /// The communicator the collective runs on.
    pub comm: Comm,
}

/// Addresses for empty buffers (nothing is read or written there).
static EMPTY_SEND: [u8; 1] = [0];
static EMPTY_RECV: [u8; 1] = [0];

impl Coll {
    /// Starts (or, blocking, runs) the collective.
    ///
    /// # Errors
    /// The MPI's code when the call could not start (nothing is in flight;
    /// the buffers are dropped).
    pub fn start(a: Args) -> Result<Coll> {
        let count = c_int::try_from(a.count).map_err(|_| Code(-1))?;
        let (dtype, op, user) = match a.reduction {
            Reduction::None => (
                // SAFETY: constant.
                unsafe { ffi::pxm_datatype(Prim::Byte as c_int) },
                0,
                None,
            ),
            // SAFETY: constants.
            Reduction::Builtin(p, b) => unsafe {
                (ffi::pxm_datatype(p as c_int), ffi::pxm_op(b as c_int), None)
            },
            Reduction::User {
                elem,
                commutative,
                f,
            } => {
                let u = UserOp::new(elem, commutative, f)?;
                (u.dtype, u.op, Some(u))
            }
        };
        let layout = Box::new(a.layout);
        let mut recv = a.recv;
        let (sptr, rptr) = match &a.send {
            Input::Buf(s) => (s.span().0, recv.span().0),
            Input::InPlace => (std::ptr::null(), recv.span().0),
            Input::Output => (recv.span().0.cast_const(), std::ptr::null_mut()),
        };
        // Empty buffers get addresses of their own: an empty slice's
        // address is dangling (1 for bytes, which is Open MPI's
        // `MPI_IN_PLACE`), and two of them are equal (MPI refuses a send
        // buffer equal to the receive buffer).
        let empty_send = match &a.send {
            Input::Buf(s) => s.span().1 == 0,
            Input::Output => recv.span().1 == 0,
            Input::InPlace => false,
        };
        let sptr = if empty_send {
            EMPTY_SEND.as_ptr()
        } else {
            sptr
        };
        let rptr = if recv.span().1 == 0 && !rptr.is_null() {
            EMPTY_RECV.as_ptr().cast_mut()
        } else {
            rptr
        };
        let send = match a.send {
            Input::Buf(s) => Some(s),
            Input::InPlace | Input::Output => None,
        };
        let ptr = |v: &Vec<i32>| {
            if v.is_empty() {
                std::ptr::null()
            } else {
                v.as_ptr()
            }
        };
        let mut req: isize = 0;
        // SAFETY: the buffers and the layout move into the returned `Coll`,
        // which keeps them (heap memory that does not move) until MPI has
        // completed the request (see `Drop`); the counts arrays hold one
        // entry per rank for the kinds that read them (the backend checks
        // the layout); writes `req`.
        let rc = unsafe {
            ffi::pxm_coll(
                a.kind as c_int,
                c_int::from(a.blocking),
                sptr.cast(),
                rptr.cast(),
                count,
                ptr(&layout.scounts),
                ptr(&layout.sdispls),
                ptr(&layout.rcounts),
                ptr(&layout.rdispls),
                dtype,
                op,
                a.root,
                a.comm.0,
                &mut req,
            )
        };
        let early = check(rc).err();
        if let (Some(c), false) = (early, a.blocking) {
            return Err(c);
        }
        Ok(Coll {
            req: Request(req),
            send,
            recv: Some(recv),
            _layout: layout,
            user,
            early,
        })
    }

    /// The outcome once MPI is done with the collective, `None` while it
    /// runs.
    pub fn test(&mut self) -> Option<Outcome> {
        self.recv.as_ref()?;
        let err = if self.req.is_null() {
            self.early
        } else {
            match self.req.test() {
                Ok(None) => return None,
                Ok(Some(st)) => (st.error != 0).then_some(Code(st.error)),
                Err(c) => {
                    // Collectives have no pending-after-error state; wait
                    // until MPI lets go of the buffers.
                    let _ = self.req.wait();
                    Some(c)
                }
            }
        };
        Some(self.finish(err))
    }

    /// Waits for the collective's outcome.
    pub fn wait(&mut self) -> Outcome {
        if self.recv.is_none() {
            return Outcome::Failed(Code(-1));
        }
        let err = if self.req.is_null() {
            self.early
        } else {
            let st: Status = self.req.wait();
            (st.error != 0).then_some(Code(st.error))
        };
        self.finish(err)
    }

    fn finish(&mut self, err: Option<Code>) -> Outcome {
        self.send = None;
        let recv = self.recv.take();
        let panicked = self.user.as_ref().is_some_and(|u| u.panicked.get());
        self.user = None;
        match (err, panicked, recv) {
            (Some(c), _, _) => Outcome::Failed(c),
            (None, true, _) => Outcome::Panicked,
            (None, false, Some(r)) => Outcome::Done(r),
            (None, false, None) => Outcome::Failed(Code(-1)),
        }
    }
}

/// Runs a blocking collective with one count, no layout and a predefined
/// operation (or none) straight through MPI's call: what [`Coll::start`]
/// does for such a call, without moving the buffers into a [`Coll`], so
/// with no allocation and no request. `kind` is `Barrier`, `Bcast`,
/// `Reduce`, `Allreduce` or `Scan`; `send` is `None` for `MPI_IN_PLACE`
/// (not at a non-root of `Reduce`); `count` elements of `prim` fit in
/// `recv`, and in `send` if given.
///
/// # Errors
/// MPI's code, or `Code(-1)` (nothing called) for arguments outside that.
#[allow(clippy::too_many_arguments, reason = "MPI's own argument list")]
#[inline]
pub fn coll_now(
    kind: CollKind,
    send: Option<&[u8]>,
    recv: &mut [u8],
    count: usize,
    prim: Prim,
    op: Option<Builtin>,
    root: i32,
    comm: Comm,
) -> Result<()> {
    let bytes = count.checked_mul(prim.size()).ok_or(Code(-1))?;
    let fits = bytes <= recv.len() && send.is_none_or(|s| bytes <= s.len());
    let simple = matches!(
        kind,
        CollKind::Barrier
            | CollKind::Bcast
            | CollKind::Reduce
            | CollKind::Allreduce
            | CollKind::Scan
    );
    if !fits || !simple {
        return Err(Code(-1));
    }
    let count = c_int::try_from(count).map_err(|_| Code(-1))?;
    // Empty buffers get addresses of their own, as in `Coll::start`.
    let sptr = match send {
        None => std::ptr::null(),
        Some([]) => EMPTY_SEND.as_ptr(),
        Some(s) => s.as_ptr(),
    };
    let rptr = if recv.is_empty() {
        EMPTY_RECV.as_ptr().cast_mut()
    } else {
        recv.as_mut_ptr()
    };
    let mut req: isize = 0;
    // SAFETY: a blocking call (`blocking` = 1) with no layout arrays, of
    // the kinds above, which read at most `count` elements of `prim` from
    // `send` (or `recv` in place) and write at most that many to `recv`:
    // both checked to hold them; MPI is done with them when it returns.
    // `pxm_datatype`/`pxm_op` return constants; writes `req` (null).
    let rc = unsafe {
        ffi::pxm_coll(
            kind as c_int,
            1,
            sptr.cast(),
            rptr.cast(),
            count,
            std::ptr::null(),
            std::ptr::null(),
            std::ptr::null(),
            std::ptr::null(),
            ffi::pxm_datatype(prim as c_int),
            op.map_or(0, |b| ffi::pxm_op(b as c_int)),
            root,
            comm.0,
            &mut req,
        )
    };
    check(rc)
}

impl Drop for Coll {
    fn drop(&mut self) {
        if self.recv.is_some() && !self.req.is_null() && !crate::finalized() {
            let _ = self.req.wait();
        }
    }
}
