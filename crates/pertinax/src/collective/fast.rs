//! Straight-line versions of the small blocking collectives.
//!
//! A schedule costs a few hundred nanoseconds of bookkeeping, which is
//! most of the time of a barrier or of a one-element allreduce on two
//! cores. For small messages the blocking calls run the same algorithms,
//! with the same combination order and the same tags, directly on blocking
//! point-to-point calls. Results are bitwise those of the schedules.

use super::algo::ALLREDUCE_LARGE;
use super::reduce::Combine;
use super::schedule::tag;
use crate::backend::{Backend, MatchSpec};
use crate::comm::Comm;
use crate::error::{Error, Result};

/// Largest message (bytes) that takes the straight-line path.
const FAST_LIMIT: usize = 8 << 10;

/// Scratch for a fast-path reduction: on the stack up to 1 KiB (no heap
/// allocation per call), on the heap above.
#[allow(
    clippy::large_enum_variant,
    reason = "lives on the stack for one call; avoiding the allocation is the point"
)]
pub(super) enum Scratch {
    Stack([u128; 64]),
    Heap(Vec<u128>),
}

impl Scratch {
    pub(super) fn new(bytes: usize) -> Scratch {
        if bytes <= 1024 {
            Scratch::Stack([0; 64])
        } else {
            Scratch::Heap(vec![0; bytes.div_ceil(16)])
        }
    }

    /// `n` bytes, aligned to 16 (as for every `Pod` scalar the operations
    /// support).
    pub(super) fn bytes(&mut self, n: usize) -> &mut [u8] {
        let words: &mut [u128] = match self {
            Scratch::Stack(a) => a,
            Scratch::Heap(v) => v,
        };
        &mut bytemuck::cast_slice_mut(words)[..n]
    }
}

impl Comm {
    /// Whether a `len`-byte collective takes the straight-line path: small,
    /// and sent eagerly, so that two ranks sending to each other before
    /// receiving never wait for one another; never on a backend that runs
    /// the collectives itself.
    pub(crate) fn fast_path(&self, len: usize) -> bool {
        len <= FAST_LIMIT && len <= self.inner.rt.b.eager_limit() && !self.own()
    }

    fn fast_send(&self, data: &[u8], to: usize, seq: u32, phase: u32) -> Result<()> {
        self.raw_send(self.inner.ctx + 1, data, to as u32, tag(seq, phase))
    }

    fn fast_recv(&self, buf: &mut [u8], from: usize, seq: u32, phase: u32) -> Result<()> {
        let spec = MatchSpec {
            ctx: self.inner.ctx + 1,
            src: Some(from as u32),
            tag: Some(tag(seq, phase)),
        };
        let n = buf.len();
        let st = match self.raw_recv(spec, buf, 1) {
            Err(Error::Truncated { sent, capacity }) => {
                // The longer message is consumed: its sender completes.
                return Err(Error::InvalidArgument(format!(
                    "collective count mismatch: rank {from} sent {sent} bytes where {capacity} were expected"
                )));
            }
            r => r?,
        };
        if st.len != n {
            return Err(Error::InvalidArgument(format!(
                "collective count mismatch: rank {from} sent {} bytes where {n} were expected",
                st.len
            )));
        }
        Ok(())
    }

    /// Dissemination barrier (as `algo::barrier`).
    pub(crate) fn fast_barrier(&self, seq: u32) -> Result<()> {
        let (n, r) = (self.size(), self.inner.rank as usize);
        let mut d = 1;
        let mut k = 0;
        while d < n {
            self.fast_send(&[], (r + d) % n, seq, k)?;
            self.fast_recv(&mut [], (r + n - d) % n, seq, k)?;
            d <<= 1;
            k += 1;
        }
        Ok(())
    }

    /// Allgather of equal blocks of `send.len()` bytes into `recv` (as
    /// `algo::allgatherv` for contiguous blocks: recursive doubling on
    /// power-of-two sizes, ring otherwise, with its phases).
    pub(crate) fn fast_allgather(&self, send: &[u8], recv: &mut [u8], seq: u32) -> Result<()> {
        let (n, r) = (self.size(), self.inner.rank as usize);
        let b = send.len();
        recv[r * b..(r + 1) * b].copy_from_slice(send);
        if n.is_power_of_two() {
            let mut d = 1;
            let mut k = 0;
            while d < n {
                let pr = r ^ d;
                let (mine, theirs) = ((r / d) * d, (pr / d) * d);
                self.fast_send(&recv[mine * b..(mine + d) * b], pr, seq, 1 + k)?;
                self.fast_recv(&mut recv[theirs * b..(theirs + d) * b], pr, seq, 1 + k)?;
                d <<= 1;
                k += 1;
            }
            return Ok(());
        }
        let (right, left) = ((r + 1) % n, (r + n - 1) % n);
        for k in 0..n - 1 {
            let (sb, rb) = ((r + n - k) % n, (r + n - k - 1) % n);
            if b > 0 {
                self.fast_send(&recv[sb * b..(sb + 1) * b], right, seq, 1 + k as u32)?;
                self.fast_recv(&mut recv[rb * b..(rb + 1) * b], left, seq, 1 + k as u32)?;
            }
        }
        Ok(())
    }

