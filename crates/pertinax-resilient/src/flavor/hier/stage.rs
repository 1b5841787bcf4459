//! The stages of an operation: local ones (with the repair of the local
//! communicator and the election of a deputy) and the global one (with
//! the repair of the global communicator).

use super::*;
use pertinax::CommunicatorExt as _;

impl Hierarchical {
    /// Runs a stage on the local communicator until it succeeds at every
    /// member: `f` gets the local communicator (rank 0 is the master).
    /// `post`: the stage comes after the operation's global stage (the
    /// operation's last stage, see [`Self::post_attempt`]).
    pub(super) fn local_stage<R: Clone>(
        &self,
        post: bool,
        mut f: impl FnMut(&Sub) -> Result<R, Error>,
    ) -> Result<R, Error> {
        // In a last stage: what this rank's last successful attempt gave
        // it (see `post_attempt`).
        let mut kept: Option<R> = None;
        let mut retry = false;
        loop {
            let l = self.st.borrow().local.clone();
            let r = if post {
                self.post_attempt(&l, retry, &mut kept, &mut f)
            } else {
                f(&l)
            };
            let ok = if matches!(&r, Err(e) if e.is_fault()) {
                // A member may wait for this one inside the stage (the
                // deputy for its copy of the block, a master for the
                // root's data): the revocation ends that wait, and the
                // agreement still runs on the revoked communicator.
                let _ = l.comm.revoke();
                0
            } else {
                OK
            };
            let a = l.comm.agree_detailed(ok)?;
            if a.flags & OK == OK && intact(&a) {
                return r;
            }
            if let Err(e) = &r {
                if !e.is_fault() {
                    return r;
                }
            }
            if trace() {
                eprintln!(
                    "hier[{}/{}]: local stage failed, repairing",
                    self.me, self.size
                );
            }
            self.timed(|| self.repair_local(post))?;
            retry = true;
            // In a last stage the new head rejoins inside the next
            // attempt, after the group learnt what its members kept.
            if !post && self.st.borrow().rejoin {
                self.timed(|| self.rejoin(false))?;
            }
        }
    }

    /// One attempt of an operation's last stage. The members of the global
    /// communicator confirm the operation ([`Self::confirm`]) after their
    /// part of the stage and before the stage's agreement, so that no
    /// member returns from an operation before its master (or its
    /// deputy) confirmed it: a group has finished the operation only if
    /// every member of the global communicator ran its part of its
    /// group's last stage (its members have their data) or its group had
    /// the output pushed. Every member keeps what its last successful
    /// attempt gave it (`kept`): a retry (after a repair) first agrees
    /// whether every member of the group holds it (the rescue uses that,
    /// `rescue.rs`), then the new head rejoins if it must, then the
    /// master tells the group whether the stage runs again (`f`), runs
    /// again from a re-run global stage (what was kept is stale), or ends
    /// with what every member kept (a rescue's decision).
    fn post_attempt<R: Clone>(
        &self,
        l: &Sub,
        retry: bool,
        kept: &mut Option<R>,
        f: &mut impl FnMut(&Sub) -> Result<R, Error>,
    ) -> Result<R, Error> {
        let r = if retry {
            self.post_retry(l, kept, f)
        } else {
            f(l)
        };
        if let Ok(v) = &r {
            *kept = Some(v.clone());
        }
        // Always, whatever the attempt gave (the group's other member of
        // the global communicator may be in the confirmation already); a
        // failed attempt makes the confirmation fail everywhere, and every
        // group runs its last stage again.
        let seq = self.st.borrow().seq;
        let c = self.confirm_with(seq, r.is_ok());
        match (r, c) {
            (Ok(_), Err(e)) => Err(e),
            (r, _) => r,
        }
    }

