//! What the engine reports and how: a profile's [`EngineEvent`]s in order (a subject's are the
//! same), a load run's [`LoadEvent`]s, a recording's result, all carried as one [`RunEvent`]; why
//! a run could not start ([`EngineError`]), the sink they go through (a notify callback after
//! each), and the cancellation shared between a run and its handle.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use tokio::sync::Notify;

use crate::client::{ClientError, IterationError, IterationTiming};
use crate::load::{LoadReport, StepLevel, StepResult};
use crate::report::{IterationRecord, ReportHead};
use crate::retry_lab::RwRequest;

use super::details::IterationDetails;
use super::keeper::StartLocalError;
use super::spec::SpecError;

/// Why a run could not start.
#[derive(Debug, Clone, thiserror::Error)]
pub enum EngineError {
    /// The built-in local instance could not start.
    #[error(transparent)]
    StartLocal(#[from] StartLocalError),
    /// The target, the session or a query's preparation failed.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The profile cannot run as asked.
    #[error(transparent)]
    Spec(#[from] SpecError),
}

/// What the engine reports, in order: `Connected` (or `Failed`), then per iteration any number of
/// `Progress` and one `Iteration`, with each variant's last iteration (when it ended ok) followed
/// by its `Details`, then `Finished`. Each record crosses once, in its `Iteration`; a
/// `ReportCollector` (`reports.rs`) puts the reports together.
#[derive(Debug, Clone)]
pub enum EngineEvent {
    /// The target is reachable and a session exists; creating it took `session_ms` (not counted in
    /// any iteration).
    Connected {
        /// A description of the target.
        target: String,
        /// Milliseconds to create the session.
        session_ms: f64,
    },
    /// Rows decoded so far in the current iteration (sent at most every 100 ms).
    Progress {
        /// The variant running.
        variant: usize,
        /// Its 0-based iteration number, warm-ups first.
        iteration: u32,
        /// The iteration's place in the whole schedule, from 0.
        step: u32,
        /// Iterations in the whole schedule, every variant's warm-ups included.
        steps: u32,
        /// Rows decoded so far in this iteration.
        rows: u64,
        /// Bytes of the messages those rows came from.
        wire_bytes: u64,
    },
    /// An iteration ended (ok, error or cancelled).
    Iteration {
        /// Its variant's place in the spec (its record's `run` is the variant's label).
        variant: usize,
        /// What it measured: the only copy the engine sends.
        record: Box<IterationRecord>,
    },
    /// What a variant's last iteration returned: a bounded preview of its rows, its statistics and
    /// plan, and the server timing.
    Details(Box<IterationDetails>),
    /// The run ended: per variant, in the variants' order, what its report holds besides the
    /// records (its configuration, start, plans, and why it stopped early); the records came
    /// before, one `Iteration` each, and are not sent again.
    Finished(Vec<ReportHead>),
    /// The run could not start (an unreachable target, no session, a bad parameter or option...).
    Failed(EngineError),
}

/// What a load run reports, in order: `Connected` (or `Failed`), then per step `StepStarted`
/// and `StepDone`, then `Finished`.
#[derive(Debug, Clone)]
pub enum LoadEvent {
    /// A session exists on the target, described.
    Connected(String),
    /// A step began.
    StepStarted {
        /// Its index.
        index: usize,
        /// Its level.
        level: StepLevel,
    },
    /// A step ended; its figures.
    StepDone(Box<StepResult>),
    /// The run ended (completed or cancelled): its report.
    Finished(Box<LoadReport>),
    /// The run could not start.
    Failed(EngineError),
}

/// A recorded execution: the stream as the decoder consumed it, in the stream-file format.
#[derive(Debug, Clone)]
pub struct Recording {
    /// The stream file's bytes.
    pub file: Vec<u8>,
    /// What the iteration measured.
    pub timing: IterationTiming,
}

/// Why a recording could not be made.
#[derive(Debug, thiserror::Error)]
pub enum RecordingError {
    /// It could not start, as a run cannot: the local instance, the session, the query's
    /// preparation or the spec.
    #[error(transparent)]
    Start(#[from] EngineError),
    /// The execution failed.
    #[error(transparent)]
    Iteration(#[from] IterationError),
}

/// What one run of the retry lab found.
#[derive(Debug, Clone)]
pub struct RetryLabRun {
    /// The program, as typed.
    pub command: String,
    /// How it exited (`exit 0`, a signal, killed past its limit).
    pub exit: String,
    /// Whether it exited 0.
    pub success: bool,
    /// The end of its standard error.
    pub stderr_tail: String,
    /// How long it ran.
    pub elapsed: Duration,
    /// The read-write calls the instance saw.
    pub requests: Vec<RwRequest>,
    /// Whether more came than it keeps.
    pub overflow: bool,
}

/// Why the retry lab could not run.
#[derive(Debug, thiserror::Error)]
pub enum RetryLabError {
    /// The local instance did not start.
    #[error("the local instance did not start: {0}")]
    Start(String),
    /// The program did not start or could not be waited for.
    #[error("{0}")]
    Command(#[from] crate::subject::command::RunError),
    /// The run could not start (its thread or runtime).
    #[error("the retry lab could not start: {0}")]
    NotStarted(String),
}

/// What any run reports, by its kind: one handle carries every kind's events, each kind keeping
/// its own type.
#[derive(Debug)]
pub enum RunEvent {
    /// A profile's or a subject's event.
    Profile(EngineEvent),
    /// A load run's event.
    Load(LoadEvent),
    /// A recording's one event: the recording, or why there is none.
    Recorded(Box<Result<Recording, RecordingError>>),
    /// The retry lab's one event: what the instance saw, or why it could not run.
    RetryLab(Box<Result<RetryLabRun, RetryLabError>>),
}

impl RunEvent {
    /// The profile's (or subject's) event this is, if it is one.
    pub fn into_profile(self) -> Option<EngineEvent> {
        match self {
            RunEvent::Profile(event) => Some(event),
            _ => None,
        }
    }

    /// The load run's event this is, if it is one.
    pub fn into_load(self) -> Option<LoadEvent> {
        match self {
            RunEvent::Load(event) => Some(event),
            _ => None,
        }
    }
}

impl From<EngineEvent> for RunEvent {
    fn from(event: EngineEvent) -> Self {
        RunEvent::Profile(event)
    }
}

impl From<LoadEvent> for RunEvent {
    fn from(event: LoadEvent) -> Self {
        RunEvent::Load(event)
    }
}

impl From<Result<RetryLabRun, RetryLabError>> for RunEvent {
    fn from(ran: Result<RetryLabRun, RetryLabError>) -> Self {
        RunEvent::RetryLab(Box::new(ran))
    }
}

impl From<Result<Recording, RecordingError>> for RunEvent {
    fn from(recorded: Result<Recording, RecordingError>) -> Self {
        RunEvent::Recorded(Box::new(recorded))
    }
}

/// Shared between the engine and its handle. The flag is shared on its own with what runs off
/// the runtime (a load run's generator threads read it).
#[derive(Debug, Default)]
pub(super) struct Cancel {
    pub(super) flag: Arc<AtomicBool>,
    pub(super) notify: Notify,
}

impl Cancel {
    pub(super) fn is_set(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }

    /// Stops the run: the flag for the loops, the notification for what awaits in flight.
    pub(super) fn set(&self) {
        self.flag.store(true, Ordering::SeqCst);
        self.notify.notify_one();
    }
}

/// Called after each event is sent (the app asks for a repaint there).
pub type Notifier = Arc<dyn Fn() + Send + Sync>;

/// Where a run's events go: the channel, and the callback told after each.
pub(super) struct Sink {
    pub(super) tx: mpsc::Sender<RunEvent>,
    pub(super) notify: Notifier,
}

impl Sink {
    /// Sends any kind's event, as the handle's one type.
    pub(super) fn send(&self, event: impl Into<RunEvent>) {
        // A caller that dropped its receiver no longer wants events.
        let _ = self.tx.send(event.into());
        (self.notify)();
    }
}
