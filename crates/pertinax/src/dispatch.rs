//! [`Active`]: the backend chosen at start-up, as an enum of the backends
//! compiled in (enum dispatch: one predictable branch per call, each
//! backend's methods inlined behind it; with one backend the match is
//! irrefutable and compiles away). A backend added behind a cargo feature
//! adds a variant here and an arm to the two macros.

use pertinax_native::{self as native, Native};

use crate::backend::{
    attach_derived, Backend, Coll, Derived, DirectP2p, MatchSpec, NameService, Now, OwnAgreement,
    OwnCollectives, OwnCommunicators, Peers, ProcRequest, Record, RecvBuf, ReqKey, SendBuf, Shrunk,
    Task, Token,
};
use crate::error::{Error, RecoveryCall, Result};
use crate::types::Status;
use crate::wait::Backoff;

/// The backend of this process.
#[derive(Debug)]
#[cfg_attr(
    feature = "mpi",
    allow(
        clippy::large_enum_variant,
        reason = "one value per process; boxing the native engine would add an indirection to its fast path"
    )
)]
pub(crate) enum Active {
    /// Shared memory on one machine, under `pertinax run`.
    Native(Native),
    /// MPI with ULFM, under `mpirun` / `srun` (feature `mpi`).
    #[cfg(feature = "mpi")]
    Mpi(pertinax_mpi::Mpi),
}

/// What the active backend keeps per communicator.
#[derive(Debug)]
pub(crate) enum AnyState {
    Native(native::CommState),
    #[cfg(feature = "mpi")]
    Mpi(pertinax_mpi::CommState),
}

/// `on!(self, b => expr)`: `expr` with `b` the active backend.
macro_rules! on {
    ($s:expr, $b:ident => $e:expr) => {
        match $s {
            Active::Native($b) => $e,
            #[cfg(feature = "mpi")]
            Active::Mpi($b) => $e,
        }
    };
}

/// `with!(self, st, b, s => expr)`: `expr` with the backend and its state
/// of one communicator (a state always comes from the same backend).
macro_rules! with {
    ($sf:expr, $st:expr, $b:ident, $s:ident => $e:expr) => {
        match ($sf, $st) {
            (Active::Native($b), AnyState::Native($s)) => $e,
            #[cfg(feature = "mpi")]
            (Active::Mpi($b), AnyState::Mpi($s)) => $e,
            // Unreachable: a state always comes from the backend that made
            // it, and a process has one backend. Not a panic: a neutral value.
            #[cfg(feature = "mpi")]
            _ => Default::default(),
        }
    };
}

/// Native: never (its blocking calls have their own short paths behind
/// [`Backend::recv_direct`] and the eager send).
impl DirectP2p for Active {
    #[inline(always)]
    fn send_now(&self, ctx: u32, dest_rank: u32, tag: i32, data: &[u8]) -> Now {
        match self {
            Active::Native(_) => {
                let _ = (ctx, dest_rank, tag, data);
                Now::General
            }
            #[cfg(feature = "mpi")]
            Active::Mpi(b) => b.send_now(ctx, dest_rank, tag, data),
        }
    }
    #[inline(always)]
    fn recv_now(
        &self,
        ctx: u32,
        src: u32,
        tag: Option<i32>,
        buf: &mut [u8],
        elem: usize,
        st: &mut Status,
    ) -> Now {
        match self {
            Active::Native(_) => {
                let _ = (ctx, src, tag, buf, elem, st);
                Now::General
            }
            #[cfg(feature = "mpi")]
            Active::Mpi(b) => b.recv_now(ctx, src, tag, buf, elem, st),
        }
    }
}

impl Backend for Active {
    type CommState = AnyState;

    fn capabilities(&self) -> crate::backend::Capabilities {
        on!(self, b => b.capabilities())
    }

