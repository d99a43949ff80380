//! What one timed iteration measured (and each partition of a partitioned one), or why it failed:
//! plain data that the iteration, the wire floor, partitioned reads and the engine share.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tonic::Status;

use super::error::ClientError;
use super::headers::RequestId;
use super::server_timing::ServerTiming;
use super::timeouts::Readable;
use crate::report::{Code, Lane, LockWaitSeen, waits_from_text};
use crate::wire::result_stats::{COMMIT_LOCK_WAIT_HEADER, COMMIT_LOCK_WAITS_HEADER};
use crate::wire::{DecodeError, Field, ResultStats, StreamCounters};

/// What one iteration measured.
#[derive(Debug, Clone, Default)]
pub struct IterationTiming {
    /// From sending the request to the end of the stream.
    pub total: Duration,
    /// From sending the request to the first message's bytes.
    pub ttfb: Option<Duration>,
    /// Time spent awaiting the transport.
    pub network: Duration,
    /// Time spent turning bytes into messages.
    pub wire_decode: Duration,
    /// Time spent turning messages into rows.
    pub row_decode: Duration,
    /// Rows decoded.
    pub rows: u64,
    /// What the decoder counted (messages, chunked values, wire bytes...).
    pub counters: StreamCounters,
    /// Times the stream was resumed.
    pub resumes: u32,
    /// The server's statistics, when the query mode returns them.
    pub stats: Option<ResultStats>,
    /// The front end's `server-timing`, when present.
    pub server_timing: ServerTiming,
    /// The result's columns.
    pub columns: Option<Arc<[Field]>>,
    /// The id of the transaction the request began inline, when the answer named one.
    pub transaction_id: Option<Vec<u8>>,
    /// The precommit token with the highest sequence number the answer carried (a multiplexed
    /// session's read-write transaction).
    pub precommit_token:
        Option<crate::proto::google::spanner::v1::MultiplexedSessionPrecommitToken>,
    /// A partitioned read's partitions, each with its own figures; empty for a plain read.
    pub partitions: Vec<PartitionTiming>,
    /// When it began (its timeline's origin).
    pub began: Option<Instant>,
    /// The CPU time its thread got while wire-decoding (its wall time where the clock is missing).
    pub wire_decode_cpu: Duration,
    /// The CPU time its thread got while row-decoding.
    pub row_decode_cpu: Duration,
    /// The decode spans' and the client's own work's wall time off the CPU, summed span by span.
    pub descheduled: Duration,
    /// The client's own work between its waits and decode spans (the rows' callback,
    /// bookkeeping): its wall time.
    pub client_work: Duration,
    /// The CPU time its thread got during that work.
    pub client_work_cpu: Duration,
    /// Waiting before re-sending broken streams (resumes' back-off).
    pub backoff: Duration,
    /// A partitioned read's PartitionQuery call.
    pub partition_query: Option<Duration>,
    /// Its timeline: one lane per stream (per partition of a partitioned read).
    pub lanes: Vec<Lane>,
    /// The id of its query call's first attempt (a partitioned read's PartitionQuery); a resume
    /// of the same request has the same id with the attempt counted up.
    pub request_id: Option<RequestId>,
    /// The W3C trace id its queries carried, with end-to-end tracing on.
    pub trace_id: Option<String>,
    /// Google's operation latency: from its first request sent to the last byte of the last
    /// response (resumes included, the decoding of the last message not).
    pub operation: Option<Duration>,
    /// Each RPC attempt's time (Google's attempt latencies): from the attempt's request to the
    /// end or break of its stream. A partitioned read's PartitionQuery first, then each
    /// partition's attempts in partition order.
    pub attempts: Vec<Duration>,
    /// Its wait for locks as the answer's headers give it: only the local instance's answer to a
    /// read-write transaction's statement without statistics (a read) carries it.
    pub server_lock_wait: Option<HeaderLockWait>,
}

