//! Export of the selected runs and of the Load tab's last load run, in the formats of their kind
//! (the library's one list, `export::Format`), and the reading of reports. The writing of exports
//! (serialise, write, fsync, rename) and the reading of reports run on threads of their own, so
//! the window keeps drawing whatever the disk does (the dialogs that choose the paths are
//! `dialogs.rs`).

use std::path::{Path, PathBuf};
use std::sync::mpsc;

use crate::export::{ExportError, Exported, Format, OwnedReports, Reports, write_atomically};
use crate::report::RunReport;

/// The document for `reports` in `format`.
pub fn export_bytes(format: Format, reports: &[RunReport]) -> Result<Vec<u8>, ExportError> {
    format.export(&Exported::new(Reports::Profile(reports)))
}

/// Writes `reports` in `format` to `path`, whole or not at all (what the Export menu does after
/// its dialog; tests call it with a path).
pub fn export_to(path: &Path, format: Format, reports: &[RunReport]) -> Result<(), ExportError> {
    write_atomically(path, &export_bytes(format, reports)?)
}

/// The Markdown summary of `reports`, as text ("Copy summary").
pub fn summary_text(reports: &[RunReport]) -> Result<String, ExportError> {
    let bytes = export_bytes(Format::Markdown, reports)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// A file job that ended: what it was, and how it went.
#[derive(Debug)]
pub enum FileDone {
    /// An export was written (or not) to `path`.
    Saved {
        /// Where it went.
        path: PathBuf,
        /// Ok, or why nothing was written.
        result: Result<(), ExportError>,
    },
    /// A report file was read and parsed (or not).
    Opened {
        /// The file.
        path: PathBuf,
        /// Its runs, or why they cannot be had.
        result: Result<Vec<RunReport>, ReportError>,
    },
}

/// Exports being written and reports being read, each on a named thread of its own.
#[derive(Debug, Default)]
pub struct FileJobs {
    pending: Vec<mpsc::Receiver<FileDone>>,
}

impl FileJobs {
    /// Writes `reports` (a profile's runs, or a load run) in `format` to `path` (whole or not at
    /// all); the outcome comes back through [`FileJobs::drain`], and `notify` is called when it is
    /// there.
    pub fn save(
        &mut self,
        format: Format,
        reports: OwnedReports,
        path: PathBuf,
        notify: impl Fn() + Send + 'static,
    ) -> Result<(), String> {
        self.spawn("spanprof-export", notify, move || {
            let result = format
                .export(&Exported::new(reports.reports()))
                .and_then(|bytes| write_atomically(&path, &bytes));
            FileDone::Saved { path, result }
        })
    }

    /// Reads the JSON report at `path`; its runs come back through [`FileJobs::drain`].
    pub fn open(
        &mut self,
        path: PathBuf,
        notify: impl Fn() + Send + 'static,
    ) -> Result<(), String> {
        self.spawn("spanprof-open-report", notify, move || {
            let result = read_report(&path);
            FileDone::Opened { path, result }
        })
    }

    fn spawn(
        &mut self,
        name: &str,
        notify: impl Fn() + Send + 'static,
        job: impl FnOnce() -> FileDone + Send + 'static,
    ) -> Result<(), String> {
        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let _ = tx.send(job());
                notify();
            })
            .map_err(|e| format!("cannot start a thread for the file: {e}"))?;
        self.pending.push(rx);
        Ok(())
    }

    /// The jobs that ended since the last call.
    pub fn drain(&mut self) -> Vec<FileDone> {
        let mut done = Vec::new();
        self.pending.retain(|rx| match rx.try_recv() {
            Ok(outcome) => {
                done.push(outcome);
                false
            }
            Err(mpsc::TryRecvError::Empty) => true,
            Err(mpsc::TryRecvError::Disconnected) => false,
        });
        done
    }

    /// Whether a job is still running.
    pub fn busy(&self) -> bool {
        !self.pending.is_empty()
    }
}

/// Why a report file gave no runs: it could not be read, or it is not a report this build reads.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The file is not a spanprof JSON report, or of a format version this build does not read.
    #[error("cannot open {}: {source}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// What the reader found.
        source: ExportError,
    },
}

/// Two errors are equal when they are of the same kind, about the same file, and say the same
/// (`io::Error` and the exporters' errors have no equality of their own).
impl PartialEq for ReportError {
    fn eq(&self, other: &Self) -> bool {
        let key = |e: &Self| match e {
            ReportError::Read { path, .. } => (0, path.clone()),
            ReportError::Parse { path, .. } => (1, path.clone()),
        };
        key(self) == key(other) && self.to_string() == other.to_string()
    }
}

