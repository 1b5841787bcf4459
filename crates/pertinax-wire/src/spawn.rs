//! The status of a spawn request, as the launcher writes it into the
//! requester's publication (`Publication::status` in the shared segment)
//! and every member of the spawning communicator reads it.
//!
//! ```
//! use pertinax_wire::spawn::SpawnStatus;
//!
//! assert_eq!(SpawnStatus::from_code(1), SpawnStatus::NoRoom);
//! assert_eq!(SpawnStatus::Other(9).code(), 9);
//! ```

/// Code of [`SpawnStatus::Ok`].
pub const OK: u32 = 0;
/// Code of [`SpawnStatus::NoRoom`].
pub const NO_ROOM: u32 = 1;
/// Code of [`SpawnStatus::Refused`].
pub const REFUSED: u32 = 2;

/// What the launcher made of a spawn request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SpawnStatus {
    /// The processes were started (or assigned).
    Ok,
    /// Not enough slots or spares left for the processes.
    NoRoom,
    /// The request was refused (count 0 or above `PUBLISH_MAX`, a program
    /// that cannot be run, the job is ending).
    Refused,
    /// A code this version does not know (a newer launcher's).
    Other(u32),
}

impl SpawnStatus {
    /// The code in the publication.
    pub fn code(self) -> u32 {
        match self {
            SpawnStatus::Ok => OK,
            SpawnStatus::NoRoom => NO_ROOM,
            SpawnStatus::Refused => REFUSED,
            SpawnStatus::Other(c) => c,
        }
    }

    /// The status of a code read from a publication.
    pub fn from_code(code: u32) -> SpawnStatus {
        match code {
            OK => SpawnStatus::Ok,
            NO_ROOM => SpawnStatus::NoRoom,
            REFUSED => SpawnStatus::Refused,
            c => SpawnStatus::Other(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_codes_are_fixed() {
        // Launchers and runtimes of one release must agree on these.
        assert_eq!(
            [SpawnStatus::Ok, SpawnStatus::NoRoom, SpawnStatus::Refused].map(SpawnStatus::code),
            [0, 1, 2]
        );
    }

    proptest! {
        #[test]
        fn codes_round_trip(code in any::<u32>()) {
            let s = SpawnStatus::from_code(code);
            prop_assert_eq!(s.code(), code);
            prop_assert_eq!(SpawnStatus::from_code(s.code()), s);
            prop_assert_eq!(matches!(s, SpawnStatus::Other(_)), code > 2);
        }
    }
}
