//! The schemes whose repair is measured: the flat communicator with either
//! check and the hierarchy with one victim of each kind ([`Victim`]); which
//! rank dies at a rank count and group size, the shares of the kinds among
//! the ranks and the weighted average over them ([`weighted`]).

use super::line::Line;
use crate::bench::resilient::hier_launch_args;
use crate::cli::ResCheck;

/// Which rank of the hierarchical communicator dies, by its kind when the
/// communicator is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Victim {
    /// A group's master ([`master_victim`]), local rank 0: the global
    /// communicator and the group shrink, the deputy becomes master and
    /// the group's next rank, if any, joins the global communicator as its
    /// deputy.
    Master,
    /// That group's deputy ([`deputy_victim`]), local rank 1: the global
    /// communicator and the group shrink, and the group's next rank, if
    /// any, joins the global communicator as its deputy.
    Deputy,
    /// A rank that is neither master nor deputy ([`member_victim`]), local
    /// rank 2 or more: only its group repairs.
    Member,
    /// The master victim's group's master and deputy together (both
    /// killed at the same iteration): the group loses every member of the
    /// global communicator; its next rank, the new master, rejoins it
    /// (called by the global communicator's rank 0) and the rank after
    /// that, if any, joins as its deputy. Not a kind of rank: left out of
    /// the weighted average.
    Pair,
}

impl Victim {
    /// Every kind, in report order.
    pub(super) const ALL: [Victim; 3] = [Victim::Master, Victim::Deputy, Victim::Member];

    /// The kind's name in tables and messages.
    pub(super) fn name(self) -> &'static str {
        match self {
            Victim::Master => "master",
            Victim::Deputy => "deputy",
            Victim::Member => "member",
            Victim::Pair => "master+deputy",
        }
    }

    /// The rank of this kind that dies at `n` ranks in groups of `k`;
    /// `None` when there is no such rank (a member at k = 2).
    fn rank(self, n: usize, k: usize) -> Option<usize> {
        match self {
            Victim::Master | Victim::Pair => Some(master_victim(n, k)),
            Victim::Deputy => Some(deputy_victim(n, k)),
            Victim::Member => member_victim(n, k),
        }
    }

    /// How many of `n` ranks in groups of `k` are of this kind when the
    /// communicator is made: one master per group (`ceil(n/k)`), one
    /// deputy per group of at least 2 ranks, the rest are members.
    pub(super) fn count(self, n: usize, k: usize) -> usize {
        let groups = n.div_ceil(k);
        let deputies = (0..groups).filter(|g| (n - g * k).min(k) >= 2).count();
        match self {
            Victim::Master => groups,
            Victim::Deputy => deputies,
            Victim::Member => n - groups - deputies,
            Victim::Pair => 0,
        }
    }

    /// The probability that a victim chosen uniformly among `n` ranks in
    /// groups of `k` is of this kind: [`Victim::count`] / `n`.
    pub(super) fn share(self, n: usize, k: usize) -> f64 {
        self.count(n, k) as f64 / n as f64
    }
}

/// A resilient communicator whose repair is measured.
///
/// [`Scheme::launcher_args`] and [`Scheme::worker_args`] make the job build
/// it (`pertinax run --resilient=hier --resilient-k K` for the
/// hierarchical one, whose only check is agree), [`Scheme::victim`] picks
/// the rank that dies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Scheme {
    /// [`pertinax_resilient::Resilient`] with this check; the victim is
    /// rank N-1.
    Flat(ResCheck),
    /// [`pertinax_resilient::Hierarchical`] (agree) with this victim.
    Hier(Victim),
}

/// The schemes, in report order.
pub(super) const SCHEMES: [Scheme; 6] = [
    Scheme::Flat(ResCheck::Agree),
    Scheme::Flat(ResCheck::Log),
    Scheme::Hier(Victim::Master),
    Scheme::Hier(Victim::Deputy),
    Scheme::Hier(Victim::Member),
    Scheme::Hier(Victim::Pair),
];

/// The master victim at `n` ranks in groups of `k`: the lowest rank of the
/// last group but group 0 that has at least 2 members, so that the group
/// has a deputy to take the master's place (the master of a group of one
/// would leave no successor); rank 0 when only group 0 has 2 members
/// (`n <= k + 1`).
pub(super) fn master_victim(n: usize, k: usize) -> usize {
    (1..n.div_ceil(k))
        .rev()
        .find(|g| n - g * k >= 2)
        .map_or(0, |g| g * k)
}

