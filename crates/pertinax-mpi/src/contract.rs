//! The backend contract ([`Backend`]) implemented over MPI, call by call
//! (see "Mapping" in the crate documentation): progress and finalize,
//! communicators, point-to-point, requests, failures and revocation, the
//! agreement, spawn.

use std::rc::Rc;

use pertinax_mpi_sys::{self as sys, RecvData};

use super::comms::shrink_live;
use super::{agree, finalize, report, spawn};
use super::{error_of, received, recv_error_of, CommState, Mpi, Slot};
use crate::backend::{
    Backend, MatchSpec, Now, Peers, ProcRequest, Record, RecvBuf, ReqKey, SendBuf, Task, Token,
};
use crate::error::{Error, RecoveryCall, Result};
use crate::types::Status;
use crate::wait::{Backoff, Step};

impl Backend for Mpi {
    type CommState = CommState;

    fn progress(&self) -> bool {
        let moved = self.round();
        if !self.unfreed.borrow().is_empty() {
            self.free_unfreed();
        }
        moved
    }

    fn idle(&self, b: &mut Backoff) {
        match b.next(&self.policy) {
            Step::Spin => std::hint::spin_loop(),
            Step::Yield => pertinax_os::yield_cpu(),
            Step::Sleep => std::thread::sleep(std::time::Duration::from_micros(20)),
        }
    }

    #[inline]
    fn eager_limit(&self) -> usize {
        // Sends of at most this many bytes are copied (`send_eager`).
        4096
    }

    fn single_copy(&self) -> bool {
        false
    }

    fn finalize(&self) -> Result<()> {
        let n = self.slab.borrow().len();
        for i in 0..n {
            let mut slab = self.slab.borrow_mut();
            let Some(e) = slab.get_mut(i) else { break };
            match &mut e.1 {
                Slot::Recv { op, .. } => {
                    let _ = op.cancel();
                    let _ = op.wait();
                    e.1 = Slot::Done(Err(Error::Finalized));
                }
                Slot::Send { op, .. } => {
                    let _ = op.wait();
                    e.1 = Slot::Done(Err(Error::Finalized));
                }
                Slot::Task(_) | Slot::Posted { .. } | Slot::Coll { .. } => {
                    e.1 = Slot::Done(Err(Error::Finalized));
                }
                Slot::Free | Slot::Done(_) => {}
            }
        }
        self.posted.borrow_mut().clear();
        self.tasks.set(0);
        if sys::finalized() {
            return Ok(());
        }
        // Every send was waited for above.
        self.free_unfreed();
        // Free every communicator still held: Open MPI's `MPI_Finalize`
        // disconnects those that span several worlds (spawn) with a
        // handshake with their other members, which waits forever when the
        // other side has freed theirs or gone (Open MPI 5.0.11).
        // Agreements nobody waited for to the end: let go (see `release`).
        for (_, a) in self.agreed.borrow_mut().take() {
            if a.running() {
                std::mem::forget(a);
            }
        }
        for (_, mut c) in [self.joined.take(), self.survivors.take()]
            .into_iter()
            .flatten()
        {
            let _ = c.free();
        }
        // Newest first: the same order at every process.
        let mut comms: Vec<_> = std::mem::take(&mut *self.comms.borrow_mut())
            .into_iter()
            .collect();
        comms.sort_unstable_by_key(|(ctx, _)| std::cmp::Reverse(*ctx));
        for t in comms.into_iter().filter_map(|(_, t)| t.ok()) {
            t.free();
        }
        finalize::finalize()
    }

    fn abort(&self, code: i32, _message: &str) {
        sys::abort(sys::Comm::world(), code);
    }

    fn report_injection(&self, point: &str, hit: u64, signal: i32) {
        report::report_injection(point, hit, signal);
    }

    fn flush(&self) {
        self.progress();
    }

    // ---- communicators ----------------------------------------------------

    fn next_ctx(&self) -> u32 {
        self.next_ctx.get()
    }

    fn use_ctx(&self, ctx: u32) {
        self.next_ctx.set(self.next_ctx.get().max(ctx + 4));
    }

    fn reserve(&self) -> Result<Token> {
        Ok(0)
    }

    fn unreserve(&self, _t: Token) {}

