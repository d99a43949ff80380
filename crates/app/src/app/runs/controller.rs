//! [`RunController`]: the runs as the app holds them, the run in flight of any kind (a query's or
//! a subject's, or a load run: one slot, so that two runs never measure each other), the list of
//! runs, and the history worker that keeps finished runs. The app asks it to start, cancel, drain
//! and end a run, and to add runs to the list; what the panels show of it they read through it
//! (the Load tab draws the load run's events the drain hands over). The built-in local instance is
//! kept here across the runs ([`RunController::on_kept_instance`]), so a run does not build its
//! database again.

use std::path::Path;
use std::time::{Duration, Instant};

use chrono::{DateTime, Local};

use super::active::{ActiveRun, Ended};
use super::list::{RunEntry, RunList, RunSource};
use super::records::RecordsReader;
use super::trim::{TRIM_AFTER, release_freed_memory};
use crate::engine::{Engine, IterationDetails, LoadEvent, LocalKeeper, Notifier, RunEvent, Target};
use crate::history::worker::SaveOutcome;
use crate::history::{HistoryWorker, Location};
use crate::load::LoadReport;
use crate::report::{RunId, RunReport};

/// The run in flight, of any kind.
enum InFlight {
    /// A query's or a subject's run (the Iterations tab's), with the id the run list gave it
    /// when it began: the id its bars' selection belongs to, and the one its first report keeps
    /// in the list. Boxed: the load run's slot is a handle alone.
    Profile(RunId, Box<ActiveRun>),
    /// A load run (the Load tab's).
    Load(Engine),
}

/// The run in flight, the run list and the history worker, owned together.
pub struct RunController {
    /// The run in flight, if one is.
    in_flight: Option<InFlight>,
    list: RunList,
    /// Saves finished runs on its own thread; `None` when the history is off.
    history: Option<HistoryWorker>,
    /// Reads an evicted run's records back from the history; `None` when the history is off.
    records: Option<RecordsReader>,
    /// The runs whose records are being read back.
    reading: Vec<RunId>,
    /// When to hand the memory the last run freed back to the system ([`super::trim`]).
    trim_at: Option<Instant>,
    /// The local instance the runs on the built-in target share while the window is open.
    local: LocalKeeper,
}

/// What one frame's drain found: the run's end, if it ended, the load run's events, and whether
/// the history saved a run.
pub struct Drained {
    /// How the query's or subject's run in flight ended, if it did this frame.
    pub ended: Option<Ended>,
    /// What the load run in flight reported since the last frame, in order (for the Load tab);
    /// the run is over once its `Finished` or `Failed` is among them.
    pub load: Vec<LoadEvent>,
    /// Whether the history worker saved a run of this launch since the last frame.
    pub saved: bool,
}

impl RunController {
    /// No run yet; finished runs saved by `history` when there is one.
    pub fn new(history: Option<HistoryWorker>) -> Self {
        RunController {
            in_flight: None,
            list: RunList::default(),
            history,
            records: None,
            reading: Vec::new(),
            trim_at: None,
            local: LocalKeeper::default(),
        }
    }

    /// Where the local instance the runs share serves, once a run started it.
    pub fn kept_instance(&self) -> Option<std::net::SocketAddr> {
        self.local.address()
    }

    /// `target` as this window's runs reach it: the built-in local instance kept serving between
    /// runs (started again only when its rows, knobs or limits change), any other target as given.
    pub fn on_kept_instance(&self, target: Target) -> Target {
        match target {
            Target::Local(config) => Target::Kept(self.local.clone(), config),
            other => other,
        }
    }

    /// No run yet; finished runs kept in the history at `location` (none when it is off), and
    /// read back from it when a run whose records were dropped is opened again; `notify` asks
    /// for a repaint when such a read ends.
    pub fn with_history(location: Location, notify: Notifier) -> Self {
        if matches!(location, Location::Off) {
            return RunController::new(None);
        }
        let mut runs = RunController::new(HistoryWorker::start(location.clone()).ok());
        runs.records = RecordsReader::start(location, notify).ok();
        runs
    }

    /// Holds the records of the runs `in_view` and of the newest whole (at most
    /// [`RECORDS_HELD`](super::list::RECORDS_HELD) in all when no more are in view), dropping
    /// the others' timelines (the history has them), and asks for those in view that were
    /// dropped.
    pub fn keep_in_view(&mut self, in_view: &[RunId]) {
        if self.records.is_none() {
            return;
        }
        let to_read = self.list.evict(in_view);
        if let Some(reader) = &self.records {
            for (id, stored) in to_read {
                if !self.reading.contains(&id) {
                    self.reading.push(id);
                    reader.ask(id, &stored);
                }
            }
        }
    }

