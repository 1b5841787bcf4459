//! The scenarios of the rank programs, one enum per program
//! (`src/bin/X-ranks.rs` parses its enum from its command line and
//! dispatches on it with an exhaustive `match`; the tests name a scenario
//! by its variant, as in `Spec::scenario(n, P2p::Ring, &["20"])`). Each
//! variant's string is its name on the command line and in the outcome
//! lines (`OK ring rank=R`); what a scenario does and its arguments are
//! documented in its rank program.
//!
//! `checkpoint-ranks` and `jacobi-ranks` have no scenarios (one program
//! each, its arguments the problem's shape).

use pertinax_harness::scenario_enum;

scenario_enum! {
    /// The scenarios of `p2p-ranks` (point-to-point messaging,
    /// communicators, failures: `tests/p2p.rs`, `tests/failure.rs`).
    pub enum P2p {
        Abortall => "abortall",
        Replacement => "replacement",
        Pingpong => "pingpong",
        Ring => "ring",
        Fanin => "fanin",
        Order => "order",
        Isolation => "isolation",
        Badinput => "badinput",
        Misc => "misc",
        Peerdeath => "peerdeath",
        Hang => "hang",
        Victim => "victim",
        Rootargs => "rootargs",
        /// Init and finalize, nothing else.
        Hello => "hello",
    }
}

scenario_enum! {
    /// The scenarios of `collective-ranks` (`tests/collective.rs`).
    pub enum Collective {
        All => "all",
        Large => "large",
        Noncomm => "noncomm",
        Fp => "fp",
        Overlap => "overlap",
        Longrun => "longrun",
        Badargs => "badargs",
        Mismatch => "mismatch",
        Skew => "skew",
        Agv => "agv",
        Allreduce => "allreduce",
        Pending => "pending",
    }
}

scenario_enum! {
    /// The scenarios of `contract-ranks`, the backend contract suite
    /// (`tests/contract.rs`).
    pub enum Contract {
        Order => "order",
        Anysource => "anysource",
        Truncation => "truncation",
        Revoke => "revoke",
        Agree => "agree",
        AgreeSmall => "agree_small",
        Shrink => "shrink",
        Ssend => "ssend",
        SsendDead => "ssend_dead",
    }
}

scenario_enum! {
    /// The scenarios of `communicator-ranks` (`tests/communicator.rs`).
    pub enum Communicator {
        Plain => "plain",
        Boxed => "boxed",
        Guarded => "guarded",
        Resilient => "resilient",
    }
}

scenario_enum! {
    /// The scenarios of `intercomm-ranks` (`tests/intercomm.rs`).
    pub enum Intercomm {
        Basic => "basic",
        Fault => "fault",
        Join => "join",
        Repeat => "repeat",
        Revoked => "revoked",
        BadArgs => "bad_args",
        OverlapSame => "overlap_same",
        OverlapPartial => "overlap_partial",
    }
}

scenario_enum! {
    /// The scenarios of `midtransfer-ranks` (`tests/midtransfer.rs`).
    pub enum Midtransfer {
        P2p => "p2p",
        Bcast => "bcast",
        Bsend => "bsend",
    }
}

scenario_enum! {
    /// The scenarios of `offload-ranks` (`tests/offload.rs`).
    pub enum Offload {
        Run => "run",
        Api => "api",
    }
}

scenario_enum! {
    /// The scenarios of `propagate-ranks` (`tests/propagate.rs`; the
    /// benchmark `pertinax-bench propagate` runs `bench` by name).
    pub enum Propagate {
        Resguard => "resguard",
        One => "one",
        Many => "many",
        Blocked => "blocked",
        Panic => "panic",
        Kill => "kill",
        Cycles => "cycles",
        Plain => "plain",
        Leave => "leave",
        Early => "early",
        Killed => "killed",
        Campaign => "campaign",
        AwaitCpu => "await-cpu",
        Nonblocking => "nonblocking",
        Bench => "bench",
    }
}

scenario_enum! {
    /// The scenarios of `requests-ranks` (`tests/requests.rs`).
    pub enum Requests {
        Waitall => "waitall",
        Waitany => "waitany",
        Cancel => "cancel",
        Revoke => "revoke",
        Stopped => "stopped",
        Campaign => "campaign",
    }
}

scenario_enum! {
    /// The scenarios of `resilient-ranks` (`tests/resilient.rs`,
    /// `tests/resilient_hier/`).
    pub enum Resilient {
        Ops => "ops",
        Vops => "vops",
        Nbp2p => "nbp2p",
        Stop => "stop",
        Early => "early",
        Anysrc => "anysrc",
        P2p => "p2p",
        Bench => "bench",
    }
}

scenario_enum! {
    /// The scenarios of `resilient-hier-ranks` (`tests/resilient_hier/`).
    pub enum ResilientHier {
        Outcomes => "outcomes",
    }
}

scenario_enum! {
    /// The scenarios of `resilient-nb-ranks` (`tests/resilient_nb.rs`).
    pub enum ResilientNb {
        Rounds => "rounds",
        Rules => "rules",
        Log => "log",
        Stop => "stop",
        Early => "early",
    }
}

scenario_enum! {
    /// The scenarios of `spawn-ranks` (`tests/spawn.rs`).
    pub enum Spawn {
        Cross => "cross",
        BadPath => "bad_path",
        Names => "names",
        AskerDies => "asker_dies",
    }
}

scenario_enum! {
    /// The scenarios of `ulfm-ranks`, the ULFM validation scenarios
    /// (`tests/ulfm.rs`).
    pub enum Ulfm {
        CollKill => "coll_kill",
        CollKillRevoke => "coll_kill_revoke",
        Anysource => "anysource",
        SentBeforeDeath => "sent_before_death",
        IagreeAtOnce => "iagree_at_once",
        Insulation => "insulation",
        Acked => "acked",
        RevokeShrink => "revoke_shrink",
        Suicide => "suicide",
        AgreeKill => "agree_kill",
        RevokePending => "revoke_pending",
        RevokeInter => "revoke_inter",
        SpawnMerge => "spawn_merge",
        Replace => "replace",
        Campaign => "campaign",
        FtTiming => "ft_timing",
        Stuck => "stuck",
        Groups => "groups",
        Mismatch => "mismatch",
        Finalized => "finalized",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pertinax_harness::Scenarios;

    /// Every name parses back to its scenario, and no two scenarios of a
    /// program share a name.
    fn names_are_distinct<S: Scenarios>() {
        let mut names: Vec<&str> = S::ALL.iter().map(|s| s.as_str()).collect();
        for &s in S::ALL {
            assert_eq!(S::from_name(s.as_str()), Ok(s));
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), S::ALL.len(), "{:?}", S::ALL);
    }

    #[test]
    fn every_program_names_its_scenarios_once() {
        names_are_distinct::<P2p>();
        names_are_distinct::<Collective>();
        names_are_distinct::<Contract>();
        names_are_distinct::<Communicator>();
        names_are_distinct::<Intercomm>();
        names_are_distinct::<Midtransfer>();
        names_are_distinct::<Offload>();
        names_are_distinct::<Propagate>();
        names_are_distinct::<Requests>();
        names_are_distinct::<Resilient>();
        names_are_distinct::<ResilientHier>();
        names_are_distinct::<ResilientNb>();
        names_are_distinct::<Spawn>();
        names_are_distinct::<Ulfm>();
    }
}
