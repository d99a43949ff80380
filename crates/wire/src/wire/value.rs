//! Typed values: what a row holds once the wire's strings and numbers have been checked and converted.

use std::fmt;

/// One decoded cell. The variant follows the column's [`Type`](super::Type); any type may be `Null`.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// SQL NULL, of any type.
    Null,
    /// `BOOL`.
    Bool(bool),
    /// `INT64`.
    Int64(i64),
    /// `FLOAT32`.
    Float32(f32),
    /// `FLOAT64`.
    Float64(f64),
    /// `NUMERIC`, kept exactly as its decimal text.
    Numeric(Numeric),
    /// `STRING`.
    String(String),
    /// `BYTES`, base64-decoded.
    Bytes(Vec<u8>),
    /// `JSON`, the document's text as sent.
    Json(String),
    /// `DATE`.
    Date(Date),
    /// `TIMESTAMP`, to the nanosecond.
    Timestamp(Timestamp),
    /// `ARRAY`: its elements (each may be `Null`).
    Array(Vec<Value>),
    /// `STRUCT`: its fields' values in field order.
    Struct(Vec<Value>),
    /// `PROTO`: the serialized message, base64-decoded.
    Proto(Vec<u8>),
    /// `ENUM`: the enum number.
    Enum(i64),
    /// `INTERVAL`.
    Interval(Interval),
    /// `UUID`.
    Uuid(Uuid),
}

/// Why a piece of text is not a valid value of a type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ParseError(pub(crate) &'static str);

/// An exact decimal number, as the text Spanner sent (`-12.50`, `NaN` for PostgreSQL numeric).
///
/// Never converted through a float: the text is checked and kept.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Numeric(String);

impl Numeric {
    /// Checks `text` is a plain decimal number (optional sign, digits, optional fraction) or `NaN`.
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        Self::check(text)?;
        Ok(Numeric(text.to_owned()))
    }

    /// Like [`Numeric::parse`], reusing the string.
    pub fn from_string(text: String) -> Result<Self, ParseError> {
        Self::check(&text)?;
        Ok(Numeric(text))
    }

    /// Takes text that [`Numeric::check`] accepted.
    pub(crate) fn from_checked(text: String) -> Self {
        Numeric(text)
    }

    /// Whether `text` is a plain decimal number or `NaN`.
    pub(crate) fn check(text: &str) -> Result<(), ParseError> {
        if text == "NaN" {
            return Ok(());
        }
        let body = text.strip_prefix(['-', '+']).unwrap_or(text);
        let (int, frac) = body.split_once('.').unwrap_or((body, ""));
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if !digits(int) || !digits(frac) || (int.is_empty() && frac.is_empty()) {
            return Err(ParseError("not a decimal number"));
        }
        Ok(())
    }

    /// The decimal text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Numeric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A calendar date in the proleptic Gregorian calendar, years 1 to 9999.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date {
    year: u16,
    month: u8,
    day: u8,
}

impl Date {
    /// A date, if it exists.
    pub fn new(year: u16, month: u8, day: u8) -> Option<Self> {
        let valid = (1..=9999).contains(&year)
            && (1..=12).contains(&month)
            && day >= 1
            && day <= days_in_month(year, month);
        valid.then_some(Date { year, month, day })
    }

    /// Parses `YYYY-MM-DD`.
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        let b = text.as_bytes();
        if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
            return Err(ParseError("not a YYYY-MM-DD date"));
        }
        let year = digits(&b[0..4]).ok_or(ParseError("not a YYYY-MM-DD date"))?;
        let month = digits(&b[5..7]).ok_or(ParseError("not a YYYY-MM-DD date"))?;
        let day = digits(&b[8..10]).ok_or(ParseError("not a YYYY-MM-DD date"))?;
        Date::new(year as u16, month as u8, day as u8).ok_or(ParseError("no such date"))
    }

    /// The year (1..=9999).
    pub fn year(self) -> u16 {
        self.year
    }
    /// The month (1..=12).
    pub fn month(self) -> u8 {
        self.month
    }
    /// The day of the month (1..=31).
    pub fn day(self) -> u8 {
        self.day
    }

    /// Days since 1970-01-01 (negative before it).
    pub fn days_since_epoch(self) -> i64 {
        days_from_civil(i64::from(self.year), self.month, self.day)
    }

    /// The date `days` after 1970-01-01, if it lies in years 1 to 9999.
    pub fn from_days_since_epoch(days: i64) -> Option<Self> {
        let (year, month, day) = civil_from_days(days);
        let year = u16::try_from(year).ok()?;
        Date::new(year, month, day)
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0u8; 10];
        write_date(&mut buf, i64::from(self.year), self.month, self.day);
        f.write_str(ascii(&buf))
    }
}

