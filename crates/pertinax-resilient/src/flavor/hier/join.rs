//! Joins to the global communicator: a new deputy led by its group's head
//! ([`Work::Deputy`]), and the new head of a group that lost every global
//! member, found and led by the global communicator's rank 0
//! ([`Work::Orphan`]); both sides of each; and the receiving side of a
//! pushed global output ([`Hierarchical::confirm`]).

use pertinax::CommunicatorExt as _;
use pertinax::Error as CoreError;

use super::rescue::Detect;
use super::*;

/// Every ack of a failure on the library's communicator while a head
/// waits for its [`Hello`].
fn ack(comm: &Comm) -> Result<(), Error> {
    comm.ack_failed(usize::MAX)?;
    Ok(())
}

/// The shortest and longest pause between two polls of a rank waiting
/// for a call.
const NAP_MIN: Duration = Duration::from_micros(20);
/// See [`NAP_MIN`].
const NAP_MAX: Duration = Duration::from_millis(1);

/// What a rank waiting outside the global communicator gets.
pub(super) enum Called {
    /// It joined: the join message and the merged communicator.
    Joined(Join, Comm),
    /// The global output of the operation it needs, pushed by a
    /// confirmation ([`Hierarchical::confirm`]).
    Output(Vec<u8>),
}

impl Hierarchical {
    /// The new deputy joins the global communicator at operation `seq`:
    /// it waits for a call ([`Self::await_call`]) from its group's head,
    /// or, if the head dies, from the global communicator's rank 0 (which
    /// calls the group's lowest live member, this rank then).
    pub(super) fn join(&self, seq: u64) -> Result<(), Error> {
        if trace() {
            eprintln!("hier[{}/{}]: joining at op {seq}", self.me, self.size);
        }
        let Called::Joined(msg, merged) = self.await_call(false, None)? else {
            return Err(internal("a deputy's call without a join"));
        };
        if msg.seq > seq {
            return Err(internal(format!(
                "a deputy joined at operation {} from operation {seq}",
                msg.seq
            )));
        }
        let (at, respread) = (msg.seq, msg.respread);
        {
            let mut st = self.st.borrow_mut();
            if !st.gmembers.contains(&self.me) {
                st.gmembers.push(self.me);
            }
            st.elect = None;
            st.global_repairs += 1;
        }
        match self.adopt(merged, msg) {
            Err(e) if !e.is_fault() => return Err(e),
            _ => {}
        }
        // Called as its group's new head by a global communicator still
        // in an operation this group left early: that stage first.
        self.catch_up(at, None, false, respread)
    }

