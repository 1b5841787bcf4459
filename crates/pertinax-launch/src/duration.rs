//! Human durations for `--timeout`: `90`, `1.5`, `90s`, `5m`, `1h30m`,
//! `250ms`.
//!
//! A bare number is seconds; otherwise the text is a sequence of numbers
//! each followed by a unit (`h`, `m`, `s`, `ms`), summed. The fault plan's
//! `parse_time` (`pertinax_wire::kill`) is not reused: its grammar is part
//! of the environment contract every rank reads (`250ms`, `1.5s`, a unit
//! always), and the timeout's wider one must not leak into it.
//!
//! ```
//! use std::time::Duration;
//! use pertinax_launch::parse_duration;
//!
//! assert_eq!(parse_duration("90").unwrap(), Duration::from_secs(90));
//! assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5400));
//! assert!(parse_duration("5 minutes").is_err());
//! ```

use std::time::Duration;

/// Why a duration did not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a duration (examples: 90, 1.5, 90s, 5m, 1h30m, 250ms)")]
pub struct DurationParseError(pub String);

/// Parses a human duration (see the module docs).
///
/// # Errors
/// [`DurationParseError`] for anything else: an empty text, an unknown
/// unit, a number without digits, a negative or non-finite value, or a
/// sum too large for a [`Duration`].
pub fn parse_duration(s: &str) -> Result<Duration, DurationParseError> {
    let bad = || DurationParseError(s.to_string());
    let text = s.trim();
    let number = |n: &str| -> Result<f64, DurationParseError> {
        if n.is_empty()
            || !n.bytes().all(|b| b.is_ascii_digit() || b == b'.')
            || !n.bytes().any(|b| b.is_ascii_digit())
        {
            return Err(bad());
        }
        n.parse::<f64>().map_err(|_| bad())
    };
    if text.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return Duration::try_from_secs_f64(number(text)?).map_err(|_| bad());
    }
    let mut total = 0.0f64;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(bad)?;
        let value = number(&rest[..digits])?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 1e-3,
            _ => return Err(bad()),
        };
        rest = &rest[unit_len..];
        total += value * scale;
    }
    Duration::try_from_secs_f64(total).map_err(|_| bad())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(s: &str, ms: u64) {
        assert_eq!(parse_duration(s), Ok(Duration::from_millis(ms)), "{s}");
    }

    #[test]
    fn durations() {
        check("90", 90_000);
        check("1.5", 1_500);
        check("90s", 90_000);
        check("5m", 300_000);
        check("1h30m", 5_400_000);
        check("1h30m15s", 5_415_000);
        check("250ms", 250);
        check("1m30s250ms", 90_250);
        check("0.5h", 1_800_000);
        check("0", 0);
    }

    #[test]
    fn bad_durations() {
        for s in [
            "",
            "s",
            "m5",
            "5x",
            "5 m",
            "-5",
            "1e3",
            "nan",
            "inf",
            "5mm",
            "1..5s",
            ".",
            "1h 30m",
            "99999999999999999999999h",
        ] {
            assert!(parse_duration(s).is_err(), "{s:?} accepted");
        }
        assert_eq!(
            parse_duration("5 minutes").unwrap_err().to_string(),
            "'5 minutes' is not a duration (examples: 90, 1.5, 90s, 5m, 1h30m, 250ms)"
        );
    }
}
