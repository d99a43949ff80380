//! What a read-write transaction measured: each attempt's actions timed, how each attempt ended,
//! and the back-off after it. The engine makes the iteration's record from these.

use std::time::Duration;

use crate::client::headers::RequestId;
use crate::client::retry_info::RetrySource;
use crate::client::timing::{IterationError, IterationTiming};
use crate::report::{LockWaitSeen, WoundSeen};

/// What kind of step a [`ActionTiming`] timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActionCall {
    /// BeginTransaction.
    Begin,
    /// A query, streamed.
    Query,
    /// A DML statement, streamed.
    Dml,
    /// A script's READ: rows by key, streamed (StreamingRead).
    Read,
    /// ExecuteBatchDml.
    BatchDml,
    /// Mutations kept for the commit.
    Mutate,
    /// `SLEEP`.
    Think,
    /// Commit.
    Commit,
}

/// One step of an attempt, timed.
#[derive(Debug)]
pub struct ActionTiming {
    /// What it was.
    pub call: ActionCall,
    /// Its place in the script, from 1 (0 for begin and commit).
    pub index: u32,
    /// When it started, from the attempt's start.
    pub at: Duration,
    /// Its wall time.
    pub took: Duration,
    /// Rows returned (a query) or changed (DML, batch DML summed).
    pub rows: Option<u64>,
    /// A streamed statement's timing, as a query's iteration has it.
    pub statement: Option<IterationTiming>,
    /// Commits sent again after a multiplexed session's retry reply.
    pub commit_retries: u32,
    /// Times the commit was sent again because its answer was lost.
    pub asked_again: u32,
    /// The commit's wait for locks, as the server's answer gave it (the local instance's
    /// `spanprof-lock-wait-us` header; Spanner gives no such figure for a commit).
    pub server_lock_wait: Option<Duration>,
    /// The commit's waits for locks, named (the local instance's `spanprof-lock-waits` header).
    pub lock_waits: Vec<LockWaitSeen>,
}

/// How an attempt ended.
#[derive(Debug)]
pub enum AttemptEnd {
    /// Committed.
    Committed {
        /// The commit timestamp (RFC 3339).
        timestamp: Option<String>,
        /// The mutation count of the commit's statistics, when asked for.
        mutation_count: Option<u64>,
    },
    /// Aborted by the server at `at`.
    Aborted {
        /// The step it aborted at.
        at: ActionCall,
        /// The server's message.
        message: String,
        /// The RetryInfo it asked for, and where it was read.
        retry: Option<(Duration, RetrySource)>,
        /// The older transaction that wounded it, when the server named it (the local
        /// instance's `spanprof-wounded-by` trailer).
        wounded_by: Option<WoundSeen>,
    },
    /// Failed at `at` for another reason; rolled back, not retried.
    Failed {
        /// The step it failed at.
        at: ActionCall,
        /// Why.
        error: IterationError,
    },
    /// Cancelled during it; rolled back.
    Cancelled,
    /// The Commit got no answer: it may or may not have committed.
    Unknown {
        /// Why no answer came.
        error: IterationError,
    },
}

/// One attempt, timed.
#[derive(Debug)]
pub struct AttemptTiming {
    /// How it ended.
    pub end: AttemptEnd,
    /// Its actions.
    pub actions: Vec<ActionTiming>,
    /// Its wall time.
    pub total: Duration,
    /// The transaction's id, once the server gave one.
    pub transaction_id: Option<Vec<u8>>,
    /// Its first call's request id.
    pub request_id: Option<RequestId>,
    /// The back-off slept after it, before the next attempt.
    pub backoff: Option<Duration>,
    /// How its commit was resolved when the commit's answer was lost, in words.
    pub commit_resolution: Option<String>,
}

/// A whole transaction, attempt by attempt.
#[derive(Debug)]
pub struct TransactionTiming {
    /// Every attempt, in order; the last ended the transaction.
    pub attempts: Vec<AttemptTiming>,
    /// Its wall time, back-offs included.
    pub total: Duration,
    /// Why no further attempt was made after an abort, when the policy stopped it (attempts,
    /// deadline, `--retry none`).
    pub gave_up: Option<String>,
}

impl TransactionTiming {
    /// Whether it committed.
    pub fn committed(&self) -> bool {
        matches!(
            self.attempts.last().map(|a| &a.end),
            Some(AttemptEnd::Committed { .. })
        )
    }
}
