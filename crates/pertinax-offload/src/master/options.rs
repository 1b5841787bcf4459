//! How to allocate boosters ([`Options`]) and offload one task
//! ([`Offload`]), and recover domains ([`Domain`]).

/// Allocation options.
#[derive(Debug, Clone)]
pub struct Options {
    pub(super) program: Option<(String, Vec<String>)>,
    pub(super) spares: usize,
    pub(super) max_attempts: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            program: None,
            spares: 0,
            max_attempts: 8,
        }
    }
}

impl Options {
    /// The defaults: the master's own program as booster, no spares, at
    /// most 8 executions of a recoverable task.
    pub fn new() -> Options {
        Options::default()
    }
    /// Run `program` with `args` as boosters instead of the master's own
    /// program and arguments (the marker [`crate::BOOSTER_MARKER`] is
    /// added after `args`).
    pub fn program(mut self, program: &str, args: &[&str]) -> Options {
        self.program = Some((
            program.to_string(),
            args.iter().map(|a| a.to_string()).collect(),
        ));
        self
    }
    /// Spawn `groups` spare groups at allocation, each as large as the
    /// allocation: a recovery takes one instead of spawning (beyond the
    /// paper).
    pub fn spares(mut self, groups: usize) -> Options {
        self.spares = groups;
        self
    }
    /// The retry limit: a recoverable task is started at most `n` times
    /// (`n` >= 1), then fails with
    /// [`Error::RetriesExceeded`](crate::Error::RetriesExceeded).
    pub fn max_attempts(mut self, n: u32) -> Options {
        self.max_attempts = n.max(1);
        self
    }
}

/// A recover domain: tasks offloaded in one domain are cleared together
/// and restarted together. Tasks offloaded without a domain belong to the
/// *implicit* domain, which ends at every
/// [`Boosters::taskwait`](crate::Boosters::taskwait).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Domain(pub(super) u64);

/// How to offload one task: its name, the booster, recovery, domain.
#[derive(Debug, Clone)]
pub struct Offload {
    pub(super) name: String,
    pub(super) onto: usize,
    pub(super) recover: bool,
    pub(super) domain: Option<Domain>,
    pub(super) replica: Option<usize>,
}

impl Offload {
    /// Task `name` onto booster `onto`, without recovery.
    pub fn new(name: &str, onto: usize) -> Offload {
        Offload {
            name: name.to_string(),
            onto,
            recover: false,
            domain: None,
            replica: None,
        }
    }
    /// The `recover` clause: re-execute the task automatically if its
    /// booster group fails before it is cleared.
    pub fn recover(mut self) -> Offload {
        self.recover = true;
        self
    }
    /// Also run the task on booster `other` (beyond the paper, as HPX's
    /// `async_replicate`): the first successful result wins, and the task
    /// fails only if both replicas report an error. For independent tasks
    /// (a replica does not take part in its domain's communication). A
    /// booster failure still replaces the whole group and re-runs both.
    pub fn replicate(mut self, other: usize) -> Offload {
        self.replica = Some(other);
        self
    }
    /// Offload in an explicit recover domain (instead of the implicit one).
    pub fn domain(mut self, d: Domain) -> Offload {
        self.domain = Some(d);
        self
    }
}
