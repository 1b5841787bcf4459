//! Resilient communicators (`pertinax run --resilient`): the settings the
//! launcher passes to every process.
//!
//! The layer itself (`pertinax-resilient`) runs inside the processes and
//! reads its configuration from their environment
//! ([`pertinax_wire::env::RESILIENT`] and the `RESILIENT_*` variables after
//! it). The launcher checks the settings, so that a typo is a usage error
//! rather than a job that starts and fails in every rank, and sets the
//! variables; the runtime parses them again. It also changes how the job's
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

use std::fmt;
use std::str::FromStr;

use pertinax_wire::env;

use crate::error::LaunchError;

/// Every variable of the layer: the launcher clears them all from what a
/// process inherits, then sets those the job asks for.
pub(crate) const VARS: [&str; 5] = [
    env::RESILIENT,
    env::RESILIENT_K,
    env::RESILIENT_THRESHOLD,
    env::RESILIENT_POLICY,
    env::RESILIENT_CHECK,
];

/// The operation kinds of a policy, as the specification names them.
const KINDS: [&str; 6] = ["bcast", "reduce", "gather", "scatter", "send", "recv"];

/// The actions of a policy.
const ACTIONS: [&str; 2] = ["ignore", "stop"];

/// The shape of the layer (`--resilient[=MODE]`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ResilientMode {
    /// Every operation involves the whole communicator (the default).
    #[default]
    Flat,
    /// Large communicators are split into local groups of at most `k`
    /// ranks, joined by a communicator of their leaders.
    Hier,
}

impl ResilientMode {
    /// The `PERTINAX_RESILIENT` value: `flat` or `hier`.
    pub fn name(self) -> &'static str {
        match self {
            ResilientMode::Flat => "flat",
            ResilientMode::Hier => "hier",
        }
    }
}

/// The failure check of resilient collectives (`--resilient-check`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResilientCheck {
    /// `log`.
    Log,
    /// `agree`: an agreement after every collective (the Legio baseline).
    Agree,
}

impl ResilientCheck {
    /// The `PERTINAX_RESILIENT_CHECK` value: `log` or `agree`.
    pub fn name(self) -> &'static str {
        match self {
            ResilientCheck::Log => "log",
            ResilientCheck::Agree => "agree",
        }
    }
}

/// A checked `--resilient-policy`: comma-separated `KIND=ACTION` items,
/// `KIND` one of `bcast`, `reduce`, `gather`, `scatter`, `send`, `recv` and
/// `ACTION` `ignore` or `stop`.
///
/// It accepts what the runtime's parser accepts: blanks around items and
/// around `=`, empty items, and a kind named twice (the last item wins).
/// Its [`Display`](fmt::Display) gives the items without blanks, in the
/// order given, which the runtime reads as the original.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResilientPolicy {
    items: Vec<(&'static str, &'static str)>,
}

impl ResilientPolicy {
    /// The items, `(kind, action)`, in the order given.
    pub fn items(&self) -> &[(&'static str, &'static str)] {
        &self.items
    }
}

/// A `--resilient-policy` that cannot be understood.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyParseError {
    /// An item without `=`.
    #[error("'{0}' is not KIND=ACTION (e.g. bcast=ignore,recv=stop)")]
    Item(String),
    /// An unknown operation kind.
    #[error(
        "unknown operation kind '{0}' (expected bcast, reduce, gather, scatter, send or recv)"
    )]
    Kind(String),
    /// An unknown action.
    #[error("unknown action '{action}' for {kind} (expected ignore or stop)")]
    Action {
        /// The kind it was given for.
        kind: String,
        /// The action.
        action: String,
    },
}

impl FromStr for ResilientPolicy {
    type Err = PolicyParseError;
    fn from_str(s: &str) -> Result<ResilientPolicy, PolicyParseError> {
        let mut items = Vec::new();
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (kind, action) = item
                .split_once('=')
                .ok_or_else(|| PolicyParseError::Item(item.to_string()))?;
            let (kind, action) = (kind.trim(), action.trim());
            let known_kind = KINDS
                .into_iter()
                .find(|&k| k == kind)
                .ok_or_else(|| PolicyParseError::Kind(kind.to_string()))?;
            let known_action = ACTIONS.into_iter().find(|&a| a == action).ok_or_else(|| {
                PolicyParseError::Action {
                    kind: kind.to_string(),
                    action: action.to_string(),
                }
            })?;
            items.push((known_kind, known_action));
        }
        Ok(ResilientPolicy { items })
    }
}

impl fmt::Display for ResilientPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (kind, action)) in self.items.iter().enumerate() {
            let sep = if i > 0 { "," } else { "" };
            write!(f, "{sep}{kind}={action}")?;
        }
        Ok(())
    }
}

/// Resilient communicators for the job (`--resilient` and its options);
/// a setting left `None` is not passed, and the runtime's default applies.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Resilient {
    /// Flat or hierarchical.
    pub mode: ResilientMode,
    /// Largest size of the local groups of the hierarchical mode, at least
    /// 2 (`--resilient-k`).
    pub k: Option<usize>,
    /// Communicator size from which the hierarchical mode builds its
    /// hierarchy, at least 1 (`--resilient-threshold`).
    pub threshold: Option<usize>,
    /// What operations do when the rank they depend on has failed.
    pub policy: Option<ResilientPolicy>,
    /// The failure check of collectives.
    pub check: Option<ResilientCheck>,
}

impl Resilient {
    /// Resilient communicators of `mode`, every other setting the runtime's
    /// default.
    pub fn new(mode: ResilientMode) -> Resilient {
        Resilient {
            mode,
            ..Resilient::default()
        }
    }

