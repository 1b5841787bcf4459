//! The backend's agreements, non-blocking: an agreement is started by
//! `contribute` and advanced by `poll_agreement` and by every progress
//! round of the backend (a member may contribute and then wait for
//! something else: its step that starts `MPIX_Comm_iagree` must still
//! come), so `iagree` returns at once and a rank waiting for one keeps
//! progressing its other requests. While one runs, the blocking fast
//! paths stay off (`Mpi::quiet`). The running agreements of a
//! communicator that is freed are let go, never advanced again.
//!
//! **Fast round.** Every agreement starts with one `MPIX_Comm_iagree` of
//! a word that holds the whole record when it is small: the kind `k` twice
//! (as `k` and as `!k`, so the AND shows whether every member made the
//! same call: each bit of the two is 1 in exactly one of them only if all
//! kinds agree on it), a 23-bit field (an `agree`'s flags; for the other
//! calls, the complement of the context proposal, so the AND yields the
//! OR of the proposals, a context free at every member) and a bit saying
//! the record fits (every other word is 0, and for an intercommunicator
//! this member knows of no failed member; see [`fast_word`]). When the decided AND says every record fit and every kind
//! matched, and the agreement returned `MPI_SUCCESS`, the agreement is
//! decided: every member contributed (Open MPI's ERA agrees on its return
//! code with the value, and returns `MPIX_ERR_PROC_FAILED` at every member
//! when any member of the communicator failed unacknowledged, which the
//! agreement's communicator of an intracommunicator never is; an
//! intercommunicator's is, hence the no-failure-known bit), each reads
//! `Contributed` with the decided words (for `agree`, the AND of the
//! flags: what it computes anyway). So a healthy `agree` is one
//! `MPIX_Comm_iagree`, and a healthy `shrink` (no value gathered) or
//! `spawn` needs no record exchange either. A blocking one on an
//! intracommunicator of one job, with nothing else of the backend's own
//! under way, makes that round one blocking `MPIX_Comm_agree` instead
//! ([`Agreement::decide_now`]), as a C program does: no request, no
//! state kept for polling.
//!
//! **Full rounds**, when the fast round did not decide (the same at every
//! member, since its value and code are agreed): every member sends its
//! record (the kind of call and four words) to every other on the
//! agreement's communicator; once every receive has ended (a record, or
//! the sender's failure), the members agree (`MPIX_Comm_iagree`, a
//! fault-tolerant AND, 32 members per round) on the set every survivor
//! heard from. Members in that set read `Contributed` (every survivor has
//! their records), the others `Failed`: the same at every member. A member
//! whose record does not fit the fast word sends it before it contributes
//! (so it is heard even if it dies right after, as on the native
//! backend); one whose record fits sends it only when the fast round did
//! not decide, so if it dies after its fast contribution and before the
//! decision, it reads `Failed` (where the native backend, whose
//! contributions are written in shared memory, reads `Contributed`): as
//! in ULFM's `MPIX_Comm_agree`, the contribution of a member that fails
//! during the agreement may count or not, the same at every survivor.
//!
//! **A member left behind.** On a communicator whose members belong to
//! several jobs (a spawn's processes with their parents), Open MPI 5 at
//! times never ends the agreement at one member after a death inside it,
//! while the others have their outcome (`../tell.rs`; the MPI campaigns'
//! runs 1617 and 908 in `bench-results/`). There, the fast round is never
//! waited for inside MPI, and it stops gating the full rounds as soon as
//! the member holds a record of the agreement: its own that does not fit,
//! or another member's, which is sent only by a member whose record does
//! not fit or whose fast round ended without a decision. Either way the
//! fast round decides nothing at any member, so the member goes on with
//! the full rounds and parks its fast round, tested by the progress
//! rounds until MPI ends it ([`poll_parked`]; at finalize it is left to
//! MPI, [`sys::IAgree::abandon`]); one still running 2 s later is said on
//! standard error, the trace of a member Open MPI left behind. Two
//! agreements of one communicator then run at once inside MPI, started in
//! the same order at every member, as MPI allows.

