//! `HistoryWorker`: saves finished runs on a thread of its own (`spanprof-history`), so neither
//! the timed iterations nor a window's frames wait for the disk. The store is opened on that
//! thread at the first save. A save that fails is said once (the first failure), never raised:
//! history must not cost a run.

use std::sync::mpsc;
use std::thread::JoinHandle;

use super::location::Location;
use super::stored::StoredRun;
use super::stored_load::StoredLoad;
use super::{HistoryStore, open};
use crate::load::LoadReport;
use crate::report::{RunId, RunReport};

/// What the worker did with one batch of runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SaveOutcome {
    /// Saved: the history's id of each run of the batch, in order, and beside them the runs' ids
    /// in this process when the batch was handed over with them ([`HistoryWorker::save_as`]).
    Saved {
        /// The history's ids (a row of its database each: `17`, a load run's `L...`).
        stored: Vec<String>,
        /// The same runs' ids here; empty when none were given.
        runs: Vec<RunId>,
    },
    /// Not saved (the first failure only is reported; later ones are silent).
    Failed(String),
}

enum Job {
    Save(Vec<RunReport>, Vec<RunId>),
    SaveLoad(Box<LoadReport>),
}

/// The saving thread and the channel to it.
pub struct HistoryWorker {
    jobs: Option<mpsc::Sender<Job>>,
    notices: mpsc::Receiver<String>,
    outcomes: mpsc::Receiver<SaveOutcome>,
    thread: Option<JoinHandle<()>>,
}

impl HistoryWorker {
    /// Starts the worker for `location` (one that saves nothing for [`Location::Off`]).
    pub fn start(location: Location) -> std::io::Result<HistoryWorker> {
        let (jobs, rx) = mpsc::channel::<Job>();
        let (notice_tx, notices) = mpsc::channel();
        let (outcome_tx, outcomes) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("spanprof-history".into())
            .spawn(move || {
                let mut store: Option<Box<dyn HistoryStore>> = None;
                let mut failed_once = false;
                for job in rx {
                    let (outcome, runs) = match job {
                        Job::Save(reports, runs) => (save(&location, &mut store, &reports), runs),
                        Job::SaveLoad(run) => (save_load(&location, &mut store, &run), Vec::new()),
                    };
                    if let Some(s) = store.as_mut() {
                        for notice in s.take_notices() {
                            let _ = notice_tx.send(notice);
                        }
                    }
                    let outcome = match outcome {
                        Ok(stored) => SaveOutcome::Saved { stored, runs },
                        Err(message) => {
                            if !failed_once {
                                let _ = notice_tx.send(format!("history was not saved: {message}"));
                            }
                            failed_once = true;
                            SaveOutcome::Failed(message)
                        }
                    };
                    let _ = outcome_tx.send(outcome);
                }
            })?;
        Ok(HistoryWorker {
            jobs: Some(jobs),
            notices,
            outcomes,
            thread: Some(thread),
        })
    }

    /// Hands `runs` to the worker, each kept under the database its configuration names
    /// ([`database_of`](super::database_of)); returns at once.
    pub fn save(&self, runs: Vec<RunReport>) {
        self.save_as(Vec::new(), runs);
    }

    /// [`HistoryWorker::save`], `reports` being the runs numbered `runs` in this process: the
    /// outcome gives each one's id in the history beside its own.
    pub fn save_as(&self, runs: Vec<RunId>, reports: Vec<RunReport>) {
        if let Some(jobs) = &self.jobs {
            let _ = jobs.send(Job::Save(reports, runs));
        }
    }

    /// Hands a load run to the worker; returns at once.
    pub fn save_load(&self, run: LoadReport) {
        if let Some(jobs) = &self.jobs {
            let _ = jobs.send(Job::SaveLoad(Box::new(run)));
        }
    }

    /// The notices said since the last call (a store moved aside, the first failure).
    pub fn notices(&self) -> Vec<String> {
        self.notices.try_iter().collect()
    }

    /// The outcomes of the saves finished since the last call.
    pub fn outcomes(&self) -> Vec<SaveOutcome> {
        self.outcomes.try_iter().collect()
    }

    /// Waits for every save handed over so far; returns the notices not yet taken.
    pub fn finish(mut self) -> Vec<String> {
        self.jobs = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        self.notices()
    }
}

impl Drop for HistoryWorker {
    /// Dropping waits for the saves handed over (a command that fails after its run still
    /// keeps the run).
    fn drop(&mut self) {
        self.jobs = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The store, opened first if it is not yet; `None` when history is off.
fn opened<'a>(
    location: &Location,
    store: &'a mut Option<Box<dyn HistoryStore>>,
) -> Result<Option<&'a mut Box<dyn HistoryStore>>, String> {
    if store.is_none() {
        *store = open(location).map_err(|e| e.to_string())?;
    }
    Ok(store.as_mut())
}

/// One load run's save.
fn save_load(
    location: &Location,
    store: &mut Option<Box<dyn HistoryStore>>,
    run: &LoadReport,
) -> Result<Vec<String>, String> {
    let Some(store) = opened(location, store)? else {
        return Ok(Vec::new());
    };
    let stored = StoredLoad::new(run).map_err(|e| e.to_string())?;
    store
        .save_load(&stored)
        .map(|id| vec![id])
        .map_err(|e| e.to_string())
}

/// One save, the store opened first if it is not yet.
fn save(
    location: &Location,
    store: &mut Option<Box<dyn HistoryStore>>,
    runs: &[RunReport],
) -> Result<Vec<String>, String> {
    let Some(store) = opened(location, store)? else {
        return Ok(Vec::new());
    };
    let stored: Vec<StoredRun> = runs
        .iter()
        .map(StoredRun::of)
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    store.save(&stored).map_err(|e| e.to_string())
}
