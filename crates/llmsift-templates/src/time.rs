//! The date behind `strftime_now`: a civil date-time and a C-locale
//! `strftime` (what Python's `datetime.strftime` calls on Linux).

use std::fmt::Write;
use std::time::{SystemTime, UNIX_EPOCH};

/// A civil date and time (no time zone), what `strftime_now` formats.
///
/// transformers calls `datetime.now()` (local time); Sift uses
/// [`DateTime::now_utc`] unless a request pins a date, so renders are
/// reproducible when it matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DateTime {
    /// The year, e.g. 2026.
    pub year: i32,
    /// The month, 1–12.
    pub month: u8,
    /// The day of the month, 1–31.
    pub day: u8,
    /// The hour, 0–23.
    pub hour: u8,
    /// The minute, 0–59.
    pub minute: u8,
    /// The second, 0–59.
    pub second: u8,
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const WEEKDAYS: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];

impl DateTime {
    /// A date-time from its fields; `None` if a field is out of range.
    pub fn new(year: i32, month: u8, day: u8, hour: u8, minute: u8, second: u8) -> Option<DateTime> {
        let valid = (1..=12).contains(&month)
            && day >= 1
            && day <= days_in_month(year, month)
            && hour < 24
            && minute < 60
            && second < 60;
        valid.then_some(DateTime { year, month, day, hour, minute, second })
    }

    /// The date-time `secs` seconds after the Unix epoch, in UTC.
    pub fn from_unix(secs: i64) -> DateTime {
        let days = secs.div_euclid(86_400);
        let rem = secs.rem_euclid(86_400);
        let (year, month, day) = civil_from_days(days);
        DateTime {
            year,
            month,
            day,
            hour: (rem / 3600) as u8,
            minute: (rem % 3600 / 60) as u8,
            second: (rem % 60) as u8,
        }
    }