    #[inline]
    fn progress(&self) -> bool {
        on!(self, b => b.progress())
    }
    #[inline]
    fn idle(&self, bo: &mut Backoff) {
        on!(self, b => b.idle(bo))
    }
    #[inline(always)]
    fn eager_limit(&self) -> usize {
        on!(self, b => b.eager_limit())
    }
    fn single_copy(&self) -> bool {
        on!(self, b => b.single_copy())
    }
    fn finalize(&self) -> Result<()> {
        on!(self, b => b.finalize())
    }
    fn abort(&self, code: i32, message: &str) {
        on!(self, b => b.abort(code, message))
    }
    fn report_injection(&self, point: &str, hit: u64, signal: i32) {
        on!(self, b => b.report_injection(point, hit, signal))
    }
    fn flush(&self) {
        on!(self, b => b.flush())
    }

    #[inline]
    fn next_ctx(&self) -> u32 {
        on!(self, b => b.next_ctx())
    }
    #[inline]
    fn use_ctx(&self, ctx: u32) {
        on!(self, b => b.use_ctx(ctx))
    }
    fn reserve(&self) -> Result<Token> {
        on!(self, b => b.reserve())
    }
    fn unreserve(&self, t: Token) {
        on!(self, b => b.unreserve(t))
    }
    fn token_from(&self, w: u32) -> Option<Token> {
        on!(self, b => b.token_from(w))
    }
    fn attach(
        &self,
        ctx: u32,
        rank: u32,
        peers: &Peers,
        tokens: &[Token],
        remote: Option<(&Peers, &[Token])>,
    ) -> AnyState {
        match self {
            Active::Native(b) => AnyState::Native(b.attach(ctx, rank, peers, tokens, remote)),
            #[cfg(feature = "mpi")]
            Active::Mpi(b) => AnyState::Mpi(b.attach(ctx, rank, peers, tokens, remote)),
        }
    }
    fn release(&self, ctx: u32, st: &AnyState) {
        with!(self, st, b, s => b.release(ctx, s))
    }

    #[inline(always)]
    fn send_eager(
        &self,
        dest: usize,
        dest_rank: u32,
        ctx: u32,
        src: u32,
        tag: i32,
        data: &[u8],
    ) -> Result<()> {
        on!(self, b => b.send_eager(dest, dest_rank, ctx, src, tag, data))
    }
    fn bsend(
        &self,
        dest: usize,
        dest_rank: u32,
        ctx: u32,
        src: u32,
        tag: i32,
        data: &[u8],
    ) -> Result<()> {
        on!(self, b => b.bsend(dest, dest_rank, ctx, src, tag, data))
    }
    #[inline]
    fn isend(
        &self,
        dest: usize,
        dest_rank: u32,
        ctx: u32,
        src: u32,
        tag: i32,
        buf: SendBuf,
    ) -> Result<ReqKey> {
        on!(self, b => b.isend(dest, dest_rank, ctx, src, tag, buf))
    }
    fn issend(
        &self,
        dest: usize,
        dest_rank: u32,
        ctx: u32,
        src: u32,
        tag: i32,
        buf: SendBuf,
    ) -> Result<ReqKey> {
        on!(self, b => b.issend(dest, dest_rank, ctx, src, tag, buf))
    }
    #[inline]
    fn irecv(&self, spec: MatchSpec, peers: Peers, buf: RecvBuf, elem: usize) -> ReqKey {
        on!(self, b => b.irecv(spec, peers, buf, elem))
    }
    #[inline]
    fn recv(&self, spec: MatchSpec, peers: Peers, buf: RecvBuf, elem: usize) -> Result<Status> {
        on!(self, b => b.recv(spec, peers, buf, elem))
    }
    #[inline(always)]
    fn recv_direct(&self, spec: &MatchSpec, buf: &mut [u8], elem: usize) -> Option<Result<Status>> {
        on!(self, b => b.recv_direct(spec, buf, elem))
    }
    #[inline]
    fn find(&self, spec: &MatchSpec) -> Option<Status> {
        on!(self, b => b.find(spec))
    }
    fn probe_doomed(&self, spec: &MatchSpec, peers: &[u32]) -> Option<Error> {
        on!(self, b => b.probe_doomed(spec, peers))
    }

