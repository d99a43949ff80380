//! What the target itself says of a read-write load run (`load --read-write --server-stats`): the
//! rows of SPANNER_SYS.LOCK_STATS_TOP_MINUTE and TXN_STATS_TOP_MINUTE for the intervals the run
//! reached, read once the interval holding its end had closed; or why there are none (a target
//! that serves no such tables, as the emulator; a wait that ran out or was cancelled). Plain data:
//! the engine reads the rows and hands them to [`lock_row`] and [`txn_row`], which refuse what a
//! server should not send (a wrong type, a negative count, a figure that is no number) and clip
//! what is too long; the analysis compares them with the run's own figures.
//!
//! The rows arrive from the network: every text is cut at [`MAX_TEXT_CHARS`], a row's samples at
//! [`MAX_SAMPLES`], and a table's rows at [`MAX_STATS_ROWS`] (a notice says so).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::wire::{Row, Value};

/// The most rows kept of one table (LOCK_STATS keeps 100 per interval at most in production:
/// twenty intervals of a busy database).
pub const MAX_STATS_ROWS: usize = 2_000;
/// The most characters kept of a text (a row range's start key, a tag, a column, a reason).
pub const MAX_TEXT_CHARS: usize = 256;
/// The most sample lock requests kept of a row (production sends up to 20).
pub const MAX_SAMPLES: usize = 20;
/// The largest figure of seconds a row may hold (a lock wait, a latency): about 30 years.
pub const MAX_SECONDS: f64 = 1e9;
/// The longest a run waits for the target's interval to close, whatever it asks.
pub const MAX_STATS_WAIT_S: f64 = 3_600.0;

/// The target's own statistics of a run, or why it has none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerStats {
    /// The transaction tag the run's transactions carried (TXN_STATS is read for it).
    pub tag: String,
    /// The run's first and last moments on the wall clock (RFC 3339): rows of intervals ending
    /// after the first and no later than the interval holding the last are the run's.
    pub run_from: String,
    /// See `run_from`.
    pub run_to: String,
    /// The rows, or why none were read.
    pub read: StatsRead,
    /// Whether the run's transactions read without locks (optimistic, or repeatable read), which
    /// the target's statistics do not count.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lock_free: bool,
}

/// Whether the target's statistics were read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum StatsRead {
    /// The target serves them: the rows of the run's intervals.
    Served(ServedStats),
    /// The target serves no such tables (the emulator): the server's answer, in short.
    NotServed {
        /// The server's error, in short.
        why: String,
    },
    /// The target may serve them, but they were not read: the wait ran out or was cancelled, or
    /// the query failed otherwise.
    NotRead {
        /// Why, in words.
        why: String,
    },
}

/// The rows read of the run's intervals.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServedStats {
    /// The ends of the intervals the run reached (RFC 3339), oldest first.
    pub intervals: Vec<String>,
    /// LOCK_STATS_TOP_MINUTE's rows of those intervals.
    pub lock_rows: Vec<LockStatsRow>,
    /// TXN_STATS_TOP_MINUTE's rows of those intervals for the run's tag.
    pub txn_rows: Vec<TxnStatsRow>,
    /// What was cut or noticed (a table past [`MAX_STATS_ROWS`], a row refused).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<String>,
}

/// One row of LOCK_STATS_TOP_MINUTE.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LockStatsRow {
    /// INTERVAL_END (RFC 3339).
    pub interval_end: String,
    /// ROW_RANGE_START_KEY, as text (`Accounts(1)`, `Accounts(1)+` for a range's start).
    pub row_range_start_key: String,
    /// LOCK_WAIT_SECONDS.
    pub lock_wait_seconds: f64,
    /// SAMPLE_LOCK_REQUESTS.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sample_lock_requests: Vec<SampleLockRequest>,
}

/// One of a LOCK_STATS row's sample lock requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SampleLockRequest {
    /// The column (`Accounts._exists` for the row).
    pub column: String,
    /// The lock mode.
    pub lock_mode: String,
    /// The requester's transaction tag.
    pub transaction_tag: String,
}

/// One row of TXN_STATS_TOP_MINUTE.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TxnStatsRow {
    /// INTERVAL_END (RFC 3339).
    pub interval_end: String,
    /// TRANSACTION_TAG.
    pub tag: String,
    /// ATTEMPT_COUNT: every attempt, aborted ones included.
    pub attempt_count: u64,
    /// COMMIT_ATTEMPT_COUNT.
    pub commit_attempt_count: u64,
    /// COMMIT_ABORT_COUNT.
    pub commit_abort_count: u64,
    /// COMMIT_RETRY_COUNT.
    pub commit_retry_count: u64,
    /// AVG_TOTAL_LATENCY_SECONDS, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub avg_total_latency_seconds: Option<f64>,
}

