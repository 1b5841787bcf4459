//! The best `k` hits, mergeable and encodable.

use std::cmp::Ordering;

use super::error::ScreenError;

/// A scored molecule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    /// The molecule's id.
    pub id: u64,
    /// Its score; higher is better.
    pub score: f64,
}

impl Hit {
    /// `Less` if `self` ranks before `other`: the higher score first, then
    /// the lower id (scores compared with `f64::total_cmp`).
    fn rank(&self, other: &Hit) -> Ordering {
        other
            .score
            .total_cmp(&self.score)
            .then_with(|| self.id.cmp(&other.id))
    }
}

/// The best `k` hits seen: highest score first, ties broken by the lower
/// id, so the result does not depend on the order hits arrive in.
///
/// `TopK`s of disjoint sets of molecules merge into the `TopK` of their
/// union ([`TopK::merge`]). A hit with a NaN score is never kept.
///
/// ```
/// use pertinax_apps::screen::{Hit, TopK};
///
/// let mut a = TopK::new(2);
/// a.push(Hit { id: 1, score: 0.5 });
/// a.push(Hit { id: 2, score: 3.0 });
/// let mut b = TopK::new(2);
/// b.push(Hit { id: 7, score: 0.5 });
/// b.push(Hit { id: 0, score: 0.5 });
/// a.merge(&b);
/// let ids: Vec<u64> = a.hits().iter().map(|h| h.id).collect();
/// assert_eq!(ids, [2, 0]);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct TopK {
    k: usize,
    /// Sorted best first; at most `k`.
    hits: Vec<Hit>,
}

impl TopK {
    /// Bytes per entry of [`TopK::encode`]: the id (`u64`) and the score's
    /// bits (`f64`), little-endian.
    pub const ENTRY_SIZE: usize = 16;

    /// The id of an empty entry in [`TopK::encode`]; its score is NaN.
    const EMPTY_ID: u64 = u64::MAX;

    /// An empty collector of the best `k`.
    pub fn new(k: usize) -> TopK {
        TopK {
            k,
            hits: Vec::with_capacity(k.min(1 << 16)),
        }
    }

    /// How many hits this keeps at most.
    pub fn k(&self) -> usize {
        self.k
    }

    /// The hits kept, best first.
    pub fn hits(&self) -> &[Hit] {
        &self.hits
    }

    /// The hits kept, best first.
    pub fn into_hits(self) -> Vec<Hit> {
        self.hits
    }

    /// Offers `hit`: kept if it ranks among the best `k` so far.
    pub fn push(&mut self, hit: Hit) {
        if hit.score.is_nan() || self.k == 0 {
            return;
        }
        if self.hits.len() == self.k {
            match self.hits.last() {
                Some(worst) if hit.rank(worst) == Ordering::Less => {}
                _ => return,
            }
        }
        let at = self
            .hits
            .partition_point(|h| h.rank(&hit) != Ordering::Greater);
        self.hits.insert(at, hit);
        self.hits.truncate(self.k);
    }

    /// Adds `other`'s hits: afterwards `self` holds the best `self.k()` of
    /// both.
    pub fn merge(&mut self, other: &TopK) {
        self.extend(other.hits.iter().copied());
    }

    /// The number of bytes of [`TopK::encode`] for a given `k`.
    pub fn encoded_len(k: usize) -> usize {
        k * Self::ENTRY_SIZE
    }

    /// The hits as exactly `k` entries of [`TopK::ENTRY_SIZE`] bytes, best
    /// first, empty entries (id `u64::MAX`, score NaN) at the end: every
    /// rank's buffer has the same size, as a gather wants.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(Self::encoded_len(self.k));
        let empty = Hit {
            id: Self::EMPTY_ID,
            score: f64::NAN,
        };
        let padding = std::iter::repeat_n(empty, self.k - self.hits.len());
        for hit in self.hits.iter().copied().chain(padding) {
            out.extend_from_slice(&hit.id.to_le_bytes());
            out.extend_from_slice(&hit.score.to_bits().to_le_bytes());
        }
        out
    }

    /// The best `k` of the entries in `bytes`: the output of
    /// [`TopK::encode`], or several of them end to end (a gather's buffer),
    /// which merges them. Empty entries are skipped.
    ///
    /// # Errors
    ///
    /// [`ScreenError::BadTopK`] if `bytes` is not a whole number of entries.
    pub fn decode(k: usize, bytes: &[u8]) -> Result<TopK, ScreenError> {
        if !bytes.len().is_multiple_of(Self::ENTRY_SIZE) {
            return Err(ScreenError::BadTopK { len: bytes.len() });
        }
        let mut out = TopK::new(k);
        for entry in bytes.chunks_exact(Self::ENTRY_SIZE) {
            let mut id = [0u8; 8];
            let mut score = [0u8; 8];
            id.copy_from_slice(&entry[..8]);
            score.copy_from_slice(&entry[8..]);
            out.push(Hit {
                id: u64::from_le_bytes(id),
                score: f64::from_bits(u64::from_le_bytes(score)),
            });
        }
        Ok(out)
    }
}