    /// The start of a retry of a last stage (see [`Self::post_attempt`]).
    fn post_retry<R: Clone>(
        &self,
        l: &Sub,
        kept: &mut Option<R>,
        f: &mut impl FnMut(&Sub) -> Result<R, Error>,
    ) -> Result<R, Error> {
        let seq = self.st.borrow().seq;
        let a = l
            .comm
            .agree_detailed(OK | if kept.is_some() { KEPT } else { 0 })?;
        if !intact(&a) {
            return Err(pertinax::Error::Revoked.into());
        }
        self.st.borrow_mut().kept_all = (a.flags & KEPT != 0).then_some(seq);
        if self.st.borrow().rejoin {
            self.timed(|| self.rejoin(true))?;
        }
        let mut d = [RUN];
        if l.comm.rank().0 == 0 {
            let st = self.st.borrow();
            if st.respread == Some(seq) {
                d[0] = RESPREAD;
            } else if st.rerun == Some(seq) {
                d[0] = RERUN;
            }
        }
        l.comm.bcast(&mut d, 0)?;
        match d[0] {
            RESPREAD => kept.clone().ok_or_else(|| {
                // Every member held it when the group agreed so; only a
                // broken invariant gets here.
                internal("a last stage ended from kept data that a member lacks")
            }),
            RERUN => {
                *kept = None;
                f(l)
            }
            _ => f(l),
        }
    }

    /// Shrinks the local communicator and elects a new deputy if the
    /// group lost one of its global members.
    ///
    /// A group that lost every global member (its master and its deputy,
    /// or the head before the new deputy joined) makes its new master the
    /// head: it rejoins the global communicator before the stage runs
    /// again ([`Self::rejoin`]), which every member knows.
    pub(super) fn repair_local(&self, post: bool) -> Result<(), Error> {
        let l = self.st.borrow().local.clone();
        let _ = l.comm.revoke();
        let (comm, vals) = l.comm.shrink_gather(0)?;
        let alive = survivors(&l.to_orig, &vals);
        let _ = l.comm.free();
        let mut st = self.st.borrow_mut();
        st.local_repairs += 1;
        for (i, v) in vals.iter().enumerate() {
            if v.is_none() {
                st.failed.push(l.to_orig[i]);
            }
        }
        st.failed.sort_unstable();
        st.failed.dedup();
        st.local = Sub {
            comm,
            to_orig: alive.clone(),
        };
        let pos = position(st.seq, post);
        if let Some((e, j)) = st.elect {
            if joined_by(j, pos) {
                st.gmembers.push(e);
                st.elect = None;
            }
        }
        st.gmembers.retain(|o| alive.contains(o));
        st.gmembers.dedup();
        if st.elect.is_some_and(|(e, _)| !alive.contains(&e)) {
            st.elect = None;
        }
        if let Some(&m) = alive.first() {
            if !st.gmembers.contains(&m) {
                // Every global member of the group died: the new master
                // rejoins before the stage runs again (the stage cannot
                // succeed before).
                st.gmembers = vec![m];
                st.rejoin = m == self.me;
            }
        }
        if let Some(&d) = alive.get(1) {
            if !st.gmembers.contains(&d) && st.elect.map(|(e, _)| e) != Some(d) {
                st.elect = Some((d, join_op(pos)));
            }
        }
        if trace() {
            eprintln!(
                "hier[{}]: local {:?} global {:?} elect {:?} at op {} post {post}",
                self.me, st.local.to_orig, st.gmembers, st.elect, st.seq
            );
        }
        Ok(())
    }

    /// The global stage of this operation at a member of the global
    /// communicator (joining it first if this rank is the deputy elected
    /// for it), with `mine` the group's contribution if this rank is its
    /// head; `None` at the others.
    pub(super) fn masters(
        &self,
        stage: &Stage,
        mine: Option<&[u8]>,
    ) -> Result<Option<Vec<u8>>, Error> {
        let (seq, joining, orphan) = {
            let mut st = self.st.borrow_mut();
            let seq = st.seq;
            st.cur.retain(|c| c.0 + 1 >= seq && c.0 != seq);
            st.cur.push((seq, stage.clone(), mine.map(<[u8]>::to_vec)));
            (
                st.seq,
                st.global.is_none() && st.elect == Some((self.me, st.seq)),
                st.global.is_none() && st.rejoin,
            )
        };
        if joining {
            self.timed(|| self.join(seq))?;
        } else if orphan {
            // This group lost every global member after an earlier global
            // stage's agreement (its last stage got the output pushed): the
            // global communicator calls this head first thing in this
            // stage.
            self.timed(|| self.rejoin(false))?;
        }
        if self.st.borrow().global.is_none() {
            return Ok(None);
        }
        self.run_global(stage, mine, seq).map(Some)
    }

