//! The rescue of a hierarchy in which every group that still has
//! survivors lost every global member in the same stage: nobody is left in
//! the global communicator to call the groups' new masters
//! ([`Work::Orphan`]), so they find out together and the lowest of them
//! founds a new global communicator and calls the others.
//!
//! # Detection
//!
//! A new master waiting for its call (an *orphan*: [`Hierarchical::rejoin`])
//! cannot know who is in the global communicator now (members joined since
//! its group last heard of them), but it knows its own group has nobody
//! there (every member of a group knows its group's global members). So
//! it asks every other group: the lowest rank of each group that has not
//! ended (failed, or left the program) gets a [`Query`] on the
//! library's communicator, and only a rank that is itself an orphan
//! waiting for its call answers it ([`Answer`]: its number of *wakes*, the
//! times it stopped waiting because it was called or got a pushed output,
//! and its operation). A rank that is not waiting never answers, so a
//! round completes only when every group's lowest live rank is an orphan.
//!
//! One complete round is a set of snapshots taken at different times: a
//! rank may have answered, been called by a live global member, and gone
//! on. Two complete rounds in a row with the same ranks and the same wake
//! counts (the second round's queries sent after every answer of the first
//! arrived) mean that every one of them waited all along between its two
//! answers, so at one instant every group with a live rank was an orphan
//! (its lowest live rank waited for a call): no rank was in the global
//! communicator, and no rank can ever be called again but by a rescue
//! (only members of the global communicator call). That is the
//! double-collection rule of termination detection; no timer decides.
//! A target that ends during a round starts a new round (new targets).
//!
//! # Rescue
//!
//! The orphan that found it with the lowest rank among the answers and
//! itself leads: like a new master whose group holds every rank that has
//! not ended, it makes a global communicator of itself, with the groups
//! that have no live rank gone, and runs the joins of every other group
//! ([`Work::Orphan`], the repair's own call: each group's members are
//! tried in rank order, uniformly). The other orphans keep waiting (and
//! asking: if the leader dies before calling them, their next two rounds
//! elect the next one; if it dies after calling some, those are members of
//! the global communicator and call the rest at their next repair). The
//! global communicator is at the lowest operation of the answers (the
//! groups are at most one operation apart): a group in that operation's
//! first stage runs its global stage when it gets there, one in its last
//! stage runs the global stage again with its copy of its contribution
//! (every group member holds one), one that finished that operation runs
//! it too and its confirmation ([`Hierarchical::catch_up`]), so the
//! operation is re-run, the same for every survivor.
//!
//! # Ending an operation from what the groups kept
//!
//! Running the operation's global stage again is uniform only if no group
//! has finished it: a group that contributed to the first run may have
//! died whole since, and the re-run would lack its contribution. A group
//! finishes an operation only after its master (or deputy) confirmed it,
//! and the confirmation succeeds only when every member of the global
//! communicator completed its part of its group's last stage (its members
//! then hold that stage's data) or the group without any had the output
//! pushed (its new master takes it and does not wait). Every member keeps
//! what its last stage gave it, across the stage's failed attempts; a
//! retry of the stage starts with a local agreement on whether every
//! member holds it, and an orphan's [`Answer`] says whether it waits in
//! its operation's last stage and whether its group holds it so. The
//! leader takes the lowest operation of the answers: if every orphan there
//! waits in its last stage with the data held, the operation ends from
//! it (`respread` in the [`Join`]: each such group's master tells its
//! group at the retry's start, and every member returns what it kept) and
//! the global communicator starts at the next operation; otherwise no
//! group had finished the operation, and it is re-run (a group's master
//! that runs the global stage again tells its group to drop what it
//! kept).
//!
//! The fault-free path is unchanged: queries are sent only by ranks that
//! wait for a call, and answered only by ranks that wait.

use pertinax::CommunicatorExt as _;
use std::collections::BTreeMap;

use pertinax::Error as CoreError;

use super::join::Called;
use super::*;

/// Tag of a [`Query`].
const TAG_QUERY: Tag = Tag(7009);
/// Tag of an [`Answer`].
const TAG_ANSWER: Tag = Tag(7011);

/// An orphan's question to the lowest live rank of another group: are you
/// an orphan waiting for a call?
#[derive(Debug, Serialize, Deserialize)]
struct Query {
    /// The asker's original rank.
    from: usize,
    /// The asker's round.
    round: u64,
}

