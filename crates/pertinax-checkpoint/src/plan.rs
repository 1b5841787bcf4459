//! The restore's decision, a pure function of what every rank holds
//! (exchanged by an allgather, so every rank computes the same plan).
//!
//! Rank `r` can obtain its own state at version `v` if `v` is in its
//! memory, in its verified disk files, or among the copies its buddy
//! `r + 1` holds. It obtains the copy it keeps for `r - 1` from its memory
//! or, once `r - 1` has its own `v`, from `r - 1`. So `v` is restorable
//! iff every rank can obtain its own `v`; the plan picks the newest such
//! `v` and, for each rank, where its own image and its buddy copy come
//! from (memory first, then disk, then the buddy).

use crate::Error;

/// What one rank holds: verified committed versions, and whether it is a
/// new process (it lost its memory).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Avail {
    /// Lost its memory: a new process (a replacement), or one that holds
    /// nothing in memory.
    pub(crate) fresh: bool,
    /// Its own versions in memory.
    pub(crate) own: Vec<u64>,
    /// The copies of the previous rank's versions in memory.
    pub(crate) buddy: Vec<u64>,
    /// Its own versions in verified files.
    pub(crate) disk: Vec<u64>,
}

impl Avail {
    /// As words for the allgather: `fresh, n, own.., n, buddy.., n, disk..`.
    pub(crate) fn to_words(&self) -> Vec<u64> {
        let mut w = vec![u64::from(self.fresh)];
        for list in [&self.own, &self.buddy, &self.disk] {
            w.push(list.len() as u64);
            w.extend_from_slice(list);
        }
        w
    }

    /// Back from [`Avail::to_words`].
    pub(crate) fn from_words(w: &[u64]) -> Option<Avail> {
        let (&fresh, mut rest) = w.split_first()?;
        let mut lists = Vec::with_capacity(3);
        for _ in 0..3 {
            let (&n, tail) = rest.split_first()?;
            let n = usize::try_from(n).ok().filter(|&n| n <= tail.len())?;
            lists.push(tail[..n].to_vec());
            rest = &tail[n..];
        }
        let disk = lists.pop()?;
        let buddy = lists.pop()?;
        let own = lists.pop()?;
        rest.is_empty().then_some(Avail {
            fresh: fresh != 0,
            own,
            buddy,
            disk,
        })
    }

    fn obtainable(&self, next: &Avail) -> Vec<u64> {
        let mut v: Vec<u64> = self
            .own
            .iter()
            .chain(&self.disk)
            .chain(&next.buddy)
            .copied()
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

/// Where a rank's own image comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OwnFrom {
    /// Its memory.
    Memory,
    /// Its file.
    Disk,
    /// The copy its buddy (the next rank) holds.
    Buddy,
}

/// Where the copy a rank keeps of the previous rank's image comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BuddyFrom {
    /// Its memory.
    Memory,
    /// The previous rank, once it has its own image.
    Previous,
}

/// The restore's plan: the version and, per rank, the sources.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Plan {
    /// The version restored.
    pub(crate) v: u64,
    /// Per rank, where its own image comes from.
    pub(crate) own: Vec<OwnFrom>,
    /// Per rank, where its buddy copy comes from.
    pub(crate) buddy: Vec<BuddyFrom>,
}

fn list(v: &[u64]) -> String {
    format!("{v:?}")
}

