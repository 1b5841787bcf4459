//! What a resilient operation does when a rank it depends on has failed.

use std::fmt;

use pertinax_wire::resilient as wire;

use crate::Error;

/// The reaction to a failed rank that an operation depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnFailure {
    /// The call returns `Ok` and its [`Outcome`](crate::Outcome) names the
    /// rank in `skipped`; buffers it would have filled are left untouched.
    Ignore,
    /// The call returns [`Error::Failed`].
    Stop,
}

/// The operation kinds a policy distinguishes (`Kind::ALL`, and
/// `Kind::name` for the name in policy specifications); defined with the
/// policy grammar in [`pertinax_wire::resilient`].
pub use pertinax_wire::resilient::Kind;

/// Per operation kind, what happens when the rank that matters (a root, a
/// peer) has failed.
///
/// The defaults follow Legio's reasoning: a failed rank that was *spreading*
/// data (the root of a broadcast or scatter, the source of a receive) leaves
/// the others without data they need, so those stop with an error; a failed
/// rank that was *collecting* data (the root of a reduce or gather, the
/// destination of a send) takes nothing from the others that they still
/// need, so those are ignored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Failed root of a broadcast (default: stop).
    pub bcast: OnFailure,
    /// Failed root of a reduction (default: ignore).
    pub reduce: OnFailure,
    /// Failed root of a gather (default: ignore).
    pub gather: OnFailure,
    /// Failed root of a scatter (default: stop).
    pub scatter: OnFailure,
    /// Failed destination of a send (default: ignore).
    pub send: OnFailure,
    /// Failed source of a receive (default: stop).
    pub recv: OnFailure,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            bcast: OnFailure::Stop,
            reduce: OnFailure::Ignore,
            gather: OnFailure::Ignore,
            scatter: OnFailure::Stop,
            send: OnFailure::Ignore,
            recv: OnFailure::Stop,
        }
    }
}

impl Policy {
    /// The reaction for `kind`.
    pub fn get(&self, kind: Kind) -> OnFailure {
        match kind {
            Kind::Bcast => self.bcast,
            Kind::Reduce => self.reduce,
            Kind::Gather => self.gather,
            Kind::Scatter => self.scatter,
            Kind::Send => self.send,
            Kind::Recv => self.recv,
        }
    }

    /// The answer for a failed `rank` that an operation of `kind` depends
    /// on: skipped (ignore) or [`crate::Error::Failed`] (stop).
    pub(crate) fn answer(&self, kind: Kind, rank: usize) -> Result<crate::Outcome, crate::Error> {
        let rank = pertinax::Rank(rank as i32);
        match self.get(kind) {
            OnFailure::Ignore => Ok(crate::Outcome {
                skipped: Some(rank),
                missing: Vec::new(),
            }),
            OnFailure::Stop => Err(crate::Error::Failed {
                kind,
                rank,
                decided: crate::Decided::for_kind(kind),
            }),
        }
    }

    /// Sets the reaction for `kind`.
    pub fn set(&mut self, kind: Kind, on: OnFailure) -> &mut Self {
        match kind {
            Kind::Bcast => self.bcast = on,
            Kind::Reduce => self.reduce = on,
            Kind::Gather => self.gather = on,
            Kind::Scatter => self.scatter = on,
            Kind::Send => self.send = on,
            Kind::Recv => self.recv = on,
        }
        self
    }

    /// The defaults changed by `spec`, a comma-separated list of
    /// `KIND=ACTION` (`bcast`, `reduce`, `gather`, `scatter`, `send`,
    /// `recv`; `ignore`, `stop`), as `pertinax run --resilient-policy`
    /// takes it.
    ///
    /// # Errors
    /// [`Error::Policy`] naming the bad item.
    ///
    /// # Example
    /// ```
    /// use pertinax_resilient::{OnFailure, Policy};
    /// let p = Policy::parse("bcast=ignore, recv=ignore")?;
    /// assert_eq!(p.bcast, OnFailure::Ignore);
    /// assert_eq!(p.scatter, OnFailure::Stop);
    /// # Ok::<(), pertinax_resilient::Error>(())
    /// ```
    pub fn parse(spec: &str) -> Result<Policy, Error> {
        let spec: wire::Policy = spec
            .parse()
            .map_err(|e| Error::Policy(wire::SettingsError::Policy(e).to_string()))?;
        Ok(Policy::from_spec(&spec))
    }

    /// The defaults changed by the items of `spec`, in order (the last
    /// item of a kind wins).
    pub(crate) fn from_spec(spec: &wire::Policy) -> Policy {
        let mut p = Policy::default();
        for &(kind, action) in spec.items() {
            p.set(kind, action.into());
        }
        p
    }
}

impl From<wire::Action> for OnFailure {
    fn from(a: wire::Action) -> OnFailure {
        match a {
            wire::Action::Ignore => OnFailure::Ignore,
            wire::Action::Stop => OnFailure::Stop,
        }
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, k) in Kind::ALL.into_iter().enumerate() {
            let a = match self.get(k) {
                OnFailure::Ignore => "ignore",
                OnFailure::Stop => "stop",
            };
            write!(f, "{}{}={a}", if i > 0 { "," } else { "" }, k.name())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_round_trip_and_bad_items_are_named() {
        let p = Policy::parse("reduce=stop,send=stop").unwrap();
        assert_eq!(Policy::parse(&p.to_string()).unwrap(), p);
        assert_eq!(Policy::parse("").unwrap(), Policy::default());
        for bad in ["bcast", "bcast=maybe", "alltoall=stop"] {
            let e = Policy::parse(bad).unwrap_err().to_string();
            assert!(e.contains(bad), "{e}");
        }
    }
}