/// An orphan's answer to a [`Query`].
#[derive(Debug, Serialize, Deserialize)]
struct Answer {
    /// The answerer's original rank.
    from: usize,
    /// The round asked about.
    round: u64,
    /// The answerer's wakes so far (see the module docs).
    wakes: u64,
    /// The answerer's operation.
    seq: u64,
    /// The answerer waits in its operation's last stage.
    post: bool,
    /// ... and every member of its group kept what the stage's first
    /// run gave it.
    ready: bool,
}

/// A target's answer in a round: (target, wakes, operation, post, ready).
type Snap = (usize, u64, u64, bool, bool);

/// An orphan's detection in progress (one per wait).
#[derive(Debug, Default)]
pub(super) struct Detect {
    /// The round in progress.
    round: Option<u64>,
    /// (group, its lowest live rank) of every other group with one.
    targets: Vec<(usize, usize)>,
    /// The answers of this round: target → its [`Answer`]'s (wakes,
    /// operation, post, ready).
    answers: BTreeMap<usize, (u64, u64, bool, bool)>,
    /// The last complete round: (target, wakes, operation, post, ready).
    prev: Option<Vec<Snap>>,
}

impl Hierarchical {
    /// Whether original rank `o` has ended (failed, or left the program: a
    /// probe naming a rank that ended fails).
    fn ended(&self, o: usize) -> Result<bool, Error> {
        let Some(p) = self.ctl_rank(o) else {
            return Ok(true);
        };
        if self.p2p.failed(Vec::new()).contains(&Rank(o as i32)) {
            return Ok(true);
        }
        match self.ctl.iprobe(Rank(p as i32).into(), TAG_PROBE.into()) {
            Err(e) if e.is_fault() => Ok(true),
            Err(e) => Err(e.into()),
            Ok(_) => Ok(false),
        }
    }