    /// Runs a global stage until it succeeds at every member of the global
    /// communicator and no deputy is waiting to join.
    pub(super) fn run_global(
        &self,
        stage: &Stage,
        mine: Option<&[u8]>,
        seq: u64,
    ) -> Result<Vec<u8>, Error> {
        // Tests kill a master here: after its group's first stage, before
        // its contribution to the global stage.
        pertinax::fault_point("res.hier.global");
        loop {
            // Groups with no member in the global communicator (lost every
            // global member after an earlier operation's global stage, as
            // its confirmation found; or left out by a join that failed,
            // such as a callee that died between the intercommunicator's
            // creation and the merge): their new heads are called first,
            // before every attempt. Every member computes the same list.
            let orphans = self.orphans();
            let mut joins = Ok(());
            if !orphans.is_empty() {
                let g =
                    self.st.borrow().global.clone().ok_or_else(|| {
                        internal("a global stage outside the global communicator")
                    })?;
                match self.timed(|| self.run_joins(g, &orphans, seq)) {
                    // The global communicator in the state is the one every
                    // survivor has: this attempt fails, its agreement
                    // repairs that communicator (a member of it may have
                    // died) and the next attempt calls the rest.
                    Err(e) if e.is_fault() => joins = Err(e),
                    r => r?,
                }
            }
            let g = self
                .st
                .borrow()
                .global
                .clone()
                .ok_or_else(|| internal("a global stage outside the global communicator"))?;
            let r = match joins {
                Ok(()) => {
                    let r = self.global_once(&g, stage, mine);
                    pertinax::fault_point("res.hier.global.sent");
                    r
                }
                Err(e) => Err(e),
            };
            let ok = if matches!(&r, Err(e) if e.is_fault()) {
                // Free the members still inside the stage's collective (a
                // member that left the program early fails only the
                // requests that name it; a member whose joins failed
                // where others' did not).
                let _ = g.comm.revoke();
                0
            } else {
                OK
            };
            let ask = self.join_request(seq);
            let a = g
                .comm
                .agree_detailed(ok | if ask.is_some() { 0 } else { NO_JOIN })?;
            if a.flags & (OK | NO_JOIN) == OK | NO_JOIN && intact(&a) {
                if trace() {
                    eprintln!(
                        "hier[{}/{}]: global stage of op {seq} done: {}",
                        self.me,
                        self.size,
                        r.is_ok()
                    );
                }
                if let Ok(out) = &r {
                    self.st.borrow_mut().last = Some((seq, out.clone()));
                }
                // Tests kill a group's master and deputy here: after the
                // global stage's agreement, before their group's last
                // stage (the group then needs the output pushed).
                pertinax::fault_point("res.hier.global.done");
                return r;
            }
            if let Err(e) = &r {
                if !e.is_fault() {
                    return r;
                }
            }
            if trace() {
                eprintln!(
                    "hier[{}/{}]: global stage of op {seq}: repair (flags {}, failed {:?})",
                    self.me, self.size, a.flags, a.failed
                );
            }
            match self.timed(|| self.repair_global(seq, ask)) {
                // A failure during the joins: the global communicator in
                // the state is the one every survivor has; the next
                // agreement repairs it again.
                Err(e) if e.is_fault() => {}
                r => r?,
            }
        }
    }

    /// At a group's head: the deputy that joins at this operation's global
    /// stage.
    pub(super) fn join_request(&self, seq: u64) -> Option<usize> {
        let st = self.st.borrow();
        if st.local.comm.rank().0 != 0 {
            return None;
        }
        st.elect
            .filter(|&(e, j)| j == seq && !st.gmembers.contains(&e))
            .map(|(e, _)| e)
    }

