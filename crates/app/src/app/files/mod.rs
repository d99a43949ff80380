//! Files the app reads and writes for the user: the file dialogs (`dialogs.rs`, with spanprof's
//! own in the window, `file_dialog.rs`), exports and report reads (`export.rs`).

mod dialogs;
mod export;
mod file_dialog;

pub use dialogs::{DialogBackend, NO_DIALOG_WITHIN};
pub use export::{ReportError, export_bytes, export_to, summary_text};

pub(super) use dialogs::{DialogAnswer, DialogPurpose, DialogRequest, Dialogs};
pub(super) use export::{FileDone, FileJobs, read_report};
pub(super) use file_dialog::home_dir;
