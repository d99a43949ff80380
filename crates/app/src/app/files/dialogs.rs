//! Every file dialog the app opens (an export of the runs or of a load run, open a report, the
//! credentials file), one way: the desktop's own dialog (rfd, through the XDG desktop portal) on a
//! thread of its own, and spanprof's in-window [`FileDialog`] when the desktop gives none.
//!
//! rfd answers `None` both when the user cancels and when there is no portal (a plain X server,
//! Xvfb, WSL: it gives up at once). A person takes longer than [`NO_DIALOG_WITHIN`] to cancel a
//! dialog they saw, so an answer of nothing sooner than that means no dialog was shown: the
//! in-window dialog opens in its place, the app says so, and for the rest of the session every
//! dialog is the in-window one. A desktop dialog that never answers can be left for the
//! in-window one too ([`Dialogs::use_built_in`]).

use std::path::PathBuf;
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use super::file_dialog::{DialogOutcome, FileDialog};
use crate::export::{Format, RunKind};

/// An answer of nothing sooner than this after the desktop's dialog was asked for means it
/// showed none.
pub const NO_DIALOG_WITHIN: Duration = Duration::from_millis(1500);

/// What a file dialog is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DialogPurpose {
    /// Save an export of the runs marked for export, or of the last load run.
    Save(Format, RunKind),
    /// Open a report (JSON, or an HTML report with one inside).
    OpenReport,
    /// Choose a service-account key file.
    Credentials,
    /// Choose a JSON report to import into the run history.
    ImportHistory,
}

impl DialogPurpose {
    /// The dialog's title.
    pub fn title(self) -> &'static str {
        match self {
            DialogPurpose::Save(format, kind) => format.title(kind),
            DialogPurpose::OpenReport => "Open a report (JSON or HTML)",
            DialogPurpose::Credentials => "Choose a service-account key file",
            DialogPurpose::ImportHistory => "Import a JSON report into the history",
        }
    }
}

/// Which dialogs the app opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DialogBackend {
    /// The desktop's, and spanprof's own in the window when the desktop gives none.
    #[default]
    System,
    /// spanprof's own in the window, always (tests: no dialog of the desktop's pops up).
    BuiltIn,
}

/// A dialog to open: what for, the folder it starts in, and for a save the proposed name.
#[derive(Debug, Clone, PartialEq)]
pub struct DialogRequest {
    /// What the path is for.
    pub purpose: DialogPurpose,
    /// The folder it opens in.
    pub folder: PathBuf,
    /// The file name a save proposes.
    pub file_name: Option<String>,
}

/// How a dialog ended, or what the app should say about one.
#[derive(Debug, Clone, PartialEq)]
pub enum DialogAnswer {
    /// A path was chosen.
    Chosen(DialogPurpose, PathBuf),
    /// The user cancelled.
    Cancelled(DialogPurpose),
    /// The desktop showed no dialog; the in-window one is open instead.
    NoSystemDialog(DialogPurpose),
}

struct Pending {
    request: DialogRequest,
    asked: Instant,
    answer: mpsc::Receiver<Option<PathBuf>>,
}

/// The dialog open now, if any: the desktop's (on its thread) or the in-window one.
#[derive(Default)]
pub struct Dialogs {
    backend: DialogBackend,
    /// The desktop showed no dialog once this session: go straight to the in-window one.
    system_failed: bool,
    pending: Option<Pending>,
    built_in: Option<(DialogPurpose, FileDialog)>,
}

impl Dialogs {
    /// Dialogs of `backend`.
    pub fn new(backend: DialogBackend) -> Self {
        Dialogs {
            backend,
            ..Dialogs::default()
        }
    }

    /// Whether a dialog is open (the desktop's, or the in-window one).
    pub fn is_open(&self) -> bool {
        self.pending.is_some() || self.built_in.is_some()
    }

    /// Whether the app waits for the desktop's dialog.
    pub fn waiting_for_system(&self) -> bool {
        self.pending.is_some()
    }

    /// The in-window dialog, if it is open.
    pub fn built_in(&self) -> Option<&FileDialog> {
        self.built_in.as_ref().map(|(_, d)| d)
    }

