//! The settings of resilient communicators, as they travel in the
//! environment ([`crate::env::RESILIENT`] and the `RESILIENT_*` variables
//! after it): the launcher writes them with [`Settings::to_env`]
//! (`pertinax run --resilient...`), the `pertinax-resilient` layer reads
//! them with [`Settings::from_env`], whoever set them.
//!
//! - `PERTINAX_RESILIENT`: `flat` (also `1`, `on`) or `hier`; unset, empty
//!   or `off`: the program is not resilient, and the others are not read.
//! - `PERTINAX_RESILIENT_K`, `PERTINAX_RESILIENT_THRESHOLD`: whole numbers
//!   of at least 2 and 1, read in the `hier` mode only.
//! - `PERTINAX_RESILIENT_POLICY`: a [`Policy`], comma-separated
//!   `KIND=ACTION` items.
//! - `PERTINAX_RESILIENT_CHECK`: a [`Check`], `log` or `agree`.
//!
//! Blanks around values are ignored; a variable that is unset or blank
//! leaves the layer's default.
//!
//! ```
//! use pertinax_wire::resilient::{Check, Mode, Policy, Settings};
//!
//! let mut s = Settings::new(Mode::Hier);
//! s.k = Some(4);
//! s.policy = Some("bcast=ignore, recv=stop".parse().unwrap());
//! s.check = Some(Check::Log);
//! let vars = s.to_env();
//! let get = |k: &str| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone());
//! assert_eq!(Settings::from_vars(get), Ok(Some(s)));
//! assert!("alltoall=stop".parse::<Policy>().is_err());
//! ```

use std::fmt;
use std::str::FromStr;

use crate::env;

/// Every variable of the settings (a launcher clears them all from what a
/// process inherits, then sets those the job asks for).
pub const VARS: [&str; 5] = [
    env::RESILIENT,
    env::RESILIENT_K,
    env::RESILIENT_THRESHOLD,
    env::RESILIENT_POLICY,
    env::RESILIENT_CHECK,
];

/// The shape of the layer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Every operation involves the whole communicator (the default).
    #[default]
    Flat,
    /// Large communicators are split into local groups of at most `k`
    /// ranks, joined by a communicator of their leaders.
    Hier,
}

impl Mode {
    /// The `PERTINAX_RESILIENT` value: `flat` or `hier`.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Flat => "flat",
            Mode::Hier => "hier",
        }
    }
}

/// The failure check of resilient collectives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Check {
    /// `log`: survivors log what laggards need and replay it.
    Log,
    /// `agree`: an agreement after every collective (the Legio baseline).
    Agree,
}

impl Check {
    /// The `PERTINAX_RESILIENT_CHECK` value: `log` or `agree`.
    pub fn name(self) -> &'static str {
        match self {
            Check::Log => "log",
            Check::Agree => "agree",
        }
    }
}

/// The operation kinds a policy distinguishes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// The root of a broadcast.
    Bcast,
    /// The root of a reduction.
    Reduce,
    /// The root of a gather.
    Gather,
    /// The root of a scatter.
    Scatter,
    /// The destination of a send.
    Send,
    /// The source of a receive.
    Recv,
}

impl Kind {
    /// Every kind, in the order of the names in messages.
    pub const ALL: [Kind; 6] = [
        Kind::Bcast,
        Kind::Reduce,
        Kind::Gather,
        Kind::Scatter,
        Kind::Send,
        Kind::Recv,
    ];

    /// The kind's name in policy specifications.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Bcast => "bcast",
            Kind::Reduce => "reduce",
            Kind::Gather => "gather",
            Kind::Scatter => "scatter",
            Kind::Send => "send",
            Kind::Recv => "recv",
        }
    }
}

/// What an operation does when the rank it depends on has failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// Go on without the rank.
    Ignore,
    /// Return an error.
    Stop,
}

impl Action {
    /// Both actions.
    pub const ALL: [Action; 2] = [Action::Ignore, Action::Stop];

    /// The action's name in policy specifications.
    pub fn name(self) -> &'static str {
        match self {
            Action::Ignore => "ignore",
            Action::Stop => "stop",
        }
    }
}

/// A policy specification: comma-separated `KIND=ACTION` items, `KIND` one
/// of `bcast`, `reduce`, `gather`, `scatter`, `send`, `recv` and `ACTION`
/// `ignore` or `stop`; kinds not named keep the layer's default.
///
/// Blanks around items and around `=` and empty items are accepted, and a
/// kind may be named twice (the last item wins). Its
/// [`Display`](fmt::Display) gives the items without blanks, in the order
/// given.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Policy {
    items: Vec<(Kind, Action)>,
}

