//! One timed execution of a query: the answer streamed as raw bytes, each step timed by us.
//!
//! Where the time of an iteration goes:
//! - **network**: awaiting the transport for the next message (includes the server's own time);
//! - **wire decode**: bytes to a PartialResultSet (prost), or to its framing (the fast decoder);
//! - **row decode**: merging chunks and building typed rows (and dropping the previous message's);
//! - **client work**: the client's own work between its waits and decode spans (the rows'
//!   callback, bookkeeping), timed on both clocks (the lane's `between`);
//! - **back-off**: waiting before a resume re-sends the request;
//! - decode spans and client work off the CPU are summed as `descheduled`; what nothing times is
//!   left to `report::accounting`'s `untimed`.

use std::time::Instant;

use prost::bytes::Bytes;
use tonic::codec::Streaming;
use tonic::transport::Channel;

use super::headers::CallMetadata;
use super::resume::{
    MAX_RESUME_TOKEN_BYTES, ResumePolicy, back_off, late_error, may_resume, token_too_large,
};
use super::server_timing::parse_server_timing;
use super::timeline::{DEFAULT_KEPT_MESSAGES, Fed, Stopwatch, Timed, TimelineBuilder};
use super::timeouts::Timeouts;
use super::timing::{HeaderLockWait, IterationError, IterationTiming};
use super::{execute_streaming_sql_raw, streaming_read_raw};
use crate::proto::google::spanner::v1 as pb;
use crate::wire::{AnyDecoder, DecoderKind, Parsed, RowsView};

/// The streaming call an iteration times: a query (ExecuteStreamingSql) or a read by key
/// (StreamingRead). Both answer PartialResultSets and resume from a token alike.
#[derive(Debug, Clone)]
pub enum Streamed {
    /// ExecuteStreamingSql.
    Sql(pb::ExecuteSqlRequest),
    /// StreamingRead.
    Read(pb::ReadRequest),
}

impl Streamed {
    fn resume_token(&self) -> &[u8] {
        match self {
            Streamed::Sql(r) => &r.resume_token,
            Streamed::Read(r) => &r.resume_token,
        }
    }

    fn set_resume_token(&mut self, token: Vec<u8>) {
        match self {
            Streamed::Sql(r) => r.resume_token = token,
            Streamed::Read(r) => r.resume_token = token,
        }
    }

    /// Sends it with `metadata`, due within `timeout`.
    async fn send(
        &self,
        channel: Channel,
        metadata: tonic::metadata::MetadataMap,
        timeout: std::time::Duration,
    ) -> Result<tonic::Response<Streaming<Bytes>>, tonic::Status> {
        fn call<T>(
            message: T,
            metadata: tonic::metadata::MetadataMap,
            timeout: std::time::Duration,
        ) -> tonic::Request<T> {
            let mut request = tonic::Request::new(message);
            *request.metadata_mut() = metadata;
            request.set_timeout(timeout);
            request
        }
        match self {
            Streamed::Sql(r) => {
                execute_streaming_sql_raw(channel, call(r.clone(), metadata, timeout)).await
            }
            Streamed::Read(r) => {
                streaming_read_raw(channel, call(r.clone(), metadata, timeout)).await
            }
        }
    }
}

/// A message decoded from the wire and waiting for a resume token to cover it.
struct Held {
    msg: Parsed,
    bytes: Bytes,
    /// Its number in the timeline.
    number: u32,
}

/// How an iteration decodes and what it hands on.
pub struct Decoding<'a> {
    /// The decoder that turns the stream into rows.
    pub decoder: DecoderKind,
    /// Sees each message's rows as they are decoded, with the message's size in bytes (a preview
    /// can keep some rows; the iteration keeps none).
    pub on_rows: &'a mut (dyn FnMut(RowsView<'_>, usize) + Send),
    /// When set, each message the decoder consumes (after any resume) is appended in the
    /// stream-file format.
    pub recording: Option<&'a mut Vec<u8>>,
    /// Messages the timeline keeps one by one; later ones are summed in buckets.
    pub kept_messages: usize,
}

impl<'a> Decoding<'a> {
    /// Decoding with `decoder`, each message's rows to `on_rows`, nothing recorded, the timeline
    /// keeping [`DEFAULT_KEPT_MESSAGES`].
    pub fn new(
        decoder: DecoderKind,
        on_rows: &'a mut (dyn FnMut(RowsView<'_>, usize) + Send),
    ) -> Self {
        Decoding {
            decoder,
            on_rows,
            recording: None,
            kept_messages: DEFAULT_KEPT_MESSAGES,
        }
    }
}

