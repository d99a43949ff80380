//! Result-set statistics: `query_stats` with its units parsed, the row count and the query plan,
//! converted to plain data.

use std::collections::BTreeMap;
use std::time::Duration;

use prost_types::value::Kind;
use serde::{Deserialize, Serialize};

use crate::proto::google::spanner::v1 as pb;

/// What the server said about a query: its `ResultSetStats`, as plain data.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResultStats {
    /// `query_stats`, every key kept, the known ones parsed.
    pub query_stats: QueryStats,
    /// `row_count_exact` or `row_count_lower_bound` (DML and partitioned DML).
    pub row_count: Option<RowCount>,
    /// The query plan, when the query mode returns one.
    pub plan: Option<Vec<PlanNode>>,
}

/// The row count of a DML statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RowCount {
    /// Exactly this many rows.
    Exact(i64),
    /// At least this many rows (partitioned DML).
    LowerBound(i64),
}

/// The `query_stats` key under which the local instance reports its wait on the client to read.
pub const CLIENT_WAIT_TIME: &str = "client_wait_time";
/// The `query_stats` key under which the local instance reports a query's wait in its queue
/// model for a query thread (admitted, not yet started).
pub const QUEUE_WAIT_TIME: &str = "queue_wait_time";

/// The `query_stats` key under which Cloud Spanner reports, in PROFILE mode, how long a statement
/// waited for locks.
pub const LOCKING_DELAY: &str = "locking_delay";
/// The `query_stats` key under which the local instance reports a statement's wait for locks.
pub const LOCK_WAIT_TIME: &str = "lock_wait_time";
/// The header of a commit's answer in which the local instance gives the commit's wait for locks,
/// in microseconds (Spanner's CommitResponse has no such figure).
pub const COMMIT_LOCK_WAIT_HEADER: &str = "spanprof-lock-wait-us";
/// The `query_stats` key under which the local instance lists a statement's waits for locks (JSON:
/// each wait's key, mode, milliseconds and the transactions it waited behind).
pub const LOCK_WAITS: &str = "lock_waits";
/// The header of a commit's answer in which the local instance lists its waits for locks, as
/// [`LOCK_WAITS`] does a statement's.
pub const COMMIT_LOCK_WAITS_HEADER: &str = "spanprof-lock-waits";
/// The trailer of an ABORTED in which the local instance names the older transaction that wounded
/// the attempt (JSON: its id in hex, the key and the mode it asked for).
pub const WOUNDED_BY_TRAILER: &str = "spanprof-wounded-by";

/// `query_stats`: every key as text, plus the well-known ones parsed into numbers and durations.
///
/// Production writes durations as `"1.22 msecs"` or `"0.5 secs"`; the emulator writes `"1.2ms"`.
/// A value that does not parse leaves its field `None`; the text stays in `entries`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QueryStats {
    /// Every key, its value as text (non-string values as JSON).
    pub entries: BTreeMap<String, String>,
    /// `elapsed_time`.
    pub elapsed: Option<Duration>,
    /// `cpu_time`.
    pub cpu_time: Option<Duration>,
    /// `query_plan_creation_time`.
    pub plan_creation_time: Option<Duration>,
    /// `rows_returned`.
    pub rows_returned: Option<u64>,
    /// `rows_scanned`.
    pub rows_scanned: Option<u64>,
    /// `bytes_returned`.
    pub bytes_returned: Option<u64>,
    /// `data_bytes_read`.
    pub data_bytes_read: Option<u64>,
    /// `optimizer_version`.
    pub optimizer_version: Option<String>,
    /// `client_wait_time`: of the elapsed time, how long the server waited, a message ready, for
    /// the client to read. Only the local instance reports it; production has no such figure.
    #[serde(default)]
    pub client_wait: Option<Duration>,
    /// `queue_wait_time`: of the elapsed time, how long the query waited in the server's queue
    /// for a query thread before its work began. Only the local instance reports it (with its
    /// queue model on); production and the emulator have no such figure.
    #[serde(default)]
    pub queue_wait: Option<Duration>,
    /// `locking_delay` (Cloud Spanner) or `lock_wait_time` (the local instance): of the elapsed
    /// time, how long the statement waited for locks.
    #[serde(default)]
    pub lock_wait: Option<Duration>,
}