/// Writes `n` as exactly `buf.len()` decimal digits (zero-padded; `n` must fit).
fn put_digits(buf: &mut [u8], mut n: u64) {
    for slot in buf.iter_mut().rev() {
        *slot = b'0' + (n % 10) as u8;
        n /= 10;
    }
}

/// `YYYY-MM-DD` into the first 10 bytes of `buf`; years are 1 to 9999.
fn write_date(buf: &mut [u8], year: i64, month: u8, day: u8) {
    put_digits(&mut buf[0..4], year.clamp(0, 9999) as u64);
    buf[4] = b'-';
    put_digits(&mut buf[5..7], u64::from(month));
    buf[7] = b'-';
    put_digits(&mut buf[8..10], u64::from(day));
}

/// The text of a buffer that holds only ASCII digits and separators.
fn ascii(buf: &[u8]) -> &str {
    std::str::from_utf8(buf).unwrap_or("?")
}

/// An instant in UTC with nanosecond precision, from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999999Z.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp {
    seconds: i64,
    nanos: u32,
}

/// Seconds from the Unix epoch to 0001-01-01T00:00:00Z.
const MIN_SECONDS: i64 = -62_135_596_800;
/// Seconds from the Unix epoch to 9999-12-31T23:59:59Z.
const MAX_SECONDS: i64 = 253_402_300_799;

impl Timestamp {
    /// An instant `seconds` and `nanos` after the Unix epoch, if in range.
    pub fn new(seconds: i64, nanos: u32) -> Option<Self> {
        let valid = (MIN_SECONDS..=MAX_SECONDS).contains(&seconds) && nanos < 1_000_000_000;
        valid.then_some(Timestamp { seconds, nanos })
    }

    /// Parses RFC 3339: `YYYY-MM-DDTHH:MM:SS[.fraction]` then `Z` or a `±HH:MM` offset,
    /// with up to nine fractional digits.
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        const BAD: ParseError = ParseError("not an RFC 3339 timestamp");
        let b = text.as_bytes();
        if b.len() < 20 || !matches!(b[10], b'T' | b't') || b[13] != b':' || b[16] != b':' {
            return Err(BAD);
        }
        let date = Date::parse(&text[..10]).map_err(|_| BAD)?;
        let hour = digits(&b[11..13]).ok_or(BAD)?;
        let minute = digits(&b[14..16]).ok_or(BAD)?;
        let second = digits(&b[17..19]).ok_or(BAD)?;
        if hour > 23 || minute > 59 || second > 59 {
            return Err(BAD);
        }
        let mut rest = &b[19..];
        let mut nanos = 0u32;
        if let Some(frac) = rest.strip_prefix(b".") {
            let n = frac.iter().take_while(|c| c.is_ascii_digit()).count();
            if n == 0 || n > 9 {
                return Err(ParseError("a timestamp's fraction must have 1 to 9 digits"));
            }
            nanos = digits(&frac[..n]).ok_or(BAD)? * 10u32.pow(9 - n as u32);
            rest = &frac[n..];
        }
        let offset_seconds = match rest {
            [b'Z' | b'z'] => 0,
            [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
                let h = digits(&[*h1, *h2]).ok_or(BAD)?;
                let m = digits(&[*m1, *m2]).ok_or(BAD)?;
                if h > 23 || m > 59 {
                    return Err(BAD);
                }
                let offset = i64::from(h * 3600 + m * 60);
                if *sign == b'-' { -offset } else { offset }
            }
            _ => return Err(BAD),
        };
        let seconds = date.days_since_epoch() * 86_400
            + i64::from(hour * 3600 + minute * 60 + second)
            - offset_seconds;
        Timestamp::new(seconds, nanos).ok_or(ParseError("timestamp out of range"))
    }

    /// Whole seconds since the Unix epoch (negative before it).
    pub fn seconds(self) -> i64 {
        self.seconds
    }

    /// Nanoseconds past `seconds` (0..1e9).
    pub fn nanos(self) -> u32 {
        self.nanos
    }
}

