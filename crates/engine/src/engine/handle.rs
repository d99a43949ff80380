//! The one way a run starts, of any kind: [`Engine::start`] takes a [`Job`] and runs its room on
//! a named thread of its own with a tokio runtime of its own, owning the cancellation and the
//! event sink; the handle reads the run's [`RunEvent`]s and cancels it at once (when asked, or
//! when dropped, never waiting). [`record`] is a recording's job, waited for.

use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use crate::client::ClientError;
use crate::report::RunReport;

use super::events::{
    Cancel, EngineError, EngineEvent, LoadEvent, Notifier, Recording, RecordingError,
    RetryLabError, RetryLabRun, RunEvent, Sink,
};
use super::job::Job;
use super::load::InFlightCount;
use super::reports::ReportCollector;
use super::spec::ProfileSpec;
use super::subject::SubjectSpec;
use super::target::Target;

/// A running run, of any kind. Dropping it cancels the run and returns at once: the engine's
/// thread abandons what is in flight, deletes its sessions (waiting at most
/// [`SESSION_DELETE_WAIT`](super::SESSION_DELETE_WAIT)) and ends on its own (a load run still
/// sends its report, to nobody).
#[derive(Debug)]
pub struct Engine {
    cancel: Arc<Cancel>,
    events: mpsc::Receiver<RunEvent>,
    in_flight: InFlightCount,
}

/// Cancels a run from elsewhere (a signal handler's thread), as [`Engine::cancel`] does.
#[derive(Debug, Clone)]
pub struct Canceller(Arc<Cancel>);

impl Canceller {
    /// Asks the run to stop.
    pub fn cancel(&self) {
        self.0.set();
    }
}

impl Engine {
    /// Starts `job` on a new thread with its own runtime; `notify` is called after each event.
    /// Fails before any thread starts when the job cannot run as asked (a load plan's levels).
    pub fn start(job: Job, notify: Notifier) -> std::io::Result<Engine> {
        let shape = job.shape()?;
        let (tx, events) = mpsc::channel();
        let cancel = Arc::new(Cancel::default());
        let engine_cancel = Arc::clone(&cancel);
        let in_flight = InFlightCount::default();
        let counted = in_flight.clone();
        std::thread::Builder::new()
            .name(shape.thread.into())
            .spawn(move || {
                let sink = Sink { tx, notify };
                match runtime(shape.io, shape.workers) {
                    Ok(rt) => {
                        rt.block_on(job.run(&sink, &engine_cancel, counted));
                        // What was abandoned in flight ends with the runtime, not after it.
                        rt.shutdown_timeout(Duration::from_secs(1));
                    }
                    Err(e) => sink.send((shape.failed)(e.into())),
                }
            })?;
        Ok(Engine {
            cancel,
            events,
            in_flight,
        })
    }

    /// Asks the run to stop: the iteration in flight is abandoned (reported as cancelled) at
    /// once; a load run stops generating, abandons its requests and reports what it measured.
    pub fn cancel(&self) {
        self.cancel.set();
    }

    /// What cancels the run from another thread.
    pub fn canceller(&self) -> Canceller {
        Canceller(Arc::clone(&self.cancel))
    }

    /// How many of a load run's requests are in flight now, to read while it runs (other kinds
    /// count none).
    pub fn in_flight(&self) -> InFlightCount {
        self.in_flight.clone()
    }

    /// The next event, if one is waiting.
    pub fn try_next(&self) -> Option<RunEvent> {
        self.events.try_recv().ok()
    }

    /// Waits for the next event at most `wait`; `None` when none came (or the run has ended).
    pub fn next_within(&self, wait: Duration) -> Option<RunEvent> {
        self.events.recv_timeout(wait).ok()
    }

    /// Waits for the next event; `None` once the engine has ended and every event was read.
    pub fn next(&self) -> Option<RunEvent> {
        self.events.recv().ok()
    }

    /// A profile's (or subject's) events as they come, waiting for each, until the run ends.
    pub fn profile_events(&self) -> impl Iterator<Item = EngineEvent> + '_ {
        std::iter::from_fn(|| self.next()).filter_map(RunEvent::into_profile)
    }

    /// A load run's events as they come, waiting for each, until the run ends.
    pub fn load_events(&self) -> impl Iterator<Item = LoadEvent> + '_ {
        std::iter::from_fn(|| self.next()).filter_map(RunEvent::into_load)
    }

    /// Waits for a profile's end and returns its reports, one per variant, for a caller that
    /// reads no event on the way; `Ok(None)` when the engine ended without finishing.
    pub fn reports(self) -> Result<Option<Vec<RunReport>>, EngineError> {
        let mut records = ReportCollector::default();
        for event in self.profile_events() {
            match event {
                EngineEvent::Iteration { variant, record } => records.push(variant, *record),
                EngineEvent::Finished(heads) => return Ok(Some(records.finish(heads))),
                EngineEvent::Failed(error) => return Err(error),
                _ => {}
            }
        }
        Ok(None)
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        // The thread is not joined: it ends by itself once the session is deleted, and a caller
        // that drops the handle (a window closing) must not wait for a server's answer.
        self.cancel();
    }
}

/// Runs the retry lab on `spec`'s program and waits for what the local instance saw (the engine's
/// thread runs it, as every run).
pub fn retry_lab_run(spec: &SubjectSpec) -> Result<RetryLabRun, RetryLabError> {
    let engine = Engine::start(Job::RetryLab(spec.clone()), Arc::new(|| {}))
        .map_err(|e| RetryLabError::NotStarted(e.to_string()))?;
    while let Some(event) = engine.next() {
        if let RunEvent::RetryLab(ran) = event {
            return *ran;
        }
    }
    // The thread ended without a word: it could not have, but a caller is owed an answer.
    Err(RetryLabError::NotStarted(
        "the retry lab's thread ended without its answer".to_owned(),
    ))
}

/// Runs `spec`'s first variant once and records every message the decoder consumed, after any
/// resume, so that `spanprof decode` reproduces its rows offline; waits for it (the engine's
/// thread runs it).
pub fn record(target: Target, spec: &ProfileSpec) -> Result<Recording, RecordingError> {
    let engine = Engine::start(Job::Record(target, spec.clone()), Arc::new(|| {}))
        .map_err(|e| EngineError::from(ClientError::Runtime(Arc::new(e))))?;
    while let Some(event) = engine.next() {
        if let RunEvent::Recorded(recorded) = event {
            return *recorded;
        }
    }
    // The thread ended without a word: it could not have, but a caller is owed an answer.
    Err(
        EngineError::from(ClientError::Runtime(Arc::new(std::io::Error::other(
            "the recording's thread ended without its recording",
        ))))
        .into(),
    )
}

/// A run's runtime: `workers` workers, named `name`.
fn runtime(name: &str, workers: usize) -> Result<tokio::runtime::Runtime, ClientError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .thread_name(name)
        .enable_all()
        .build()
        .map_err(|e| ClientError::Runtime(Arc::new(e)))
}
