//! The record of a profile: what was run, and where the time of each iteration went.
//!
//! Plain data at the boundary between the engine (which fills it in), the statistics and the
//! exporters (which only read it). Times are milliseconds as `f64`; a figure that could not be
//! measured for an iteration is `None`, never a made-up zero.

use serde::{Deserialize, Serialize};

use std::collections::BTreeSet;

use crate::plan::{PlanAggregate, PlanHistory};

pub use crate::text::printable;

mod accounting;
mod figures;
mod id;
mod timeline;

pub use crate::kind::{QueryMode, Reader, SessionKind};
pub use crate::part::{Measure, Part, Split};
pub use accounting::{Accounting, Parts};

pub use figures::{Figure, figure_summaries};
pub use id::RunId;
pub use timeline::{
    Between, Bucket, Lane, MAX_BUCKETS, Message, RUN_MESSAGE_LIMIT, Resume, SetupStep, Span,
    Timeline,
};

/// How an iteration ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// The query ran to its last row.
    Ok,
    /// The query failed; the iteration's `error` says why.
    Error,
    /// The user or a deadline stopped the query before its last row.
    Cancelled,
}

impl Status {
    /// The lowercase name used in every export: `ok`, `error` or `cancelled`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Error => "error",
            Status::Cancelled => "cancelled",
        }
    }
}