impl fmt::Display for Timestamp {
    /// RFC 3339 in UTC ending in `Z`, fractional seconds without trailing zeros (none when zero).
    /// Written digit by digit: the local instance formats one per TIMESTAMP cell it sends.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let days = self.seconds.div_euclid(86_400);
        let secs = self.seconds.rem_euclid(86_400) as u64;
        let (year, month, day) = civil_from_days(days);
        let mut buf = [0u8; 30];
        write_date(&mut buf, year, month, day);
        buf[10] = b'T';
        put_digits(&mut buf[11..13], secs / 3600);
        buf[13] = b':';
        put_digits(&mut buf[14..16], secs / 60 % 60);
        buf[16] = b':';
        put_digits(&mut buf[17..19], secs % 60);
        let mut len = 19;
        if self.nanos > 0 {
            buf[19] = b'.';
            put_digits(&mut buf[20..29], u64::from(self.nanos));
            len = 29;
            while buf[len - 1] == b'0' {
                len -= 1;
            }
        }
        buf[len] = b'Z';
        f.write_str(ascii(&buf[..=len]))
    }
}

/// A span of time as Spanner's INTERVAL holds it: months, days and nanoseconds, each signed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Interval {
    /// Years times 12 plus months.
    pub months: i64,
    /// Days.
    pub days: i64,
    /// Hours, minutes and seconds, in nanoseconds.
    pub nanos: i128,
}

impl Interval {
    /// Parses an ISO 8601 duration such as `P1Y2M3DT4H5M6.5S`, `P-1Y`, `PT-0.000001S` or `P0Y`.
    /// Each component may carry its own sign; only seconds may have a fraction (up to nine digits).
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        const BAD: ParseError = ParseError("not an ISO 8601 duration");
        let body = text.strip_prefix('P').ok_or(BAD)?;
        if body.is_empty() {
            return Err(BAD);
        }
        let (date_part, time_part) = match body.split_once('T') {
            Some((_, "")) => return Err(BAD),
            Some((d, t)) => (d, Some(t)),
            None => (body, None),
        };
        let mut out = Interval {
            months: 0,
            days: 0,
            nanos: 0,
        };
        let mut order = 0;
        for (number, unit) in components(date_part)? {
            let rank = match unit {
                'Y' => 1,
                'M' => 2,
                'W' => 3,
                'D' => 4,
                _ => return Err(BAD),
            };
            if rank <= order || number.contains('.') {
                return Err(BAD);
            }
            order = rank;
            let n: i64 = number.parse().map_err(|_| BAD)?;
            let overflow = ParseError("interval out of range");
            match unit {
                'Y' => out.months = n.checked_mul(12).ok_or(overflow)?,
                'M' => out.months = out.months.checked_add(n).ok_or(overflow)?,
                'W' => out.days = n.checked_mul(7).ok_or(overflow)?,
                _ => out.days = out.days.checked_add(n).ok_or(overflow)?,
            }
        }
        let mut order = 0;
        for (number, unit) in components(time_part.unwrap_or(""))? {
            let (rank, scale) = match unit {
                'H' => (1, 3_600_000_000_000i128),
                'M' => (2, 60_000_000_000),
                'S' => (3, 1_000_000_000),
                _ => return Err(BAD),
            };
            if rank <= order || (unit != 'S' && number.contains('.')) {
                return Err(BAD);
            }
            order = rank;
            out.nanos += parse_scaled(number, scale).ok_or(BAD)?;
        }
        Ok(out)
    }
}

/// Splits `1Y-2M3D` into `[("1", 'Y'), ("-2", 'M'), ("3", 'D')]`.
fn components(text: &str) -> Result<Vec<(&str, char)>, ParseError> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if c.is_ascii_alphabetic() {
            if i == start {
                return Err(ParseError("not an ISO 8601 duration"));
            }
            out.push((&text[start..i], c));
            start = i + 1;
        }
    }
    if start != text.len() {
        return Err(ParseError("not an ISO 8601 duration"));
    }
    Ok(out)
}

/// `"-1.5"` with `scale` 1e9 gives -1_500_000_000; at most nine fractional digits.
fn parse_scaled(number: &str, scale: i128) -> Option<i128> {
    let (negative, body) = match number.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, number.strip_prefix('+').unwrap_or(number)),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    if int.is_empty() || frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if !int.bytes().all(|b| b.is_ascii_digit()) || int.len() > 20 {
        return None;
    }
    let whole: i128 = int.parse().ok()?;
    let mut frac_value: i128 = if frac.is_empty() {
        0
    } else {
        frac.parse().ok()?
    };
    for _ in frac.len()..9 {
        frac_value *= 10;
    }
    let value = whole * scale + frac_value * (scale / 1_000_000_000);
    Some(if negative { -value } else { value })
}