    /// The reports of the runs `in_view` and those marked for export, oldest first, the
    /// timelines of those the list dropped read back from the history (on this thread: the
    /// export needs them all at once). A run the history can no longer give back is written
    /// with its figures.
    pub fn export_reports(&self, in_view: &[RunId]) -> Vec<RunReport> {
        let list = self.list.entries().iter();
        let list = list.filter(|r| r.export || in_view.contains(&r.id));
        list.map(|entry| {
            let mut report = entry.report.clone();
            if let (true, Some(stored), Some(reader)) =
                (entry.evicted, entry.stored_id(), &self.records)
                && let Ok(read) = reader.read_now(stored)
                && read.iterations.len() == report.iterations.len()
            {
                for (record, stored) in report.iterations.iter_mut().zip(read.iterations) {
                    record.timeline = stored.timeline;
                }
            }
            report
        })
        .collect()
    }

    /// Hands the memory the last run freed back to the system once [`TRIM_AFTER`] has passed
    /// since it ended; how long until then, when a trim is still to come (a frame is wanted
    /// then).
    pub fn trim_when_due(&mut self) -> Option<Duration> {
        let due = self.trim_at?;
        let now = Instant::now();
        if now < due {
            return Some(due - now);
        }
        self.trim_at = None;
        release_freed_memory();
        None
    }

    /// The runs.
    pub fn list(&self) -> &RunList {
        &self.list
    }

    /// The runs, to pick one or mark them.
    pub fn list_mut(&mut self) -> &mut RunList {
        &mut self.list
    }

    /// The query's or subject's run in flight with its id, if one is.
    fn profile(&self) -> Option<(RunId, &ActiveRun)> {
        match &self.in_flight {
            Some(InFlight::Profile(id, run)) => Some((*id, run.as_ref())),
            _ => None,
        }
    }

    /// The query's or subject's run in flight, if one is.
    pub fn active(&self) -> Option<&ActiveRun> {
        self.profile().map(|(_, run)| run)
    }

    /// Whether a query's or subject's run is in flight (the Iterations tab's).
    pub fn is_running(&self) -> bool {
        self.profile().is_some()
    }

    /// Whether a load run is in flight (the Load tab's).
    pub fn is_loading(&self) -> bool {
        matches!(self.in_flight, Some(InFlight::Load(_)))
    }

    /// The id of the query's or subject's run in flight, if one is.
    pub fn running_id(&self) -> Option<RunId> {
        self.profile().map(|(id, _)| id)
    }

    /// The run in flight with its id, and the runs to pick from: what the Iterations tab draws.
    pub fn in_flight_and_list(&mut self) -> (Option<(RunId, &ActiveRun)>, &mut RunList) {
        let active = match &self.in_flight {
            Some(InFlight::Profile(id, run)) => Some((*id, run.as_ref())),
            _ => None,
        };
        (active, &mut self.list)
    }

    /// A new run's label (see [`RunList::next_label`]).
    pub fn next_label(&self, wanted: &str, sql: &str, now: DateTime<Local>) -> String {
        self.list.next_label(wanted, sql, now)
    }

    /// `run` is in flight now, under the next id (the one it keeps when it ends).
    pub fn begin(&mut self, run: ActiveRun) -> RunId {
        let id = self.list.take_id();
        self.in_flight = Some(InFlight::Profile(id, Box::new(run)));
        id
    }

    /// The load run `engine` runs is in flight now.
    pub fn begin_load(&mut self, engine: Engine) {
        self.in_flight = Some(InFlight::Load(engine));
    }

    /// Cancels the run in flight, of any kind, if one is.
    pub fn cancel(&mut self) {
        match &mut self.in_flight {
            Some(InFlight::Profile(_, run)) => run.cancel(),
            Some(InFlight::Load(engine)) => engine.cancel(),
            None => {}
        }
    }

    /// Stops the load run in flight, if one is (a query's run goes on); whether there was one.
    pub fn cancel_load(&mut self) -> bool {
        let loading = self.is_loading();
        if loading {
            self.cancel();
        }
        loading
    }

