//! How long the client waits, and for what: connecting, a unary call's answer, a streaming call's
//! first message, and a whole iteration. A server that accepts the connection and then says nothing
//! gets an error naming what it did not answer, never a wait without end. Durations as users write
//! them (`10s`, `250ms`, `5m`) are parsed and printed here.

use std::fmt;
use std::time::Duration;

/// The limits of one run's calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Connecting: TCP (and TLS) plus the HTTP/2 handshake.
    pub connect: Duration,
    /// The answer to a unary call: CreateSession, DeleteSession, BeginTransaction, the admin calls.
    pub call: Duration,
    /// A streaming call's first message, from the request (each resume's too).
    pub first_response: Duration,
    /// A whole iteration, resumes included. It travels as the call's `grpc-timeout` too, so the
    /// server stops the query when the client stops waiting.
    pub iteration: Duration,
}

impl Timeouts {
    /// Connect in 5 s, an answer to a call in 10 s, a query's first message in 60 s, an
    /// iteration in 10 minutes.
    pub const DEFAULT: Timeouts = Timeouts {
        connect: Duration::from_secs(5),
        call: Duration::from_secs(10),
        first_response: Duration::from_secs(60),
        iteration: Duration::from_secs(600),
    };

    /// Each limit as (name, value) in the command line's spelling (`connect`, `5 s`), as a
    /// report records them.
    pub fn describe(&self) -> Vec<(String, String)> {
        [
            ("connect", self.connect),
            ("call", self.call),
            ("first-response", self.first_response),
            ("iteration", self.iteration),
        ]
        .into_iter()
        .map(|(name, d)| (name.to_owned(), crate::text::ms(d.as_secs_f64() * 1e3)))
        .collect()
    }
}

impl Default for Timeouts {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// A duration that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not a duration: {reason} (write it like 10s, 250ms, 1.5s, 5m or 1h)")]
pub struct DurationError {
    /// The text as given.
    pub text: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

/// Reads a duration written as a non-negative decimal number and a unit: `ns`, `us`, `ms`, `s`, `m`
/// (minutes) or `h`: `10s`, `250ms`, `1.5s`, `2m`. Anything else (no unit, a sign, an exponent,
/// more than 100 days) is an error.
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    let error = |reason| DurationError {
        text: text.to_owned(),
        reason,
    };
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| error("it has no unit"))?;
    let (number, unit) = trimmed.split_at(split);
    let nanos_per_unit: f64 = match unit.trim() {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "m" | "min" => 60e9,
        "h" => 3600e9,
        _ => return Err(error("the unit is not one of ns, us, ms, s, m, h")),
    };
    if number.is_empty() || number.matches('.').count() > 1 || number == "." {
        return Err(error("it does not start with a number"));
    }
    let value: f64 = number
        .parse()
        .map_err(|_| error("it does not start with a number"))?;
    let nanos = value * nanos_per_unit;
    if !(0.0..=100.0 * 86_400e9).contains(&nanos) {
        return Err(error("it is longer than 100 days"));
    }
    Ok(Duration::from_nanos(nanos.round() as u64))
}

/// A duration as a person reads it: `250 ms`, `10 s`, `1.5 s`, `5 min`, `2 h`.
pub struct Readable(pub Duration);

impl fmt::Display for Readable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.0.as_secs_f64();
        let trim = |x: f64| {
            let text = format!("{x:.3}");
            text.trim_end_matches('0').trim_end_matches('.').to_owned()
        };
        if secs < 1.0 {
            write!(f, "{} ms", trim(secs * 1e3))
        } else if secs < 120.0 {
            write!(f, "{} s", trim(secs))
        } else if secs < 7200.0 {
            write!(f, "{} min", trim(secs / 60.0))
        } else {
            write!(f, "{} h", trim(secs / 3600.0))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_users_write_them() {
        let ms = Duration::from_millis;
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("250ms"), Ok(ms(250)));
        assert_eq!(parse_duration("1.5s"), Ok(ms(1500)));
        assert_eq!(parse_duration(" 2m "), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("15us"), Ok(Duration::from_micros(15)));
        assert_eq!(parse_duration("0s"), Ok(Duration::ZERO));
        assert_eq!(parse_duration("10 s"), Ok(Duration::from_secs(10)));
    }

    #[test]
    fn anything_else_is_an_error_that_says_how_to_write_it() {
        for bad in [
            "10", "", "s", "-5s", "1e3s", "1..5s", ".s", "10 sec", "5d", "3000h", "NaNs",
        ] {
            let error = parse_duration(bad).expect_err(bad);
            assert!(error.to_string().contains("write it like 10s"), "{error}");
        }
    }

    #[test]
    fn durations_print_in_the_unit_a_person_reads() {
        let text = |d| Readable(d).to_string();
        assert_eq!(text(Duration::from_millis(250)), "250 ms");
        assert_eq!(text(Duration::from_secs(10)), "10 s");
        assert_eq!(text(Duration::from_millis(1500)), "1.5 s");
        assert_eq!(text(Duration::from_secs(600)), "10 min");
        assert_eq!(text(Duration::from_secs(7200)), "2 h");
    }
}