    /// Checks what the types allow but the layer does not: `k` below 2, a
    /// threshold of 0, and the settings of the hierarchy in the flat mode
    /// (where they would be silently ignored).
    pub(crate) fn validate(&self) -> Result<(), LaunchError> {
        if let Some(k) = self.k {
            if k < 2 {
                return Err(LaunchError::ResilientK { k });
            }
        }
        if self.threshold == Some(0) {
            return Err(LaunchError::ResilientThreshold);
        }
        if self.mode == ResilientMode::Flat {
            let option = if self.k.is_some() {
                Some("--resilient-k")
            } else if self.threshold.is_some() {
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

    /// The variables every process gets.
    pub(crate) fn env(&self) -> Vec<(&'static str, String)> {
        let mut vars = vec![(env::RESILIENT, self.mode.name().to_string())];
        if let Some(k) = self.k {
            vars.push((env::RESILIENT_K, k.to_string()));
        }
        if let Some(s) = self.threshold {
            vars.push((env::RESILIENT_THRESHOLD, s.to_string()));
        }
        if let Some(p) = &self.policy {
            vars.push((env::RESILIENT_POLICY, p.to_string()));
        }
        if let Some(c) = self.check {
            vars.push((env::RESILIENT_CHECK, c.name().to_string()));
        }
        vars
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(s: &str) -> Result<ResilientPolicy, PolicyParseError> {
        s.parse()
    }

    #[test]
    fn good_policies_are_passed_on_without_blanks() {
        let p = policy("bcast=ignore,reduce=stop").unwrap();
        assert_eq!(p.items(), [("bcast", "ignore"), ("reduce", "stop")]);
        assert_eq!(p.to_string(), "bcast=ignore,reduce=stop");
        let p = policy(" gather = stop , ,scatter=ignore,send=stop,recv=ignore,").unwrap();
        assert_eq!(
            p.to_string(),
            "gather=stop,scatter=ignore,send=stop,recv=ignore"
        );
        // The runtime's parser takes the last item of a kind: so is it
        // passed on.
        assert_eq!(
            policy("send=stop,send=ignore").unwrap().to_string(),
            "send=stop,send=ignore"
        );
        assert_eq!(policy("").unwrap().items(), []);
        let every: Vec<String> = KINDS.iter().map(|k| format!("{k}=stop")).collect();
        assert_eq!(policy(&every.join(",")).unwrap().items().len(), 6);
    }

    #[test]
    fn bad_policies_name_what_is_wrong() {
        let err = |s: &str| policy(s).unwrap_err();
        assert_eq!(err("bcast"), PolicyParseError::Item("bcast".into()));
        assert_eq!(
            err("bcast=stop,alltoall=stop"),
            PolicyParseError::Kind("alltoall".into())
        );
        assert_eq!(
            err("recv=maybe"),
            PolicyParseError::Action {
                kind: "recv".into(),
                action: "maybe".into()
            }
        );
        assert_eq!(err("BCAST=stop"), PolicyParseError::Kind("BCAST".into()));
        assert_eq!(
            err("=stop"),
            PolicyParseError::Kind(String::new()),
            "an empty kind"
        );
        assert!(matches!(
            err("bcast=stop;recv=stop"),
            PolicyParseError::Action { .. }
        ));
        assert_eq!(
            err("send=ignore=stop").to_string(),
            "unknown action 'ignore=stop' for send (expected ignore or stop)"
        );
        assert_eq!(
            err("all=stop").to_string(),
            "unknown operation kind 'all' (expected bcast, reduce, gather, scatter, send or recv)"
        );
        assert_eq!(
            err("stop").to_string(),
            "'stop' is not KIND=ACTION (e.g. bcast=ignore,recv=stop)"
        );
    }

    #[test]
    fn only_the_settings_given_are_passed_on() {
        let r = Resilient::new(ResilientMode::Flat);
        assert_eq!(r.env(), [(env::RESILIENT, "flat".to_string())]);
        let r = Resilient {
            mode: ResilientMode::Hier,
            k: Some(4),
            threshold: Some(16),
            policy: Some(policy("bcast=ignore").unwrap()),
            check: Some(ResilientCheck::Agree),
        };
        assert!(r.validate().is_ok());
        let vars = r.env();
        let got: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
        assert_eq!(
            got,
            [
                ("PERTINAX_RESILIENT", "hier"),
                ("PERTINAX_RESILIENT_K", "4"),
                ("PERTINAX_RESILIENT_THRESHOLD", "16"),
                ("PERTINAX_RESILIENT_POLICY", "bcast=ignore"),
                ("PERTINAX_RESILIENT_CHECK", "agree"),
            ]
        );
        assert!(got.iter().all(|(k, _)| VARS.contains(k)));
    }

    #[test]
    fn impossible_settings_are_refused() {
        let mut r = Resilient::new(ResilientMode::Hier);
        r.k = Some(1);
        assert!(matches!(
            r.validate(),
            Err(LaunchError::ResilientK { k: 1 })
        ));
        r.k = Some(2);
        assert!(r.validate().is_ok());
        r.threshold = Some(0);
        assert!(matches!(r.validate(), Err(LaunchError::ResilientThreshold)));
        r.threshold = Some(1);
        assert!(r.validate().is_ok());
        r.mode = ResilientMode::Flat;
        assert!(matches!(
            r.validate(),
            Err(LaunchError::ResilientFlat {
                option: "--resilient-k"
            })
        ));
        r.k = None;
        assert!(matches!(
            r.validate(),
            Err(LaunchError::ResilientFlat {
                option: "--resilient-threshold"
            })
        ));
        r.threshold = None;
        r.check = Some(ResilientCheck::Log);
        assert!(r.validate().is_ok());
    }
}
