//! One request of a load test: the query run once on one of the run's sessions, its rows counted and
//! dropped, and what it measured folded into its step (the accounting's parts through the same
//! record `profile` fills, then the record dropped: nothing is kept per request). A read-write
//! run's request is a transaction instead (`super::transaction`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::client::{Decoding, PreparedQuery, ResumePolicy, Session};
use crate::load::Ended;

use super::super::record;
use super::draws::RequestDraws;
use super::sink::{StepSink, status_name};
use super::transaction::Transactions;
use crate::load::draw::WARM_UP;
use crate::wire::{DecoderKind, RowsView};

/// What every request of a run shares.
pub(super) struct Shared {
    /// The run's sessions, each on a connection of its own, and the query prepared on each:
    /// requests take them in turn (see [`super::connections_for`]).
    pub(super) sessions: Vec<(Session, PreparedQuery)>,
    /// The next session a request takes.
    pub(super) next: AtomicUsize,
    pub(super) decoder: DecoderKind,
    /// The run's requests in flight, counted.
    pub(super) in_flight: super::InFlightCount,
    /// A read-write run's sessions and script: each request is one transaction, on a session of
    /// its own (`sessions` is empty then).
    pub(super) transactions: Option<Transactions>,
    /// What each request draws, when the run draws parameters or mixes scripts.
    pub(super) draws: Option<RequestDraws>,
}

impl Shared {
    /// The session (and its prepared query) the next request runs on, in turn.
    pub(super) fn pick(&self) -> (&Session, &PreparedQuery) {
        let n = self.next.fetch_add(1, Ordering::Relaxed) % self.sessions.len().max(1);
        let (session, query) = &self.sessions[n];
        (session, query)
    }
}

/// Runs one request meant to start at `intended`, started at `started`, into `step`; returns
/// whether it ended (false: abandoned in flight).
pub(super) async fn run(
    shared: Arc<Shared>,
    step: Arc<StepSink>,
    intended: Instant,
    started: Instant,
) -> bool {
    let _counted = shared.in_flight.enter();
    let drawn = shared.draws.as_ref().map(RequestDraws::next);
    if let Some(transactions) = &shared.transactions {
        return transactions
            .run(shared.decoder, &step, intended, drawn.as_ref())
            .await;
    }
    let (mut rows, mut bytes) = (0u64, 0u64);
    let mut on_rows = |batch: RowsView<'_>, message_bytes: usize| {
        rows += batch.len() as u64;
        bytes += message_bytes as u64;
    };
    let decoding = Decoding {
        kept_messages: 0,
        ..Decoding::new(shared.decoder, &mut on_rows)
    };
    let mut abandon = step.abandon.clone();
    let (session, query) = shared.pick();
    let bound_query;
    let query = match &drawn {
        Some(draw) => {
            bound_query = query.with_bound(&draw.bound);
            &bound_query
        }
        None => query,
    };
    let outcome = tokio::select! {
        outcome = session.execute(query, ResumePolicy::default(), decoding) => outcome,
        _ = abandon.wait_for(|&stop| stop) => return false,
    };
    let now = Instant::now();
    let at = now.saturating_duration_since(step.began);
    match outcome {
        Ok(mut timing) => {
            // The timeline is not needed: only the parts are kept.
            timing.lanes = Vec::new();
            let record = record::of_request(&timing);
            let parts = record.accounting().parts;
            let ended = Ended {
                from_intended: now.saturating_duration_since(intended),
                from_start: now.saturating_duration_since(started),
                at,
                rows,
                bytes,
                decode_cpu: timing.wire_decode_cpu + timing.row_decode_cpu,
                work_cpu: timing.client_work_cpu,
            };
            let mut tally = step.lock();
            tally.ok(&ended, &parts);
            if let Some(queued) = record.query.server_queue_ms {
                tally.queued(queued);
            }
        }
        Err(error) => step.lock().error(&status_name(&error), at),
    }
    true
}

/// One request before the first step, its outcome and figures kept out, as `profile` keeps its
/// warm-up out: a run's first request pays for cold caches and first allocations (tens of
/// milliseconds of decode CPU for a wide answer), which would otherwise weigh on the first step's
/// decode CPU per request, and so on the decode capacity the report states. A cancel ends it.
pub(super) async fn warm_up(shared: &Shared, cancel: &AtomicBool) {
    let drawn = shared.draws.as_ref().map(|d| d.of(WARM_UP));
    if let Some(transactions) = &shared.transactions {
        return transactions
            .warm_up(shared.decoder, cancel, drawn.as_ref())
            .await;
    }
    let mut ignore = |_: RowsView<'_>, _: usize| {};
    let decoding = Decoding {
        kept_messages: 0,
        ..Decoding::new(shared.decoder, &mut ignore)
    };
    let cancelled = async {
        while !cancel.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let (session, query) = shared.pick();
    let bound_query;
    let query = match &drawn {
        Some(draw) => {
            bound_query = query.with_bound(&draw.bound);
            &bound_query
        }
        None => query,
    };
    tokio::select! {
        _ = session.execute(query, ResumePolicy::default(), decoding) => {}
        () = cancelled => {}
    }
}

/// How long `behind` its intended time a start was.
pub(super) fn behind(intended: Instant, started: Instant) -> Duration {
    started.saturating_duration_since(intended)
}
