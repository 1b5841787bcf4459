//! The bootstrap key/value store and its fences (a PMI-like exchange).
//!
//! Ranks publish pairs with `Put` and then call `Fence`. A fence completes
//! when every rank has either reached it or ended: a rank that died must
//! not hold the survivors back. Each completed fence releases the ranks
//! waiting in it with every pair published so far, in key order, and starts
//! the next generation. This module is pure bookkeeping; the caller does the
//! I/O.

use std::collections::BTreeMap;

/// A completed fence: whom to answer and with what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Release {
    /// Generation of the fence that completed (0 for the first).
    pub generation: u64,
    /// Ranks waiting in the fence, in rank order.
    pub ranks: Vec<u32>,
    /// Every pair published so far, in key order.
    pub entries: Vec<(String, Vec<u8>)>,
}

/// The job-wide key/value store and the state of the current fence.
#[derive(Debug)]
pub(crate) struct Bootstrap {
    kv: BTreeMap<String, Vec<u8>>,
    fenced: Vec<bool>,
    ended: Vec<bool>,
    generation: u64,
}

impl Bootstrap {
    /// A store for a job of `size` ranks, none fenced, none ended.
    pub fn new(size: usize) -> Bootstrap {
        Bootstrap {
            kv: BTreeMap::new(),
            fenced: vec![false; size],
            ended: vec![false; size],
            generation: 0,
        }
    }

    /// Publishes a pair (a later `put` of the same key replaces it).
    pub fn put(&mut self, key: String, value: Vec<u8>) {
        self.kv.insert(key, value);
    }

    /// `rank` reached the fence. A second fence from the same rank in the
    /// same generation is ignored (the rank is already waiting).
    pub fn fence(&mut self, rank: u32) -> Option<Release> {
        if let Some(f) = self.fenced.get_mut(rank as usize) {
            *f = true;
        }
        self.try_release()
    }

    /// `rank` ended: it counts as having reached this and every later fence.
    pub fn ended(&mut self, rank: u32) -> Option<Release> {
        if let Some(e) = self.ended.get_mut(rank as usize) {
            *e = true;
        }
        self.try_release()
    }

    fn try_release(&mut self) -> Option<Release> {
        let reached = self.fenced.iter().zip(&self.ended).all(|(&f, &e)| f || e);
        let waiting: Vec<u32> = (0..self.fenced.len())
            .filter(|&r| self.fenced[r] && !self.ended[r])
            .map(|r| r as u32)
            .collect();
        if !reached || waiting.is_empty() {
            return None;
        }
        self.fenced.iter_mut().for_each(|f| *f = false);
        let release = Release {
            generation: self.generation,
            ranks: waiting,
            entries: self
                .kv
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        };
        self.generation += 1;
        Some(release)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(pairs: &[(&str, &[u8])]) -> Vec<(String, Vec<u8>)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_vec()))
            .collect()
    }

    #[test]
    fn fence_waits_for_every_rank_and_returns_all_pairs_in_key_order() {
        let mut b = Bootstrap::new(3);
        b.put("z".into(), b"2".to_vec());
        assert_eq!(b.fence(2), None);
        b.put("a".into(), b"0".to_vec());
        assert_eq!(b.fence(0), None);
        assert_eq!(b.fence(0), None, "a repeated fence changes nothing");
        b.put("m".into(), b"1".to_vec());
        let r = b.fence(1).unwrap();
        assert_eq!(r.generation, 0);
        assert_eq!(r.ranks, vec![0, 1, 2]);
        assert_eq!(r.entries, entries(&[("a", b"0"), ("m", b"1"), ("z", b"2")]));
    }

    #[test]
    fn fences_repeat_with_cumulative_entries() {
        let mut b = Bootstrap::new(2);
        b.put("k0".into(), vec![0]);
        assert!(b.fence(0).is_none());
        assert_eq!(b.fence(1).unwrap().generation, 0);
        b.put("k1".into(), vec![1]);
        assert!(b.fence(1).is_none(), "the new generation starts empty");
        let r = b.fence(0).unwrap();
        assert_eq!(r.generation, 1);
        assert_eq!(r.entries, entries(&[("k0", &[0]), ("k1", &[1])]));
    }

    #[test]
    fn ended_ranks_count_as_reached() {
        let mut b = Bootstrap::new(3);
        assert!(b.fence(0).is_none());
        assert!(b.ended(2).is_none());
        let r = b.fence(1).unwrap();
        assert_eq!(r.ranks, vec![0, 1]);
        // Later fences do not wait for rank 2 either.
        assert!(b.fence(0).is_none());
        assert_eq!(b.fence(1).unwrap().generation, 1);
    }

    #[test]
    fn an_end_can_complete_a_fence_and_is_not_answered() {
        let mut b = Bootstrap::new(3);
        assert!(b.fence(0).is_none());
        assert!(b.fence(1).is_none());
        assert!(b.ended(1).is_none());
        let r = b.ended(2).unwrap();
        assert_eq!(
            r.ranks,
            vec![0],
            "rank 1 fenced, then died: nobody to answer"
        );
    }

    #[test]
    fn nothing_to_release_when_everyone_ended() {
        let mut b = Bootstrap::new(2);
        assert!(b.ended(0).is_none());
        assert!(b.ended(1).is_none());
        assert!(b.fence(7).is_none(), "out-of-range ranks are ignored");
    }
}
