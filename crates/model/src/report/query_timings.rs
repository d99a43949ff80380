//! A streamed call's own timings as the client measured them: what a query's iteration and each
//! statement of a read-write transaction keep, and the parts are computed from.

/// The query's timings, in milliseconds; `None` where not measured, never a made-up zero. The
/// parts of the iteration's time are computed from these once
/// ([`IterationRecord::accounting`](super::IterationRecord::accounting)).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct QueryTimings {
    /// Time to first byte: from sending the request to the first response bytes.
    pub ttfb_ms: Option<f64>,
    /// Time spent awaiting the transport, all of it: the server's work while the client waited
    /// and the network (the parts `server` and `network`).
    pub stream_wait_ms: Option<f64>,
    /// Elapsed time the server reports for the query (not the part `server`: the wait it
    /// explains).
    pub server_elapsed_ms: Option<f64>,
    /// CPU time the server reports for the query.
    pub server_cpu_ms: Option<f64>,
    /// Of the server's elapsed time, how long it reported waiting, a message ready, for the
    /// client to read (the local instance's `client_wait_time`; production reports none).
    pub server_client_wait_ms: Option<f64>,
    /// Of the server's elapsed time, how long the query waited in the server's queue for a query
    /// thread (the local instance's `queue_wait_time`): inside the `server` part, never added.
    pub server_queue_ms: Option<f64>,
    /// Of the server's elapsed time, how long it says the statement waited for locks (Cloud
    /// Spanner's `locking_delay`, the local instance's `lock_wait_time`): the part `lock_wait`,
    /// carved out of `server`.
    pub server_lock_wait_ms: Option<f64>,
    /// Wall time decoding the wire messages (the part `wire_decode` is its CPU time).
    pub wire_decode_wall_ms: Option<f64>,
    /// CPU time the client's thread got during its wire decode.
    pub wire_decode_cpu_ms: Option<f64>,
    /// Wall time merging chunks and making typed rows (the part `row_decode` is its CPU time).
    pub row_decode_wall_ms: Option<f64>,
    /// CPU time the client's thread got during its row decode.
    pub row_decode_cpu_ms: Option<f64>,
    /// Wall time of the client's own work between its waits and decode spans (the part
    /// `client_work` is its CPU time). `None` in older reports (their timelines carry it).
    pub client_work_wall_ms: Option<f64>,
    /// The CPU time its thread got during that work.
    pub client_work_cpu_ms: Option<f64>,
    /// Wall time of the client's own work spent off the CPU: the scheduler's share.
    pub descheduled_ms: Option<f64>,
    /// The iteration's total outside the waits and decode spans' wall time (the client's own
    /// work, its time off the CPU, a cold start's steps, what nothing timed).
    pub outside_wait_and_decode_ms: Option<f64>,
    /// Time spent waiting before re-sending broken streams (resumes' back-off).
    pub backoff_ms: Option<f64>,
    /// A partitioned read's PartitionQuery call.
    pub partition_query_ms: Option<f64>,
}