/// The runs of the report at `path` (JSON, or an HTML report with one inside), or why they
/// cannot be had.
pub fn read_report(path: &Path) -> Result<Vec<RunReport>, ReportError> {
    let bytes =
        crate::export::read_bounded(path, crate::export::MAX_REPORT_BYTES).map_err(|source| {
            ReportError::Read {
                path: path.to_owned(),
                source,
            }
        })?;
    crate::export::read_reports(&bytes).map_err(|source| ReportError::Parse {
        path: path.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(label: &str, started_at: &str) -> RunReport {
        RunReport {
            config: crate::report::RunConfig {
                label: label.into(),
                target: "local".into(),
                sql: "SELECT 1".into(),
                params: vec![],
                query_mode: crate::kind::QueryMode::WithStats,
                iterations: 1,
                warmup: 0,
                decoder: crate::kind::Reader::Fast,
                ..Default::default()
            },
            started_at: started_at.into(),
            iterations: vec![],
            plans: Default::default(),
            stopped: None,
        }
    }

    #[test]
    fn a_save_proposes_the_runs_label_and_the_newest_date() {
        let one = [report("wide scan", "2026-03-01T10:00:00Z")];
        let one = Reports::Profile(&one);
        assert_eq!(
            Format::Csv.file_name(one),
            "spanprof-wide-scan-2026-03-01.csv"
        );
        let two = [
            report("a", "2026-03-01T10:00:00Z"),
            report("b", "2026-03-04T09:00:00Z"),
        ];
        assert_eq!(
            Format::Json.file_name(Reports::Profile(&two)),
            "spanprof-2-runs-2026-03-04.json"
        );
        // What a file name cannot hold goes; a date that is not one is left out.
        let odd = [report("../x/y: \u{1b}[31m", "yesterday")];
        assert_eq!(
            Format::Markdown.file_name(Reports::Profile(&odd)),
            "spanprof-x-y-31m.md"
        );
        assert_eq!(Format::Csv.file_name(Reports::Profile(&[])), "spanprof.csv");
        assert_eq!(
            Format::Trace.file_name(one),
            "spanprof-wide-scan-2026-03-01.trace.json"
        );
    }

    #[test]
    fn a_load_export_proposes_the_runs_label_and_its_date() {
        let plan = crate::load::LoadSteps {
            model: crate::load::Model::Open,
            levels: vec![crate::load::StepLevel::Rate(10.0)],
            step_duration: std::time::Duration::from_secs(1),
            max_in_flight: 10,
            drain: std::time::Duration::from_secs(1),
        };
        let facts = crate::load::RunFacts {
            label: "scan: wide".into(),
            started_at: "2026-03-01T10:00:00Z".into(),
            ..Default::default()
        };
        let report = crate::load::LoadReport::new(facts, &plan, Vec::new());
        let load = Reports::Load(&report);
        assert_eq!(
            Format::Csv.file_name(load),
            "spanprof-load-scan-wide-2026-03-01.csv"
        );
        assert_eq!(
            Format::HdrLog.file_name(load),
            "spanprof-load-scan-wide-2026-03-01.hlog"
        );
        let json = Format::Json.export(&Exported::new(load)).expect("JSON");
        assert_eq!(crate::load::LoadReport::from_json(&json).ok(), Some(report));
    }

    #[test]
    fn a_report_that_cannot_be_had_says_which_file_and_why()
    -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let missing = dir.path().join("missing.json");
        let error = read_report(&missing).expect_err("no such file");
        assert!(matches!(error, ReportError::Read { ref path, .. } if *path == missing));
        assert!(
            error
                .to_string()
                .starts_with(&format!("cannot read {}: ", missing.display())),
            "{error}"
        );
        let text = dir.path().join("notes.json");
        std::fs::write(&text, "not json")?;
        let error = read_report(&text).expect_err("not a report");
        assert!(matches!(
            error,
            ReportError::Parse {
                source: ExportError::Json(_),
                ..
            }
        ));
        assert!(
            error.to_string().starts_with(&format!(
                "cannot open {}: not a spanprof JSON report",
                text.display()
            )),
            "{error}"
        );
        assert_eq!(read_report(&text).err(), Some(error));
        assert_ne!(read_report(&missing).err(), read_report(&text).err());
        Ok(())
    }
}
