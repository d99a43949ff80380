//! [`RunController`]: the runs as the app holds them, the run in flight (if one is), the list of
//! runs, and the history worker that keeps finished runs. The app asks it to start, cancel, drain
//! and end a run, and to add runs to the list; what the panels show of it they read through it.

use std::path::Path;

use chrono::{DateTime, Local};

use super::active::{ActiveRun, Ended};
use super::list::{RunEntry, RunList, RunSource};
use crate::engine::IterationDetails;
use crate::history::HistoryWorker;
use crate::history::worker::SaveOutcome;
use crate::report::{RunId, RunReport};

/// The run in flight, the run list and the history worker, owned together.
pub struct RunController {
    /// The run in flight with the id the run list gave it when it began: the id its bars'
    /// selection belongs to, and the one its first report keeps in the list.
    active: Option<(RunId, ActiveRun)>,
    list: RunList,
    /// Saves finished runs on its own thread; `None` when the history is off.
    history: Option<HistoryWorker>,
}

/// What one frame's drain found: the run's end, if it ended, and whether the history saved a run.
pub struct Drained {
    /// How the run in flight ended, if it did this frame.
    pub ended: Option<Ended>,
    /// Whether the history worker saved a run of this launch since the last frame.
    pub saved: bool,
}

impl RunController {
    /// No run yet; finished runs saved by `history` when there is one.
    pub fn new(history: Option<HistoryWorker>) -> Self {
        RunController {
            active: None,
            list: RunList::default(),
            history,
        }
    }

    /// The runs.
    pub fn list(&self) -> &RunList {
        &self.list
    }

    /// The runs, to pick one or mark them.
    pub fn list_mut(&mut self) -> &mut RunList {
        &mut self.list
    }

    /// The run in flight, if one is.
    pub fn active(&self) -> Option<&ActiveRun> {
        self.active.as_ref().map(|(_, run)| run)
    }

    /// Whether a run is in flight.
    pub fn is_running(&self) -> bool {
        self.active.is_some()
    }

    /// The id of the run in flight, if one is.
    pub fn running_id(&self) -> Option<RunId> {
        self.active.as_ref().map(|&(id, _)| id)
    }

    /// The run in flight with its id, and the runs to pick from: what the Iterations tab draws.
    pub fn in_flight_and_list(&mut self) -> (Option<(RunId, &ActiveRun)>, &mut RunList) {
        let active = self.active.as_ref().map(|(id, run)| (*id, run));
        (active, &mut self.list)
    }

    /// A new run's label (see [`RunList::next_label`]).
    pub fn next_label(&self, wanted: &str, sql: &str, now: DateTime<Local>) -> String {
        self.list.next_label(wanted, sql, now)
    }

    /// `run` is in flight now, under the next id (the one it keeps when it ends).
    pub fn begin(&mut self, run: ActiveRun) -> RunId {
        let id = self.list.take_id();
        self.active = Some((id, run));
        id
    }

    /// Cancels the run in flight, if one is.
    pub fn cancel(&mut self) {
        if let Some((_, run)) = &mut self.active {
            run.cancel();
        }
    }

    /// Reads what the run in flight and then the history worker reported since the last frame;
    /// their messages are pushed onto `errors`.
    pub fn drain(&mut self, errors: &mut Vec<String>) -> Drained {
        let ended = self
            .active
            .as_mut()
            .and_then(|(_, run)| run.drain(|e| errors.push(e)));
        let mut saved = false;
        if let Some(history) = &self.history {
            errors.extend(history.notices());
            for outcome in history.outcomes() {
                if let SaveOutcome::Saved { stored, runs } = outcome {
                    saved = true;
                    // Each run's id in the history beside its own: opened from the History tab,
                    // it is found in the list, not added again.
                    for (run, stored) in runs.into_iter().zip(stored) {
                        self.list.saved_as(run, stored);
                    }
                }
            }
        }
        Drained { ended, saved }
    }

    /// The run in flight is over: it, with the id it had in flight.
    pub fn end(&mut self) -> Option<(RunId, ActiveRun)> {
        self.active.take()
    }

    /// The history worker, when finished runs are kept.
    pub fn history(&self) -> Option<&HistoryWorker> {
        self.history.as_ref()
    }

    /// Hands the runs `ids` (their `reports`) to the history worker, when there is one; when it
    /// has saved them, each one's id there is noted beside its [`RunId`].
    pub fn save(&self, ids: Vec<RunId>, reports: Vec<RunReport>) {
        if let Some(history) = &self.history {
            history.save_as(ids, reports);
        }
    }

    /// Adds a run of this launch's variants, each report with its own last details; their ids.
    /// The first keeps `run`, the id the run had in flight, so what was picked or opened in it
    /// while it streamed stays picked or open when it ends.
    pub fn add_live(
        &mut self,
        run: RunId,
        reports: Vec<RunReport>,
        mut details: Vec<IterationDetails>,
    ) -> Vec<RunId> {
        let mut ids = Vec::new();
        for (i, report) in reports.into_iter().enumerate() {
            let own = details
                .iter()
                .position(|d| d.run == report.config.label)
                .map(|at| Box::new(details.swap_remove(at)));
            let id = if i == 0 { run } else { self.list.take_id() };
            ids.push(self.list.add_as(id, report, own, RunSource::Live));
        }
        ids
    }

    /// Adds the stored runs not in the list yet; the ids of all of them, in order. Each comes
    /// with the history's id of it (a row in its database): a run the list holds under that
    /// stored id (read from the history before, or run in this launch and saved) keeps the
    /// [`RunId`] it has; another gets a new one, its stored id kept as its
    /// [`RunSource::History`].
    pub fn add_stored(&mut self, runs: Vec<(String, RunReport)>) -> Vec<RunId> {
        let mut ids = Vec::new();
        for (stored, report) in runs {
            let id = match self.list.stored(&stored) {
                Some(id) => id,
                None => self.list.add(report, None, RunSource::History(stored)),
            };
            ids.push(id);
        }
        ids
    }

    /// Adds the runs of a report read from `path`; how many.
    pub fn add_opened(&mut self, path: &Path, reports: Vec<RunReport>) -> usize {
        self.list.add_opened(path, reports)
    }

    /// Every run, oldest first.
    pub fn entries(&self) -> &[RunEntry] {
        self.list.entries()
    }
}
