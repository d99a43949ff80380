//! The sessions of a read-write load run: a session holds one read-write transaction at a time, so
//! a request takes a session of its own from the pool for its whole transaction (every attempt and
//! back-off) and gives it back when the transaction ends. The pool is filled before each step with
//! as many sessions as the step is expected to keep in flight (the closed model's clients; the open
//! model's rate over [`EXPECTED_LATENCY`]), and grows while a step runs when every session is taken,
//! up to the run's bound in flight. A session whose request was abandoned in flight is retired, never
//! lent again, and closed with the others at the run's end.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;

use crate::client::{
    ClientError, DatabasePath, Endpoint, HeaderOptions, Session, SessionKind, Timeouts,
};
use crate::load::{LoadSteps, Model, StepLevel};

/// The latency an open-model step's pool is filled for before the step: its rate times this many
/// seconds of requests in flight (Little's law); more are made as they are needed.
pub(super) const EXPECTED_LATENCY: Duration = Duration::from_millis(100);

/// How a session of the pool is opened.
pub(super) struct Opener {
    pub(super) endpoint: Endpoint,
    pub(super) database: DatabasePath,
    pub(super) timeouts: Timeouts,
    pub(super) kind: SessionKind,
    pub(super) headers: HeaderOptions,
}

/// The pool: the free sessions, the ones retired, how many exist, and its bound.
pub(super) struct SessionPool {
    opener: Opener,
    free: Mutex<Vec<Session>>,
    retired: Mutex<Vec<Session>>,
    /// Sessions lent or free (retired ones not counted).
    made: AtomicU32,
    max: u32,
    returned: Notify,
}

/// A session lent to one request: given back by [`Lease::give_back`], retired when dropped without.
pub(super) struct Lease<'a> {
    pool: &'a SessionPool,
    session: Option<Session>,
}

impl Lease<'_> {
    /// The session lent.
    pub(super) fn session(&self) -> &Session {
        self.session
            .as_ref()
            .expect("a lease holds its session until it ends")
    }

    /// Gives the session back: its transaction has ended, the next request may take it.
    pub(super) fn give_back(mut self) {
        if let Some(session) = self.session.take() {
            self.pool.lock(&self.pool.free).push(session);
            self.pool.returned.notify_one();
        }
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        if let Some(session) = self.session.take() {
            // Abandoned with its transaction in flight: never lent again.
            self.pool.lock(&self.pool.retired).push(session);
            self.pool.made.fetch_sub(1, Ordering::Relaxed);
            self.pool.returned.notify_one();
        }
    }
}

impl SessionPool {
    /// An empty pool of at most `max` sessions at once.
    pub(super) fn new(opener: Opener, max: u32) -> Self {
        SessionPool {
            opener,
            free: Mutex::new(Vec::new()),
            retired: Mutex::new(Vec::new()),
            made: AtomicU32::new(0),
            max: max.max(1),
            returned: Notify::new(),
        }
    }

    fn lock<'a>(&self, list: &'a Mutex<Vec<Session>>) -> std::sync::MutexGuard<'a, Vec<Session>> {
        list.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Claims a place for one more session, if the bound allows.
    fn claim(&self) -> bool {
        self.made
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < self.max).then_some(n + 1)
            })
            .is_ok()
    }

    /// Opens a session for a place claimed (the place given back if it fails).
    async fn open(&self) -> Result<Session, ClientError> {
        let o = &self.opener;
        let opened =
            Session::open_as(&o.endpoint, &o.database, o.timeouts, o.kind, o.headers).await;
        if opened.is_err() {
            self.made.fetch_sub(1, Ordering::Relaxed);
            self.returned.notify_one();
        }
        opened
    }

    /// Makes sessions until `n` exist (at most the bound), all at once; the first failure is
    /// returned.
    pub(super) async fn fill(self: &Arc<Self>, n: u32) -> Result<(), ClientError> {
        let mut opening = tokio::task::JoinSet::new();
        while self.made.load(Ordering::Relaxed) < n.min(self.max) && self.claim() {
            let pool = Arc::clone(self);
            opening.spawn(async move {
                let session = pool.open().await?;
                pool.lock(&pool.free).push(session);
                Ok::<(), ClientError>(())
            });
        }
        let mut first_error = None;
        while let Some(joined) = opening.join_next().await {
            if let Ok(Err(e)) = joined {
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// A session of the request's own: a free one, else a new one while the bound allows, else
    /// the first given back.
    pub(super) async fn take(&self) -> Result<Lease<'_>, ClientError> {
        loop {
            let returned = self.returned.notified();
            if let Some(session) = self.lock(&self.free).pop() {
                return Ok(Lease {
                    pool: self,
                    session: Some(session),
                });
            }
            if self.claim() {
                let session = self.open().await?;
                return Ok(Lease {
                    pool: self,
                    session: Some(session),
                });
            }
            returned.await;
        }
    }

    /// Every session the pool holds, free and retired (each request has ended or been abandoned),
    /// to be closed; the pool is empty after.
    pub(super) fn drain(&self) -> Vec<Session> {
        let mut all = std::mem::take(&mut *self.lock(&self.free));
        all.append(&mut self.lock(&self.retired));
        all
    }

    /// The sessions made so far, for the connection's description.
    pub(super) fn description(&self) -> Option<String> {
        self.lock(&self.free)
            .first()
            .map(|s| s.description().to_owned())
    }
}

/// How many sessions to have before a step at `level` starts: the closed model's clients, the
/// open model's rate times [`EXPECTED_LATENCY`] (at least one), within the plan's bound in flight.
pub(super) fn sessions_before(plan: &LoadSteps, level: StepLevel) -> u32 {
    let wanted = match level {
        StepLevel::Concurrency(c) => c,
        StepLevel::Rate(r) => (r * EXPECTED_LATENCY.as_secs_f64())
            .ceil()
            .clamp(1.0, f64::from(u32::MAX)) as u32,
    };
    match plan.model {
        Model::Open => wanted.min(plan.max_in_flight),
        Model::Closed => wanted,
    }
}

/// The most sessions a read-write run holds at once: as many as it may keep requests in flight.
pub(super) fn most_sessions(plan: &LoadSteps) -> u32 {
    match plan.model {
        Model::Open => plan.max_in_flight,
        Model::Closed => plan
            .levels
            .iter()
            .map(|&l| sessions_before(plan, l))
            .max()
            .unwrap_or(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(model: Model, levels: Vec<StepLevel>) -> LoadSteps {
        LoadSteps {
            model,
            levels,
            step_duration: Duration::from_secs(1),
            max_in_flight: 50,
            drain: Duration::from_secs(1),
        }
    }

    #[test]
    fn a_closed_step_has_a_session_per_client_and_an_open_one_its_rate_over_a_tenth_of_a_second() {
        let closed = plan(
            Model::Closed,
            vec![StepLevel::Concurrency(2), StepLevel::Concurrency(8)],
        );
        assert_eq!(sessions_before(&closed, StepLevel::Concurrency(2)), 2);
        assert_eq!(most_sessions(&closed), 8);
        let open = plan(
            Model::Open,
            vec![StepLevel::Rate(20.0), StepLevel::Rate(1e4)],
        );
        assert_eq!(sessions_before(&open, StepLevel::Rate(20.0)), 2);
        assert_eq!(sessions_before(&open, StepLevel::Rate(0.5)), 1);
        assert_eq!(
            sessions_before(&open, StepLevel::Rate(1e4)),
            50,
            "never past the bound in flight"
        );
        assert_eq!(most_sessions(&open), 50);
    }
}
