//! [`Logged`]: the communicator an iteration's body talks through. It
//! logs what the rank sends, drops the sends "into the future" after a
//! recovery, and serves the ranks behind the front line the logged
//! results of the collectives they missed.
//!
//! Every method is the plain communicator's, with these rules (the
//! paper's send wrapper, section 5, made generic):
//!
//! - **Sends** (blocking or not) are logged with the iteration, the
//!   destination and the tag, then sent, unless the destination restarted
//!   past this iteration after the last recovery: it already has the
//!   message, so the send completes at once without sending.
//! - **Receives** and probes name their source: an any-source receive
//!   is refused (its match order would have to be logged as an event, see
//!   the crate documentation).
//! - **Collectives** run on the plain communicator, and their result is
//!   logged; a rank that runs an iteration behind the front line (some
//!   rank finished it before the failure) gets the logged result from the
//!   lowest rank that finished it instead of taking part. `reduce`,
//!   `gather` and `scatter` run as `allreduce`, `allgather` and `bcast` so
//!   that every rank holds the result it may have to serve; `alltoall`
//!   runs as logged point-to-point messages.
//! - Creating communicators inside an iteration is refused.

use pertinax::CommunicatorExt as _;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Instant;

use pertinax::{
    Backoff, Comm, Communicator, Completion, ErasedOp, Error, Outcome, Pending, PendingOp, Rank,
    Scope, Source, Status, Tag, TagMatch, TAG_UB,
};

use crate::log::Log;
use crate::{LogCap, Mode, Stats};

/// The first tag the library keeps for itself (its own from `TAG_UB - 15`
/// up, and the checkpoints' below them): user tags must be below.
pub const FIRST_RESERVED_TAG: i32 = pertinax_checkpoint::FIRST_RESERVED_TAG;
/// Served collective results.
pub(crate) const SERVE_TAG: i32 = TAG_UB;
/// `alltoall`'s point-to-point messages.
const ALLTOALL_TAG: i32 = TAG_UB - 1;

/// The communicator of an iteration (see the [crate documentation](crate)).
#[derive(Debug)]
pub struct Logged {
    comm: Comm,
    mode: Mode,
    inner: RefCell<Inner>,
    /// Seconds in communication, shared with the pending operations
    /// handed out (their waits count too).
    comm_s: Rc<Cell<f64>>,
}

#[derive(Debug)]
struct Inner {
    /// The iteration being run.
    it: u64,
    /// Each rank's restart iteration at the last recovery (empty before
    /// any): a send of iteration `k` to rank `p` is dropped when
    /// `start[p] > k`.
    start: Vec<u64>,
    /// The front line: the largest of `start`.
    front: u64,
    log: Log,
    stats: Stats,
}

/// A pending operation of the plain communicator whose waits and tests
/// count as communication time.
struct Timed<'s> {
    op: PendingOp<'s, Error>,
    comm_s: Rc<Cell<f64>>,
}

impl Timed<'_> {
    fn time<R>(&self, t: Instant, r: R) -> R {
        self.comm_s
            .set(self.comm_s.get() + t.elapsed().as_secs_f64());
        r
    }
}

impl Pending for Timed<'_> {
    type Output = Completion;
    type Error = Error;

    fn is_active(&self) -> bool {
        self.op.is_active()
    }
    fn is_done(&mut self) -> bool {
        let t = Instant::now();
        let r = self.op.is_done();
        self.time(t, r)
    }
    fn has_failed(&mut self) -> bool {
        self.op.has_failed()
    }
    fn take(&mut self) -> Result<Completion, Error> {
        let t = Instant::now();
        let r = self.op.take();
        self.time(t, r)
    }
    fn step(&self, b: &mut Backoff) {
        let t = Instant::now();
        self.op.step(b);
        self.time(t, ());
    }
    fn cancel(&mut self) -> Result<bool, Error> {
        self.op.cancel()
    }
    fn wait_mut(&mut self) -> Result<Completion, Error> {
        let t = Instant::now();
        let r = self.op.wait_mut();
        self.time(t, r)
    }
}

