//! Communicator creation (dup, split) on a communicator of every rank,
//! shrunk at each creation.

use super::*;

impl Hierarchical {
    /// A new hierarchical communicator with the same ranks (collective,
    /// on every live rank; completes despite failures).
    pub(super) fn dup_hier(&self) -> Result<Self, Error> {
        // A hierarchical barrier first: every rank has left the stages of
        // the operations before (a group repairing would not answer the
        // shrink of the full communicator otherwise).
        Communicator::barrier(self)?;
        let (comm, vals) = self.full.shrink_gather(0)?;
        let map = survivors(&self.full_to_orig, &vals);
        let orig = self.p2p.orig().clone();
        Hierarchical::build(&comm, &map, self.size, orig, self.k, self.cfg.clone())
    }

    /// Splits the live ranks; every new communicator is hierarchical with
    /// the same `k` (collective; completes despite failures).
    pub(super) fn split_hier(&self, color: Option<u32>, key: i32) -> Result<Option<Self>, Error> {
        // See `dup`.
        Communicator::barrier(self)?;
        loop {
            let (comm, _) = self.full.shrink_gather(0)?;
            let r = comm.split(color, key);
            let ok = u32::from(!matches!(&r, Err(e) if e.is_fault()));
            let a = comm.agree_detailed(ok)?;
            if a.flags == 1 {
                return match r? {
                    Some(c) => {
                        let ids: Vec<usize> = (0..c.size()).collect();
                        Ok(Some(Hierarchical::build(
                            &c,
                            &ids,
                            c.size(),
                            c.group(),
                            self.k,
                            self.cfg.clone(),
                        )?))
                    }
                    None => Ok(None),
                };
            }
            if let Ok(Some(c)) = r {
                let _ = c.free();
            }
            let _ = comm.free();
        }
    }
}
