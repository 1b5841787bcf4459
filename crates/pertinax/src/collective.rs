//! Collective operations, built only from point-to-point messages on the
//! communicator's collective context.
//!
//! This module holds the few collectives the runtime itself needs
//! (communicator creation, barrier); the full set builds on the same
//! primitives.

use crate::comm::Comm;
use crate::engine::MatchSpec;
use crate::error::Result;

/// Tags of internal collective traffic (on the collective context).
pub(crate) mod tags {
    pub const BARRIER: i32 = 1;
    pub const ALLGATHER_INTERNAL: i32 = 2;
}

impl Comm {
    /// Sends `data` to rank `dest` on the collective context.
    pub(crate) fn coll_send(&self, data: &[u8], dest: u32, tag: i32) -> Result<()> {
        self.raw_send(self.inner.ctx + 1, data, dest, tag)
    }

    /// Receives exactly into `buf` from rank `src` on the collective context.
    pub(crate) fn coll_recv(&self, buf: &mut [u8], src: u32, tag: i32) -> Result<usize> {
        let spec = MatchSpec {
            ctx: self.inner.ctx + 1,
            src: Some(src),
            tag: Some(tag),
        };
        self.raw_recv(spec, buf, 1).map(|s| s.len)
    }

    /// Gathers equal-sized `mine` from every rank, in rank order, at every
    /// rank (ring algorithm: n-1 steps).
    pub(crate) fn allgather_internal(&self, mine: &[u8]) -> Result<Vec<u8>> {
        let n = self.size();
        let me = self.inner.rank as usize;
        let k = mine.len();
        let mut all = vec![0u8; n * k];
        all[me * k..(me + 1) * k].copy_from_slice(mine);
        let right = ((me + 1) % n) as u32;
        let left = ((me + n - 1) % n) as u32;
        for step in 0..n.saturating_sub(1) {
            let send_blk = (me + n - step) % n;
            let recv_blk = (me + n - step - 1) % n;
            let out = all[send_blk * k..(send_blk + 1) * k].to_vec();
            self.coll_send(&out, right, tags::ALLGATHER_INTERNAL)?;
            self.coll_recv(
                &mut all[recv_blk * k..(recv_blk + 1) * k],
                left,
                tags::ALLGATHER_INTERNAL,
            )?;
        }
        Ok(all)
    }

    /// Blocks until every rank has entered the barrier (dissemination
    /// algorithm: ⌈log2 n⌉ rounds of zero-byte messages).
    ///
    /// # Errors
    /// `CommFreed`, `Finalized`, or a failure of a peer.
    pub fn barrier(&self) -> Result<()> {
        self.live()?;
        let n = self.size();
        let me = self.inner.rank as usize;
        let mut dist = 1;
        let mut round = 0;
        while dist < n {
            let to = ((me + dist) % n) as u32;
            let from = ((me + n - dist) % n) as u32;
            self.coll_send(&[], to, tags::BARRIER + (round << 8))?;
            self.coll_recv(&mut [], from, tags::BARRIER + (round << 8))?;
            dist <<= 1;
            round += 1;
        }
        Ok(())
    }
}
