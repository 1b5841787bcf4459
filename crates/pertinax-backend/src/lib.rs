//! The backend contract: what the portable core needs from the layer that
//! moves bytes between processes and knows which processes have failed.
//!
//! The portable core (communicators, point-to-point and collective API,
//! request scopes, schedules, the ULFM API, spawn and intercommunicator
//! API, argument checks) is written only against the [`Backend`] trait and
//! the types of this crate. A backend is chosen when the API starts
//! (`pertinax`'s `dispatch.rs`): `pertinax-native` (shared memory on one
//! machine, started by `pertinax run`) or, with the cargo feature `mpi`,
//! `pertinax-mpi` (Open MPI 5 with ULFM, under `mpirun`). Portable code
//! never names a backend's crate; only the API's dispatch does, to start
//! one.
//!
//! # Names a backend uses
//!
//! - A *process id* (`u32`) names a process of the job, the same at every
//!   process (native: its slot in the segment). Groups and communicators
//!   are lists of process ids in rank order ([`Peers`]).
//! - A *context id* (`u32`, a multiple of 4, from [`Backend::next_ctx`] /
//!   [`Backend::use_ctx`]) names a communicator inside the process;
//!   `ctx` carries point-to-point traffic, `ctx + 1` collective traffic,
//!   `ctx + 2` the internal traffic of recovery (never revoked). The
//!   members of a new communicator agree on it (each proposes
//!   `next_ctx()`, all take the largest), so it is unique in every
//!   process.
//! - A *token* ([`Token`]) is what each member reserves for a communicator
//!   about to be created ([`Backend::reserve`]); the members exchange
//!   their tokens during the creation and hand them all to
//!   [`Backend::attach`] (native: the member's fault-tolerance entry in
//!   the segment). A backend with nothing to reserve returns 0 and ignores
//!   them. [`TOKEN_WORLD`], [`TOKEN_SELF`] and [`TOKEN_PARENT`] are
//!   reserved at start-up.
//! - A *request* is a [`ReqKey`]: an opaque key the backend owns. It stays
//!   valid until its result is taken ([`Backend::take`], [`Backend::wait`])
//!   or it is let go ([`Backend::forget`]); afterwards every call on it
//!   answers `RequestInactive`.
//!
//! # What every backend must provide
//!
//! - **Non-blocking send, receive and probe with MPI matching**
//!   ([`Backend::isend`], [`Backend::send_eager`], [`Backend::irecv`],
//!   [`Backend::find`]), and the synchronous send ([`Backend::issend`]:
//!   complete only once the receiver matched the message): receives match by (context, source, tag) with
//!   wildcards ([`MatchSpec`]); arrivals match posted receives in posting
//!   order, a new receive searches earlier arrivals in arrival order first,
//!   and messages from one sender on one context never overtake each
//!   other. A message too long for the buffer (or not a whole number of
//!   elements) is consumed, as MPI consumes it, and fails the receive with
//!   `Truncated` / `LengthNotMultiple`.
//! - **Requests**: [`Backend::take`] (test), [`Backend::wait`],
//!   [`Backend::cancel`] (only a receive that has not matched),
//!   [`Backend::forget`] (drop: a pending operation completes in the
//!   background, and the buffers lent to it stay borrowed until it has, as
//!   the lending scope requires).
//! - **Progress**: [`Backend::progress`] moves everything it can without
//!   blocking, and [`Backend::idle`] waits a little when nothing moved
//!   (spin, yield, then sleep until something may have arrived). Every
//!   blocking call of the core is a loop of the two.
//! - **Tasks**: [`Backend::start_task`] runs a boxed [`Task`] (a collective
//!   schedule) on every progress round until it finishes; the task drives
//!   point-to-point requests through [`TaskIo`]. The portable schedules
//!   are the collectives every backend gets for free.
//! - **Communicators**: [`Backend::reserve`], [`Backend::attach`],
//!   [`Backend::release`], and the context ids above.
//! - **Failure knowledge** (fail-stop, as ULFM): a request that needs a
//!   failed process completes with `ProcFailed`; an any-source receive
//!   while a member's failure is unacknowledged with `ProcFailedPending`;
//!   [`Backend::failed_among`] (in learning order), [`Backend::ack_failed`],
//!   [`Backend::acked`]. A failure is never a panic, a hang, or `Internal`.
//! - **Revoke** ([`Backend::revoke`], [`Backend::is_revoked`]): after it,
//!   every pending and later operation on the communicator's point-to-point
//!   and collective contexts fails with `Revoked` at every member, even if
//!   the revoker dies at once.
//! - **Agreement** ([`Backend::contribute`], [`Backend::poll_agreement`]):
//!   a fault-tolerant uniform agreement where each member contributes four
//!   words and the kind of its recovery call, and every member that
//!   decides reads the same [`Record`] per member (contributed, or ended
//!   without contributing). `agree`, `shrink`, `shrink_gather`, `spawn`,
//!   `merge`, `replace_failed` and the intercommunicator commit are built
//!   on it in portable code.
//! - **Spawn** ([`Backend::request_processes`], [`Backend::await_processes`]):
//!   one member asks for new processes; every member reads the same
//!   answer, whether or not the asker survived. Every member taking part
//!   calls `await_processes` with the same list of them, so a backend
//!   whose spawn is collective (MPI's `MPI_Comm_spawn`) runs it there.
//!   Intercommunicators are [`Backend::attach`] with a remote group.
//! - **Finalize and abort** ([`Backend::finalize`], [`Backend::abort`]).
//!
//! # Opt-in capabilities
//!
//! What a backend may do itself instead of letting the portable core do
//! it, each a trait of its own over [`Backend`], announced by one flag of
//! [`Capabilities`] that the core reads once per communicator (the name
//! service: once per process, at `init`), never per call. The native
//! backend opts into the name service only; the MPI backend into the other
//! four, so that MPI's tuned implementations run:
//!
//! - [`OwnCollectives`] ([`Capabilities::own_collectives`]): the backend
//!   runs every collective: the collective layer checks the arguments, then
//!   describes the call ([`Coll`]) to [`OwnCollectives::start_coll`]
//!   instead of building a schedule, and the result is a request key like
//!   any other (test, wait, forget).
//! - [`OwnCommunicators`] ([`Capabilities::own_communicators`]): the
//!   backend makes communicators collectively over their parent
//!   ([`OwnCommunicators::derive`]: `MPI_Comm_split`) and shrinks them with
//!   its own shrink ([`OwnCommunicators::shrink_attach`],
//!   [`OwnCommunicators::live_members`]: `MPIX_Comm_shrink`). Without it,
//!   the core attaches the agreed members ([`attach_derived`]).
//! - [`OwnAgreement`] ([`Capabilities::own_agreement`]): the backend's
//!   agreement runs inside its transport (`MPIX_Comm_iagree`), which a
//!   blocking agreement may wait in ([`OwnAgreement::block_on_agreement`],
//!   which hands back an agreement decided there whole) or be made in one
//!   blocking call ([`OwnAgreement::agree_now`]: `MPIX_Comm_agree`);
//!   such an agreement carries one word past its fast round, so several
//!   words per member take an exchange of records (see `agree_gather`).
//! - [`NameService`] ([`Capabilities::name_service`]): service names for
//!   ports (`MPI_Publish_name`, `MPI_Lookup_name`); there is no portable
//!   fallback, so without it `Universe::publish_name` and its kin answer
//!   `Unsupported`.
//! - [`DirectP2p`] ([`Capabilities::direct_p2p`]): a blocking send, or a
//!   receive from a named source, straight to the transport's blocking
//!   call when the backend can make it at once ([`DirectP2p::send_now`],
//!   [`DirectP2p::recv_now`]: `MPI_Send`, `MPI_Recv`), before the core
//!   builds anything for the general path; [`Now::General`] sends it
//!   there.
//!
//! # What is optional
//!
//! Spares and replacement processes (`replace_failed`), single-copy
//! transfers of large messages (CMA), heartbeats, fault injection by the
//! launcher (`fault_point` kills), and the fast paths of `shrink_gather`
//! and `agree_detailed` (several words per member in one agreement; a
//! backend whose native agreement carries one flag word, as
//! `MPIX_Comm_agree` does, implements them as agreement plus allgather
//! over the shrunk communicator). A backend that lacks an optional part
//! returns [`Error::Unsupported`] naming it (see [`unsupported`]), never
//! panics.
//!
//! # Dispatch
//!
//! The API crate (`pertinax`) holds the backend chosen at start-up as
//! `Active`, an enum of the backends compiled in that implements
//! [`Backend`] by matching (its `dispatch.rs`): one predictable branch per call, each backend's
//! methods inlined behind it, and with one backend no branch at all. Not
//! `Rc<dyn Backend>`: the contract has a generic [`Backend::wait_until`]
//! and a per-communicator associated state, which a trait object would
//! have to box on every wait and every communicator, and the fast path
//! (an 8-byte send is ~0.2 µs) has no room for indirect calls. The cost of
//! the contract against the engine-welded core is measured by
//! `pertinax-bench regress` (BENCHMARKS.md, "Backend contract").

