//! Resilient communicators (`pertinax run --resilient`): the settings the
//! launcher passes to every process.
//!
//! The layer itself (`pertinax-resilient`) runs inside the processes and
//! reads its configuration from their environment
//! ([`pertinax_wire::env::RESILIENT`] and the `RESILIENT_*` variables after
//! it). The settings and their format are defined once, in
//! [`pertinax_wire::resilient`]; the types here are those. The launcher
//! checks the settings, so that a typo is a usage error rather than a job
//! that starts and fails in every rank, and sets the variables; the
//! runtime parses them again with the same parser. It also changes how the job's
//! exit status is computed: ranks that die do not fail the job, since the
//! survivors continue by design (see
//! [`JobReport::exit_code`](crate::JobReport::exit_code)).
//!
//! ```
//! use pertinax_launch::{Resilient, ResilientMode, ResilientPolicy};
//!
//! let p: ResilientPolicy = "bcast=ignore, recv=stop".parse().unwrap();
//! assert_eq!(p.to_string(), "bcast=ignore,recv=stop");
//! assert!("alltoall=stop".parse::<ResilientPolicy>().is_err());
//!
//! let mut r = Resilient::new(ResilientMode::Hier);
//! r.k = Some(4);
//! r.policy = Some(p);
//! ```

use pertinax_wire::resilient::Mode;

use crate::error::LaunchError;

/// Every variable of the layer: the launcher clears them all from what a
/// process inherits, then sets those the job asks for.
pub(crate) use pertinax_wire::resilient::VARS;

/// The shape of the layer (`--resilient[=MODE]`): flat (the default) or
/// hierarchical.
pub use pertinax_wire::resilient::Mode as ResilientMode;

/// The failure check of resilient collectives (`--resilient-check`):
/// `log` or `agree`.
pub use pertinax_wire::resilient::Check as ResilientCheck;

/// A checked `--resilient-policy`: comma-separated `KIND=ACTION` items,
/// passed on without blanks in the order given.
pub use pertinax_wire::resilient::Policy as ResilientPolicy;

/// A `--resilient-policy` that cannot be understood.
pub use pertinax_wire::resilient::PolicyError as PolicyParseError;

/// Resilient communicators for the job (`--resilient` and its options);
/// a setting left `None` is not passed, and the runtime's default applies.
pub use pertinax_wire::resilient::Settings as Resilient;

/// Checks what the types allow but the layer does not: `k` below 2, a
/// threshold of 0, and the settings of the hierarchy in the flat mode
/// (where they would be silently ignored).
pub(crate) fn validate(r: &Resilient) -> Result<(), LaunchError> {
    if let Some(k) = r.k {
        if k < 2 {
            return Err(LaunchError::ResilientK { k });
        }
    }
    if r.threshold == Some(0) {
        return Err(LaunchError::ResilientThreshold);
    }
    if r.mode == Mode::Flat {
        let option = if r.k.is_some() {
            Some("--resilient-k")
        } else if r.threshold.is_some() {
            Some("--resilient-threshold")
        } else {
            None
        };
        if let Some(option) = option {
            return Err(LaunchError::ResilientFlat { option });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impossible_settings_are_refused() {
        let mut r = Resilient::new(ResilientMode::Hier);
        r.k = Some(1);
        assert!(matches!(
            validate(&r),
            Err(LaunchError::ResilientK { k: 1 })
        ));
        r.k = Some(2);
        assert!(validate(&r).is_ok());
        r.threshold = Some(0);
        assert!(matches!(validate(&r), Err(LaunchError::ResilientThreshold)));
        r.threshold = Some(1);
        assert!(validate(&r).is_ok());
        r.mode = ResilientMode::Flat;
        assert!(matches!(
            validate(&r),
            Err(LaunchError::ResilientFlat {
                option: "--resilient-k"
            })
        ));
        r.k = None;
        assert!(matches!(
            validate(&r),
            Err(LaunchError::ResilientFlat {
                option: "--resilient-threshold"
            })
        ));
        r.threshold = None;
        r.check = Some(ResilientCheck::Log);
        assert!(validate(&r).is_ok());
    }
}