impl Extend<Hit> for TopK {
    fn extend<I: IntoIterator<Item = Hit>>(&mut self, hits: I) {
        for hit in hits {
            self.push(hit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(id: u64, score: f64) -> Hit {
        Hit { id, score }
    }

    fn ids(t: &TopK) -> Vec<u64> {
        t.hits().iter().map(|h| h.id).collect()
    }

    /// The best `k` of `hits` by sorting all of them.
    fn by_sorting(k: usize, hits: &[Hit]) -> Vec<Hit> {
        let mut all: Vec<Hit> = hits.iter().copied().filter(|h| !h.score.is_nan()).collect();
        all.sort_by(Hit::rank);
        all.truncate(k);
        all
    }

    /// Many ties: scores from a small set.
    fn hits(n: u64) -> Vec<Hit> {
        (0..n)
            .map(|i| hit(i * 7919 % n, ((i * 31) % 5) as f64))
            .collect()
    }

    #[test]
    fn keeps_the_best_with_ties_to_lower_id() {
        let mut t = TopK::new(3);
        t.extend([
            hit(5, 1.0),
            hit(3, 1.0),
            hit(9, 2.0),
            hit(1, 1.0),
            hit(0, -1.0),
        ]);
        assert_eq!(ids(&t), [9, 1, 3]);
        t.push(hit(2, f64::NAN));
        assert_eq!(ids(&t), [9, 1, 3]);
        t.push(hit(0, 1.0));
        assert_eq!(ids(&t), [9, 0, 1]);
    }

    #[test]
    fn equals_sorting_in_any_order() {
        let all = hits(500);
        for k in [0, 1, 4, 17, 500, 600] {
            let mut t = TopK::new(k);
            t.extend(all.iter().copied());
            assert_eq!(t.hits(), by_sorting(k, &all), "k = {k}");
            let mut r = TopK::new(k);
            r.extend(all.iter().rev().copied());
            assert_eq!(r, t, "k = {k}, reversed");
        }
    }

    #[test]
    fn merging_parts_equals_the_whole() {
        let all = hits(300);
        let k = 10;
        let mut whole = TopK::new(k);
        whole.extend(all.iter().copied());
        for n in 1..=9 {
            let mut merged = TopK::new(k);
            for rank in 0..n {
                let r = crate::split::block(all.len() as u64, rank, n);
                let mut part = TopK::new(k);
                part.extend(all[r.start as usize..r.end as usize].iter().copied());
                merged.merge(&part);
            }
            assert_eq!(merged, whole, "{n} parts");
        }
    }

    #[test]
    fn encoding_has_fixed_size_and_round_trips() {
        let mut t = TopK::new(4);
        assert_eq!(t.encode().len(), TopK::encoded_len(4));
        assert_eq!(TopK::decode(4, &t.encode()).ok(), Some(t.clone()));
        t.extend([hit(3, 0.25), hit(u64::MAX - 1, -0.0), hit(8, f64::INFINITY)]);
        let bytes = t.encode();
        assert_eq!(bytes.len(), 4 * TopK::ENTRY_SIZE);
        assert_eq!(TopK::decode(4, &bytes).ok(), Some(t));
    }

    #[test]
    fn decoding_a_concatenation_merges() {
        let all = hits(100);
        let (a, b) = all.split_at(40);
        let mut ta = TopK::new(6);
        ta.extend(a.iter().copied());
        let mut tb = TopK::new(6);
        tb.extend(b.iter().copied());
        let mut buf = ta.encode();
        buf.extend(tb.encode());
        let mut whole = TopK::new(6);
        whole.extend(all.iter().copied());
        assert_eq!(TopK::decode(6, &buf).ok(), Some(whole));
    }

    #[test]
    fn bad_buffer_is_a_typed_error() {
        match TopK::decode(3, &[0u8; 17]) {
            Err(ScreenError::BadTopK { len: 17 }) => {}
            other => panic!("expected BadTopK, got {other:?}"),
        }
    }
}
