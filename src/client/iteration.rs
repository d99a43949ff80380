//! One timed execution of a query: the answer streamed as raw bytes, each step timed by us.
//!
//! Where the time of an iteration goes:
//! - **network**: awaiting the transport for the next message (includes the server's own time);
//! - **wire decode**: bytes to a PartialResultSet (prost), or to its framing (the fast decoder);
//! - **row decode**: merging chunks and building typed rows (and dropping the previous message's);
//! - **other**: the rest of the total (call setup, resumes' backoff, bookkeeping), derived.

use std::time::Instant;

use tonic::transport::Channel;

use super::execute_streaming_sql_raw;
use super::resume::{ResumePolicy, back_off, late_error, may_resume};
use super::server_timing::parse_server_timing;
use super::timeouts::Timeouts;
use super::timing::{IterationError, IterationTiming};
use crate::proto::google::spanner::v1 as pb;
use crate::wire::{AnyDecoder, DecoderKind, Parsed, RowsView};

/// A message decoded from the wire and waiting for a resume token to cover it.
struct Held {
    msg: Parsed,
    bytes: prost::bytes::Bytes,
}

/// How an iteration decodes and what it hands on.
pub struct Decoding<'a> {
    /// The decoder that turns the stream into rows.
    pub decoder: DecoderKind,
    /// Sees each message's rows as they are decoded, with the message's size in bytes (a preview
    /// can keep some rows; the iteration keeps none).
    pub on_rows: &'a mut dyn FnMut(RowsView<'_>, usize),
    /// When set, each message the decoder consumes (after any resume) is appended in the
    /// stream-file format.
    pub recording: Option<&'a mut Vec<u8>>,
}

impl<'a> Decoding<'a> {
    /// Decoding with `decoder`, each message's rows to `on_rows`, nothing recorded.
    pub fn new(decoder: DecoderKind, on_rows: &'a mut dyn FnMut(RowsView<'_>, usize)) -> Self {
        Decoding {
            decoder,
            on_rows,
            recording: None,
        }
    }
}

/// Runs `request` once and times it; every call carries `headers`. Each attempt's first message
/// is due within `timeouts.first_response`, the whole iteration within `timeouts.iteration` (sent
/// to the server as the call's `grpc-timeout` too).
pub async fn run_iteration(
    channel: Channel,
    request: &pb::ExecuteSqlRequest,
    headers: &tonic::metadata::MetadataMap,
    policy: ResumePolicy,
    timeouts: Timeouts,
    decoding: Decoding<'_>,
) -> Result<IterationTiming, IterationError> {
    let Decoding {
        decoder: kind,
        on_rows,
        mut recording,
    } = decoding;
    let mut timing = IterationTiming::default();
    let mut decoder = AnyDecoder::new(kind);
    let mut request = request.clone();
    let mut held: Vec<Held> = Vec::new();
    let mut backoff = policy.initial_backoff;
    let start = Instant::now();
    let deadline = start + timeouts.iteration;
    let late = |due: Instant| late_error(due, deadline, &timeouts);
    loop {
        let wait = Instant::now();
        let first_due = (wait + timeouts.first_response).min(deadline);
        let mut call_request = tonic::Request::new(request.clone());
        *call_request.metadata_mut() = headers.clone();
        call_request.set_timeout(deadline.saturating_duration_since(wait));
        let call = tokio::time::timeout_at(
            first_due.into(),
            execute_streaming_sql_raw(channel.clone(), call_request),
        )
        .await
        .map_err(|_| late(first_due))?;
        timing.network += wait.elapsed();
        let error = match call {
            Ok(response) => {
                if let Some(header) = response
                    .metadata()
                    .get("server-timing")
                    .and_then(|v| v.to_str().ok())
                {
                    timing.server_timing = parse_server_timing(header);
                }
                let mut stream = response.into_inner();
                backoff = policy.initial_backoff;
                let mut due = first_due;
                loop {
                    let wait = Instant::now();
                    let next = tokio::time::timeout_at(due.into(), stream.message())
                        .await
                        .map_err(|_| late(due))?;
                    timing.network += wait.elapsed();
                    due = deadline;
                    let bytes = match next {
                        Ok(Some(bytes)) => bytes,
                        Ok(None) => break None,
                        Err(status) => break Some(status),
                    };
                    timing.ttfb.get_or_insert_with(|| start.elapsed());
                    let decoding = Instant::now();
                    let msg = decoder.parse(bytes.clone())?;
                    timing.wire_decode += decoding.elapsed();
                    let token = msg.resume_token().to_vec();
                    held.push(Held { msg, bytes });
                    let held_bytes: usize = held.iter().map(|h| h.bytes.len()).sum();
                    let over_bound =
                        held.len() > policy.max_held_messages || held_bytes > policy.max_held_bytes;
                    if !token.is_empty() || over_bound {
                        feed(
                            &mut timing,
                            &mut decoder,
                            &mut held,
                            on_rows,
                            recording.as_deref_mut(),
                        )?;
                        // Past the bound without a token the stream cannot be resumed safely: the
                        // token is cleared, so a later break is an error, not a silent loss or repeat.
                        request.resume_token = token;
                    }
                }
            }
            Err(status) => Some(status),
        };
        let Some(status) = error else { break };
        let status = may_resume(status, timing.resumes, &policy)?;
        if request.resume_token.is_empty() && decoder.counters().messages > 0 {
            return Err(IterationError::CannotResume(format!(
                "the stream broke ({}) after rows that no resume token covers",
                status.message()
            )));
        }
        // What arrived after the last token comes again after the resume.
        held.clear();
        timing.resumes += 1;
        back_off(&mut backoff, deadline, &policy, &timeouts).await?;
    }
    feed(&mut timing, &mut decoder, &mut held, on_rows, recording)?;
    let finishing = Instant::now();
    decoder.finish()?;
    timing.row_decode += finishing.elapsed();
    timing.total = start.elapsed();
    timing.counters = *decoder.counters();
    timing.rows = timing.counters.rows;
    timing.stats = decoder.take_stats();
    timing.columns = decoder.columns();
    check_row_count(&timing)?;
    Ok(timing)
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
fn feed(
    timing: &mut IterationTiming,
    decoder: &mut AnyDecoder,
    held: &mut Vec<Held>,
    on_rows: &mut dyn FnMut(RowsView<'_>, usize),
    mut recording: Option<&mut Vec<u8>>,
) -> Result<(), IterationError> {
    for Held { msg, bytes } in held.drain(..) {
        if let Some(file) = recording.as_deref_mut() {
            crate::wire::stream_file::push_frame(file, &bytes);
        }
        let decoding = Instant::now();
        let rows = decoder.feed(msg, bytes.len())?;
        timing.row_decode += decoding.elapsed();
        on_rows(rows, bytes.len());
    }
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
