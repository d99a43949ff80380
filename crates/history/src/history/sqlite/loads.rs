//! Load runs in the SQLite file: the `load_runs` table (migration 3), ids shown as `L<n>`, kept
//! like the runs (no older than the retention's days, at most its count).

use rusqlite::params;

use super::SqliteStore;
use super::fallback::{self, Numbered};
use crate::history::HistoryError;
use crate::history::stored::{Filter, NotARun, check_size, now_ms};
use crate::history::stored_load::{LOAD_ID_PREFIX, LoadSummary, StoredLoad};
use crate::history::trend::like_pattern;
use crate::load::LoadReport;

/// The row number a load run's id (`L<n>`) names; `None` for any other id.
fn number(id: &str) -> Option<i64> {
    id.strip_prefix(LOAD_ID_PREFIX)?.parse().ok()
}

impl SqliteStore {
    /// Saves `run`, then drops the load runs past the retention. A table whose ids SQLite has
    /// spent (a row numbered `i64::MAX`) takes the lowest free id below it, with a notice.
    pub(super) fn insert_load(&mut self, run: &StoredLoad) -> Result<String, HistoryError> {
        check_size(&run.summary.label, &run.report_json)?;
        if self.read_only {
            return Err(HistoryError::ReadOnly {
                path: self.path.display().to_string(),
            });
        }
        match self.insert_load_as(run, None) {
            Err(e)
                if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull)
                    && fallback::ids_spent(&self.connection, Numbered::LoadRuns) =>
            {
                let free = fallback::free_ids(&self.connection, Numbered::LoadRuns, 1)
                    .map_err(|e| self.error(e))?;
                self.notices.push(format!(
                    "the history store {} has a load run numbered {LOAD_ID_PREFIX}{}, the last id \
                     SQLite gives: this run took a free id below it",
                    self.path.display(),
                    i64::MAX
                ));
                self.insert_load_as(run, free.first().copied())
                    .map_err(|e| self.error(e))
            }
            saved => saved.map_err(|e| self.error(e)),
        }
    }

    /// Inserts `run` in one transaction, under `id` or the one SQLite gives.
    fn insert_load_as(
        &mut self,
        run: &StoredLoad,
        id: Option<i64>,
    ) -> Result<String, rusqlite::Error> {
        let retention = self.retention;
        let saved = now_ms();
        let write = |c: &mut rusqlite::Connection| -> rusqlite::Result<i64> {
            let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let s = &run.summary;
            tx.execute(
                "INSERT INTO load_runs (id, started_at, started_ms, saved_ms, label, target,
                 fingerprint, sql, model, steps, requests, knee, report)
                 VALUES (?13, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                params![
                    s.started_at,
                    run.started_ms,
                    saved,
                    s.label,
                    s.target,
                    s.fingerprint,
                    s.sql,
                    s.model,
                    s.steps,
                    i64::try_from(s.requests).unwrap_or(i64::MAX),
                    s.knee,
                    run.report_json,
                    id,
                ],
            )?;
            let id = tx.last_insert_rowid();
            let cutoff = saved - (retention.max_age_days as i64).saturating_mul(86_400_000);
            tx.execute("DELETE FROM load_runs WHERE saved_ms < ?1", [cutoff])?;
            tx.execute(
                "DELETE FROM load_runs
                 WHERE id <= (SELECT id FROM load_runs ORDER BY id DESC LIMIT 1 OFFSET ?1)",
                [retention.max_runs as i64],
            )?;
            tx.commit()?;
            Ok(id)
        };
        let id = write(&mut self.connection)?;
        Ok(format!("{LOAD_ID_PREFIX}{id}"))
    }

    /// The load runs `filter` asks for, newest first; a row that is not one is named and skipped.
    pub(super) fn load_listing(
        &mut self,
        filter: &Filter,
    ) -> Result<Vec<LoadSummary>, HistoryError> {
        let limit = filter.limit.map_or(-1, |n| n.min(i64::MAX as usize) as i64);
        let sql_like = filter.sql_contains.as_deref().map(like_pattern);
        let mut statement = self
            .connection
            .prepare_cached(
                "SELECT id, started_at, label, target, fingerprint, model, steps, requests, knee,
                        sql
                 FROM load_runs
                 WHERE (?1 IS NULL OR fingerprint = ?1)
                   AND (?2 IS NULL OR target = ?2)
                   AND (?3 IS NULL OR started_ms >= ?3)
                   AND (?4 IS NULL OR sql LIKE ?4 ESCAPE '\\')
                 ORDER BY started_ms DESC, id DESC
                 LIMIT ?5",
            )
            .map_err(|e| self.error(e))?;
        let rows = statement
            .query_map(
                params![
                    filter.fingerprint,
                    filter.target,
                    filter.since_ms,
                    sql_like,
                    limit
                ],
                load_summary_of,
            )
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>());
        drop(statement);
        let rows = rows.map_err(|e| self.error(e))?;
        let store = self.described();
        let mut loads = Vec::with_capacity(rows.len());
        for row in rows {
            match row {
                Ok(load) => loads.push(load),
                Err(bad) => self.notices.push(bad.notice(&store)),
            }
        }
        Ok(loads)
    }

    /// Load run `id`, whole; `None` when there is none.
    pub(super) fn load_report(&mut self, id: &str) -> Result<Option<LoadReport>, HistoryError> {
        let Some(n) = number(id) else {
            return Ok(None);
        };
        let Some(json) = self.report_text("load_runs", n, id)? else {
            return Ok(None);
        };
        LoadReport::from_json(json.as_bytes())
            .map(Some)
            .map_err(|e| HistoryError::BadRecord {
                id: id.to_owned(),
                reason: e.to_string(),
            })
    }

    /// Deletes load run `id`; whether there was one.
    pub(super) fn delete_load(&mut self, id: &str) -> Result<bool, HistoryError> {
        let Some(n) = number(id) else {
            return Ok(false);
        };
        let deleted = self
            .connection
            .execute("DELETE FROM load_runs WHERE id = ?1", [n])
            .map_err(|e| self.error(e))?;
        Ok(deleted > 0)
    }
}

