//! The buffers of a non-blocking scope: the list of slots that grows while
//! its earlier nodes are lent ([`Chain`]), the layer's own buffers, where
//! each agreed result is ([`Place`]), and the copy of the results into the
//! callers' buffers when the scope ends ([`deliver`]).

use bytemuck::Pod;

use crate::Error;

/// A buffer of the layer's own, kept as its element type (so that it is
/// aligned for it) and seen as bytes.
pub(super) trait ByteBuf {
    fn bytes(&self) -> &[u8];
    fn bytes_mut(&mut self) -> &mut [u8];
}

impl<T: Pod> ByteBuf for Vec<T> {
    // (Never empty by mistake: zero-sized element types are refused when
    // a request is posted.)
    fn bytes(&self) -> &[u8] {
        bytemuck::try_cast_slice(self).unwrap_or_default()
    }
    fn bytes_mut(&mut self) -> &mut [u8] {
        bytemuck::try_cast_slice_mut(self).unwrap_or_default()
    }
}

/// One buffer of a scope.
#[derive(Default)]
pub(super) enum Slot<'b> {
    #[default]
    Empty,
    /// A caller's output buffer.
    User(&'b mut [u8]),
    /// The layer's own.
    Own(Box<dyn ByteBuf>),
}

/// The buffers of a scope, a list that grows while its earlier nodes are
/// lent: it is owned outside the core's scope and borrowed for it, and each
/// new buffer splits the borrow of the list's last node into its slot and
/// the rest. After the core's scope, the list is whole again and the
/// results are read from it.
#[derive(Default)]
pub(super) struct Chain<'b> {
    pub(super) slot: Slot<'b>,
    pub(super) next: Option<Box<Chain<'b>>>,
}

impl Drop for Chain<'_> {
    /// Iterative, so that a long scope does not drop recursively.
    fn drop(&mut self) {
        let mut next = self.next.take();
        while let Some(mut n) = next {
            next = n.next.take();
        }
    }
}

impl<'b> Chain<'b> {
    /// The slots in the order they were handed out.
    fn into_slots(mut self) -> Vec<Slot<'b>> {
        let mut out = vec![std::mem::take(&mut self.slot)];
        let mut next = self.next.take();
        while let Some(mut n) = next {
            out.push(std::mem::take(&mut n.slot));
            next = n.next.take();
        }
        out
    }
}

/// Where a request's agreed result is, to be copied into the caller's
/// buffer when the scope ends.
#[derive(Debug)]
pub(super) enum Place {
    /// Already there (the caller's buffer was lent).
    Direct,
    /// In slot `from`, same layout.
    Copy { from: usize },
    /// In slot `from`, `block` bytes per member of the collective
    /// communicator, member `c` at original position `map[c]`.
    Permute {
        from: usize,
        block: usize,
        map: Vec<usize>,
    },
}

/// Copies agreed results into the callers' buffers.
pub(super) fn deliver(chain: Chain<'_>, deliveries: Vec<(usize, Place)>) -> Result<(), Error> {
    let mut slots = chain.into_slots();
    let lost = || Error::Internal("a result's buffer is missing".into());
    for (user, place) in deliveries {
        let from = match &place {
            Place::Direct => continue,
            Place::Copy { from } | Place::Permute { from, .. } => *from,
        };
        let Slot::Own(src) = std::mem::take(slots.get_mut(from).ok_or_else(lost)?) else {
            return Err(lost());
        };
        let Some(Slot::User(dst)) = slots.get_mut(user) else {
            return Err(lost());
        };
        let src = src.bytes();
        match place {
            Place::Copy { .. } if dst.len() == src.len() => dst.copy_from_slice(src),
            Place::Permute { block, map, .. } => {
                for (c, &o) in map.iter().enumerate() {
                    let (Some(d), Some(s)) = (
                        dst.get_mut(o * block..(o + 1) * block),
                        src.get(c * block..(c + 1) * block),
                    ) else {
                        return Err(lost());
                    };
                    d.copy_from_slice(s);
                }
            }
            _ => return Err(lost()),
        }
    }
    Ok(())
}