impl QueryStats {
    /// Parses every entry of a `query_stats` struct.
    pub fn from_entries(entries: BTreeMap<String, String>) -> Self {
        let duration = |key: &str| entries.get(key).and_then(|v| parse_duration(v));
        let count = |key: &str| entries.get(key).and_then(|v| parse_count(v));
        QueryStats {
            elapsed: duration("elapsed_time"),
            cpu_time: duration("cpu_time"),
            plan_creation_time: duration("query_plan_creation_time"),
            rows_returned: count("rows_returned"),
            rows_scanned: count("rows_scanned"),
            bytes_returned: count("bytes_returned"),
            data_bytes_read: count("data_bytes_read"),
            optimizer_version: entries.get("optimizer_version").cloned(),
            client_wait: duration(CLIENT_WAIT_TIME),
            queue_wait: duration(QUEUE_WAIT_TIME),
            lock_wait: duration(LOCKING_DELAY).or_else(|| duration(LOCK_WAIT_TIME)),
            entries,
        }
    }

    /// `elapsed_time` in milliseconds.
    pub fn elapsed_ms(&self) -> Option<f64> {
        self.elapsed.map(duration_ms)
    }

    /// `cpu_time` in milliseconds.
    pub fn cpu_time_ms(&self) -> Option<f64> {
        self.cpu_time.map(duration_ms)
    }
}

/// A duration in milliseconds, from whole nanoseconds so that "1.22 msecs" gives back exactly 1.22.
pub fn duration_ms(d: Duration) -> f64 {
    d.as_nanos() as f64 / 1e6
}

/// Parses a duration as Spanner and the emulator write them: a decimal number, optional spaces, and a
/// unit among `ns`/`nsecs`, `us`/`usecs`/`µs`, `ms`/`msecs`, `s`/`sec`/`secs`, `min`/`mins`, `h`/`hours`
/// ([`TIME_UNITS`](crate::units::TIME_UNITS)); `None` past
/// [`LONGEST_REPORTED`](crate::units::LONGEST_REPORTED), as for anything else that is not a duration.
pub fn parse_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().ok()?;
    let nanos_per_unit = crate::units::nanos_per(unit)? as f64;
    let nanos = (number * nanos_per_unit).round();
    let longest = crate::units::LONGEST_REPORTED.as_nanos() as f64;
    (nanos.is_finite() && nanos <= longest).then(|| Duration::from_nanos(nanos as u64))
}

fn parse_count(text: &str) -> Option<u64> {
    text.trim().parse().ok()
}

/// One node of a query plan, as plain data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanNode {
    /// Its index in the plan.
    pub index: i32,
    /// "RELATIONAL", "SCALAR" or "UNSPECIFIED".
    pub kind: String,
    /// The operator's name ("Distributed Union", "Table Scan"...).
    pub display_name: String,
    /// Its children: (child index, link type, variable).
    pub child_links: Vec<(i32, String, String)>,
    /// For scalar nodes, a textual description.
    pub short_representation: Option<String>,
    /// For scalar nodes, the subqueries their description names: name to node index.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub subqueries: BTreeMap<String, i32>,
    /// The node's metadata, as JSON (read from a file within a budget:
    /// [`bounded_json`](super::bounded_json)).
    #[serde(default, deserialize_with = "super::bounded_json::bounded")]
    pub metadata: serde_json::Value,
    /// Execution statistics (PROFILE mode), as JSON (read as `metadata` is).
    #[serde(default, deserialize_with = "super::bounded_json::bounded")]
    pub execution_stats: serde_json::Value,
}

impl From<pb::ResultSetStats> for ResultStats {
    fn from(stats: pb::ResultSetStats) -> Self {
        let entries = stats
            .query_stats
            .map(|s| {
                s.fields
                    .into_iter()
                    .map(|(k, v)| (k, value_text(v)))
                    .collect()
            })
            .unwrap_or_default();
        let row_count = stats.row_count.map(|rc| match rc {
            pb::result_set_stats::RowCount::RowCountExact(n) => RowCount::Exact(n),
            pb::result_set_stats::RowCount::RowCountLowerBound(n) => RowCount::LowerBound(n),
        });
        let plan = stats
            .query_plan
            .map(|p| p.plan_nodes.into_iter().map(PlanNode::from).collect());
        ResultStats {
            query_stats: QueryStats::from_entries(entries),
            row_count,
            plan,
        }
    }
}

