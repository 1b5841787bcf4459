//! Small vocabulary types: ranks, tags, message selectors, status.

use std::fmt;

/// A process's rank in a communicator.
///
/// Conversions from `i32`, `u32` and `usize` let calls take plain integers:
/// `world.send(&x, 1, 0)`. Out-of-range values are reported as
/// [`Error::InvalidRank`](crate::Error::InvalidRank) by the call that uses them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rank(pub i32);

impl Rank {
    /// The rank as an index, if it is not negative.
    #[inline]
    pub fn index(self) -> usize {
        self.0.max(0) as usize
    }
}

impl From<i32> for Rank {
    #[inline]
    fn from(r: i32) -> Rank {
        Rank(r)
    }
}
impl From<u32> for Rank {
    #[inline]
    fn from(r: u32) -> Rank {
        Rank(r.min(i32::MAX as u32) as i32)
    }
}
impl From<usize> for Rank {
    #[inline]
    fn from(r: usize) -> Rank {
        Rank(r.min(i32::MAX as usize) as i32)
    }
}
impl fmt::Display for Rank {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A message tag, `0..=TAG_UB`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Tag(pub i32);

/// The largest valid tag.
pub const TAG_UB: i32 = (1 << 30) - 1;

impl From<i32> for Tag {
    #[inline]
    fn from(t: i32) -> Tag {
        Tag(t)
    }
}
impl From<u32> for Tag {
    #[inline]
    fn from(t: u32) -> Tag {
        Tag(t.min(i32::MAX as u32) as i32)
    }
}
impl fmt::Display for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Which sender a receive accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Source {
    /// Any rank of the communicator.
    Any,
    /// This rank only.
    Rank(Rank),
}

/// Any sender.
pub const ANY_SOURCE: Source = Source::Any;

impl<T: Into<Rank>> From<T> for Source {
    fn from(r: T) -> Source {
        Source::Rank(r.into())
    }
}

/// Which tags a receive accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TagMatch {
    /// Any tag.
    Any,
    /// This tag only.
    Tag(Tag),
}

/// Any tag.
pub const ANY_TAG: TagMatch = TagMatch::Any;

impl<T: Into<Tag>> From<T> for TagMatch {
    fn from(t: T) -> TagMatch {
        TagMatch::Tag(t.into())
    }
}

/// What a completed receive (or a probe) says about its message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Status {
    /// Sender's rank in the communicator.
    pub source: Rank,
    /// The message's tag.
    pub tag: Tag,
    /// Message length in bytes.
    pub len: usize,
}

impl Status {
    /// Number of `T` elements in the message, if the length is a whole
    /// number of them.
    pub fn count<T>(&self) -> Option<usize> {
        let s = std::mem::size_of::<T>();
        if s == 0 {
            return Some(0);
        }
        self.len.is_multiple_of(s).then_some(self.len / s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions() {
        assert_eq!(Rank::from(3usize), Rank(3));
        assert_eq!(Rank::from(usize::MAX), Rank(i32::MAX));
        assert_eq!(Source::from(2), Source::Rank(Rank(2)));
        assert_eq!(TagMatch::from(7), TagMatch::Tag(Tag(7)));
        let st = Status {
            source: Rank(0),
            tag: Tag(0),
            len: 24,
        };
        assert_eq!(st.count::<u64>(), Some(3));
        assert_eq!(st.count::<[u8; 5]>(), None);
    }
}