use std::rc::Rc;

use pertinax_mpi_sys::{self as sys, Kind, Op, RecvData, SendData};

use super::Trio;
use crate::backend::Record;
use crate::error::RecoveryCall;

/// Records exchanged by an agreement: kind, then the four words.
pub(super) const REC_WORDS: usize = 5;

/// This process's agreements by (context, sequence number): a vector, as
/// there are rarely more than one or two (a map's hashing or tree cost
/// more than the search on every healthy agreement).
#[derive(Debug, Default)]
pub(super) struct Agreements(Vec<((u32, u32), Agreement)>);

impl Agreements {
    /// Adds (or replaces) the agreement `k`.
    pub(super) fn insert(&mut self, k: (u32, u32), a: Agreement) {
        match self.get_mut(&k) {
            Some(old) => *old = a,
            None => self.0.push((k, a)),
        }
    }

    pub(super) fn get_mut(&mut self, k: &(u32, u32)) -> Option<&mut Agreement> {
        self.0.iter_mut().find(|e| e.0 == *k).map(|e| &mut e.1)
    }

    pub(super) fn remove(&mut self, k: &(u32, u32)) -> Option<Agreement> {
        let i = self.0.iter().position(|e| e.0 == *k)?;
        Some(self.0.swap_remove(i).1)
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = (&(u32, u32), &Agreement)> {
        self.0.iter().map(|(k, a)| (k, a))
    }

    pub(super) fn values_mut(&mut self) -> impl Iterator<Item = &mut Agreement> {
        self.0.iter_mut().map(|(_, a)| a)
    }

    /// Takes every agreement out.
    pub(super) fn take(&mut self) -> Vec<((u32, u32), Agreement)> {
        std::mem::take(&mut self.0)
    }
}

/// This member's record for a `call` with `words`: the kind, then the
/// words.
pub(super) fn record(call: RecoveryCall, words: [u32; 4]) -> [u32; REC_WORDS] {
    [
        u32::from(call.code()),
        words[0],
        words[1],
        words[2],
        words[3],
    ]
}

/// One agreement of this process.
#[derive(Debug)]
pub(super) enum Agreement {
    /// Decided: one record per member (by member: group, then remote group).
    Done(Vec<Record>),
    /// Decided by the fast round: every member contributed this record.
    Uniform(Record),
    /// Under way (not boxed: a healthy agreement allocates nothing of its
    /// own, and a process rarely has more than one or two).
    Running(Running),
}

/// A decided agreement's records.
#[derive(Clone, Copy, Debug)]
pub(super) enum Decided<'a> {
    /// Every member's is this one.
    Uniform(Record),
    /// By member (group, then remote group); a member past the end failed.
    Each(&'a [Record]),
}

/// An agreement under way.
#[derive(Debug)]
pub(super) struct Running {
    comm: sys::Comm,
    /// The fast round, while it runs (see the module documentation).
    fast: Option<sys::IAgree>,
    /// The exchange's tag and this member's record, for the full rounds.
    tag: i32,
    mine: [u32; REC_WORDS],
    /// This member's index in the agreement's communicator.
    me: usize,
    /// Whether its record went out (and the receives are posted).
    exchanged: bool,
    /// Whether the members belong to several jobs ([`Trio::mixed`]): the
    /// fast round is then polled, never waited for inside MPI, and
    /// watched for the others' records (see "A member left behind" in the
    /// module documentation).
    watch: bool,
    /// A test's stand-in for Open MPI leaving this member in an agreement
    /// the others ended ([`lose_undecided`]): the fast round ended
    /// without a decision, but reads as running.
    lost: bool,
    /// The communicator's MPI side; its `order` maps a member (group,
    /// then remote group) to its index in the agreement's communicator.
    trio: Rc<Trio>,
    sends: Vec<Op<SendData>>,
    recvs: Vec<(usize, Op<RecvData>)>,
    /// Members of the agreement's communicator.
    n: usize,
    /// Each member's record once received (the full rounds, or one that
    /// came during the fast round; empty until then, so a healthy
    /// agreement allocates nothing per member).
    heard: Vec<Option<[u32; REC_WORDS]>>,
    /// The round (32 members each) whose `MPIX_Comm_iagree` runs, and it.
    round: usize,
    agreeing: Option<sys::IAgree>,
    /// Decided records so far, by index in the agreement's communicator.
    out: Vec<Record>,
}

impl Agreement {
    /// Starts agreement `seq` on `t` with this member's record `mine`
    /// (its fast round).
    pub(super) fn start(t: &Rc<Trio>, seq: u32, mine: [u32; REC_WORDS]) -> Agreement {
        let mut r = Running::new(t, seq, mine);
        // An intercommunicator's agreement communicator is acknowledged
        // (its failure knowledge): a member that failed and that every
        // survivor acknowledged would not make the fast round fail.
        let knows_failure =
            t.remote.is_some() && r.comm.get_failed().map_or(true, |f| !f.is_empty());
        let word = fast_word(&mine, knows_failure);
        // A record that does not fit: the full rounds will run, and it goes
        // out before the contribution, so this member is heard even if it
        // dies right after it (as on the native backend).
        if word == 0 {
            r.exchange();
        }
        // Not started: the full rounds decide.
        r.fast = r.comm.iagree(word as i32).ok();
        if r.fast.is_none() {
            r.exchange();
        }
        Agreement::Running(r)
    }

