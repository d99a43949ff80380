//! Units of time as Spanner and the emulator write them in query statistics and plan figures
//! (`"1.22 msecs"`, `"1.2ms"`, `{total: "3", unit: "usecs"}`): one table, read by
//! `wire::result_stats` for durations and by `plan::model` for figures. A leaf: it names nothing
//! else in the crate.

/// Every spelling of a unit of time that is read, with the unit's length in nanoseconds.
pub const TIME_UNITS: &[(&str, u64)] = &[
    ("ns", 1),
    ("nsec", 1),
    ("nsecs", 1),
    ("us", 1_000),
    ("usec", 1_000),
    ("usecs", 1_000),
    ("µs", 1_000),
    ("μs", 1_000),
    ("ms", 1_000_000),
    ("msec", 1_000_000),
    ("msecs", 1_000_000),
    ("s", 1_000_000_000),
    ("sec", 1_000_000_000),
    ("secs", 1_000_000_000),
    ("seconds", 1_000_000_000),
    ("min", 60_000_000_000),
    ("mins", 60_000_000_000),
    ("minutes", 60_000_000_000),
    ("h", 3_600_000_000_000),
    ("hour", 3_600_000_000_000),
    ("hours", 3_600_000_000_000),
];

/// The longest duration a server's figure is believed to report: 100 days, longer than any limit
/// spanprof waits for (`--timeout` accepts up to 100 days). A figure past it (`dur=1e300`) is
/// left out as unknown, never turned into a `Duration` (which would overflow and panic).
pub const LONGEST_REPORTED: std::time::Duration = std::time::Duration::from_secs(100 * 86_400);

/// Nanoseconds in one `unit` (spaces around it ignored), or `None` when it is not a unit of time.
pub fn nanos_per(unit: &str) -> Option<u64> {
    let unit = unit.trim();
    TIME_UNITS
        .iter()
        .find(|(name, _)| *name == unit)
        .map(|&(_, nanos)| nanos)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_is_listed_once_and_known_units_scale_as_written() {
        let mut names: Vec<&str> = TIME_UNITS.iter().map(|(name, _)| *name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TIME_UNITS.len(), "a spelling listed twice");
        assert_eq!(nanos_per(" msecs "), Some(1_000_000));
        assert_eq!(nanos_per("µs"), nanos_per("us"));
        assert_eq!(nanos_per("hours"), Some(3_600 * 1_000_000_000));
        assert_eq!(nanos_per("rows"), None);
        assert_eq!(
            nanos_per("MS"),
            None,
            "units are case-sensitive, as Spanner writes them"
        );
    }
}
