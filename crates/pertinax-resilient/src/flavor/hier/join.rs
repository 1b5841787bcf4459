//! A new deputy joins the global communicator: its side and the side of
//! the global communicator's members.

use super::*;

impl Hierarchical {
    /// The new deputy joins the global communicator at operation `seq`,
    /// led by its group's head.
    pub(super) fn join(&self, seq: u64) -> Result<(), Error> {
        let head = self.st.borrow().local.to_orig[0];
        let fail = Error::Comm;
        if trace() {
            eprintln!("hier[{}/{}]: joining through {head}", self.me, self.size);
        }
        let inter = self
            .solo
            .intercomm_create(Rank(0), self.p2p.comm(), self.p2p_rank(head)?, TAG_JOIN)
            .map_err(fail)?;
        let (msg, _): (Join, Status) = inter.recv_value(Source::Any, TAG_JOIN).map_err(fail)?;
        let merged = inter.merge(true).map_err(fail)?;
        let _ = inter.free();
        if msg.seq != seq {
            return Err(internal(format!(
                "a deputy joined at operation {} from operation {seq}",
                msg.seq
            )));
        }
        let mut members = msg.members;
        members.push((self.group, self.me));
        {
            let mut st = self.st.borrow_mut();
            st.gmembers.push(self.me);
            st.elect = None;
            st.global_repairs += 1;
        }
        self.accept_joins(merged, members, &msg.later, seq)
    }

    /// The members of the global communicator `comm` take in the new
    /// deputies of `joins`, in order, each led by its group's head.
    pub(super) fn accept_joins(
        &self,
        mut comm: Comm,
        mut members: Vec<(usize, usize)>,
        joins: &[(usize, usize)],
        seq: u64,
    ) -> Result<(), Error> {
        let fail = Error::Comm;
        for (i, &(grp, e)) in joins.iter().enumerate() {
            let head = members
                .iter()
                .position(|&(x, _)| x == grp)
                .ok_or_else(|| internal("a join asked for by no head"))?;
            let at_head = comm.rank().index() == head;
            let inter = comm
                .intercomm_create(
                    Rank(head as i32),
                    self.p2p.comm(),
                    self.p2p_rank(e)?,
                    TAG_JOIN,
                )
                .map_err(fail)?;
            if at_head {
                let msg = Join {
                    seq,
                    members: members.clone(),
                    later: joins[i + 1..].to_vec(),
                };
                inter.send_value(&msg, Rank(0), TAG_JOIN).map_err(fail)?;
            }
            let merged = inter.merge(false).map_err(fail)?;
            let _ = inter.free();
            let _ = comm.free();
            comm = merged;
            members.push((grp, e));
            if at_head {
                let mut st = self.st.borrow_mut();
                st.gmembers.push(e);
                st.elect = None;
            }
        }
        self.st.borrow_mut().global = Some(Global { comm, members });
        Ok(())
    }
}
