//! The runs the app knows about: those run since it started, those opened from JSON reports and
//! from the run history, oldest first; which one the Iterations, Plan and Details tabs show; the
//! labels new runs get (the query's first words and the time when not named, made unique among
//! them), the names a set of runs is shown by (with the time where labels repeat and the date
//! where days differ), and the ids that tell them apart.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Local};

use crate::analysis;
use crate::engine::IterationDetails;
use crate::report::{RunId, RunReport};

/// Where a run in the list came from.
#[derive(Debug, Clone, PartialEq)]
pub enum RunSource {
    /// Run since the app started.
    Live,
    /// Read from an exported JSON report.
    Opened(PathBuf),
    /// Read from the run history: the history's id of the stored run (a row in its database:
    /// `17`, a load run's `L...`), not its [`RunId`] here.
    History(String),
}

/// A run the app knows about.
#[derive(Debug, Clone)]
pub struct RunEntry {
    /// Unique within this app's life; a live run's is the one it had in flight.
    pub id: RunId,
    /// The report.
    pub report: RunReport,
    /// What its last iteration returned (live runs only).
    pub details: Option<Box<IterationDetails>>,
    /// Where it came from.
    pub source: RunSource,
    /// Whether exports include it.
    pub export: bool,
    /// The history's id of it once the history saved it (a run of this launch's).
    pub saved_as: Option<String>,
    /// Its records' timelines are in the history only (each record keeps its figures, its
    /// `timeline` is `None`): it was out of view while newer runs came; opened again, they are
    /// read back.
    pub evicted: bool,
}

impl RunEntry {
    /// The history's id of it (a row in its database): the one it was read from, or the one the
    /// history saved it under; `None` for a run the history does not hold (yet).
    pub fn stored_id(&self) -> Option<&str> {
        match &self.source {
            RunSource::History(id) => Some(id),
            _ => self.saved_as.as_deref(),
        }
    }

    /// Its name in the run picker: the label, and the file it came from when opened.
    pub fn title(&self) -> String {
        match &self.source {
            RunSource::Live => self.report.config.label.clone(),
            RunSource::Opened(path) => format!(
                "{} (from {})",
                self.report.config.label,
                path.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            ),
            RunSource::History(id) => format!("{} (history #{id})", self.report.config.label),
        }
    }

    /// Where it came from, in a few words, to tell it from a run alike in label and time: the
    /// file's name, the history's id; `None` for a run of this launch.
    fn source_name(&self) -> Option<String> {
        match &self.source {
            RunSource::Live => None,
            RunSource::Opened(path) => path.file_name().map(|n| n.to_string_lossy().into_owned()),
            RunSource::History(id) => Some(format!("history #{id}")),
        }
    }

    /// When it started, in the local time zone (none when its report does not say).
    pub fn started(&self) -> Option<DateTime<Local>> {
        DateTime::parse_from_rfc3339(&self.report.started_at)
            .ok()
            .map(|t| t.with_timezone(&Local))
    }
}

/// The names `runs` are shown by side by side (Compare's legend, charts and verdicts), as
/// [`analysis::run_names`] gives them in the local time zone: each one's label (as `spanprof
/// compare` calls it), with the time it started when another has the same label, and the date as
/// well when they did not all start on the same day; runs alike in those by where they came from.
pub fn names(runs: &[&RunEntry]) -> Vec<String> {
    let sources: Vec<Option<String>> = runs.iter().map(|r| r.source_name()).collect();
    let identities: Vec<analysis::RunIdentity<'_>> = runs
        .iter()
        .zip(&sources)
        .map(|(run, source)| analysis::RunIdentity {
            label: &run.report.config.label,
            started_at: &run.report.started_at,
            source: source.as_deref(),
        })
        .collect();
    analysis::run_names(&identities, &Local)
}

/// The first words of `sql`, whitespace collapsed, cut after about 24 characters with an
/// ellipsis: what a run not named by its user is called by.
pub fn first_words(sql: &str) -> String {
    let mut out = String::new();
    let mut words = sql.split_whitespace().peekable();
    while let Some(word) = words.next() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
        if out.chars().count() >= 24 && words.peek().is_some() {
            out.push('…');
            break;
        }
    }
    if out.chars().count() > 40 {
        out = out.chars().take(39).collect();
        out.push('…');
    }
    out
}

/// The most runs whose records the list holds whole, those in view first and then the newest;
/// the others keep their summaries (the report's configuration, plans, end, and each
/// iteration's figures) and leave the bulk of their records, the timelines of every message and
/// decode span, to the history, which saved them.
pub const RECORDS_HELD: usize = 4;

/// The run list, the run shown, and the next id to hand out.
#[derive(Debug)]
pub struct RunList {
    runs: Vec<RunEntry>,
    shown: Option<RunId>,
    next_id: RunId,
}

