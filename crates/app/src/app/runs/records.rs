//! Reading an evicted run's records back from the history: the run list keeps the records of a
//! few runs whole (those in view and the newest, `list.rs`), the others' figures without their
//! timelines, and a run opened again gets its timelines from where the history worker saved
//! them. The reads happen on a thread of their own
//! (`spanprof-records`), so a team store's round trips never hold a frame; an export, which
//! needs every run it writes at once, reads on the calling thread ([`read_now`]).

use std::sync::mpsc;

use crate::engine::Notifier;
use crate::history::{HistoryStore, Location, open};
use crate::report::{RunId, RunReport};

/// What one read gave: the run, and its report or why it could not be read.
pub struct ReadBack {
    /// The run in this process.
    pub id: RunId,
    /// Its report as the history holds it, or why not.
    pub report: Result<RunReport, String>,
}

/// The reading thread and the channels to it.
pub struct RecordsReader {
    location: Location,
    asks: mpsc::Sender<(RunId, String)>,
    answers: mpsc::Receiver<ReadBack>,
}

impl RecordsReader {
    /// Starts the thread reading from `location`; `notify` asks for a repaint when a read ends.
    pub fn start(location: Location, notify: Notifier) -> std::io::Result<RecordsReader> {
        let (asks, rx) = mpsc::channel::<(RunId, String)>();
        let (tx, answers) = mpsc::channel();
        let at = location.clone();
        std::thread::Builder::new()
            .name("spanprof-records".into())
            .spawn(move || {
                let mut store: Option<Box<dyn HistoryStore>> = None;
                for (id, stored) in rx {
                    let report = read(&at, &mut store, &stored);
                    if tx.send(ReadBack { id, report }).is_err() {
                        break;
                    }
                    notify();
                }
            })?;
        Ok(RecordsReader {
            location,
            asks,
            answers,
        })
    }

    /// Asks for the run `id`'s records, kept in the history as `stored`; returns at once.
    pub fn ask(&self, id: RunId, stored: &str) {
        let _ = self.asks.send((id, stored.to_owned()));
    }

    /// The reads that ended since the last call.
    pub fn answers(&self) -> Vec<ReadBack> {
        self.answers.try_iter().collect()
    }

    /// Reads `stored` on the calling thread.
    pub fn read_now(&self, stored: &str) -> Result<RunReport, String> {
        read_now(&self.location, stored)
    }
}

/// Reads the run the history keeps as `stored` from `location`, on the calling thread.
pub fn read_now(location: &Location, stored: &str) -> Result<RunReport, String> {
    read(location, &mut None, stored)
}

/// Reads `stored` through `store`, opening it at `location` the first time.
fn read(
    location: &Location,
    store: &mut Option<Box<dyn HistoryStore>>,
    stored: &str,
) -> Result<RunReport, String> {
    if store.is_none() {
        *store = open(location).map_err(|e| e.to_string())?;
    }
    let Some(store) = store.as_mut() else {
        return Err("the history is off".into());
    };
    match store.get(stored) {
        Ok(Some(report)) => Ok(report),
        Ok(None) => Err(format!("history #{stored} is no longer in the history")),
        Err(e) => Err(e.to_string()),
    }
}