/// One execution of the query: where its time went, and how much came back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IterationRecord {
    /// The label of the run this iteration belongs to.
    pub run: String,
    /// The iteration's number within its run, counting from 0, warm-ups first (they are numbered too).
    pub iteration: u32,
    /// Whether this was a warm-up iteration, left out of the statistics.
    pub warmup: bool,
    /// How the iteration ended.
    pub status: Status,
    /// When the iteration started, RFC 3339 in UTC.
    pub started_at: String,
    /// From sending the request to the last row decoded (or to the failure).
    pub total_ms: f64,
    /// Time to first byte: from sending the request to the first response bytes.
    pub ttfb_ms: Option<f64>,
    /// Time spent awaiting the transport, all of it: the server's work while the client waited
    /// and the network. Its parts are `server` and `network` ([`IterationRecord::accounting`]).
    /// Written `stream_wait_ms` (the JSON and the CSV); reports before it wrote `network_ms`.
    #[serde(rename = "stream_wait_ms", alias = "network_ms")]
    pub network_ms: Option<f64>,
    /// Elapsed time the server reports for the query (not the part `server`, the wait it
    /// explains). Written `server_elapsed_ms`; reports before it wrote `server_ms`.
    #[serde(rename = "server_elapsed_ms", alias = "server_ms")]
    pub server_ms: Option<f64>,
    /// CPU time the server reports for the query.
    pub server_cpu_ms: Option<f64>,
    /// Latency the Google front end reports (the `server-timing` `gfet4t7` header).
    pub gfe_ms: Option<f64>,
    /// Latency the API front end reports.
    pub afe_ms: Option<f64>,
    /// Wall time the client spent decoding the wire messages: bytes to PartialResultSets (the
    /// reference decoder), or to their framing (the fast decoder). The part `wire_decode` is its
    /// CPU time. Written `wire_decode_wall_ms`; reports before it wrote `wire_decode_ms`.
    #[serde(rename = "wire_decode_wall_ms", alias = "wire_decode_ms")]
    pub wire_decode_ms: Option<f64>,
    /// Wall time the client spent merging chunked values and turning wire values into typed rows
    /// (the part `row_decode` is its CPU time). Written `row_decode_wall_ms`; reports before it
    /// wrote `row_decode_ms`.
    #[serde(rename = "row_decode_wall_ms", alias = "row_decode_ms")]
    pub row_decode_ms: Option<f64>,
    /// The part of `total_ms` outside the waits and decode spans' wall time (the client's own
    /// work, its time off the CPU, a cold start's steps, what nothing timed): the parts
    /// `client_work`, `descheduled` and `untimed` and the steps say it apart. Written
    /// `outside_wait_and_decode_ms`; reports before it wrote `other_ms`.
    #[serde(rename = "outside_wait_and_decode_ms", alias = "other_ms")]
    pub other_ms: Option<f64>,
    /// Rows the client decoded.
    pub rows: u64,
    /// Rows the server says it returned, from the result set statistics.
    pub server_rows: Option<u64>,
    /// PartialResultSet messages received.
    pub messages: u64,
    /// Values that arrived split over several messages.
    pub chunked_values: u64,
    /// Bytes of response messages received.
    pub wire_bytes: u64,
    /// How many times the stream was resumed after a transient failure.
    pub resumes: u32,
    /// Why the iteration failed or was cancelled, if it did not end `Ok`.
    pub error: Option<String>,
    /// Its place in the whole profile's schedule, from 0, warm-ups included: iterations of the
    /// variants of one profile, interleaved, are told apart in time by it. `None` in older reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u32>,
    /// Where a client's time went, measured at the local instance (`spanprof client`): from the
    /// client's start (a command's process start) to its first query request reaching the server:
    /// start-up, channel, session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_ms: Option<f64>,
    /// From the first query request to the server's transport taking the first message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_byte_ms: Option<f64>,
    /// From the first message taken to the last (resumes included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfer_ms: Option<f64>,
    /// Of the transfer, the time the server waited, a message ready, because the client was not
    /// reading (HTTP/2 flow control): the direct measure of a slow decoder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked_ms: Option<f64>,
    /// From the last message taken to the client's end (a command's exit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail_ms: Option<f64>,
    /// How the client's rows were checked against the rows the server sent: `values` (every
    /// value of every row), `count` (a `rows N` line), or absent (not checked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
    /// CPU time the client's thread got during its wire decode (beside `wire_decode_ms`, its wall
    /// time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wire_decode_cpu_ms: Option<f64>,
    /// CPU time the client's thread got during its row decode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_decode_cpu_ms: Option<f64>,
    /// Wall time of the client's own work (wire and row decode) that its thread spent off the
    /// CPU: the scheduler's share, not the decoder's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub descheduled_ms: Option<f64>,
    /// The `x-goog-spanner-request-id` of the iteration's query call, its first attempt
    /// (`1.<process>.<client>.<channel>.<request>.<attempt>`; a resume is the same id with the
    /// attempt counted up; a partitioned read's is its PartitionQuery's): what support finds the
    /// call by; failed iterations keep it too. `None` in older reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// The W3C trace id the iteration's queries carried with end-to-end tracing on: Cloud Trace
    /// shows the server's own spans under it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<String>,
    /// Google's operation latency: from the first request sent to the last byte of the last
    /// response, resumes included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation_ms: Option<f64>,
    /// Google's attempt count: the RPC attempts of the iteration (1 plus its resumes; for a
    /// partitioned read, PartitionQuery and every partition's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempts: Option<u32>,
    /// Each attempt's time (Google's attempt latencies), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attempt_ms: Vec<f64>,
    /// What happened when: every message, decode span and resume ([`Timeline`]). `None` in older
    /// reports and for iterations that did not finish.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline: Option<Timeline>,
    /// A cold iteration's steps before its query (`profile --cold`), each `None` in a warm one:
    /// resolving the host name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dns_ms: Option<f64>,
    /// The TCP connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_ms: Option<f64>,
    /// The TLS handshake (0 in plaintext).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_ms: Option<f64>,
    /// The HTTP/2 handshake, to the channel's first ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http2_ms: Option<f64>,
    /// A new token source and its first token (0 without authentication).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_ms: Option<f64>,
    /// CreateSession.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_ms: Option<f64>,
    /// The kind of session the iteration ran on, as the server granted it: `regular` or
    /// `multiplexed` (see the run's `session` for the kind asked for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_kind: Option<String>,
    /// Wall time of the client's own work between its waits and decode spans (the rows'
    /// callback, bookkeeping; the part `client_work` is its CPU time). `None` in older reports
    /// (their timelines' lanes carry it). Written `client_work_wall_ms`; reports before it wrote
    /// `client_work_ms`.
    #[serde(
        default,
        rename = "client_work_wall_ms",
        alias = "client_work_ms",
        skip_serializing_if = "Option::is_none"
    )]
    pub client_work_ms: Option<f64>,
    /// The CPU time its thread got during that work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_work_cpu_ms: Option<f64>,
    /// Time spent waiting before re-sending broken streams (resumes' back-off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff_ms: Option<f64>,
    /// A partitioned read's PartitionQuery call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition_query_ms: Option<f64>,
    /// The gRPC status code the server answered a failed iteration with (`InvalidArgument`,
    /// `NotFound`...); `None` when it did not answer with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// Of the server's elapsed time, how long it reported waiting, a message ready, for the
    /// client to read (the local instance's `client_wait_time`; production reports no such
    /// figure): its elapsed time less this is its own work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_client_wait_ms: Option<f64>,
    /// Of the server's elapsed time, how long the query waited in the server's queue for a query
    /// thread before its work began (the local instance's `queue_wait_time`, with its queue model
    /// on): the queueing inside the `server` part, shown under it, never added to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_queue_ms: Option<f64>,
}