    #[inline]
    fn take(&self, k: ReqKey) -> Result<Option<Result<Status>>> {
        on!(self, b => b.take(k))
    }
    #[inline]
    fn wait(&self, k: ReqKey) -> Result<Status> {
        on!(self, b => b.wait(k))
    }
    fn cancel(&self, k: ReqKey) -> Result<bool> {
        on!(self, b => b.cancel(k))
    }
    fn forget(&self, k: ReqKey) {
        on!(self, b => b.forget(k))
    }
    #[inline]
    fn is_done(&self, k: ReqKey) -> bool {
        on!(self, b => b.is_done(k))
    }
    fn request_failed(&self, k: ReqKey) -> bool {
        on!(self, b => b.request_failed(k))
    }
    fn start_task(&self, t: Box<dyn Task>) -> ReqKey {
        on!(self, b => b.start_task(t))
    }

    fn revoke(&self, ctx: u32) {
        on!(self, b => b.revoke(ctx))
    }
    #[inline]
    fn is_revoked(&self, ctx: u32) -> bool {
        on!(self, b => b.is_revoked(ctx))
    }
    fn failed_among(&self, st: &AnyState) -> Vec<u32> {
        with!(self, st, b, s => b.failed_among(s))
    }
    fn ack_failed(&self, ctx: u32, st: &AnyState, n: usize) -> usize {
        with!(self, st, b, s => b.ack_failed(ctx, s, n))
    }
    fn acked(&self, ctx: u32) -> Vec<u32> {
        on!(self, b => b.acked(ctx))
    }

    fn next_agree_seq(&self, seq: u32) -> u32 {
        on!(self, b => b.next_agree_seq(seq))
    }
    fn contribute(&self, ctx: u32, seq: u32, call: RecoveryCall, words: [u32; 4], st: &AnyState) {
        with!(self, st, b, s => b.contribute(ctx, seq, call, words, s))
    }
    fn poll_agreement(
        &self,
        ctx: u32,
        seq: u32,
        st: &AnyState,
        got: &mut [Option<Record>],
    ) -> bool {
        with!(self, st, b, s => b.poll_agreement(ctx, seq, s, got))
    }
    fn member_id(&self, st: &AnyState, i: usize) -> u32 {
        with!(self, st, b, s => b.member_id(s, i))
    }

    fn spawn_max(&self) -> usize {
        on!(self, b => b.spawn_max())
    }
    fn request_stamp(&self, ctx: u32, attempt: u32) -> u64 {
        on!(self, b => b.request_stamp(ctx, attempt))
    }
    fn request_processes(&self, r: ProcRequest<'_>) -> Result<()> {
        on!(self, b => b.request_processes(r))
    }
    fn await_processes(
        &self,
        asker: usize,
        stamp: u64,
        among: &[u32],
        parent: &AnyState,
    ) -> Option<Result<Vec<u32>, u32>> {
        with!(self, parent, b, s => b.await_processes(asker, stamp, among, s))
    }
}

/// What [`start`] gives the portable runtime.
pub(crate) type Started = pertinax_backend::Started<Active>;

/// Starts the backend this process runs on.
///
/// With the `mpi` feature, the MPI backend when `PERTINAX_BACKEND=mpi` or
/// an MPI launcher started the process (see `mpi::chosen`); else native.
/// Without it, `PERTINAX_BACKEND=mpi` is `Unsupported` (never silently
/// native).
///
/// # Errors
/// `Bootstrap` or `Transport` when the environment is broken.
pub(crate) fn start() -> Result<Started> {
    #[cfg(feature = "mpi")]
    if pertinax_mpi::chosen()? {
        return pertinax_mpi::start().map(|s| s.map(Active::Mpi));
    }
    #[cfg(not(feature = "mpi"))]
    match std::env::var(pertinax_wire::env::BACKEND)
        .as_deref()
        .map(str::trim)
    {
        Ok("mpi") => {
            return Err(Error::Unsupported {
                feature: "the MPI backend (this build lacks the `mpi` cargo feature)",
            })
        }
        Ok("" | "native") | Err(_) => {}
        Ok(other) => {
            return Err(Error::Bootstrap(format!(
                "{}={other}: expected `native` or `mpi`",
                pertinax_wire::env::BACKEND
            )))
        }
    }
    native::start().map(|s| s.map(Active::Native))
}

// ---- the opt-in capabilities ---------------------------------------------
//
// `Active` offers each opt-in trait so that the core can call it where a
// communicator's `Capabilities` say so; a variant whose backend does not
// implement the trait answers as the core does without it (the core never
// asks it: its flag is false).