    /// The fast round of agreement `seq` on intracommunicator `t` as one
    /// blocking `MPIX_Comm_agree`, when the record `mine` fits its word:
    /// `Ok` with the record every member contributed if it decided, else
    /// the agreement with its full rounds started (as [`Agreement::start`]
    /// leaves it once its fast round decided against). `None` for an
    /// intercommunicator, a communicator of several jobs (see "A member
    /// left behind") or a record that does not fit, with nothing done:
    /// [`Agreement::start`] then.
    ///
    /// The blocking call and the `MPIX_Comm_iagree` of members that
    /// started theirs with [`Agreement::start`] are one agreement to MPI
    /// (`checks/agree_mixed.c`).
    pub(super) fn decide_now(
        t: &Rc<Trio>,
        seq: u32,
        mine: [u32; REC_WORDS],
    ) -> Option<Result<Record, Agreement>> {
        if t.remote.is_some() || t.mixed() {
            return None;
        }
        let word = fast_word(&mine, false);
        if word == 0 {
            return None;
        }
        let comm = t.comms[3];
        if let Ok(d) = comm.agree(word as i32) {
            if let Some((kind, words)) = fast_decided(d as u32) {
                return Some(Ok(Record::Contributed { kind, words }));
            }
        }
        // Not decided: a member failed (or a record did not fit). The
        // processes of other jobs may not know of the failure (see
        // `tell`); the full rounds wait for them.
        t.failed_pids();
        let mut r = Running::new(t, seq, mine);
        r.exchange();
        Some(Err(Agreement::Running(r)))
    }

    /// Blocks inside MPI until the fast round ends, if it runs and the
    /// communicator is of one job (see `OwnAgreement::block_on_agreement`
    /// and "A member left behind").
    pub(super) fn block_on_fast_round(&mut self) {
        if let Agreement::Running(r) = self {
            if let (Some(f), false) = (&mut r.fast, r.watch) {
                f.wait();
            }
        }
    }

    /// Whether it is still under way.
    pub(super) fn running(&self) -> bool {
        matches!(self, Agreement::Running(_))
    }

    /// Advances the agreement; its records once decided.
    pub(super) fn poll(&mut self) -> Option<Decided<'_>> {
        if let Agreement::Running(r) = self {
            *self = r.advance()?;
        }
        match self {
            Agreement::Done(recs) => Some(Decided::Each(recs)),
            Agreement::Uniform(rec) => Some(Decided::Uniform(*rec)),
            Agreement::Running(_) => None,
        }
    }
}