/// A load run's listing line from a row of `id, started_at, label, target, fingerprint, model,
/// steps, requests, knee, sql`; or why the row is not one.
fn load_summary_of(row: &rusqlite::Row<'_>) -> rusqlite::Result<Result<LoadSummary, NotARun>> {
    use rusqlite::types::ValueRef;
    let id = format!("{LOAD_ID_PREFIX}{}", row.get::<_, i64>(0)?);
    let fields = || -> Result<LoadSummary, String> {
        let text = |i: usize, name: &str| {
            row.get::<_, String>(i)
                .map_err(|_| format!("{name} is not text"))
        };
        let count = |i: usize, name: &str| match row.get_ref(i) {
            Ok(ValueRef::Integer(n)) if n >= 0 => Ok(n as u64),
            _ => Err(format!("{name} is not a count")),
        };
        let knee = match row.get_ref(8) {
            Ok(ValueRef::Null) => None,
            Ok(ValueRef::Real(x)) if x.is_finite() && x > 0.0 => Some(x),
            Ok(ValueRef::Integer(n)) if n > 0 => Some(n as f64),
            _ => return Err("knee is not a level".into()),
        };
        Ok(LoadSummary {
            id: id.clone(),
            started_at: text(1, "started_at")?,
            label: text(2, "label")?,
            target: text(3, "target")?,
            fingerprint: text(4, "fingerprint")?,
            model: text(5, "model")?,
            steps: u32::try_from(count(6, "steps")?).map_err(|_| "steps is too large")?,
            requests: count(7, "requests")?,
            knee,
            sql: text(9, "sql")?,
        })
    };
    Ok(fields().map_err(|why| NotARun {
        id: id.clone(),
        why,
    }))
}