    fn token_from(&self, w: u32) -> Option<Token> {
        Token::try_from(w).ok()
    }

    fn attach(
        &self,
        ctx: u32,
        rank: u32,
        peers: &Peers,
        _tokens: &[Token],
        remote: Option<(&Peers, &[Token])>,
    ) -> CommState {
        let trio = match remote {
            Some((r, _)) => self.make_inter(ctx, rank, peers, r),
            None => self.make_trio(ctx, rank, peers),
        };
        self.install(ctx, trio)
    }

    fn release(&self, ctx: u32, st: &CommState) {
        let Ok(mut comms) = self.comms.try_borrow_mut() else {
            return;
        };
        self.last.clear();
        comms.remove(&ctx);
        if let Ok(mut taken) = self.taken.try_borrow_mut() {
            taken.retain(|t| t.ctx & !3 != ctx);
        }
        // Its agreements still under way (a revoker's, that nobody waits
        // for) are never advanced again: their next step would start an
        // `MPIX_Comm_iagree` on a freed communicator. Their requests may
        // still be written to by MPI, and dropping a running `iagree`
        // waits for the others, so they are let go without a drop.
        if let Ok(mut agreed) = self.agreed.try_borrow_mut() {
            let keys: Vec<(u32, u32)> = agreed
                .iter()
                .map(|(k, _)| *k)
                .filter(|k| k.0 == ctx)
                .collect();
            for k in keys {
                if let Some(a) = agreed.remove(&k) {
                    if a.running() {
                        std::mem::forget(a);
                    }
                }
            }
        }
        if let Ok(t) = &st.trio {
            if sys::finalized() {
            } else if self.sending_on(ctx) {
                self.unfreed.borrow_mut().push((ctx, Rc::clone(t)));
            } else {
                t.free();
            }
        }
    }

    // ---- point-to-point ---------------------------------------------------

    /// Inlined into the core's send: its common case (`send_fast`) is one
    /// frame from the user's call to the shim's.
    #[inline(always)]
    fn send_eager(
        &self,
        _dest: usize,
        dest_rank: u32,
        ctx: u32,
        _src: u32,
        tag: i32,
        data: &[u8],
    ) -> Result<()> {
        let Some((comm, me)) = self.comm(ctx) else {
            return Err(self.comm_error(ctx));
        };
        // On an intercommunicator `dest_rank` is a remote rank, never this
        // process.
        let to_self = me == dest_rank && self.intra(ctx);
        match self.send_fast(comm, to_self, dest_rank, tag, data) {
            Now::Done => Ok(()),
            Now::Failed(e) => Err(*e),
            Now::General => self.send_copy((comm, ctx), dest_rank, tag, data),
        }
    }

    fn bsend(
        &self,
        _dest: usize,
        dest_rank: u32,
        ctx: u32,
        _src: u32,
        tag: i32,
        data: &[u8],
    ) -> Result<()> {
        // A copy in a send MPI completes in the background, whatever its
        // size (not `send_fast`'s blocking `MPI_Send`, which may wait for
        // the receiver when MPI's eager limit is lower).
        let comm = self.p2p_comm(ctx)?;
        self.send_copy((comm, ctx), dest_rank, tag, data)
    }

    fn isend(
        &self,
        _dest: usize,
        dest_rank: u32,
        ctx: u32,
        _src: u32,
        tag: i32,
        buf: SendBuf,
    ) -> Result<ReqKey> {
        Ok(self.start_send(dest_rank, ctx, tag, buf, false))
    }

    fn issend(
        &self,
        _dest: usize,
        dest_rank: u32,
        ctx: u32,
        _src: u32,
        tag: i32,
        buf: SendBuf,
    ) -> Result<ReqKey> {
        Ok(self.start_send(dest_rank, ctx, tag, buf, true))
    }

    fn irecv(&self, spec: MatchSpec, _peers: Peers, buf: RecvBuf, elem: usize) -> ReqKey {
        let (data, part) = match buf {
            RecvBuf::Lent(l) => (RecvData::Lent(l), None),
            RecvBuf::Part(c, r) => (
                RecvData::Owned(vec![0u8; r.len()].into_boxed_slice()),
                Some((c, r)),
            ),
        };
        let k = self.insert(Slot::Posted {
            spec,
            data,
            part,
            elem,
            forgotten: false,
        });
        self.posted.borrow_mut().push_back(k.idx);
        self.stir();
        self.match_posted();
        k
    }

