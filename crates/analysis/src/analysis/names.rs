//! The names runs are called by side by side (the window's Compare, `spanprof compare`, `explain`,
//! a `--baseline` gate, the HTML page): each run's label, with the time it started where labels
//! repeat and the date as well where the runs did not all start on one day; where that still
//! leaves two alike, the file each came from; and where even that does not, its place (`#1`,
//! `#2`). The names are always distinct, so a verdict never says "run is faster than run".

use std::collections::{BTreeSet, HashMap};
use std::fmt::Display;

use chrono::{DateTime, TimeZone};

/// What a run is named by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunIdentity<'a> {
    /// Its label.
    pub label: &'a str,
    /// When it started, in RFC 3339 (a report's `started_at`); a time that does not read is left
    /// out of its name.
    pub started_at: &'a str,
    /// Where it came from, in a few words (a file's name), when that can tell it apart.
    pub source: Option<&'a str>,
}

/// The distinct names of `runs`, in their order, times shown in `zone`: the label; with the time
/// (`10:00:05`) when another run has the same label, or with the date and minute (`Dec 3 10:00`)
/// when the runs did not all start on the same day; then, for names still alike, the source in
/// parentheses; then the run's place in `runs` (`#2`).
pub fn run_names<Tz>(runs: &[RunIdentity<'_>], zone: &Tz) -> Vec<String>
where
    Tz: TimeZone,
    Tz::Offset: Display,
{
    let started: Vec<Option<DateTime<Tz>>> = runs
        .iter()
        .map(|r| {
            DateTime::parse_from_rfc3339(r.started_at)
                .ok()
                .map(|t| t.with_timezone(zone))
        })
        .collect();
    let days: BTreeSet<_> = started.iter().flatten().map(|t| t.date_naive()).collect();
    let labels: Vec<&str> = runs.iter().map(|r| r.label).collect();
    let mut names: Vec<String> = runs
        .iter()
        .zip(&started)
        .map(|(run, at)| {
            let repeated = labels.iter().filter(|l| **l == run.label).count() > 1;
            match (at, days.len() > 1, repeated) {
                (Some(t), true, _) => format!("{} · {}", run.label, t.format("%b %-d %H:%M")),
                (Some(t), false, true) => format!("{} · {}", run.label, t.format("%H:%M:%S")),
                _ => run.label.to_owned(),
            }
        })
        .collect();
    tell_apart(&mut names, |i, name| {
        runs[i].source.map(|source| format!("{name} ({source})"))
    });
    tell_apart(&mut names, |i, name| Some(format!("{name} #{}", i + 1)));
    names
}

/// [`run_names`] with times in UTC: how the command line and the exports name runs (a report's
/// own clock, the same on every machine that reads it).
pub fn run_names_utc(runs: &[RunIdentity<'_>]) -> Vec<String> {
    run_names(runs, &chrono::Utc)
}

/// Renames each of `names` another one shares by `rename` (given its place and name; `None`
/// keeps it).
fn tell_apart(names: &mut [String], rename: impl Fn(usize, &str) -> Option<String>) {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for name in names.iter() {
        *counts.entry(name.as_str()).or_default() += 1;
    }
    let alike: Vec<usize> = (0..names.len())
        .filter(|&i| counts[names[i].as_str()] > 1)
        .collect();
    for i in alike {
        if let Some(renamed) = rename(i, &names[i]) {
            names[i] = renamed;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;

    fn run<'a>(label: &'a str, started_at: &'a str, source: Option<&'a str>) -> RunIdentity<'a> {
        RunIdentity {
            label,
            started_at,
            source,
        }
    }

    #[test]
    fn distinct_labels_are_the_names() {
        let runs = [
            run("wide", "2026-12-03T10:00:00Z", None),
            run("narrow", "2026-12-03T10:30:00Z", None),
        ];
        assert_eq!(run_names(&runs, &Utc), ["wide", "narrow"]);
        assert_eq!(run_names(&runs[..1], &Utc), ["wide"]);
    }

    #[test]
    fn equal_labels_are_told_apart_by_the_time_they_started() {
        let runs = [
            run("run", "2026-12-03T10:00:00.25Z", Some("a.json")),
            run("run", "2026-12-03T10:00:05Z", Some("b.json")),
            run("other", "2026-12-03T11:00:00Z", None),
        ];
        assert_eq!(
            run_names(&runs, &Utc),
            ["run · 10:00:00", "run · 10:00:05", "other"]
        );
    }

    #[test]
    fn runs_on_different_days_carry_the_date() {
        let runs = [
            run("narrow", "2026-12-03T10:30:00Z", None),
            run("narrow", "2026-11-20T10:30:00Z", None),
            run("wide", "2026-11-20T09:00:00+02:00", None),
        ];
        assert_eq!(
            run_names(&runs, &Utc),
            [
                "narrow · Dec 3 10:30",
                "narrow · Nov 20 10:30",
                "wide · Nov 20 07:00"
            ]
        );
    }

    #[test]
    fn equal_labels_and_times_are_told_apart_by_the_file() {
        let runs = [
            run("run", "2026-12-03T10:00:00.1Z", Some("a.json")),
            run("run", "2026-12-03T10:00:00.9Z", Some("b.json")),
        ];
        assert_eq!(
            run_names(&runs, &Utc),
            ["run · 10:00:00 (a.json)", "run · 10:00:00 (b.json)"]
        );
        let timeless = [
            run("run", "", Some("a.json")),
            run("run", "", Some("b.json")),
        ];
        assert_eq!(run_names(&timeless, &Utc), ["run (a.json)", "run (b.json)"]);
    }

    #[test]
    fn runs_alike_in_everything_are_told_apart_by_their_place() {
        let runs = [
            run("run", "2026-12-03T10:00:00Z", Some("a.json")),
            run("run", "2026-12-03T10:00:00Z", Some("a.json")),
            run("run", "2026-12-03T10:00:00Z", None),
        ];
        assert_eq!(
            run_names(&runs, &Utc),
            [
                "run · 10:00:00 (a.json) #1",
                "run · 10:00:00 (a.json) #2",
                "run · 10:00:00",
            ]
        );
        let bare = [run("run", "", None), run("run", "", None)];
        assert_eq!(run_names(&bare, &Utc), ["run #1", "run #2"]);
    }
}
