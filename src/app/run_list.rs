//! The runs the app knows about: those run since it started, those opened from JSON reports and
//! from the run history,
//! oldest first; which one the Iterations, Plan and Details tabs show; the labels new runs get
//! (made unique among them) and the ids that tell them apart.

use std::path::{Path, PathBuf};

use crate::engine::IterationDetails;
use crate::report::RunReport;

/// Where a run in the list came from.
#[derive(Debug, Clone, PartialEq)]
pub enum RunSource {
    /// Run since the app started.
    Live,
    /// Read from an exported JSON report.
    Opened(PathBuf),
    /// Read from the run history: the stored run's id.
    History(String),
}

/// A run the app knows about.
#[derive(Debug, Clone)]
pub struct RunEntry {
    /// Unique within this app's life.
    pub id: u64,
    /// The report.
    pub report: RunReport,
    /// What its last iteration returned (live runs only).
    pub details: Option<Box<IterationDetails>>,
    /// Where it came from.
    pub source: RunSource,
    /// Whether exports include it.
    pub export: bool,
}

impl RunEntry {
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
}

/// The run list, the run shown, and the next id to hand out.
#[derive(Debug)]
pub struct RunList {
    runs: Vec<RunEntry>,
    shown: Option<u64>,
    next_id: u64,
}

impl Default for RunList {
    fn default() -> Self {
        RunList {
            runs: Vec::new(),
            shown: None,
            next_id: 1,
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
    pub fn shown_id(&self) -> Option<u64> {
        self.shown
    }

    /// Shows the run `id` (or none).
    pub fn show(&mut self, id: Option<u64>) {
        self.shown = id;
    }

    /// The run shown, if any.
    pub fn shown(&self) -> Option<&RunEntry> {
        self.runs.iter().find(|r| Some(r.id) == self.shown)
    }

    /// An id no run has had (a run in flight takes one before its reports exist).
    pub fn take_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// Adds a run marked for export, shows it, and returns its id.
    pub fn add(
        &mut self,
        report: RunReport,
        details: Option<Box<IterationDetails>>,
        source: RunSource,
    ) -> u64 {
        let id = self.take_id();
        self.runs.push(RunEntry {
            id,
            report,
            details,
            source,
            export: true,
        });
        self.shown = Some(id);
        id
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

    /// The label of the next run: `wanted` (trimmed), or `run N` when it is empty; made unique
    /// among the runs with ` (2)`, ` (3)`...
    pub fn next_label(&self, wanted: &str) -> String {
        let wanted = wanted.trim();
        let base = if wanted.is_empty() {
            format!("run {}", self.runs.len() + 1)
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

    #[test]
    fn a_new_run_is_labelled_run_n_or_as_asked_and_never_twice_alike() {
        let mut list = RunList::default();
        assert_eq!(list.next_label("  "), "run 1");
        list.add(report("wide"), None, RunSource::Live);
        assert_eq!(list.next_label(""), "run 2");
        assert_eq!(list.next_label(" wide "), "wide (2)");
        list.add(report("wide (2)"), None, RunSource::Live);
        assert_eq!(list.next_label("wide"), "wide (3)");
        assert_eq!(list.next_label("narrow"), "narrow");
    }

    #[test]
    fn the_run_added_last_is_shown_and_ids_are_never_reused() {
        let mut list = RunList::default();
        let a = list.add(report("a"), None, RunSource::Live);
        let in_flight = list.take_id();
        let opened = list.add_opened(Path::new("/tmp/r.json"), vec![report("b"), report("c")]);
        assert_eq!(opened, 2);
        let ids: Vec<u64> = list.entries().iter().map(|r| r.id).collect();
        assert_eq!(ids, [a, in_flight + 1, in_flight + 2]);
        assert_eq!(
            list.shown().map(RunEntry::title).as_deref(),
            Some("c (from r.json)")
        );
        list.entries_mut()[0].export = false;
        let exported: Vec<String> = list
            .export_reports()
            .into_iter()
            .map(|r| r.config.label)
            .collect();
        assert_eq!(exported, ["b", "c"]);
    }
}
