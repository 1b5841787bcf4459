//! The value parsers of `pertinax run`'s options: each reads one option's
//! value and says, in clap's error, why it is wrong.

use std::ffi::OsString;
use std::time::Duration;

use pertinax_launch::{Kill, OutputFiles, ResilientPolicy};

pub(super) fn parse_ranks(s: &str) -> Result<usize, String> {
    let n: i64 = s.parse().map_err(|_| "not a whole number".to_string())?;
    if n < 1 {
        return Err("the number of ranks must be at least 1".into());
    }
    usize::try_from(n).map_err(|_| "too large".into())
}

pub(super) fn parse_timeout(s: &str) -> Result<Duration, String> {
    match pertinax_launch::parse_duration(s) {
        Ok(d) if d.is_zero() => Err("must be longer than 0".into()),
        Ok(d) => Ok(d),
        Err(e) => Err(e.to_string()),
    }
}

pub(super) fn parse_output_files(s: &str) -> Result<OutputFiles, String> {
    let (dir, copy) = match s.rsplit_once(':') {
        Some((dir, opt)) if opt.eq_ignore_ascii_case("nocopy") => (dir, false),
        _ => (s, true),
    };
    if dir.is_empty() {
        return Err("expected a directory".into());
    }
    Ok(OutputFiles {
        dir: dir.into(),
        copy,
    })
}

pub(super) fn parse_ring_bytes(s: &str) -> Result<usize, String> {
    let n: usize = s.parse().map_err(|_| "not a number of bytes".to_string())?;
    if n == 0 {
        return Err("must be at least 1".into());
    }
    Ok(n)
}

pub(super) fn parse_slots(s: &str) -> Result<usize, String> {
    s.parse()
        .map_err(|_| "must be a whole number of processes, 0 or more".into())
}

pub(super) fn parse_ms(s: &str) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(0) => Err("must be at least 1 millisecond".into()),
        Ok(ms) => Ok(ms),
        Err(_) => Err("not a whole number of milliseconds".into()),
    }
}

pub(super) fn parse_kill(s: &str) -> Result<Kill, String> {
    s.parse()
        .map_err(|e: pertinax_launch::KillParseError| e.to_string())
}

pub(super) fn parse_count(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err("not a whole number".into()),
    }
}

pub(super) fn parse_max_hit(s: &str) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(0) => Err("must be at least 1 (hits count from 1)".into()),
        Ok(n) => Ok(n),
        Err(_) => Err("not a whole number".into()),
    }
}

pub(super) fn parse_group_size(s: &str) -> Result<usize, String> {
    let k: i64 = s.parse().map_err(|_| "not a whole number".to_string())?;
    if k < 2 {
        return Err("a local group needs at least 2 ranks".into());
    }
    usize::try_from(k).map_err(|_| "too large".into())
}

pub(super) fn parse_threshold(s: &str) -> Result<usize, String> {
    let n: i64 = s.parse().map_err(|_| "not a whole number".to_string())?;
    if n < 1 {
        return Err("must be at least 1 (a communicator size)".into());
    }
    usize::try_from(n).map_err(|_| "too large".into())
}

pub(super) fn parse_policy(s: &str) -> Result<ResilientPolicy, String> {
    s.parse()
        .map_err(|e: pertinax_launch::PolicyParseError| e.to_string())
}

pub(super) fn parse_env(s: &str) -> Result<(OsString, OsString), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.into(), v.into())),
        Some(_) => Err("expected NAME=VALUE or NAME".into()),
        None if s.is_empty() => Err("expected NAME=VALUE or NAME".into()),
        None => match std::env::var_os(s) {
            Some(v) => Ok((s.into(), v)),
            None => Err(format!(
                "{s} is not set in the launcher's environment (give its value: -x {s}=VALUE)"
            )),
        },
    }
}

/// `--host`: comma-separated hosts, each NAME or NAME:SLOTS, all this
/// machine (localhost, 127.0.0.1, ::1, or the name in
/// /proc/sys/kernel/hostname, with or without its domain).
pub fn parse_hosts(s: &str) -> Result<String, String> {
    let me = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let me = me.trim();
    for h in s.split(',') {
        let name = match h.rsplit_once(':') {
            Some((n, slots))
                if !n.is_empty() && !n.ends_with(':') && slots.parse::<usize>().is_ok() =>
            {
                n
            }
            _ => h,
        };
        let short = |n: &str| n.split('.').next().unwrap_or(n).to_string();
        let local = matches!(
            name,
            "localhost" | "127.0.0.1" | "::1" | "localhost.localdomain"
        ) || (!me.is_empty() && (name == me || short(name) == short(me)));
        if !local {
            return Err(format!(
                "'{h}' is not this machine: pertinax run starts every process here \
                 (localhost{}); for several machines use the MPI backend (docs/cluster.md)",
                if me.is_empty() {
                    String::new()
                } else {
                    format!(" or {me}")
                }
            ));
        }
    }
    Ok(s.to_string())
}
