//! The run loop: the target connected and its sessions opened ([`cold::RunSessions`]), the
//! schedule's iterations run in order, each record sent as it ends (and not kept: only what the
//! loop needs of them is counted), each variant's plans and last details kept, the sessions
//! closed; a variant stops after a first iteration that cannot succeed, the run after a few
//! iterations in a row without an access token.

use crate::client::IterationTiming;
use crate::report::{IterationRecord, RUN_MESSAGE_LIMIT, ReportHead};

use super::cold;
use super::common::{ms, now_rfc3339};
use super::details::{self, IterationDetails, PREVIEW_ROWS};
use super::events::{Cancel, EngineEvent, Sink};
use super::iteration::{Done, IterationContext, Position};
use super::record;
use super::schedule::schedule;
use super::spec::{ProfileSpec, Variant};
use super::target::Target;

/// Runs `spec` against `target`, every event to `sink`, until done or cancelled.
pub(super) async fn run(target: Target, spec: ProfileSpec, sink: &Sink, cancel: &Cancel) {
    let started_at = now_rfc3339();
    let mut reports: Vec<ReportHead> = spec
        .variants
        .iter()
        .map(|v| ReportHead::new(spec.run_config(v, &target), started_at.clone()))
        .collect();
    if let Err(e) = spec.check() {
        return sink.send(EngineEvent::Failed(e.into()));
    }
    let opening = tokio::select! {
        o = cold::RunSessions::open(&target, &spec) => Some(o),
        _ = cancel.notify.notified() => None,
    };
    let (sessions, queries) = match opening {
        Some(Ok(opened)) => opened,
        Some(Err(e)) => return sink.send(EngineEvent::Failed(e)),
        None => return sink.send(EngineEvent::Finished(reports)),
    };
    sessions.note_kinds(&spec.variants, &mut reports);
    sink.send(EngineEvent::Connected {
        target: sessions.first().description().to_owned(),
        session_ms: ms(sessions.first().created_in()),
    });
    let turns = schedule(
        spec.variants.len(),
        spec.warmup,
        spec.iterations,
        spec.order,
    );
    let total = u32::try_from(turns.len()).unwrap_or(u32::MAX);
    // Where each variant runs for the last time: its details are kept there.
    let mut last_of = vec![0usize; spec.variants.len()];
    for (i, turn) in turns.iter().enumerate() {
        last_of[turn.variant] = i;
    }
    // What each variant's records sent so far hold, as far as the loop reads them.
    let mut sent = vec![Sent::default(); spec.variants.len()];
    let mut no_token = NoToken::default();
    for (seq, &turn) in (0u32..).zip(&turns) {
        // A variant whose first iteration failed for good runs no more: every later one would
        // fail alike.
        if reports[turn.variant].stopped.is_some() {
            continue;
        }
        let variant = &spec.variants[turn.variant];
        let last = last_of[turn.variant] == seq as usize;
        let at = Position {
            turn,
            seq,
            turns: total,
            kept_messages: RUN_MESSAGE_LIMIT.saturating_sub(sent[turn.variant].messages),
        };
        let (record, details, tokenless) = if cancel.is_set() {
            (record::cancelled(variant, at), None, false)
        } else {
            let mut preview = details::Preview::new(if last { PREVIEW_ROWS } else { 0 });
            let query = &queries[turn.variant];
            let cx = IterationContext {
                spec: &spec,
                variant,
                at,
                sink,
                cancel,
            };
            let Done {
                record,
                timing,
                no_token,
            } = cold::iteration(&sessions, query, &cx, &mut preview).await;
            // Each iteration's plan goes into the report (its signature, its operators' figures);
            // the emulator's PROFILE answers carry an empty plan, which is no plan.
            if let Some(nodes) = timing
                .as_ref()
                .and_then(|t| t.stats.as_ref()?.plan.as_deref())
                .filter(|nodes| !nodes.is_empty())
            {
                reports[turn.variant].plans.record(turn.iteration, nodes);
            }
            let details = timing
                .filter(|_| last)
                .map(|t| iteration_details(variant, turn.iteration, t, preview));
            (record, details, no_token)
        };
        let stop = record.outcome.is_cancelled();
        let so_far = &mut sent[turn.variant];
        if so_far.records == 0 && record.failed_for_good() {
            reports[turn.variant].stopped = Some(stopped_because(&record));
        }
        if let Some(why) = no_token.after(tokenless, &record) {
            for later in &turns[seq as usize + 1..] {
                reports[later.variant]
                    .stopped
                    .get_or_insert_with(|| why.clone());
            }
        }
        so_far.records += 1;
        so_far.messages += kept_messages(&record);
        sink.send(EngineEvent::Iteration {
            variant: turn.variant,
            record: Box::new(record),
        });
        if let Some(details) = details {
            sink.send(EngineEvent::Details(Box::new(details)));
        }
        if stop {
            break;
        }
    }
    sessions.close().await;
    sink.send(EngineEvent::Finished(reports));
}

/// Why a variant stopped after its first iteration: its error, and that no retry can fix it.
fn stopped_because(record: &IterationRecord) -> String {
    format!(
        "stopped after the first iteration: {} (an error no retry can fix)",
        record.error().unwrap_or("the server refused the query")
    )
}

/// Iterations in a row that could not get an access token before the run stops. A token endpoint
/// that dies (or hangs) after the first token fails every later iteration alike, each after the
/// call limit: 3,000 iterations took four hours to fail. A few in a row rather than the first
/// (as a query that cannot succeed stops): one renewal can fail and the next succeed.
const TOKEN_FAILURES_TO_STOP: u32 = 3;

/// Counts the iterations in a row that could not get an access token.
#[derive(Debug, Default)]
struct NoToken {
    in_a_row: u32,
}

impl NoToken {
    /// Counts an iteration that had no token (`tokenless`), or starts again after one that had;
    /// why the run stops when this one makes [`TOKEN_FAILURES_TO_STOP`] in a row.
    fn after(&mut self, tokenless: bool, record: &IterationRecord) -> Option<String> {
        self.in_a_row = if tokenless { self.in_a_row + 1 } else { 0 };
        (self.in_a_row == TOKEN_FAILURES_TO_STOP).then(|| {
            format!(
                "stopped after {TOKEN_FAILURES_TO_STOP} iterations in a row could not get an \
                 access token: {}",
                record.error().unwrap_or("no token")
            )
        })
    }
}

/// What a variant's records sent so far hold, as far as the run loop reads them.
#[derive(Debug, Clone, Copy, Default)]
struct Sent {
    /// How many were sent.
    records: usize,
    /// The messages their timelines keep one by one (against the run's limit).
    messages: usize,
}

/// Messages the timeline of `record` keeps one by one.
fn kept_messages(record: &IterationRecord) -> usize {
    let lanes = record.timeline.iter().flat_map(|t| &t.lanes);
    lanes.map(|lane| lane.messages.len()).sum()
}

/// The details of a variant's last iteration: its kept rows as text, with its columns' headings.
fn iteration_details(
    variant: &Variant,
    iteration: u32,
    timing: IterationTiming,
    preview: details::Preview,
) -> IterationDetails {
    IterationDetails {
        run: variant.label.clone(),
        iteration,
        columns: details::column_headings(timing.columns.as_deref().unwrap_or_default()),
        rows: preview.into_text(),
        rows_total: timing.rows,
        stats: timing.stats,
        server_timing: timing.server_timing,
        partitions: timing.partitions,
        request_id: timing.request_id.map(|id| id.to_string()),
        trace_id: timing.trace_id,
        operation: timing.operation,
        attempts: timing.attempts,
    }
}
