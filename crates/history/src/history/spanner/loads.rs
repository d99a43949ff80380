//! Load runs in the team store: the `SpanprofLoadRuns` table, ids `L` and 16 hex digits (random,
//! as the runs'), long reports in the same pieces table as the runs' (their ids never meet).

use super::table::LOADS;
use super::{SpannerStore, new_id, pieces, string_param};
use crate::history::HistoryError;
use crate::history::stored::{Filter, NotARun, check_size};
use crate::history::stored_load::{LOAD_ID_PREFIX, LoadSummary, StoredLoad};
use crate::load::LoadReport;
use crate::wire::Value;

/// The columns a listing reads, in [`load_summary`]'s order.
const LISTED: &str = "Id, StartedAt, Label, Target, Fingerprint, Model, Steps, Requests, Knee, Sql";

/// The columns a save writes, in order.
const WRITTEN: [&str; 13] = [
    "Id",
    "StartedAt",
    "StartedMs",
    "SavedAt",
    "Label",
    "Target",
    "Fingerprint",
    "Sql",
    "Model",
    "Steps",
    "Requests",
    "Knee",
    "Report",
];

impl SpannerStore {
    /// Saves `run` (its report in pieces when long); its id.
    pub(super) fn insert_load(&mut self, run: &StoredLoad) -> Result<String, HistoryError> {
        check_size(&run.summary.label, &run.report_json)?;
        let id = format!("{LOAD_ID_PREFIX}{}", new_id()?);
        let saved_at = super::saved_at_now();
        let report = if run.report_json.len() > pieces::WHOLE_BYTES {
            let n = self.save_pieces(&id, &run.report_json, &saved_at)?;
            pieces::marker(n)
        } else {
            run.report_json.clone()
        };
        let s = &run.summary;
        let row = vec![
            Value::String(id.clone()),
            Value::String(s.started_at.clone()),
            Value::Int64(run.started_ms),
            saved_at,
            Value::String(s.label.clone()),
            Value::String(s.target.clone()),
            Value::String(s.fingerprint.clone()),
            Value::String(s.sql.clone()),
            Value::String(s.model.clone()),
            Value::Int64(i64::from(s.steps)),
            Value::Int64(i64::try_from(s.requests).unwrap_or(i64::MAX)),
            s.knee.map_or(Value::Null, Value::Float64),
            Value::String(report),
        ];
        self.write(LOADS, &WRITTEN, &[row])?;
        Ok(id)
    }

    /// The load runs `filter` asks for, newest first; a bad row named and skipped.
    pub(super) fn load_listing(
        &mut self,
        filter: &Filter,
    ) -> Result<Vec<LoadSummary>, HistoryError> {
        let (conditions, params) = super::conditions(filter);
        let limit = filter
            .limit
            .map(|n| format!(" LIMIT {n}"))
            .unwrap_or_default();
        let sql = format!(
            "SELECT {LISTED} FROM {LOADS} WHERE {conditions} ORDER BY StartedMs DESC, Id DESC{limit}"
        );
        let mut loads = Vec::new();
        for row in self.rows(&sql, &params)? {
            match load_summary(row) {
                Ok(load) => loads.push(load),
                Err(bad) => self.notices.push(bad.notice(LOADS)),
            }
        }
        Ok(loads)
    }

    /// Load run `id`, whole; `None` when there is none.
    pub(super) fn load_report(&mut self, id: &str) -> Result<Option<LoadReport>, HistoryError> {
        let Some(json) = self.report_json(LOADS, id)? else {
            return Ok(None);
        };
        LoadReport::from_json(json.as_bytes())
            .map(Some)
            .map_err(|e| HistoryError::BadRecord {
                id: id.to_owned(),
                reason: e.to_string(),
            })
    }

    /// Deletes load run `id` and its report's pieces; whether there was one.
    pub(super) fn delete_load(&mut self, id: &str) -> Result<bool, HistoryError> {
        let found = self.rows(
            &format!("SELECT Id FROM {LOADS} WHERE Id = @id"),
            &[string_param("id", id)],
        )?;
        if found.is_empty() {
            return Ok(false);
        }
        self.remove(LOADS, id)?;
        self.remove_pieces(id)?;
        Ok(true)
    }
}

/// A listing row (the columns of [`LISTED`]) as a load run's line, or why it is not one.
fn load_summary(row: Vec<Option<String>>) -> Result<LoadSummary, NotARun> {
    let mut cells = row.into_iter();
    let id = cells.next().flatten().unwrap_or_else(|| "(no id)".into());
    let bad = |why: String| NotARun {
        id: id.clone(),
        why,
    };
    let mut cell = || cells.next().flatten();
    let text = |column: &str, value: Option<String>| {
        value.ok_or_else(|| bad(format!("{column} is missing")))
    };
    let started_at = text("StartedAt", cell())?;
    let label = text("Label", cell())?;
    let target = text("Target", cell())?;
    let fingerprint = text("Fingerprint", cell())?;
    let model = text("Model", cell())?;
    let steps = text("Steps", cell())?;
    let requests = text("Requests", cell())?;
    let knee = cell();
    let sql = text("Sql", cell())?;
    let steps = steps
        .parse::<u32>()
        .map_err(|_| bad(format!("Steps is {steps}, not a count of steps")))?;
    let requests = requests
        .parse::<u64>()
        .map_err(|_| bad(format!("Requests is {requests}, not a count")))?;
    let knee = match knee {
        None => None,
        Some(k) => match k.parse::<f64>() {
            Ok(x) if x.is_finite() && x > 0.0 => Some(x),
            _ => return Err(bad(format!("Knee is {k}, not a level"))),
        },
    };
    Ok(LoadSummary {
        id: id.clone(),
        started_at,
        label,
        target,
        fingerprint,
        model,
        steps,
        requests,
        knee,
        sql,
    })
}
