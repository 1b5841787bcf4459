//! The opt-in capabilities: what a backend may do itself instead of
//! letting the portable core do it (see "Opt-in capabilities" in the crate
//! documentation). [`Capabilities`] announces them; [`OwnCollectives`]
//! (with the collective it is handed, [`Coll`]), [`OwnCommunicators`]
//! (with [`Derived`] and [`Shrunk`], and [`attach_derived`] for a backend
//! without it), [`OwnAgreement`], [`NameService`] and [`DirectP2p`] (with
//! what its calls did, [`Now`]) are the traits.

use pertinax_os::lend::{Lent, LentMut};

use crate::error::{Error, RecoveryCall, Result};
use crate::op::ErasedOp;
use crate::types::Status;
use crate::{Backend, Peers, Record, ReqKey, Token};

/// This process's part of a communicator derived from a parent
/// ([`OwnCommunicators::derive`]).
#[derive(Clone, Copy, Debug)]
pub struct Derived<'a> {
    /// The color that tells it from the others derived in the same call.
    pub color: u32,
    /// This process's rank in it.
    pub rank: u32,
    /// Its members' ids, in rank order.
    pub peers: &'a Peers,
    /// Their tokens.
    pub tokens: &'a [Token],
}

/// A communicator made by a backend's own shrink ([`OwnCommunicators::shrink_attach`]).
#[derive(Debug)]
pub struct Shrunk<S> {
    /// This process's rank in it.
    pub rank: u32,
    /// Its members' positions in the shrunk communicator, in rank order.
    pub at: Vec<usize>,
    /// Its state.
    pub st: S,
}

/// Which collective a [`Coll`] runs. Lengths, counts and displacements are
/// in bytes; `lens`/`offs` of a rooted v-collective are the root's (at
/// another rank, only its own entry is meaningful).
#[derive(Debug, Clone)]
pub enum CollKind {
    Barrier,
    Bcast {
        root: u32,
    },
    Reduce {
        root: u32,
    },
    Allreduce,
    Scan,
    /// Rank 0's output is left as it was.
    Exscan,
    /// The reduction of every rank's input, block `i` (`lens[i]` bytes,
    /// in rank order) to rank `i`.
    ReduceScatter {
        lens: Vec<usize>,
    },
    /// Equal blocks of `len` bytes.
    Gather {
        root: u32,
        len: usize,
    },
    Gatherv {
        root: u32,
        lens: Vec<usize>,
        offs: Vec<usize>,
    },
    Scatter {
        root: u32,
        len: usize,
    },
    Scatterv {
        root: u32,
        lens: Vec<usize>,
        offs: Vec<usize>,
    },
    Allgather {
        len: usize,
    },
    Allgatherv {
        lens: Vec<usize>,
        offs: Vec<usize>,
    },
    Alltoall {
        len: usize,
    },
    Alltoallv {
        sl: Vec<usize>,
        so: Vec<usize>,
        rl: Vec<usize>,
        ro: Vec<usize>,
    },
}

/// Where a [`Coll`] writes.
#[derive(Debug)]
pub enum CollOut {
    /// The caller's buffer.
    Lent(LentMut),
    /// Scratch of this many bytes, thrown away (a root that rejected its
    /// arguments still takes part).
    Scratch(usize),
}

/// A collective for a backend with its own ([`OwnCollectives::start_coll`]);
/// the arguments were checked by the collective layer.
#[derive(Debug)]
pub struct Coll {
    /// The communicator's collective context (`ctx + 1`).
    pub ctx: u32,
    pub kind: CollKind,
    /// The input; `None` in place (the input is in `out`).
    pub inp: Option<Lent>,
    pub out: CollOut,
    /// The reduction of a reducing collective.
    pub op: Option<ErasedOp>,
}

