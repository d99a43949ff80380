//! What the last iteration of a run returned besides its timings: a bounded preview of its first
//! rows as display text, its query statistics and plan, the front end's server timing, and a
//! partitioned read's partitions.
//!
//! Only the last iteration keeps rows, and at most [`PREVIEW_ROWS`] of them: a million-row answer
//! is never held. Copying those rows happens outside the decode phases (it lands in "other").

use std::time::Duration;

use crate::client::PartitionTiming;
use crate::client::server_timing::ServerTiming;
use crate::wire::{Field, ResultStats, Row, RowsView, Value};

/// Rows of the last iteration kept for the preview, at most.
pub const PREVIEW_ROWS: usize = 1000;
/// Characters of one preview cell, at most (longer text is cut and ends with `…`).
pub const PREVIEW_CELL_CHARS: usize = 200;

/// The details of one iteration (the last of a run).
#[derive(Debug, Clone, Default)]
pub struct IterationDetails {
    /// The label of the run (variant) it belongs to.
    pub run: String,
    /// 0-based iteration number, warm-ups first.
    pub iteration: u32,
    /// Column headings, `name TYPE`, from the metadata of the iteration's stream; empty when the
    /// stream declared none.
    pub columns: Vec<String>,
    /// The first rows (at most [`PREVIEW_ROWS`]), each cell as display text.
    pub rows: Vec<Vec<String>>,
    /// Rows the iteration returned in all.
    pub rows_total: u64,
    /// The server's statistics and plan, when the query mode returns them.
    pub stats: Option<ResultStats>,
    /// The front end's `server-timing` figures, when present.
    pub server_timing: ServerTiming,
    /// A partitioned read's partitions, each with its own figures; empty for a plain read.
    pub partitions: Vec<PartitionTiming>,
    /// The `x-goog-spanner-request-id` of its query call's first attempt, for support.
    pub request_id: Option<String>,
    /// The W3C trace id its queries carried, with end-to-end tracing on (for Cloud Trace).
    pub trace_id: Option<String>,
    /// Google's operation latency: the whole call, resumes included.
    pub operation: Option<Duration>,
    /// Each RPC attempt's time.
    pub attempts: Vec<Duration>,
}

/// Keeps the first `limit` rows that stream past.
#[derive(Debug, Default)]
pub(super) struct Preview {
    limit: usize,
    rows: Vec<Row>,
}

impl Preview {
    /// Keeps at most `limit` rows (0 keeps none and costs nothing).
    pub(super) fn new(limit: usize) -> Self {
        Preview {
            limit,
            rows: Vec::new(),
        }
    }

    /// Keeps what fits of `batch`.
    pub(super) fn keep(&mut self, batch: RowsView<'_>) {
        let room = self.limit.saturating_sub(self.rows.len());
        if room > 0 {
            self.rows.extend(batch.to_rows(room));
        }
    }

    /// The kept rows as display text.
    pub(super) fn into_text(self) -> Vec<Vec<String>> {
        self.rows
            .iter()
            .map(|row| row.0.iter().map(cell_text).collect())
            .collect()
    }
}

/// A value as a preview cell shows it: strings as they are, NULL as `NULL`, everything else in
/// the canonical JSON encoding; cut to [`PREVIEW_CELL_CHARS`] characters.
pub fn cell_text(value: &Value) -> String {
    let text = match value {
        Value::Null => "NULL".to_owned(),
        Value::String(s) => s.clone(),
        other => match other.to_canonical_json() {
            serde_json::Value::String(s) => s,
            json => json.to_string(),
        },
    };
    match text.char_indices().nth(PREVIEW_CELL_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// Column headings as `name TYPE`.
pub(super) fn column_headings(columns: &[Field]) -> Vec<String> {
    columns
        .iter()
        .map(|field| format!("{} {}", field.name, field.ty))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_show_strings_plainly_and_cut_long_text() {
        assert_eq!(cell_text(&Value::Null), "NULL");
        assert_eq!(cell_text(&Value::String("a b".into())), "a b");
        assert_eq!(cell_text(&Value::Int64(42)), "42");
        assert_eq!(cell_text(&Value::Bool(true)), "true");
        let long = cell_text(&Value::String("é".repeat(500)));
        assert_eq!(long.chars().count(), PREVIEW_CELL_CHARS + 1);
        assert!(long.ends_with('…'));
    }

    #[test]
    fn preview_keeps_at_most_its_limit() {
        let mut preview = Preview::new(3);
        let batch: Vec<Row> = (0..2).map(|i| Row(vec![Value::Int64(i)])).collect();
        preview.keep(RowsView::Owned(&batch));
        preview.keep(RowsView::Owned(&batch));
        let text = preview.into_text();
        assert_eq!(text, vec![vec!["0"], vec!["1"], vec!["0"]]);
        let mut none = Preview::new(0);
        none.keep(RowsView::Owned(&batch));
        assert!(none.into_text().is_empty());
    }
}