/// The deputy victim at `n` ranks in groups of `k`: the deputy of the
/// master victim's group, its second rank (the group has at least 2).
pub(super) fn deputy_victim(n: usize, k: usize) -> usize {
    master_victim(n, k) + 1
}

/// The member victim at `n` ranks in groups of `k`: the highest rank that
/// is neither master nor deputy (`r % k >= 2`); `None` when there is none
/// (k = 2, or no group of 3 ranks).
pub(super) fn member_victim(n: usize, k: usize) -> Option<usize> {
    (0..n).rev().find(|r| r % k >= 2)
}

/// The share of masters among `n` ranks in groups of `k`: `ceil(n/k) / n`,
/// the probability that a victim chosen uniformly is a master.
pub(super) fn master_share(n: usize, k: usize) -> f64 {
    Victim::Master.share(n, k)
}

/// The hierarchy's expected repair time for a uniformly chosen victim:
/// `P_m·master + P_d·deputy + (1 − P_m − P_d)·member`, the shares from
/// [`Victim::share`]. The member term is left out when there is no member
/// (its weight is 0; `member` is then ignored); `None` when there are
/// members but no `member` time.
pub(super) fn weighted(
    n: usize,
    k: usize,
    master: f64,
    deputy: f64,
    member: Option<f64>,
) -> Option<f64> {
    let member = if Victim::Member.count(n, k) == 0 {
        0.0
    } else {
        Victim::Member.share(n, k) * member?
    };
    Some(master_share(n, k) * master + Victim::Deputy.share(n, k) * deputy + member)
}

impl Scheme {
    /// The name in tables and JSON.
    pub(super) fn name(self) -> String {
        match self {
            Scheme::Flat(c) => format!("flat {}", c.name()),
            Scheme::Hier(v) => format!("hier {}", v.name()),
        }
    }

    /// The rank that dies at `n` ranks (groups of `k` for the hierarchy);
    /// `None`: the scheme has no victim there and is skipped
    /// ([`Scheme::skip_reason`]).
    pub(super) fn victim(self, n: usize, k: usize) -> Option<usize> {
        match self {
            Scheme::Flat(_) => Some(n - 1),
            Scheme::Hier(v) => v.rank(n, k),
        }
    }

    /// Every rank that dies when `victim` is [`Scheme::victim`]: the
    /// victim, and its deputy for [`Victim::Pair`].
    pub(super) fn victims(self, victim: usize) -> Vec<usize> {
        match self {
            Scheme::Hier(Victim::Pair) => vec![victim, victim + 1],
            _ => vec![victim],
        }
    }

    /// Why the scheme is skipped at `n` ranks in groups of `k`, if it is.
    pub(super) fn skip_reason(self, n: usize, k: usize) -> Option<String> {
        self.victim(n, k).is_none().then(|| {
            format!(
                "no rank is neither master nor deputy at k={k} (groups of at most {} ranks)",
                k.min(n)
            )
        })
    }

    /// What `pertinax run` needs to make the job build this communicator.
    pub(super) fn launcher_args(self, k: usize) -> Vec<String> {
        match self {
            Scheme::Flat(_) => Vec::new(),
            Scheme::Hier(_) => hier_launch_args(k),
        }
    }

    /// What `worker repair` needs to build this communicator.
    pub(super) fn worker_args(self) -> Vec<String> {
        let c = match self {
            Scheme::Flat(c) => c,
            Scheme::Hier(_) => ResCheck::Agree,
        };
        vec!["--check".into(), c.name().into()]
    }

    /// Whether a `REPAIR` line comes from this scheme.
    pub(super) fn matches(self, line: &Line) -> bool {
        match self {
            Scheme::Flat(c) => line.hier.is_none() && line.check == c,
            Scheme::Hier(_) => line.hier.is_some() && line.check == ResCheck::Agree,
        }
    }

    /// Why a hierarchical line does not fit this scheme's `victim` and `k`,
    /// if it does not: another k, or a victim of another kind than the
    /// line's lists of masters and deputies make it.
    pub(super) fn kind_problem(self, line: &Line, victim: usize, k: usize) -> Option<String> {
        let (Scheme::Hier(want), Some(h)) = (self, &line.hier) else {
            return None;
        };
        if h.k != k {
            return Some(format!("k={}, expected k={k}", h.k));
        }
        let lists = || format!("(masters {:?}, deputies {:?})", h.masters, h.deputies);
        let was = match (h.masters.contains(&victim), h.deputies.contains(&victim)) {
            (true, true) => {
                return Some(format!(
                    "victim {victim} was both a master and a deputy {}",
                    lists()
                ))
            }
            (true, false) => Victim::Master,
            (false, true) => Victim::Deputy,
            (false, false) => Victim::Member,
        };
        let want = if want == Victim::Pair {
            Victim::Master
        } else {
            want
        };
        (was != want).then(|| {
            format!(
                "victim {victim} was a {}, expected a {} {}",
                was.name(),
                want.name(),
                lists()
            )
        })
    }

