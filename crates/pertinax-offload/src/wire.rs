//! The master/booster protocol, in one place: tags, the fixed-size
//! headers (so that a receive for them can be posted before anything
//! arrives) and the bodies that follow them.
//!
//! Master to booster, on the allocation's intercommunicator: a
//! [`TaskHeader`] on [`TAG_TASK`] (kind task or shutdown), then for a task
//! a [`TaskBody`] on [`TAG_TASK_BODY`]. Booster to master: a [`DoneHeader`]
//! on [`done_tag`], then the output (or the error message) on the next
//! tag. Messages from one sender never overtake each other,
//! so a body always follows its header.

use serde::{Deserialize, Serialize};

/// Master → booster: a task or shutdown header.
pub(crate) const TAG_TASK: i32 = 4101;
/// Master → booster: the task's name and input.
pub(crate) const TAG_TASK_BODY: i32 = 4102;
/// Booster → master: a completion header (the message a waiting master
/// has one any-source receive posted for, from any booster of the group)
/// is sent with tag
/// `done_tag(generation)` and its body with the next tag. The generation
/// (a count of the groups this allocation used) travels in the task
/// header, so that a completion sent by a group that was already given up
/// can never match a receive meant for its replacement, whatever a
/// backend does with messages in flight on a freed communicator (on the
/// MPI backend, such a stale completion was seen to take the place of a
/// fresh one).
pub(crate) fn done_tag(generation: u64) -> i32 {
    TAG_DONE_BASE + 2 * (generation % 8000) as i32
}
const TAG_DONE_BASE: i32 = 8000;
/// Never sent: the boosters' watch over their siblings (an any-source
/// receive on a private duplicate of the boosters' world, which fails as
/// soon as a sibling fails).
pub(crate) const TAG_WATCH: i32 = 4105;

/// Header kinds.
pub(crate) const KIND_TASK: u64 = 1;
pub(crate) const KIND_SHUTDOWN: u64 = 2;

/// Completion statuses.
pub(crate) const DONE_OK: u64 = 0;
pub(crate) const DONE_TASK_ERROR: u64 = 1;
pub(crate) const DONE_UNKNOWN: u64 = 2;
/// The task's types are not the registered ones; the body is the
/// registered `(input, output)` type names, encoded.
pub(crate) const DONE_TYPE_MISMATCH: u64 = 3;

/// `[kind, task id, attempt, generation]`.
pub(crate) type TaskHeader = [u64; 4];
/// `[task id, attempt, status, reserved]`.
pub(crate) type DoneHeader = [u64; 4];

/// The body of a task message.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct TaskBody {
    pub name: String,
    pub input: Vec<u8>,
    /// The booster index the master offloaded onto.
    pub onto: u32,
    /// The input's and the output's type (`std::any::type_name`), checked
    /// against the registration before the task runs.
    pub input_type: String,
    pub output_type: String,
    /// The master is itself a booster (a nested allocation): the booster's
    /// per-group fault points (`task.G.B`) are for the top level only.
    pub nested: bool,
}

/// The command-line marker a booster is started with (after the
/// program's own arguments), so that a spawned process knows it is a
/// booster and not some other spawned program.
pub const BOOSTER_MARKER: &str = "--pertinax-offload-booster";

pub(crate) fn encode<T: Serialize + ?Sized>(v: &T) -> Result<Vec<u8>, crate::Error> {
    postcard::to_allocvec(v).map_err(|e| crate::Error::Serialization(e.to_string()))
}

pub(crate) fn decode<T: serde::de::DeserializeOwned>(b: &[u8]) -> Result<T, crate::Error> {
    postcard::from_bytes(b).map_err(|e| crate::Error::Serialization(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_tags_are_distinct_valid_and_clear_of_the_fixed_tags() {
        let mut seen = std::collections::HashSet::new();
        for g in 0..8000u64 {
            let t = done_tag(g);
            assert!(t > TAG_WATCH && t < 32767, "tag {t} of generation {g}");
            assert!(seen.insert(t) && seen.insert(t + 1), "generation {g}");
        }
        // Wraps around after 8000 generations (the previous user of a tag
        // is thousands of recoveries old).
        assert_eq!(done_tag(8000), done_tag(0));
    }

    #[test]
    fn bodies_round_trip_and_bad_bytes_are_a_typed_error() {
        let b = TaskBody {
            name: "square".into(),
            input: encode(&7u64).expect("encode"),
            onto: 3,
            input_type: "u64".into(),
            output_type: "u64".into(),
            nested: false,
        };
        let back: TaskBody = decode(&encode(&b).expect("encode")).expect("decode");
        assert_eq!((back.name.as_str(), back.onto), ("square", 3));
        assert_eq!((back.input_type.as_str(), back.nested), ("u64", false));
        assert_eq!(decode::<u64>(&back.input).expect("input"), 7);
        assert!(matches!(
            decode::<TaskBody>(&[1, 2]),
            Err(crate::Error::Serialization(_))
        ));
    }
}