impl IterationRecord {
    /// A record with nothing measured yet: status ok, every figure unknown, every count zero.
    pub fn new(
        run: impl Into<String>,
        iteration: u32,
        warmup: bool,
        started_at: impl Into<String>,
    ) -> Self {
        IterationRecord {
            run: run.into(),
            iteration,
            warmup,
            status: Status::Ok,
            started_at: started_at.into(),
            total_ms: 0.0,
            ttfb_ms: None,
            network_ms: None,
            server_ms: None,
            server_cpu_ms: None,
            gfe_ms: None,
            afe_ms: None,
            wire_decode_ms: None,
            row_decode_ms: None,
            other_ms: None,
            rows: 0,
            server_rows: None,
            messages: 0,
            chunked_values: 0,
            wire_bytes: 0,
            resumes: 0,
            error: None,
            seq: None,
            startup_ms: None,
            first_byte_ms: None,
            transfer_ms: None,
            blocked_ms: None,
            tail_ms: None,
            check: None,
            wire_decode_cpu_ms: None,
            row_decode_cpu_ms: None,
            descheduled_ms: None,
            request_id: None,
            trace_id: None,
            operation_ms: None,
            attempts: None,
            attempt_ms: Vec::new(),
            timeline: None,
            dns_ms: None,
            tcp_ms: None,
            tls_ms: None,
            http2_ms: None,
            token_ms: None,
            session_ms: None,
            session_kind: None,
            client_work_ms: None,
            client_work_cpu_ms: None,
            backoff_ms: None,
            partition_query_ms: None,
            server_client_wait_ms: None,
            server_queue_ms: None,
            error_code: None,
        }
    }

    /// Whether it failed with an error no retry can fix: the server refused the query itself
    /// (bad SQL, a table not found, no permission, a failed precondition), so every later
    /// iteration would fail alike. A session the server no longer knows is not one: the official
    /// clients make a new session and try again.
    pub fn failed_for_good(&self) -> bool {
        let session_gone = self
            .error
            .as_deref()
            .is_some_and(|e| e.contains("Session not found"));
        self.status == Status::Error
            && !session_gone
            && self.error_code.as_deref().is_some_and(|code| {
                matches!(
                    code,
                    "InvalidArgument"
                        | "NotFound"
                        | "PermissionDenied"
                        | "FailedPrecondition"
                        | "Unauthenticated"
                        | "Unimplemented"
                        | "OutOfRange"
                )
            })
    }

    /// This iteration's time in `measure`, in milliseconds: its total, or one of its parts (0
    /// when it did not have it), from its [accounting](IterationRecord::accounting).
    pub fn measure_ms(&self, measure: Measure) -> f64 {
        match measure {
            Measure::Total => self.total_ms,
            Measure::Part(part) => self.accounting().parts.ms(part),
        }
    }

    /// From the first query request to the client's end, as the server saw it (request to first
    /// byte, first to last byte, last byte to exit): what a client takes for the query itself,
    /// measured alike for any program and for spanprof's own reads. `None` unless all three were
    /// measured.
    pub fn request_to_end_ms(&self) -> Option<f64> {
        Some(self.first_byte_ms? + self.transfer_ms? + self.tail_ms?)
    }

    /// Whether this iteration counts in the statistics: not a warm-up, and ended `Ok`.
    pub fn is_timed(&self) -> bool {
        !self.warmup && self.status == Status::Ok
    }
}