impl OwnCollectives for Active {
    fn start_coll(&self, c: Coll) -> Result<ReqKey> {
        match self {
            Active::Native(_) => {
                drop(c);
                crate::backend::unsupported("the backend's own collectives")
            }
            #[cfg(feature = "mpi")]
            Active::Mpi(b) => b.start_coll(c),
        }
    }

    fn run_coll(&self, c: Coll) -> Result<Status> {
        match self {
            Active::Native(_) => {
                drop(c);
                crate::backend::unsupported("the backend's own collectives")
            }
            #[cfg(feature = "mpi")]
            Active::Mpi(b) => b.run_coll(c),
        }
    }
}

impl OwnCommunicators for Active {
    fn derive(&self, parent: &AnyState, ctx: u32, mine: Option<Derived<'_>>) -> Option<AnyState> {
        match (self, parent) {
            (Active::Native(_), _) => attach_derived(self, ctx, mine),
            #[cfg(feature = "mpi")]
            (Active::Mpi(b), AnyState::Mpi(p)) => b.derive(p, ctx, mine).map(AnyState::Mpi),
            #[cfg(feature = "mpi")]
            _ => None,
        }
    }
    fn live_members(&self, st: &AnyState, agreed: &[bool]) -> Option<Result<Vec<usize>>> {
        match (self, st) {
            #[cfg(feature = "mpi")]
            (Active::Mpi(b), AnyState::Mpi(s)) => b.live_members(s, agreed),
            _ => {
                let _ = agreed;
                None
            }
        }
    }
    fn shrink_attach(
        &self,
        old: &AnyState,
        ctx: u32,
        agreed: &[bool],
    ) -> Option<Result<Shrunk<AnyState>>> {
        match (self, old) {
            #[cfg(feature = "mpi")]
            (Active::Mpi(b), AnyState::Mpi(s)) => b.shrink_attach(s, ctx, agreed).map(|r| {
                r.map(|s| Shrunk {
                    rank: s.rank,
                    at: s.at,
                    st: AnyState::Mpi(s.st),
                })
            }),
            _ => {
                let _ = (ctx, agreed);
                None
            }
        }
    }
}

impl OwnAgreement for Active {
    fn block_on_agreement(&self, ctx: u32, seq: u32) -> Option<Record> {
        match self {
            Active::Native(_) => {
                let _ = (ctx, seq);
                None
            }
            #[cfg(feature = "mpi")]
            Active::Mpi(b) => b.block_on_agreement(ctx, seq),
        }
    }
    fn agree_now(
        &self,
        ctx: u32,
        seq: u32,
        call: RecoveryCall,
        words: [u32; 4],
        st: &AnyState,
    ) -> Option<Record> {
        match (self, st) {
            #[cfg(feature = "mpi")]
            (Active::Mpi(b), AnyState::Mpi(s)) => b.agree_now(ctx, seq, call, words, s),
            _ => {
                self.contribute(ctx, seq, call, words, st);
                None
            }
        }
    }
}

impl NameService for Active {
    fn publish_name(&self, service: &str, port: &str) -> Result<()> {
        match self {
            Active::Native(b) => b.publish_name(service, port),
            #[cfg(feature = "mpi")]
            Active::Mpi(_) => crate::backend::unsupported(MPI_NAMES),
        }
    }
    fn unpublish_name(&self, service: &str, port: &str) -> Result<()> {
        match self {
            Active::Native(b) => b.unpublish_name(service, port),
            #[cfg(feature = "mpi")]
            Active::Mpi(_) => crate::backend::unsupported(MPI_NAMES),
        }
    }
    fn lookup_name(&self, service: &str) -> Result<String> {
        match self {
            Active::Native(b) => b.lookup_name(service),
            #[cfg(feature = "mpi")]
            Active::Mpi(_) => crate::backend::unsupported(MPI_NAMES),
        }
    }
}

/// Why the MPI backend has no name service.
#[cfg(feature = "mpi")]
const MPI_NAMES: &str = "name publishing on the MPI backend (MPI_Publish_name and \
     MPI_Lookup_name are not bound in pertinax-mpi-sys)";
