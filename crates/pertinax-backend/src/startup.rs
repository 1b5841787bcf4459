//! What a backend's start-up gives the runtime: the backend and this
//! process's place in the job ([`Started`]), and for a process started
//! later what it was started for ([`Assignment`]).

/// What a new process is told when it is assigned (the payload of the
/// launcher's `Assign`).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum Assignment {
    /// Started by `Comm::spawn`: the parents' intercommunicator.
    Spawned {
        ctx: u32,
        parents: Vec<u32>,
        entries: Vec<u16>,
    },
    /// Started by `Comm::replace_failed_with`: the restored
    /// communicator, whose `holes` (ranks) the new processes fill in
    /// order, and the values the members contributed.
    Replace {
        ctx: u32,
        peers: Vec<u32>,
        entries: Vec<u16>,
        holes: Vec<u32>,
        values: Vec<Option<u64>>,
    },
}

/// What a backend's start-up gives the runtime: the backend `B` and this
/// process's place in the job.
#[derive(Debug)]
pub struct Started<B> {
    /// The backend, ready for the first communicator.
    pub backend: B,
    /// This process's rank in the job's world, and the world's size.
    pub rank: usize,
    /// The size of the job's world.
    pub size: usize,
    /// The job's id.
    pub job_id: String,
    /// This process's id.
    pub me: u32,
    /// For a process started later (spare, spawned): the process ids of
    /// its request, its index among them, and its assignment.
    pub assigned: Option<(Vec<u32>, usize, Assignment)>,
    /// What bounds this process's start, if the backend bounds it (the MPI
    /// backend, for a spawned process: a watchdog that ends the process
    /// when Open MPI never completes its start): the runtime holds it
    /// until the process has joined its communicators, then drops it.
    pub bound: Option<StartBound>,
}

/// A bound on a process's start ([`Started::bound`]): dropping it ends the
/// bound.
pub struct StartBound(pub Box<dyn std::any::Any>);

impl std::fmt::Debug for StartBound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StartBound")
    }
}

impl<B> Started<B> {
    /// The same start with the backend wrapped by `f` (the API's enum of
    /// the backends compiled in).
    pub fn map<C>(self, f: impl FnOnce(B) -> C) -> Started<C> {
        Started {
            backend: f(self.backend),
            rank: self.rank,
            size: self.size,
            job_id: self.job_id,
            me: self.me,
            assigned: self.assigned,
            bound: self.bound,
        }
    }
}