/// Why a row is not one the tables hold.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StatsRowError {
    /// Fewer columns than asked for.
    #[error("a row of {found} columns where {expected} were asked for")]
    Width {
        /// Asked for.
        expected: usize,
        /// Found.
        found: usize,
    },
    /// A column of another type, or a figure that is no finite, non-negative number.
    #[error("{column} is not {wanted}")]
    Column {
        /// The column.
        column: &'static str,
        /// What it should be.
        wanted: &'static str,
    },
}

/// The columns [`lock_row`] reads, in order.
pub const LOCK_COLUMNS: &str =
    "INTERVAL_END, ROW_RANGE_START_KEY, LOCK_WAIT_SECONDS, SAMPLE_LOCK_REQUESTS";
/// The columns [`txn_row`] reads, in order.
pub const TXN_COLUMNS: &str = "INTERVAL_END, TRANSACTION_TAG, ATTEMPT_COUNT, COMMIT_ATTEMPT_COUNT, \
     COMMIT_ABORT_COUNT, COMMIT_RETRY_COUNT, AVG_TOTAL_LATENCY_SECONDS";

/// A row of [`LOCK_COLUMNS`], with its interval's end since the Unix epoch.
pub fn lock_row(row: &Row) -> Result<(Duration, LockStatsRow), StatsRowError> {
    let cells = width(row, 4)?;
    let (end, interval_end) = timestamp(&cells[0], "INTERVAL_END")?;
    let key = match &cells[1] {
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Value::String(s) => s.clone(),
        _ => return Err(wrong("ROW_RANGE_START_KEY", "BYTES")),
    };
    let seconds = figure(&cells[2], "LOCK_WAIT_SECONDS")?.unwrap_or(0.0);
    let samples = match &cells[3] {
        Value::Array(items) => items.iter().take(MAX_SAMPLES).filter_map(sample).collect(),
        _ => Vec::new(),
    };
    Ok((
        end,
        LockStatsRow {
            interval_end,
            row_range_start_key: clip(&key),
            lock_wait_seconds: seconds,
            sample_lock_requests: samples,
        },
    ))
}

/// A row of [`TXN_COLUMNS`], with its interval's end since the Unix epoch.
pub fn txn_row(row: &Row) -> Result<(Duration, TxnStatsRow), StatsRowError> {
    let cells = width(row, 7)?;
    let (end, interval_end) = timestamp(&cells[0], "INTERVAL_END")?;
    let tag = match &cells[1] {
        Value::String(s) => clip(s),
        Value::Null => String::new(),
        _ => return Err(wrong("TRANSACTION_TAG", "STRING")),
    };
    Ok((
        end,
        TxnStatsRow {
            interval_end,
            tag,
            attempt_count: count(&cells[2], "ATTEMPT_COUNT")?,
            commit_attempt_count: count(&cells[3], "COMMIT_ATTEMPT_COUNT")?,
            commit_abort_count: count(&cells[4], "COMMIT_ABORT_COUNT")?,
            commit_retry_count: count(&cells[5], "COMMIT_RETRY_COUNT")?,
            avg_total_latency_seconds: figure(&cells[6], "AVG_TOTAL_LATENCY_SECONDS")?,
        },
    ))
}

/// A TIMESTAMP cell at or after the Unix epoch: its time since the epoch and its RFC 3339 text.
pub fn timestamp(value: &Value, column: &'static str) -> Result<(Duration, String), StatsRowError> {
    match value {
        Value::Timestamp(t) => {
            let seconds =
                u64::try_from(t.seconds()).map_err(|_| wrong(column, "a TIMESTAMP after 1970"))?;
            Ok((Duration::new(seconds, t.nanos()), t.to_string()))
        }
        _ => Err(wrong(column, "a TIMESTAMP")),
    }
}