/// What a run was asked to do.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RunConfig {
    /// The run's label, shown in every export and copied into each of its iterations.
    pub label: String,
    /// Where the query ran: `local`, `endpoint 127.0.0.1:9010` (the emulator, or any plaintext
    /// endpoint), or `cloud projects/p/instances/i/databases/d`.
    pub target: String,
    /// The database it ran against, by name (`projects/p/instances/i/databases/d`, the local
    /// instance's and the emulator's too), as the run was started: what the history keeps the run
    /// under. Empty in older reports.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub database: String,
    /// The SQL text of the query.
    pub sql: String,
    /// The query parameters as (`name:TYPE`, value) pairs, values as the user wrote them.
    pub params: Vec<(String, String)>,
    /// The query mode requested (written `normal`, `with-stats` or `profile`).
    #[serde(with = "crate::kind::mode_text")]
    pub query_mode: QueryMode,
    /// How many timed iterations were asked for.
    pub iterations: u32,
    /// How many warm-up iterations were asked for before them.
    pub warmup: u32,
    /// What read the answer: one of spanprof's decoders, the wire floor, or another program.
    pub decoder: Reader,
    /// The request options set, as (name, value) in the command line's spelling
    /// (`priority`, `low`); empty for a plain request.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<(String, String)>,
    /// When the run is one point of a parameter sweep: the parameter and its value here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<SweepPoint>,
    /// How the profile ordered its variants' iterations (`interleaved`, `blocked`, `shuffled (seed
    /// N)`), when it had several; empty otherwise.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub order: String,
    /// The command whose client was profiled (`spanprof client`), program first; empty for a
    /// query's run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// How the local instance streamed to the client (`shape`, `fail-every`,
    /// `max-message-bytes`...), as (name, value) in the command line's spelling; empty when not
    /// said.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stream: Vec<(String, String)>,
    /// Whether every iteration was a cold start (`--cold`): a new connection, token source and
    /// session before the query.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cold: bool,
    /// The name of the machine the client ran on; empty in older reports.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub client_host: String,
    /// The client's time limits, as (name, value) (`connect`, `5 s`); empty in older reports.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timeouts: Vec<(String, String)>,
    /// The kind of session asked for; `None` in older reports.
    #[serde(
        default,
        with = "crate::kind::session_text",
        skip_serializing_if = "Option::is_none"
    )]
    pub session: Option<SessionKind>,
    /// The kind the server granted when it differs from the one asked for (the emulator grants a
    /// regular session to a multiplexed request); `None` when it granted what was asked.
    #[serde(
        default,
        with = "crate::kind::session_text",
        skip_serializing_if = "Option::is_none"
    )]
    pub session_granted: Option<SessionKind>,
    /// The CPU the window's own threads took while the run was measured, when it ran in the
    /// window (not asked for, but said beside what was: the window and the local instance share
    /// one process and its cores); `None` for the command line's runs and in older reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_cpu: Option<WindowCpu>,
}

/// The CPU the window took while a run was measured: every thread of its process outside the
/// engine and the local instance, from the run's start to its end.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct WindowCpu {
    /// CPU seconds its threads used, user and system.
    pub cpu_s: f64,
    /// The run's wall time over which they were counted, seconds.
    pub wall_s: f64,
}

impl WindowCpu {
    /// How many cores the window kept busy on average (`cpu_s / wall_s`); 0 over no time.
    pub fn cores(&self) -> f64 {
        if self.wall_s > 0.0 && self.cpu_s.is_finite() {
            self.cpu_s / self.wall_s
        } else {
            0.0
        }
    }
}

/// One value of a swept query parameter: a sweep of `@n` over 100, 1000, 10000 makes three runs,
/// each holding its point.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SweepPoint {
    /// The parameter, without `@`.
    pub param: String,
    /// Its Spanner type name.
    pub type_name: String,
    /// Its value in this run, as written.
    pub value: String,
}

impl SweepPoint {
    /// The value as a number, when it is one (the x axis of a sweep's curve).
    pub fn number(&self) -> Option<f64> {
        self.value
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
    }
}

/// A whole run: its configuration and every iteration, warm-ups and failures included.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    /// What the run was asked to do.
    pub config: RunConfig,
    /// When the run started, RFC 3339 in UTC.
    pub started_at: String,
    /// Every iteration in the order it ran.
    pub iterations: Vec<IterationRecord>,
    /// The query plans the iterations returned (PROFILE and PLAN modes): each distinct plan and
    /// each iteration's per-operator figures. Empty, and left out of the JSON, for runs without
    /// plans; reports written before plans were kept read back with it empty.
    #[serde(default, skip_serializing_if = "PlanHistory::is_empty")]
    pub plans: PlanHistory,
    /// Why the run stopped before its iterations were done, which it says: its first iteration
    /// failed with an error no retry can fix ([`IterationRecord::failed_for_good`]), or a few
    /// iterations in a row could not get an access token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

