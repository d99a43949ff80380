//! What one iteration measured, typed by what was measured: its place in the run, how it ended
//! ([`Outcome`]), its answer's counts, the query's timings, Google's figures, the ids of its call,
//! and, when there were any, a cold start's steps ([`ColdSteps`]) and a subject's timings
//! ([`SubjectTimings`]). Reports keep it flat, under the names they always had
//! ([`stored`](self::stored)), so every report written before reads back.

use crate::kind::SessionKind;
use crate::part::ColdStep;

use super::outcome::{Outcome, Status};
use super::query_timings::QueryTimings;
use super::timeline::Timeline;
use super::transaction::TransactionRecord;

mod stored;

/// One execution of the query: where its time went, and how much came back.
#[derive(Debug, Clone, PartialEq)]
pub struct IterationRecord {
    /// The label of the run this iteration belongs to.
    pub run: String,
    /// The iteration's number within its run, counting from 0, warm-ups first (they are numbered too).
    pub iteration: u32,
    /// Whether this was a warm-up iteration, left out of the statistics.
    pub warmup: bool,
    /// Its place in the whole profile's schedule, from 0, warm-ups included: iterations of the
    /// variants of one profile, interleaved, are told apart in time by it. `None` in older reports.
    pub seq: Option<u32>,
    /// When the iteration started, RFC 3339 in UTC.
    pub started_at: String,
    /// From sending the request to the last row decoded (or to the failure); from the cold
    /// start's first step when there was one.
    pub total_ms: f64,
    /// How it ended.
    pub outcome: Outcome,
    /// The kind of session it ran on, as the server granted it (see the run's `session` for the
    /// kind asked for).
    pub session_kind: Option<SessionKind>,
    /// How much came back.
    pub answer: Answer,
    /// The query's own timings, as the client measured them.
    pub query: QueryTimings,
    /// The figures Google's client libraries report of a call.
    pub google: GoogleFigures,
    /// The ids its query call carried.
    pub ids: RequestIds,
    /// A cold start's steps, when the iteration made one (`profile --cold`).
    pub cold: Option<ColdSteps>,
    /// Where a subject's time went, as the local instance saw it, when the iteration ran a
    /// subject (`spanprof client`).
    pub subject: Option<SubjectTimings>,
    /// What happened when: every message, decode span and resume ([`Timeline`]). `None` in older
    /// reports and for iterations that did not finish.
    pub timeline: Option<Timeline>,
    /// A read-write transaction's attempts (`profile --read-write`); `None` for a query.
    pub transaction: Option<TransactionRecord>,
}

/// How much an iteration's answer held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Answer {
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
}

/// The figures Google's client libraries report of a call.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GoogleFigures {
    /// Latency the Google front end reports (the `server-timing` `gfet4t7` header).
    pub gfe_ms: Option<f64>,
    /// Latency the API front end reports.
    pub afe_ms: Option<f64>,
    /// Operation latency: from the first request sent to the last byte of the last response,
    /// resumes included.
    pub operation_ms: Option<f64>,
    /// Attempt count: the RPC attempts of the iteration (1 plus its resumes; for a partitioned
    /// read, PartitionQuery and every partition's).
    pub attempts: Option<u32>,
    /// Each attempt's time, in order.
    pub attempt_ms: Vec<f64>,
}

/// The ids an iteration's query call carried: what support and a trace viewer find it by.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RequestIds {
    /// The `x-goog-spanner-request-id` of its first attempt
    /// (`1.<process>.<client>.<channel>.<request>.<attempt>`; a resume is the same id with the
    /// attempt counted up; a partitioned read's is its PartitionQuery's).
    pub request_id: Option<String>,
    /// The W3C trace id the call carried with end-to-end tracing on.
    pub trace_id: Option<String>,
}

/// A cold start's steps, each step's time in milliseconds, indexed by [`ColdStep`]: what the client
/// times a cold start into and the record keeps.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ColdSteps([f64; 6]);