impl fmt::Display for Interval {
    /// `P<y>Y<m>M<d>DT<h>H<m>M<s>S` with zero parts left out (`P0Y` when all are zero);
    /// each part carries its own sign, seconds trimmed of trailing fractional zeros.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("P")?;
        let (years, months) = (self.months / 12, self.months % 12);
        if years != 0 {
            write!(f, "{years}Y")?;
        }
        if months != 0 {
            write!(f, "{months}M")?;
        }
        if self.days != 0 {
            write!(f, "{}D", self.days)?;
        }
        if self.nanos != 0 {
            f.write_str("T")?;
            let sign = if self.nanos < 0 { "-" } else { "" };
            let abs = self.nanos.unsigned_abs();
            let hours = abs / 3_600_000_000_000;
            let minutes = abs / 60_000_000_000 % 60;
            let seconds = abs / 1_000_000_000 % 60;
            let frac = abs % 1_000_000_000;
            if hours != 0 {
                write!(f, "{sign}{hours}H")?;
            }
            if minutes != 0 {
                write!(f, "{sign}{minutes}M")?;
            }
            if seconds != 0 || frac != 0 {
                write!(f, "{sign}{seconds}")?;
                if frac != 0 {
                    let text = format!("{frac:09}");
                    write!(f, ".{}", text.trim_end_matches('0'))?;
                }
                f.write_str("S")?;
            }
        } else if years == 0 && months == 0 && self.days == 0 {
            f.write_str("0Y")?;
        }
        Ok(())
    }
}

/// A 128-bit UUID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Uuid(pub u128);

impl Uuid {
    /// Parses `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` (hex, either case), or the same 32 digits without hyphens.
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        const BAD: ParseError = ParseError("not a UUID");
        let b = text.as_bytes();
        let hex: String = match b.len() {
            36 if [8, 13, 18, 23].iter().all(|&i| b[i] == b'-') => {
                text.chars().filter(|&c| c != '-').collect()
            }
            32 => text.to_owned(),
            _ => return Err(BAD),
        };
        if hex.len() != 32 || !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
            return Err(BAD);
        }
        u128::from_str_radix(&hex, 16).map(Uuid).map_err(|_| BAD)
    }
}

impl fmt::Display for Uuid {
    /// Lowercase, hyphenated.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let h = format!("{:032x}", self.0);
        write!(
            f,
            "{}-{}-{}-{}-{}",
            &h[0..8],
            &h[8..12],
            &h[12..16],
            &h[16..20],
            &h[20..32]
        )
    }
}

/// The number written in `b`, all ASCII digits, or `None`.
fn digits(b: &[u8]) -> Option<u32> {
    if b.is_empty() || b.len() > 9 {
        return None;
    }
    b.iter().try_fold(0u32, |acc, &c| {
        c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0'))
    })
}

fn is_leap(year: u16) -> bool {
    year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400))
}

