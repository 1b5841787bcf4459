//! Shared helpers of the pertinax rank programs used by the tests, and
//! the programs' scenarios ([`scenario`]: one enum per rank program).
#![forbid(unsafe_code)]

pub mod scenario;

use pertinax_wire::rng::SplitMix64;

/// Returns `Err(message)` from the enclosing function unless `cond` holds
/// (the rank programs' checks).
#[macro_export]
macro_rules! check {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err(format!($($fmt)+));
        }
    };
}

/// An error no check expected, as a check failure.
pub fn e(err: pertinax::Error) -> String {
    format!("unexpected error: {err}")
}

/// Argument `i` of a scenario as a number, or `default`.
pub fn arg(args: &[String], i: usize, default: u64) -> u64 {
    args.get(i).and_then(|s| s.parse().ok()).unwrap_or(default)
}

/// Kills this process with SIGKILL (how the fault-tolerance scenarios
/// make a rank crash at a chosen point).
///
/// # Errors
/// If the signal could not be sent.
pub fn kill_self() -> std::io::Result<()> {
    use rustix::process::{getpid, kill_process, Signal};
    kill_process(getpid(), Signal::KILL)?;
    Ok(())
}

/// The `key=value` fields of a rank program's summary line, in order.
pub fn fields(line: &str) -> impl Iterator<Item = (String, String)> + '_ {
    line.split_whitespace()
        .filter_map(|f| f.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
}

/// Deterministic content of message `seq` from `src`: byte `i`.
#[inline]
pub fn content_byte(src: usize, seq: u64, i: usize) -> u8 {
    (seq.wrapping_mul(131) as usize ^ src.wrapping_mul(31) ^ i.wrapping_mul(7)) as u8
}

/// Fills `buf` with the content of message `seq` from `src`.
pub fn fill(buf: &mut [u8], src: usize, seq: u64) {
    for (i, b) in buf.iter_mut().enumerate() {
        *b = content_byte(src, seq, i);
    }
}

/// Index of the first wrong byte, if any.
pub fn first_bad(buf: &[u8], src: usize, seq: u64) -> Option<usize> {
    buf.iter()
        .enumerate()
        .position(|(i, &b)| b != content_byte(src, seq, i))
}

/// Size of message `seq` of the mixed-size load: mostly small, some
/// medium, a few up to 4 MiB (drawn with [`SplitMix64::below_mod`], the
/// stream the rank programs have always drawn).
pub fn mixed_size(rng: &mut SplitMix64) -> usize {
    match rng.below_mod(1000) {
        0 => rng.below_mod(4 << 20) as usize + 1,
        1..=9 => rng.below_mod(64 << 10) as usize,
        _ => rng.below_mod(257) as usize,
    }
}

/// The value of `key` among `fields` (a test's failure names the key and
/// the fields when it is missing).
pub fn field<'f>(fields: &'f [(String, String)], key: &str) -> &'f str {
    fields
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no {key} in {fields:?}"))
}

/// The value of `key` among `fields`, as a number.
pub fn num(fields: &[(String, String)], key: &str) -> u64 {
    field(fields, key)
        .parse()
        .unwrap_or_else(|_| panic!("{key} is not a number in {fields:?}"))
}

/// The fields of an application's one summary line (starting with `tag`)
/// that says `verified=true`, of a job that ended as `code_ok` says;
/// otherwise the test fails with the job's output.
pub fn verified_summary(
    j: &pertinax_harness::Job,
    tag: &str,
    code_ok: bool,
) -> Vec<(String, String)> {
    let lines: Vec<&str> = j.stdout.lines().filter(|l| l.starts_with(tag)).collect();
    assert!(
        code_ok && lines.len() == 1 && lines[0].contains(" verified=true "),
        "code {:?} after {:?}\nstdout:\n{}\nstderr:\n{}",
        j.code,
        j.elapsed,
        j.stdout,
        j.stderr
    );
    fields(lines[0]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_round_trip() {
        let mut b = vec![0u8; 1000];
        fill(&mut b, 3, 17);
        assert_eq!(first_bad(&b, 3, 17), None);
        b[500] ^= 1;
        assert_eq!(first_bad(&b, 3, 17), Some(500));
        let mut r = SplitMix64::new(1);
        let sizes: Vec<usize> = (0..10_000).map(|_| mixed_size(&mut r)).collect();
        assert!(sizes.iter().any(|&s| s > 64 << 10));
        assert!(sizes.iter().all(|&s| s <= 4 << 20));
    }
}