impl Policy {
    /// A policy of these items.
    pub fn new(items: Vec<(Kind, Action)>) -> Policy {
        Policy { items }
    }

    /// The items, in the order given.
    pub fn items(&self) -> &[(Kind, Action)] {
        &self.items
    }
}

/// A policy that cannot be understood.
///
/// Its `Display` names what is wrong; [`PolicyError::item`] gives the
/// whole item, for messages that quote it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// An item without `=`.
    #[error("'{item}' is not KIND=ACTION (e.g. bcast=ignore,recv=stop)")]
    Item {
        /// The item.
        item: String,
    },
    /// An unknown operation kind.
    #[error(
        "unknown operation kind '{kind}' (expected bcast, reduce, gather, scatter, send or recv)"
    )]
    Kind {
        /// The item.
        item: String,
        /// The kind.
        kind: String,
    },
    /// An unknown action.
    #[error("unknown action '{action}' for {kind} (expected ignore or stop)")]
    Action {
        /// The item.
        item: String,
        /// The kind it was given for.
        kind: String,
        /// The action.
        action: String,
    },
}

impl PolicyError {
    /// The item that is wrong (without the blanks around it).
    pub fn item(&self) -> &str {
        match self {
            PolicyError::Item { item }
            | PolicyError::Kind { item, .. }
            | PolicyError::Action { item, .. } => item,
        }
    }
}

impl FromStr for Policy {
    type Err = PolicyError;
    fn from_str(s: &str) -> Result<Policy, PolicyError> {
        let mut items = Vec::new();
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (kind, action) = item.split_once('=').ok_or_else(|| PolicyError::Item {
                item: item.to_string(),
            })?;
            let (kind, action) = (kind.trim(), action.trim());
            let known_kind = Kind::ALL
                .into_iter()
                .find(|k| k.name() == kind)
                .ok_or_else(|| PolicyError::Kind {
                    item: item.to_string(),
                    kind: kind.to_string(),
                })?;
            let known_action = Action::ALL
                .into_iter()
                .find(|a| a.name() == action)
                .ok_or_else(|| PolicyError::Action {
                    item: item.to_string(),
                    kind: kind.to_string(),
                    action: action.to_string(),
                })?;
            items.push((known_kind, known_action));
        }
        Ok(Policy { items })
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (kind, action)) in self.items.iter().enumerate() {
            let sep = if i > 0 { "," } else { "" };
            write!(f, "{sep}{}={}", kind.name(), action.name())?;
        }
        Ok(())
    }
}

/// The settings of resilient communicators; a setting left `None` is not
/// passed, and the layer's default applies.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    /// Flat or hierarchical.
    pub mode: Mode,
    /// Largest size of the local groups of the hierarchical mode, at least
    /// 2 (`--resilient-k`; read in the hierarchical mode only).
    pub k: Option<usize>,
    /// Communicator size from which the hierarchical mode builds its
    /// hierarchy, at least 1 (`--resilient-threshold`; read in the
    /// hierarchical mode only).
    pub threshold: Option<usize>,
    /// What operations do when the rank they depend on has failed.
    pub policy: Option<Policy>,
    /// The failure check of collectives.
    pub check: Option<Check>,
}

/// Settings in the environment that cannot be understood. The messages
/// name the variable and its value (or, for a policy, the bad item).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SettingsError {
    /// `PERTINAX_RESILIENT` is none of `flat`, `hier`, `off`.
    #[error("PERTINAX_RESILIENT={0}: expected flat, hier or off")]
    Mode(String),
    /// A number below its least value, or not a number.
    #[error("{var}={value}: expected a whole number of at least {min}")]
    Number {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
        /// The least value.
        min: usize,
    },
    /// A bad `PERTINAX_RESILIENT_POLICY`.
    #[error("'{}': expected KIND=ACTION with KIND one of bcast, reduce, gather, scatter, send, recv and ACTION ignore or stop", .0.item())]
    Policy(PolicyError),
    /// `PERTINAX_RESILIENT_CHECK` is neither `log` nor `agree`.
    #[error("PERTINAX_RESILIENT_CHECK={0}: expected log or agree")]
    Check(String),
}

impl Settings {
    /// Resilient communicators of `mode`, every other setting the layer's
    /// default.
    pub fn new(mode: Mode) -> Settings {
        Settings {
            mode,
            ..Settings::default()
        }
    }