fn days_in_month(year: u16, month: u8) -> u8 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to the given proleptic Gregorian date.
///
/// Counts in 400-year eras starting on March 1st, so that the leap day falls at the end of a year
/// (the method of H. Hinnant, "chrono-Compatible Low-Level Date Algorithms").
fn days_from_civil(year: i64, month: u8, day: u8) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year.rem_euclid(400);
    let month = i64::from(month);
    let shifted_month = if month > 2 { month - 3 } else { month + 9 };
    let day_of_year = (153 * shifted_month + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The inverse of [`days_from_civil`].
fn civil_from_days(days: i64) -> (i64, u8, u8) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * shifted_month + 2) / 5 + 1) as u8;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    } as u8;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_round_trip_through_days() {
        for days in (-719_162..=2_932_896).step_by(997) {
            let date = Date::from_days_since_epoch(days).expect("in range");
            assert_eq!(date.days_since_epoch(), days, "{date}");
            assert_eq!(Date::parse(&date.to_string()), Ok(date));
        }
        assert_eq!(Date::parse("1970-01-01").map(Date::days_since_epoch), Ok(0));
        assert_eq!(
            Date::parse("2000-03-01").map(Date::days_since_epoch),
            Ok(11_017)
        );
        assert_eq!(Date::from_days_since_epoch(-719_163), None, "year 0");
    }

    #[test]
    fn bad_dates_are_rejected() {
        for bad in [
            "2023-02-29",
            "2023-13-01",
            "0000-01-01",
            "2023-1-01",
            "2023/01/01",
            "",
            "2023-01-01Z",
        ] {
            assert!(Date::parse(bad).is_err(), "{bad}");
        }
        assert!(Date::parse("2024-02-29").is_ok());
    }

    #[test]
    fn timestamps_parse_and_print_canonically() {
        let t = Timestamp::parse("2017-05-31T02:01:34.990054715Z").expect("valid");
        assert_eq!(t.nanos(), 990_054_715);
        assert_eq!(t.to_string(), "2017-05-31T02:01:34.990054715Z");
        let t = Timestamp::parse("2024-07-04T11:22:20.500Z").expect("valid");
        assert_eq!(t.to_string(), "2024-07-04T11:22:20.5Z");
        assert_eq!(
            Timestamp::parse("1970-01-01T00:00:00Z").map(|t| t.seconds()),
            Ok(0)
        );
        let offset = Timestamp::parse("2024-07-04T13:22:20+02:00").expect("valid");
        assert_eq!(offset.to_string(), "2024-07-04T11:22:20Z");
        let min = Timestamp::parse("0001-01-01T00:00:00Z").expect("valid");
        assert_eq!(min.seconds(), MIN_SECONDS);
        assert_eq!(min.to_string(), "0001-01-01T00:00:00Z");
        let max = Timestamp::parse("9999-12-31T23:59:59.999999999Z").expect("valid");
        assert_eq!(max.to_string(), "9999-12-31T23:59:59.999999999Z");
    }

    #[test]
    fn bad_timestamps_are_rejected() {
        for bad in [
            "2024-07-04 11:22:20Z",
            "2024-07-04T11:22:20",
            "2024-07-04T24:00:00Z",
            "2024-07-04T11:22:20.Z",
            "2024-07-04T11:22:20.1234567890Z",
            "2024-02-30T11:22:20Z",
            "0001-01-01T00:00:00+00:01",
            "now",
        ] {
            assert!(Timestamp::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn numerics_are_checked_not_converted() {
        for good in [
            "0",
            "-1",
            "261905898.4175",
            "0.000000001",
            "+5",
            ".5",
            "5.",
            "NaN",
        ] {
            assert_eq!(
                Numeric::parse(good).map(|n| n.to_string()),
                Ok(good.to_owned())
            );
        }
        let big = "99999999999999999999999999999.999999999";
        assert_eq!(
            Numeric::parse(big).map(|n| n.to_string()),
            Ok(big.to_owned())
        );
        for bad in ["", "-", ".", "1e5", "1.2.3", "abc", " 1", "1,5", "Infinity"] {
            assert!(Numeric::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn intervals_parse_and_print() {
        let i = Interval::parse("P1Y2M3DT4H5M6.5S").expect("valid");
        assert_eq!(i.months, 14);
        assert_eq!(i.days, 3);
        assert_eq!(
            i.nanos,
            ((4 * 60 + 5) * 60 + 6) * 1_000_000_000 + 500_000_000
        );
        assert_eq!(i.to_string(), "P1Y2M3DT4H5M6.5S");
        assert_eq!(
            Interval::parse("P0Y").map(|i| i.to_string()).as_deref(),
            Ok("P0Y")
        );
        let negative = Interval::parse("PT-0.000001S").expect("valid");
        assert_eq!(negative.nanos, -1000);
        assert_eq!(negative.to_string(), "PT-0.000001S");
        for bad in [
            "", "P", "PT", "1Y", "P1S", "PT1Y", "P1.5Y", "P1M1Y", "PT1.5H",
        ] {
            assert!(Interval::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn uuids_print_lowercase_hyphenated() {
        let u = Uuid::parse("123E4567-E89B-12D3-A456-426614174000").expect("valid");
        assert_eq!(u.to_string(), "123e4567-e89b-12d3-a456-426614174000");
        assert_eq!(Uuid::parse("123e4567e89b12d3a456426614174000"), Ok(u));
        assert!(Uuid::parse("123e4567-e89b-12d3-a456-42661417400g").is_err());
        assert!(Uuid::parse("123e4567-e89b-12d3-a456").is_err());
    }
}