use std::fmt::Debug;
use std::rc::Rc;

use crate::error::{Error, RecoveryCall, Result};
use crate::types::Status;
use crate::wait::Backoff;

mod buf;
mod capability;
pub mod error;
pub mod inject;
pub mod op;
mod startup;
pub mod types;
pub mod wait;

pub use buf::{Cell, RecvBuf, SendBuf, Store};
pub use capability::{
    attach_derived, Capabilities, Coll, CollKind, CollOut, Derived, DirectP2p, NameService, Now,
    OwnAgreement, OwnCollectives, OwnCommunicators, Shrunk,
};
pub use startup::{Assignment, StartBound, Started};

/// A request's key, owned by the backend: slot index and generation (the
/// backend decides what they mean; native also uses it as a wire cookie).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReqKey {
    pub idx: u32,
    pub gen: u32,
}

impl ReqKey {
    /// The key as one word (for a backend that sends it to a peer and gets
    /// it back, as the native engine's rendezvous cookies).
    pub fn cookie(self) -> u64 {
        ((self.gen as u64) << 32) | self.idx as u64
    }

    /// The key of a [`ReqKey::cookie`].
    pub fn from_cookie(c: u64) -> ReqKey {
        ReqKey {
            idx: c as u32,
            gen: (c >> 32) as u32,
        }
    }
}

