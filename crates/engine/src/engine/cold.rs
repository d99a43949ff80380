//! The sessions a run holds (one per kind its variants ask for) and its cold iterations: each
//! opens a new connection, token source and session ([`ColdStart`]), runs its query there, and
//! records the steps before the query beside the query's own phases; the iteration's total is the
//! wall time of all of it, so the steps and the query's phases add up to it. The cold session is
//! closed after the iteration, outside its time.

use std::time::{Duration, Instant};

use super::details::Preview;
use super::events::{Cancel, EngineError, Sink};
use super::iteration::{Position, blank_record, one_iteration};
use super::spec::{ProfileSpec, Variant};
use super::target::{Connected, Target, connect};
use super::{SESSION_DELETE_WAIT, ms};
use crate::client::{ColdPhases, ColdStart, IterationTiming, PreparedQuery, Session, SessionKind};
use crate::report::{IterationRecord, ReportHead, SetupStep, Status};

/// The run's warm sessions, one per kind of session its variants ask for (the first variant's
/// first), and where its cold iterations connect; all of them on the one endpoint the run
/// connected to (the local instance, if the target is the local one, started once for the run
/// and held here until the sessions are closed).
pub(super) struct RunSessions {
    warm: Vec<Session>,
    cold: Option<ColdStart>,
    connected: Connected,
}

impl RunSessions {
    /// Makes `target` reachable, opens a session of each kind the variants ask for and prepares
    /// every variant's query on its kind's session; closes what it opened when something fails.
    pub(super) async fn open(
        target: &Target,
        spec: &ProfileSpec,
    ) -> Result<(RunSessions, Vec<PreparedQuery>), EngineError> {
        let mut sessions = RunSessions {
            warm: Vec::new(),
            cold: None,
            connected: connect(target).await?,
        };
        match sessions.open_all(spec).await {
            Ok(queries) => Ok((sessions, queries)),
            Err(e) => {
                // Best effort: the sessions are of no use, and the server would expire them anyway.
                sessions.close().await;
                Err(e)
            }
        }
    }

    async fn open_all(&mut self, spec: &ProfileSpec) -> Result<Vec<PreparedQuery>, EngineError> {
        let endpoint = &self.connected.endpoint;
        let mut queries = Vec::with_capacity(spec.variants.len());
        for variant in &spec.variants {
            let kind = variant.session_kind();
            if !self.warm.iter().any(|s| s.asked() == kind) {
                let session =
                    Session::open_as(endpoint, &spec.database, spec.timeouts, kind, spec.headers)
                        .await?;
                self.warm.push(session);
            }
            queries.push(self.of_kind(kind).prepare(&variant.query())?);
        }
        if spec.variants.iter().any(|v| v.cold) {
            self.cold = Some(ColdStart::new(endpoint, spec.headers)?);
        }
        Ok(queries)
    }

    /// The first session opened (the run's `Connected` event describes it).
    pub(super) fn first(&self) -> &Session {
        &self.warm[0]
    }

    /// The session of `kind` (opened for every kind a variant asks for).
    pub(super) fn of_kind(&self, kind: SessionKind) -> &Session {
        self.warm
            .iter()
            .find(|s| s.asked() == kind)
            .unwrap_or(&self.warm[0])
    }

    /// Records in each variant's report the kind of session it asked for and, when the server
    /// granted another, that one.
    pub(super) fn note_kinds(&self, variants: &[Variant], reports: &mut [ReportHead]) {
        for (variant, report) in variants.iter().zip(reports) {
            let session = self.of_kind(variant.session_kind());
            report.config.session = Some(session.asked());
            if session.granted() != session.asked() {
                report.config.session_granted = Some(session.granted());
            }
        }
    }

    /// Deletes the sessions (multiplexed ones are left to expire), waiting at most
    /// [`SESSION_DELETE_WAIT`] for each.
    pub(super) async fn close(self) {
        for session in self.warm.into_iter().rev() {
            // Best effort: the server drops idle sessions anyway.
            let _ = session.close(SESSION_DELETE_WAIT).await;
        }
        // The local instance, if the run started one, stops once its sessions are closed.
        drop(self.connected);
    }
}