/// A request's wait for locks in its answer's headers or trailers (the local instance's
/// `spanprof-lock-wait-us` and `spanprof-lock-waits`; Spanner sends no such thing).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HeaderLockWait {
    /// The time waited in all.
    pub waited: Duration,
    /// The waits, named (bounded as `waits_from_text` bounds them).
    pub named: Vec<LockWaitSeen>,
}

impl HeaderLockWait {
    /// The wait `headers` give, if they give one; what is not a number of microseconds or the
    /// waits' JSON is ignored.
    pub fn from_headers(headers: &tonic::metadata::MetadataMap) -> Option<HeaderLockWait> {
        let micros = headers
            .get(COMMIT_LOCK_WAIT_HEADER)?
            .to_str()
            .ok()?
            .parse::<u64>()
            .ok()?;
        let named = headers
            .get(COMMIT_LOCK_WAITS_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(waits_from_text)
            .unwrap_or_default();
        Some(HeaderLockWait {
            waited: Duration::from_micros(micros),
            named,
        })
    }
}

impl IterationTiming {
    /// The time of the total outside the wait and the decodes' wall time (written
    /// `outside_wait_and_decode_ms`; the record's accounting says it apart).
    pub fn other(&self) -> Duration {
        self.total
            .saturating_sub(self.network + self.wire_decode + self.row_decode)
    }
}

/// Why an iteration failed.
#[derive(Debug, thiserror::Error)]
pub enum IterationError {
    /// The server answered with an error.
    #[error("{}: {}", .0.code(), super::status_words(.0))]
    Status(Status),
    /// The stream could not be decoded.
    #[error("{0}")]
    Decode(#[from] DecodeError),
    /// The call could not be made (no token for its headers, say).
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The stream broke where it cannot be resumed.
    #[error("cannot resume: {0}")]
    CannotResume(String),
    /// No message arrived within the first-response limit of a request.
    #[error("no answer within {} of the request (the first-response limit)", Readable(*.after))]
    NoFirstResponse {
        /// The limit.
        after: Duration,
    },
    /// The iteration did not end within its limit.
    #[error("the iteration did not finish within {} (the iteration limit, --timeout)", Readable(*.after))]
    Deadline {
        /// The limit.
        after: Duration,
    },
    /// The server sent more than the client accepts (a message or a resume token past its limit).
    #[error("refused: {0}")]
    TooLarge(String),
    /// What was asked cannot be done this way.
    #[error("{0}")]
    Unsupported(&'static str),
    /// One partition of a partitioned read failed.
    #[error("partition {} of {of}: {error}", .index + 1)]
    Partition {
        /// The partition, from 0.
        index: usize,
        /// The number of partitions.
        of: usize,
        /// Why it failed.
        error: Box<IterationError>,
    },
    /// The server says it returned a different number of rows than were decoded.
    #[error("the server returned {server} rows but {decoded} were decoded: rows were lost")]
    RowCountMismatch {
        /// rows_returned from the server's stats.
        server: u64,
        /// Rows the decoder produced.
        decoded: u64,
    },
}

impl IterationError {
    /// The gRPC status the server answered with, when it answered with one (a partition's
    /// included), as the code's name: `InvalidArgument`, `NotFound`...
    pub fn status_code(&self) -> Option<Code> {
        match self {
            IterationError::Status(status) => Code::from_number(status.code() as i32),
            IterationError::Partition { error, .. } => error.status_code(),
            _ => None,
        }
    }

    /// Whether the call was never made for want of an access token (a partition's included):
    /// see [`ClientError::is_token_failure`].
    pub fn is_token_failure(&self) -> bool {
        match self {
            IterationError::Client(e) => e.is_token_failure(),
            IterationError::Partition { error, .. } => error.is_token_failure(),
            _ => false,
        }
    }
}

/// What one partition of an iteration measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PartitionTiming {
    /// From the partition's request to its last message.
    pub total: Duration,
    /// Rows it returned.
    pub rows: u64,
    /// Its messages.
    pub messages: u64,
    /// Their bytes.
    pub wire_bytes: u64,
    /// Times its stream was resumed.
    pub resumes: u32,
    /// The server's elapsed time for it, when its statistics came back.
    pub server: Option<Duration>,
}
