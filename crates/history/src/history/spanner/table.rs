//! The team store's tables as Spanner holds them: their names and DDL, the columns a listing
//! reads, and a listing row read back as a run's summary, or why it is not one (any writer of the
//! team's database can write any row: a bad one is named and skipped by the caller, never the
//! whole listing).

use crate::history::stored::{NotARun, RunSummary};

/// The runs' table.
pub const TABLE: &str = "SpanprofRuns";

/// The table of pinned runs' ids (a table of its own, so a team table made before pins needs
/// no change: the missing table is created).
pub const PINS: &str = "SpanprofPins";

/// The pieces of reports too long for one cell, in order (a table of its own, created when
/// missing like the pins').
pub const PIECES: &str = "SpanprofReportParts";

/// The load runs' table (created when missing, like the pins').
pub const LOADS: &str = "SpanprofLoadRuns";

/// The columns a listing reads, in [`summary`]'s order.
pub const LISTED: &str =
    "Id, StartedAt, Label, Target, Fingerprint, Iterations, MedianTotalMs, P90TotalMs, Sql";

/// The runs' columns as a save writes them, in order.
pub const WRITTEN: [&str; 12] = [
    "Id",
    "StartedAt",
    "StartedMs",
    "SavedAt",
    "Label",
    "Target",
    "Fingerprint",
    "Sql",
    "Iterations",
    "MedianTotalMs",
    "P90TotalMs",
    "Report",
];

/// The DDL of every table, as created when missing.
pub fn ddl() -> Vec<String> {
    vec![
        format!(
            "CREATE TABLE {TABLE} (
                Id STRING(32) NOT NULL,
                StartedAt STRING(64) NOT NULL,
                StartedMs INT64 NOT NULL,
                SavedAt TIMESTAMP NOT NULL,
                Label STRING(MAX) NOT NULL,
                Target STRING(MAX) NOT NULL,
                Fingerprint STRING(32) NOT NULL,
                Sql STRING(MAX) NOT NULL,
                Iterations INT64 NOT NULL,
                MedianTotalMs FLOAT64,
                P90TotalMs FLOAT64,
                Report STRING(MAX) NOT NULL
            ) PRIMARY KEY (Id),
            ROW DELETION POLICY (OLDER_THAN(SavedAt, INTERVAL 180 DAY))"
        ),
        format!("CREATE TABLE {PINS} (Id STRING(32) NOT NULL) PRIMARY KEY (Id)"),
        format!(
            "CREATE TABLE {LOADS} (
                Id STRING(32) NOT NULL,
                StartedAt STRING(64) NOT NULL,
                StartedMs INT64 NOT NULL,
                SavedAt TIMESTAMP NOT NULL,
                Label STRING(MAX) NOT NULL,
                Target STRING(MAX) NOT NULL,
                Fingerprint STRING(32) NOT NULL,
                Sql STRING(MAX) NOT NULL,
                Model STRING(16) NOT NULL,
                Steps INT64 NOT NULL,
                Requests INT64 NOT NULL,
                Knee FLOAT64,
                Report STRING(MAX) NOT NULL
            ) PRIMARY KEY (Id),
            ROW DELETION POLICY (OLDER_THAN(SavedAt, INTERVAL 180 DAY))"
        ),
        format!(
            "CREATE TABLE {PIECES} (
                Id STRING(32) NOT NULL,
                Part INT64 NOT NULL,
                SavedAt TIMESTAMP NOT NULL,
                Text STRING(MAX) NOT NULL
            ) PRIMARY KEY (Id, Part),
            ROW DELETION POLICY (OLDER_THAN(SavedAt, INTERVAL 180 DAY))"
        ),
    ]
}

/// A listing row (the columns of [`LISTED`]) as a summary.
pub fn summary(row: Vec<Option<String>>) -> Result<RunSummary, NotARun> {
    let mut cells = row.into_iter();
    let id = cells.next().flatten().unwrap_or_else(|| "(no id)".into());
    let bad = |why: String| NotARun {
        id: id.clone(),
        why,
    };
    let mut text = |column: &str| {
        cells
            .next()
            .flatten()
            .ok_or_else(|| bad(format!("{column} is missing")))
    };
    let started_at = text("StartedAt")?;
    let label = text("Label")?;
    let target = text("Target")?;
    let fingerprint = text("Fingerprint")?;
    let iterations = text("Iterations")?;
    let (median, p90) = (cells.next().flatten(), cells.next().flatten());
    let sql = cells
        .next()
        .flatten()
        .ok_or_else(|| bad("Sql is missing".into()))?;
    let iterations = iterations.parse::<u32>().map_err(|_| {
        bad(format!(
            "Iterations is {iterations}, not a count of iterations (0 to {})",
            u32::MAX
        ))
    })?;
    Ok(RunSummary {
        id: id.clone(),
        started_at,
        label,
        target,
        fingerprint,
        iterations,
        median_total_ms: milliseconds(median, "MedianTotalMs").map_err(bad)?,
        p90_total_ms: milliseconds(p90, "P90TotalMs").map_err(bad)?,
        sql,
    })
}

/// A figure in milliseconds: none, or a finite number at least 0.
fn milliseconds(cell: Option<String>, column: &str) -> Result<Option<f64>, String> {
    let Some(text) = cell else {
        return Ok(None);
    };
    match text.parse::<f64>() {
        Ok(ms) if ms.is_finite() && ms >= 0.0 => Ok(Some(ms)),
        _ => Err(format!("{column} is {text}, not a duration")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(iterations: &str, median: Option<&str>) -> Vec<Option<String>> {
        let cell = |s: &str| Some(s.to_owned());
        vec![
            cell("ab12"),
            cell("2026-03-01T10:00:00Z"),
            cell("label"),
            cell("local"),
            cell("00ff"),
            cell(iterations),
            median.map(str::to_owned),
            None,
            cell("SELECT 1"),
        ]
    }

    #[test]
    fn a_row_is_a_run_or_says_which_row_and_why_not() {
        let run = summary(row("5", Some("1.5"))).expect("a run");
        assert_eq!((run.iterations, run.median_total_ms), (5, Some(1.5)));
        for (iterations, median, why) in [
            ("-1", Some("1.5"), "Iterations is -1"),
            ("1099511627776", Some("1.5"), "Iterations is 1099511627776"),
            ("5", Some("NaN"), "MedianTotalMs is NaN"),
            ("5", Some("-3"), "MedianTotalMs is -3"),
        ] {
            let bad = summary(row(iterations, median)).expect_err("not a run");
            assert_eq!(bad.id, "ab12");
            assert!(bad.why.starts_with(why), "{}", bad.why);
            assert!(bad.notice(TABLE).contains("ab12"));
        }
        let mut no_sql = row("5", None);
        no_sql[8] = None;
        assert_eq!(summary(no_sql).expect_err("no sql").why, "Sql is missing");
    }
}