    /// Whether every global member of this rank's group (as the group
    /// knows them) but this rank has ended: a deputy waiting for its call
    /// whose head ended is its group's new head, an orphan.
    pub(super) fn group_orphaned(&self) -> Result<bool, Error> {
        let gm = self.st.borrow().gmembers.clone();
        for o in gm.into_iter().filter(|&o| o != self.me) {
            if !self.ended(o)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Every other group's lowest rank that has not ended.
    fn targets(&self) -> Result<Vec<(usize, usize)>, Error> {
        let mut t = Vec::new();
        for h in (0..self.groups()).filter(|&h| h != self.group) {
            for o in self.group_members(h) {
                if !self.ended(o)? {
                    t.push((h, o));
                    break;
                }
            }
        }
        Ok(t)
    }

    /// Receives the next message of tag `tag` on the point-to-point
    /// communicator if one is here (failures acknowledged, as in
    /// [`Self::await_call`]).
    fn take<V: serde::de::DeserializeOwned>(&self, tag: Tag) -> Result<Option<V>, Error> {
        let comm = &self.ctl;
        loop {
            match comm.iprobe(Source::Any, tag.into()) {
                Ok(Some(_)) => {}
                Ok(None) => return Ok(None),
                Err(CoreError::ProcFailedPending { .. }) => {
                    comm.ack_failed(usize::MAX)?;
                    continue;
                }
                Err(e) if e.is_fault() => return Ok(None),
                Err(e) => return Err(e.into()),
            }
            match comm.recv_value::<V>(Source::Any, tag) {
                Ok(got) => return Ok(got.map(|(v, _)| v)),
                Err(CoreError::ProcFailedPending { .. }) => {
                    comm.ack_failed(usize::MAX)?;
                }
                Err(e) if e.is_fault() => return Ok(None),
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// This waiting rank's state as an [`Answer`] gives it: (wakes,
    /// operation, waits in its last stage, its group kept that stage's
    /// data).
    fn waiting(&self) -> (u64, u64, bool, bool) {
        let st = self.st.borrow();
        let post = st.waiting_post;
        (st.wakes, st.seq, post, post && st.kept_all == Some(st.seq))
    }

    /// At an orphan waiting for its call: answers the queries that came.
    pub(super) fn answer_queries(&self) -> Result<(), Error> {
        while let Some(q) = self.take::<Query>(TAG_QUERY)? {
            let (wakes, seq, post, ready) = self.waiting();
            let Some(p) = self.ctl_rank(q.from) else {
                continue;
            };
            // A dead asker: the send fails, nobody waits for it.
            let _ = self.ctl.send_value(
                &Answer {
                    from: self.me,
                    round: q.round,
                    wakes,
                    seq,
                    post,
                    ready,
                },
                Rank(p as i32),
                TAG_ANSWER,
            );
        }
        Ok(())
    }

    /// Starts a new round of `d`: new targets, a query to each.
    fn start_round(&self, d: &mut Detect) -> Result<(), Error> {
        let round = {
            let mut st = self.st.borrow_mut();
            st.rounds += 1;
            st.rounds
        };
        d.round = Some(round);
        d.answers.clear();
        d.targets = self.targets()?;
        for &(_, o) in &d.targets {
            let Some(p) = self.ctl_rank(o) else {
                continue;
            };
            // A dead target: the send fails; the next poll sees it ended.
            let _ = self.ctl.send_value(
                &Query {
                    from: self.me,
                    round,
                },
                Rank(p as i32),
                TAG_QUERY,
            );
        }
        Ok(())
    }

    /// One step of an orphan's detection (called at every poll of its
    /// wait): answers queries, takes answers, and decides. Returns the
    /// call this rank makes to itself when it leads the rescue.
    pub(super) fn detect(&self, d: &mut Detect) -> Result<Option<Called>, Error> {
        self.answer_queries()?;
        while let Some(a) = self.take::<Answer>(TAG_ANSWER)? {
            if Some(a.round) == d.round && d.targets.iter().any(|&(_, o)| o == a.from) {
                d.answers.insert(a.from, (a.wakes, a.seq, a.post, a.ready));
            }
        }
        if d.round.is_none() {
            return self.start_round(d).map(|()| None);
        }
        let mut lost = false;
        for &(_, o) in &d.targets {
            if !d.answers.contains_key(&o) && self.ended(o)? {
                lost = true;
            }
        }
        if lost {
            d.prev = None;
            return self.start_round(d).map(|()| None);
        }
        if d.answers.len() < d.targets.len() {
            return Ok(None);
        }
        let snap: Vec<Snap> = d
            .targets
            .iter()
            .filter_map(|&(_, o)| d.answers.get(&o).map(|&(w, s, p, r)| (o, w, s, p, r)))
            .collect();
        if d.prev.as_ref() != Some(&snap) {
            d.prev = Some(snap);
            return self.start_round(d).map(|()| None);
        }
        // Every group with a live rank is an orphan: the lowest leads.
        if snap.iter().any(|&(o, ..)| o < self.me) {
            // Another orphan leads; ask again (a leader that died before
            // calling this rank is replaced by the next two rounds).
            d.prev = None;
            return self.start_round(d).map(|()| None);
        }
        let (_, own, own_post, own_ready) = self.waiting();
        let mut states: Vec<(u64, bool, bool)> =
            snap.iter().map(|&(_, _, s, p, r)| (s, p, r)).collect();
        states.push((own, own_post, own_ready));
        let low = states.iter().map(|s| s.0).fold(own, u64::min);
        // Every rank waiting in the lowest operation waits in its last
        // stage and its group kept that stage's data: a group may have
        // finished that operation (see the module docs), so it ends from
        // what the groups kept and the global communicator starts at the
        // next one. Otherwise nobody finished it, and it runs again.
        let respread = states
            .iter()
            .filter(|s| s.0 == low)
            .all(|&(_, post, ready)| post && ready);
        let seq = low + u64::from(respread);
        let gone = (0..self.groups())
            .filter(|&h| h != self.group && !d.targets.iter().any(|&(g, _)| g == h))
            .collect();
        let later = d.targets.iter().map(|&(g, _)| Work::Orphan(g)).collect();
        if trace() {
            eprintln!(
                "hier[{}/{}]: rescue at op {seq} (respread {respread}): every group lost \
                 its global members, leading the joins of {:?}",
                self.me, self.size, d.targets
            );
        }
        if respread {
            self.st.borrow_mut().respread = Some(low);
        }
        let msg = Join {
            seq,
            members: Vec::new(),
            gone,
            later,
            last: None,
            respread,
        };
        Ok(Some(Called::Joined(msg, self.solo.dup()?)))
    }
}