    /// Opens a dialog for `request`; `notify` asks for a repaint when it has something to say.
    pub fn open(
        &mut self,
        request: DialogRequest,
        notify: Arc<dyn Fn() + Send + Sync>,
    ) -> Result<(), String> {
        if self.is_open() {
            return Err("a file dialog is already open".into());
        }
        if self.backend == DialogBackend::BuiltIn || self.system_failed {
            self.open_built_in(request, notify);
            return Ok(());
        }
        let (tx, rx) = mpsc::channel();
        let asked = request.clone();
        std::thread::Builder::new()
            .name("spanprof-file-dialog".into())
            .spawn(move || {
                let _ = tx.send(system_dialog(&asked));
                notify();
            })
            .map_err(|e| format!("cannot open a file dialog: {e}"))?;
        self.pending = Some(Pending {
            request,
            asked: Instant::now(),
            answer: rx,
        });
        Ok(())
    }

    fn open_built_in(&mut self, request: DialogRequest, notify: Arc<dyn Fn() + Send + Sync>) {
        let title = request.purpose.title();
        let dialog = match (request.purpose, request.file_name) {
            (DialogPurpose::Save(..), Some(name)) => {
                FileDialog::save(title, request.folder, name, notify)
            }
            (DialogPurpose::Save(format, kind), None) => {
                FileDialog::save(title, request.folder, format.bare_file_name(kind), notify)
            }
            _ => FileDialog::open(title, request.folder, notify),
        };
        self.built_in = Some((request.purpose, dialog));
    }

    /// Leaves the desktop's dialog being waited for and opens the in-window one in its place
    /// (a desktop dialog that never appeared); whatever the desktop answers later is dropped.
    pub fn use_built_in(&mut self, notify: Arc<dyn Fn() + Send + Sync>) {
        if let Some(pending) = self.pending.take() {
            self.system_failed = true;
            self.open_built_in(pending.request, notify);
        }
    }

    /// The desktop dialog's answer, once it is in (call once per frame). An answer of nothing
    /// that came at once opens the in-window dialog in its place.
    pub fn drain(&mut self, notify: Arc<dyn Fn() + Send + Sync>) -> Option<DialogAnswer> {
        let pending = self.pending.as_ref()?;
        let answer = match pending.answer.try_recv() {
            Ok(answer) => answer,
            Err(mpsc::TryRecvError::Empty) => return None,
            Err(mpsc::TryRecvError::Disconnected) => None,
        };
        let quick = pending.asked.elapsed() < NO_DIALOG_WITHIN;
        let pending = self.pending.take()?;
        let purpose = pending.request.purpose;
        Some(match answer {
            Some(path) => DialogAnswer::Chosen(purpose, path),
            None if quick => {
                self.system_failed = true;
                self.open_built_in(pending.request, notify);
                DialogAnswer::NoSystemDialog(purpose)
            }
            None => DialogAnswer::Cancelled(purpose),
        })
    }

    /// Draws the in-window dialog, if it is open; returns how it ended, once it has, and the
    /// problems it met (for the log).
    pub fn show(&mut self, ctx: &egui::Context) -> (Option<DialogAnswer>, Vec<String>) {
        let Some((purpose, dialog)) = &mut self.built_in else {
            return (None, Vec::new());
        };
        let purpose = *purpose;
        let outcome = dialog.show(ctx);
        let problems = dialog.take_problems();
        let answer = outcome.map(|outcome| {
            self.built_in = None;
            match outcome {
                DialogOutcome::Chosen(path) => DialogAnswer::Chosen(purpose, path),
                DialogOutcome::Cancelled => DialogAnswer::Cancelled(purpose),
            }
        });
        (answer, problems)
    }
}

/// The desktop's dialog for `request` (blocks until it is closed: call it on a thread).
fn system_dialog(request: &DialogRequest) -> Option<PathBuf> {
    let dialog = rfd::FileDialog::new()
        .set_title(request.purpose.title())
        .set_directory(&request.folder);
    match request.purpose {
        DialogPurpose::Save(format, kind) => {
            let name = request
                .file_name
                .clone()
                .unwrap_or_else(|| format.bare_file_name(kind));
            dialog.set_file_name(name).save_file()
        }
        DialogPurpose::OpenReport | DialogPurpose::ImportHistory => dialog
            .add_filter("spanprof report (JSON or HTML)", &["json", "html", "htm"])
            .pick_file(),
        DialogPurpose::Credentials => dialog
            .add_filter("service-account key", &["json"])
            .pick_file(),
    }
}