    #[inline(always)]
    fn recv_direct(&self, spec: &MatchSpec, buf: &mut [u8], elem: usize) -> Option<Result<Status>> {
        self.recv_now(spec, buf, elem)
    }

    fn recv(&self, spec: MatchSpec, peers: Peers, buf: RecvBuf, elem: usize) -> Result<Status> {
        // The core asks `recv_direct` (`MPI_Recv`) first; this is the
        // general path.
        let k = self.irecv(spec, peers, buf, elem);
        self.wait(k)
    }

    fn find(&self, spec: &MatchSpec) -> Option<Status> {
        self.find_message(spec)
    }

    fn probe_doomed(&self, spec: &MatchSpec, _peers: &[u32]) -> Option<Error> {
        let comm = match self.comm(spec.ctx) {
            Some((c, _)) => c,
            None => return Some(self.trio(spec.ctx).err().unwrap_or(Error::CommFreed)),
        };
        let src = spec.src.map_or_else(sys::any_source, |s| s as i32);
        let tag = spec.tag.unwrap_or_else(sys::any_tag);
        sys::iprobe(src, tag, comm)
            .err()
            .map(|c| recv_error_of(c, Some(comm), spec.src))
    }

    // ---- requests ---------------------------------------------------------

    fn take(&self, k: ReqKey) -> Result<Option<Result<Status>>> {
        if !self.live(k) {
            return Err(Error::RequestInactive);
        }
        self.poll(k.idx);
        let mut slab = self.slab.borrow_mut();
        let Some(e) = slab.get_mut(k.idx as usize) else {
            return Err(Error::RequestInactive);
        };
        if !matches!(e.1, Slot::Done(_)) {
            return Ok(None);
        }
        let Slot::Done(r) = std::mem::replace(&mut e.1, Slot::Free) else {
            return Ok(None);
        };
        drop(slab);
        self.free.borrow_mut().push(k.idx);
        Ok(Some(r))
    }

    fn wait(&self, k: ReqKey) -> Result<Status> {
        if let Some(r) = self.wait_fast(k) {
            return r;
        }
        if let Some(r) = self.wait_own_coll(k) {
            return r;
        }
        let mut b = Backoff::default();
        loop {
            match self.take(k)? {
                Some(r) => return r,
                None => {
                    if !self.progress() {
                        self.idle(&mut b);
                    }
                }
            }
        }
    }

    fn cancel(&self, k: ReqKey) -> Result<bool> {
        if !self.live(k) {
            return Err(Error::RequestInactive);
        }
        let mut slab = self.slab.borrow_mut();
        let Some(e) = slab.get_mut(k.idx as usize) else {
            return Err(Error::RequestInactive);
        };
        if matches!(e.1, Slot::Posted { .. }) {
            e.1 = Slot::Done(Err(Error::Cancelled));
            drop(slab);
            self.unpost(k.idx, false);
            return Ok(true);
        }
        let Slot::Recv {
            op,
            part,
            elem,
            ctx,
            src,
            ..
        } = &mut e.1
        else {
            return Ok(false);
        };
        let _ = op.cancel();
        let Some((st, data)) = op.wait() else {
            return Ok(false);
        };
        let cancelled = st.cancelled != 0;
        let comm = self.comm(*ctx).map(|c| c.0);
        let r = received(st, data, part.take(), *elem, comm, *src);
        e.1 = Slot::Done(r);
        Ok(cancelled)
    }

    fn forget(&self, k: ReqKey) {
        if !self.live(k) {
            return;
        }
        // A task that is dropped runs to its end (its requests hold lent
        // buffers); its outcome is then thrown away.
        let task_done = matches!(
            self.slab.borrow().get(k.idx as usize).map(|e| &e.1),
            Some(Slot::Task(_))
        );
        if task_done {
            let mut b = Backoff::default();
            while !self.is_done(k) {
                if !self.progress() {
                    self.idle(&mut b);
                }
            }
        }
        let Ok(mut slab) = self.slab.try_borrow_mut() else {
            return;
        };
        let Some(e) = slab.get_mut(k.idx as usize) else {
            return;
        };
        match &mut e.1 {
            Slot::Send { forgotten, .. }
            | Slot::Recv { forgotten, .. }
            | Slot::Coll { forgotten, .. }
            | Slot::Posted { forgotten, .. } => *forgotten = true,
            Slot::Done(_) => {
                e.1 = Slot::Free;
                drop(slab);
                self.free.borrow_mut().push(k.idx);
            }
            Slot::Free | Slot::Task(_) => {}
        }
    }

