//! One iteration on a session: where it falls in the schedule ([`Position`]), what it runs with
//! ([`IterationContext`]), its run with progress sent and cancellation watched; its record is
//! built by [`record`](super::record).

use std::time::{Duration, Instant};

use crate::client::{Decoding, IterationTiming, PreparedQuery, ResumePolicy, Session};
use crate::report::IterationRecord;
use crate::wire::RowsView;

use super::details;
use super::events::{Cancel, EngineEvent, Sink};
pub(super) use super::record::Position;
use super::record::{self, ColdSetup, Ended};
use super::spec::{ProfileSpec, Variant};

/// What one iteration runs with: the run's spec, the iteration's variant and place, where its
/// events go and the run's cancel.
pub(super) struct IterationContext<'a> {
    pub(super) spec: &'a ProfileSpec,
    pub(super) variant: &'a Variant,
    pub(super) at: Position,
    pub(super) sink: &'a Sink,
    pub(super) cancel: &'a Cancel,
}

/// An iteration as the run loop reads it: its record, what the client measured when it ended ok,
/// and whether it failed for want of an access token (the call was never made).
pub(super) struct Done {
    pub(super) record: IterationRecord,
    pub(super) timing: Option<IterationTiming>,
    pub(super) no_token: bool,
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
    let mut blank = record::blank(cx.variant, at);
    blank.session_kind = Some(session.granted());
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
                variant: at.turn.variant,
                iteration: at.turn.iteration,
                step: at.seq,
                steps: at.turns,
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
    let record = record::built(blank, ended, cold, wall);
    Done {
        record,
        timing: outcome.and_then(|(_, r)| r.ok()),
        no_token,
    }
}