impl Running {
    /// Agreement `seq` on `t` with this member's record `mine`, before its
    /// fast round.
    fn new(t: &Rc<Trio>, seq: u32, mine: [u32; REC_WORDS]) -> Running {
        Running {
            comm: t.comms[3],
            fast: None,
            tag: (seq & 0x3fff_ffff) as i32,
            mine,
            me: t.me_all as usize,
            exchanged: false,
            watch: t.mixed(),
            lost: false,
            trio: t.clone(),
            sends: Vec::new(),
            recvs: Vec::new(),
            n: t.all.len(),
            heard: Vec::new(),
            round: 0,
            agreeing: None,
            out: Vec::new(),
        }
    }

    /// One step: `Some` with the decided agreement once decided.
    fn advance(&mut self) -> Option<Agreement> {
        if let Some(fast) = &mut self.fast {
            let ended = if self.lost { None } else { fast.test() };
            if let Some(decided) = ended {
                if let Ok(d) = decided {
                    if let Some((kind, words)) = fast_decided(d as u32) {
                        self.fast = None;
                        return Some(Agreement::Uniform(Record::Contributed { kind, words }));
                    }
                }
                self.lost = self.watch && lose_undecided();
                if !self.lost {
                    self.fast = None;
                    // As in `decide_now`.
                    self.trio.failed_pids();
                    self.exchange();
                    return None;
                }
            }
            // Running (or, in a test, lost). Without a record of this
            // agreement, its outcome is not known yet.
            if !self.watch || !(self.exchanged || self.heard_any()) {
                return None;
            }
            // A record is here: its own did not fit, or another member's
            // came (see "A member left behind"): the fast round decides
            // nothing, and the full rounds go on without it.
            if let Some(f) = self.fast.take() {
                if self.lost {
                    say_left_behind("taken as never ending here (a test's setting)");
                }
                park(f);
            }
            self.trio.failed_pids();
            self.exchange();
        }
        let heard = &mut self.heard;
        self.recvs.retain_mut(|(r, op)| match op.test() {
            Ok(None) => true,
            Ok(Some((st, RecvData::Owned(b)))) => {
                if st.error == 0 && st.cancelled == 0 && b.len() == REC_WORDS * 4 {
                    heard[*r] = Some(words_of(&b));
                }
                false
            }
            // A lent buffer (never here) or a failed sender: not heard.
            Ok(Some(_)) | Err(_) => false,
        });
        self.sends.retain_mut(|op| matches!(op.test(), Ok(None)));
        if !self.recvs.is_empty() || !self.sends.is_empty() {
            return None;
        }
        if self.round == 0 && self.agreeing.is_none() {
            // The records are in: a sender's failure this member learnt
            // from its receive goes to the other jobs before the rounds,
            // which wait for every member.
            self.trio.failed_pids();
        }
        let n = self.n;
        while self.round < n.div_ceil(32) {
            let base = self.round * 32;
            let agreeing = match &mut self.agreeing {
                Some(a) => a,
                None => {
                    let mut mask: u32 = 0;
                    for i in 0..32 {
                        if self.heard.get(base + i).is_some_and(Option::is_some) {
                            mask |= 1 << i;
                        }
                    }
                    match self.comm.iagree(mask as i32) {
                        Ok(a) => self.agreeing.insert(a),
                        // Not started: nobody in this round is agreed on.
                        Err(_) => {
                            self.decide_round(0);
                            continue;
                        }
                    }
                }
            };
            let agreed = match agreeing.test()? {
                Ok(f) => f as u32,
                Err((c, f)) if c.kind() == Kind::ProcFailed => f as u32,
                Err(_) => 0,
            };
            self.agreeing = None;
            self.decide_round(agreed);
        }
        // By member (group, then remote group).
        Some(Agreement::Done(
            self.trio
                .order
                .iter()
                .map(|&r| self.out.get(r as usize).copied().unwrap_or(Record::Failed))
                .collect(),
        ))
    }