/// What a receive accepts.
#[derive(Clone, Copy, Debug)]
pub struct MatchSpec {
    pub ctx: u32,
    pub src: Option<u32>,
    pub tag: Option<i32>,
}

impl MatchSpec {
    #[inline]
    pub fn matches(&self, ctx: u32, src: u32, tag: i32) -> bool {
        self.ctx == ctx && self.src.is_none_or(|s| s == src) && self.tag.is_none_or(|t| t == tag)
    }
}

/// The processes of a communicator an operation runs on: rank → process id.
pub type Peers = Rc<[u32]>;

/// What a member reserved for a communicator being created.
pub type Token = u16;

/// The tokens of the world, self and parent communicators.
pub const TOKEN_WORLD: Token = 0;
pub const TOKEN_SELF: Token = 1;
pub const TOKEN_PARENT: Token = 2;

/// One member's part of an agreement instance, the same at every member
/// that reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Record {
    /// The member contributed `words` for a call of kind `kind`.
    Contributed { kind: u8, words: [u32; 4] },
    /// It failed without contributing.
    Failed,
    /// It finalized without contributing.
    Finalized,
}

/// The error of a backend that lacks an optional feature.
#[allow(
    dead_code,
    reason = "for backends that lack an optional feature; the native backend has them all"
)]
pub fn unsupported<T>(feature: &'static str) -> Result<T> {
    Err(Error::Unsupported { feature })
}