/// A server's text cut to [`MAX_TEXT_CHARS`], control characters left as they are (the views
/// escape them when they print).
pub fn clip(text: &str) -> String {
    match text.char_indices().nth(MAX_TEXT_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

fn width(row: &Row, expected: usize) -> Result<&[Value], StatsRowError> {
    if row.0.len() < expected {
        return Err(StatsRowError::Width {
            expected,
            found: row.0.len(),
        });
    }
    Ok(&row.0[..expected])
}

fn wrong(column: &'static str, wanted: &'static str) -> StatsRowError {
    StatsRowError::Column { column, wanted }
}

/// A FLOAT64 cell (NULL: none), finite, non-negative and at most [`MAX_SECONDS`].
fn figure(value: &Value, column: &'static str) -> Result<Option<f64>, StatsRowError> {
    let f = match value {
        Value::Null => return Ok(None),
        Value::Float64(f) => *f,
        Value::Float32(f) => f64::from(*f),
        Value::Int64(n) => *n as f64,
        _ => return Err(wrong(column, "a FLOAT64")),
    };
    if !f.is_finite() || !(0.0..=MAX_SECONDS).contains(&f) {
        return Err(wrong(column, "a finite, non-negative number"));
    }
    Ok(Some(f))
}

/// An INT64 cell, non-negative.
fn count(value: &Value, column: &'static str) -> Result<u64, StatsRowError> {
    match value {
        Value::Int64(n) => u64::try_from(*n).map_err(|_| wrong(column, "a non-negative count")),
        Value::Null => Ok(0),
        _ => Err(wrong(column, "an INT64")),
    }
}

/// A STRUCT<column, lock_mode, transaction_tag> of SAMPLE_LOCK_REQUESTS, when it is one.
fn sample(value: &Value) -> Option<SampleLockRequest> {
    let Value::Struct(fields) = value else {
        return None;
    };
    let text = |i: usize| match fields.get(i) {
        Some(Value::String(s)) => Some(clip(s)),
        Some(Value::Null) | None => Some(String::new()),
        _ => None,
    };
    Some(SampleLockRequest {
        column: text(0)?,
        lock_mode: text(1)?,
        transaction_tag: text(2)?,
    })
}

impl ServerStats {
    /// Whether this is what spanprof could have written: at most [`MAX_STATS_ROWS`] rows of each
    /// table, texts within [`MAX_TEXT_CHARS`] (and a little), figures finite and bounded.
    pub fn check(&self) -> Result<(), String> {
        let long = |t: &str| t.chars().count() > MAX_TEXT_CHARS + 1;
        if [&self.tag, &self.run_from, &self.run_to]
            .into_iter()
            .any(|t| long(t))
        {
            return Err("server_stats holds a text longer than spanprof keeps".into());
        }
        let served = match &self.read {
            StatsRead::Served(s) => s,
            StatsRead::NotServed { why } | StatsRead::NotRead { why } => {
                return if long(why) {
                    Err("server_stats' reason is longer than spanprof keeps".into())
                } else {
                    Ok(())
                };
            }
        };
        if served.lock_rows.len() > MAX_STATS_ROWS
            || served.txn_rows.len() > MAX_STATS_ROWS
            || served.intervals.len() > MAX_STATS_ROWS
            || served.notices.len() > 16
        {
            return Err(format!(
                "server_stats holds more than {MAX_STATS_ROWS} rows of a table"
            ));
        }
        for row in &served.lock_rows {
            let seconds = row.lock_wait_seconds;
            if !seconds.is_finite() || !(0.0..=MAX_SECONDS).contains(&seconds) {
                return Err(format!(
                    "server_stats' LOCK_WAIT_SECONDS is {seconds}: a figure is finite, \
                     non-negative and bounded"
                ));
            }
            if row.sample_lock_requests.len() > MAX_SAMPLES
                || long(&row.row_range_start_key)
                || long(&row.interval_end)
            {
                return Err("server_stats holds a lock row past spanprof's bounds".into());
            }
        }
        for row in &served.txn_rows {
            let latency = row.avg_total_latency_seconds.unwrap_or(0.0);
            if !latency.is_finite() || !(0.0..=MAX_SECONDS).contains(&latency) {
                return Err("server_stats holds a latency that is no bounded figure".into());
            }
            if long(&row.tag) || long(&row.interval_end) {
                return Err("server_stats holds a transaction row past spanprof's bounds".into());
            }
        }
        Ok(())
    }

    /// The served rows, when the target served them.
    pub fn served(&self) -> Option<&ServedStats> {
        match &self.read {
            StatsRead::Served(s) => Some(s),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Timestamp;

    fn ts(seconds: i64) -> Value {
        Value::Timestamp(Timestamp::new(seconds, 0).expect("in range"))
    }

    fn lock(key: Value, seconds: Value, samples: Value) -> Row {
        Row(vec![ts(1_700_000_040), key, seconds, samples])
    }

    #[test]
    fn a_lock_row_is_read_with_its_samples() {
        let sample = Value::Struct(vec![
            Value::String("Accounts._exists".into()),
            Value::String("WriterShared".into()),
            Value::String("spanprof-load-0a1b2c3d".into()),
        ]);
        let row = lock(
            Value::Bytes(b"Accounts(1)".to_vec()),
            Value::Float64(0.25),
            Value::Array(vec![sample]),
        );
        let (end, row) = lock_row(&row).expect("a good row");
        assert_eq!(end, Duration::from_secs(1_700_000_040));
        assert_eq!(row.row_range_start_key, "Accounts(1)");
        assert_eq!(row.lock_wait_seconds, 0.25);
        assert_eq!(row.sample_lock_requests[0].lock_mode, "WriterShared");
        assert!(row.interval_end.starts_with("2023-11-14T22:14:00"));
    }

    #[test]
    fn hostile_rows_are_refused_or_clipped_never_panicked_on() {
        let bytes = || Value::Bytes(b"T(1)".to_vec());
        for bad in [
            lock(Value::Int64(3), Value::Float64(1.0), Value::Null),
            lock(bytes(), Value::String("1".into()), Value::Null),
            lock(bytes(), Value::Float64(f64::NAN), Value::Null),
            lock(bytes(), Value::Float64(-1.0), Value::Null),
            lock(bytes(), Value::Float64(f64::INFINITY), Value::Null),
            Row(vec![
                Value::String("yesterday".into()),
                bytes(),
                Value::Float64(1.0),
                Value::Null,
            ]),
            Row(vec![ts(0)]),
            Row(vec![ts(-60), bytes(), Value::Float64(1.0), Value::Null]),
        ] {
            assert!(lock_row(&bad).is_err(), "{bad:?} is refused");
        }
        let huge = "x".repeat(1 << 20);
        let good = Value::Struct(vec![
            Value::String(huge.clone()),
            Value::String("Exclusive".into()),
            Value::Null,
        ]);
        let bad = Value::Struct(vec![
            Value::String("c".into()),
            Value::Int64(7),
            Value::Null,
        ]);
        let samples = Value::Array(
            std::iter::once(good)
                .chain(std::iter::once(Value::String("not a struct".into())))
                .chain(std::iter::repeat_n(bad, 10_000))
                .collect(),
        );
        let (_, row) = lock_row(&lock(
            Value::Bytes(huge.clone().into_bytes()),
            Value::Float64(2.0),
            samples,
        ))
        .expect("clipped, not refused");
        assert_eq!(row.row_range_start_key.chars().count(), MAX_TEXT_CHARS + 1);
        assert_eq!(
            row.sample_lock_requests.len(),
            1,
            "a sample that is no STRUCT of texts is left out, and past 20 none is looked at"
        );
        assert_eq!(
            row.sample_lock_requests[0].column.chars().count(),
            MAX_TEXT_CHARS + 1
        );
        let txn = |attempts: Value| {
            Row(vec![
                ts(60),
                Value::String(huge.clone()),
                attempts,
                Value::Int64(1),
                Value::Int64(0),
                Value::Int64(0),
                Value::Float64(0.01),
            ])
        };
        let (_, row) = txn_row(&txn(Value::Int64(5))).expect("a good row");
        assert_eq!(
            (row.attempt_count, row.tag.chars().count()),
            (5, MAX_TEXT_CHARS + 1)
        );
        assert!(txn_row(&txn(Value::Int64(-5))).is_err());
        assert!(txn_row(&txn(Value::Float64(5.0))).is_err());
    }

    #[test]
    fn a_report_past_the_bounds_is_refused_on_read_back() {
        let row = LockStatsRow {
            interval_end: "2026-12-05T18:31:00Z".into(),
            row_range_start_key: "Accounts(1)".into(),
            lock_wait_seconds: 1.0,
            sample_lock_requests: Vec::new(),
        };
        let stats = |rows: Vec<LockStatsRow>| ServerStats {
            tag: "t".into(),
            run_from: String::new(),
            run_to: String::new(),
            read: StatsRead::Served(ServedStats {
                lock_rows: rows,
                ..Default::default()
            }),
            lock_free: false,
        };
        assert_eq!(stats(vec![row.clone()]).check(), Ok(()));
        assert!(
            stats(vec![row.clone(); MAX_STATS_ROWS + 1])
                .check()
                .is_err()
        );
        let negative = LockStatsRow {
            lock_wait_seconds: -1.0,
            ..row.clone()
        };
        assert!(stats(vec![negative]).check().is_err());
        let long = LockStatsRow {
            row_range_start_key: "k".repeat(MAX_TEXT_CHARS * 4),
            ..row
        };
        assert!(stats(vec![long]).check().is_err());
        let not_served = ServerStats {
            read: StatsRead::NotServed {
                why: "NOT_FOUND".into(),
            },
            ..stats(Vec::new())
        };
        let json = serde_json::to_string(&not_served).expect("serialises");
        assert!(json.contains("\"status\":\"not_served\""), "{json}");
        assert_eq!(
            serde_json::from_str::<ServerStats>(&json).expect("reads back"),
            not_served
        );
    }
}