/// A send that was not needed: complete at once.
#[derive(Debug)]
struct Done(bool);

impl Pending for Done {
    type Output = Completion;
    type Error = Error;

    fn is_active(&self) -> bool {
        self.0
    }
    fn is_done(&mut self) -> bool {
        true
    }
    fn has_failed(&mut self) -> bool {
        false
    }
    fn take(&mut self) -> Result<Completion, Error> {
        if std::mem::replace(&mut self.0, false) {
            Ok(Completion::default())
        } else {
            Err(Error::RequestInactive)
        }
    }
    fn step(&self, b: &mut Backoff) {
        b.snooze();
    }
    fn cancel(&mut self) -> Result<bool, Error> {
        Ok(false)
    }
}

fn refused(what: &str) -> Error {
    Error::InvalidArgument(format!("msglog: {what}"))
}

fn any_source() -> Error {
    refused(
        "an any-source receive or probe inside a logged iteration cannot be replayed (its \
         match order would have to be logged); name the source",
    )
}

impl Logged {
    pub(crate) fn new(comm: Comm, mode: Mode, cap: LogCap, at: u64) -> Logged {
        Logged {
            comm,
            mode,
            inner: RefCell::new(Inner {
                it: at,
                start: Vec::new(),
                front: 0,
                log: Log::new(cap, at),
                stats: Stats::default(),
            }),
            comm_s: Rc::new(Cell::new(0.0)),
        }
    }

    /// Seconds spent in communication through this communicator.
    pub(crate) fn comm_s(&self) -> f64 {
        self.comm_s.get()
    }

