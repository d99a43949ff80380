//! The handle of a running profile: [`Engine`] starts a run on a thread of its own with its own
//! runtime, and cancels it at once (when asked, or when dropped, never waiting).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc;

use crate::report::RunReport;

use super::events::{Cancel, EngineError, EngineEvent, Notifier, Sink};
use super::reports::ReportCollector;
use super::run::run;
use super::runtime;
use super::spec::ProfileSpec;
use super::target::Target;

/// A running profile. Dropping it cancels the run and returns at once: the engine's thread
/// abandons the iteration in flight, deletes the session (waiting at most
/// [`SESSION_DELETE_WAIT`](super::SESSION_DELETE_WAIT)) and ends on its own.
#[derive(Debug)]
pub struct Engine {
    pub(super) cancel: Arc<Cancel>,
    pub(super) events: mpsc::Receiver<EngineEvent>,
}

impl Engine {
    /// Starts a run on a new thread with its own runtime.
    pub fn start(target: Target, spec: ProfileSpec, notify: Notifier) -> std::io::Result<Engine> {
        let (tx, events) = mpsc::channel();
        let cancel = Arc::new(Cancel::default());
        let engine_cancel = Arc::clone(&cancel);
        std::thread::Builder::new()
            .name("spanprof-engine".into())
            .spawn(move || {
                let sink = Sink { tx, notify };
                match runtime("spanprof-engine-io") {
                    Ok(rt) => rt.block_on(run(target, spec, &sink, &engine_cancel)),
                    Err(e) => sink.send(EngineEvent::Failed(e.into())),
                }
            })?;
        Ok(Engine { cancel, events })
    }

    /// Asks the run to stop: the current iteration is abandoned (reported as cancelled) at once.
    pub fn cancel(&self) {
        self.cancel.flag.store(true, Ordering::SeqCst);
        self.cancel.notify.notify_one();
    }

    /// The next event, if one is waiting.
    pub fn try_next(&self) -> Option<EngineEvent> {
        self.events.try_recv().ok()
    }

    /// Waits for the next event; `None` once the engine has ended and every event was read.
    pub fn next(&self) -> Option<EngineEvent> {
        self.events.recv().ok()
    }

    /// Waits for the run to end and returns its reports, one per variant, for a caller that reads
    /// no event on the way; `Ok(None)` when the engine ended without finishing.
    pub fn reports(self) -> Result<Option<Vec<RunReport>>, EngineError> {
        let mut records = ReportCollector::default();
        while let Some(event) = self.next() {
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
