//! The History view's store reader: a thread of its own (`spanprof-history-view`) with its own
//! handle on the store, so a frame never waits for SQLite or Spanner. It answers the view's asks
//! (the queries matching a search, joined by their SQL (`groups.rs`), one query's trend across its
//! fingerprints, the reports to compare) and does its changes (label, pin, delete, import), each
//! change followed by the listings read afresh.
//! Asks that queue up while it is busy are folded: only the latest search and trend are read.

use std::path::PathBuf;
use std::sync::mpsc;

use super::groups::{QueryGroup, counted, group, merge};
use crate::engine::Notifier;
use crate::history::{self, HistoryStore, Location, QuerySummary, StoredRun, TrendPoint};
use crate::report::RunReport;

/// The most queries a listing shows.
pub const QUERY_LIMIT: usize = 200;
/// The most runs a trend shows (the latest).
pub const TREND_LIMIT: usize = 500;

/// What the view asks of the store.
#[derive(Debug, Clone, PartialEq)]
pub enum Ask {
    /// The queries whose SQL or a label contains this text.
    Queries(String),
    /// The trend of these fingerprints (one SQL's), as one.
    Trend(Vec<String>),
    /// Relabel a run.
    Label(String, String),
    /// Pin or unpin a run.
    Pin(String, bool),
    /// Delete a run.
    Delete(String),
    /// The reports of these runs, to compare.
    Load(Vec<String>),
    /// Read a JSON report and save its runs.
    Import(PathBuf),
}

/// What the store answered.
#[derive(Debug, Clone)]
pub enum Answer {
    /// The queries matching `search`.
    Queries {
        /// The search asked.
        search: String,
        /// The queries, one per SQL, the latest run first.
        queries: Vec<QueryGroup>,
    },
    /// The trend of `fingerprints`, oldest run first.
    Trend {
        /// The fingerprints asked.
        fingerprints: Vec<String>,
        /// Its runs.
        points: Vec<TrendPoint>,
    },
    /// The reports asked to compare, with their ids, in the order asked.
    Loaded(Vec<(String, RunReport)>),
    /// A change done, in words.
    Done(String),
    /// What failed, in words.
    Failed(String),
}

/// The reader thread and its channels.
pub struct HistoryReader {
    asks: mpsc::Sender<Ask>,
    answers: mpsc::Receiver<Answer>,
}

impl HistoryReader {
    /// Starts the reader of `location`; `notify` is called after each answer.
    pub fn start(location: Location, notify: Notifier) -> std::io::Result<HistoryReader> {
        let (asks, rx) = mpsc::channel::<Ask>();
        let (tx, answers) = mpsc::channel();
        std::thread::Builder::new()
            .name("spanprof-history-view".into())
            .spawn(move || {
                let mut store: Option<Box<dyn HistoryStore>> = None;
                let mut search = None;
                let mut trend = None;
                while let Ok(first) = rx.recv() {
                    let batch: Vec<Ask> = std::iter::once(first).chain(rx.try_iter()).collect();
                    let answered = serve(&location, &mut store, batch, &mut search, &mut trend);
                    for answer in answered {
                        if tx.send(answer).is_err() {
                            return;
                        }
                    }
                    notify();
                }
            })?;
        Ok(HistoryReader { asks, answers })
    }

    /// Hands `ask` to the reader; returns at once.
    pub fn ask(&self, ask: Ask) {
        let _ = self.asks.send(ask);
    }

    /// The answers since the last call.
    pub fn answers(&self) -> Vec<Answer> {
        self.answers.try_iter().collect()
    }
}