/// What a run's report holds besides its records: the configuration, the start, the plans and
/// why it stopped early. The engine's `Finished` event carries one per variant, its records having
/// crossed one by one before it; [`ReportHead::with_records`] makes the report.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportHead {
    /// What the run was asked to do.
    pub config: RunConfig,
    /// When the run started, RFC 3339 in UTC.
    pub started_at: String,
    /// The query plans its iterations returned ([`RunReport::plans`]).
    pub plans: PlanHistory,
    /// Why the run stopped before its iterations were done ([`RunReport::stopped`]).
    pub stopped: Option<String>,
}

impl ReportHead {
    /// A run of `config` started at `started_at`, no plan yet, not stopped.
    pub fn new(config: RunConfig, started_at: String) -> Self {
        ReportHead {
            config,
            started_at,
            plans: PlanHistory::default(),
            stopped: None,
        }
    }

    /// The report: this, and `iterations`, its records in the order they ran.
    pub fn with_records(self, iterations: Vec<IterationRecord>) -> RunReport {
        RunReport {
            config: self.config,
            started_at: self.started_at,
            iterations,
            plans: self.plans,
            stopped: self.stopped,
        }
    }
}

impl RunReport {
    /// The iterations its plan aggregates cover: `selection` when it is not empty, else the
    /// timed iterations (not warm-ups, ended ok); when none of those returned a plan, every
    /// iteration that did (a run of warm-ups only still shows its plan).
    pub fn plan_iterations(&self, selection: &BTreeSet<u32>) -> BTreeSet<u32> {
        if !selection.is_empty() {
            return selection.clone();
        }
        let with_plan: BTreeSet<u32> = self.plans.iterations.iter().map(|i| i.iteration).collect();
        let timed: BTreeSet<u32> = self
            .timed()
            .map(|r| r.iteration)
            .filter(|i| with_plan.contains(i))
            .collect();
        if timed.is_empty() { with_plan } else { timed }
    }

    /// The aggregates of its plans over [`RunReport::plan_iterations`], most iterations first.
    pub fn plan_aggregates(&self, selection: &BTreeSet<u32>) -> Vec<PlanAggregate> {
        self.plans.aggregate(&self.plan_iterations(selection))
    }

    /// The iterations the statistics are computed over: not warm-ups, and ended `Ok`.
    pub fn timed(&self) -> impl Iterator<Item = &IterationRecord> {
        self.iterations.iter().filter(|record| record.is_timed())
    }

    /// The times of `measure` over the timed iterations, in run order.
    pub fn samples(&self, measure: Measure) -> Vec<f64> {
        self.timed()
            .map(|record| record.measure_ms(measure))
            .collect()
    }
}

