//! One iteration on a session: where it falls in the schedule ([`Position`]), its record (blank,
//! cancelled, or filled from what the client measured), and its run with progress sent and
//! cancellation watched.

use std::time::{Duration, Instant};

use crate::client::{
    Decoding, IterationError, IterationTiming, PreparedQuery, ResumePolicy, Session,
};
use crate::report::{IterationRecord, Status, Timeline};
use crate::wire::RowsView;

use super::details;
use super::events::{Cancel, EngineEvent, Sink};
use super::schedule::Step;
use super::spec::{ProfileSpec, Variant};
use super::{ms, now_rfc3339};

/// Where an iteration falls: its variant and number, and its place in the schedule.
#[derive(Debug, Clone, Copy)]
pub(super) struct Position {
    pub(super) step: Step,
    pub(super) seq: u32,
    pub(super) steps: u32,
    /// What is left of the run's [`RUN_MESSAGE_LIMIT`](crate::report::RUN_MESSAGE_LIMIT) for the iteration's timeline.
    pub(super) kept_messages: usize,
}

pub(super) fn cancelled_record(variant: &Variant, at: Position) -> IterationRecord {
    IterationRecord {
        status: Status::Cancelled,
        error: Some("cancelled".into()),
        ..blank_record(variant, at)
    }
}

pub(super) fn blank_record(variant: &Variant, at: Position) -> IterationRecord {
    IterationRecord {
        seq: Some(at.seq),
        ..IterationRecord::new(
            variant.label.clone(),
            at.step.iteration,
            at.step.warmup,
            now_rfc3339(),
        )
    }
}

/// Runs one iteration of `variant` at `at`; rows stream past `preview`. The timing comes back too
/// when the iteration ended ok.
pub(super) async fn one_iteration(
    session: &Session,
    query: &PreparedQuery,
    (spec, variant): (&ProfileSpec, &Variant),
    at: Position,
    preview: &mut details::Preview,
    sink: &Sink,
    cancel: &Cancel,
) -> (IterationRecord, Option<IterationTiming>) {
    let mut record = blank_record(variant, at);
    let started = Instant::now();
    let (mut rows, mut wire_bytes) = (0u64, 0u64);
    let mut last_progress = Instant::now();
    let mut on_rows = |batch: RowsView<'_>, message_bytes: usize| {
        preview.keep(batch);
        rows += batch.len() as u64;
        wire_bytes += message_bytes as u64;
        if last_progress.elapsed() >= Duration::from_millis(100) {
            last_progress = Instant::now();
            sink.send(EngineEvent::Progress {
                variant: at.step.variant,
                iteration: at.step.iteration,
                step: at.seq,
                steps: at.steps,
                rows,
                wire_bytes,
            });
        }
    };
    let outcome = tokio::select! {
        r = session.execute_identified(
            query,
            ResumePolicy::default(),
            Decoding {
                kept_messages: at.kept_messages,
                ..Decoding::new(spec.decoder, &mut on_rows)
            },
        ) => Some(r),
        _ = cancel.notify.notified() => None,
    };
    match outcome {
        Some((_, Ok(timing))) => {
            fill(&mut record, &timing);
            return (record, Some(timing));
        }
        Some((ids, Err(e))) => {
            record.status = Status::Error;
            record.request_id = ids.request_id.map(|id| id.to_string());
            record.trace_id = ids.trace_id;
            if let IterationError::RowCountMismatch { server, decoded } = &e {
                record.rows = *decoded;
                record.server_rows = Some(*server);
            }
            record.error = Some(e.to_string());
            record.error_code = e.status_code();
        }
        None => {
            record.status = Status::Cancelled;
            record.error = Some("cancelled".into());
        }
    }
    record.total_ms = ms(started.elapsed());
    (record, None)
}

/// Copies an iteration's measurements into its record.
pub fn fill(record: &mut IterationRecord, t: &IterationTiming) {
    let stats = t.stats.as_ref().map(|s| &s.query_stats);
    record.total_ms = ms(t.total);
    record.ttfb_ms = t.ttfb.map(ms);
    record.network_ms = Some(ms(t.network));
    record.wire_decode_ms = Some(ms(t.wire_decode));
    record.row_decode_ms = Some(ms(t.row_decode));
    record.other_ms = Some(ms(t.other()));
    record.server_ms = stats.and_then(|s| s.elapsed).map(ms);
    record.server_cpu_ms = stats.and_then(|s| s.cpu_time).map(ms);
    record.gfe_ms = t.server_timing.gfe.map(ms);
    record.afe_ms = t.server_timing.afe.map(ms);
    record.rows = t.rows;
    record.server_rows = stats.and_then(|s| s.rows_returned);
    record.messages = t.counters.messages;
    record.chunked_values = t.counters.chunked_values;
    record.wire_bytes = t.counters.wire_bytes;
    record.resumes = t.resumes;
    record.wire_decode_cpu_ms = Some(ms(t.wire_decode_cpu));
    record.row_decode_cpu_ms = Some(ms(t.row_decode_cpu));
    record.descheduled_ms = Some(ms(t.descheduled));
    record.client_work_ms = Some(ms(t.client_work));
    record.client_work_cpu_ms = Some(ms(t.client_work_cpu));
    record.backoff_ms = Some(ms(t.backoff));
    record.partition_query_ms = t.partition_query.map(ms);
    record.server_client_wait_ms = stats.and_then(|s| s.client_wait).map(ms);
    record.request_id = t.request_id.map(|id| id.to_string());
    record.trace_id.clone_from(&t.trace_id);
    record.operation_ms = t.operation.map(ms);
    record.attempts = u32::try_from(t.attempts.len()).ok().filter(|&n| n > 0);
    record.attempt_ms = t.attempts.iter().copied().map(ms).collect();
    record.timeline = (!t.lanes.is_empty()).then(|| Timeline {
        lanes: t.lanes.clone(),
        total_us: u64::try_from(t.total.as_micros()).unwrap_or(u64::MAX),
        setup: Vec::new(),
    });
}