    pub(super) fn global_once(
        &self,
        g: &Global,
        stage: &Stage,
        mine: Option<&[u8]>,
    ) -> Result<Vec<u8>, Error> {
        let me = g.comm.rank().index();
        match *stage {
            Stage::Sync => Ok(Vec::new()),
            Stage::Allgather(block) => {
                let heads: Vec<usize> = (0..g.members.len()).filter(|&r| g.is_head(r)).collect();
                let counts: Vec<usize> = (0..g.members.len())
                    .map(|r| if heads.contains(&r) { block } else { 0 })
                    .collect();
                let displs: Vec<usize> = counts
                    .iter()
                    .scan(0, |at, &c| {
                        let d = *at;
                        *at += c;
                        Some(d)
                    })
                    .collect();
                let zero = vec![0u8; block];
                let send: &[u8] = if !heads.contains(&me) {
                    &[]
                } else {
                    match mine {
                        Some(m) if m.len() == block => m,
                        Some(_) => return Err(internal("a global block of the wrong size")),
                        // A head that took over without the group's block
                        // (its master died with it): the group is absent.
                        None => &zero,
                    }
                };
                let mut all = vec![0u8; heads.len() * block];
                g.comm.allgatherv(send, &mut all, &counts, &displs)?;
                let mut out = vec![0u8; self.groups() * block];
                for (i, &r) in heads.iter().enumerate() {
                    let grp = g.members[r].0;
                    out[grp * block..(grp + 1) * block]
                        .copy_from_slice(&all[i * block..(i + 1) * block]);
                }
                Ok(out)
            }
            Stage::Bcast(len, root_group) => {
                let mut buf = vec![0u8; len];
                let Some(root) = g.head(root_group) else {
                    // The root group is gone: nothing to send (status 0).
                    return Ok(buf);
                };
                if me == root {
                    if let Some(m) = mine.filter(|m| m.len() == len) {
                        buf.copy_from_slice(m);
                    }
                }
                g.comm.bcast(&mut buf, root)?;
                Ok(buf)
            }
        }
    }

    /// Repairs the global communicator: shrink, then the groups that lost
    /// every global member get their new heads in and the new deputies
    /// asked for join.
    pub(super) fn repair_global(&self, seq: u64, ask: Option<usize>) -> Result<(), Error> {
        let (g, mut joins) = self.shrink_global(encode_join(self.group, ask))?;
        joins.sort_unstable();
        // Groups with no member left and not known gone: their new heads
        // join first (they lead their own deputies' joins later).
        let mut work = Self::orphans_of(&g, self.groups());
        work.extend(joins.iter().map(|&(grp, e)| Work::Deputy(grp, e)));
        if trace() {
            eprintln!(
                "hier[{}/{}]: global shrunk at op {seq}: {:?}, work {work:?}",
                self.me, self.size, g.members
            );
        }
        self.run_joins(g, &work, seq)
    }

    /// Revokes and shrinks the global communicator with shrink value
    /// `value`: the survivors' communicator (not yet in the state) and the
    /// joins asked for in the values.
    fn shrink_global(&self, value: u64) -> Result<(Global, Vec<(usize, usize)>), Error> {
        let g = self
            .st
            .borrow()
            .global
            .clone()
            .ok_or_else(|| internal("a global repair outside the global communicator"))?;
        let _ = g.comm.revoke();
        let (comm, vals) = g.comm.shrink_gather(value)?;
        let _ = g.comm.free();
        let mut members = Vec::new();
        let mut joins = Vec::new();
        let mut st = self.st.borrow_mut();
        st.global_repairs += 1;
        for (m, v) in g.members.iter().zip(&vals) {
            match v {
                Some(v) => {
                    members.push(*m);
                    if let (grp, Some(e)) = decode_join(*v) {
                        joins.push((grp, e));
                    }
                }
                None => st.failed.push(m.1),
            }
        }
        st.failed.sort_unstable();
        st.failed.dedup();
        Ok((
            Global {
                comm,
                members,
                gone: g.gone,
            },
            joins,
        ))
    }

    /// The groups with no member in `g` and not known gone.
    fn orphans_of(g: &Global, groups: usize) -> Vec<Work> {
        (0..groups)
            .filter(|x| !g.gone.contains(x) && !g.members.iter().any(|&(y, _)| y == *x))
            .map(Work::Orphan)
            .collect()
    }

    /// [`Self::orphans_of`] the global communicator of the state (none
    /// outside it).
    fn orphans(&self) -> Vec<Work> {
        self.st
            .borrow()
            .global
            .as_ref()
            .map_or_else(Vec::new, |g| Self::orphans_of(g, self.groups()))
    }

    /// The confirmation of operation `seq` at a member of the global
    /// communicator, after its group's last stage: an agreement of the
    /// global communicator, repeated after a shrink until it sees no
    /// failure. A group whose global members all died after the global
    /// stage's agreement, before they confirmed, may wait in its last
    /// stage for that stage's output: the new rank 0 pushes it to the
    /// group's members ([`Self::push`]); the group's new head is called
    /// into the global communicator at the next global stage. So no group
    /// waits for the others' next operation: the window closes inside the
    /// operation, and dropping the communicator can be local.
    pub(super) fn confirm(&self, seq: u64) -> Result<(), Error> {
        self.confirm_with(seq, true)?;
        self.settle(seq)
    }

