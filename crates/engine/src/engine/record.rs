//! Every iteration record the engine makes is built here, once: blank (its variant and place in
//! the schedule), then cancelled, failed, or filled from what the client measured and, after a cold
//! start, the start's steps; a subject's timings as the local instance saw them; and the
//! throwaway record a load request's parts are computed from.

use std::time::{Duration, Instant};

use crate::client::{CallIds, IterationError, IterationTiming};
use crate::report::{ColdSteps, IterationRecord, Outcome, SetupStep, Timeline};

use super::common::{ms, now_rfc3339};
use super::schedule::Turn;
use super::spec::Variant;

/// Where an iteration falls: its variant and number, and its place in the schedule.
#[derive(Debug, Clone, Copy)]
pub(super) struct Position {
    pub(super) turn: Turn,
    pub(super) seq: u32,
    pub(super) turns: u32,
    /// What is left of the run's [`RUN_MESSAGE_LIMIT`](crate::report::RUN_MESSAGE_LIMIT) for the iteration's timeline.
    pub(super) kept_messages: usize,
}

/// A cold start before an iteration's query: its steps, when the query began (from the start),
/// and when the start began.
pub(super) struct ColdSetup {
    pub(super) steps: ColdSteps,
    pub(super) query_from: Duration,
    pub(super) started: Instant,
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

/// The record of iteration `at` of `variant`, started now, with nothing measured yet.
pub(super) fn blank(variant: &Variant, at: Position) -> IterationRecord {
    let mut record = IterationRecord::new(
        variant.label.clone(),
        at.turn.iteration,
        at.turn.warmup,
        now_rfc3339(),
    );
    record.seq = Some(at.seq);
    record
}

/// The record of a subject's iteration `step`, `seq` in the schedule, of the run labelled
/// `label`, started now: its timings are the local instance's to fill.
pub(super) fn subject(label: String, turn: Turn, seq: u32) -> IterationRecord {
    let mut record = IterationRecord::new(label, turn.iteration, turn.warmup, now_rfc3339());
    record.seq = Some(seq);
    record
}

/// The record of iteration `at`, cancelled before it ran.
pub(super) fn cancelled(variant: &Variant, at: Position) -> IterationRecord {
    let mut record = blank(variant, at);
    record.outcome = Outcome::cancelled();
    record
}

/// The record of a cold iteration that did not reach its query, `started` when its cold start
/// did: failed with `error` (which names the step), or cancelled when `error` is `None`.
pub(super) fn cold_start_failed(
    variant: &Variant,
    at: Position,
    started: Instant,
    error: Option<String>,
) -> IterationRecord {
    let mut record = blank(variant, at);
    record.outcome = error.map_or_else(Outcome::cancelled, |e| Outcome::failed(e, None));
    record.total_ms = ms(started.elapsed());
    record
}

/// An iteration's record, built once: `blank` (its variant, place and session), then how its
/// query `ended` and, after a `cold` start, the start's steps. `wall` is the iteration's wall time,
/// from the cold start when there was one. A query that did not end ok has `wall` as its total. A
/// cold query that did gets the start's steps beside its own timings and the whole `wall` time as
/// its total; what lies between the steps and the query (the client's own work) goes to the time
/// outside the waits and decodes, so the steps and the query's parts add up to the total, and its
/// timeline's lanes move to begin where the query did, after the steps laid end to end.
pub(super) fn built(
    mut record: IterationRecord,
    ended: Ended<'_>,
    cold: Option<&ColdSetup>,
    wall: Duration,
) -> IterationRecord {
    if let Some(cold) = cold {
        record.cold = Some(cold.steps);
    }
    let timing = match ended {
        Ended::Ok(timing) => timing,
        Ended::Failed(ids, e) => {
            record.ids.request_id = ids.request_id.map(|id| id.to_string());
            record.ids.trace_id.clone_from(&ids.trace_id);
            if let IterationError::RowCountMismatch { server, decoded } = e {
                record.answer.rows = *decoded;
                record.answer.server_rows = Some(*server);
            }
            record.outcome = Outcome::failed(e.to_string(), e.status_code());
            record.total_ms = ms(wall);
            return record;
        }
        Ended::Cancelled => {
            record.outcome = Outcome::cancelled();
            record.total_ms = ms(wall);
            return record;
        }
    };
    fill(&mut record, timing);
    let Some(cold) = cold else {
        return record;
    };
    let named = cold.steps.total_ms() + ms(timing.total);
    let outside = record.query.outside_wait_and_decode_ms.unwrap_or(0.0);
    record.query.outside_wait_and_decode_ms = Some(outside + (ms(wall) - named).max(0.0));
    record.total_ms = ms(wall).max(named);
    if let Some(timeline) = &mut record.timeline {
        let shift = us(cold.query_from);
        for lane in &mut timeline.lanes {
            lane.origin_us = lane.origin_us.saturating_add(shift);
        }
        timeline.total_us = us(wall).max(timeline.total_us.saturating_add(shift));
        let mut start_us = 0u64;
        timeline.setup = cold
            .steps
            .iter()
            .map(|(step, took_ms)| {
                let wall_us = (took_ms * 1e3).round().max(0.0) as u64;
                let s = SetupStep {
                    step,
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

/// The record a load request's parts are computed from: what the client measured, nothing else.
pub(super) fn of_request(timing: &IterationTiming) -> IterationRecord {
    let mut record = IterationRecord::new("", 0, false, "");
    fill(&mut record, timing);
    record
}

fn us(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// Copies what the client measured of a query into its record.
pub(super) fn fill(record: &mut IterationRecord, t: &IterationTiming) {
    let stats = t.stats.as_ref().map(|s| &s.query_stats);
    record.total_ms = ms(t.total);
    let q = &mut record.query;
    q.ttfb_ms = t.ttfb.map(ms);
    q.stream_wait_ms = Some(ms(t.network));
    q.wire_decode_wall_ms = Some(ms(t.wire_decode));
    q.wire_decode_cpu_ms = Some(ms(t.wire_decode_cpu));
    q.row_decode_wall_ms = Some(ms(t.row_decode));
    q.row_decode_cpu_ms = Some(ms(t.row_decode_cpu));
    q.client_work_wall_ms = Some(ms(t.client_work));
    q.client_work_cpu_ms = Some(ms(t.client_work_cpu));
    q.descheduled_ms = Some(ms(t.descheduled));
    q.outside_wait_and_decode_ms = Some(ms(t.other()));
    q.backoff_ms = Some(ms(t.backoff));
    q.partition_query_ms = t.partition_query.map(ms);
    q.server_elapsed_ms = stats.and_then(|s| s.elapsed).map(ms);
    q.server_cpu_ms = stats.and_then(|s| s.cpu_time).map(ms);
    q.server_client_wait_ms = stats.and_then(|s| s.client_wait).map(ms);
    q.server_queue_ms = stats.and_then(|s| s.queue_wait).map(ms);
    // A statement's statistics say its wait for locks; an answer without them (a read in a
    // read-write transaction) may say it in its headers.
    let header_wait = t.server_lock_wait.as_ref().map(|w| w.waited);
    q.server_lock_wait_ms = stats.and_then(|s| s.lock_wait).or(header_wait).map(ms);
    record.answer = crate::report::Answer {
        rows: t.rows,
        server_rows: stats.and_then(|s| s.rows_returned),
        messages: t.counters.messages,
        chunked_values: t.counters.chunked_values,
        wire_bytes: t.counters.wire_bytes,
        resumes: t.resumes,
    };
    record.google = crate::report::GoogleFigures {
        gfe_ms: t.server_timing.gfe.map(ms),
        afe_ms: t.server_timing.afe.map(ms),
        operation_ms: t.operation.map(ms),
        attempts: u32::try_from(t.attempts.len()).ok().filter(|&n| n > 0),
        attempt_ms: t.attempts.iter().copied().map(ms).collect(),
    };
    record.ids.request_id = t.request_id.map(|id| id.to_string());
    record.ids.trace_id.clone_from(&t.trace_id);
    record.timeline = (!t.lanes.is_empty()).then(|| Timeline {
        lanes: t.lanes.clone(),
        total_us: u64::try_from(t.total.as_micros()).unwrap_or(u64::MAX),
        setup: Vec::new(),
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{ColdStep, Lane};

    #[test]
    fn a_cold_start_s_steps_and_the_query_add_up_to_the_wall_time() {
        let timing = IterationTiming {
            total: Duration::from_millis(10),
            network: Duration::from_millis(6),
            wire_decode: Duration::from_millis(2),
            row_decode: Duration::from_millis(1),
            lanes: vec![Lane::default()],
            ..IterationTiming::default()
        };
        let mut steps = ColdSteps::default();
        for (k, step) in ColdStep::ALL.into_iter().enumerate() {
            steps.set(step, k as f64 + 1.0);
        }
        let setup = ColdSetup {
            steps,
            query_from: Duration::from_millis(22),
            started: Instant::now(),
        };
        let record = built(
            IterationRecord::new("cold", 0, false, "2026-01-02T03:04:05Z"),
            Ended::Ok(&timing),
            Some(&setup),
            Duration::from_millis(32),
        );
        let cold = record.cold.expect("a cold start's steps");
        assert_eq!(cold.ms(ColdStep::Tls), 3.0);
        let q = &record.query;
        let query = [
            q.stream_wait_ms,
            q.wire_decode_wall_ms,
            q.row_decode_wall_ms,
            q.outside_wait_and_decode_ms,
        ];
        let sum = cold.total_ms() + query.iter().map(|p| p.expect("measured")).sum::<f64>();
        assert!(
            (sum - record.total_ms).abs() < 1e-9,
            "{sum} vs {}",
            record.total_ms
        );
        assert_eq!(record.total_ms, 32.0);
        assert_eq!(
            q.outside_wait_and_decode_ms,
            Some(2.0),
            "the 1 ms between the steps and the query"
        );
        let timeline = record.timeline.expect("kept");
        assert_eq!(timeline.lanes[0].origin_us, 22_000);
        assert_eq!(timeline.setup_end_us(), 21_000);
        assert_eq!(timeline.setup_us(ColdStep::Tls), 3_000);
        assert_eq!(timeline.total_us, 32_000);
    }
}
