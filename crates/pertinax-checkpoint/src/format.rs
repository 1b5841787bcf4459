//! The checkpoint image: one version of one rank's state, self-describing
//! and checksummed, the same bytes in memory, on the wire and on disk.
//!
//! ```text
//! offset  size  field (little-endian)
//!      0     8  magic "PTXCKPT\0"
//!      8     4  format version (1)
//!     12     4  rank whose state this is
//!     16     4  size of the communicator
//!     20     8  iteration (the version)
//!     28     8  payload length in bytes
//!     36     4  CRC-32 (IEEE) of the payload
//!     40     4  CRC-32 (IEEE) of bytes 0..40
//!     44     -  payload
//! ```
//!
//! The header has its own checksum, so a flipped bit anywhere in an image
//! (header or payload) is detected, and a truncated or extended image is
//! refused by the length check. [`decode`] checks the image alone;
//! [`verify`] also checks that it is the image the caller expects (rank,
//! size, iteration).

/// The magic bytes that open every image.
pub const MAGIC: [u8; 8] = *b"PTXCKPT\0";
/// The format version this crate writes and reads.
pub const FORMAT_VERSION: u32 = 1;
/// Bytes before the payload.
pub const HEADER_LEN: usize = 44;

/// What an image's header says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// The rank whose state this is.
    pub rank: usize,
    /// The size of the communicator it was taken on.
    pub size: usize,
    /// The iteration (version).
    pub iteration: u64,
    /// Payload length in bytes.
    pub len: u64,
    /// CRC-32 of the payload.
    pub crc: u32,
}

/// Why bytes are not a valid image.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FormatError {
    /// Fewer bytes than a header.
    #[error("{len} bytes, shorter than the {HEADER_LEN}-byte header")]
    Short {
        /// Bytes given.
        len: usize,
    },
    /// The magic bytes are wrong (not a checkpoint image).
    #[error("wrong magic bytes (not a checkpoint image)")]
    Magic,
    /// Another format version.
    #[error("format version {found}, this library reads {FORMAT_VERSION}")]
    Version {
        /// The version found.
        found: u32,
    },
    /// The header's own checksum does not match.
    #[error("header checksum mismatch (stored {stored:08x}, computed {computed:08x})")]
    HeaderChecksum {
        /// Stored in the image.
        stored: u32,
        /// Computed over the header.
        computed: u32,
    },
    /// The payload is not as long as the header says.
    #[error("payload of {actual} bytes, the header says {header}")]
    Length {
        /// Length in the header.
        header: u64,
        /// Bytes after the header.
        actual: usize,
    },
    /// The payload's checksum does not match.
    #[error("payload checksum mismatch (stored {stored:08x}, computed {computed:08x})")]
    PayloadChecksum {
        /// Stored in the header.
        stored: u32,
        /// Computed over the payload.
        computed: u32,
    },
    /// A valid image, but not the one expected.
    #[error("image of rank {rank} (size {size}) at iteration {iteration}, expected {expected}")]
    Mismatch {
        /// Its rank.
        rank: usize,
        /// Its size.
        size: usize,
        /// Its iteration.
        iteration: u64,
        /// What was expected, in words.
        expected: String,
    },
}