    /// The second agreement of the confirmation of operation `seq`, after
    /// the group's last stage succeeded: a group whose global members
    /// all died after the first one (inside the stage) and before their
    /// group's last agreement waits for the output in that stage; it shows
    /// up missing here and gets the output pushed, within the operation.
    pub(super) fn settle(&self, seq: u64) -> Result<(), Error> {
        self.agree_out(seq, true, true)
    }

    /// [`Self::confirm`], once per operation, with `ok` false at a member
    /// whose attempt of its group's last stage failed: the confirmation
    /// then fails at every member of the global communicator (a fault:
    /// every group runs its last stage again and confirms again), so a
    /// confirmation that succeeds means every member of the global
    /// communicator completed its part of its group's last stage.
    pub(super) fn confirm_with(&self, seq: u64, ok: bool) -> Result<(), Error> {
        self.agree_out(seq, ok, false)
    }

    /// The agreements of the confirmation: the first (`second` false,
    /// inside the last stage) or the second.
    fn agree_out(&self, seq: u64, ok: bool, second: bool) -> Result<(), Error> {
        {
            let st = self.st.borrow();
            let done = if second { st.settled } else { st.confirmed };
            if st.global.is_none() || st.joined_at > seq || done.is_some_and(|c| c >= seq) {
                return Ok(());
            }
        }
        if !second {
            pertinax::fault_point("res.hier.confirm");
        }
        loop {
            let g = self
                .st
                .borrow()
                .global
                .clone()
                .ok_or_else(|| internal("a confirmation outside the global communicator"))?;
            let a = g.comm.agree_detailed(if ok { OK } else { 0 })?;
            if intact(&a) {
                if a.flags & OK == OK {
                    let mut st = self.st.borrow_mut();
                    if second {
                        st.settled = Some(seq);
                    } else {
                        st.confirmed = Some(seq);
                    }
                    return Ok(());
                }
                return Err(pertinax::Error::Revoked.into());
            }
            let t0 = Instant::now();
            let (g, _) = self.shrink_global(encode_join(self.group, None))?;
            let orphans = Self::orphans_of(&g, self.groups());
            if trace() {
                eprintln!(
                    "hier[{}/{}]: confirmation of op {seq}: shrunk to {:?}, orphans {orphans:?}",
                    self.me, self.size, g.members
                );
            }
            if g.comm.rank().0 == 0 {
                for w in &orphans {
                    if let Work::Orphan(grp) = *w {
                        self.push(grp, seq)?;
                    }
                }
            }
            let mut st = self.st.borrow_mut();
            st.global = Some(g);
            st.repair_time += t0.elapsed();
        }
    }

    /// Pushes the output of operation `seq`'s global stage (this rank's
    /// last) to every member of group `grp` not known failed, in buffered
    /// sends (each completes at once, whether the member ever takes it or
    /// not) of chunks that fit one record, which the receiver holds.
    fn push(&self, grp: usize, seq: u64) -> Result<(), Error> {
        let out = match self.st.borrow().last.clone() {
            Some((s, out)) if s == seq => out,
            _ => return Err(internal("a confirmation without its global output")),
        };
        let failed = self.p2p.failed(self.st.borrow().failed.clone());
        for c in self.group_members(grp) {
            if failed.contains(&Rank(c as i32)) {
                continue;
            }
            let Some(pc) = self.ctl_rank(c) else {
                continue;
            };
            let mut at = 0;
            loop {
                let end = (at + PUSH_CHUNK).min(out.len());
                let h = Hello {
                    leader: self.me,
                    output: Some(Push {
                        seq,
                        total: out.len(),
                        at,
                        data: out[at..end].to_vec(),
                    }),
                };
                // A dead member: the send fails, nobody waits for it.
                if self
                    .ctl
                    .bsend_value(&h, Rank(pc as i32), TAG_HELLO)
                    .is_err()
                {
                    break;
                }
                at = end;
                if at >= out.len() {
                    break;
                }
            }
        }
        Ok(())
    }
}

/// Whether an agreement saw every member contribute: none failed, none
/// finalized (a rank that left the program early is repaired like a
/// failed one).
pub(super) fn intact(a: &pertinax::Agreement) -> bool {
    a.failed.is_empty() && a.finalized.is_empty()
}