impl ColdSteps {
    /// The steps' times, in [`ColdStep::ALL`] order.
    pub fn new(ms: [f64; 6]) -> ColdSteps {
        ColdSteps(ms)
    }

    /// Sets the time `step` took.
    pub fn set(&mut self, step: ColdStep, ms: f64) {
        self.0[step.index()] = ms;
    }

    /// The time `step` took.
    pub fn ms(&self, step: ColdStep) -> f64 {
        self.0[step.index()]
    }

    /// Each step with its time, in the order they ran.
    pub fn iter(&self) -> impl Iterator<Item = (ColdStep, f64)> + '_ {
        ColdStep::ALL.into_iter().map(|s| (s, self.ms(s)))
    }

    /// All the steps' time.
    pub fn total_ms(&self) -> f64 {
        self.0.iter().sum()
    }
}

/// How a subject's rows were checked against the rows the server sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// Every value of every row.
    Values,
    /// A `rows N` line's count.
    Count,
}

impl Check {
    /// Its name in reports: `values` or `count`.
    pub fn as_str(self) -> &'static str {
        match self {
            Check::Values => "values",
            Check::Count => "count",
        }
    }

    /// The check a report names.
    pub fn parse(name: &str) -> Option<Check> {
        [Check::Values, Check::Count]
            .into_iter()
            .find(|c| c.as_str() == name)
    }
}

/// Where a subject's time went, measured at the local instance (`spanprof client`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SubjectTimings {
    /// From the subject's start (a command's process start) to its first query request reaching
    /// the server: start-up, channel, session.
    pub startup_ms: Option<f64>,
    /// From the first query request to the server's transport taking the first message.
    pub first_byte_ms: Option<f64>,
    /// From the first message taken to the last (resumes included).
    pub transfer_ms: Option<f64>,
    /// Of the transfer, the time the server waited, a message ready, because the subject was not
    /// reading (HTTP/2 flow control): the direct measure of a slow decoder.
    pub blocked_ms: Option<f64>,
    /// From the last message taken to the subject's end (a command's exit).
    pub tail_ms: Option<f64>,
    /// How its rows were checked; `None` when they were not.
    pub check: Option<Check>,
}

impl IterationRecord {
    /// The one constructor: a record of iteration `iteration` of run `run`, started at
    /// `started_at`, with nothing measured yet: ended ok, every figure unknown, every count zero.
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
            seq: None,
            started_at: started_at.into(),
            total_ms: 0.0,
            outcome: Outcome::Ok,
            session_kind: None,
            answer: Answer::default(),
            query: QueryTimings::default(),
            google: GoogleFigures::default(),
            ids: RequestIds::default(),
            cold: None,
            subject: None,
            timeline: None,
            transaction: None,
        }
    }

    /// How it ended, as exports write it.
    pub fn status(&self) -> Status {
        self.outcome.status()
    }

    /// Why it did not end ok (`cancelled` for a cancelled one).
    pub fn error(&self) -> Option<&str> {
        self.outcome.error()
    }

    /// Whether it failed with an error no retry can fix ([`Outcome::failed_for_good`]).
    pub fn failed_for_good(&self) -> bool {
        self.outcome.failed_for_good()
    }

    /// From the first query request to the subject's end, as the server saw it (request to first
    /// byte, first to last byte, last byte to exit): what a client takes for the query itself,
    /// measured alike for any program and for spanprof's own reads. `None` unless all three were
    /// measured.
    pub fn request_to_end_ms(&self) -> Option<f64> {
        let s = self.subject.as_ref()?;
        Some(s.first_byte_ms? + s.transfer_ms? + s.tail_ms?)
    }

    /// Whether this iteration counts in the statistics: not a warm-up, and ended ok.
    pub fn is_timed(&self) -> bool {
        !self.warmup && self.outcome.is_ok()
    }

    /// The subject's timings, made when the first is set.
    pub fn subject_mut(&mut self) -> &mut SubjectTimings {
        self.subject.get_or_insert_with(SubjectTimings::default)
    }
}
