//! Non-blocking collectives on buffers lent without a scope
//! ([`Comm::icollective_lent`]): for a foreign caller, such as the C ABI's
//! `MPI_Iallreduce`, whose buffers stay valid until the request completes
//! by its own contract. The same schedules as the scoped forms.

use pertinax_os::lend::{Lent, LentMut};

use super::{algo, bad, uniform};
use crate::backend::CollKind;
use crate::comm::Comm;
use crate::error::Result;
use crate::op::ErasedOp;
use crate::request::Request;
use crate::types::Rank;

/// Which collective [`Comm::icollective_lent`] starts.
#[derive(Debug)]
pub enum LentCollective {
    /// `ibarrier` (no buffers: `inp` none, `out` empty).
    Barrier,
    /// `ibcast` of `out` from `root` (`inp` none).
    Bcast {
        /// Whose buffer is sent.
        root: Rank,
    },
    /// `iallreduce` of `inp` into `out` (equal lengths).
    Allreduce {
        /// The reduction.
        op: ErasedOp,
    },
    /// `ireduce` of `inp` into `out` at `root` (equal lengths there, `out`
    /// empty elsewhere).
    Reduce {
        /// The reduction.
        op: ErasedOp,
        /// Who gets the result.
        root: Rank,
    },
    /// `iallgather` of `inp` into `out` (`size` parts).
    Allgather,
    /// `ialltoall` of `inp` (`size` parts) into `out` (as long).
    Alltoall,
}

impl Comm {
    /// Starts a non-blocking collective on lent buffers.
    ///
    /// # Errors
    /// As the scoped form's (`InvalidRank` for a bad root,
    /// `InvalidArgument` for lengths that do not fit), at once; a failure
    /// is the request's result.
    pub fn icollective_lent(
        &self,
        which: LentCollective,
        inp: Option<Lent>,
        out: LentMut,
    ) -> Result<Request<'static>> {
        let n = self.size();
        let in_len = inp.as_ref().map_or(0, Lent::len);
        let out_len = out.len();
        let k = match which {
            LentCollective::Barrier => {
                self.start_lent(None, out, None, CollKind::Barrier, |b, _, _| {
                    algo::barrier(b)
                })?
            }
            LentCollective::Bcast { root } => {
                let root = self.check_root(root)?;
                self.start_lent(None, out, None, CollKind::Bcast { root }, |b, _, o| {
                    algo::bcast(b, o, out_len, root)
                })?
            }
            LentCollective::Allreduce { op } => {
                let elem = op.elem_size().max(1);
                if in_len != out_len || !in_len.is_multiple_of(elem) {
                    return Err(bad(
                        "allreduce",
                        format!(
                            "send {in_len} and receive {out_len} bytes of {elem}-byte elements"
                        ),
                    ));
                }
                let count = in_len / elem;
                self.start_lent(inp, out, Some(op), CollKind::Allreduce, |b, i, o| {
                    algo::allreduce(b, i, o, count, elem)
                })?
            }
            LentCollective::Reduce { op, root } => {
                let root = self.check_root(root)?;
                let elem = op.elem_size().max(1);
                let at_root = self.rank().0 as u32 == root;
                if !in_len.is_multiple_of(elem) || (at_root && out_len != in_len) {
                    return Err(bad(
                        "reduce",
                        format!(
                            "send {in_len} and receive {out_len} bytes of {elem}-byte elements"
                        ),
                    ));
                }
                self.start_lent(inp, out, Some(op), CollKind::Reduce { root }, |b, i, o| {
                    algo::reduce(b, i, o, in_len, elem, root)
                })?
            }
            LentCollective::Allgather => {
                if out_len != n * in_len {
                    return Err(bad(
                        "allgather",
                        format!("receive holds {out_len} bytes, {n} × {in_len} needed"),
                    ));
                }
                let (lens, offs) = uniform(n, in_len);
                self.start_lent(
                    inp,
                    out,
                    None,
                    CollKind::Allgather { len: in_len },
                    |b, i, o| algo::allgatherv(b, i, o, &lens, &offs),
                )?
            }
            LentCollective::Alltoall => {
                if in_len != out_len || !in_len.is_multiple_of(n) {
                    return Err(bad(
                        "alltoall",
                        format!("send {in_len} and receive {out_len} bytes over {n} ranks"),
                    ));
                }
                let (lens, offs) = uniform(n, in_len / n);
                self.start_lent(
                    inp,
                    out,
                    None,
                    CollKind::Alltoall { len: lens[0] },
                    |b, i, o| algo::alltoallv(b, i, o, &lens, &offs, &lens, &offs),
                )?
            }
        };
        Ok(Request::new(self.inner.rt.clone(), k))
    }
}
