//! The flat resilient communicator: one collective communicator of the
//! survivors, shrunk at each repair, and (with [`Check::Log`]) a log
//! (`replay.rs`) that lets survivors that are ahead complete the
//! collectives that others missed.

use pertinax::CommunicatorExt as _;
use std::cell::RefCell;
use std::fmt;
use std::time::{Duration, Instant};

use pertinax::{Comm, Communicator, PendingAgreement, Rank};
use pertinax_wire::resilient as wire;

use crate::p2p::{check_rank, inverse, survivors, P2p};
use crate::policy::Kind;
use crate::replay::{self, Log, Plan, Serve, Transport, What};
use crate::{Error, Outcome, Policy};

/// Agreement value tags: a repair, or a communicator creation.
const REPAIR: u64 = 1;
/// See [`REPAIR`].
const CREATE: u64 = 2;
/// The sequence-number bits of an agreement value.
const SEQ_MASK: u64 = (1 << 62) - 1;
/// The most bytes per member a collective folds into its agreement (the
/// three data words of [`pertinax::Comm::agree_gather`]).
const FOLD_BYTES: usize = 12;

/// How a resilient communicator makes sure that no rank is left behind when
/// a failure reaches the ranks in different operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Check {
    /// Legio's approach (the default): an agreement after every collective
    /// decides whether it succeeded everywhere, and if not everybody
    /// repeats it after the repair. Right for every program.
    #[default]
    Agree,
    /// No agreement on the fault-free path: survivors log what laggards
    /// would need (a copy of each result or input) and replay it after a
    /// repair. Only for programs whose ranks, between two collectives of
    /// this communicator, never wait for one another outside them (no
    /// point-to-point, no collective on another communicator in between;
    /// computation and file I/O are fine), like NAS EP: a survivor that
    /// finished a collective must be able to come back and replay it for
    /// a laggard, which it cannot do while blocked in a receive from that
    /// laggard. End with [`Resilient::finish`] when ranks may leave at
    /// different times (dropping takes this rank's log away at once).
    Log,
}

/// The configuration of resilient communicators.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Config {
    /// What happens when a rank that matters has failed.
    pub policy: Policy,
    /// How laggards are brought along.
    pub check: Check,
    /// The hierarchical mode's knobs (`None`: flat).
    pub hier: Option<crate::flavor::hier::HierConfig>,
}

impl Config {
    /// The configuration `pertinax run --resilient` passes in the
    /// environment, or `None` when the job is not resilient:
    /// `PERTINAX_RESILIENT` (`flat` or `hier`; unset, empty or `off`: not
    /// resilient), `PERTINAX_RESILIENT_K` and `PERTINAX_RESILIENT_THRESHOLD`
    /// (the hierarchy's knobs, see [`crate::HierConfig`]),
    /// `PERTINAX_RESILIENT_POLICY` (see [`Policy::parse`]) and
    /// `PERTINAX_RESILIENT_CHECK` (`agree`, the default, or `log`). The
    /// format is [`pertinax_wire::resilient::Settings`]; the variables are
    /// read whoever set them, so a program started without `pertinax run`
    /// can set them itself.
    ///
    /// # Errors
    /// [`Error::Policy`] for a value it does not understand.
    pub fn from_env() -> Result<Option<Config>, Error> {
        let Some(s) = wire::Settings::from_env().map_err(|e| Error::Policy(e.to_string()))? else {
            return Ok(None);
        };
        let hier = (s.mode == wire::Mode::Hier).then(|| {
            let mut h = crate::flavor::hier::HierConfig {
                k: s.k,
                ..Default::default()
            };
            if let Some(t) = s.threshold {
                h.threshold = t;
            }
            h
        });
        let policy = s.policy.as_ref().map(Policy::from_spec).unwrap_or_default();
        let check = match s.check {
            None | Some(wire::Check::Agree) => Check::Agree,
            Some(wire::Check::Log) => Check::Log,
        };
        Ok(Some(Config {
            policy,
            check,
            hier,
        }))
    }
}