/// A request for new processes (see [`Backend::request_processes`]).
#[derive(Debug)]
pub struct ProcRequest<'a> {
    /// The value every member computed for this request (see
    /// [`Backend::request_stamp`]).
    pub stamp: u64,
    /// The program and its arguments; `None` for the job's own program.
    pub program: Option<(&'a str, &'a [&'a str])>,
    pub count: usize,
    /// Use idle spares first (replacements).
    pub spares: bool,
    /// What the new processes receive at start-up.
    pub payload: Vec<u8>,
    /// For the launcher's labels: the ranks the new processes take.
    pub replaces: Vec<u32>,
}

/// A collective schedule (or any multi-step operation) that the backend
/// advances on every progress round (see [`Backend::start_task`]).
pub trait Task {
    /// Moves as far as it can now through `io`; returns whether anything
    /// moved and, once finished, the outcome. A finished task has let go of
    /// every request it started.
    fn advance(&mut self, io: &mut dyn TaskIo) -> (bool, Option<Result<Status>>);
}

impl std::fmt::Debug for dyn Task {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Task")
    }
}

/// The point-to-point operations a [`Task`] drives (a view of the backend
/// from inside a progress round).
pub trait TaskIo {
    /// As [`Backend::isend`].
    fn isend(
        &mut self,
        dest: usize,
        dest_rank: u32,
        ctx: u32,
        src: u32,
        tag: i32,
        buf: SendBuf,
    ) -> Result<ReqKey>;
    /// As [`Backend::irecv`].
    fn irecv(&mut self, spec: MatchSpec, peers: Peers, buf: RecvBuf, elem: usize) -> ReqKey;
    /// As [`Backend::is_done`].
    fn is_done(&self, k: ReqKey) -> bool;
    /// As [`Backend::take`].
    fn take(&mut self, k: ReqKey) -> Result<Option<Result<Status>>>;
    /// Ends a request the task no longer wants, returning its buffer once
    /// no peer can touch it any more.
    fn abandon(&mut self, k: ReqKey);
}

/// The contract (see the module documentation). Every method takes
/// `&self`: a backend keeps its mutable state in cells, and no borrow is
/// held across calls, so closures given to [`Backend::wait_until`] may
/// call back in.
pub trait Backend: Debug + Sized {
    /// What the backend keeps per communicator at this process.
    type CommState: Debug;

    // ---- process ----------------------------------------------------------

    /// One round of progress; true if anything happened.
    fn progress(&self) -> bool;
    /// One idle step of a wait (spin, yield, then sleep until something
    /// may have arrived).
    fn idle(&self, b: &mut Backoff);
    /// Largest message sent in one step (a blocking send of at most this
    /// many bytes returns at once).
    fn eager_limit(&self) -> usize;
    /// Whether large messages move by a single copy (optional feature).
    fn single_copy(&self) -> bool;
    /// Delivers what is still queued, ends every pending request with
    /// `Finalized`, and tells whoever started the job.
    fn finalize(&self) -> Result<()>;
    /// Tells whoever started the job to end it with `code`.
    fn abort(&self, code: i32, message: &str);
    /// Tells the launcher that a fault point fires (optional: fault
    /// injection by the launcher; a backend without it does nothing).
    fn report_injection(&self, point: &str, hit: u64, signal: i32);
    /// Sends everything still queued.
    fn flush(&self);

    /// Progresses until `done` holds.
    #[inline]
    fn wait_until(&self, mut done: impl FnMut(&Self) -> bool) {
        let mut b = Backoff::default();
        loop {
            let moved = self.progress();
            if done(self) {
                return;
            }
            if moved {
                b.reset();
                continue;
            }
            self.idle(&mut b);
        }
    }

    /// One step of progress for a scope that waits for its requests.
    #[inline]
    fn drain_step(&self, b: &mut Backoff) {
        if self.progress() {
            b.reset();
        } else {
            self.idle(b);
        }
    }

    // ---- communicators ----------------------------------------------------

    /// The lowest context id this process has never used.
    fn next_ctx(&self) -> u32;
    /// Records that context ids below `ctx + 4` are used.
    fn use_ctx(&self, ctx: u32);
    /// Reserves this member's token for a communicator being created.
    ///
    /// # Errors
    /// `InvalidArgument` when the process holds too many communicators.
    fn reserve(&self) -> Result<Token>;
    /// Gives back a token after a creation that failed or that this
    /// process is not part of.
    fn unreserve(&self, t: Token);
    /// The token with this value received from another member, if valid.
    fn token_from(&self, w: u32) -> Option<Token>;
    /// Makes the communicator `ctx` of `peers` (with every member's token
    /// in rank order) where this process is `rank`, and for an
    /// intercommunicator its remote group.
    fn attach(
        &self,
        ctx: u32,
        rank: u32,
        peers: &Peers,
        tokens: &[Token],
        remote: Option<(&Peers, &[Token])>,
    ) -> Self::CommState;
    /// Frees the communicator at this process (local).
    fn release(&self, ctx: u32, st: &Self::CommState);

