//! The flavours of resilient communicator: flat (`Resilient`, Legio's
//! transparent shrinking), its scoped non-blocking collectives, and the
//! hierarchical one (`Hierarchical`, Legio section 5).

pub(crate) mod flat;
pub(crate) mod hier;
pub(crate) mod nonblocking;