/// The mutable part of a resilient communicator.
struct State {
    /// The collective communicator: the survivors of the last repair.
    cur: Comm,
    /// Its ranks' original ranks.
    cur_to_orig: Vec<usize>,
    /// Original rank → rank in `cur`.
    orig_to_cur: Vec<Option<usize>>,
    /// Original ranks excluded by repairs, increasing.
    failed: Vec<usize>,
    /// The completed collectives, and what laggards may need of them
    /// (kept only with [`Check::Log`]).
    log: Log<State>,
    /// Repairs so far.
    repairs: u64,
    /// Time spent in them (see [`Resilient::repair_time`]).
    repair_time: Duration,
    /// While a non-blocking scope is open (`nonblocking.rs`): its requests
    /// posted and not yet agreed complete.
    nb: Option<usize>,
    /// After [`Communicator::revoke`] here: this member's failed part of
    /// the agreement the others wait for (never waited for here).
    revoked: Option<PendingAgreement>,
}

/// A communicator whose ranks survive the failure of others: see the
/// [crate documentation](crate).
pub struct Resilient {
    cfg: Config,
    /// Original size.
    size: usize,
    /// Original rank.
    me: usize,
    /// Point-to-point traffic (never revoked nor shrunk).
    p2p: P2p,
    st: RefCell<State>,
}

impl fmt::Debug for Resilient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = self.st.borrow();
        f.debug_struct("Resilient")
            .field("rank", &self.me)
            .field("size", &self.size)
            .field("failed", &st.failed)
            .field("seq", &st.log.seq())
            .field("repairs", &st.repairs)
            .field("config", &self.cfg)
            .finish()
    }
}

/// Whether `PERTINAX_RESILIENT_TRACE` asks for a line per repair on stderr.
fn trace() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| {
        std::env::var_os(pertinax_wire::env::RESILIENT_TRACE).is_some_and(|v| v != "0")
    })
}

/// Original ranks as ranks.
fn ranks(v: &[usize]) -> Vec<Rank> {
    v.iter().map(|&r| Rank(r as i32)).collect()
}

impl State {
    /// Original rank `o`'s rank in the collective communicator.
    fn at(&self) -> impl Fn(usize) -> Option<usize> + '_ {
        |o| self.orig_to_cur.get(o).copied().flatten()
    }

    /// Whether the communicator lost ranks (the fast paths use the
    /// caller's buffers directly when it did not).
    fn whole(&self, size: usize) -> bool {
        self.cur.size() == size
    }

    /// The failed ranks as an outcome's missing list.
    fn missing(&self) -> Vec<Rank> {
        ranks(&self.failed)
    }
}

impl Resilient {
    /// Makes `comm` resilient with the configuration of the environment
    /// (or the defaults). Collective over `comm`.
    ///
    /// # Errors
    /// As [`Resilient::with_config`]; a bad environment configuration.
    pub fn new(comm: &Comm) -> Result<Resilient, Error> {
        Resilient::with_config(comm, Config::from_env()?.unwrap_or_default())
    }

    /// Makes `comm` resilient with `cfg`. Collective over `comm`; ranks that
    /// have already failed are reported as failed.
    ///
    /// # Errors
    /// `InvalidArgument` for an intercommunicator; `CommFreed`,
    /// `Finalized`.
    pub fn with_config(comm: &Comm, cfg: Config) -> Result<Resilient, Error> {
        let map: Vec<usize> = (0..comm.size()).collect();
        Resilient::build(comm, &map, comm.size(), comm.group(), cfg)
    }