    fn is_done(&self, k: ReqKey) -> bool {
        if !self.live(k) {
            return true;
        }
        self.poll(k.idx);
        self.slab
            .borrow()
            .get(k.idx as usize)
            .is_none_or(|e| matches!(e.1, Slot::Done(_)))
    }

    fn request_failed(&self, k: ReqKey) -> bool {
        self.live(k)
            && self
                .slab
                .borrow()
                .get(k.idx as usize)
                .is_some_and(|e| matches!(e.1, Slot::Done(Err(_))))
    }

    fn start_task(&self, t: Box<dyn Task>) -> ReqKey {
        self.tasks.set(self.tasks.get() + 1);
        self.stir();
        let k = self.insert(Slot::Task(Some(t)));
        self.poll(k.idx);
        k
    }

    fn capabilities(&self) -> crate::backend::Capabilities {
        crate::backend::Capabilities {
            own_collectives: self.own_coll,
            // A point-to-point call on a revoked communicator returns
            // `MPIX_ERR_REVOKED` (ULFM checks it before the peer's state;
            // mapped to `Revoked`); asking `MPIX_Comm_is_revoked` before
            // each one cost 0.02-0.03 us of a 0.25 us half round trip.
            // (Collectives keep the check: MPI's return
            // `MPIX_ERR_PROC_FAILED` first.)
            calls_check_revocation: true,
            own_communicators: true,
            own_agreement: true,
            // `MPI_Publish_name` / `MPI_Lookup_name` are not bound in
            // pertinax-mpi-sys (and Open MPI needs an `ompi-server` for
            // names seen across jobs): `Universe::publish_name` answers
            // `Unsupported`.
            name_service: false,
            direct_p2p: true,
        }
    }

    // ---- failures and revocation -----------------------------------------

    fn revoke(&self, ctx: u32) {
        if let Ok(t) = self.trio(ctx) {
            let _ = t.comms[0].revoke();
            // A revoker killed here has revoked half of the communicator:
            // the others must still all learn of it.
            crate::inject::fault_point("ft.revoke.partial");
            if t.comms[1] != t.comms[0] {
                let _ = t.comms[1].revoke();
            }
        }
    }

    fn is_revoked(&self, ctx: u32) -> bool {
        self.comm(ctx)
            .is_some_and(|(c, _)| c.is_revoked().unwrap_or(false))
    }

    fn failed_among(&self, st: &CommState) -> Vec<u32> {
        let Ok(t) = &st.trio else {
            return Vec::new();
        };
        // Open MPI learns of failures in its progress engine: a probe on
        // the recovery communicator (never revoked, consumes nothing) lets
        // a process that only polls its failed list see them.
        let _ = sys::iprobe(sys::any_source(), sys::any_tag(), t.comms[2]);
        t.failed_pids()
    }

    fn ack_failed(&self, _ctx: u32, st: &CommState, n: usize) -> usize {
        let Ok(t) = &st.trio else {
            return 0;
        };
        // Open MPI refuses (MPI_ERR_ARG) to acknowledge more than the
        // communicator's size: "all" is the size (both groups for an
        // intercommunicator).
        let n = i32::try_from(n.min(t.all.len())).unwrap_or(i32::MAX);
        let acked = t.knowledge().ack_failed(n).unwrap_or(0);
        let acked = usize::try_from(acked).unwrap_or(0);
        t.acked.set(t.acked.get().max(acked));
        acked
    }

    fn acked(&self, ctx: u32) -> Vec<u32> {
        let Ok(t) = self.trio(ctx) else {
            return Vec::new();
        };
        t.knowledge()
            .get_failed()
            .unwrap_or_default()
            .into_iter()
            .take(t.acked.get())
            .filter_map(|r| t.all.get(usize::try_from(r).ok()?).copied())
            .collect()
    }