    /// Reads what the run in flight and then the history worker reported since the last frame;
    /// their messages are pushed onto `errors`. A load run that ended leaves the slot here.
    pub fn drain(&mut self, errors: &mut Vec<String>) -> Drained {
        let mut ended = None;
        let mut load = Vec::new();
        match &mut self.in_flight {
            Some(InFlight::Profile(_, run)) => ended = run.drain(|e| errors.push(e)),
            Some(InFlight::Load(engine)) => {
                let mut over = false;
                while let Some(event) = engine.try_next() {
                    let Some(event) = event.into_load() else {
                        continue;
                    };
                    over |= matches!(event, LoadEvent::Finished(_) | LoadEvent::Failed(_));
                    load.push(event);
                }
                if over {
                    self.in_flight = None;
                    self.trim_at = Some(Instant::now() + TRIM_AFTER);
                }
            }
            None => {}
        }
        if let Some(reader) = &self.records {
            for read in reader.answers() {
                self.reading.retain(|id| *id != read.id);
                let restored = match read.report {
                    Ok(report) => self.list.restore(read.id, report),
                    Err(e) => {
                        self.list.unreadable(read.id);
                        Err(format!(
                            "cannot read the run's timelines back from the history ({e}): it \
                             is shown with its figures"
                        ))
                    }
                };
                errors.extend(restored.err());
            }
        }
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
        Drained { ended, load, saved }
    }

    /// The query's or subject's run in flight is over: it, with the id it had in flight.
    pub fn end(&mut self) -> Option<(RunId, ActiveRun)> {
        match self.in_flight.take() {
            Some(InFlight::Profile(id, run)) => {
                self.trim_at = Some(Instant::now() + TRIM_AFTER);
                Some((id, *run))
            }
            other => {
                self.in_flight = other;
                None
            }
        }
    }

    /// Stops the load run in flight (the window is closing) and waits at most `wait` for the
    /// report of what it measured; `None` when there was no load run, it failed, or it did not
    /// report in time.
    pub fn stop_load_and_wait(&mut self, wait: Duration) -> Option<LoadReport> {
        if !self.is_loading() {
            return None;
        }
        let Some(InFlight::Load(engine)) = self.in_flight.take() else {
            return None;
        };
        engine.cancel();
        let deadline = Instant::now() + wait;
        loop {
            let left = deadline.checked_duration_since(Instant::now())?;
            match engine.next_within(left)? {
                RunEvent::Load(LoadEvent::Finished(report)) => return Some(*report),
                RunEvent::Load(LoadEvent::Failed(_)) => return None,
                _ => {}
            }
        }
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::engine::load::LoadSpec;
    use crate::engine::{Job, Target, Variant};
    use crate::load::{LoadSteps, Model, StepLevel};

    /// A load run on an endpoint where nothing listens: it fails to connect, at once.
    fn failing_load() -> Engine {
        let spec = LoadSpec {
            database: Default::default(),
            variant: Variant::new("load", "SELECT 1"),
            plan: LoadSteps {
                model: Model::Open,
                levels: vec![StepLevel::Rate(5.0)],
                step_duration: Duration::from_secs(1),
                max_in_flight: 10,
                drain: Duration::from_secs(1),
            },
            decoder: Default::default(),
            timeouts: Default::default(),
            headers: Default::default(),
            notices: Vec::new(),
            stop_at_knee: false,
            draws: Default::default(),
            server_stats: None,
        };
        Engine::start(
            Job::Load(Target::Endpoint("127.0.0.1:9".into()), spec),
            Arc::new(|| {}),
        )
        .expect("starts")
    }

    #[test]
    fn a_load_run_holds_the_one_slot_until_the_drain_hands_over_its_end() {
        let mut runs = RunController::new(None);
        runs.begin_load(failing_load());
        assert!(runs.is_loading());
        assert!(!runs.is_running(), "a load run is not the Iterations tab's");
        assert!(runs.active().is_none());
        assert!(
            runs.end().is_none(),
            "ending a query's run leaves the load run"
        );
        assert!(runs.is_loading());
        let mut events = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(20);
        while runs.is_loading() && Instant::now() < deadline {
            let mut errors = Vec::new();
            events.extend(runs.drain(&mut errors).load);
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(
            !runs.is_loading(),
            "the slot is free once the end is drained"
        );
        assert!(
            matches!(events.last(), Some(LoadEvent::Failed(_))),
            "{events:?}"
        );
    }

    #[test]
    fn the_slot_s_load_run_is_stopped_on_close_and_a_failed_one_leaves_no_report() {
        let mut runs = RunController::new(None);
        assert!(runs.stop_load_and_wait(Duration::from_secs(1)).is_none());
        runs.begin_load(failing_load());
        assert!(runs.stop_load_and_wait(Duration::from_secs(20)).is_none());
        assert!(!runs.is_loading());
        assert!(!runs.cancel_load(), "nothing left to stop");
    }
}
