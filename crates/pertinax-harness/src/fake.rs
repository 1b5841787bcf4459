//! Jobs of the fake rank ([`FAKE_RANK`](crate::FAKE_RANK)), which speaks
//! the launcher's control protocol without the core runtime: the
//! launcher's own tests drive it with shell scripts that pick its flags by
//! role and rank.

use std::time::Duration;

use crate::program::fake_rank;
use crate::sandbox::{Outcome, Sandbox};

/// A shell command line for `sh -c` that runs `script` in every rank.
pub fn sh(script: &str) -> Vec<&str> {
    vec!["sh", "-c", script]
}

/// A `sh -c` script that runs the fake rank with flags chosen by role and
/// rank: `cases` are shell patterns on `ROLE:RANK` (`rank:0`, `spare:*`,
/// `spawned:1`, `*`) with their flags; the first match wins.
pub fn fake_script(cases: &[(&str, &str)]) -> String {
    let fake = fake_rank();
    let mut s = String::from("case \"$PERTINAX_ROLE:$PERTINAX_RANK\" in ");
    for (pattern, flags) in cases {
        s.push_str(&format!("{pattern}) exec {fake} {flags};; "));
    }
    s.push_str("esac; echo 'no case for' $PERTINAX_ROLE:$PERTINAX_RANK >&2; exit 99");
    s
}

/// Runs `pertinax run -n N OPTS -- sh -c (fake_script CASES)` in a fresh
/// sandbox within `bound`, and checks that nothing is left behind.
pub fn run_fake_job(n: usize, opts: &[&str], cases: &[(&str, &str)], bound: Duration) -> Outcome {
    let sb = Sandbox::new();
    let n = n.to_string();
    let script = fake_script(cases);
    let mut args = vec!["run", "-n", &n];
    args.extend_from_slice(opts);
    args.extend(["--", "sh", "-c", &script]);
    sb.run(&args, bound)
}

/// The `at T s` time of the launcher's summary line that contains `what`,
/// in seconds.
pub fn summary_time(stderr: &str, what: &str) -> f64 {
    let line = stderr
        .lines()
        .find(|l| l.contains(what))
        .unwrap_or_else(|| panic!("no line with {what:?} in {stderr}"));
    line.match_indices(" at ")
        .find_map(|(i, _)| line[i + 4..].split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no time in {line:?}"))
}