    // ---- agreement --------------------------------------------------------

    fn next_agree_seq(&self, seq: u32) -> u32 {
        seq.wrapping_add(1)
    }

    fn contribute(&self, ctx: u32, seq: u32, call: RecoveryCall, words: [u32; 4], st: &CommState) {
        let a = match &st.trio {
            Ok(t) => agree::Agreement::start(t, seq, agree::record(call, words)),
            Err(_) => agree::Agreement::Done(Vec::new()),
        };
        self.agreed.borrow_mut().insert((ctx, seq), a);
        self.stir();
    }

    fn poll_agreement(
        &self,
        ctx: u32,
        seq: u32,
        _st: &CommState,
        got: &mut [Option<Record>],
    ) -> bool {
        let mut agreed = self.agreed.borrow_mut();
        let Some(a) = agreed.get_mut(&(ctx, seq)) else {
            return false;
        };
        let Some(decided) = a.poll() else {
            return false;
        };
        for (i, g) in got.iter_mut().enumerate() {
            if g.is_none() {
                *g = Some(match decided {
                    agree::Decided::Uniform(rec) => rec,
                    agree::Decided::Each(recs) => recs.get(i).copied().unwrap_or(Record::Failed),
                });
            }
        }
        agreed.remove(&(ctx, seq));
        true
    }

    fn member_id(&self, st: &CommState, i: usize) -> u32 {
        match &st.trio {
            Ok(t) => t
                .members
                .get(i)
                .or_else(|| t.remote.as_ref()?.get(i.checked_sub(t.members.len())?))
                .copied()
                .unwrap_or(u32::MAX),
            Err(_) => u32::MAX,
        }
    }

    // ---- spawn ------------------------------------------------------------

    fn spawn_max(&self) -> usize {
        // The ranks a world's process ids can hold.
        (1 << spawn::RANK_BITS) - 1
    }

    fn request_stamp(&self, ctx: u32, attempt: u32) -> u64 {
        (u64::from(ctx) << 32) | u64::from(attempt)
    }

    fn request_processes(&self, r: ProcRequest<'_>) -> Result<()> {
        self.record_request(r)
    }

    fn await_processes(
        &self,
        asker: usize,
        stamp: u64,
        among: &[u32],
        parent: &CommState,
    ) -> Option<Result<Vec<u32>, u32>> {
        self.spawn_among(asker as u32, stamp, among, parent)
    }
}

impl crate::backend::OwnCollectives for Mpi {
    fn start_coll(&self, c: crate::backend::Coll) -> Result<ReqKey> {
        self.start_own_coll(c)
    }

    #[inline]
    fn run_coll(&self, c: crate::backend::Coll) -> Result<Status> {
        self.run_own_coll(c)
    }
}

/// Communicators are `MPI_Comm_split` over the parent and
/// `MPIX_Comm_shrink`.
impl crate::backend::OwnCommunicators for Mpi {
    fn derive(
        &self,
        parent: &CommState,
        ctx: u32,
        mine: Option<crate::backend::Derived<'_>>,
    ) -> Option<CommState> {
        let p = match &parent.trio {
            Ok(t) => t,
            // A broken parent: from the group.
            Err(_) => return mine.map(|d| self.attach(ctx, d.rank, d.peers, d.tokens, None)),
        };
        // `MPI_Comm_split` over the parent, which returns an error when a
        // process fails during it (`MPI_Comm_create_from_group` and
        // `MPI_Comm_create_group` over a group with a dead process never
        // return or crash, in Open MPI 5.0.11).
        let (color, key) = match mine {
            Some(d) => (i32::try_from(d.color).unwrap_or(i32::MAX), d.rank as i32),
            None => (sys::undefined(), 0),
        };
        // On the collective communicator: a revocation (a repair) ends it;
        // for an intercommunicator (merge), on the communicator of both
        // groups (its agreements', which have ended: the merge's decided).
        let on = if p.remote.is_some() {
            p.comms[3]
        } else {
            p.comms[1]
        };
        let made = on.split(color, key);
        let Some(d) = mine else {
            if let Ok(mut c) = made {
                if !c.is_null() {
                    let _ = c.free();
                }
            }
            return None;
        };
        let trio = made
            .map_err(|c| error_of(c, None, None))
            .and_then(|base| self.trio_over(base, d.rank, d.peers));
        Some(self.install(ctx, trio))
    }