    /// All-to-all of equal blocks (as the small branch of
    /// `algo::alltoallv`: every send, then every receive, the phase being
    /// the partner's distance).
    pub(crate) fn fast_alltoall(&self, send: &[u8], recv: &mut [u8], seq: u32) -> Result<()> {
        let (n, r) = (self.size(), self.inner.rank as usize);
        let b = send.len() / n.max(1);
        recv[r * b..(r + 1) * b].copy_from_slice(&send[r * b..(r + 1) * b]);
        if b == 0 {
            return Ok(());
        }
        for k in 1..n {
            let to = (r + k) % n;
            self.fast_send(&send[to * b..(to + 1) * b], to, seq, k as u32)?;
        }
        for k in 1..n {
            let from = (r + n - k) % n;
            self.fast_recv(&mut recv[from * b..(from + 1) * b], from, seq, k as u32)?;
        }
        Ok(())
    }

    /// Binomial broadcast (as `algo::bcast`).
    pub(crate) fn fast_bcast(&self, buf: &mut [u8], root: u32, seq: u32) -> Result<()> {
        let (n, r) = (self.size(), self.inner.rank as usize);
        let v = (r + n - root as usize) % n;
        let real = |x: usize| (x + root as usize) % n;
        let mut mask = 1;
        while mask < n {
            if v & mask != 0 {
                self.fast_recv(buf, real(v - mask), seq, 1)?;
                break;
            }
            mask <<= 1;
        }
        mask >>= 1;
        while mask > 0 {
            if v + mask < n {
                self.fast_send(buf, real(v + mask), seq, 1)?;
            }
            mask >>= 1;
        }
        Ok(())
    }

    /// Recursive-doubling allreduce in place on `acc` (as the small branch
    /// of `algo::allreduce`).
    pub(crate) fn fast_allreduce(&self, acc: &mut [u8], op: &impl Combine, seq: u32) -> Result<()> {
        let (n, r) = (self.size(), self.inner.rank as usize);
        if n == 1 {
            return Ok(());
        }
        debug_assert!(acc.len() < ALLREDUCE_LARGE);
        let mut scratch = Scratch::new(acc.len());
        let tmp = scratch.bytes(acc.len());
        let p = 1usize << (usize::BITS - 1 - n.leading_zeros());
        let rem = n - p;
        let v = if r < 2 * rem {
            if r % 2 == 0 {
                self.fast_send(acc, r + 1, seq, 1)?;
                None
            } else {
                self.fast_recv(tmp, r - 1, seq, 1)?;
                op.combine(acc, tmp, false)?;
                Some(r / 2)
            }
        } else {
            Some(r - rem)
        };
        let real = |v: usize| if v < rem { 2 * v + 1 } else { v + rem };
        if let Some(v) = v {
            for k in 0..p.trailing_zeros() {
                let pv = v ^ (1 << k);
                self.fast_send(acc, real(pv), seq, 2 + k)?;
                self.fast_recv(tmp, real(pv), seq, 2 + k)?;
                op.combine(acc, tmp, pv > v)?;
            }
        }
        if r < 2 * rem {
            if r % 2 == 1 {
                self.fast_send(acc, r - 1, seq, 99)?;
            } else {
                self.fast_recv(acc, r + 1, seq, 99)?;
            }
        }
        Ok(())
    }

    /// Binomial reduce to rank 0 in rank order, then to the root (as
    /// `algo::reduce`). `acc` holds this rank's contribution on entry and
    /// the result at the root on return.
    pub(crate) fn fast_reduce(
        &self,
        acc: &mut [u8],
        op: &impl Combine,
        root: u32,
        seq: u32,
    ) -> Result<()> {
        let (n, v) = (self.size(), self.inner.rank as usize);
        let mut scratch = Scratch::new(acc.len());
        let tmp = scratch.bytes(acc.len());
        let mut d = 1;
        let mut k = 0;
        while d < n {
            if v & d != 0 {
                self.fast_send(acc, v - d, seq, 1 + k)?;
                break;
            }
            if v + d < n {
                self.fast_recv(tmp, v + d, seq, 1 + k)?;
                op.combine(acc, tmp, true)?;
            }
            d <<= 1;
            k += 1;
        }
        if root != 0 {
            if v == 0 {
                self.fast_send(acc, root as usize, seq, 100)?;
            } else if v == root as usize {
                self.fast_recv(acc, 0, seq, 100)?;
            }
        }
        Ok(())
    }
}