/// An iteration in progress: what it measured so far and where its messages go.
struct Progress<'a> {
    timing: IterationTiming,
    decoder: AnyDecoder,
    held: Vec<Held>,
    timeline: TimelineBuilder,
    on_rows: &'a mut (dyn FnMut(RowsView<'_>, usize) + Send),
    recording: Option<&'a mut Vec<u8>>,
    /// Where the client's current stretch of its own work began (the end of its last span), when
    /// it is timing one; no await lies between it and the next span or wait.
    since: Option<Stopwatch>,
}

impl Progress<'_> {
    /// The client's own work since the last span ended, up to `now` (a span's or a wait's
    /// start): into the timeline, its time off the CPU into `descheduled`.
    fn worked_until(&mut self, now: &Stopwatch) {
        if let Some(from) = self.since.take() {
            let (wall, cpu) = now.since(&from);
            self.timeline.between(wall, cpu);
            let cpu = cpu.unwrap_or(wall);
            self.timing.client_work += wall;
            self.timing.client_work_cpu += cpu;
            self.timing.descheduled += wall.saturating_sub(cpu);
        }
    }

    /// A wait ends now: the client's own work begins.
    fn wait_ends(&mut self) -> Instant {
        let now = Stopwatch::start();
        self.since = Some(now);
        now.at()
    }

    /// A wait (for the server, or a back-off) begins now.
    fn wait_begins(&mut self) -> Instant {
        let now = Stopwatch::start();
        self.worked_until(&now);
        now.at()
    }

    /// The response headers came at `at`: their `server-timing`, and the time in the timeline.
    fn took_headers(&mut self, at: Instant, metadata: &tonic::metadata::MetadataMap) {
        self.timeline.headers(at);
        if let Some(header) = metadata.get("server-timing").and_then(|v| v.to_str().ok()) {
            self.timing.server_timing = parse_server_timing(header);
        }
        self.timing.server_lock_wait = HeaderLockWait::from_headers(metadata);
    }

    /// Adds a decode span's CPU time and its time off the CPU.
    fn count_cpu(&mut self, span: &Timed, wire: bool) {
        let cpu = span.cpu_or_wall();
        if wire {
            self.timing.wire_decode_cpu += cpu;
        } else {
            self.timing.row_decode_cpu += cpu;
        }
        self.timing.descheduled += span.wall.saturating_sub(cpu);
    }
}

/// Runs `request` once and times it; every attempt carries `call`'s headers with its attempt
/// number (a resume is the same request's next attempt). Each attempt's first message is due
/// within `timeouts.first_response`, the whole iteration within `timeouts.iteration` (sent to the
/// server as the call's `grpc-timeout` too).
pub async fn run_iteration(
    channel: Channel,
    request: &pb::ExecuteSqlRequest,
    call: CallMetadata,
    policy: ResumePolicy,
    timeouts: Timeouts,
    decoding: Decoding<'_>,
) -> Result<IterationTiming, IterationError> {
    let request = Streamed::Sql(request.clone());
    run_streamed(channel, request, call, policy, timeouts, decoding).await
}

