//! Groups: ordered sets of processes, independent of communication.

use std::rc::Rc;

use crate::error::{Error, Result};
use crate::types::Rank;

/// An ordered set of processes. Rank `i` of a group is its `i`-th member.
///
/// # Example
/// ```
/// let u = pertinax::init()?;
/// let g = u.world().group();
/// let me = g.incl(&[pertinax::Rank(0)])?;
/// assert_eq!(me.size(), 1);
/// assert_eq!(g.compare(&me), pertinax::GroupRelation::Identical);
/// # Ok::<(), pertinax::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    members: Rc<[u32]>,
    me: u32,
}

/// How two groups relate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupRelation {
    /// Same members in the same order.
    Identical,
    /// Same members in another order.
    Similar,
    /// Different members.
    Unequal,
}

impl Group {
    pub(crate) fn new(members: Rc<[u32]>, me: u32) -> Group {
        Group { members, me }
    }

    pub(crate) fn members(&self) -> &Rc<[u32]> {
        &self.members
    }

    /// Number of members.
    pub fn size(&self) -> usize {
        self.members.len()
    }

    /// The calling process's rank in the group, if it is a member.
    pub fn rank(&self) -> Option<Rank> {
        self.members
            .iter()
            .position(|&m| m == self.me)
            .map(Rank::from)
    }

    fn check(&self, r: Rank) -> Result<usize> {
        if r.0 < 0 || r.index() >= self.members.len() {
            return Err(Error::InvalidRank {
                rank: r,
                size: self.members.len(),
            });
        }
        Ok(r.index())
    }

    fn distinct(ranks: &[Rank]) -> Result<()> {
        let mut v: Vec<i32> = ranks.iter().map(|r| r.0).collect();
        v.sort_unstable();
        if v.windows(2).any(|w| w[0] == w[1]) {
            return Err(Error::InvalidArgument(
                "a rank appears twice in the list".into(),
            ));
        }
        Ok(())
    }

    fn with_members(&self, v: Vec<u32>) -> Group {
        Group {
            members: v.into(),
            me: self.me,
        }
    }

    /// The group of the listed members, in the listed order.
    ///
    /// # Errors
    /// `InvalidRank` for a rank outside the group, `InvalidArgument` for a
    /// rank listed twice.
    pub fn incl(&self, ranks: &[Rank]) -> Result<Group>
    where
        Rank: Copy,
    {
        Self::distinct(ranks)?;
        let v = ranks
            .iter()
            .map(|&r| self.check(r).map(|i| self.members[i]))
            .collect::<Result<Vec<_>>>()?;
        Ok(self.with_members(v))
    }

    /// The group without the listed members (order kept).
    ///
    /// # Errors
    /// As [`Group::incl`].
    pub fn excl(&self, ranks: &[Rank]) -> Result<Group> {
        Self::distinct(ranks)?;
        let drop = ranks
            .iter()
            .map(|&r| self.check(r))
            .collect::<Result<Vec<_>>>()?;
        let v = (0..self.members.len())
            .filter(|i| !drop.contains(i))
            .map(|i| self.members[i])
            .collect();
        Ok(self.with_members(v))
    }

    /// For each rank of this group, its rank in `other` (or `None`).
    ///
    /// # Errors
    /// `InvalidRank` for a rank outside this group.
    pub fn translate_ranks(&self, ranks: &[Rank], other: &Group) -> Result<Vec<Option<Rank>>> {
        ranks
            .iter()
            .map(|&r| {
                let m = self.members[self.check(r)?];
                Ok(other.members.iter().position(|&x| x == m).map(Rank::from))
            })
            .collect()
    }

    /// How this group relates to `other`.
    pub fn compare(&self, other: &Group) -> GroupRelation {
        if self.members == other.members {
            return GroupRelation::Identical;
        }
        let mut a = self.members.to_vec();
        let mut b = other.members.to_vec();
        a.sort_unstable();
        b.sort_unstable();
        if a == b {
            GroupRelation::Similar
        } else {
            GroupRelation::Unequal
        }
    }

    /// Members of this group, then those of `other` not in it.
    pub fn union(&self, other: &Group) -> Group {
        let mut v = self.members.to_vec();
        v.extend(other.members.iter().filter(|m| !self.members.contains(m)));
        self.with_members(v)
    }

    /// Members of this group that are also in `other` (this group's order).
    pub fn intersection(&self, other: &Group) -> Group {
        self.with_members(
            self.members
                .iter()
                .copied()
                .filter(|m| other.members.contains(m))
                .collect(),
        )
    }

    /// Members of this group that are not in `other`.
    pub fn difference(&self, other: &Group) -> Group {
        self.with_members(
            self.members
                .iter()
                .copied()
                .filter(|m| !other.members.contains(m))
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(v: &[u32], me: u32) -> Group {
        Group::new(v.into(), me)
    }

    #[test]
    fn incl_excl_translate_compare() {
        let a = g(&[10, 11, 12, 13], 12);
        assert_eq!(a.rank(), Some(Rank(2)));
        let b = a.incl(&[Rank(3), Rank(1)]).unwrap();
        assert_eq!(&*b.members, &[13, 11]);
        assert_eq!(b.rank(), None);
        let c = a.excl(&[Rank(0)]).unwrap();
        assert_eq!(&*c.members, &[11, 12, 13]);
        assert_eq!(
            a.translate_ranks(&[Rank(0), Rank(3)], &c).unwrap(),
            vec![None, Some(Rank(2))]
        );
        assert_eq!(a.compare(&a.clone()), GroupRelation::Identical);
        assert_eq!(b.compare(&g(&[11, 13], 0)), GroupRelation::Similar);
        assert_eq!(b.compare(&c), GroupRelation::Unequal);
        assert_eq!(&*b.union(&c).members, &[13, 11, 12]);
        assert_eq!(&*c.intersection(&b).members, &[11, 13]);
        assert_eq!(&*c.difference(&b).members, &[12]);
    }

    #[test]
    fn bad_ranks_are_errors() {
        let a = g(&[0, 1], 0);
        assert!(matches!(a.incl(&[Rank(2)]), Err(Error::InvalidRank { .. })));
        assert!(matches!(
            a.incl(&[Rank(-1)]),
            Err(Error::InvalidRank { .. })
        ));
        assert!(matches!(
            a.excl(&[Rank(1), Rank(1)]),
            Err(Error::InvalidArgument(_))
        ));
    }
}