impl Default for RunList {
    fn default() -> Self {
        RunList {
            runs: Vec::new(),
            shown: None,
            next_id: RunId::FIRST,
        }
    }
}

impl RunList {
    /// Every run, oldest first.
    pub fn entries(&self) -> &[RunEntry] {
        &self.runs
    }

    /// Every run, to mark them for export.
    pub fn entries_mut(&mut self) -> &mut [RunEntry] {
        &mut self.runs
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// The id of the run shown, if any.
    pub fn shown_id(&self) -> Option<RunId> {
        self.shown
    }

    /// Shows the run `id` (or none).
    pub fn show(&mut self, id: Option<RunId>) {
        self.shown = id;
    }

    /// The run shown, if any.
    pub fn shown(&self) -> Option<&RunEntry> {
        self.runs.iter().find(|r| Some(r.id) == self.shown)
    }

    /// An id no run has had (a run in flight takes one before its reports exist): the only
    /// place a [`RunId`] is made.
    pub fn take_id(&mut self) -> RunId {
        let id = self.next_id;
        self.next_id = id.next();
        id
    }

    /// Adds a run, shows it, and returns its id; it is not marked for export until its box is
    /// ticked (File > Export writes the runs in view and those ticked).
    pub fn add(
        &mut self,
        report: RunReport,
        details: Option<Box<IterationDetails>>,
        source: RunSource,
    ) -> RunId {
        let id = self.take_id();
        self.add_as(id, report, details, source)
    }

    /// [`RunList::add`] under `id`, one taken before with [`RunList::take_id`] (a run in flight's).
    pub fn add_as(
        &mut self,
        id: RunId,
        report: RunReport,
        details: Option<Box<IterationDetails>>,
        source: RunSource,
    ) -> RunId {
        self.runs.push(RunEntry {
            id,
            report,
            details,
            export: false,
            source,
            saved_as: None,
            evicted: false,
        });
        self.shown = Some(id);
        id
    }

    /// Drops the timelines of the runs beyond [`RECORDS_HELD`]: those in `in_view` hold theirs,
    /// then the newest; a run the history does not hold (not saved yet, opened from a file,
    /// history off) keeps its timelines and its place. Every run keeps its records' figures.
    /// Returns the runs in view whose timelines are in the history only, with their ids there,
    /// to read back.
    pub fn evict(&mut self, in_view: &[RunId]) -> Vec<(RunId, String)> {
        let mut held = self.runs.iter().filter(|r| in_view.contains(&r.id)).count();
        let mut to_read = Vec::new();
        for entry in self.runs.iter_mut().rev() {
            if in_view.contains(&entry.id) {
                if let (true, Some(stored)) = (entry.evicted, entry.stored_id()) {
                    to_read.push((entry.id, stored.to_owned()));
                }
                continue;
            }
            let timelines = entry.report.iterations.iter().any(|r| r.timeline.is_some());
            if entry.evicted || !timelines {
                continue;
            }
            if held < RECORDS_HELD || entry.stored_id().is_none() {
                held += 1;
                continue;
            }
            for record in &mut entry.report.iterations {
                record.timeline = None;
            }
            entry.evicted = true;
        }
        to_read
    }

    /// How many runs hold their records whole (with their timelines) in memory.
    pub fn records_held(&self) -> usize {
        self.runs.iter().filter(|r| !r.evicted).count()
    }

    /// Gives run `id` back the timelines of its records, read from the history (`report`, the
    /// same run as the history keeps it). A copy that does not match the run (another count of
    /// iterations) gives nothing back and says why; the run is then shown with its figures, no
    /// longer waiting.
    pub fn restore(&mut self, id: RunId, report: RunReport) -> Result<(), String> {
        let Some(entry) = self.runs.iter_mut().find(|r| r.id == id && r.evicted) else {
            return Ok(());
        };
        entry.evicted = false;
        let (held, read) = (entry.report.iterations.len(), report.iterations.len());
        if held != read {
            return Err(format!(
                "the history's copy of {} holds {read} iterations, not {held}: it is shown \
                 without its timelines",
                entry.report.config.label
            ));
        }
        for (record, stored) in entry.report.iterations.iter_mut().zip(report.iterations) {
            record.timeline = stored.timeline;
        }
        Ok(())
    }

    /// Run `id`'s timelines could not be read back: it is shown with its figures, no longer
    /// waiting, and not asked for again.
    pub fn unreadable(&mut self, id: RunId) {
        if let Some(entry) = self.runs.iter_mut().find(|r| r.id == id) {
            entry.evicted = false;
        }
    }

    /// Notes that the history saved run `id` as `stored` (its id there).
    pub fn saved_as(&mut self, id: RunId, stored: String) {
        if let Some(entry) = self.runs.iter_mut().find(|r| r.id == id) {
            entry.saved_as = Some(stored);
        }
    }

    /// The run the history holds as `stored` (its id there), if the list has it.
    pub fn stored(&self, stored: &str) -> Option<RunId> {
        let entry = self.runs.iter().find(|r| r.stored_id() == Some(stored));
        entry.map(|r| r.id)
    }

    /// Adds the runs of a report read from `path`; returns how many.
    pub fn add_opened(&mut self, path: &Path, reports: Vec<RunReport>) -> usize {
        let count = reports.len();
        for report in reports {
            self.add(report, None, RunSource::Opened(path.to_owned()));
        }
        count
    }

    /// The reports of the runs marked for export, oldest first.
    pub fn export_reports(&self) -> Vec<RunReport> {
        self.runs
            .iter()
            .filter(|r| r.export)
            .map(|r| r.report.clone())
            .collect()
    }

    /// The label of the next run: `wanted` (trimmed), or when it is empty the first words of
    /// `sql` and the time `now` (so that runs of different launches are told apart); made unique
    /// among the runs with ` (2)`, ` (3)`...
    pub fn next_label(&self, wanted: &str, sql: &str, now: DateTime<Local>) -> String {
        let wanted = wanted.trim();
        let base = if wanted.is_empty() {
            let words = first_words(sql);
            let time = now.format("%H:%M:%S");
            if words.is_empty() {
                format!("run at {time}")
            } else {
                format!("{words} {time}")
            }
        } else {
            wanted.to_owned()
        };
        let taken = |label: &str| self.runs.iter().any(|r| r.report.config.label == label);
        if !taken(&base) {
            return base;
        }
        (2..)
            .map(|n| format!("{base} ({n})"))
            .find(|l| !taken(l))
            .unwrap_or(base)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(label: &str) -> RunReport {
        RunReport {
            config: crate::report::RunConfig {
                label: label.into(),
                ..Default::default()
            },
            started_at: String::new(),
            iterations: vec![],
            plans: Default::default(),
            stopped: None,
        }
    }

    fn at(rfc3339: &str) -> DateTime<Local> {
        DateTime::parse_from_rfc3339(rfc3339)
            .expect("a time")
            .with_timezone(&Local)
    }

    #[test]
    fn a_new_run_is_named_by_its_query_and_time_or_as_asked_and_never_twice_alike() {
        let mut list = RunList::default();
        let now = at("2026-12-03T14:05:09Z");
        let time = now.format("%H:%M:%S").to_string();
        let sql = "SELECT *\n  FROM Seed23   WHERE Name = 'x' LIMIT 10";
        assert_eq!(
            list.next_label("  ", sql, now),
            format!("SELECT * FROM Seed23 WHERE… {time}")
        );
        assert_eq!(list.next_label("", "  ", now), format!("run at {time}"));
        list.add(report("wide"), None, RunSource::Live);
        assert_eq!(list.next_label(" wide ", sql, now), "wide (2)");
        list.add(report("wide (2)"), None, RunSource::Live);
        assert_eq!(list.next_label("wide", sql, now), "wide (3)");
        assert_eq!(list.next_label("narrow", sql, now), "narrow");
        let named = list.next_label("", "SELECT 1", now);
        list.add(report(&named), None, RunSource::Live);
        assert_eq!(
            list.next_label("", "SELECT 1", now),
            format!("SELECT 1 {time} (2)")
        );
    }

    #[test]
    fn first_words_cut_long_queries_and_long_words() {
        assert_eq!(first_words("SELECT 1"), "SELECT 1");
        assert_eq!(
            first_words("SELECT a, b, c, d FROM t WHERE x"),
            "SELECT a, b, c, d FROM t…"
        );
        let long = format!("SELECT {}", "x".repeat(100));
        assert_eq!(first_words(&long).chars().count(), 40);
        assert!(first_words(&long).ends_with('…'));
    }

    #[test]
    fn names_carry_the_time_where_labels_repeat_and_the_date_where_days_differ() {
        // Names are not ids: every entry here has the same one.
        let entry = |label: &str, started: &str| RunEntry {
            id: RunId::FIRST,
            report: RunReport {
                started_at: started.into(),
                ..report(label)
            },
            details: None,
            source: RunSource::Live,
            export: true,
            saved_as: None,
            evicted: false,
        };
        let t = |s: &str, f: &str| at(s).format(f).to_string();
        let (a, b, c) = (
            entry("wide", "2026-12-03T10:00:00Z"),
            entry("wide", "2026-12-03T11:30:00Z"),
            entry("narrow", "2026-12-03T10:30:00Z"),
        );
        // Same day (in UTC; the local day may differ, so the test asks which it is).
        let same_day = at("2026-12-03T10:00:00Z").date_naive()
            == at("2026-12-03T11:30:00Z").date_naive()
            && at("2026-12-03T10:00:00Z").date_naive() == at("2026-12-03T10:30:00Z").date_naive();
        if same_day {
            assert_eq!(
                names(&[&a, &b, &c]),
                [
                    format!("wide · {}", t("2026-12-03T10:00:00Z", "%H:%M:%S")),
                    format!("wide · {}", t("2026-12-03T11:30:00Z", "%H:%M:%S")),
                    "narrow".to_owned(),
                ]
            );
        }
        let d = entry("narrow", "2026-11-20T10:30:00Z");
        assert_eq!(
            names(&[&c, &d]),
            [
                format!("narrow · {}", t("2026-12-03T10:30:00Z", "%b %-d %H:%M")),
                format!("narrow · {}", t("2026-11-20T10:30:00Z", "%b %-d %H:%M")),
            ]
        );
        assert_eq!(names(&[&a, &c]).len(), 2);
        assert_eq!(names(&[&c]), ["narrow"]);
    }

    #[test]
    fn the_run_added_last_is_shown_and_ids_are_never_reused() {
        let mut list = RunList::default();
        let a = list.add(report("a"), None, RunSource::Live);
        let in_flight = list.take_id();
        let opened = list.add_opened(Path::new("/tmp/r.json"), vec![report("b"), report("c")]);
        assert_eq!(opened, 2);
        let ids: Vec<RunId> = list.entries().iter().map(|r| r.id).collect();
        assert_eq!(ids, [a, in_flight.next(), in_flight.next().next()]);
        assert_eq!(
            list.shown().map(RunEntry::title).as_deref(),
            Some("c (from r.json)")
        );
        let exported = |list: &RunList| -> Vec<String> {
            list.export_reports()
                .into_iter()
                .map(|r| r.config.label)
                .collect()
        };
        // No run is exported until it is ticked.
        assert_eq!(exported(&list), Vec::<String>::new());
        list.entries_mut()[1].export = true;
        assert_eq!(exported(&list), ["b"]);
    }

    /// A run of `label` with two iterations, each with a timeline of `us` microseconds.
    fn timed(label: &str, us: u64) -> RunReport {
        let mut report = RunReport::with_totals(label, &[1.0, 2.0]);
        for record in &mut report.iterations {
            record.timeline = Some(crate::report::Timeline {
                total_us: us,
                ..Default::default()
            });
        }
        report
    }

    #[test]
    fn runs_out_of_view_keep_their_figures_and_leave_their_timelines_to_the_history() {
        let mut list = RunList::default();
        let ids: Vec<RunId> = (0..7)
            .map(|n| list.add(timed(&format!("r{n}"), n), None, RunSource::Live))
            .collect();
        // Not saved yet: every run keeps its timelines, whatever is in view.
        assert!(list.evict(&[]).is_empty());
        assert_eq!(list.records_held(), 7);
        // Saved but the first two: the newest and the one in view hold theirs; a run the
        // history does not hold never loses its own.
        for (n, id) in ids.iter().enumerate().skip(2) {
            list.saved_as(*id, format!("{n}"));
        }
        assert!(list.evict(&[ids[2]]).is_empty());
        let held: Vec<bool> = list.entries().iter().map(|r| !r.evicted).collect();
        assert_eq!(held, [true, true, true, false, true, true, true]);
        assert_eq!(list.records_held(), 2 + RECORDS_HELD);
        let dropped = &list.entries()[3].report;
        assert!(dropped.iterations.iter().all(|r| r.timeline.is_none()));
        let totals: Vec<f64> = dropped.iterations.iter().map(|r| r.total_ms).collect();
        assert_eq!(totals, [1.0, 2.0], "the figures stay");

        // Opened again: asked for once per frame it is in view, and given back its timelines.
        assert_eq!(list.evict(&[ids[3]]), [(ids[3], "3".to_owned())]);
        assert_eq!(list.restore(ids[3], timed("r3", 3)), Ok(()));
        let back = &list.entries()[3];
        assert!(!back.evicted);
        assert!(
            back.report
                .iterations
                .iter()
                .all(|r| r.timeline.as_ref().map(|t| t.total_us) == Some(3))
        );
        // A copy that is not the run's gives nothing back, says so, and is not asked again.
        list.evict(&[ids[2]]);
        assert!(list.entries()[3].evicted);
        let other = RunReport::with_totals("r3", &[1.0]);
        let said = list
            .restore(ids[3], other)
            .expect_err("a count that differs");
        assert!(said.contains("holds 1 iterations, not 2"), "{said}");
        assert!(!list.entries()[3].evicted);
        assert!(list.evict(&[ids[3]]).is_empty());
    }
}
