//! Calendar dates (UTC) of times given as milliseconds since the epoch,
//! for the session list and the Claude-Code-shaped transcript.

/// A moment's calendar date and time of day, in UTC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UtcTime {
    /// The year.
    pub year: i64,
    /// The month, 1 to 12.
    pub month: i64,
    /// The day of the month, from 1.
    pub day: i64,
    /// The hour, 0 to 23.
    pub hour: u64,
    /// The minute, 0 to 59.
    pub minute: u64,
    /// The second, 0 to 59.
    pub second: u64,
    /// The millisecond, 0 to 999.
    pub millisecond: u64,
}

impl UtcTime {
    /// The time `ms` milliseconds after 1970-01-01 00:00:00 UTC.
    pub fn from_millis(ms: u64) -> Self {
        let secs = ms / 1000;
        let days = i64::try_from(secs / 86_400).unwrap_or(0);
        let rest = secs % 86_400;
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = yoe + era * 400 + i64::from(month <= 2);
        Self {
            year,
            month,
            day,
            hour: rest / 3600,
            minute: rest % 3600 / 60,
            second: rest % 60,
            millisecond: ms % 1000,
        }
    }

    /// `YYYY-MM-DD`.
    pub fn date(&self) -> String {
        format!("{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }

    /// `HH:MM:SS`.
    pub fn time_of_day(&self) -> String {
        format!("{:02}:{:02}:{:02}", self.hour, self.minute, self.second)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_utc_calendar_dates() {
        let at = |ms| {
            let t = UtcTime::from_millis(ms);
            format!("{} {}.{:03}", t.date(), t.time_of_day(), t.millisecond)
        };
        assert_eq!(at(0), "1970-01-01 00:00:00.000");
        assert_eq!(at(951_782_400_000), "2000-02-29 00:00:00.000");
        assert_eq!(at(1_767_225_599_042), "2025-12-31 23:59:59.042");
    }
}
