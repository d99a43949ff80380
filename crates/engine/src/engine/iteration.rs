//! One iteration on a session: where it falls in the schedule ([`Position`]), what it runs with
//! ([`IterationContext`]), its run with progress sent and cancellation watched, and its record,
//! built once ([`built`]): blank, cancelled, failed, or filled from what the client measured and,
//! after a cold start, the start's steps.

use std::time::{Duration, Instant};

use crate::client::{
    CallIds, ColdPhases, Decoding, IterationError, IterationTiming, PreparedQuery, ResumePolicy,
    Session,
};
use crate::report::{IterationRecord, SetupStep, Status, Timeline};
use crate::wire::RowsView;

use super::common::{ms, now_rfc3339};
use super::details;
use super::events::{Cancel, EngineEvent, Sink};
use super::schedule::Step;
use super::spec::{ProfileSpec, Variant};

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

/// What one iteration runs with: the run's spec, the iteration's variant and place, where its
/// events go and the run's cancel.
pub(super) struct IterationContext<'a> {
    pub(super) spec: &'a ProfileSpec,
    pub(super) variant: &'a Variant,
    pub(super) at: Position,
    pub(super) sink: &'a Sink,
    pub(super) cancel: &'a Cancel,
}

/// A cold start before an iteration's query: its steps, when the query began (from the start),
/// and when the start began.
pub(super) struct ColdSetup {
    pub(super) phases: ColdPhases,
    pub(super) query_from: Duration,
    pub(super) started: Instant,
}

/// An iteration as the run loop reads it: its record, what the client measured when it ended ok,
/// and whether it failed for want of an access token (the call was never made).
pub(super) struct Done {
    pub(super) record: IterationRecord,
    pub(super) timing: Option<IterationTiming>,
    pub(super) no_token: bool,
}

/// How an iteration's query ended.
pub(super) enum Ended<'a> {
    /// With what the client measured.
    Ok(&'a IterationTiming),
    /// With an error, and the ids its call carried.
    Failed(&'a CallIds, &'a IterationError),
    /// Cancelled before it did.
    Cancelled,
}

/// Runs one iteration on `session` (after a `cold` start, if any) and builds its record; rows
/// stream past `preview`. The timing comes back too when the iteration ended ok.
pub(super) async fn one_iteration(
    session: &Session,
    query: &PreparedQuery,
    cx: &IterationContext<'_>,
    preview: &mut details::Preview,
    cold: Option<&ColdSetup>,
) -> Done {
    let (at, sink) = (cx.at, cx.sink);
    let blank = IterationRecord {
        session_kind: Some(session.granted().as_str().to_owned()),
        ..blank_record(cx.variant, at)
    };
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
                ..Decoding::new(cx.spec.decoder, &mut on_rows)
            },
        ) => Some(r),
        _ = cx.cancel.notify.notified() => None,
    };
    let wall = cold.map_or(started, |c| c.started).elapsed();
    let ended = match &outcome {
        Some((_, Ok(timing))) => Ended::Ok(timing),
        Some((ids, Err(e))) => Ended::Failed(ids, e),
        None => Ended::Cancelled,
    };
    let no_token = matches!(&ended, Ended::Failed(_, e) if e.is_token_failure());
    let record = built(blank, ended, cold, wall);
    Done {
        record,
        timing: outcome.and_then(|(_, r)| r.ok()),
        no_token,
    }
}

/// An iteration's record, built once: `blank` (its variant, place and session), then how its
/// query `ended` and, after a `cold` start, the start's steps. `wall` is the iteration's wall time,
/// from the cold start when there was one. A query that did not end ok has `wall` as its total. A
/// cold query that did gets the start's steps beside its own phases and the whole `wall` time as
/// its total; what lies between the steps and the query (the client's own work) goes to `other`,
/// so the steps and the query's phases add up to the total, and its timeline's lanes move to
/// begin where the query did, after the steps laid end to end.
pub(super) fn built(
    mut record: IterationRecord,
    ended: Ended<'_>,
    cold: Option<&ColdSetup>,
    wall: Duration,
) -> IterationRecord {
    if let Some(cold) = cold {
        let (c, phases) = (&cold.phases.connect, &cold.phases);
        record.dns_ms = Some(ms(c.dns));
        record.tcp_ms = Some(ms(c.tcp));
        record.tls_ms = Some(ms(c.tls));
        record.http2_ms = Some(ms(c.http2));
        record.token_ms = Some(ms(phases.token));
        record.session_ms = Some(ms(phases.session));
    }
    let timing = match ended {
        Ended::Ok(timing) => timing,
        Ended::Failed(ids, e) => {
            record.status = Status::Error;
            record.request_id = ids.request_id.map(|id| id.to_string());
            record.trace_id.clone_from(&ids.trace_id);
            if let IterationError::RowCountMismatch { server, decoded } = e {
                record.rows = *decoded;
                record.server_rows = Some(*server);
            }
            record.error = Some(e.to_string());
            record.error_code = e.status_code();
            record.total_ms = ms(wall);
            return record;
        }
        Ended::Cancelled => {
            record.status = Status::Cancelled;
            record.error = Some("cancelled".into());
            record.total_ms = ms(wall);
            return record;
        }
    };
    fill(&mut record, timing);
    let Some(cold) = cold else {
        return record;
    };
    let query_ms = ms(timing.total);
    let named = ms(cold.phases.total()) + query_ms;
    record.other_ms = Some(record.other_ms.unwrap_or(0.0) + (ms(wall) - named).max(0.0));
    record.total_ms = ms(wall).max(named);
    if let Some(timeline) = &mut record.timeline {
        let shift = us(cold.query_from);
        for lane in &mut timeline.lanes {
            lane.origin_us = lane.origin_us.saturating_add(shift);
        }
        timeline.total_us = us(wall).max(timeline.total_us.saturating_add(shift));
        let mut start_us = 0u64;
        timeline.setup = cold
            .phases
            .steps()
            .into_iter()
            .map(|(step, took)| {
                let wall_us = us(took);
                let s = SetupStep {
                    step: step.as_str().to_owned(),
                    start_us,
                    wall_us,
                };
                start_us = start_us.saturating_add(wall_us);
                s
            })
            .collect();
    }
    record
}

fn us(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
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
    record.server_queue_ms = stats.and_then(|s| s.queue_wait).map(ms);
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