    fn timed_op<'s>(
        &self,
        op: Result<PendingOp<'s, Error>, Error>,
    ) -> Result<PendingOp<'s, Error>, Error> {
        Ok(PendingOp::new(Timed {
            op: op?,
            comm_s: self.comm_s.clone(),
        }))
    }

    /// The plain communicator underneath (changes at every recovery).
    pub fn comm(&self) -> &Comm {
        &self.comm
    }

    /// The iteration being run.
    pub fn iteration(&self) -> u64 {
        self.inner.borrow().it
    }

    pub(crate) fn set_comm(&mut self, comm: Comm) {
        self.comm = comm;
    }

    pub(crate) fn with_log<R>(&self, f: impl FnOnce(&mut Log) -> R) -> R {
        f(&mut self.inner.borrow_mut().log)
    }

    pub(crate) fn with_stats<R>(&self, f: impl FnOnce(&mut Stats) -> R) -> R {
        f(&mut self.inner.borrow_mut().stats)
    }

    /// After a recovery: every rank's restart iteration.
    pub(crate) fn set_start(&self, start: Vec<u64>) {
        let mut i = self.inner.borrow_mut();
        i.front = start.iter().copied().max().unwrap_or(0);
        i.start = start;
    }

    pub(crate) fn begin(&self, it: u64) {
        self.inner.borrow_mut().it = it;
    }

    pub(crate) fn commit(&self, it: u64) {
        self.inner.borrow_mut().log.commit(it);
    }

    fn logging(&self) -> bool {
        self.mode == Mode::Logged
    }

    /// Whether `dest` already has this iteration's messages.
    fn future(&self, dest: usize) -> bool {
        let i = self.inner.borrow();
        i.start.get(dest).is_some_and(|&s| s > i.it)
    }

    /// The rank that serves this iteration's collective results, when
    /// this rank runs it behind the front line.
    fn server(&self) -> Option<usize> {
        let i = self.inner.borrow();
        if i.it >= i.front {
            return None;
        }
        i.start.iter().position(|&s| s > i.it)
    }

    fn timed<R>(&self, f: impl FnOnce() -> R) -> R {
        let t = Instant::now();
        let r = f();
        self.comm_s
            .set(self.comm_s.get() + t.elapsed().as_secs_f64());
        r
    }

    fn check_tag(&self, tag: Tag) -> Result<(), Error> {
        if tag.0 >= FIRST_RESERVED_TAG {
            return Err(Error::InvalidArgument(format!(
                "msglog: tag {} is reserved for the library (user tags go up to {})",
                tag.0,
                FIRST_RESERVED_TAG - 1
            )));
        }
        Ok(())
    }

    fn check_dest(&self, dest: Rank) -> Result<usize, Error> {
        let n = self.comm.size();
        if dest.0 < 0 || dest.index() >= n {
            return Err(Error::InvalidRank {
                rank: dest,
                size: n,
            });
        }
        Ok(dest.index())
    }

    /// Logs a send; true when it must really be sent.
    fn log_send(&self, buf: &[u8], dest: usize, tag: Tag) -> bool {
        let me = self.comm.rank().index();
        if self.logging() && dest != me {
            let t = Instant::now();
            let mut i = self.inner.borrow_mut();
            let it = i.it;
            i.log.send(it, dest, tag.0, buf);
            i.stats.log_copy_s += t.elapsed().as_secs_f64();
        }
        !self.future(dest)
    }

    /// Runs a collective whose result (`out`, the same at every rank) is
    /// served to ranks behind the front line.
    fn collective(
        &self,
        out: &mut [u8],
        run: impl FnOnce(&mut [u8]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.collective_inner(out, run)?;
        // Logged whether it ran or was served: after a later failure this
        // rank may be the one that serves it.
        if self.logging() {
            let t = Instant::now();
            let mut i = self.inner.borrow_mut();
            let it = i.it;
            i.log.got(it, out);
            i.stats.log_copy_s += t.elapsed().as_secs_f64();
        }
        Ok(())
    }

    fn collective_inner(
        &self,
        out: &mut [u8],
        run: impl FnOnce(&mut [u8]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        if let Some(q) = self.server() {
            let len = self.timed(|| self.comm.recv(&mut *out, q, SERVE_TAG))?;
            let len = len.map_or(0, |st| st.len);
            if len != out.len() {
                return Err(refused(&format!(
                    "the logged result of a collective has {} bytes, this call expects {} \
                     (the iteration does not run the same collectives again: the kernel is \
                     not deterministic)",
                    len,
                    out.len()
                )));
            }
            return Ok(());
        }
        self.timed(|| run(&mut *out))
    }
}

fn same_len(what: &str, got: usize, want: usize) -> Result<(), Error> {
    if got != want {
        return Err(Error::InvalidArgument(format!(
            "msglog: {what}: buffer of {got} bytes, {want} expected"
        )));
    }
    Ok(())
}

impl Communicator for Logged {
    type Error = Error;

    fn rank(&self) -> Rank {
        self.comm.rank()
    }
    fn size(&self) -> usize {
        self.comm.size()
    }
    fn failed_ranks(&self) -> Vec<Rank> {
        Communicator::failed_ranks(&self.comm)
    }
    fn get_failed(&self) -> Result<pertinax::Group, Error> {
        Communicator::get_failed(&self.comm)
    }
    fn is_revoked(&self) -> bool {
        self.comm.is_revoked()
    }
    fn revoke(&self) -> Result<(), Error> {
        self.comm.revoke()
    }

    fn send_bytes(&self, buf: &[u8], dest: Rank, tag: Tag) -> Result<Outcome, Error> {
        self.check_tag(tag)?;
        let d = self.check_dest(dest)?;
        if self.log_send(buf, d, tag) {
            self.timed(|| Communicator::send_bytes(&self.comm, buf, dest, tag))?;
        }
        Ok(Outcome::default())
    }

    fn recv_bytes(
        &self,
        buf: &mut [u8],
        elem: usize,
        src: Source,
        tag: TagMatch,
    ) -> Result<Option<Status>, Error> {
        if src == Source::Any {
            return Err(any_source());
        }
        self.timed(|| Communicator::recv_bytes(&self.comm, buf, elem, src, tag))
    }

    fn probe(&self, src: Source, tag: TagMatch) -> Result<Option<Status>, Error> {
        if src == Source::Any {
            return Err(any_source());
        }
        self.timed(|| Communicator::probe(&self.comm, src, tag))
    }

    fn iprobe(&self, src: Source, tag: TagMatch) -> Result<Option<Status>, Error> {
        if src == Source::Any {
            return Err(any_source());
        }
        self.timed(|| Communicator::iprobe(&self.comm, src, tag))
    }

    fn isend_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        buf: &'s [u8],
        dest: Rank,
        tag: Tag,
    ) -> Result<PendingOp<'s, Error>, Error> {
        self.check_tag(tag)?;
        let d = self.check_dest(dest)?;
        if !self.log_send(buf, d, tag) {
            return Ok(PendingOp::new(Done(true)));
        }
        self.timed_op(self.timed(|| self.comm.isend_bytes(scope, buf, dest, tag)))
    }

    fn irecv_bytes<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [u8],
        elem: usize,
        src: Source,
        tag: TagMatch,
    ) -> Result<PendingOp<'s, Error>, Error> {
        if src == Source::Any {
            return Err(any_source());
        }
        self.timed_op(self.timed(|| self.comm.irecv_bytes(scope, buf, elem, src, tag)))
    }

    fn barrier(&self) -> Result<Outcome, Error> {
        if self.server().is_none() {
            self.timed(|| Communicator::barrier(&self.comm))?;
        }
        Ok(Outcome::default())
    }

    fn bcast_bytes(&self, buf: &mut [u8], root: Rank) -> Result<Outcome, Error> {
        self.check_dest(root)?;
        self.collective(buf, |b| {
            Communicator::bcast_bytes(&self.comm, b, root).map(drop)
        })?;
        Ok(Outcome::default())
    }

    fn reduce_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        op: &ErasedOp,
        root: Rank,
    ) -> Result<Outcome, Error> {
        self.check_dest(root)?;
        let me_root = self.comm.rank() == root;
        if me_root {
            same_len("reduce at the root", recv.len(), send.len())?;
        }
        let mut all = vec![0u8; send.len()];
        self.collective(&mut all, |b| {
            self.comm.allreduce_bytes(send, b, op).map(drop)
        })?;
        if me_root {
            recv.copy_from_slice(&all);
        }
        Ok(Outcome::default())
    }

    fn allreduce_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        op: &ErasedOp,
    ) -> Result<Outcome, Error> {
        same_len("allreduce", recv.len(), send.len())?;
        self.collective(recv, |b| self.comm.allreduce_bytes(send, b, op).map(drop))?;
        Ok(Outcome::default())
    }

    fn gather_bytes(&self, send: &[u8], recv: &mut [u8], root: Rank) -> Result<Outcome, Error> {
        self.check_dest(root)?;
        let n = self.comm.size();
        let me_root = self.comm.rank() == root;
        if me_root {
            same_len("gather at the root", recv.len(), send.len() * n)?;
        }
        let mut all = vec![0u8; send.len() * n];
        self.collective(&mut all, |b| {
            Communicator::allgather_bytes(&self.comm, send, b).map(drop)
        })?;
        if me_root {
            recv.copy_from_slice(&all);
        }
        Ok(Outcome::default())
    }

    fn scatter_bytes(&self, send: &[u8], recv: &mut [u8], root: Rank) -> Result<Outcome, Error> {
        self.check_dest(root)?;
        let n = self.comm.size();
        let me = self.comm.rank().index();
        let mut all = vec![0u8; recv.len() * n];
        if self.comm.rank() == root {
            same_len("scatter at the root", send.len(), recv.len() * n)?;
            all.copy_from_slice(send);
        }
        self.collective(&mut all, |b| {
            Communicator::bcast_bytes(&self.comm, b, root).map(drop)
        })?;
        let k = recv.len();
        recv.copy_from_slice(&all[me * k..(me + 1) * k]);
        Ok(Outcome::default())
    }

    fn allgather_bytes(&self, send: &[u8], recv: &mut [u8]) -> Result<Outcome, Error> {
        same_len("allgather", recv.len(), send.len() * self.comm.size())?;
        self.collective(recv, |b| {
            Communicator::allgather_bytes(&self.comm, send, b).map(drop)
        })?;
        Ok(Outcome::default())
    }

    fn alltoall_bytes(&self, send: &[u8], recv: &mut [u8], elem: usize) -> Result<Outcome, Error> {
        let n = self.comm.size();
        let me = self.comm.rank().index();
        same_len("alltoall", recv.len(), send.len())?;
        if !send.len().is_multiple_of(n * elem.max(1)) {
            return Err(refused(&format!(
                "alltoall: {} bytes do not split into {n} blocks of whole {elem}-byte elements",
                send.len()
            )));
        }
        let k = send.len() / n;
        recv[me * k..(me + 1) * k].copy_from_slice(&send[me * k..(me + 1) * k]);
        // Point-to-point through this communicator, so the blocks are
        // logged, dropped and replayed like any message.
        pertinax::scope(|s| {
            let mut ops = Vec::with_capacity(2 * n);
            for (j, block) in recv.chunks_mut(k.max(1)).enumerate().take(n) {
                if j != me && k > 0 {
                    ops.push(self.irecv_bytes(
                        s,
                        block,
                        1,
                        Source::Rank(Rank(j as i32)),
                        TagMatch::Tag(Tag(ALLTOALL_TAG)),
                    )?);
                }
            }
            for j in (0..n).filter(|&j| j != me && k > 0) {
                ops.push(self.isend_unchecked(s, &send[j * k..(j + 1) * k], j)?);
            }
            for op in ops {
                op.wait()?;
            }
            Ok::<(), Error>(())
        })?;
        Ok(Outcome::default())
    }

    /// Every rank's contribution gathered (logged and served like any
    /// collective's result), then combined here in rank order.
    fn scan_bytes(&self, send: &[u8], recv: &mut [u8], op: &ErasedOp) -> Result<Outcome, Error> {
        self.prefix(send, recv, op, false)
    }
    /// As [`Logged::scan_bytes`]; rank 0's `recv` is left as it was.
    fn exscan_bytes(&self, send: &[u8], recv: &mut [u8], op: &ErasedOp) -> Result<Outcome, Error> {
        self.prefix(send, recv, op, true)
    }
    /// An allreduce of the whole vector (logged like any collective's
    /// result), of which each rank keeps its block.
    fn reduce_scatter_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        op: &ErasedOp,
    ) -> Result<Outcome, Error> {
        let (n, me, e) = (self.comm.size(), self.comm.rank().index(), op.elem_size());
        if counts.len() != n {
            return Err(refused(&format!(
                "reduce_scatter: {} counts for {n} ranks",
                counts.len()
            )));
        }
        let at: usize = counts[..me].iter().sum::<usize>() * e;
        same_len(
            "reduce_scatter",
            send.len(),
            counts.iter().sum::<usize>() * e,
        )?;
        same_len("reduce_scatter", recv.len(), counts[me] * e)?;
        let mut all = vec![0u8; send.len()];
        self.allreduce_bytes(send, &mut all, op)?;
        recv.copy_from_slice(&all[at..at + recv.len()]);
        Ok(Outcome::default())
    }
    fn allgatherv_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        displs: &[usize],
        elem: usize,
    ) -> Result<Outcome, Error> {
        self.collective(recv, |b| {
            Communicator::allgatherv_bytes(&self.comm, send, b, counts, displs, elem).map(drop)
        })?;
        Ok(Outcome::default())
    }
    fn unsupported(&self, op: &'static str) -> Error {
        match op {
            "gatherv" | "scatterv" => rooted_v(),
            "alltoallv" => Error::Unsupported {
                feature: "alltoallv inside a logged iteration (not logged yet: use alltoall, or \
                          point-to-point messages, which are logged)",
            },
            "ack_failed" | "agree" | "shrink" => recovers_itself(),
            _ if op.starts_with('i') => no_nonblocking(),
            _ => Error::Unsupported { feature: op },
        }
    }

    fn dup_boxed(&self) -> Result<pertinax::BoxedComm<Error>, Error> {
        Err(no_new_comms())
    }
    fn split_boxed(
        &self,
        _color: Option<u32>,
        _key: i32,
    ) -> Result<Option<pertinax::BoxedComm<Error>>, Error> {
        Err(no_new_comms())
    }
    fn dup(&self) -> Result<Self, Error> {
        Err(no_new_comms())
    }
    fn split(&self, _color: Option<u32>, _key: i32) -> Result<Option<Self>, Error> {
        Err(no_new_comms())
    }
}