// For tests here and in the floors above (their dev-dependency turns on `test-support`).
#[cfg(any(test, feature = "test-support"))]
impl RunReport {
    /// A run labelled `label` whose iterations all ended ok, timed, with these totals (tests).
    pub fn with_totals(label: &str, totals: &[f64]) -> RunReport {
        RunReport {
            config: RunConfig {
                label: label.into(),
                target: "local".into(),
                sql: "SELECT 1".into(),
                params: vec![],
                query_mode: QueryMode::Normal,
                iterations: totals.len() as u32,
                warmup: 0,
                decoder: Reader::Fast,
                ..Default::default()
            },
            started_at: "2026-01-02T03:04:05Z".into(),
            iterations: (0u32..)
                .zip(totals)
                .map(|(i, &total_ms)| IterationRecord {
                    total_ms,
                    ..IterationRecord::new(label, i, false, "2026-01-02T03:04:05Z")
                })
                .collect(),
            plans: PlanHistory::default(),
            stopped: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_query_fails_for_good_and_a_lost_session_or_an_outage_does_not() {
        let failed = |code: &str, error: &str| IterationRecord {
            status: Status::Error,
            error: Some(error.into()),
            error_code: Some(code.into()),
            ..IterationRecord::new("r", 0, false, "t")
        };
        assert!(failed("InvalidArgument", "Unrecognized name: Nme").failed_for_good());
        assert!(failed("NotFound", "Table not found: Nope").failed_for_good());
        assert!(
            !failed("NotFound", "Session not found: projects/p/.../sessions/s").failed_for_good()
        );
        assert!(!failed("Unavailable", "connection reset").failed_for_good());
        assert!(!failed("DeadlineExceeded", "deadline").failed_for_good());
    }

    fn record(iteration: u32, warmup: bool, status: Status, total_ms: f64) -> IterationRecord {
        IterationRecord {
            status,
            total_ms,
            ..IterationRecord::new("r", iteration, warmup, "2026-01-02T03:04:05Z")
        }
    }

    fn report(iterations: Vec<IterationRecord>) -> RunReport {
        RunReport {
            config: RunConfig {
                label: "r".into(),
                target: "local".into(),
                sql: "SELECT 1".into(),
                params: vec![],
                query_mode: QueryMode::Normal,
                iterations: 3,
                warmup: 1,
                decoder: Reader::Named("spanprof".into()),
                ..Default::default()
            },
            started_at: "2026-01-02T03:04:05Z".into(),
            iterations,
            plans: PlanHistory::default(),
            stopped: None,
        }
    }

    #[test]
    fn control_characters_print_as_escapes() {
        assert_eq!(printable("narrow"), "narrow");
        assert_eq!(printable("a\u{1b}[31mred\u{7}"), "a\\u{1b}[31mred\\u{7}");
        assert_eq!(printable("two\nlines"), "two\\u{a}lines");
        assert_eq!(printable("東京 ok"), "東京 ok");
    }

    #[test]
    fn timed_leaves_out_warmups_and_failures() {
        let report = report(vec![
            record(1, true, Status::Ok, 50.0),
            record(2, false, Status::Ok, 10.0),
            record(3, false, Status::Error, 1.0),
            record(4, false, Status::Cancelled, 2.0),
            record(5, false, Status::Ok, 20.0),
        ]);
        let timed: Vec<u32> = report.timed().map(|r| r.iteration).collect();
        assert_eq!(timed, vec![2, 5]);
        assert_eq!(report.samples(Measure::Total), vec![10.0, 20.0]);
    }

    #[test]
    fn samples_of_a_part_count_it_as_zero_where_an_iteration_did_not_have_it() {
        let mut first = record(1, false, Status::Ok, 10.0);
        first.network_ms = Some(6.0);
        first.server_ms = Some(4.0);
        let second = record(2, false, Status::Ok, 12.0);
        let report = report(vec![first, second]);
        assert_eq!(report.samples(Measure::Part(Part::Server)), vec![4.0, 0.0]);
        assert_eq!(
            report.samples(Measure::Part(Part::Untimed)),
            vec![4.0, 12.0]
        );
    }

    #[test]
    fn the_window_cpu_round_trips_and_is_absent_from_other_reports() -> Result<(), serde_json::Error>
    {
        let mut config = report(vec![]).config;
        let plain = serde_json::to_string(&config)?;
        assert!(!plain.contains("window_cpu"), "{plain}");
        // A report written before the field (this one) reads back without it.
        assert_eq!(serde_json::from_str::<RunConfig>(&plain)?.window_cpu, None);
        config.window_cpu = Some(WindowCpu {
            cpu_s: 0.25,
            wall_s: 0.5,
        });
        let json = serde_json::to_string(&config)?;
        assert!(
            json.contains(r#""window_cpu":{"cpu_s":0.25,"wall_s":0.5}"#),
            "{json}"
        );
        let back = serde_json::from_str::<RunConfig>(&json)?;
        assert_eq!(back, config);
        assert_eq!(back.window_cpu.map(|w| w.cores()), Some(0.5));
        assert_eq!(WindowCpu::default().cores(), 0.0);
        Ok(())
    }

    #[test]
    fn status_serializes_lowercase() -> Result<(), serde_json::Error> {
        for status in [Status::Ok, Status::Error, Status::Cancelled] {
            let json = serde_json::to_string(&status)?;
            assert_eq!(json, format!("\"{}\"", status.as_str()));
            assert_eq!(serde_json::from_str::<Status>(&json)?, status);
        }
        Ok(())
    }
}