/// Runs a query or a read once and times it, as [`run_iteration`] runs a query.
pub async fn run_streamed(
    channel: Channel,
    mut request: Streamed,
    call: CallMetadata,
    policy: ResumePolicy,
    timeouts: Timeouts,
    decoding: Decoding<'_>,
) -> Result<IterationTiming, IterationError> {
    let began = Stopwatch::start();
    let start = began.at();
    let mut run = Progress {
        timing: IterationTiming {
            began: Some(start),
            request_id: Some(call.id()),
            ..IterationTiming::default()
        },
        decoder: AnyDecoder::new(decoding.decoder),
        held: Vec::new(),
        timeline: TimelineBuilder::new(start, decoding.kept_messages),
        on_rows: decoding.on_rows,
        recording: decoding.recording,
        since: Some(began),
    };
    let mut backoff = policy.initial_backoff;
    let deadline = start + timeouts.iteration;
    let late = |due: Instant| late_error(due, deadline, &timeouts);
    loop {
        let messages_before = run.decoder.counters().messages + run.held.len() as u64;
        let wait = run.wait_begins();
        run.timeline.request_sent(wait);
        let first_due = (wait + timeouts.first_response).min(deadline);
        let metadata = call.attempt(run.timing.resumes + 1);
        let within = deadline.saturating_duration_since(wait);
        let answer = tokio::time::timeout_at(
            first_due.into(),
            request.send(channel.clone(), metadata, within),
        )
        .await
        .map_err(|_| late(first_due))?;
        let answered = run.wait_ends();
        run.timing.network += answered - wait;
        let (error, ended) = match answer {
            Ok(response) => {
                run.took_headers(answered, response.metadata());
                let stream = response.into_inner();
                let dues = (first_due, deadline);
                read_stream(&mut run, stream, dues, &timeouts, &mut request, &policy).await?
            }
            Err(status) => (Some(status), answered),
        };
        run.timing.attempts.push(ended - wait);
        run.timing.operation = Some(ended - start);
        let Some(status) = error else { break };
        let broke = run.wait_begins();
        if run.decoder.counters().messages + run.held.len() as u64 > messages_before {
            // The attempt made progress: this retry is the first in a row.
            backoff = policy.initial_backoff;
        }
        let status = may_resume(status, run.timing.resumes, &policy)?;
        if request.resume_token().is_empty() && run.decoder.counters().messages > 0 {
            return Err(IterationError::CannotResume(format!(
                "the stream broke ({}) after rows that no resume token covers",
                status.message()
            )));
        }
        // What arrived after the last token comes again after the resume.
        let dropped = run.held.len() as u32;
        let dropped_bytes: usize = run.held.iter().map(|h| h.bytes.len()).sum();
        run.held.clear();
        run.timing.resumes += 1;
        let waiting = Instant::now();
        back_off(&mut backoff, deadline, &policy, &timeouts).await?;
        let resent = Instant::now();
        run.timing.backoff += resent - waiting;
        let said: String = format!("{:?}: {}", status.code(), status.message())
            .chars()
            .take(200)
            .collect();
        let dropped = (dropped, dropped_bytes as u64);
        run.timeline
            .resumed(broke, said, dropped, resent - waiting, resent);
    }
    let end = finish(&mut run)?;
    let Progress {
        mut timing,
        mut decoder,
        timeline,
        ..
    } = run;
    timing.total = end - start;
    timing.lanes = vec![timeline.end(end)];
    timing.counters = *decoder.counters();
    timing.rows = timing.counters.rows;
    timing.stats = decoder.take_stats();
    timing.columns = decoder.columns();
    timing.transaction_id = decoder.transaction_id();
    timing.precommit_token = decoder.precommit_token();
    check_row_count(&timing)?;
    Ok(timing)
}

/// Reads one attempt's stream to its end or its break, each message taken as it arrives (the
/// first due by `first_due`, every one by `deadline`); a resume token moves into `request`.
/// Returns the status it broke with, if it did, and when its end or break arrived.
async fn read_stream(
    run: &mut Progress<'_>,
    mut stream: Streaming<Bytes>,
    (first_due, deadline): (Instant, Instant),
    timeouts: &Timeouts,
    request: &mut Streamed,
    policy: &ResumePolicy,
) -> Result<(Option<tonic::Status>, Instant), IterationError> {
    let late = |due: Instant| late_error(due, deadline, timeouts);
    let mut due = first_due;
    loop {
        let wait = run.wait_begins();
        let next = tokio::time::timeout_at(due.into(), stream.message())
            .await
            .map_err(|_| late(due))?;
        let arrived = run.wait_ends();
        run.timing.network += arrived - wait;
        // A stream that always has a message ready never lets the timeout above fire: the
        // deadline is checked between messages too.
        if arrived >= deadline {
            return Err(late(deadline));
        }
        due = deadline;
        let bytes = match next {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Ok((None, arrived)),
            Err(status) => return Ok((Some(status), arrived)),
        };
        if let Some(token) = take_message(run, (wait, arrived), bytes, policy)? {
            // Past the bound without a token the stream cannot be resumed safely: the token is
            // cleared, so a later break is an error, not a silent loss or repeat.
            request.set_resume_token(token);
        }
    }
}