/// Runs one iteration of `variant`: warm on its kind's session, or a cold start first.
pub(super) async fn iteration(
    sessions: &RunSessions,
    query: &PreparedQuery,
    (spec, variant): (&ProfileSpec, &Variant),
    at: Position,
    preview: &mut Preview,
    sink: &Sink,
    cancel: &Cancel,
) -> (IterationRecord, Option<IterationTiming>) {
    let kind = variant.session_kind();
    let Some(cold) = sessions.cold.as_ref().filter(|_| variant.cold) else {
        let session = sessions.of_kind(kind);
        let (mut record, timing) =
            one_iteration(session, query, (spec, variant), at, preview, sink, cancel).await;
        record.session_kind = Some(session.granted().as_str().to_owned());
        return (record, timing);
    };
    let started = Instant::now();
    let opening = tokio::select! {
        o = cold.open(&spec.database, spec.timeouts, kind) => Some(o),
        _ = cancel.notify.notified() => None,
    };
    let (session, phases) = match opening {
        Some(Ok(opened)) => opened,
        Some(Err(e)) => {
            let error = (Status::Error, e.to_string());
            return (failed(variant, at, started, error), None);
        }
        None => {
            let cancelled = (Status::Cancelled, "cancelled".to_owned());
            return (failed(variant, at, started, cancelled), None);
        }
    };
    let query = query.in_session(session.name());
    let query_from = started.elapsed();
    let (mut record, timing) =
        one_iteration(&session, &query, (spec, variant), at, preview, sink, cancel).await;
    let wall = started.elapsed();
    record.session_kind = Some(session.granted().as_str().to_owned());
    add_setup(&mut record, &phases, query_from, wall);
    // Outside the iteration's time: a regular session is deleted, a multiplexed one left.
    let _ = session.close(SESSION_DELETE_WAIT).await;
    (record, timing)
}

/// A cold iteration that did not reach its query (an error names the step), or was cancelled
/// before it did.
fn failed(
    variant: &Variant,
    at: Position,
    started: Instant,
    (status, error): (Status, String),
) -> IterationRecord {
    IterationRecord {
        status,
        error: Some(error),
        total_ms: ms(started.elapsed()),
        ..blank_record(variant, at)
    }
}

/// Puts a cold start's steps into `record`: its phases, its timeline's setup (the query's lanes
/// moved to begin at `query_from`), and a total that is the whole `wall` time. What lies between
/// the steps and the query (the client's own work) goes to `other`, so the phases add up to the
/// total.
fn add_setup(
    record: &mut IterationRecord,
    phases: &ColdPhases,
    query_from: Duration,
    wall: Duration,
) {
    let c = &phases.connect;
    record.dns_ms = Some(ms(c.dns));
    record.tcp_ms = Some(ms(c.tcp));
    record.tls_ms = Some(ms(c.tls));
    record.http2_ms = Some(ms(c.http2));
    record.token_ms = Some(ms(phases.token));
    record.session_ms = Some(ms(phases.session));
    if record.status != Status::Ok {
        record.total_ms = ms(wall);
        return;
    }
    let query_ms = record.total_ms;
    record.total_ms = ms(wall);
    let named = ms(phases.total()) + query_ms;
    record.other_ms = Some(record.other_ms.unwrap_or(0.0) + (record.total_ms - named).max(0.0));
    record.total_ms = record.total_ms.max(named);
    if let Some(timeline) = &mut record.timeline {
        let shift = us(query_from);
        for lane in &mut timeline.lanes {
            lane.origin_us = lane.origin_us.saturating_add(shift);
        }
        timeline.total_us = us(wall).max(timeline.total_us.saturating_add(shift));
        let mut start_us = 0u64;
        timeline.setup = phases
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
}

fn us(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::ConnectSteps;
    use crate::report::{Lane, Timeline};

    #[test]
    fn a_cold_start_s_steps_and_the_query_add_up_to_the_wall_time() {
        let mut record = IterationRecord {
            total_ms: 10.0,
            network_ms: Some(6.0),
            wire_decode_ms: Some(2.0),
            row_decode_ms: Some(1.0),
            other_ms: Some(1.0),
            timeline: Some(Timeline {
                lanes: vec![Lane::default()],
                total_us: 10_000,
                setup: Vec::new(),
            }),
            ..IterationRecord::new("cold", 0, false, "2026-01-02T03:04:05Z")
        };
        let phases = ColdPhases {
            connect: ConnectSteps {
                dns: Duration::from_millis(1),
                tcp: Duration::from_millis(2),
                tls: Duration::from_millis(3),
                http2: Duration::from_millis(4),
            },
            token: Duration::from_millis(5),
            session: Duration::from_millis(6),
        };
        add_setup(
            &mut record,
            &phases,
            Duration::from_millis(22),
            Duration::from_millis(32),
        );
        let parts = [
            record.dns_ms,
            record.tcp_ms,
            record.tls_ms,
            record.http2_ms,
            record.token_ms,
            record.session_ms,
            record.network_ms,
            record.wire_decode_ms,
            record.row_decode_ms,
            record.other_ms,
        ];
        let sum: f64 = parts.iter().map(|p| p.expect("measured")).sum();
        assert!(
            (sum - record.total_ms).abs() < 1e-9,
            "{sum} vs {}",
            record.total_ms
        );
        assert_eq!(record.total_ms, 32.0);
        assert_eq!(
            record.other_ms,
            Some(2.0),
            "the 1 ms between the steps and the query"
        );
        let timeline = record.timeline.expect("kept");
        assert_eq!(timeline.lanes[0].origin_us, 22_000);
        assert_eq!(timeline.setup_end_us(), 21_000);
        assert_eq!(timeline.setup_us("tls"), 3_000);
        assert_eq!(timeline.total_us, 32_000);
    }
}
