//! The sessions a run holds (one per kind its variants ask for) and its cold iterations: each
//! opens a new connection, token source and session ([`ColdStart`]) and runs the warm iteration
//! there, given the start ([`ColdSetup`]): its record has the steps before the query beside the
//! query's own phases, and its total is the wall time of all of it, so the steps and the query's
//! phases add up to it. The cold session is closed after the iteration, outside its time.

use std::time::Instant;

use super::common::SESSION_DELETE_WAIT;
use super::details::Preview;
use super::events::EngineError;
use super::iteration::{Done, IterationContext, one_iteration};
use super::record::{self, ColdSetup};
use super::spec::{ProfileSpec, Variant};
use super::target::{Connected, Target, connect};
use crate::client::{ColdStart, PreparedQuery, Session, SessionKind};
use crate::report::ReportHead;

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

/// Runs one iteration: warm on its variant's kind of session, or on a new one after a cold start,
/// which it wraps around the warm iteration.
pub(super) async fn iteration(
    sessions: &RunSessions,
    query: &PreparedQuery,
    cx: &IterationContext<'_>,
    preview: &mut Preview,
) -> Done {
    let kind = cx.variant.session_kind();
    if let Some(rw) = &cx.variant.read_write {
        return super::transaction::iteration(sessions.of_kind(kind), rw, cx).await;
    }
    let Some(cold) = sessions.cold.as_ref().filter(|_| cx.variant.cold) else {
        return one_iteration(sessions.of_kind(kind), query, cx, preview, None).await;
    };
    let started = Instant::now();
    let opening = tokio::select! {
        o = cold.open(&cx.spec.database, cx.spec.timeouts, kind) => Some(o),
        _ = cx.cancel.notify.notified() => None,
    };
    let (session, steps) = match opening {
        Some(Ok(opened)) => opened,
        Some(Err(e)) => {
            return Done {
                record: record::cold_start_failed(cx.variant, cx.at, started, Some(e.to_string())),
                timing: None,
                no_token: e.is_token_failure(),
            };
        }
        None => {
            return Done {
                record: record::cold_start_failed(cx.variant, cx.at, started, None),
                timing: None,
                no_token: false,
            };
        }
    };
    let query = query.in_session(session.name());
    let setup = ColdSetup {
        steps,
        query_from: started.elapsed(),
        started,
    };
    let done = one_iteration(&session, &query, cx, preview, Some(&setup)).await;
    // Outside the iteration's time: a regular session is deleted, a multiplexed one left.
    let _ = session.close(SESSION_DELETE_WAIT).await;
    done
}
