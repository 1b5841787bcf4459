//! The committed versions one rank keeps in memory: its own images and
//! the copies of its previous rank's, each a map from iteration to image.
//!
//! Invariants: a map holds only committed versions (a pending version
//! lives outside until the agreement says commit); after a commit it holds
//! at most `keep` versions, the newest ones (the oldest are dropped
//! first); after a restore to version `v` it holds none newer than `v`.

use std::collections::BTreeMap;

use crate::format;

/// One map of committed versions.
#[derive(Clone, Default)]
pub(crate) struct Versions {
    map: BTreeMap<u64, Vec<u8>>,
}

impl std::fmt::Debug for Versions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The iterations and sizes, not the bytes.
        f.debug_map()
            .entries(self.map.iter().map(|(k, v)| (k, v.len())))
            .finish()
    }
}

impl Versions {
    /// Adds (or replaces) the image of `iteration`.
    pub(crate) fn insert(&mut self, iteration: u64, image: Vec<u8>) {
        self.map.insert(iteration, image);
    }

    /// The image of `iteration`.
    pub(crate) fn get(&self, iteration: u64) -> Option<&[u8]> {
        self.map.get(&iteration).map(Vec::as_slice)
    }

    /// The newest iteration.
    pub(crate) fn newest(&self) -> Option<u64> {
        self.map.keys().next_back().copied()
    }

    /// The iterations held, in increasing order.
    #[cfg(test)]
    pub(crate) fn iterations(&self) -> Vec<u64> {
        self.map.keys().copied().collect()
    }

    /// Drops the oldest versions until at most `keep` are left; returns
    /// the iterations dropped, oldest first.
    pub(crate) fn prune(&mut self, keep: usize) -> Vec<u64> {
        let mut gone = Vec::new();
        while self.map.len() > keep {
            match self.map.pop_first() {
                Some((it, _)) => gone.push(it),
                None => break,
            }
        }
        gone
    }

    /// Drops every version newer than `v`; returns their iterations.
    pub(crate) fn drop_newer(&mut self, v: u64) -> Vec<u64> {
        match v.checked_add(1) {
            Some(first) => self.map.split_off(&first).into_keys().collect(),
            None => Vec::new(),
        }
    }

    /// Forgets everything.
    pub(crate) fn clear(&mut self) {
        self.map.clear();
    }

    /// The iterations whose image verifies as the state of `rank` (of
    /// `size`) at that iteration, in increasing order.
    pub(crate) fn verified(&self, rank: usize, size: usize) -> Vec<u64> {
        self.map
            .iter()
            .filter(|(&it, img)| format::verify(img, rank, size, it).is_ok())
            .map(|(&it, _)| it)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(its: &[u64]) -> Versions {
        let mut v = Versions::default();
        for &it in its {
            v.insert(it, format::encode(1, 3, it, &it.to_le_bytes()));
        }
        v
    }

    #[test]
    fn keep_drops_the_oldest_first() {
        let mut v = with(&[30, 10, 20, 40]);
        assert_eq!(v.prune(2), [10, 20]);
        assert_eq!(v.iterations(), [30, 40]);
        assert_eq!(v.prune(2), Vec::<u64>::new());
        assert_eq!(v.newest(), Some(40));
        v.insert(50, format::encode(1, 3, 50, b""));
        assert_eq!(v.prune(3), Vec::<u64>::new());
        assert_eq!(v.prune(2), [30]);
        assert_eq!(v.iterations(), [40, 50]);
    }

    #[test]
    fn drop_newer_keeps_the_restored_version() {
        let mut v = with(&[10, 20, 30]);
        assert_eq!(v.drop_newer(20), [30]);
        assert_eq!(v.iterations(), [10, 20]);
        assert_eq!(v.drop_newer(u64::MAX), Vec::<u64>::new());
        assert_eq!(v.drop_newer(5), [10, 20]);
        assert_eq!(v.newest(), None);
    }

    #[test]
    fn only_verified_versions_count() {
        let mut v = with(&[10, 20, 30]);
        // A flipped byte in 20's payload, and 30 stored under the wrong
        // iteration.
        let mut bad = v.get(20).expect("held").to_vec();
        let last = bad.len() - 1;
        bad[last] ^= 0x40;
        v.insert(20, bad);
        let img30 = v.get(30).expect("held").to_vec();
        v.insert(31, img30);
        assert_eq!(v.verified(1, 3), [10, 30]);
        assert_eq!(v.verified(2, 3), Vec::<u64>::new());
    }
}