    /// The victim's cell: its rank and kind, or why there is none.
    pub(super) fn victim_cell(self, n: usize, k: usize) -> String {
        let Some(v) = self.victim(n, k) else {
            return format!("none: {}", self.skip_reason(n, k).unwrap_or_default());
        };
        match self {
            Scheme::Flat(_) => format!("{v} (N-1)"),
            Scheme::Hier(kind) => {
                let g = v / k;
                let last = (g * k + k).min(n) - 1;
                format!("{v}: {} of group {g} (ranks {}–{last})", kind.name(), g * k)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn victims_by_rank_count_and_k() {
        // (n, k, master victim, deputy victim, member victim)
        for (n, k, m, d, r) in [
            (4, 2, 2, 3, None),
            (8, 3, 6, 7, Some(5)),
            // 16 = 5 groups of 3 and {15}: 15 is a master without a
            // deputy, so the master victim is 12; 14 is a member.
            (16, 3, 12, 13, Some(14)),
            (3, 2, 0, 1, None),
            (3, 3, 0, 1, Some(2)),
            (8, 4, 4, 5, Some(7)),
            // {8} is a group of one: 7 is still the highest member.
            (9, 4, 4, 5, Some(7)),
            (5, 8, 0, 1, Some(4)),
        ] {
            assert_eq!(master_victim(n, k), m, "n={n} k={k}");
            assert_eq!(deputy_victim(n, k), d, "n={n} k={k}");
            assert_eq!(member_victim(n, k), r, "n={n} k={k}");
        }
        assert_eq!(master_share(8, 3), 3.0 / 8.0);
        assert_eq!(master_share(16, 3), 6.0 / 16.0);
        // 16 ranks, k=3: 6 masters, 5 deputies ({15} has none), 5 members.
        assert_eq!(Victim::ALL.map(|v| v.count(16, 3)), [6, 5, 5]);
        assert_eq!(weighted(4, 2, 100.0, 200.0, None), Some(150.0));
        // A member's time is ignored when there are no members ...
        assert_eq!(weighted(4, 2, 100.0, 200.0, Some(1e9)), Some(150.0));
        // ... and needed when there are.
        assert_eq!(weighted(8, 3, 100.0, 200.0, None), None);
        assert_eq!(
            weighted(8, 3, 800.0, 400.0, Some(80.0)),
            Some(300.0 + 150.0 + 20.0)
        );
    }

    #[test]
    fn the_shares_of_the_kinds_sum_to_one() {
        for n in 3..=64 {
            for k in 2..=9 {
                let counts = Victim::ALL.map(|v| v.count(n, k));
                assert_eq!(counts.iter().sum::<usize>(), n, "n={n} k={k}");
                let sum: f64 = Victim::ALL.iter().map(|v| v.share(n, k)).sum();
                assert!((sum - 1.0).abs() < 1e-12, "n={n} k={k}: {sum}");
                // The kinds as the ranks have them when the communicator
                // is made: local rank 0, 1, and the rest.
                let deputies = (0..n).filter(|r| r % k == 1).count();
                assert_eq!(counts[1], deputies, "n={n} k={k}");
                // Equal times weigh to that time.
                let w = weighted(n, k, 7.0, 7.0, Some(7.0)).unwrap();
                assert!((w - 7.0).abs() < 1e-9, "n={n} k={k}: {w}");
            }
        }
    }

    #[test]
    fn with_k_2_every_rank_is_a_master_or_a_deputy() {
        for n in 3..=64 {
            assert_eq!(member_victim(n, 2), None, "n={n}");
            assert_eq!(Victim::Member.count(n, 2), 0, "n={n}");
            let pm = Victim::Master.share(n, 2);
            let pd = Victim::Deputy.share(n, 2);
            assert!((pm + pd - 1.0).abs() < 1e-12, "n={n}");
            assert_eq!(
                weighted(n, 2, 10.0, 20.0, None),
                Some(pm * 10.0 + pd * 20.0),
                "n={n}"
            );
        }
        // With k >= 3 there is always a member from 3 ranks on.
        for k in 3..=9 {
            for n in 3..=40 {
                assert!(member_victim(n, k).is_some(), "n={n} k={k}");
                assert!(Victim::Member.count(n, k) > 0, "n={n} k={k}");
            }
        }
    }
}