    /// Receives the records of this agreement that came in while its fast
    /// round runs; whether there was one.
    fn heard_any(&mut self) -> bool {
        while let Ok(Some(st)) = sys::iprobe(sys::any_source(), self.tag, self.comm) {
            let mut b = [0u8; REC_WORDS * 4];
            let got = sys::recv(&mut b, 4, st.source, self.tag, self.comm);
            let from = usize::try_from(st.source).ok().filter(|&r| r < self.n);
            let (Ok(got), Some(from)) = (got, from) else {
                break;
            };
            if got.bytes == (REC_WORDS * 4) as i64 {
                if self.heard.is_empty() {
                    self.heard = vec![None; self.n];
                }
                self.heard[from] = Some(words_of(&b));
            }
        }
        self.heard.iter().any(Option::is_some)
    }

    /// Starts the full rounds: this member's record to every other, and a
    /// receive from each whose record is not here yet.
    fn exchange(&mut self) {
        if std::mem::replace(&mut self.exchanged, true) {
            return;
        }
        let (n, me) = (self.n, self.me);
        // Records that came during the fast round are kept.
        if self.heard.is_empty() {
            self.heard = vec![None; n];
        }
        self.out = Vec::with_capacity(n);
        let bytes: Vec<u8> = self.mine.iter().flat_map(|w| w.to_le_bytes()).collect();
        for r in (0..n).filter(|&r| r != me) {
            // A send or receive that cannot start counts as not heard.
            if let Ok(op) = Op::send(
                SendData::Owned(bytes.clone().into_boxed_slice()),
                r as i32,
                self.tag,
                self.comm,
            ) {
                self.sends.push(op);
            }
            if self.heard[r].is_some() {
                continue;
            }
            let buf = RecvData::Owned(vec![0u8; REC_WORDS * 4].into_boxed_slice());
            if let Ok(op) = Op::recv(buf, r as i32, self.tag, self.comm) {
                self.recvs.push((r, op));
            }
        }
        if let Some(h) = self.heard.get_mut(me) {
            *h = Some(self.mine);
        }
    }

    /// Records the current round's members from the agreed mask.
    fn decide_round(&mut self, agreed: u32) {
        let base = self.round * 32;
        for i in 0..32 {
            let Some(h) = self.heard.get(base + i) else {
                break;
            };
            self.out.push(match h {
                Some(w) if agreed & (1 << i) != 0 => Record::Contributed {
                    kind: w[0] as u8,
                    words: [w[1], w[2], w[3], w[4]],
                },
                _ => Record::Failed,
            });
        }
        self.round += 1;
    }
}

/// How long a parked fast round may run before this process says so
/// ([`say_left_behind`]): Open MPI ends a healthy one within milliseconds.
const PARKED_TOO_LONG: std::time::Duration = std::time::Duration::from_secs(2);

/// A fast round that decides nothing and that MPI has not ended yet, since
/// when, and whether that was said.
struct Parked {
    f: Option<sys::IAgree>,
    since: std::time::Instant,
    said: bool,
}

impl Drop for Parked {
    /// An ended round is freed; one still running is left to MPI, never
    /// waited for (also when the thread's state is dropped at exit).
    fn drop(&mut self) {
        if let Some(mut f) = self.f.take() {
            if f.test().is_none() {
                f.abandon();
            }
        }
    }
}

