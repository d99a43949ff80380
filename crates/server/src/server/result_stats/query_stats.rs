//! `query_stats` in production's formats (every value a string, durations in "msecs" or "secs"),
//! and the `google.protobuf.Struct` helpers the plan's figures are written with too.

use std::collections::BTreeMap;
use std::time::Duration;

use prost_types::value::Kind;

use super::totals::QueryTotals;
use crate::report::LockWaitSeen;
use crate::wire::result_stats::{LOCK_WAIT_TIME, LOCK_WAITS, QUEUE_WAIT_TIME};

/// A duration as production writes it: "1.23 msecs" below a second, "1.23 secs" above.
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1e3;
    if ms < 1000.0 {
        format!("{ms:.2} msecs")
    } else {
        format!("{:.2} secs", ms / 1e3)
    }
}

pub(super) fn string(s: impl Into<String>) -> prost_types::Value {
    prost_types::Value {
        kind: Some(Kind::StringValue(s.into())),
    }
}

pub(super) fn object(
    entries: impl IntoIterator<Item = (&'static str, prost_types::Value)>,
) -> prost_types::Struct {
    prost_types::Struct {
        fields: entries
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect::<BTreeMap<_, _>>(),
    }
}

pub(super) fn nested(s: prost_types::Struct) -> prost_types::Value {
    prost_types::Value {
        kind: Some(Kind::StructValue(s)),
    }
}

/// `query_stats`: every value a string, as production sends them.
pub fn query_stats(
    sql: &str,
    totals: &QueryTotals,
    elapsed: Duration,
    bytes: u64,
) -> prost_types::Struct {
    object([
        ("elapsed_time", string(format_duration(elapsed))),
        ("cpu_time", string(format_duration(totals.cpu_time))),
        (
            "query_plan_creation_time",
            string(format_duration(totals.plan_time)),
        ),
        ("rows_returned", string(totals.rows.to_string())),
        ("rows_scanned", string(totals.rows_scanned.to_string())),
        ("bytes_returned", string(bytes.to_string())),
        ("query_text", string(sql)),
        // Not a Spanner figure: whether the local instance served a plain scan from its row cache.
        ("plain_scan", string(totals.plain_scan.to_string())),
        ("optimizer_version", string("1")),
        ("remote_server_calls", string("0/0")),
        (
            "runtime_creation_time",
            string(format_duration(Duration::ZERO)),
        ),
    ])
}

/// What a statement of a read-write transaction measured, for its `query_stats`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatementFigures {
    /// From its request's arrival on the read-write path to its answer.
    pub elapsed: Duration,
    /// The CPU time of its run on the read-write connection (its replay included).
    pub cpu: Duration,
    /// Rows it returned.
    pub rows: u64,
    /// Bytes of the values it returned.
    pub bytes: u64,
    /// Its wait for locks in the lock table, when it ran (a replayed answer ran nothing).
    pub lock_wait: Option<Duration>,
    /// Its wait for the model's one read-write connection, when it ran: a queue, not a lock.
    pub queue_wait: Option<Duration>,
}

/// `query_stats` of a statement in a read-write transaction: what it measured, and the local
/// instance's own `lock_wait_time` (not a Spanner figure: Cloud Spanner says `locking_delay`) and
/// `queue_wait_time` (its wait for the one read-write connection), each never more than the
/// elapsed time it is part of.
pub fn statement_stats(
    sql: &str,
    figures: &StatementFigures,
    waits: &[LockWaitSeen],
) -> prost_types::Struct {
    let mut stats = object([
        ("elapsed_time", string(format_duration(figures.elapsed))),
        ("cpu_time", string(format_duration(figures.cpu))),
        ("rows_returned", string(figures.rows.to_string())),
        ("bytes_returned", string(figures.bytes.to_string())),
        ("query_text", string(sql)),
        ("remote_server_calls", string("0/0")),
    ]);
    if let Some(waited) = figures.lock_wait {
        let waited = format_duration(waited.min(figures.elapsed));
        stats
            .fields
            .insert(LOCK_WAIT_TIME.to_owned(), string(waited));
    }
    if let Some(text) = (!waits.is_empty())
        .then(|| serde_json::to_string(waits).ok())
        .flatten()
    {
        stats.fields.insert(LOCK_WAITS.to_owned(), string(text));
    }
    if let Some(waited) = figures.queue_wait {
        let waited = format_duration(waited.min(figures.elapsed));
        stats
            .fields
            .insert(QUEUE_WAIT_TIME.to_owned(), string(waited));
    }
    stats
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::result_stats::parse_duration;

    #[test]
    fn durations_use_production_units_and_parse_back() {
        assert_eq!(format_duration(Duration::from_micros(1230)), "1.23 msecs");
        assert_eq!(format_duration(Duration::from_millis(2500)), "2.50 secs");
        assert_eq!(
            parse_duration(&format_duration(Duration::from_micros(1230))),
            Some(Duration::from_micros(1230))
        );
    }
}