impl Logged {
    /// Scan (or exscan) as an allgather, logged like any collective's
    /// result, combined here in rank order.
    fn prefix(
        &self,
        send: &[u8],
        recv: &mut [u8],
        op: &ErasedOp,
        exclusive: bool,
    ) -> Result<Outcome, Error> {
        let (n, me) = (self.comm.size(), self.comm.rank().index());
        same_len(
            if exclusive { "exscan" } else { "scan" },
            recv.len(),
            send.len(),
        )?;
        let k = send.len();
        let mut all = vec![0u8; k * n];
        self.allgather_bytes(send, &mut all)?;
        let upto = if exclusive { me } else { me + 1 };
        if upto == 0 {
            return Ok(Outcome::default());
        }
        let mut acc = all[..k].to_vec();
        for block in all[k..upto * k].chunks(k.max(1)) {
            op.combine_bytes(&mut acc, block, true)?;
        }
        recv.copy_from_slice(&acc);
        Ok(Outcome::default())
    }

    /// `isend_bytes` on the library's own tag.
    fn isend_unchecked<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        buf: &'s [u8],
        dest: usize,
    ) -> Result<PendingOp<'s, Error>, Error> {
        let tag = Tag(ALLTOALL_TAG);
        if !self.log_send(buf, dest, tag) {
            return Ok(PendingOp::new(Done(true)));
        }
        self.timed_op(self.timed(|| self.comm.isend_bytes(scope, buf, Rank(dest as i32), tag)))
    }
}