    /// Waits for a call ([`Hello`]) of the global communicator and joins
    /// it: the join message and the merged communicator. A caller that
    /// dies, or a failure during the creation, means another call comes
    /// (from the repaired global communicator). `orphan`: a group's new
    /// head; it, or a deputy whose group's global members all ended, takes
    /// part in the rescue's detection while it waits, and leads the rescue
    /// if it is the lowest such rank when every group is so (`rescue.rs`;
    /// with no live rank outside its group, at once). `need`: the operation whose
    /// global output this rank waits for (a new head in its group's last
    /// stage): a push of it ends the wait as well.
    fn await_call(&self, orphan: bool, need: Option<u64>) -> Result<Called, Error> {
        let comm = &self.ctl;
        let mut nap = Duration::ZERO;
        let mut det = Detect::default();
        self.st.borrow_mut().waiting_post = need.is_some();
        loop {
            if let Some(out) = need.and_then(|s| self.take_pushed(s)) {
                self.st.borrow_mut().wakes += 1;
                return Ok(Called::Output(out));
            }
            // A new master, or a deputy whose group's global members all
            // ended before calling it: if every group is so, the lowest of
            // them leads the rescue (`rescue.rs`).
            if orphan || self.group_orphaned()? {
                if let Some(called) = self.detect(&mut det)? {
                    return Ok(called);
                }
            }
            // Poll: a rank that left the program (finalized) wakes no
            // receive, and an orphan's detection needs the ranks' ends
            // and answers.
            match comm.iprobe(Source::Any, TAG_HELLO.into()) {
                Ok(Some(_)) => nap = Duration::ZERO,
                Ok(None) => {
                    nap = (nap * 2).clamp(NAP_MIN, NAP_MAX);
                    std::thread::sleep(nap);
                    continue;
                }
                Err(CoreError::ProcFailedPending { .. }) => {
                    ack(comm)?;
                    continue;
                }
                Err(e) if e.is_fault() => continue,
                Err(e) => return Err(e.into()),
            }
            let hello: Hello = match comm.recv_value(Source::Any, TAG_HELLO) {
                Ok(Some((h, _))) => h,
                // A plain communicator's receive is never skipped.
                Ok(None) => continue,
                Err(CoreError::ProcFailedPending { .. }) => {
                    ack(comm)?;
                    continue;
                }
                Err(e) if e.is_fault() => continue,
                Err(e) => return Err(e.into()),
            };
            if let Some(p) = hello.output {
                self.store_push(p);
                continue;
            }
            let Some(pl) = self.ctl_rank(hello.leader) else {
                continue;
            };
            if trace() {
                eprintln!(
                    "hier[{}/{}]: called by {}",
                    self.me, self.size, hello.leader
                );
            }
            let joined = self
                .solo
                .intercomm_create(Rank(0), comm, Rank(pl as i32), TAG_JOIN)
                .and_then(|inter| {
                    // The merge is collective over both groups: take part in
                    // it whatever the receive gave, or the others wait in it
                    // for this rank forever. Every remote member sent the
                    // same join message before its part of the merge, so
                    // after a merge that succeeded one is there even if
                    // the leader died: an any-source receive fails with
                    // `ProcFailedPending` once any remote member died, so
                    // acknowledge and receive again.
                    let got: pertinax::Result<Option<(Join, Status)>> =
                        inter.recv_value(Source::Any, TAG_JOIN);
                    if trace() {
                        eprintln!(
                            "hier[{}/{}]: join message {}",
                            self.me,
                            self.size,
                            if got.is_ok() { "received" } else { "lost" }
                        );
                    }
                    let merged = inter.merge(true);
                    let mut got = got;
                    while merged.is_ok()
                        && matches!(got, Err(pertinax::Error::ProcFailedPending { .. }))
                    {
                        inter.ack_failed(usize::MAX)?;
                        if inter.get_failed()?.size() >= inter.remote_size() {
                            break;
                        }
                        got = inter.recv_value(Source::Any, TAG_JOIN);
                    }
                    let merged = merged?;
                    let Some((msg, _)) = got? else {
                        // A plain communicator's receive is never skipped.
                        return Err(pertinax::Error::InvalidArgument(
                            "the join message's receive was skipped".into(),
                        ));
                    };
                    let _ = inter.free();
                    Ok((msg, merged))
                });
            match joined {
                Ok((msg, merged)) => {
                    self.st.borrow_mut().wakes += 1;
                    return Ok(Called::Joined(msg, merged));
                }
                Err(e) if e.is_fault() => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Takes in the global communicator `merged` this rank just joined and
    /// takes part in the joins after its own.
    fn adopt(&self, merged: Comm, msg: Join) -> Result<(), Error> {
        {
            let mut st = self.st.borrow_mut();
            st.joined_at = msg.seq;
            st.rejoin = false;
            if msg.respread {
                st.respread = msg.seq.checked_sub(1);
            }
            // The global communicator's last output, as every member has
            // it (a later join sends it on).
            if msg.last.as_ref().map(|l| l.0) > st.last.as_ref().map(|l| l.0) {
                st.last = msg.last.clone();
            }
        }
        let mut members = msg.members;
        members.push((self.group, self.me));
        self.run_joins(
            Global {
                comm: merged,
                members,
                gone: msg.gone,
            },
            &msg.later,
            msg.seq,
        )
    }

    /// The members of the global communicator `g` take in the joins of
    /// `work`, in order. The global communicator in the state is the
    /// current one at every step: an error (a failure during a join)
    /// leaves the one every survivor has, which the global stage's
    /// agreement then repairs again.
    pub(super) fn run_joins(&self, mut g: Global, work: &[Work], seq: u64) -> Result<(), Error> {
        self.st.borrow_mut().global = Some(g.clone());
        for (i, w) in work.iter().enumerate() {
            let later = work[i + 1..].to_vec();
            g = match *w {
                Work::Deputy(grp, e) => self.join_deputy(g, grp, e, later, seq)?,
                Work::Orphan(grp) => self.join_orphan(g, grp, later, seq)?,
            };
            self.st.borrow_mut().global = Some(g.clone());
        }
        Ok(())
    }

    /// What the global communicator `g` tells a rank that joins it.
    fn join_msg(&self, g: &Global, later: Vec<Work>, seq: u64) -> Join {
        Join {
            seq,
            members: g.members.clone(),
            gone: g.gone.clone(),
            later,
            last: self.st.borrow().last.clone(),
            respread: seq
                .checked_sub(1)
                .is_some_and(|p| self.st.borrow().respread == Some(p)),
        }
    }

    /// Group `grp`'s new deputy `e` joins `g`, led by the group's head.
    fn join_deputy(
        &self,
        g: Global,
        grp: usize,
        e: usize,
        later: Vec<Work>,
        seq: u64,
    ) -> Result<Global, Error> {
        let head = g
            .head(grp)
            .ok_or_else(|| internal("a join asked for by no head"))?;
        let at_head = g.comm.rank().index() == head;
        let pe = self.ctl_rank_or_failed(e)?;
        if at_head {
            // A dead deputy: the creation below fails.
            let _ = self.ctl.send_value(
                &Hello {
                    leader: self.me,
                    output: None,
                },
                pe,
                TAG_HELLO,
            );
        }
        if trace() {
            eprintln!(
                "hier[{}/{}]: deputy {e} of group {grp} joins (head {head}, {} members)",
                self.me,
                self.size,
                g.members.len()
            );
        }
        let inter = match g
            .comm
            .intercomm_create(Rank(head as i32), &self.ctl, pe, TAG_JOIN)
        {
            Ok(inter) => inter,
            Err(x) if x.is_fault() => {
                let a = g.comm.agree_detailed(OK)?;
                if a.flags != OK || !a.failed.is_empty() {
                    // A member of `g` failed: repair `g` first.
                    return Err(x.into());
                }
                // The deputy died: the group elects another one at its
                // next repair (which drops it).
                if at_head {
                    self.st.borrow_mut().elect = None;
                }
                return Ok(g);
            }
            Err(x) => return Err(x.into()),
        };
        // Every member sends the join message (the same everywhere), so
        // that the joiner has one whoever dies before the merge. The joiner
        // reads one of them, before the merge: a send that waited for its
        // receiver (a message past the eager limit) would wait forever, so
        // the sends are buffered. The merge is collective over both
        // groups: take part in it whatever the send gave (the joiner may
        // have died), then act on the error. Tests kill the leading head
        // here: the joiner has the message of another member.
        pertinax::fault_point("res.hier.join.msg");
        let sent = inter.bsend_value(&self.join_msg(&g, later, seq), Rank(0), TAG_JOIN);
        if trace() {
            eprintln!("hier[{}/{}]: deputy {e} joins: merging", self.me, self.size);
        }
        let merged = inter.merge(false)?;
        if trace() {
            eprintln!("hier[{}/{}]: deputy {e} joined", self.me, self.size);
        }
        // The merge succeeded everywhere: a joiner that died after it is
        // repaired by the next agreement, like any member.
        if let Err(e) = sent {
            if !e.is_fault() {
                return Err(e.into());
            }
        }
        let _ = inter.free();
        let _ = g.comm.free();
        if at_head {
            let mut st = self.st.borrow_mut();
            st.gmembers.push(e);
            st.elect = None;
        }
        let mut members = g.members;
        members.push((grp, e));
        Ok(Global {
            comm: merged,
            members,
            gone: g.gone,
        })
    }

    /// Group `grp`, which has no member in `g`, gets its new head in: the
    /// group's lowest live member. `g`'s rank 0 calls each member in rank
    /// order with a [`Hello`] and every member of `g` builds an
    /// intercommunicator with it (uniform outcome); a creation that fails
    /// with no failure in `g` (the agreement after it says so) means that
    /// member is dead: the next one is tried. No live member: the group is
    /// gone.
    fn join_orphan(
        &self,
        mut g: Global,
        grp: usize,
        later: Vec<Work>,
        seq: u64,
    ) -> Result<Global, Error> {
        let leader = g.comm.rank().0 == 0;
        for c in self.group_members(grp) {
            let Some(pc) = self.ctl_rank(c) else {
                continue;
            };
            if leader {
                // A dead candidate: the creation below fails.
                let _ = self.ctl.send_value(
                    &Hello {
                        leader: self.me,
                        output: None,
                    },
                    Rank(pc as i32),
                    TAG_HELLO,
                );
            }
            if trace() {
                eprintln!(
                    "hier[{}/{}]: calling {c} as group {grp}'s new head",
                    self.me, self.size
                );
            }
            match g
                .comm
                .intercomm_create(Rank(0), &self.ctl, Rank(pc as i32), TAG_JOIN)
            {
                Ok(inter) => {
                    // Every member sends, buffered; merge whatever the send
                    // gave (see `join_deputy`).
                    pertinax::fault_point("res.hier.join.msg");
                    let sent = inter.bsend_value(&self.join_msg(&g, later, seq), Rank(0), TAG_JOIN);
                    let merged = inter.merge(false)?;
                    if let Err(e) = sent {
                        if !e.is_fault() {
                            return Err(e.into());
                        }
                    }
                    let _ = inter.free();
                    let _ = g.comm.free();
                    g.comm = merged;
                    g.members.push((grp, c));
                    return Ok(g);
                }
                Err(e) if e.is_fault() => {
                    let a = g.comm.agree_detailed(OK)?;
                    if a.flags != OK || !a.failed.is_empty() {
                        // A member of `g` failed: repair `g` first.
                        return Err(e.into());
                    }
                }
                Err(e) => return Err(e.into()),
            }
        }
        g.gone.push(grp);
        g.gone.sort_unstable();
        Ok(g)
    }

    /// At a group's new head after the group lost every global member:
    /// waits for the global communicator's call ([`Self::join_orphan`])
    /// and joins. `post`: in the operation's last local stage, which needs
    /// the global stage's output: the head runs the global stage if the
    /// global communicator is still in it (called by its repair), or gets
    /// the output pushed by the operation's confirmation if the global
    /// stage had succeeded ([`Self::confirm`]; the head is then called at
    /// the next operation's global stage), or, called by that next stage
    /// before the push arrived, takes the output of the leader's last
    /// global stage.
    pub(super) fn rejoin(&self, post: bool) -> Result<(), Error> {
        let need = {
            let st = self.st.borrow();
            if post && st.late_out.is_some() {
                // The output is here already (a push): the call comes at
                // the next global stage.
                return Ok(());
            }
            post.then_some(st.seq)
        };
        let (msg, merged) = match self.await_call(true, need)? {
            Called::Output(out) => {
                self.st.borrow_mut().late_out = Some(out);
                return Ok(());
            }
            Called::Joined(msg, merged) => (msg, merged),
        };
        let (seq, last, respread) = (msg.seq, msg.last.clone(), msg.respread);
        {
            let mut st = self.st.borrow_mut();
            st.gmembers = vec![self.me];
            st.rejoin = false;
            st.global_repairs += 1;
        }
        // A failure in the joins after this one leaves the global
        // communicator in the state; its next agreement repairs it.
        match self.adopt(merged, msg) {
            Err(e) if !e.is_fault() => return Err(e),
            _ => {}
        }
        self.catch_up(seq, last, post, respread)
    }

    /// Files a chunk of a pushed global output (stale ones are dropped).
    fn store_push(&self, p: Push) {
        let mut st = self.st.borrow_mut();
        if p.seq >= st.seq {
            st.pushed.insert((p.seq, p.at), (p.total, p.data));
        }
    }

    /// The pushed global output of operation `seq`, if every chunk is
    /// here.
    fn take_pushed(&self, seq: u64) -> Option<Vec<u8>> {
        let st = self.st.borrow();
        let mut out = Vec::new();
        for (&(_, at), (total, data)) in st.pushed.range((seq, 0)..(seq + 1, 0)) {
            if at > out.len() {
                return None;
            }
            if at + data.len() > out.len() {
                out.extend_from_slice(&data[out.len() - at..]);
            }
            if out.len() >= *total {
                return Some(out);
            }
        }
        None
    }

    /// After a join at the global communicator's operation `seq`, at a
    /// rank of operation `cur` (`post`: in its last local stage): runs the
    /// global stage of an operation this rank's group has finished (a
    /// rescue's global communicator can be one operation behind: no group
    /// leaves an operation before its global stage succeeded, so that
    /// group's head takes part as the others do) and its confirmation;
    /// then, in a last stage, runs its own operation's global stage (the
    /// global communicator runs it next, or is in it), or takes the output
    /// of the global stage that ended before (`last`: a call at the next
    /// operation that overtook the push of [`Self::confirm`]).
    /// `respread`: a rescue ended this rank's operation from what its
    /// group kept (`rescue.rs`): its last stage ends so.
    fn catch_up(
        &self,
        seq: u64,
        last: Option<(u64, Vec<u8>)>,
        post: bool,
        respread: bool,
    ) -> Result<(), Error> {
        let cur = self.st.borrow().seq;
        let kept = |s: u64| {
            self.st
                .borrow()
                .cur
                .iter()
                .find(|c| c.0 == s)
                .cloned()
                .ok_or_else(|| internal("a rejoin without the operation's stage"))
        };
        if seq < cur {
            let (_, stage, mine) = kept(seq)?;
            self.run_global(&stage, mine.as_deref(), seq)?;
            // An operation this rank's group has finished: its
            // confirmation too, as the others run it.
            self.confirm(seq)?;
        }
        if post && seq <= cur {
            let (_, stage, mine) = kept(cur)?;
            let out = self.run_global(&stage, mine.as_deref(), cur)?;
            let mut st = self.st.borrow_mut();
            st.late_out = Some(out);
            // Perhaps not the output the group's members got from the
            // first run (they kept that): the stage runs again from this.
            st.rerun = Some(cur);
        } else if post && respread && seq == cur + 1 {
            // The rescue ended this operation from what the group kept
            // (the retry of the last stage ends with it).
            self.st.borrow_mut().respread = Some(cur);
        } else if post {
            // The global stage ended before; its output is the caller's.
            match last {
                Some((s, out)) if s == cur => self.st.borrow_mut().late_out = Some(out),
                _ => {
                    return Err(unrepairable(
                        self.group_members(self.group)
                            .filter(|o| !self.st.borrow().local.to_orig.contains(o))
                            .collect(),
                    ))
                }
            }
        }
        Ok(())
    }
}
