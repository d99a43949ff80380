//! The formats runs export to, listed once ([`Format`]), and the names a save proposes.

use super::{Csv, Exporter, Html, Json, Markdown, Trace};
use crate::report::RunReport;

/// The formats a run's reports export to: the one list the CLI's flags, the window's Export menu
/// and its dialogs read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One row per iteration, the engine's columns.
    Csv,
    /// The whole report, which the app (and `spanprof compare`) can read back.
    Json,
    /// A summary table per run.
    Markdown,
    /// Chrome trace event JSON of the iterations' timelines (Perfetto UI, chrome://tracing,
    /// speedscope).
    Trace,
    /// One offline HTML page of the runs (every run after the first compared with the first),
    /// with the JSON report inside, which the app reads back.
    Html,
}

impl Format {
    /// Every format, in menu order.
    pub const ALL: [Format; 5] = [
        Format::Csv,
        Format::Json,
        Format::Markdown,
        Format::Trace,
        Format::Html,
    ];

    /// Its exporter.
    pub fn exporter(self) -> Box<dyn Exporter> {
        match self {
            Format::Csv => Box::new(Csv),
            Format::Json => Box::new(Json),
            Format::Markdown => Box::new(Markdown),
            Format::Trace => Box::new(Trace),
            Format::Html => Box::new(Html::default()),
        }
    }

    /// The menu's name for it.
    pub fn label(self) -> &'static str {
        match self {
            Format::Csv => "CSV of iterations…",
            Format::Json => "JSON report…",
            Format::Markdown => "Markdown summary…",
            Format::Trace => "Trace (Perfetto, chrome://tracing)…",
            Format::Html => "HTML report (one offline page)…",
        }
    }

    /// The file name a save dialog proposes for `reports`: `spanprof-<label>-<date>.<ext>`, the
    /// label of the one run (or how many there are) and the day the newest one started.
    pub fn file_name(self, reports: &[RunReport]) -> String {
        let label = match reports {
            [one] => file_name_part(&one.config.label),
            [] => String::new(),
            many => format!("{}-runs", many.len()),
        };
        let date = reports
            .iter()
            .map(|r| r.started_at.get(..10).unwrap_or_default())
            .filter(|d| is_date(d))
            .max()
            .unwrap_or_default();
        let mut name = String::from("spanprof");
        for part in [label.as_str(), date] {
            if !part.is_empty() {
                name.push('-');
                name.push_str(part);
            }
        }
        // A trace is JSON too: its own suffix keeps it from taking the report's name.
        let extension = match self {
            Format::Trace => "trace.json",
            other => other.exporter().extension(),
        };
        format!("{name}.{extension}")
    }
}

/// `label` as part of a file name: letters, digits, `.`, `_` and `-` kept, every other run of
/// characters one `-`, at most 60 characters.
pub fn file_name_part(label: &str) -> String {
    let mut part = String::new();
    for c in label.chars() {
        if c.is_alphanumeric() || matches!(c, '.' | '_' | '-') {
            part.push(c);
        } else if !part.ends_with('-') {
            part.push('-');
        }
    }
    part.trim_matches(|c| c == '-' || c == '.')
        .chars()
        .take(60)
        .collect()
}

/// Whether `text` is a `YYYY-MM-DD` date.
pub fn is_date(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        })
}