/// The plan for the ranks' holdings `all` (rank order).
///
/// # Errors
/// [`Error::NoCheckpoint`] if nobody holds anything; [`Error::Lost`] if
/// no version is obtainable at every rank (naming the lowest rank whose
/// state cannot be had, and why).
pub(crate) fn plan(all: &[Avail]) -> Result<Plan, Error> {
    let n = all.len();
    if n == 0 {
        return Err(Error::InvalidArgument("restore on no ranks".into()));
    }
    let next = |r: usize| (r + 1) % n;
    let obt: Vec<Vec<u64>> = (0..n).map(|r| all[r].obtainable(&all[next(r)])).collect();
    let common = obt[0]
        .iter()
        .rev()
        .find(|v| obt.iter().all(|o| o.binary_search(v).is_ok()))
        .copied();
    let Some(v) = common else {
        // Every process that took part in a commit holds the version in
        // memory until a newer one is committed, and a recovery keeps at
        // least one of them alive: with nothing in memory anywhere, nothing
        // was committed (files are then leftovers of checkpoints that were
        // not committed, or of another job, and hold no common version).
        if all.iter().all(|a| a.own.is_empty() && a.buddy.is_empty()) {
            return Err(Error::NoCheckpoint);
        }
        return Err(lost(all, &obt));
    };
    let own = all
        .iter()
        .map(|a| {
            if a.own.contains(&v) {
                OwnFrom::Memory
            } else if a.disk.contains(&v) {
                OwnFrom::Disk
            } else {
                OwnFrom::Buddy
            }
        })
        .collect();
    let buddy = all
        .iter()
        .map(|a| {
            if a.buddy.contains(&v) {
                BuddyFrom::Memory
            } else {
                BuddyFrom::Previous
            }
        })
        .collect();
    Ok(Plan { v, own, buddy })
}