/// The image of `payload`, the state of `rank` (of `size`) at `iteration`.
///
/// # Panics
/// Never. A rank or size above `u32::MAX` is stored as `u32::MAX`, which
/// [`verify`] then refuses (pertinax ranks fit in an `i32`).
pub fn encode(rank: usize, size: usize, iteration: u64, payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(HEADER_LEN + payload.len());
    v.extend_from_slice(&MAGIC);
    v.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    v.extend_from_slice(&u32::try_from(rank).unwrap_or(u32::MAX).to_le_bytes());
    v.extend_from_slice(&u32::try_from(size).unwrap_or(u32::MAX).to_le_bytes());
    v.extend_from_slice(&iteration.to_le_bytes());
    v.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    v.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    let hcrc = crc32fast::hash(&v);
    v.extend_from_slice(&hcrc.to_le_bytes());
    v.extend_from_slice(payload);
    v
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(w)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

/// Checks an image and returns its header and payload.
///
/// # Errors
/// The first check that fails, in this order: length of the header, magic,
/// format version, header checksum, payload length, payload checksum.
pub fn decode(bytes: &[u8]) -> Result<(Header, &[u8]), FormatError> {
    if bytes.len() < HEADER_LEN {
        return Err(FormatError::Short { len: bytes.len() });
    }
    if bytes[..8] != MAGIC {
        return Err(FormatError::Magic);
    }
    let version = u32_at(bytes, 8);
    if version != FORMAT_VERSION {
        return Err(FormatError::Version { found: version });
    }
    let stored = u32_at(bytes, 40);
    let computed = crc32fast::hash(&bytes[..40]);
    if stored != computed {
        return Err(FormatError::HeaderChecksum { stored, computed });
    }
    let h = Header {
        rank: u32_at(bytes, 12) as usize,
        size: u32_at(bytes, 16) as usize,
        iteration: u64_at(bytes, 20),
        len: u64_at(bytes, 28),
        crc: u32_at(bytes, 36),
    };
    let payload = &bytes[HEADER_LEN..];
    if payload.len() as u64 != h.len {
        return Err(FormatError::Length {
            header: h.len,
            actual: payload.len(),
        });
    }
    let computed = crc32fast::hash(payload);
    if computed != h.crc {
        return Err(FormatError::PayloadChecksum {
            stored: h.crc,
            computed,
        });
    }
    Ok((h, payload))
}

/// [`decode`], and the image must be the state of `rank` (of `size`) at
/// `iteration`.
///
/// # Errors
/// As [`decode`]; [`FormatError::Mismatch`] for a valid image of another
/// rank, size or iteration.
pub fn verify(
    bytes: &[u8],
    rank: usize,
    size: usize,
    iteration: u64,
) -> Result<&[u8], FormatError> {
    let (h, payload) = decode(bytes)?;
    if h.rank != rank || h.size != size || h.iteration != iteration {
        return Err(FormatError::Mismatch {
            rank: h.rank,
            size: h.size,
            iteration: h.iteration,
            expected: format!("rank {rank} (size {size}) at iteration {iteration}"),
        });
    }
    Ok(payload)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_crc() {
        // The IEEE CRC-32 check value.
        assert_eq!(crc32fast::hash(b"123456789"), 0xCBF4_3926);
    }

    #[test]
    fn round_trip_and_identity() {
        let img = encode(3, 5, 40, b"state");
        let (h, p) = decode(&img).expect("valid");
        assert_eq!((h.rank, h.size, h.iteration, h.len), (3, 5, 40, 5));
        assert_eq!(p, b"state");
        assert_eq!(verify(&img, 3, 5, 40), Ok(&b"state"[..]));
        assert!(matches!(
            verify(&img, 2, 5, 40),
            Err(FormatError::Mismatch { rank: 3, .. })
        ));
        assert!(matches!(
            verify(&img, 3, 5, 30),
            Err(FormatError::Mismatch { .. })
        ));
        // An empty state is a valid image too.
        let e = encode(0, 1, 0, b"");
        assert_eq!(decode(&e).map(|(_, p)| p.len()), Ok(0));
    }

    #[test]
    fn wrong_magic_version_and_length() {
        let img = encode(1, 2, 7, b"abcdef");
        let mut m = img.clone();
        m[0] = b'X';
        assert_eq!(decode(&m), Err(FormatError::Magic));
        let mut v = img.clone();
        v[8..12].copy_from_slice(&2u32.to_le_bytes());
        assert_eq!(decode(&v), Err(FormatError::Version { found: 2 }));
        assert_eq!(decode(&img[..10]), Err(FormatError::Short { len: 10 }));
        assert!(matches!(
            decode(&img[..img.len() - 1]),
            Err(FormatError::Length {
                header: 6,
                actual: 5
            })
        ));
        let mut longer = img.clone();
        longer.push(0);
        assert!(matches!(decode(&longer), Err(FormatError::Length { .. })));
    }

    proptest! {
        #[test]
        fn any_state_round_trips(
            rank in 0usize..1000, extra in 1usize..1000, it in any::<u64>(),
            payload in proptest::collection::vec(any::<u8>(), 0..512),
        ) {
            let size = rank + extra;
            let img = encode(rank, size, it, &payload);
            prop_assert_eq!(img.len(), HEADER_LEN + payload.len());
            let got = verify(&img, rank, size, it);
            prop_assert_eq!(got, Ok(&payload[..]));
        }

        #[test]
        fn any_flipped_bit_is_detected(
            payload in proptest::collection::vec(any::<u8>(), 0..256),
            at in any::<prop::sample::Index>(), bit in 0u8..8,
        ) {
            let mut img = encode(2, 4, 17, &payload);
            let i = at.index(img.len());
            img[i] ^= 1 << bit;
            prop_assert!(decode(&img).is_err(), "flip of bit {} of byte {} not seen", bit, i);
        }

        #[test]
        fn any_truncation_is_detected(
            payload in proptest::collection::vec(any::<u8>(), 1..256),
            cut in any::<prop::sample::Index>(),
        ) {
            let img = encode(0, 1, 3, &payload);
            let keep = cut.index(img.len());
            prop_assert!(decode(&img[..keep]).is_err());
        }
    }
}
