//! Where a step's requests put what they measured (its tally, when it began, the signal to abandon
//! what is still in flight), and how a failure's status is spelt: shared by both kinds of request.

use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use tokio::sync::watch;

use crate::client::IterationError;
use crate::load::StepTally;
use crate::report::Code;

/// One step's place for its requests' results, and when the step began.
pub(super) struct StepSink {
    pub(super) tally: Mutex<StepTally>,
    pub(super) began: Instant,
    /// Set when the step's requests still in flight must stop (drain over, or cancelled).
    pub(super) abandon: watch::Receiver<bool>,
}

impl StepSink {
    /// The step's tally, locked (a panic elsewhere cannot leave it half-written: each update
    /// is a few additions).
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, StepTally> {
        self.tally.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A status code as Spanner's documentation spells it (`RESOURCE_EXHAUSTED`); `OTHER` for a
/// failure that was not a status (a decoding error, a broken connection).
pub(super) fn status_name(error: &IterationError) -> String {
    error
        .status_code()
        .map_or_else(|| "OTHER".to_owned(), Code::spanner_name)
}