    /// The current date-time in UTC.
    pub fn now_utc() -> DateTime {
        let secs = match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(d) => d.as_secs() as i64,
            Err(e) => -(e.duration().as_secs() as i64),
        };
        DateTime::from_unix(secs)
    }

    /// Days since 1970-01-01.
    fn days(&self) -> i64 {
        days_from_civil(self.year, self.month, self.day)
    }

    /// Monday = 0 … Sunday = 6.
    fn weekday(&self) -> usize {
        // 1970-01-01 was a Thursday (3).
        (self.days() + 3).rem_euclid(7) as usize
    }

    /// Day of the year, 1-based.
    fn ordinal(&self) -> i64 {
        self.days() - days_from_civil(self.year, 1, 1) + 1
    }

    /// Formats like C `strftime` in the C locale (Python's
    /// `datetime.strftime` on Linux), including glibc's `%-d`-style flags.
    /// Time-zone directives (`%Z`, `%z`) are empty: the date-time is naive.
    pub fn strftime(&self, format: &str) -> String {
        let mut out = String::new();
        let mut chars = format.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            // glibc flags: '-' no padding, '_' space padding, '0' zero padding.
            let mut pad: Option<char> = None;
            while let Some(&f) = chars.peek() {
                match f {
                    '-' => pad = Some('-'),
                    '_' => pad = Some(' '),
                    '0' => pad = Some('0'),
                    '^' | '#' => {}
                    _ => break,
                }
                chars.next();
            }
            let Some(d) = chars.next() else {
                out.push('%');
                break;
            };
            let num = |out: &mut String, n: i64, width: usize, default: char| {
                let p = pad.unwrap_or(default);
                let _ = match p {
                    '-' => write!(out, "{n}"),
                    ' ' => write!(out, "{n:>width$}"),
                    _ => write!(out, "{n:0width$}"),
                };
            };
            let hour12 = match self.hour % 12 {
                0 => 12,
                h => h,
            };
            match d {
                'Y' => {
                    let _ = write!(out, "{}", self.year);
                }
                'C' => num(&mut out, i64::from(self.year).div_euclid(100), 2, '0'),
                'y' => num(&mut out, i64::from(self.year).rem_euclid(100), 2, '0'),
                'm' => num(&mut out, self.month.into(), 2, '0'),
                'd' => num(&mut out, self.day.into(), 2, '0'),
                'e' => num(&mut out, self.day.into(), 2, ' '),
                'H' => num(&mut out, self.hour.into(), 2, '0'),
                'k' => num(&mut out, self.hour.into(), 2, ' '),
                'I' => num(&mut out, hour12.into(), 2, '0'),
                'l' => num(&mut out, hour12.into(), 2, ' '),
                'M' => num(&mut out, self.minute.into(), 2, '0'),
                'S' => num(&mut out, self.second.into(), 2, '0'),
                'j' => num(&mut out, self.ordinal(), 3, '0'),
                'u' => num(&mut out, self.weekday() as i64 + 1, 1, '0'),
                'w' => num(&mut out, (self.weekday() as i64 + 1) % 7, 1, '0'),
                'B' => out.push_str(MONTHS[usize::from(self.month) - 1]),
                'b' | 'h' => out.push_str(&MONTHS[usize::from(self.month) - 1][..3]),
                'A' => out.push_str(WEEKDAYS[self.weekday()]),
                'a' => out.push_str(&WEEKDAYS[self.weekday()][..3]),
                'p' => out.push_str(if self.hour < 12 { "AM" } else { "PM" }),
                'F' => {
                    let _ = write!(out, "{}-{:02}-{:02}", self.year, self.month, self.day);
                }
                'D' | 'x' => {
                    let _ = write!(out, "{:02}/{:02}/{:02}", self.month, self.day, self.year.rem_euclid(100));
                }
                'T' | 'X' => {
                    let _ = write!(out, "{:02}:{:02}:{:02}", self.hour, self.minute, self.second);
                }
                'R' => {
                    let _ = write!(out, "{:02}:{:02}", self.hour, self.minute);
                }
                'c' => {
                    let _ = write!(
                        out,
                        "{} {} {:>2} {:02}:{:02}:{:02} {}",
                        &WEEKDAYS[self.weekday()][..3],
                        &MONTHS[usize::from(self.month) - 1][..3],
                        self.day,
                        self.hour,
                        self.minute,
                        self.second,
                        self.year
                    );
                }
                'n' => out.push('\n'),
                't' => out.push('\t'),
                '%' => out.push('%'),
                'Z' | 'z' => {}
                other => {
                    out.push('%');
                    out.push(other);
                }
            }
        }
        out
    }
}

fn is_leap(year: i32) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: i32, month: u8) -> u8 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Howard Hinnant's `days_from_civil`.
fn days_from_civil(year: i32, month: u8, day: u8) -> i64 {
    let y = i64::from(year) - i64::from(month <= 2);
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Howard Hinnant's `civil_from_days`.
fn civil_from_days(days: i64) -> (i32, u8, u8) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u8;
    let month = (if mp < 10 { mp + 3 } else { mp - 9 }) as u8;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year as i32, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unix_round_trip() {
        let t = DateTime::from_unix(1_772_701_622); // 2026-03-05T09:07:02Z
        assert_eq!(t, DateTime::new(2026, 3, 5, 9, 7, 2).unwrap());
        assert_eq!(DateTime::from_unix(0), DateTime::new(1970, 1, 1, 0, 0, 0).unwrap());
        assert_eq!(DateTime::from_unix(-1), DateTime::new(1969, 12, 31, 23, 59, 59).unwrap());
    }

    #[test]
    fn strftime_like_python() {
        let t = DateTime::new(2026, 3, 5, 9, 7, 2).unwrap();
        assert_eq!(t.strftime("%d %b %Y"), "05 Mar 2026");
        assert_eq!(t.strftime("%Y-%m-%d"), "2026-03-05");
        assert_eq!(t.strftime("%B %-d, %Y"), "March 5, 2026");
        assert_eq!(t.strftime("%A %a %j %I:%M %p"), "Thursday Thu 064 09:07 AM");
        assert_eq!(t.strftime("%c"), "Thu Mar  5 09:07:02 2026");
        assert_eq!(t.strftime("100%%"), "100%");
    }
}