/// What a backend offers beyond the required set ([`Backend::capabilities`]):
/// which opt-in traits it implements, and how its calls behave. The API
/// reads it once when a communicator is made and keeps it there: no call
/// path asks the backend again.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Capabilities {
    /// The backend runs every collective itself ([`OwnCollectives`])
    /// rather than the portable schedules (MPI: MPI's own collectives).
    pub own_collectives: bool,
    /// The backend makes and shrinks communicators itself
    /// ([`OwnCommunicators`]; MPI: `MPI_Comm_split`, `MPIX_Comm_shrink`).
    pub own_communicators: bool,
    /// The backend's agreement runs inside its transport
    /// ([`OwnAgreement`]; MPI: `MPIX_Comm_agree`, `MPIX_Comm_iagree`). Such an agreement
    /// carries one word past its fast round: several words per member take
    /// an exchange of records, so callers that could fold data into an
    /// agreement send it their usual way instead. Without it (native),
    /// every record is one write to shared memory, whatever it holds.
    pub own_agreement: bool,
    /// A blocking send or receive of the backend on a revoked communicator
    /// fails with `Revoked` by itself (MPI's do: ULFM checks the
    /// revocation first), and so does a collective of
    /// [`OwnCollectives`], so the API need not ask [`Backend::is_revoked`]
    /// before each one.
    pub calls_check_revocation: bool,
    /// The backend publishes and looks up service names for ports
    /// ([`NameService`]; native: the launcher's name table).
    pub name_service: bool,
    /// A blocking send or a receive from a named source can go straight to
    /// the transport's blocking call, without a request
    /// ([`DirectP2p`]; MPI: `MPI_Send`, `MPI_Recv`).
    pub direct_p2p: bool,
}

/// What a call of [`DirectP2p`] did.
#[derive(Debug)]
pub enum Now {
    /// The call is done (a receive wrote its status).
    Done,
    /// Nothing was done: the caller takes the general path, which sees
    /// the same state as if this call had not been made.
    General,
    /// The call failed (a receive may have consumed its message: a
    /// truncation). Boxed: rare, and it keeps [`Now`] two words.
    Failed(Box<Error>),
}

/// A backend whose blocking sends and receives from a named source can
/// skip the request machinery ([`Capabilities::direct_p2p`]): the API
/// calls these first, with arguments it has checked, and falls back to
/// the general path on [`Now::General`]. The hot path of a ping-pong.
pub trait DirectP2p: Backend {
    /// A blocking send of `data` to `dest_rank` with `tag` on context
    /// `ctx`, made at once if this backend can (it returns when `data` may
    /// be reused).
    fn send_now(&self, ctx: u32, dest_rank: u32, tag: i32, data: &[u8]) -> Now;
    /// A blocking receive on context `ctx` from `src` with `tag` (`None`:
    /// any tag) into `buf` (elements of `elem` bytes), made at once if this
    /// backend can; on [`Now::Done`] the message's status is in `st`. A
    /// message too long for `buf` or not whole elements is consumed and
    /// fails it (`Truncated`, `LengthNotMultiple`).
    fn recv_now(
        &self,
        ctx: u32,
        src: u32,
        tag: Option<i32>,
        buf: &mut [u8],
        elem: usize,
        st: &mut Status,
    ) -> Now;
}

/// A backend that runs the collectives itself
/// ([`Capabilities::own_collectives`]).
pub trait OwnCollectives: Backend {
    /// Starts a collective as the backend's own; its outcome is the
    /// request's.
    ///
    /// # Errors
    /// As the backend's collective (a failed member, a revoked
    /// communicator), or `Unsupported` for what it cannot express.
    fn start_coll(&self, c: Coll) -> Result<ReqKey>;
    /// Runs a collective to completion: the blocking form, which every
    /// member of the communicator calls for the same collective (the core
    /// never mixes it with [`OwnCollectives::start_coll`] for one call).
    /// By default, [`OwnCollectives::start_coll`] then [`Backend::wait`];
    /// a backend whose transport has blocking collectives that do not match
    /// its non-blocking ones (MPI's) runs them here.
    ///
    /// # Errors
    /// As [`OwnCollectives::start_coll`], and the collective's outcome.
    fn run_coll(&self, c: Coll) -> Result<Status> {
        let k = self.start_coll(c)?;
        self.wait(k)
    }
}