fn rooted_v() -> Error {
    Error::Unsupported {
        feature: "gatherv and scatterv inside a logged iteration (their counts are known at \
                  the root only, so no rank could serve a replaying one: use allgatherv)",
    }
}

fn no_nonblocking() -> Error {
    Error::Unsupported {
        feature: "non-blocking collectives inside a logged iteration (the log replays blocking \
                  collectives only: use the blocking form)",
    }
}

fn recovers_itself() -> Error {
    Error::Unsupported {
        feature: "ULFM calls inside a logged iteration (message logging detects failures and \
                  rolls the failed rank back itself)",
    }
}

fn no_new_comms() -> Error {
    refused(
        "creating communicators inside a logged iteration is not supported (create them \
         before the run)",
    )
}

#[cfg(test)]
mod tests {
    use pertinax::{Communicator, CommunicatorExt, Error, Rank};

    use super::Logged;

    /// What a logged communicator does not offer returns `Unsupported`
    /// with the reason, through `Communicator::unsupported`.
    #[test]
    fn refusals_say_why() {
        let u = pertinax::init().expect("init");
        let l = Logged::new(u.world().clone(), Default::default(), Default::default(), 0);
        let why = |r: Result<(), Error>| match r {
            Err(Error::Unsupported { feature }) => feature,
            other => panic!("{other:?}"),
        };
        let mut b = [0u8; 4];
        let v = why(l.gatherv(&[1u8], &mut b, &[1], &[0], Rank(0)).map(drop));
        assert!(v.contains("known at the root only"), "{v}");
        let v = why(l.agree(0).map(drop));
        assert!(v.contains("rolls the failed rank back"), "{v}");
        let v = why(pertinax::scope(|s| l.ibarrier(s).map(drop)));
        assert!(v.contains("non-blocking collectives"), "{v}");
        let mut c = [0u64];
        let v = why(l
            .alltoallv(&[1u64], &[1], &[0], &mut c, &[1], &[0])
            .map(drop));
        assert!(v.contains("alltoallv"), "{v}");
        drop(l);
        u.finalize().expect("finalize");
    }
}
