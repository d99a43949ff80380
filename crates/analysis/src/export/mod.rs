//! Exports of run reports: pure serialisers from [`RunReport`]s to bytes, and the one function
//! that writes bytes to a file.
//!
//! Every format is an [`Exporter`]: [`Csv`] (one row per iteration), [`Json`] (everything, with
//! a summary per run; [`read_json`] reads it back), [`Markdown`] (a summary table per run),
//! [`Trace`] (Chrome trace events) and [`Html`] (one offline page with the JSON embedded;
//! [`read_reports`] reads either back); a load run's JSON, CSV, HDR interval log and page are in
//! `load.rs` and `html/`, load variants' (`load --vary`) in `load_variants.rs` and `html/`.
//! [`Format`] lists them all once, each saying which kinds of run it
//! exports. None of them touches the file system; [`write_atomically`] does, for all of them.

mod csv;
mod file;
mod format;
mod html;
mod json;
mod load;
mod load_variants;
mod markdown;
mod redact;
mod trace;

#[cfg(test)]
mod fixture;

use std::io;
use std::path::PathBuf;

use thiserror::Error;

use crate::report::RunReport;

pub use self::csv::{COLUMNS, Csv};
pub use self::file::{MAX_REPORT_BYTES, read_bounded, write_atomically};
pub use self::format::{Exported, Format, OwnedReports, Reports, RunKind, file_name_part, is_date};
pub use self::html::{Html, MAX_BARS, MAX_TABLE_ROWS, is_html, load_html, load_variants_html};
pub use self::json::{FORMAT_VERSION, Json, read_json};
pub use self::load::{LOAD_COLUMNS, LOAD_TRANSACTION_COLUMNS, load_csv, load_hdr_log, load_json};
pub use self::load_variants::{
    LOAD_VARIANTS_KIND, LOAD_VARIANTS_VERSION, LoadVariants, load_variants_csv, load_variants_json,
};
pub use self::markdown::Markdown;
pub use self::redact::Redaction;
pub use self::trace::Trace;

/// A format run reports can be exported to.
pub trait Exporter {
    /// The usual file name extension of the format, without the dot (`csv`, `json`, `md`).
    fn extension(&self) -> &'static str;

    /// The whole document for `reports`, in the order given.
    fn export(&self, reports: &[RunReport]) -> Result<Vec<u8>, ExportError>;
}

/// Why an export could not be made, read back or written.
#[derive(Debug, Error)]
pub enum ExportError {
    /// The CSV writer failed. (Its text is in the message, so it is no `source`: an error chain
    /// would print it twice.)
    #[error("cannot write CSV: {0}")]
    Csv(::csv::Error),
    /// The JSON could not be written, or what was read back is not a spanprof report. (As for
    /// `Csv`, the error's text is in the message, not a `source`.)
    #[error("not a spanprof JSON report: {0}")]
    Json(serde_json::Error),
    /// A JSON report in a format version this build does not read.
    #[error(
        "spanprof JSON report version {found} is not supported (this build reads {FORMAT_VERSION})"
    )]
    UnsupportedVersion {
        /// The version the document declares.
        found: u64,
    },
    /// A file that holds no run report spanprof can read (an HTML file without one, a load
    /// run's report where a run's was wanted); what it is instead.
    #[error("not a spanprof run report: {0}")]
    NotARunReport(String),
    /// A format asked for a kind of run it does not export (a load run's Markdown).
    #[error("{format} is not a format of {}", kind.describe())]
    Unsupported {
        /// The format's name.
        format: &'static str,
        /// The kind of run it was given.
        kind: RunKind,
    },
    /// The HDR interval log could not be written (a step's histogram did not read back).
    #[error("cannot write the HDR interval log: {0}")]
    Hdr(String),
    /// Writing the file failed; nothing was written to `path`.
    #[error("cannot write {}: {}", path.display(), reason(error))]
    Write {
        /// The file that was to be written.
        path: PathBuf,
        /// What the operating system said.
        error: io::Error,
    },
}

/// The runs of a report file's bytes: a JSON report, or an HTML report with one embedded.
pub fn read_reports(bytes: &[u8]) -> Result<Vec<RunReport>, ExportError> {
    if is_html(bytes) {
        read_json(html::read_embedded(bytes)?)
    } else {
        read_json(bytes)
    }
}

/// A load run's report from a file's bytes: its JSON (`load --json`), or a load run's HTML report.
pub fn read_load_report(bytes: &[u8]) -> Result<crate::load::LoadReport, ExportError> {
    let json = if is_html(bytes) {
        html::read_embedded_load(bytes)?
    } else {
        bytes
    };
    Ok(crate::load::LoadReport::from_json(json)?)
}

impl From<::csv::Error> for ExportError {
    fn from(e: ::csv::Error) -> Self {
        ExportError::Csv(e)
    }
}

impl From<serde_json::Error> for ExportError {
    fn from(e: serde_json::Error) -> Self {
        ExportError::Json(e)
    }
}

/// The operating system's message without the ` (os error N)` that `io::Error` appends, so a
/// message reads "Permission denied" rather than "Permission denied (os error 13)".
fn reason(error: &io::Error) -> String {
    let message = error.to_string();
    match error.raw_os_error() {
        Some(code) => message
            .strip_suffix(&format!(" (os error {code})"))
            .map_or_else(|| message.clone(), str::to_owned),
        None => message,
    }
}