/// Feeds what is held and runs the decoder's end-of-stream check, timed; returns when the
/// iteration ended.
fn finish(run: &mut Progress<'_>) -> Result<Instant, IterationError> {
    feed(run)?;
    let watch = Stopwatch::start();
    run.worked_until(&watch);
    run.decoder.finish()?;
    let finish = watch.stop();
    run.timing.row_decode += finish.wall;
    run.count_cpu(&finish, false);
    run.timeline.finished(&finish);
    run.since = Some(finish.end);
    let ended = Stopwatch::start();
    run.worked_until(&ended);
    Ok(ended.at())
}

/// Wire-decodes a message that arrived at `arrived` (waited for since `wait`) and holds it; when
/// it carries a resume token, or too much is held, feeds what is held. Returns the token to
/// resume from, when the held messages were fed.
fn take_message(
    run: &mut Progress<'_>,
    (wait, arrived): (Instant, Instant),
    bytes: prost::bytes::Bytes,
    policy: &ResumePolicy,
) -> Result<Option<Vec<u8>>, IterationError> {
    let began = run.timing.began.unwrap_or(wait);
    run.timing.ttfb.get_or_insert(arrived - began);
    let watch = Stopwatch::start();
    run.worked_until(&watch);
    let msg = run.decoder.parse(bytes.clone())?;
    let wire = watch.stop();
    run.since = Some(wire.end);
    run.timing.wire_decode += wire.wall;
    run.count_cpu(&wire, true);
    if msg.resume_token().len() > MAX_RESUME_TOKEN_BYTES {
        let message = run.decoder.counters().messages + run.held.len() as u64 + 1;
        return Err(token_too_large(msg.resume_token().len(), message));
    }
    let token = msg.resume_token().to_vec();
    let number = run
        .timeline
        .arrived((wait, arrived), bytes.len(), !token.is_empty(), &wire);
    run.held.push(Held { msg, bytes, number });
    let held_bytes: usize = run.held.iter().map(|h| h.bytes.len()).sum();
    let over_bound =
        run.held.len() > policy.max_held_messages || held_bytes > policy.max_held_bytes;
    if token.is_empty() && !over_bound {
        return Ok(None);
    }
    feed(run)?;
    Ok(Some(token))
}

/// A profiler must notice lost rows: when the server reports how many rows it returned, the decoder
/// must have produced exactly that many.
pub fn check_row_count(timing: &IterationTiming) -> Result<(), IterationError> {
    match timing
        .stats
        .as_ref()
        .and_then(|s| s.query_stats.rows_returned)
    {
        Some(server) if server != timing.rows => Err(IterationError::RowCountMismatch {
            server,
            decoded: timing.rows,
        }),
        _ => Ok(()),
    }
}

/// Turns the held messages (now covered by a token, or at the end of the stream) into rows.
fn feed(run: &mut Progress<'_>) -> Result<(), IterationError> {
    let mut held = std::mem::take(&mut run.held);
    for Held { msg, bytes, number } in held.drain(..) {
        if let Some(file) = run.recording.as_deref_mut() {
            crate::wire::stream_file::push_frame(file, &bytes);
        }
        let before = *run.decoder.counters();
        let watch = Stopwatch::start();
        run.worked_until(&watch);
        let rows = run.decoder.feed(msg, bytes.len())?;
        let row = watch.stop();
        run.since = Some(row.end);
        (run.on_rows)(rows, bytes.len());
        let after = run.decoder.counters();
        let fed = Fed {
            rows: after.rows.saturating_sub(before.rows),
            values: after.values.saturating_sub(before.values),
            chunked: after.chunked_values > before.chunked_values,
        };
        run.timing.row_decode += row.wall;
        run.count_cpu(&row, false);
        run.timeline.fed(number, &row, fed);
    }
    // The emptied vector goes back, keeping its capacity.
    run.held = held;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::ResultStats;

    #[test]
    fn a_row_count_that_differs_from_the_server_is_an_error() {
        let mut timing = IterationTiming {
            rows: 99,
            ..IterationTiming::default()
        };
        assert!(
            check_row_count(&timing).is_ok(),
            "no stats, nothing to check"
        );
        let mut stats = ResultStats::default();
        stats.query_stats.rows_returned = Some(100);
        timing.stats = Some(stats);
        let err = check_row_count(&timing).expect_err("a lost row");
        assert!(
            err.to_string().contains("100") && err.to_string().contains("99"),
            "{err}"
        );
        timing.rows = 100;
        assert!(check_row_count(&timing).is_ok());
    }
}
