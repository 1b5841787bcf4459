//! Metadata of a message record in a shared-memory ring (24 bytes, the
//! ring's metadata slot).

use bytemuck::{Pod, Zeroable};

/// What a record carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// A whole message; the payload is the data.
    Eager = 1,
    /// Request to send a large message; the payload is a [`Rts`].
    Rts = 2,
    /// The receiver has copied a rendezvous message; `len` holds the
    /// sender's request cookie.
    Fin = 3,
    /// The receiver matched a rendezvous message and cannot read the
    /// sender's memory: stream it. `len` holds the sender's cookie, `tag`
    /// unused, payload is the receiver's cookie (u64 LE).
    Cts = 4,
    /// A fragment of a streamed message; payload is the data, `len` holds
    /// the receiver's cookie.
    Frag = 5,
}

impl Kind {
    /// Decodes a kind byte.
    pub fn from_u8(b: u8) -> Option<Kind> {
        Some(match b {
            1 => Kind::Eager,
            2 => Kind::Rts,
            3 => Kind::Fin,
            4 => Kind::Cts,
            5 => Kind::Frag,
            _ => return None,
        })
    }
}

/// The 24-byte record metadata.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Meta {
    /// A [`Kind`] byte.
    pub kind: u8,
    /// Reserved flags.
    pub flags: u8,
    /// Reserved.
    pub _reserved: u16,
    /// Context id of the communicator (with its collective bit).
    pub ctx: u32,
    /// Sender's rank in that communicator.
    pub src: u32,
    /// Message tag.
    pub tag: i32,
    /// Total message length in bytes (or a cookie, see [`Kind`]).
    pub len: u64,
}

/// Payload of a [`Kind::Rts`] record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Rts {
    /// Address of the data in the sender's memory.
    pub addr: u64,
    /// The sender's request cookie, returned in the Fin or Cts.
    pub cookie: u64,
}

#[cfg(test)]
mod tests {
    #[test]
    fn sizes() {
        assert_eq!(std::mem::size_of::<super::Meta>(), 24);
        assert_eq!(std::mem::size_of::<super::Rts>(), 16);
        for k in 1..=5 {
            assert_eq!(super::Kind::from_u8(k).unwrap() as u8, k);
        }
        assert!(super::Kind::from_u8(0).is_none());
    }
}