    /// A resilient communicator over `base`, whose rank `i` has original
    /// rank `base_to_orig[i]` among `size`. Two agreements: the
    /// point-to-point and the collective communicator.
    fn build(
        base: &Comm,
        base_to_orig: &[usize],
        size: usize,
        orig: pertinax::Group,
        cfg: Config,
    ) -> Result<Resilient, Error> {
        let p2p = P2p::new(base, base_to_orig, size, orig)?;
        let (cur, v) = p2p.comm().shrink_gather(0)?;
        let cur_to_orig = survivors(p2p.to_orig(), &v);
        let orig_to_cur = inverse(&cur_to_orig, size);
        let failed = (0..size).filter(|&r| orig_to_cur[r].is_none()).collect();
        let me = p2p.me();
        Ok(Resilient {
            size,
            me,
            p2p,
            st: RefCell::new(State {
                cur,
                cur_to_orig,
                orig_to_cur,
                failed,
                log: Log::new(cfg.check == Check::Log),
                repairs: 0,
                repair_time: Duration::ZERO,
                nb: None,
                revoked: None,
            }),
            cfg,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Repairs so far (each one a shrink of the collective communicator).
    pub fn repairs(&self) -> u64 {
        self.st.borrow().repairs
    }

    /// Time this rank has spent repairing so far: the agreements that
    /// shrink the collective communicator and, with [`Check::Log`], the
    /// replay of the collectives that laggards missed. Neither the failure's
    /// detection nor the repeated operation is in it (the time the Legio
    /// paper's repair figure reports).
    pub fn repair_time(&self) -> Duration {
        self.st.borrow().repair_time
    }

    /// Collectives completed on this communicator.
    pub fn operations(&self) -> u64 {
        self.st.borrow().log.seq()
    }

    /// Bytes held by the replay log now (the fault-free path's memory
    /// cost; bounded by an internal barrier after 1024 non-synchronizing
    /// collectives or 4 MiB of them).
    pub fn log_bytes(&self) -> usize {
        self.st.borrow().log.bytes()
    }

    /// Ends this rank's use of the communicator, collectively: a barrier
    /// of the survivors, then the local release of [`Drop`]. Every rank
    /// calls it, as the last operation on the communicator. After it no
    /// survivor can need this rank any more: every survivor has completed
    /// every earlier collective (a barrier completes only once every live
    /// rank entered it), so nothing is left to replay. Needed under
    /// [`Check::Log`] by programs whose ranks may leave at different times
    /// (a rank that drops the communicator without it may take with it the
    /// only copy of a result a laggard needs, which the laggard then
    /// computes again without it); harmless under [`Check::Agree`], where
    /// every collective is agreed complete before it returns and dropping
    /// is enough.
    ///
    /// # Errors
    /// The barrier's (see [`Communicator::barrier`]); the communicator is
    /// released in every case.
    pub fn finish(self) -> Result<Outcome, Error> {
        Communicator::barrier(&self)
    }

    pub(crate) fn check_rank(&self, r: Rank) -> Result<usize, Error> {
        check_rank(r, self.size)
    }

    /// The policy's answer for a failed `rank` that `kind` depends on.
    pub(crate) fn gone(&self, kind: Kind, rank: usize) -> Result<Outcome, Error> {
        self.cfg.policy.answer(kind, rank)
    }

    /// Runs collective `what` until it completes: `f` gets the state and,
    /// while this rank catches up after a repair, the plan for it; a fault
    /// error repairs and runs `f` again.
    fn drive(
        &self,
        what: What,
        mut f: impl FnMut(&State, Option<Plan>) -> Result<Outcome, Error>,
    ) -> Result<Outcome, Error> {
        self.nb_idle()?;
        if self.st.borrow().revoked.is_some() {
            // Revoked here: this rank's part of the pending agreement is
            // out, so the collective communicator takes no other.
            return Err(pertinax::Error::Revoked.into());
        }
        loop {
            let r = {
                let st = self.st.borrow();
                let plan = st.log.next_plan(what, st.at());
                let r = f(&st, plan);
                match self.cfg.check {
                    Check::Log => r,
                    Check::Agree => {
                        // Legio: everybody learns whether it succeeded
                        // everywhere; if not, everybody repeats it.
                        let ok = u32::from(!matches!(&r, Err(e) if e.is_fault()));
                        if ok == 0 {
                            // Free the ranks still inside the operation: a
                            // peer that ended by leaving (it dropped the
                            // communicator and finalized) fails only the
                            // requests that name it, so the others would
                            // otherwise wait for this rank in it.
                            let _ = st.cur.revoke();
                        }
                        let a = st.cur.agree_detailed(ok)?;
                        match r {
                            Ok(_) if a.flags != 1 => Err(pertinax::Error::Revoked.into()),
                            r => r,
                        }
                    }
                }
            };
            match r {
                Err(e) if e.is_fault() => {
                    if trace() {
                        eprintln!("resilient[{}]: {what:?} failed: {e}", self.me);
                    }
                    if self.is_revoked() {
                        // Revoked by a member (see `revoke`): no repair.
                        return Err(pertinax::Error::Revoked.into());
                    }
                    self.repair()?
                }
                r => return r,
            }
        }
    }

    /// Whether a collective of `bytes` bytes per member is folded into one
    /// agreement ([`Resilient::folded`]): under [`Check::Agree`], when the
    /// backend's agreement carries words at no extra cost (native), the
    /// bytes fit an agreement record, and no non-blocking scope is open.
    /// The same at every member (the configuration, the backend, the size
    /// of the operation and the scope are).
    fn folds(&self, bytes: usize) -> bool {
        self.cfg.check == Check::Agree
            && bytes <= FOLD_BYTES
            && self.st.borrow().nb.is_none()
            && self.st.borrow().cur.agree_gather_is_one_agreement()
    }

    /// A small collective as one agreement, the fault-free path without a
    /// separate agreement on its success: every member contributes its
    /// `mine` (at most [`FOLD_BYTES`]) to [`pertinax::Comm::agree_gather`]
    /// on the collective communicator and reads every contributor's, the
    /// same at every member whatever dies meanwhile (uniform by
    /// construction), so the broadcast, reduction or barrier computed
    /// from them is too. Members that ended without contributing are
    /// repaired away before it returns (the same at every member, since
    /// they read the same failed set), so the operation's outcome lists
    /// them missing as after the usual repeat: a member that contributed
    /// and died counts unless that repair left it out. Returns each
    /// original rank's bytes, `None` for a failed rank.
    fn folded(&self, mine: &[u8]) -> Result<Vec<Option<[u8; FOLD_BYTES]>>, Error> {
        if self.st.borrow().revoked.is_some() {
            return Err(pertinax::Error::Revoked.into());
        }
        let mut bytes = [0u8; FOLD_BYTES];
        bytes[..mine.len()].copy_from_slice(mine);
        let data: [u32; 3] = bytemuck::cast(bytes);
        loop {
            let (g, new_failure) = {
                let st = self.st.borrow();
                let g = st.cur.agree_gather(1, data)?;
                let a = &g.agreement;
                let new_failure = a
                    .failed
                    .iter()
                    .chain(&a.finalized)
                    .any(|r| st.failed.binary_search(&st.cur_to_orig[r.index()]).is_err());
                (g, new_failure)
            };
            if g.agreement.flags != 1 {
                // A member's part is a failure: a revoker's (see
                // `revoke`), seen here as a revoked communicator.
                if self.is_revoked() {
                    return Err(pertinax::Error::Revoked.into());
                }
                self.repair()?;
                continue;
            }
            let mut out = vec![None; self.size];
            {
                let st = self.st.borrow();
                for (c, d) in g.data.iter().enumerate() {
                    out[st.cur_to_orig[c]] = d.map(bytemuck::cast);
                }
            }
            if new_failure {
                if trace() {
                    eprintln!("resilient[{}]: a folded collective lost members", self.me);
                }
                self.repair()?;
                // Only the repaired communicator's members count (a
                // contributor that died since is left out, the same at
                // every survivor), so a result is over the ranks not
                // missing, as a repeat after the repair gives it.
                for &o in &self.st.borrow().failed {
                    out[o] = None;
                }
            }
            return Ok(out);
        }
    }

    /// [`Resilient::drive`] for an operation whose `root` matters (reduce,
    /// gather, scatter): a failed root goes to the policy for `kind`;
    /// otherwise `normal` runs (first time, or a replay that reruns it).
    fn rooted(
        &self,
        what: What,
        kind: Kind,
        root: usize,
        mut normal: impl FnMut(&State) -> Result<Outcome, Error>,
    ) -> Result<Outcome, Error> {
        self.drive(what, |st, plan| match plan {
            None if st.orig_to_cur[root].is_none() => self.gone(kind, root),
            None | Some(Plan::Rerun) => normal(st),
            // Catching up under the log check: the survivors that completed
            // it before the repair returned without an error, so a stop
            // here is this rank's alone (no agreement made it everyone's).
            Some(Plan::RootLost(r)) => match self.gone(kind, r) {
                Err(Error::Failed { kind, rank, .. }) => Err(Error::Failed {
                    kind,
                    rank,
                    decided: crate::Decided::Locally,
                }),
                other => other,
            },
            Some(_) => Ok(Outcome::default()),
        })
    }

    /// [`Resilient::drive`] for an operation whose every rank's result is
    /// its own and needs other ranks' inputs (scan, exscan,
    /// reduce_scatter: [`What::Each`]): `normal` runs the first time and
    /// when a replay runs it again.
    fn each(
        &self,
        mut normal: impl FnMut(&State) -> Result<Outcome, Error>,
    ) -> Result<Outcome, Error> {
        self.drive(What::Each, |st, plan| match plan {
            None | Some(Plan::Rerun) => normal(st),
            Some(_) => Ok(Outcome::default()),
        })
    }

    /// Records a completed collective (the log is kept only with
    /// [`Check::Log`]); after `replay::SYNC_EVERY` non-synchronizing
    /// collectives or `replay::SYNC_BYTES` of them (`weight`: the
    /// operation's size, the same at every rank), a barrier empties the
    /// logs.
    fn record(
        &self,
        what: What,
        sync: bool,
        weight: usize,
        serve: impl FnOnce(&mut Vec<u8>) -> Serve<State>,
    ) -> Result<(), Error> {
        let due = self.st.borrow_mut().log.record(what, sync, weight, serve);
        if due {
            Communicator::barrier(self)?;
        }
        Ok(())
    }

    /// Repairs the collective communicator (repeats until a round ends
    /// without a new failure).
    pub(crate) fn repair(&self) -> Result<(), Error> {
        let t0 = Instant::now();
        let r = loop {
            match self.round(false) {
                Ok(_) => break Ok(()),
                Err(e) if e.is_fault() => continue,
                Err(e) => break Err(e),
            }
        };
        self.st.borrow_mut().repair_time += t0.elapsed();
        r
    }

    /// One agreement on the collective communicator, for a repair or a
    /// communicator creation. Returns the new communicator and its ranks'
    /// original ranks when every contributor asked for the same creation;
    /// otherwise it was a repair: the collective communicator is replaced by
    /// the survivors, and this rank replays the collectives that others
    /// missed (a fault error then means: run another round).
    fn round(&self, create: bool) -> Result<Option<(Comm, Vec<usize>)>, Error> {
        let mut st = self.st.borrow_mut();
        if !create {
            // Everyone still inside an operation joins at once.
            let _ = st.cur.revoke();
        }
        let value = (if create { CREATE } else { REPAIR } << 62) | st.log.seq();
        let (new, vals) = st.cur.shrink_gather(value)?;
        if trace() {
            eprintln!(
                "resilient[{}]: round create={create} seq={} size {} -> {} values {:?}",
                self.me,
                st.log.seq(),
                st.cur.size(),
                new.size(),
                vals.iter()
                    .map(|v| v.map(|v| (v >> 62, v & SEQ_MASK)))
                    .collect::<Vec<_>>()
            );
        }
        let alive = survivors(&st.cur_to_orig, &vals);
        if create && vals.iter().all(|v| v.is_none_or(|v| v == value)) {
            return Ok(Some((new, alive)));
        }
        let done: Vec<u64> = vals.iter().flatten().map(|v| v & SEQ_MASK).collect();
        for (i, v) in vals.iter().enumerate() {
            if v.is_none() {
                let o = st.cur_to_orig[i];
                st.failed.push(o);
            }
        }
        st.failed.sort_unstable();
        st.failed.dedup();
        st.orig_to_cur = inverse(&alive, self.size);
        st.cur_to_orig = alive;
        let old = std::mem::replace(&mut st.cur, new);
        let _ = old.free();
        st.repairs += 1;
        let range = st.log.catch_up(done);
        drop(st);
        // Replay, in order, what this rank completed and others did not.
        let st = self.st.borrow();
        st.log.replay(range, &st, &Net, st.at(), self.size)?;
        Ok(None)
    }

    /// A laggard's side of a replayed result (broadcast, allreduce,
    /// allgather): receives it into `buf`.
    fn take_spread(&self, st: &State, plan: Plan, buf: &mut [u8]) -> Result<Outcome, Error> {
        match plan {
            Plan::Bcast(src) => {
                let n = buf.len();
                let mut p = vec![0u8; replay::payload_len(n, self.size)];
                st.cur.bcast(&mut p, src)?;
                let out = replay::payload_outcome(&p, n, self.size);
                if out.skipped.is_none() {
                    buf.copy_from_slice(&p[..n]);
                }
                Ok(out)
            }
            Plan::Nothing => Ok(Outcome::default()),
            other => Err(Error::Internal(format!(
                "a replayed result cannot come from {other:?}"
            ))),
        }
    }

    /// A new resilient communicator from an agreed creation.
    /// `size` is this communicator's (a dup: the same original ranks) or
    /// `comm`'s (a split: `comm`'s ranks are the new original ranks).
    fn derive(&self, comm: &Comm, map: &[usize], size: usize) -> Result<Resilient, Error> {
        let orig = if size == self.size {
            self.p2p.orig().clone()
        } else {
            comm.group()
        };
        Resilient::build(comm, map, size, orig, self.cfg.clone())
    }

    /// Runs creation rounds until one succeeds; records it.
    fn create(&self) -> Result<(Comm, Vec<usize>), Error> {
        self.nb_idle()?;
        loop {
            match self.round(true) {
                Ok(Some(made)) => return Ok(made),
                // Revoked by a member (see `revoke`; its part of the
                // agreement does not match a creation's).
                _ if self.is_revoked() => return Err(pertinax::Error::Revoked.into()),
                Ok(None) => continue,
                Err(e) if e.is_fault() => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

/// The current collective communicator as the non-blocking layer
/// (`nonblocking.rs`) sees it.
pub(crate) struct View {
    /// The collective communicator.
    pub(crate) cur: Comm,
    /// Its ranks' original ranks.
    pub(crate) cur_to_orig: Vec<usize>,
    /// Original rank → rank in `cur`.
    pub(crate) orig_to_cur: Vec<Option<usize>>,
    /// The failed ranks (an outcome's missing list).
    pub(crate) missing: Vec<Rank>,
    /// Repairs when it was taken (a later repair makes it stale).
    pub(crate) repairs: u64,
}

/// What `nonblocking.rs` needs of a [`Resilient`].
impl Resilient {
    /// The current collective communicator.
    pub(crate) fn view(&self) -> View {
        let st = self.st.borrow();
        View {
            cur: st.cur.clone(),
            cur_to_orig: st.cur_to_orig.clone(),
            orig_to_cur: st.orig_to_cur.clone(),
            missing: st.missing(),
            repairs: st.repairs,
        }
    }

    /// Counts a non-blocking collective agreed complete (like a blocking
    /// one's [`Resilient::record`] under [`Check::Agree`]).
    pub(crate) fn nb_completed(&self) -> Result<(), Error> {
        self.record(What::Barrier, true, 0, |_| Serve::Nothing)
    }

    /// The non-blocking scope's state: `None` when none is open, else its
    /// requests not yet agreed complete.
    pub(crate) fn nb_state(&self) -> Option<usize> {
        self.st.borrow().nb
    }

    /// Sets [`Resilient::nb_state`].
    pub(crate) fn set_nb_state(&self, nb: Option<usize>) {
        self.st.borrow_mut().nb = nb;
    }

    /// Refuses a blocking collective (or a dup or split) while
    /// non-blocking requests are outstanding: its agreement would come
    /// before theirs at this rank only.
    fn nb_idle(&self) -> Result<(), Error> {
        match self.st.borrow().nb {
            Some(n) if n > 0 => Err(pertinax::Error::InvalidArgument(format!(
                "a blocking collective while {n} non-blocking request(s) are outstanding: wait them first"
            ))
            .into()),
            _ => Ok(()),
        }
    }
}

impl Drop for Resilient {
    /// Local only: the communicators are released, nothing is sent and
    /// nobody is waited for. Dropping must never start a collective: a rank
    /// that leaves early (an error returned with `?`) would otherwise run
    /// it against the other survivors' next collective and hang them all.
    /// The others see a rank that dropped the communicator and ended
    /// (finalized or exited) as failed at their next collective; under
    /// [`Check::Log`], call [`Resilient::finish`] to stay until no survivor
    /// can need this rank's log any more.
    fn drop(&mut self) {
        let st = self.st.get_mut();
        if let Some(mut a) = st.revoked.take() {
            // Waiting for it could hang (the others may never take part):
            // let it go unless it is complete.
            if !matches!(a.test(), Ok(Some(_))) {
                std::mem::forget(a);
            }
        }
        let _ = st.cur.free();
        let _ = self.p2p.comm().free();
    }
}

mod ops;
mod vops;

/// The replay's transport: the collective communicator.
struct Net;

impl Transport<State> for Net {
    fn bcast(&self, st: &State, payload: &mut Vec<u8>, src: usize) -> Result<(), Error> {
        st.cur.bcast(payload.as_mut_slice(), src)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pertinax::{CommunicatorExt, Op};

    #[test]
    fn inverse_maps_back() {
        assert_eq!(inverse(&[0, 2, 3], 4), [Some(0), None, Some(1), Some(2)]);
        assert_eq!(survivors(&[4, 5, 6], &[Some(1), None, Some(0)]), [4, 6]);
    }

    #[test]
    fn a_singleton_runs_every_operation() {
        let u = match pertinax::init() {
            Ok(u) => u,
            Err(pertinax::Error::AlreadyInitialized) => return,
            Err(e) => panic!("{e}"),
        };
        let cfg = Config {
            check: Check::Log,
            ..Config::default()
        };
        let r = Resilient::with_config(&u.world(), cfg).unwrap();
        let mut b = [5u32];
        assert!(r.bcast(&mut b, 0).unwrap().is_complete());
        let mut s = [0u32];
        r.allreduce(&[3], &mut s, &Op::sum()).unwrap();
        assert_eq!(s, [3]);
        let mut g = [0u32; 1];
        r.gather(&[4], &mut g, 0).unwrap();
        assert_eq!(g, [4]);
        r.allgather(&[6], &mut g).unwrap();
        assert_eq!(g, [6]);
        // The log is bounded: by count (1024 operations of 1 word)...
        for _ in 0..2000 {
            r.bcast(&mut b, 0).unwrap();
        }
        assert!(r.log_bytes() < 1024 * 32, "log {}", r.log_bytes());
        // ... and by bytes (4 MiB, plus the operation that crosses it).
        let mut big = vec![0u8; 1 << 20];
        for _ in 0..12 {
            r.bcast(&mut big, 0).unwrap();
        }
        assert!(r.log_bytes() <= 5 << 20, "log {}", r.log_bytes());
        let d = r.dup().unwrap();
        assert_eq!((d.rank(), d.size()), (Rank(0), 1));
        let s = r.split(Some(0), 0).unwrap().unwrap();
        assert_eq!(s.size(), 1);
        assert!(r.bcast(&mut b, 3).is_err(), "bad root is an error");
        assert!(r.failed_ranks().is_empty());
        // Revocation is refused under the log check ...
        assert!(matches!(r.revoke(), Err(Error::Unsupported(_))));
        // ... and makes every later operation return `Revoked` under the
        // agree check (no repair).
        let a = Resilient::with_config(&u.world(), Config::default()).unwrap();
        assert!(!a.is_revoked());
        a.revoke().unwrap();
        assert!(a.is_revoked());
        let mut s_ = [0u32];
        let revoked =
            |x: Result<Outcome, Error>| matches!(x, Err(Error::Comm(pertinax::Error::Revoked)));
        assert!(revoked(a.barrier()));
        assert!(revoked(a.allreduce(&[1u32], &mut s_, &Op::sum())));
        assert!(revoked(a.send(&[1u8], 0, 3)));
        assert!(a.dup().is_err());
    }
}