    // ---- point-to-point ---------------------------------------------------

    /// Sends at most [`Backend::eager_limit`] bytes to process `dest`
    /// (rank `dest_rank` of the communicator); the data is out of `data`
    /// when this returns.
    ///
    /// # Errors
    /// `ProcFailed` / `Revoked` when the destination is known gone or the
    /// communicator revoked.
    fn send_eager(
        &self,
        dest: usize,
        dest_rank: u32,
        ctx: u32,
        src: u32,
        tag: i32,
        data: &[u8],
    ) -> Result<()>;
    /// Sends `data` in buffered mode (`MPI_Bsend`): copied out when this
    /// returns, whatever its size, delivered without the caller waiting
    /// for the receiver; finalize completes what is still moving.
    ///
    /// # Errors
    /// As [`Backend::send_eager`].
    fn bsend(
        &self,
        dest: usize,
        dest_rank: u32,
        ctx: u32,
        src: u32,
        tag: i32,
        data: &[u8],
    ) -> Result<()>;
    /// Starts a send of a lent buffer.
    ///
    /// # Errors
    /// Resource errors only; a doomed send gives a failed request.
    fn isend(
        &self,
        dest: usize,
        dest_rank: u32,
        ctx: u32,
        src: u32,
        tag: i32,
        buf: SendBuf,
    ) -> Result<ReqKey>;
    /// Starts a synchronous send of a lent buffer (`MPI_Issend`): the
    /// request completes only once a receive at the destination has
    /// matched the message, whatever its size. A destination that ends
    /// before then fails it with `ProcFailed`.
    ///
    /// # Errors
    /// As [`Backend::isend`].
    fn issend(
        &self,
        dest: usize,
        dest_rank: u32,
        ctx: u32,
        src: u32,
        tag: i32,
        buf: SendBuf,
    ) -> Result<ReqKey>;
    /// Posts a receive into a lent buffer of `elem`-byte elements among
    /// `peers`.
    fn irecv(&self, spec: MatchSpec, peers: Peers, buf: RecvBuf, elem: usize) -> ReqKey;
    /// A blocking receive straight into `buf`, without a request or a lent
    /// buffer, if this backend can do it now (the native engine, or MPI's
    /// `MPI_Recv`, when nothing else is pending there); `None` for
    /// [`Backend::recv`], in the
    /// state the general path expects (see `Engine::recv_direct`).
    #[inline]
    fn recv_direct(
        &self,
        _spec: &MatchSpec,
        _buf: &mut [u8],
        _elem: usize,
    ) -> Option<Result<Status>> {
        None
    }
    /// A blocking receive: [`Backend::irecv`] then [`Backend::wait`] (a
    /// backend may do both in one step; the blocking receive is a hot path).
    ///
    /// # Errors
    /// As the request's wait.
    #[inline]
    fn recv(&self, spec: MatchSpec, peers: Peers, buf: RecvBuf, elem: usize) -> Result<Status> {
        let k = self.irecv(spec, peers, buf, elem);
        self.wait(k)
    }
    /// A matching message already here, without receiving it.
    fn find(&self, spec: &MatchSpec) -> Option<Status>;
    /// Why a probe for `spec` among `peers` can never succeed, if so.
    fn probe_doomed(&self, spec: &MatchSpec, peers: &[u32]) -> Option<Error>;

    // ---- requests ---------------------------------------------------------