/// The error when no version is common: the lowest rank that can obtain
/// nothing, or else the lowest rank that lacks the newest version anyone
/// can obtain.
fn lost(all: &[Avail], obt: &[Vec<u64>]) -> Error {
    let n = all.len();
    if let Some(r) = obt.iter().position(Vec::is_empty) {
        let b = (r + 1) % n;
        let why = if all[r].fresh && all[b].fresh && b != r {
            format!(
                "rank {r} and its buddy {b} both lost their memory and there is no disk copy \
                 of rank {r}'s state"
            )
        } else if all[r].fresh && b != r {
            format!(
                "rank {r} lost its memory, its buddy {b} holds no verified copy of its state \
                 and there is no disk copy"
            )
        } else {
            format!(
                "rank {r} holds no verified version of its own state, its buddy {b} no verified \
                 copy of it, and there is no disk copy"
            )
        };
        return Error::Lost { rank: r, why };
    }
    let newest = obt.iter().filter_map(|o| o.last()).max().copied();
    let r = newest
        .and_then(|m| obt.iter().position(|o| o.binary_search(&m).is_err()))
        .unwrap_or(0);
    let each: Vec<String> = obt
        .iter()
        .enumerate()
        .map(|(i, o)| format!("rank {i} {}", list(o)))
        .collect();
    Error::Lost {
        rank: r,
        why: format!(
            "no version can be obtained at every rank (versions each rank's state can be \
             restored at: {})",
            each.join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn survivor(v: &[u64]) -> Avail {
        Avail {
            fresh: false,
            own: v.to_vec(),
            buddy: v.to_vec(),
            disk: Vec::new(),
        }
    }

    fn fresh(disk: &[u64]) -> Avail {
        Avail {
            fresh: true,
            disk: disk.to_vec(),
            ..Avail::default()
        }
    }

    fn check(all: &[Avail]) -> Result<Plan, Error> {
        for a in all {
            assert_eq!(Avail::from_words(&a.to_words()).as_ref(), Some(a));
        }
        plan(all)
    }

    #[test]
    fn words_round_trip_and_refuse_garbage() {
        let a = Avail {
            fresh: true,
            own: vec![1, 2],
            buddy: vec![],
            disk: vec![9],
        };
        assert_eq!(Avail::from_words(&a.to_words()), Some(a));
        assert_eq!(Avail::from_words(&[]), None);
        assert_eq!(Avail::from_words(&[0, 5, 1]), None);
        assert_eq!(Avail::from_words(&[0, 0, 0, 0, 7]), None);
    }

    #[test]
    fn no_loss_picks_the_newest_from_memory() {
        let all = vec![survivor(&[10, 20]); 4];
        let p = check(&all).expect("plan");
        assert_eq!(p.v, 20);
        assert!(p.own.iter().all(|&o| o == OwnFrom::Memory));
        assert!(p.buddy.iter().all(|&o| o == BuddyFrom::Memory));
    }

    #[test]
    fn a_fresh_rank_gets_its_state_from_its_buddy() {
        let mut all = vec![survivor(&[10, 20]); 5];
        all[2] = fresh(&[]);
        let p = check(&all).expect("plan");
        assert_eq!(p.v, 20);
        assert_eq!(p.own[2], OwnFrom::Buddy);
        assert_eq!(p.buddy[2], BuddyFrom::Previous);
        assert_eq!(p.own[3], OwnFrom::Memory);
        assert_eq!(p.buddy[3], BuddyFrom::Memory);
    }

    #[test]
    fn adjacent_fresh_ranks_without_disk_are_lost() {
        let mut all = vec![survivor(&[10, 20]); 5];
        all[2] = fresh(&[]);
        all[3] = fresh(&[]);
        match check(&all) {
            Err(Error::Lost { rank: 2, why }) => assert!(
                why.contains("rank 2 and its buddy 3 both lost their memory"),
                "{why}"
            ),
            other => panic!("{other:?}"),
        }
        // The wrap-around: the last rank's buddy is rank 0.
        let mut all = vec![survivor(&[10]); 3];
        all[2] = fresh(&[]);
        all[0] = fresh(&[]);
        assert!(matches!(check(&all), Err(Error::Lost { rank: 2, .. })));
    }

    #[test]
    fn adjacent_fresh_ranks_with_disk_recover() {
        let mut all = vec![survivor(&[10, 20]); 5];
        all[2] = fresh(&[10, 20, 30]); // 30: a pending file nobody else has
        all[3] = fresh(&[10, 20]);
        let p = check(&all).expect("plan");
        assert_eq!(p.v, 20);
        assert_eq!(p.own[2], OwnFrom::Disk);
        assert_eq!(p.own[3], OwnFrom::Disk);
        assert_eq!(p.buddy[3], BuddyFrom::Previous);
        // Rank 4 kept its copy of rank 3's state.
        assert_eq!(p.buddy[4], BuddyFrom::Memory);
    }

    #[test]
    fn a_corrupt_newest_copy_falls_back_to_an_older_version() {
        let mut all = vec![survivor(&[10, 20]); 4];
        all[1] = fresh(&[]);
        // Rank 2's copy of rank 1's 20 failed verification.
        all[2].buddy = vec![10];
        let p = check(&all).expect("plan");
        assert_eq!(p.v, 10);
        assert_eq!(p.own[1], OwnFrom::Buddy);
    }

    #[test]
    fn nothing_anywhere_is_no_checkpoint() {
        let mut all = vec![Avail::default(); 3];
        all[1] = fresh(&[]);
        assert!(matches!(check(&all), Err(Error::NoCheckpoint)));
        // Rank 1 died in the first checkpoint, after writing its file:
        // that file is no committed version.
        all[1] = fresh(&[0]);
        assert!(matches!(check(&all), Err(Error::NoCheckpoint)));
        // A whole job restarting from complete files.
        let all = vec![fresh(&[10, 20]), fresh(&[10, 20]), fresh(&[10])];
        assert_eq!(check(&all).map(|p| p.v).ok(), Some(10));
    }

    #[test]
    fn disjoint_versions_are_lost_with_a_list() {
        let mut all = vec![survivor(&[20]); 3];
        all[1] = survivor(&[10]);
        all[2].buddy = vec![10];
        match check(&all) {
            Err(Error::Lost { rank, why }) => {
                assert_eq!(rank, 1);
                assert!(why.contains("rank 1 [10]"), "{why}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn one_rank_is_its_own_buddy() {
        let p = check(&[survivor(&[5, 6])]).expect("plan");
        assert_eq!(p.v, 6);
        let mut a = survivor(&[5, 6]);
        a.own.clear();
        let p = check(&[a]).expect("plan");
        assert_eq!((p.v, p.own[0]), (6, OwnFrom::Buddy));
    }
}