/// Does one batch of asks: the changes and loads in order, then the latest search and trend (read
/// again after a change, as last asked).
fn serve(
    location: &Location,
    store: &mut Option<Box<dyn HistoryStore>>,
    batch: Vec<Ask>,
    search: &mut Option<String>,
    trend: &mut Option<Vec<String>>,
) -> Vec<Answer> {
    if store.is_none() {
        match history::open(location) {
            Ok(Some(opened)) => *store = Some(opened),
            Ok(None) => return vec![Answer::Failed("the history is off (--no-history)".into())],
            Err(e) => return vec![Answer::Failed(e.to_string())],
        }
    }
    let Some(store) = store.as_deref_mut() else {
        return Vec::new();
    };
    let mut answers = Vec::new();
    let (mut read_search, mut read_trend) = (false, false);
    for ask in batch {
        match ask {
            Ask::Queries(text) => {
                *search = Some(text);
                read_search = true;
            }
            Ask::Trend(fingerprints) => {
                *trend = Some(fingerprints);
                read_trend = true;
            }
            Ask::Load(ids) => answers.push(load(store, &ids)),
            change => {
                answers.push(match apply(store, change) {
                    Ok(done) => Answer::Done(done),
                    Err(e) => Answer::Failed(e),
                });
                (read_search, read_trend) = (true, true);
            }
        }
    }
    if let (true, Some(text)) = (read_search, search.as_ref()) {
        answers.push(match queries(store, text) {
            Ok(queries) => Answer::Queries {
                search: text.clone(),
                queries,
            },
            Err(e) => Answer::Failed(e.to_string()),
        });
    }
    if let (true, Some(fingerprints)) = (read_trend, trend.as_ref()) {
        let trends: Result<Vec<_>, _> = fingerprints
            .iter()
            .map(|f| store.trend(f, TREND_LIMIT))
            .collect();
        answers.push(match trends {
            Ok(trends) => Answer::Trend {
                fingerprints: fingerprints.clone(),
                points: merge(trends, TREND_LIMIT),
            },
            Err(e) => Answer::Failed(e.to_string()),
        });
    }
    answers
}

/// The entries matching `search`, one per SQL: a match brings every fingerprint of its SQL, so a
/// label found on one run lists the runs of that SQL in every mode.
fn queries(
    store: &mut dyn HistoryStore,
    search: &str,
) -> Result<Vec<QueryGroup>, history::HistoryError> {
    let all = store.queries("", QUERY_LIMIT)?;
    if search.trim().is_empty() {
        return Ok(group(&all, None));
    }
    let matches = store.queries(search, QUERY_LIMIT)?;
    let mut joined: Vec<QuerySummary> = all;
    for m in &matches {
        if !joined.iter().any(|q| q.fingerprint == m.fingerprint) {
            joined.push(m.clone());
        }
    }
    Ok(group(&joined, Some(&matches)))
}

/// The reports of `ids`, or what failed.
fn load(store: &mut dyn HistoryStore, ids: &[String]) -> Answer {
    let mut loaded = Vec::new();
    for id in ids {
        match store.get(id) {
            Ok(Some(report)) => loaded.push((id.clone(), report)),
            Ok(None) => return Answer::Failed(format!("history run {id} is gone")),
            Err(e) => return Answer::Failed(e.to_string()),
        }
    }
    Answer::Loaded(loaded)
}

/// A change, done; what it did in words.
fn apply(store: &mut dyn HistoryStore, change: Ask) -> Result<String, String> {
    let found = |found: bool, id: &str, done: String| {
        if found {
            Ok(done)
        } else {
            Err(format!("history run {id} is gone"))
        }
    };
    let e = |e: history::HistoryError| e.to_string();
    match change {
        Ask::Label(id, label) => {
            let done = format!("run {id} labelled \"{label}\"");
            found(store.set_label(&id, &label).map_err(e)?, &id, done)
        }
        Ask::Pin(id, pinned) => {
            let word = if pinned { "pinned" } else { "unpinned" };
            found(
                store.set_pinned(&id, pinned).map_err(e)?,
                &id,
                format!("run {id} {word}"),
            )
        }
        Ask::Delete(id) => {
            let done = format!("run {id} deleted from the history");
            found(store.delete(&id).map_err(e)?, &id, done)
        }
        Ask::Import(path) => {
            let reports = crate::app::files::read_report(&path).map_err(|e| e.to_string())?;
            let stored = reports
                .iter()
                .map(StoredRun::of)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| e.to_string())?;
            let ids = store.save(&stored).map_err(e)?;
            Ok(format!(
                "imported {} from {} into the history",
                counted(ids.len() as u64, "run", "runs"),
                path.display()
            ))
        }
        Ask::Queries(_) | Ask::Trend(_) | Ask::Load(_) => Ok(String::new()),
    }
}