thread_local! {
    /// The parked fast rounds (see "A member left behind"): tested by
    /// every progress round ([`poll_parked`]) until they end, never waited
    /// for.
    static PARKED: std::cell::RefCell<Vec<Parked>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Parks `f` (see [`PARKED`]).
fn park(f: sys::IAgree) {
    let since = std::time::Instant::now();
    let parked = Parked {
        f: Some(f),
        since,
        said: false,
    };
    // (Never borrowed here: the progress round polls the agreements, then
    // the parked rounds. Were it, dropping `parked` leaves it to MPI.)
    PARKED.with(|p| {
        if let Ok(mut p) = p.try_borrow_mut() {
            p.push(parked);
        }
    });
}

/// Drops the parked fast rounds that MPI has ended, and says once of each
/// that has run for [`PARKED_TOO_LONG`]: the trace of an agreement Open
/// MPI left this member in.
pub(super) fn poll_parked() {
    PARKED.with(|p| {
        if let Ok(mut p) = p.try_borrow_mut() {
            p.retain_mut(|e| {
                if e.f.as_mut().is_none_or(|f| f.test().is_some()) {
                    return false;
                }
                if !e.said && e.since.elapsed() > PARKED_TOO_LONG {
                    e.said = true;
                    say_left_behind("not ended by Open MPI here 2 s after the outcome was known");
                }
                true
            });
        }
    });
}

/// Before `MPI_Finalize`: the parked fast rounds that have not ended are
/// left to MPI ([`sys::IAgree::abandon`]), not waited for.
pub(super) fn abandon_parked() {
    PARKED.with(|p| {
        if let Ok(mut p) = p.try_borrow_mut() {
            // Dropping each leaves it to MPI.
            p.clear();
        }
    });
}

/// A record's words from its bytes.
fn words_of(b: &[u8]) -> [u32; REC_WORDS] {
    let mut w = [0u32; REC_WORDS];
    for (w, c) in w.iter_mut().zip(b.chunks_exact(4)) {
        *w = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
    }
    w
}

/// Whether this process stands for one that Open MPI leaves in an
/// undecided fast round (a test's setting:
/// [`pertinax_wire::env::tune::MPI_LOSE_FAST_ROUND`] names its rank in the
/// job `mpirun` started).
fn lose_undecided() -> bool {
    static LOSE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *LOSE.get_or_init(|| {
        let var = std::env::var(pertinax_wire::env::tune::MPI_LOSE_FAST_ROUND);
        let rank = std::env::var("OMPI_COMM_WORLD_RANK");
        std::env::var_os("OMPI_PARENT_PORT").is_none()
            && matches!((var, rank), (Ok(v), Ok(r)) if v.trim() == r.trim())
    })
}

/// Says on standard error that a fast round was left `how`: rare, and
/// the one trace of an agreement Open MPI did not end at this member.
#[cold]
fn say_left_behind(how: &str) {
    eprintln!(
        "pertinax: rank {}: an agreement's fast round was {how}; going on with the record exchange \
         without it",
        super::watchdog::world_rank()
    );
}

/// Bits of the fast word: the field, the kind, its complement, and "the
/// record fits".
const FIELD_BITS: u32 = 23;
const FIELD_MASK: u32 = (1 << FIELD_BITS) - 1;
const KIND_MASK: u32 = 0b111;
const KIND_AT: u32 = FIELD_BITS;
const NOT_KIND_AT: u32 = FIELD_BITS + 3;
const FITS: u32 = 1 << 31;

/// Whether `kind` is `agree`'s, whose first word (the flags) is read as
/// the AND over the members.
fn is_agree(kind: u32) -> bool {
    kind == u32::from(RecoveryCall::Agree.code())
}

/// This member's word for the fast round: its record when it fits, else 0
/// (the AND then sends everyone to the full rounds). It fits when no
/// failure is known, the kind is below 8, and: for an `agree`, the flags
/// are below 2²³ and the other words 0 (the field holds the flags: the
/// AND is what `agree` reads); for any other call, every word is 0 but the
/// second, the context proposal, below 2²³ (the field holds its
/// complement, so the AND gives the complement of the OR of the
/// proposals: a context at least every member's proposal, and a multiple
/// of 4 as they are, which is all a proposal is for, where the full
/// rounds take the largest).
fn fast_word(mine: &[u32; REC_WORDS], knows_failure: bool) -> u32 {
    let [kind, w0, w1, w2, w3] = *mine;
    let field = if is_agree(kind) {
        (w1 == 0 && w2 == 0 && w3 == 0 && w0 <= FIELD_MASK).then_some(w0)
    } else {
        (w0 == 0 && w2 == 0 && w3 == 0 && w1 <= FIELD_MASK).then_some(!w1 & FIELD_MASK)
    };
    match field {
        Some(f) if !knows_failure && kind <= KIND_MASK => {
            FITS | (kind << KIND_AT) | ((!kind & KIND_MASK) << NOT_KIND_AT) | f
        }
        _ => 0,
    }
}

/// The decided record (kind and words) of a fast round, when it decides:
/// every member's record fitted and all kinds were the same (each bit of
/// the kind is set in exactly one of the two ANDs).
fn fast_decided(d: u32) -> Option<(u8, [u32; 4])> {
    let kind = (d >> KIND_AT) & KIND_MASK;
    let not_kind = (d >> NOT_KIND_AT) & KIND_MASK;
    if d & FITS == 0 || kind | not_kind != KIND_MASK || kind & not_kind != 0 {
        return None;
    }
    let field = d & FIELD_MASK;
    let words = if is_agree(kind) {
        [field, 0, 0, 0]
    } else {
        [0, !field & FIELD_MASK, 0, 0]
    };
    Some((kind as u8, words))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The AND of the members' words, as `MPIX_Comm_iagree` decides it.
    fn and(words: &[u32]) -> u32 {
        words.iter().fold(u32::MAX, |a, w| a & w)
    }

    fn rec(kind: u32, w0: u32) -> [u32; REC_WORDS] {
        [kind, w0, 0, 0, 0]
    }

    #[test]
    fn a_healthy_agree_decides_the_and_of_the_flags() {
        let words: Vec<u32> = [0b1011, 0b0011, 0b1111]
            .iter()
            .map(|&f| fast_word(&rec(1, f), false))
            .collect();
        assert_eq!(fast_decided(and(&words)), Some((1, [0b0011, 0, 0, 0])));
    }

    #[test]
    fn other_calls_decide_a_context_at_least_every_proposal() {
        for props in [[8u32, 8, 8], [4, 8, 12], [16, 4, 40], [0, 0, 0]] {
            let words: Vec<u32> = props
                .iter()
                .map(|&c| fast_word(&[2, 0, c, 0, 0], false))
                .collect();
            let (kind, w) = fast_decided(and(&words)).expect("decides");
            assert_eq!(kind, 2);
            assert_eq!(w[0], 0);
            assert!(props.iter().all(|&c| w[1] >= c), "{props:?} -> {w:?}");
            assert_eq!(w[1] % 4, 0);
            assert_eq!(w[1], props.iter().fold(0, |a, c| a | c));
        }
    }

    #[test]
    fn every_mismatch_of_kinds_is_seen() {
        for a in 1..=6u32 {
            for b in 1..=6u32 {
                let d = and(&[fast_word(&rec(a, 0), false), fast_word(&rec(b, 0), false)]);
                assert_eq!(fast_decided(d).is_some(), a == b, "kinds {a} and {b}");
            }
        }
    }

    #[test]
    fn a_record_that_does_not_fit_sends_everyone_to_the_full_rounds() {
        let ok = fast_word(&rec(1, 1), false);
        for other in [
            fast_word(&rec(1, 1 << 23), false),
            fast_word(&[1, 0, 7, 0, 0], false),
            fast_word(&[2, 1, 8, 0, 0], false),
            fast_word(&[2, 0, 8, 3, 0], false),
            fast_word(&[2, 0, 1 << 23, 0, 0], false),
            fast_word(&rec(1, 1), true),
            fast_word(&rec(9, 0), false),
        ] {
            assert_eq!(other, 0);
            assert_eq!(fast_decided(and(&[ok, other])), None);
        }
    }
}
