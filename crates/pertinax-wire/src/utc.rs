//! Calendar dates of system times in UTC, without a time-zone database:
//! what the launcher's `--timestamp-output` and the benchmarks' rows print.

use std::time::{SystemTime, UNIX_EPOCH};

/// A system time's civil date and time of day in UTC (times before 1970
/// count as 1970-01-01 00:00:00).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Utc {
    /// The year, e.g. 2026.
    pub year: u64,
    /// 1 to 12.
    pub month: u64,
    /// 1 to 31.
    pub day: u64,
    /// 0 to 23.
    pub hour: u64,
    /// 0 to 59.
    pub minute: u64,
    /// 0 to 59.
    pub second: u64,
    /// 0 to 999.
    pub millis: u32,
}

impl Utc {
    /// `t` in UTC.
    pub fn of(t: SystemTime) -> Utc {
        let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
        let secs = d.as_secs();
        let (days, rem) = (secs / 86_400, secs % 86_400);
        // Howard Hinnant's civil_from_days, for days since 1970-01-01 >= 0.
        let z = days + 719_468;
        let era = z / 146_097;
        let doe = z % 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        Utc {
            year: yoe + era * 400 + u64::from(month <= 2),
            month,
            day,
            hour: rem / 3600,
            minute: rem / 60 % 60,
            second: rem % 60,
            millis: d.subsec_millis(),
        }
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` (RFC 3339, whole seconds).
    pub fn rfc3339(&self) -> String {
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn known_dates() {
        let at = |s: u64| Utc::of(UNIX_EPOCH + Duration::from_secs(s)).rfc3339();
        assert_eq!(at(0), "1970-01-01T00:00:00Z");
        assert_eq!(at(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(at(1_798_761_599), "2026-12-31T23:59:59Z");
        assert_eq!(at(4_107_542_400), "2100-03-01T00:00:00Z");
        let t = Utc::of(UNIX_EPOCH + Duration::from_millis(1_500));
        assert_eq!((t.second, t.millis), (1, 500));
    }
}
