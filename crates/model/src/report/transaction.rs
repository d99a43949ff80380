//! A read-write transaction's iteration (`profile --read-write`): one logical transaction, run in
//! as many attempts as it took. Each attempt keeps its own timeline of actions (begin, each
//! statement with a query's figures, batch DML, think time, commit) and how it ended: committed,
//! aborted at a action with the server's message and the RetryInfo it asked for and the back-off
//! slept after it, failed, cancelled, or with its commit's outcome unknown. The iteration's parts
//! are made from these in `accounting.rs`.

use serde::{Deserialize, Serialize};

use super::query_timings::QueryTimings;

/// What one read-write transaction did, attempt by attempt.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TransactionRecord {
    /// Every attempt, in the order they ran; the last one ended the transaction.
    pub attempts: Vec<Attempt>,
    /// The committed attempt's commit timestamp (RFC 3339), when it committed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_timestamp: Option<String>,
    /// The mutations the commit applied, as Spanner counts them (with `--commit-stats`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutation_count: Option<u64>,
    /// The transaction tag every request of it carried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
}

impl TransactionRecord {
    /// The attempts the server aborted.
    pub fn aborted(&self) -> impl Iterator<Item = &Attempt> {
        self.attempts
            .iter()
            .filter(|a| a.outcome == AttemptOutcome::Aborted)
    }

    /// The attempt that ended it (the last).
    pub fn last(&self) -> Option<&Attempt> {
        self.attempts.last()
    }
}

/// How an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttemptOutcome {
    /// Its commit succeeded.
    Committed,
    /// The server aborted it (ABORTED); the transaction ran again unless the retry policy stopped.
    Aborted,
    /// A action failed for another reason; it was rolled back and not retried.
    Failed,
    /// The run was cancelled during it; it was rolled back.
    Cancelled,
    /// Its Commit was sent and no answer came (a deadline, a lost connection), nor to the same
    /// Commit sent again: it may or may not have committed; the transaction was not run again.
    Unknown,
}

impl AttemptOutcome {
    /// Its name in reports: `committed`, `aborted`, `failed`, `cancelled`, `unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptOutcome::Committed => "committed",
            AttemptOutcome::Aborted => "aborted",
            AttemptOutcome::Failed => "failed",
            AttemptOutcome::Cancelled => "cancelled",
            AttemptOutcome::Unknown => "unknown",
        }
    }
}

/// A action of an attempt, in the order the script ran them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionKind {
    /// BeginTransaction (an explicit begin).
    Begin,
    /// A query (ExecuteStreamingSql).
    Query,
    /// A DML statement (ExecuteStreamingSql).
    Dml,
    /// A script's READ: rows by key (StreamingRead), with its lock hint.
    Read,
    /// ExecuteBatchDml.
    BatchDml,
    /// Mutations buffered for the commit (no call).
    Mutate,
    /// The script's `SLEEP`.
    Think,
    /// Commit.
    Commit,
    /// Rollback (after a failure or a cancel; outside the parts).
    Rollback,
}

impl ActionKind {
    /// Its name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            ActionKind::Begin => "begin",
            ActionKind::Query => "query",
            ActionKind::Dml => "dml",
            ActionKind::Read => "read",
            ActionKind::BatchDml => "batch_dml",
            ActionKind::Mutate => "mutate",
            ActionKind::Think => "think",
            ActionKind::Commit => "commit",
            ActionKind::Rollback => "rollback",
        }
    }
}

/// One action of an attempt.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Action {
    /// What it was.
    pub kind: Option<ActionKind>,
    /// Its place in the script (the first action is 1); 0 for begin and commit.
    #[serde(default)]
    pub index: u32,
    /// When it started, in milliseconds from the attempt's start.
    pub at_ms: f64,
    /// Its wall time.
    pub ms: f64,
    /// Rows returned (a query) or changed (DML: the server's exact row count; batch DML: summed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<u64>,
    /// A streamed statement's own figures, as a query's iteration has them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<StoredTimings>,
    /// Commits sent again after a multiplexed session's retry reply (the precommit token).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub commit_retries: u32,
    /// Times the commit was sent again because its answer was lost (a transaction commits once:
    /// the server answers with the commit it made).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub commit_asked_again: u32,
    /// A commit's wait for locks, as the server gave it (the local instance does; Spanner's
    /// commit answer has no such figure): carved out of the commit's time as `lock_wait`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_lock_wait_ms: Option<f64>,
    /// The waits for locks it went through, each on a key behind some transactions, as the
    /// server named them (the local instance does).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lock_waits: Vec<super::LockWaitSeen>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// One attempt of a transaction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    /// How it ended.
    pub outcome: AttemptOutcome,
    /// Its wall time, from its first request to its end (the back-off after it not included).
    pub total_ms: f64,
    /// Its actions, in order.
    pub actions: Vec<Action>,
    /// The action it aborted or failed at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<ActionKind>,
    /// The server's message, when it aborted or failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The retry delay the server asked for (google.rpc.RetryInfo), when it aborted with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_delay_ms: Option<f64>,
    /// Where that RetryInfo was read: `details` (the status details) or `trailer`
    /// (`google.rpc.retryinfo-bin`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_info_from: Option<String>,
    /// The back-off actually slept after it, before the next attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff_ms: Option<f64>,
    /// Its transaction id, in hex, once the server gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction_id: Option<String>,
    /// The request id of its first call (the attempt counts up per retry).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// How its commit's outcome was learned when the commit's answer was lost (asked again: the
    /// server's answer), or why it stayed unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_resolution: Option<String>,
    /// The older transaction that wounded it, when the server said (the local instance does).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wounded_by: Option<super::WoundSeen>,
}