    fn live_members(&self, st: &CommState, agreed: &[bool]) -> Option<Result<Vec<usize>>> {
        let old = match &st.trio {
            Ok(t) if t.remote.is_none() => t,
            _ => return None,
        };
        let made = shrink_live(old, agreed).map(|(comm, at, _)| {
            let ids = old.ids_at(&at);
            if let Some((_, mut c)) = self.survivors.replace(Some((ids, comm))) {
                let _ = c.free();
            }
            at
        });
        Some(made)
    }

    fn shrink_attach(
        &self,
        old: &CommState,
        ctx: u32,
        agreed: &[bool],
    ) -> Option<Result<crate::backend::Shrunk<CommState>>> {
        let old = match &old.trio {
            Ok(t) if t.remote.is_none() => t,
            // No MPI communicator to shrink: the agreed survivors, as usual.
            _ => return None,
        };
        Some(
            self.shrink_trio(old, agreed)
                .map(|(t, at)| crate::backend::Shrunk {
                    rank: t.rank,
                    at,
                    st: self.install(ctx, Ok(t)),
                }),
        )
    }
}

/// The agreement's fast round is `MPIX_Comm_iagree`, or one blocking
/// `MPIX_Comm_agree` (`agree_now`).
impl crate::backend::OwnAgreement for Mpi {
    fn block_on_agreement(&self, ctx: u32, seq: u32) -> Option<Record> {
        if !self.may_block_agreeing((ctx, seq)) {
            return None;
        }
        let mut agreed = self.agreed.try_borrow_mut().ok()?;
        let a = agreed.get_mut(&(ctx, seq))?;
        a.block_on_fast_round();
        // Decided by the fast round: over, with nothing to copy per member.
        let agree::Decided::Uniform(rec) = a.poll()? else {
            return None;
        };
        agreed.remove(&(ctx, seq));
        Some(rec)
    }

    fn agree_now(
        &self,
        ctx: u32,
        seq: u32,
        call: RecoveryCall,
        words: [u32; 4],
        st: &CommState,
    ) -> Option<Record> {
        if let (Ok(t), true) = (&st.trio, self.may_block_agreeing((ctx, seq))) {
            match agree::Agreement::decide_now(t, seq, agree::record(call, words)) {
                Some(Ok(rec)) => return Some(rec),
                Some(Err(a)) => {
                    self.agreed.borrow_mut().insert((ctx, seq), a);
                    self.stir();
                    return None;
                }
                None => {}
            }
        }
        self.contribute(ctx, seq, call, words, st);
        None
    }
}

impl Mpi {
    /// Whether a blocking agreement `k` may wait inside MPI: nothing else
    /// of this backend's own waits for progress (no task, no receive to
    /// match, no other agreement under way).
    fn may_block_agreeing(&self, k: (u32, u32)) -> bool {
        self.tasks.get() == 0
            && self.posted.borrow().is_empty()
            && self
                .agreed
                .try_borrow()
                .is_ok_and(|a| !a.iter().any(|(j, a)| *j != k && a.running()))
    }

    /// One progress round without freeing communicators: matching,
    /// agreements, requests and tasks. MPI's progress hook runs it inside
    /// a blocking collective (`coll.rs`), where no communicator is freed.
    pub(super) fn round(&self) -> bool {
        let mut moved = self.match_posted();
        // Every agreement under way, not only the one waited for: a member
        // may contribute and then wait for something else (a revoker of a
        // resilient communicator contributes its `iagree` and goes on to
        // its guard's shrink), and the others' agreement needs its next
        // step (its `MPIX_Comm_iagree` once its records are in).
        if let Ok(mut agreed) = self.agreed.try_borrow_mut() {
            for a in agreed.values_mut().filter(|a| a.running()) {
                moved |= a.poll().is_some();
            }
        }
        agree::poll_parked();
        let n = self.slab.borrow().len();
        for i in 0..n as u32 {
            let posted = matches!(
                self.slab.borrow().get(i as usize).map(|e| &e.1),
                Some(Slot::Posted { .. })
            );
            if !posted {
                moved |= self.poll(i);
            }
        }
        moved
    }
}