impl From<pb::PlanNode> for PlanNode {
    fn from(node: pb::PlanNode) -> Self {
        let kind = pb::plan_node::Kind::try_from(node.kind)
            .map(|k| k.as_str_name().to_owned())
            .unwrap_or_else(|_| format!("KIND_{}", node.kind));
        PlanNode {
            index: node.index,
            kind,
            display_name: node.display_name,
            child_links: node
                .child_links
                .into_iter()
                .map(|l| (l.child_index, l.r#type, l.variable))
                .collect(),
            subqueries: node
                .short_representation
                .as_ref()
                .map(|s| s.subqueries.clone().into_iter().collect())
                .unwrap_or_default(),
            short_representation: node.short_representation.map(|s| s.description),
            metadata: node.metadata.map(struct_json).unwrap_or_default(),
            execution_stats: node.execution_stats.map(struct_json).unwrap_or_default(),
        }
    }
}

/// A stats value as text: strings as they are, anything else as JSON.
fn value_text(value: prost_types::Value) -> String {
    match value.kind {
        Some(Kind::StringValue(s)) => s,
        kind => wire_json(prost_types::Value { kind }).to_string(),
    }
}

/// A protobuf `Struct` as a JSON object.
pub(crate) fn struct_json(s: prost_types::Struct) -> serde_json::Value {
    serde_json::Value::Object(
        s.fields
            .into_iter()
            .map(|(k, v)| (k, wire_json(v)))
            .collect(),
    )
}

/// A protobuf `Value` as JSON; non-finite numbers become the strings Spanner would send.
pub(crate) fn wire_json(value: prost_types::Value) -> serde_json::Value {
    use serde_json::Value as J;
    match value.kind {
        None | Some(Kind::NullValue(_)) => J::Null,
        Some(Kind::BoolValue(b)) => J::Bool(b),
        Some(Kind::NumberValue(n)) => serde_json::Number::from_f64(n)
            .map(J::Number)
            .unwrap_or_else(|| J::String(n.to_string())),
        Some(Kind::StringValue(s)) => J::String(s),
        Some(Kind::ListValue(l)) => J::Array(l.values.into_iter().map(wire_json).collect()),
        Some(Kind::StructValue(s)) => struct_json(s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_in_production_and_emulator_formats() {
        let ms = |t: &str| parse_duration(t).map(duration_ms);
        assert_eq!(ms("1.22 msecs"), Some(1.22));
        assert_eq!(ms("0.5 secs"), Some(500.0));
        assert_eq!(ms("1.2ms"), Some(1.2));
        assert_eq!(ms("250 usecs"), Some(0.25));
        assert_eq!(ms("3 mins"), Some(180_000.0));
        assert_eq!(ms("12"), None);
        assert_eq!(ms("fast"), None);
        assert_eq!(ms("1.2 parsecs"), None);
    }

    #[test]
    fn durations_past_the_longest_believed_are_unknown() {
        assert_eq!(
            parse_duration("2400 hours"),
            Some(crate::units::LONGEST_REPORTED)
        );
        assert_eq!(parse_duration("2400.001 hours"), None);
        assert_eq!(parse_duration("5000000 hours"), None);
        assert_eq!(parse_duration("99999999999999999999999 hours"), None);
    }

    #[test]
    fn a_statement_s_wait_for_locks_is_read_under_either_name() {
        let stats = |key: &str| {
            QueryStats::from_entries(
                [(key.to_owned(), "1.5 msecs".to_owned())]
                    .into_iter()
                    .collect(),
            )
        };
        assert_eq!(
            stats(LOCKING_DELAY).lock_wait,
            Some(Duration::from_micros(1500))
        );
        assert_eq!(
            stats(LOCK_WAIT_TIME).lock_wait,
            Some(Duration::from_micros(1500))
        );
        assert_eq!(stats("elapsed_time").lock_wait, None);
    }

    #[test]
    fn unknown_keys_are_kept_and_known_ones_parsed() {
        let entries: BTreeMap<String, String> = [
            ("elapsed_time", "1.22 msecs"),
            ("cpu_time", "0.9 msecs"),
            ("rows_returned", "100"),
            ("remote_server_calls", "0/0"),
            ("bytes_returned", "not a number"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let stats = QueryStats::from_entries(entries);
        assert_eq!(stats.elapsed_ms(), Some(1.22));
        assert_eq!(stats.cpu_time_ms(), Some(0.9));
        assert_eq!(stats.rows_returned, Some(100));
        assert_eq!(stats.bytes_returned, None);
        assert_eq!(
            stats.entries.get("remote_server_calls").map(String::as_str),
            Some("0/0")
        );
        assert_eq!(
            stats.entries.get("bytes_returned").map(String::as_str),
            Some("not a number")
        );
    }
}