impl Attempt {
    /// An attempt with `outcome` and no actions yet.
    pub fn new(outcome: AttemptOutcome) -> Self {
        Attempt {
            outcome,
            total_ms: 0.0,
            actions: Vec::new(),
            ended_at: None,
            message: None,
            retry_delay_ms: None,
            retry_info_from: None,
            backoff_ms: None,
            transaction_id: None,
            request_id: None,
            commit_resolution: None,
            wounded_by: None,
        }
    }

    /// The wall time of its actions of `kind`.
    pub fn ms_of(&self, kind: ActionKind) -> f64 {
        self.actions
            .iter()
            .filter(|s| s.kind == Some(kind))
            .map(|s| s.ms)
            .sum()
    }

    /// Its streamed statements' figures, in order.
    pub fn statements(&self) -> impl Iterator<Item = QueryTimings> + '_ {
        self.actions
            .iter()
            .filter_map(|s| s.query.as_ref().map(QueryTimings::from))
    }
}

/// A streamed statement's figures as reports keep them (the names a query's iteration writes).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct StoredTimings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ttfb_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stream_wait_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    server_elapsed_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    server_cpu_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    server_client_wait_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    server_queue_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    server_lock_wait_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    wire_decode_wall_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    wire_decode_cpu_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    row_decode_wall_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    row_decode_cpu_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_work_wall_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_work_cpu_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    descheduled_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    backoff_ms: Option<f64>,
}

impl From<&QueryTimings> for StoredTimings {
    fn from(q: &QueryTimings) -> Self {
        StoredTimings {
            ttfb_ms: q.ttfb_ms,
            stream_wait_ms: q.stream_wait_ms,
            server_elapsed_ms: q.server_elapsed_ms,
            server_cpu_ms: q.server_cpu_ms,
            server_client_wait_ms: q.server_client_wait_ms,
            server_queue_ms: q.server_queue_ms,
            server_lock_wait_ms: q.server_lock_wait_ms,
            wire_decode_wall_ms: q.wire_decode_wall_ms,
            wire_decode_cpu_ms: q.wire_decode_cpu_ms,
            row_decode_wall_ms: q.row_decode_wall_ms,
            row_decode_cpu_ms: q.row_decode_cpu_ms,
            client_work_wall_ms: q.client_work_wall_ms,
            client_work_cpu_ms: q.client_work_cpu_ms,
            descheduled_ms: q.descheduled_ms,
            backoff_ms: q.backoff_ms,
        }
    }
}

impl From<&StoredTimings> for QueryTimings {
    fn from(s: &StoredTimings) -> Self {
        QueryTimings {
            ttfb_ms: s.ttfb_ms,
            stream_wait_ms: s.stream_wait_ms,
            server_elapsed_ms: s.server_elapsed_ms,
            server_cpu_ms: s.server_cpu_ms,
            server_client_wait_ms: s.server_client_wait_ms,
            server_queue_ms: s.server_queue_ms,
            server_lock_wait_ms: s.server_lock_wait_ms,
            wire_decode_wall_ms: s.wire_decode_wall_ms,
            wire_decode_cpu_ms: s.wire_decode_cpu_ms,
            row_decode_wall_ms: s.row_decode_wall_ms,
            row_decode_cpu_ms: s.row_decode_cpu_ms,
            client_work_wall_ms: s.client_work_wall_ms,
            client_work_cpu_ms: s.client_work_cpu_ms,
            descheduled_ms: s.descheduled_ms,
            outside_wait_and_decode_ms: None,
            backoff_ms: s.backoff_ms,
            partition_query_ms: None,
        }
    }
}
