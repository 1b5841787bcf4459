//! The stages of an operation: local ones (with the repair of the local
//! communicator and the election of a deputy) and the global one (with
//! the repair of the global communicator).

use super::*;

impl Hierarchical {
    /// Runs a stage on the local communicator until it succeeds at every
    /// member: `f` gets the local communicator (rank 0 is the master).
    /// `post`: the stage comes after the operation's global stage.
    pub(super) fn local_stage<R>(
        &self,
        post: bool,
        mut f: impl FnMut(&Sub) -> Result<R, Error>,
    ) -> Result<R, Error> {
        loop {
            let l = self.st.borrow().local.clone();
            let r = f(&l);
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
            if a.flags & OK == OK && a.failed.is_empty() {
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
            if self.st.borrow().rejoin {
                self.timed(|| self.rejoin(post))?;
            }
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
        let (seq, joining) = {
            let mut st = self.st.borrow_mut();
            let seq = st.seq;
            st.cur.retain(|c| c.0 + 1 >= seq && c.0 != seq);
            st.cur.push((seq, stage.clone(), mine.map(<[u8]>::to_vec)));
            (
                st.seq,
                st.global.is_none() && st.elect == Some((self.me, st.seq)),
            )
        };
        if joining {
            self.timed(|| self.join(seq))?;
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
            let g = self
                .st
                .borrow()
                .global
                .clone()
                .ok_or_else(|| internal("a global stage outside the global communicator"))?;
            let r = self.global_once(&g, stage, mine);
            pertinax::fault_point("res.hier.global.sent");
            let ok = if matches!(&r, Err(e) if e.is_fault()) {
                0
            } else {
                OK
            };
            let ask = self.join_request(seq);
            let a = g
                .comm
                .agree_detailed(ok | if ask.is_some() { 0 } else { NO_JOIN })?;
            if a.flags & (OK | NO_JOIN) == OK | NO_JOIN && a.failed.is_empty() {
                if let Ok(out) = &r {
                    self.st.borrow_mut().last = Some((seq, out.clone()));
                }
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

    /// Repairs the global communicator: shrink, then the new deputies
    /// asked for join.
    pub(super) fn repair_global(&self, seq: u64, ask: Option<usize>) -> Result<(), Error> {
        let g = self
            .st
            .borrow()
            .global
            .clone()
            .ok_or_else(|| internal("a global repair outside the global communicator"))?;
        let _ = g.comm.revoke();
        let (comm, vals) = g.comm.shrink_gather(encode_join(self.group, ask))?;
        let _ = g.comm.free();
        let mut members = Vec::new();
        let mut joins = Vec::new();
        {
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
        }
        joins.sort_unstable();
        // Groups with no member left and not known gone: their new heads
        // join first (they lead their own deputies' joins later).
        let mut work: Vec<Work> = (0..self.groups())
            .filter(|x| !g.gone.contains(x) && !members.iter().any(|&(y, _)| y == *x))
            .map(Work::Orphan)
            .collect();
        work.extend(joins.iter().map(|&(grp, e)| Work::Deputy(grp, e)));
        if trace() {
            eprintln!(
                "hier[{}/{}]: global shrunk at op {seq}: {members:?}, work {work:?}",
                self.me, self.size
            );
        }
        let g = Global {
            comm,
            members,
            gone: g.gone.clone(),
        };
        self.run_joins(g, &work, seq)
    }
}
