//! Export of the selected runs (CSV of their iterations in the engine's format, the JSON report,
//! the Markdown summary) through the library's exporters. File dialogs, the writing of exports
//! (serialise, write, fsync, rename) and the reading of reports run on threads of their own, so
//! the window keeps drawing whatever the disk does.

use std::path::{Path, PathBuf};
use std::sync::mpsc;

use crate::export::{Csv, ExportError, Exporter, Json, Markdown, write_atomically};
use crate::report::RunReport;

/// The formats the app exports to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// One row per iteration, the engine's columns.
    Csv,
    /// The whole report, which the app (and `spanprof compare`) can read back.
    Json,
    /// A summary table per run.
    Markdown,
}

impl ExportFormat {
    /// Every format, in menu order.
    pub const ALL: [ExportFormat; 3] = [
        ExportFormat::Csv,
        ExportFormat::Json,
        ExportFormat::Markdown,
    ];

    fn exporter(self) -> Box<dyn Exporter> {
        match self {
            ExportFormat::Csv => Box::new(Csv),
            ExportFormat::Json => Box::new(Json),
            ExportFormat::Markdown => Box::new(Markdown),
        }
    }

    /// The menu's name for it.
    pub fn label(self) -> &'static str {
        match self {
            ExportFormat::Csv => "CSV of iterations…",
            ExportFormat::Json => "JSON report…",
            ExportFormat::Markdown => "Markdown summary…",
        }
    }

    /// The file name a save dialog proposes.
    pub fn default_file_name(self) -> String {
        format!("spanprof.{}", self.exporter().extension())
    }
}

/// The document for `reports` in `format`.
pub fn export_bytes(format: ExportFormat, reports: &[RunReport]) -> Result<Vec<u8>, ExportError> {
    format.exporter().export(reports)
}

/// Writes `reports` in `format` to `path`, whole or not at all (what the Export menu does after
/// its dialog; tests call it with a path).
pub fn export_to(
    path: &Path,
    format: ExportFormat,
    reports: &[RunReport],
) -> Result<(), ExportError> {
    write_atomically(path, &export_bytes(format, reports)?)
}

/// The Markdown summary of `reports`, as text ("Copy summary").
pub fn summary_text(reports: &[RunReport]) -> Result<String, ExportError> {
    let bytes = export_bytes(ExportFormat::Markdown, reports)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// What a file dialog was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DialogPurpose {
    /// Save an export.
    Save(ExportFormat),
    /// Open a JSON report.
    OpenReport,
    /// Choose a service-account key file.
    Credentials,
}

/// File dialogs in flight, each on its own thread.
#[derive(Debug, Default)]
pub struct Dialogs {
    pending: Vec<mpsc::Receiver<(DialogPurpose, Option<PathBuf>)>>,
}

impl Dialogs {
    /// Opens a dialog for `purpose`; its answer comes back through [`Dialogs::drain`]. `notify` is
    /// called when the user has chosen.
    pub fn open(
        &mut self,
        purpose: DialogPurpose,
        notify: impl Fn() + Send + 'static,
    ) -> Result<(), String> {
        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("spanprof-file-dialog".into())
            .spawn(move || {
                let dialog = rfd::FileDialog::new();
                let path = match purpose {
                    DialogPurpose::Save(format) => {
                        dialog.set_file_name(format.default_file_name()).save_file()
                    }
                    DialogPurpose::OpenReport => dialog
                        .add_filter("spanprof JSON report", &["json"])
                        .pick_file(),
                    DialogPurpose::Credentials => dialog
                        .add_filter("service-account key", &["json"])
                        .pick_file(),
                };
                let _ = tx.send((purpose, path));
                notify();
            })
            .map_err(|e| format!("cannot open a file dialog: {e}"))?;
        self.pending.push(rx);
        Ok(())
    }

    /// The answers that came back since the last call. A dialog that could not open (no desktop
    /// portal) answers `None`, as a cancelled one does.
    pub fn drain(&mut self) -> Vec<(DialogPurpose, Option<PathBuf>)> {
        let mut answers = Vec::new();
        self.pending.retain(|rx| match rx.try_recv() {
            Ok(answer) => {
                answers.push(answer);
                false
            }
            Err(mpsc::TryRecvError::Empty) => true,
            Err(mpsc::TryRecvError::Disconnected) => false,
        });
        answers
    }
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
        result: Result<Vec<RunReport>, String>,
    },
}

/// Exports being written and reports being read, each on a named thread of its own.
#[derive(Debug, Default)]
pub struct FileJobs {
    pending: Vec<mpsc::Receiver<FileDone>>,
}

impl FileJobs {
    /// Writes `reports` in `format` to `path` (whole or not at all); the outcome comes back through
    /// [`FileJobs::drain`], and `notify` is called when it is there.
    pub fn save(
        &mut self,
        format: ExportFormat,
        reports: Vec<RunReport>,
        path: PathBuf,
        notify: impl Fn() + Send + 'static,
    ) -> Result<(), String> {
        self.spawn("spanprof-export", notify, move || {
            let result = export_to(&path, format, &reports);
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

/// The runs of the JSON report at `path`, or why they cannot be had.
pub fn read_report(path: &Path) -> Result<Vec<RunReport>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    crate::export::read_json(&bytes).map_err(|e| format!("cannot open {}: {e}", path.display()))
}