    /// The result of a completed request (freeing it), `None` if pending.
    ///
    /// # Errors
    /// `RequestInactive` for a request whose result was already taken.
    fn take(&self, k: ReqKey) -> Result<Option<Result<Status>>>;
    /// Waits for a request and takes its result.
    ///
    /// # Errors
    /// The request's error, or `RequestInactive`.
    fn wait(&self, k: ReqKey) -> Result<Status>;
    /// Cancels a receive that has not matched; true if cancelled.
    ///
    /// # Errors
    /// `RequestInactive` for a request whose result was already taken.
    fn cancel(&self, k: ReqKey) -> Result<bool>;
    /// Lets go of a request nobody will wait for.
    fn forget(&self, k: ReqKey);
    /// Whether the request is complete (or already taken).
    fn is_done(&self, k: ReqKey) -> bool;
    /// Whether the request completed with an error.
    fn request_failed(&self, k: ReqKey) -> bool;
    /// Runs a task on every progress round until it finishes; its outcome
    /// is the request's.
    fn start_task(&self, t: Box<dyn Task>) -> ReqKey;
    /// What the backend offers beyond the required set (none by
    /// default): the opt-in traits it implements, and how its calls
    /// behave. Read once when a communicator is made, and kept in it.
    fn capabilities(&self) -> Capabilities {
        Capabilities::default()
    }
    // ---- failures and revocation -----------------------------------------

    /// Revokes the communicator at every member.
    fn revoke(&self, ctx: u32);
    /// Whether the communicator was revoked (as known here).
    fn is_revoked(&self, ctx: u32) -> bool;
    /// The communicator's members known failed, in learning order.
    fn failed_among(&self, st: &Self::CommState) -> Vec<u32>;
    /// Acknowledges the first `n` of them; returns how many are.
    fn ack_failed(&self, ctx: u32, st: &Self::CommState, n: usize) -> usize;
    /// The acknowledged failed members.
    fn acked(&self, ctx: u32) -> Vec<u32>;

    // ---- agreement --------------------------------------------------------

    /// The sequence number of the agreement after `seq` on a communicator.
    fn next_agree_seq(&self, seq: u32) -> u32;
    /// Contributes to agreement `seq` of communicator `ctx`.
    fn contribute(
        &self,
        ctx: u32,
        seq: u32,
        call: RecoveryCall,
        words: [u32; 4],
        st: &Self::CommState,
    );
    /// Reads the members' records still missing in `got` (one per member:
    /// group, then remote group); true once every member is settled.
    fn poll_agreement(
        &self,
        ctx: u32,
        seq: u32,
        st: &Self::CommState,
        got: &mut [Option<Record>],
    ) -> bool;
    /// This process's id in the communicator's members (group, then remote
    /// group) at position `i`.
    fn member_id(&self, st: &Self::CommState, i: usize) -> u32;

    // ---- spawn ------------------------------------------------------------

    /// Most processes one request may ask for.
    fn spawn_max(&self) -> usize;
    /// The value that identifies attempt `attempt` of the requests made
    /// for the communicator `ctx` (the same at every member).
    fn request_stamp(&self, ctx: u32, attempt: u32) -> u64;
    /// Asks for new processes (from the member that asks).
    ///
    /// # Errors
    /// `SpawnFailed` if the request cannot be made; `Unsupported` for
    /// spares on a backend without them.
    fn request_processes(&self, r: ProcRequest<'_>) -> Result<()>;
    /// Waits for the answer to the request `stamp` made by process `asker`:
    /// the new processes' ids, or the refusal's status; `None` if the asker
    /// ended without an answer (nothing was started). Called by every
    /// member taking part, each with the same `among` (their process ids,
    /// the asker's included), so that it may be collective over them, and
    /// the same `parent`: the communicator they belong to (the one that
    /// spawns, or the one being repaired), which `among` is all of or
    /// part of, for a backend that makes its own communicator for the
    /// call from it.
    fn await_processes(
        &self,
        asker: usize,
        stamp: u64,
        among: &[u32],
        parent: &Self::CommState,
    ) -> Option<Result<Vec<u32>, u32>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_feature_is_a_typed_error_naming_it() {
        let e = unsupported::<()>("spares").unwrap_err();
        assert_eq!(e, Error::Unsupported { feature: "spares" });
        assert!(e.to_string().contains("spares"), "{e}");
        assert!(!e.is_fault());
    }
}
