//! The `server-timing` response header of Google's front end: `gfet4t7; dur=55, afe; dur=23`.

use std::time::Duration;

use crate::units::LONGEST_REPORTED;

/// The front-end times a response reported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServerTiming {
    /// `gfet4t7`: the Google front end's time from receiving the request to the first response byte.
    pub gfe: Option<Duration>,
    /// `afe`: the Spanner API front end's time.
    pub afe: Option<Duration>,
}

/// Parses a `server-timing` value: comma-separated `name; dur=<ms>` entries in any order. Unknown
/// names and entries without a usable duration (not a number, negative, or longer than
/// [`LONGEST_REPORTED`]) are ignored: the header comes from the network.
pub fn parse_server_timing(header: &str) -> ServerTiming {
    let mut out = ServerTiming::default();
    for entry in header.split(',') {
        let mut parts = entry.split(';').map(str::trim);
        let name = parts.next().unwrap_or("");
        let duration = parts
            .filter_map(|p| p.strip_prefix("dur="))
            .find_map(|ms| ms.trim().parse::<f64>().ok())
            .and_then(milliseconds);
        match name {
            "gfet4t7" => out.gfe = duration.or(out.gfe),
            "afe" => out.afe = duration.or(out.afe),
            _ => {}
        }
    }
    out
}

/// `ms` milliseconds as a duration, when it is one the front end could have measured.
fn milliseconds(ms: f64) -> Option<Duration> {
    Duration::try_from_secs_f64(ms / 1e3)
        .ok()
        .filter(|d| *d <= LONGEST_REPORTED)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_in_any_order_with_spaces() {
        let t = parse_server_timing("gfet4t7; dur=55, afe; dur=23");
        assert_eq!(t.gfe, Some(Duration::from_millis(55)));
        assert_eq!(t.afe, Some(Duration::from_millis(23)));
        let t = parse_server_timing("afe;dur=1.5,other;dur=9,gfet4t7;desc=\"x\";dur=2");
        assert_eq!(t.afe, Some(Duration::from_micros(1500)));
        assert_eq!(t.gfe, Some(Duration::from_millis(2)));
    }

    #[test]
    fn junk_is_ignored() {
        assert_eq!(parse_server_timing(""), ServerTiming::default());
        assert_eq!(
            parse_server_timing("gfet4t7; dur=abc, afe"),
            ServerTiming::default()
        );
        assert_eq!(
            parse_server_timing("gfet4t7; dur=-5"),
            ServerTiming::default()
        );
    }

    /// `dur=1e300` once panicked the engine thread (`Duration::from_secs_f64` overflows).
    #[test]
    fn durations_past_any_measurable_one_are_left_out_without_a_panic() {
        for header in [
            "gfet4t7; dur=1e300",
            "afe; dur=1e300",
            "gfet4t7; dur=1.8e22, afe; dur=1e20",
            "gfet4t7; dur=8640000001",
            "gfet4t7; dur=-0.0001, afe; dur=inf",
        ] {
            assert_eq!(
                parse_server_timing(header),
                ServerTiming::default(),
                "{header}"
            );
        }
        // The longest believed is kept; a good entry after a bad one still counts.
        let t = parse_server_timing("gfet4t7; dur=8640000000, afe; dur=1e300, afe; dur=4");
        assert_eq!(t.gfe, Some(LONGEST_REPORTED));
        assert_eq!(t.afe, Some(Duration::from_millis(4)));
    }
}