    /// The variables of these settings, each with its value (those left
    /// `None` are absent).
    pub fn to_env(&self) -> Vec<(&'static str, String)> {
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

    /// The settings in this process's environment, or `None` when it does
    /// not ask for resilient communicators.
    ///
    /// # Errors
    /// [`SettingsError`] for a value it does not understand.
    pub fn from_env() -> Result<Option<Settings>, SettingsError> {
        Settings::from_vars(|k| std::env::var(k).ok())
    }

    /// [`Settings::from_env`] with the variables that `get` gives.
    ///
    /// # Errors
    /// [`SettingsError`] for a value it does not understand.
    pub fn from_vars(
        get: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Settings>, SettingsError> {
        let var = |k: &str| get(k).unwrap_or_default();
        let num = |k: &'static str, min: usize| -> Result<Option<usize>, SettingsError> {
            match var(k).trim() {
                "" => Ok(None),
                v => match v.parse::<usize>() {
                    Ok(n) if n >= min => Ok(Some(n)),
                    _ => Err(SettingsError::Number {
                        var: k,
                        value: v.to_string(),
                        min,
                    }),
                },
            }
        };
        let mut s = match var(env::RESILIENT).trim() {
            "" | "off" => return Ok(None),
            "flat" | "1" | "on" => Settings::new(Mode::Flat),
            "hier" => Settings {
                k: num(env::RESILIENT_K, 2)?,
                threshold: num(env::RESILIENT_THRESHOLD, 1)?,
                ..Settings::new(Mode::Hier)
            },
            other => return Err(SettingsError::Mode(other.to_string())),
        };
        s.policy = get(env::RESILIENT_POLICY)
            .map(|p| p.parse().map_err(SettingsError::Policy))
            .transpose()?;
        s.check = match var(env::RESILIENT_CHECK).trim() {
            "" => None,
            "agree" => Some(Check::Agree),
            "log" => Some(Check::Log),
            other => return Err(SettingsError::Check(other.to_string())),
        };
        Ok(Some(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn policy(s: &str) -> Result<Policy, PolicyError> {
        s.parse()
    }

    fn from(vars: &[(&str, &str)]) -> Result<Option<Settings>, SettingsError> {
        Settings::from_vars(|k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn good_policies_are_written_without_blanks() {
        let p = policy("bcast=ignore,reduce=stop").unwrap();
        assert_eq!(
            p.items(),
            [(Kind::Bcast, Action::Ignore), (Kind::Reduce, Action::Stop)]
        );
        assert_eq!(p.to_string(), "bcast=ignore,reduce=stop");
        let p = policy(" gather = stop , ,scatter=ignore,send=stop,recv=ignore,").unwrap();
        assert_eq!(
            p.to_string(),
            "gather=stop,scatter=ignore,send=stop,recv=ignore"
        );
        // A kind named twice: both items are kept, the reader applies the
        // last.
        assert_eq!(
            policy("send=stop,send=ignore").unwrap().to_string(),
            "send=stop,send=ignore"
        );
        assert_eq!(policy("").unwrap().items(), []);
    }

    #[test]
    fn bad_policies_name_what_is_wrong() {
        let err = |s: &str| policy(s).unwrap_err();
        assert_eq!(
            err("bcast"),
            PolicyError::Item {
                item: "bcast".into()
            }
        );
        assert_eq!(
            err("bcast=stop, alltoall = stop"),
            PolicyError::Kind {
                item: "alltoall = stop".into(),
                kind: "alltoall".into()
            }
        );
        assert_eq!(err("recv=maybe").item(), "recv=maybe");
        assert!(matches!(err("BCAST=stop"), PolicyError::Kind { .. }));
        assert!(matches!(err("=stop"), PolicyError::Kind { kind, .. } if kind.is_empty()));
        assert!(matches!(
            err("bcast=stop;recv=stop"),
            PolicyError::Action { .. }
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
    fn settings_from_the_environment() {
        assert_eq!(from(&[]), Ok(None));
        assert_eq!(from(&[(env::RESILIENT, " off ")]), Ok(None));
        for flat in ["flat", "1", "on"] {
            assert_eq!(
                from(&[(env::RESILIENT, flat)]),
                Ok(Some(Settings::new(Mode::Flat)))
            );
        }
        // The hierarchy's numbers are read in the hierarchical mode only.
        let flat = from(&[(env::RESILIENT, "flat"), (env::RESILIENT_K, "x")]);
        assert_eq!(flat, Ok(Some(Settings::new(Mode::Flat))));
        let hier = from(&[
            (env::RESILIENT, "hier"),
            (env::RESILIENT_K, " 3 "),
            (env::RESILIENT_THRESHOLD, "1"),
            (env::RESILIENT_CHECK, "log"),
            (env::RESILIENT_POLICY, "bcast=ignore"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!((hier.k, hier.threshold), (Some(3), Some(1)));
        assert_eq!(hier.check, Some(Check::Log));
        assert_eq!(hier.policy.unwrap().to_string(), "bcast=ignore");
        let err = |v: &[(&str, &str)]| from(v).unwrap_err().to_string();
        assert_eq!(
            err(&[(env::RESILIENT, "yes")]),
            "PERTINAX_RESILIENT=yes: expected flat, hier or off"
        );
        assert_eq!(
            err(&[(env::RESILIENT, "hier"), (env::RESILIENT_K, "1")]),
            "PERTINAX_RESILIENT_K=1: expected a whole number of at least 2"
        );
        assert_eq!(
            err(&[(env::RESILIENT, "hier"), (env::RESILIENT_THRESHOLD, "0")]),
            "PERTINAX_RESILIENT_THRESHOLD=0: expected a whole number of at least 1"
        );
        assert_eq!(
            err(&[(env::RESILIENT, "on"), (env::RESILIENT_CHECK, "maybe")]),
            "PERTINAX_RESILIENT_CHECK=maybe: expected log or agree"
        );
        assert_eq!(
            err(&[
                (env::RESILIENT, "on"),
                (env::RESILIENT_POLICY, "x, bcast=maybe")
            ]),
            "'x': expected KIND=ACTION with KIND one of bcast, reduce, gather, scatter, send, \
             recv and ACTION ignore or stop"
        );
    }

    #[test]
    fn only_the_settings_given_are_written() {
        let r = Settings::new(Mode::Flat);
        assert_eq!(r.to_env(), [(env::RESILIENT, "flat".to_string())]);
        let r = Settings {
            mode: Mode::Hier,
            k: Some(4),
            threshold: Some(16),
            policy: Some(policy("bcast=ignore").unwrap()),
            check: Some(Check::Agree),
        };
        let vars = r.to_env();
        let got: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
        assert_eq!(
            got,
            [
                (env::RESILIENT, "hier"),
                (env::RESILIENT_K, "4"),
                (env::RESILIENT_THRESHOLD, "16"),
                (env::RESILIENT_POLICY, "bcast=ignore"),
                (env::RESILIENT_CHECK, "agree"),
            ]
        );
        assert_eq!(got.iter().map(|(k, _)| *k).collect::<Vec<_>>(), VARS);
    }

    fn any_policy() -> impl Strategy<Value = Policy> {
        proptest::collection::vec(
            (
                proptest::sample::select(&Kind::ALL[..]),
                proptest::sample::select(&Action::ALL[..]),
            ),
            0..8,
        )
        .prop_map(Policy::new)
    }

    /// Settings a launcher may write: the hierarchy's numbers only in the
    /// hierarchical mode, and in range.
    fn any_settings() -> impl Strategy<Value = Settings> {
        (
            any::<bool>(),
            proptest::option::of(2..usize::MAX),
            proptest::option::of(1..usize::MAX),
            proptest::option::of(any_policy()),
            proptest::option::of(proptest::sample::select(vec![Check::Log, Check::Agree])),
        )
            .prop_map(|(hier, k, threshold, policy, check)| Settings {
                mode: if hier { Mode::Hier } else { Mode::Flat },
                k: k.filter(|_| hier),
                threshold: threshold.filter(|_| hier),
                policy,
                check,
            })
    }

    proptest! {
        #[test]
        fn policies_round_trip(p in any_policy()) {
            prop_assert_eq!(p.to_string().parse::<Policy>(), Ok(p.clone()));
            let loose = format!(" , {} ,", p.to_string().replace(',', " ,, ").replace('=', " = "));
            prop_assert_eq!(loose.parse::<Policy>(), Ok(p));
        }

        #[test]
        fn settings_round_trip(s in any_settings()) {
            let vars = s.to_env();
            let got = Settings::from_vars(|k| {
                vars.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone())
            });
            prop_assert_eq!(got, Ok(Some(s)));
        }

        #[test]
        fn any_policy_text_parses_or_names_an_item(s in "[a-z=, ]{0,30}") {
            match s.parse::<Policy>() {
                Ok(p) => prop_assert_eq!(p.to_string().parse::<Policy>(), Ok(p)),
                Err(e) => prop_assert!(s.contains(e.item())),
            }
        }
    }
}