/// A backend whose transport makes and shrinks communicators
/// ([`Capabilities::own_communicators`]).
pub trait OwnCommunicators: Backend {
    /// Makes the communicator `ctx` derived from `parent` (dup, split,
    /// create; merge of an intercommunicator, whose members are those of
    /// both groups). Called by every member of `parent` in the same order:
    /// `mine` is this process's part, `None` for a member of `parent` left
    /// out of every new communicator. `Some` holds the communicator's color
    /// (a split makes one per color), this process's rank in it, its
    /// members' ids and their tokens in rank order. Returns the state for a
    /// member, `None` for the others. (Without this trait the core calls
    /// [`attach_derived`].)
    fn derive(
        &self,
        parent: &Self::CommState,
        ctx: u32,
        mine: Option<Derived<'_>>,
    ) -> Option<Self::CommState>;
    /// The members of the intracommunicator `st` that are alive, as far
    /// as the backend can tell the same at every survivor (by position;
    /// a subset of those `agreed` says contributed to the last
    /// agreement), if it can for this communicator (`None`: the agreement
    /// is all). Collective over the survivors, who pass the same `agreed`.
    /// The MPI backend's is `MPIX_Comm_shrink`, which leaves out a
    /// contributor that died since the agreement.
    ///
    /// # Errors
    /// As the backend's shrink.
    fn live_members(&self, st: &Self::CommState, agreed: &[bool]) -> Option<Result<Vec<usize>>>;
    /// Makes the communicator `ctx` of a decided shrink of the
    /// intracommunicator `old` by the backend's own shrink. Collective over
    /// the survivors, who pass the same `agreed` (by position in `old`:
    /// whether the member contributed to the shrink's agreement). Its
    /// members are a subset of the agreed ones: the backend's own shrink
    /// may leave out a contributor that died since the agreement. Returns
    /// this process's rank in it, the members' positions in `old` in rank
    /// order, and its state; `None` where it cannot for this communicator
    /// (the core then attaches the agreed survivors).
    ///
    /// # Errors
    /// As the backend's shrink (a process failure while it runs).
    fn shrink_attach(
        &self,
        old: &Self::CommState,
        ctx: u32,
        agreed: &[bool],
    ) -> Option<Result<Shrunk<Self::CommState>>>;
}

/// A backend whose agreement runs inside its transport
/// ([`Capabilities::own_agreement`]).
pub trait OwnAgreement: Backend {
    /// Called once before a blocking agreement is waited for: the backend
    /// may block there until agreement `seq` of `ctx` can move on, when
    /// nothing else of its own would need progress meanwhile (MPI:
    /// `MPI_Wait` on the fast round's `MPIX_Comm_iagree`, as a C program's
    /// `MPIX_Comm_agree` does, instead of polling with a backoff).
    ///
    /// When the agreement is then decided with the same record from every
    /// member (MPI's fast round), it returns that record, and the
    /// agreement is over (not polled again); else `None`, and the wait
    /// that follows polls as usual.
    fn block_on_agreement(&self, ctx: u32, seq: u32) -> Option<Record>;

    /// A blocking agreement in one call, when nothing else of the
    /// backend's own would need progress meanwhile: contributes `words` to
    /// agreement `seq` of `ctx` and blocks until it is decided (MPI: one
    /// `MPIX_Comm_agree`, as a C program calls it, instead of
    /// `MPIX_Comm_iagree` and a wait). Returns the record when every
    /// member contributed the same one, and the agreement is over. Else
    /// `None`, with the agreement contributed as by
    /// [`Backend::contribute`] (perhaps its fast round already decided
    /// against), and the caller waits for it as after `contribute`.
    fn agree_now(
        &self,
        ctx: u32,
        seq: u32,
        call: RecoveryCall,
        words: [u32; 4],
        st: &Self::CommState,
    ) -> Option<Record>;
}

/// A backend with a name service for ports ([`Capabilities::name_service`]):
/// `MPI_Publish_name`, `MPI_Unpublish_name`, `MPI_Lookup_name`. The names
/// are the job's (every process the job's launcher started sees them).
/// Each call is answered in a bounded time: a name server that is gone or
/// silent is an error (`Transport`), never a hang.
pub trait NameService: Backend {
    /// Publishes `service` as the name of `port`.
    ///
    /// # Errors
    /// `NameTaken` if `service` is already published.
    fn publish_name(&self, service: &str, port: &str) -> Result<()>;
    /// Withdraws `service`, published for `port`.
    ///
    /// # Errors
    /// `NameNotPublished` if `service` is not published for `port`.
    fn unpublish_name(&self, service: &str, port: &str) -> Result<()>;
    /// The port published as `service`.
    ///
    /// # Errors
    /// `NameNotFound` if nothing is.
    fn lookup_name(&self, service: &str) -> Result<String>;
}

/// What a backend without [`OwnCommunicators`] does for
/// [`OwnCommunicators::derive`]: the members [`Backend::attach`], the
/// others do nothing.
pub fn attach_derived<B: Backend>(
    b: &B,
    ctx: u32,
    mine: Option<Derived<'_>>,
) -> Option<B::CommState> {
    mine.map(|d| b.attach(ctx, d.rank, d.peers, d.tokens, None))
}
