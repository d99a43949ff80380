//! Where each dialog's answer goes: a save writes the marked runs' export (or the last load run's),
//! an open reads a report,
//! the key file becomes the Cloud connection's credentials; a cancel or a missing desktop dialog is
//! said in the status bar (and the log). Then what the file jobs those answers started report: an
//! export written or not, a report's runs added to the list.

use std::path::PathBuf;

use super::SpanprofApp;
use super::connection::repaint_notifier;
use super::files::{DialogAnswer, DialogPurpose, DialogRequest, FileDone, home_dir};
use super::settings::Tab;
use crate::export::{Format, OwnedReports, Reports, RunKind};

impl SpanprofApp {
    /// What the Export menu does once its dialog has a path: writes the runs marked for export on
    /// a thread of its own; the window says where (or why not) a frame after it is done.
    pub fn save_export(&mut self, format: Format, path: PathBuf) {
        self.save(format, RunKind::Profile, path);
    }

    /// What the Load tab's export does once its dialog has a path: writes the last load run's
    /// report on a thread of its own; the window says where (or why not) once it is done.
    pub fn save_load_export(&mut self, format: Format, path: PathBuf) {
        self.save(format, RunKind::Load, path);
    }

    /// Writes what an export of `kind` holds in `format` to `path`, on a thread of its own.
    fn save(&mut self, format: Format, kind: RunKind, path: PathBuf) {
        let Some(reports) = self.exported(kind) else {
            self.error(nothing_to_export(kind).into());
            return;
        };
        let ctx = self.ctx.clone();
        if let Err(e) = self
            .files
            .save(format, reports, path, move || ctx.request_repaint())
        {
            self.error(e);
        }
    }

    /// What an Export menu or the Load tab asked for: the dialog that saves `format`, when there
    /// is something of `kind` to export.
    pub(super) fn ask_export(&mut self, format: Format, kind: RunKind) {
        if self.exported(kind).is_some() {
            self.open_dialog(DialogPurpose::Save(format, kind));
        } else {
            self.error(nothing_to_export(kind).into());
        }
    }

    /// What an export of `kind` holds: the runs marked for export, or the last load run; `None`
    /// when there is nothing.
    fn exported(&self, kind: RunKind) -> Option<OwnedReports> {
        match kind {
            RunKind::Profile => {
                let runs = self.export_reports();
                (!runs.is_empty()).then_some(OwnedReports::Profile(runs))
            }
            RunKind::Load => self.load.report().map(|run| Reports::Load(run).owned()),
        }
    }

    /// What File > Open report does once its dialog has a path: reads the report on a thread of
    /// its own; its runs appear a frame after it is read.
    pub fn open_report_file(&mut self, path: PathBuf) {
        let ctx = self.ctx.clone();
        if let Err(e) = self.files.open(path, move || ctx.request_repaint()) {
            self.error(e);
        }
    }

    /// Opens the dialog for `purpose` in the last folder chosen (else the home directory), a save
    /// proposing the export's file name.
    pub(super) fn open_dialog(&mut self, purpose: DialogPurpose) {
        let file_name = match purpose {
            DialogPurpose::Save(format, kind) => Some(match self.exported(kind) {
                Some(reports) => format.file_name(reports.reports()),
                None => format.bare_file_name(kind),
            }),
            DialogPurpose::OpenReport
            | DialogPurpose::Credentials
            | DialogPurpose::ImportHistory => None,
        };
        let request = DialogRequest {
            purpose,
            folder: self.settings.last_folder.clone().unwrap_or_else(home_dir),
            file_name,
        };
        let notify = repaint_notifier(&self.ctx);
        if let Err(e) = self.dialogs.open(request, notify) {
            self.error(e);
        }
    }

    /// Draws the in-window file dialog when it is open, and acts on how it ended.
    pub(super) fn file_dialog(&mut self, ctx: &egui::Context) {
        let (answer, problems) = self.dialogs.show(ctx);
        for problem in problems {
            self.error(problem);
        }
        if let Some(answer) = answer {
            self.dialog_answered(answer);
        }
    }

    /// Acts on how a dialog ended: the folder of a chosen file is remembered for the next one.
    pub(super) fn dialog_answered(&mut self, answer: DialogAnswer) {
        match answer {
            DialogAnswer::Chosen(purpose, path) => {
                if let Some(folder) = path.parent().filter(|f| !f.as_os_str().is_empty()) {
                    self.settings.last_folder = Some(folder.to_owned());
                }
                self.dialog_chose(purpose, path);
            }
            DialogAnswer::Cancelled(purpose) => {
                self.notice = Some(match purpose {
                    DialogPurpose::Save(..) => "export cancelled: nothing was written".into(),
                    DialogPurpose::OpenReport => "no report opened".into(),
                    DialogPurpose::Credentials => "the credentials are unchanged".into(),
                    DialogPurpose::ImportHistory => "nothing imported".into(),
                });
            }
            // Not an error: the built-in dialog does the job, and says where it is.
            DialogAnswer::NoSystemDialog(purpose) => {
                self.notice = Some(format!(
                    "the desktop showed no file dialog for \"{}\" (no XDG desktop portal?): \
                     spanprof's own dialog is open instead",
                    purpose.title()
                ))
            }
        }
    }

    fn dialog_chose(&mut self, purpose: DialogPurpose, path: PathBuf) {
        match purpose {
            DialogPurpose::Save(format, kind) => self.save(format, kind, path),
            DialogPurpose::OpenReport => self.open_report_file(path),
            DialogPurpose::ImportHistory => self.history_view.import(path),
            DialogPurpose::Credentials => {
                self.notice = Some(format!("credentials: {}", path.display()));
                self.settings.connection.cloud.credentials_file = Some(path);
            }
        }
    }

    /// Says how a file job ended; a report's runs join the list and the Compare tab shows them.
    pub(super) fn file_done(&mut self, done: FileDone) {
        match done {
            FileDone::Saved { path, result } => match result {
                Ok(()) => self.notice = Some(format!("exported to {}", path.display())),
                Err(e) => self.error(e.to_string()),
            },
            FileDone::Opened { path, result } => match result {
                Ok(reports) => {
                    let n = self.runs.add_opened(&path, reports);
                    self.notice = Some(format!("opened {n} runs from {}", path.display()));
                    self.settings.tab = Tab::Compare;
                }
                Err(e) => self.error(e.to_string()),
            },
        }
    }
}

/// Why there is nothing to export of `kind`.
fn nothing_to_export(kind: RunKind) -> &'static str {
    match kind {
        RunKind::Profile => "nothing to export: no run is marked for export",
        RunKind::Load => "nothing to export: no load run has ended",
    }
}
