//! The team store: the same records in a table of a Spanner database the team already runs
//! (`--history spanner://projects/P/instances/I/databases/D`), created when missing, through
//! spanprof's own client (`client::admin`). It reaches the database through
//! `SPANNER_EMULATOR_HOST` (the emulator, or any plaintext endpoint). Ids are random, so writers
//! on many machines never collide nor write one hot key range. Old runs are dropped by the
//! table's row deletion policy (180 days after they were saved; pins, kept in a table of their
//! own, do not hold a run past it).

use std::time::Duration;

use tonic::transport::Channel;

use super::location::SpannerDatabase;
use super::record::{Filter, RunSummary, StoredRun, now_ms};
use super::trend::{QuerySummary, TrendPoint};
use super::{HistoryError, HistoryStore};
use crate::client::Param;
use crate::client::admin;
use crate::report::RunReport;
use crate::wire::{Timestamp, Value};

/// The table's name.
pub const TABLE: &str = "SpanprofRuns";

/// The table of pinned runs' ids (a table of its own, so a team table made before pins needs
/// no change: the missing table is created).
pub const PINS: &str = "SpanprofPins";

/// How long a call may wait for its answer.
const CALL_LIMIT: Duration = Duration::from_secs(30);

/// The columns a listing reads, in [`summary`]'s order.
const LISTED: &str =
    "Id, StartedAt, Label, Target, Fingerprint, Iterations, MedianTotalMs, P90TotalMs, Sql";

/// The table, as created when missing.
fn ddl() -> String {
    format!(
        "CREATE TABLE {TABLE} (
            Id STRING(32) NOT NULL,
            StartedAt STRING(64) NOT NULL,
            StartedMs INT64 NOT NULL,
            SavedAt TIMESTAMP NOT NULL,
            Label STRING(MAX) NOT NULL,
            Target STRING(MAX) NOT NULL,
            Fingerprint STRING(32) NOT NULL,
            Sql STRING(MAX) NOT NULL,
            Iterations INT64 NOT NULL,
            MedianTotalMs FLOAT64,
            P90TotalMs FLOAT64,
            Report STRING(MAX) NOT NULL
        ) PRIMARY KEY (Id),
        ROW DELETION POLICY (OLDER_THAN(SavedAt, INTERVAL 180 DAY))"
    )
}

/// The pins' table, as created when missing.
fn pins_ddl() -> String {
    format!("CREATE TABLE {PINS} (Id STRING(32) NOT NULL) PRIMARY KEY (Id)")
}

/// A history in a Spanner table.
pub struct SpannerStore {
    database: SpannerDatabase,
    runtime: tokio::runtime::Runtime,
    channel: Channel,
}

impl SpannerStore {
    /// Connects through `SPANNER_EMULATOR_HOST` and makes sure the instance, database and table
    /// exist.
    pub fn open(database: &SpannerDatabase) -> Result<SpannerStore, HistoryError> {
        let host = std::env::var("SPANNER_EMULATOR_HOST")
            .ok()
            .filter(|h| !h.is_empty())
            .ok_or_else(|| HistoryError::Spanner {
                database: database.name(),
                reason: "set SPANNER_EMULATOR_HOST to its endpoint (host:port); the store speaks plaintext gRPC".into(),
            })?;
        SpannerStore::open_at(&host, database)
    }

    /// Like [`SpannerStore::open`], through the endpoint `host` (host:port).
    pub fn open_at(host: &str, database: &SpannerDatabase) -> Result<SpannerStore, HistoryError> {
        let fail = |reason: String| HistoryError::Spanner {
            database: database.name(),
            reason,
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("spanprof-history-spanner")
            .enable_all()
            .build()
            .map_err(|e| fail(e.to_string()))?;
        let channel = runtime.block_on(async {
            let channel = crate::client::connect_plaintext_answering_within(host, CALL_LIMIT)
                .await
                .map_err(|e| fail(format!("cannot connect to {host}: {e}")))?;
            let d = database;
            admin::ensure_instance(channel.clone(), &d.project, &d.instance)
                .await
                .map_err(|e| fail(e.to_string()))?;
            admin::ensure_database(
                channel.clone(),
                &d.project,
                &d.instance,
                &d.database,
                &[ddl(), pins_ddl()],
            )
            .await
            .map_err(|e| fail(e.to_string()))?;
            Ok::<_, HistoryError>(channel)
        })?;
        Ok(SpannerStore {
            database: database.clone(),
            runtime,
            channel,
        })
    }

    fn fail(&self, e: admin::AdminError) -> HistoryError {
        HistoryError::Spanner {
            database: self.database.name(),
            reason: e.to_string(),
        }
    }

    fn rows(&self, sql: &str, params: &[Param]) -> Result<Vec<Vec<Option<String>>>, HistoryError> {
        let name = self.database.name();
        self.runtime
            .block_on(admin::text_rows(self.channel.clone(), &name, sql, params))
            .map_err(|e| self.fail(e))
    }
}

/// A random id: 16 hex digits.
fn new_id() -> Result<String, HistoryError> {
    use ring::rand::SecureRandom as _;
    let mut bytes = [0u8; 8];
    ring::rand::SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| HistoryError::Spanner {
            database: String::new(),
            reason: "no random bytes for an id".into(),
        })?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

impl HistoryStore for SpannerStore {
    fn save(&mut self, runs: &[StoredRun]) -> Result<Vec<String>, HistoryError> {
        let columns: Vec<String> = [
            "Id",
            "StartedAt",
            "StartedMs",
            "SavedAt",
            "Label",
            "Target",
            "Fingerprint",
            "Sql",
            "Iterations",
            "MedianTotalMs",
            "P90TotalMs",
            "Report",
        ]
        .map(String::from)
        .to_vec();
        let saved = now_ms();
        let saved_at = Timestamp::new(
            saved.div_euclid(1000),
            (saved.rem_euclid(1000) * 1_000_000) as u32,
        )
        .map_or(Value::Null, Value::Timestamp);
        let float = |x: Option<f64>| x.map_or(Value::Null, Value::Float64);
        let mut ids = Vec::with_capacity(runs.len());
        let mut rows = Vec::with_capacity(runs.len());
        for run in runs {
            let s = &run.summary;
            let id = new_id()?;
            rows.push(vec![
                Value::String(id.clone()),
                Value::String(s.started_at.clone()),
                Value::Int64(run.started_ms),
                saved_at.clone(),
                Value::String(s.label.clone()),
                Value::String(s.target.clone()),
                Value::String(s.fingerprint.clone()),
                Value::String(s.sql.clone()),
                Value::Int64(i64::from(s.iterations)),
                float(s.median_total_ms),
                float(s.p90_total_ms),
                Value::String(run.report_json.clone()),
            ]);
            ids.push(id);
        }
        let name = self.database.name();
        self.runtime
            .block_on(admin::insert_rows(
                self.channel.clone(),
                &name,
                TABLE,
                &columns,
                &rows,
            ))
            .map_err(|e| self.fail(e))?;
        Ok(ids)
    }

    fn list(&mut self, filter: &Filter) -> Result<Vec<RunSummary>, HistoryError> {
        let mut conditions = vec!["TRUE".to_owned()];
        let mut params = Vec::new();
        let mut param = |name: &str, type_name: &str, value: String, condition: &str| {
            params.push(Param {
                name: name.into(),
                type_name: type_name.into(),
                value,
            });
            conditions.push(condition.to_owned());
        };
        if let Some(f) = &filter.fingerprint {
            param("fp", "STRING", f.clone(), "Fingerprint = @fp");
        }
        if let Some(t) = &filter.target {
            param("target", "STRING", t.clone(), "Target = @target");
        }
        if let Some(since) = filter.since_ms {
            param("since", "INT64", since.to_string(), "StartedMs >= @since");
        }
        if let Some(text) = &filter.sql_contains {
            param(
                "sql",
                "STRING",
                text.clone(),
                "STRPOS(LOWER(Sql), LOWER(@sql)) > 0",
            );
        }
        let limit = filter
            .limit
            .map(|n| format!(" LIMIT {n}"))
            .unwrap_or_default();
        let sql = format!(
            "SELECT {LISTED} FROM {TABLE} WHERE {} ORDER BY StartedMs DESC, Id DESC{limit}",
            conditions.join(" AND ")
        );
        self.rows(&sql, &params)?
            .into_iter()
            .map(|row| summary(row).ok_or_else(|| self.fail_row()))
            .collect()
    }

    fn get(&mut self, id: &str) -> Result<Option<RunReport>, HistoryError> {
        let rows = self.rows(
            &format!("SELECT Report FROM {TABLE} WHERE Id = @id"),
            &[string_param("id", id)],
        )?;
        let Some(json) = rows
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next().flatten())
        else {
            return Ok(None);
        };
        serde_json::from_str(&json)
            .map(Some)
            .map_err(|e| HistoryError::BadRecord {
                id: id.to_owned(),
                reason: e.to_string(),
            })
    }

    fn queries(&mut self, search: &str, limit: usize) -> Result<Vec<QuerySummary>, HistoryError> {
        let search = search.trim();
        let (condition, params) = if search.is_empty() {
            ("TRUE", Vec::new())
        } else {
            (
                "Fingerprint IN (SELECT Fingerprint FROM SpanprofRuns
                  WHERE STRPOS(LOWER(Sql), LOWER(@text)) > 0
                     OR STRPOS(LOWER(Label), LOWER(@text)) > 0)",
                vec![string_param("text", search)],
            )
        };
        let sql = format!(
            "SELECT Fingerprint, ANY_VALUE(Sql), COUNT(*), MAX(StartedAt), MAX(StartedMs) AS Last
             FROM {TABLE} WHERE {condition}
             GROUP BY Fingerprint ORDER BY Last DESC LIMIT {limit}"
        );
        self.rows(&sql, &params)?
            .into_iter()
            .map(|row| {
                let mut cells = row.into_iter().map(Option::unwrap_or_default);
                let mut next = || cells.next().unwrap_or_default();
                let (fingerprint, sql) = (next(), next());
                let runs = next().parse().map_err(|_| self.fail_row())?;
                Ok(QuerySummary {
                    fingerprint,
                    sql,
                    runs,
                    last_started_at: next(),
                })
            })
            .collect()
    }

    fn trend(&mut self, fingerprint: &str, limit: usize) -> Result<Vec<TrendPoint>, HistoryError> {
        let listed: Vec<String> = LISTED.split(", ").map(|c| format!("r.{c}")).collect();
        let sql = format!(
            "SELECT {}, p.Id IS NOT NULL, r.Report
             FROM {TABLE} r LEFT JOIN {PINS} p ON p.Id = r.Id
             WHERE r.Fingerprint = @fp
             ORDER BY r.StartedMs DESC, r.Id DESC LIMIT {limit}",
            listed.join(", ")
        );
        let mut points = Vec::new();
        for mut row in self.rows(&sql, &[string_param("fp", fingerprint)])? {
            let json = row.pop().flatten().unwrap_or_default();
            let pinned = row.pop().flatten().is_some_and(|b| b == "true");
            let summary = summary(row).ok_or_else(|| self.fail_row())?;
            points.push(TrendPoint::from_stored(summary, pinned, &json));
        }
        points.reverse();
        Ok(points)
    }

    fn set_label(&mut self, id: &str, label: &str) -> Result<bool, HistoryError> {
        if !self.exists(id)? {
            return Ok(false);
        }
        let row = vec![Value::String(id.into()), Value::String(label.into())];
        let columns = ["Id".to_owned(), "Label".to_owned()];
        let name = self.database.name();
        self.runtime
            .block_on(admin::update_rows(
                self.channel.clone(),
                &name,
                TABLE,
                &columns,
                &[row],
            ))
            .map_err(|e| self.fail(e))?;
        Ok(true)
    }

    fn set_pinned(&mut self, id: &str, pinned: bool) -> Result<bool, HistoryError> {
        if !self.exists(id)? {
            return Ok(false);
        }
        if pinned {
            self.write(PINS, &["Id"], &[vec![Value::String(id.into())]])?;
        } else {
            self.remove(PINS, id)?;
        }
        Ok(true)
    }

    fn delete(&mut self, id: &str) -> Result<bool, HistoryError> {
        if !self.exists(id)? {
            return Ok(false);
        }
        self.remove(TABLE, id)?;
        self.remove(PINS, id)?;
        Ok(true)
    }
}

/// A STRING query parameter.
fn string_param(name: &str, value: &str) -> Param {
    Param {
        name: name.into(),
        type_name: "STRING".into(),
        value: value.into(),
    }
}

impl SpannerStore {
    /// Whether run `id` is stored.
    fn exists(&self, id: &str) -> Result<bool, HistoryError> {
        let rows = self.rows(
            &format!("SELECT Id FROM {TABLE} WHERE Id = @id"),
            &[string_param("id", id)],
        )?;
        Ok(!rows.is_empty())
    }

    /// Writes `rows` of `columns` into `table` (insert or update).
    fn write(
        &self,
        table: &str,
        columns: &[&str],
        rows: &[Vec<Value>],
    ) -> Result<(), HistoryError> {
        let columns: Vec<String> = columns.iter().map(|c| (*c).to_owned()).collect();
        let name = self.database.name();
        self.runtime
            .block_on(admin::insert_rows(
                self.channel.clone(),
                &name,
                table,
                &columns,
                rows,
            ))
            .map(|_| ())
            .map_err(|e| self.fail(e))
    }

    /// Deletes the row of `table` keyed `id`.
    fn remove(&self, table: &str, id: &str) -> Result<(), HistoryError> {
        let name = self.database.name();
        self.runtime
            .block_on(admin::delete_rows(
                self.channel.clone(),
                &name,
                table,
                &[id.to_owned()],
            ))
            .map_err(|e| self.fail(e))
    }

    fn fail_row(&self) -> HistoryError {
        HistoryError::Spanner {
            database: self.database.name(),
            reason: format!("a row of {TABLE} is not a run (a column missing or of another type)"),
        }
    }
}

/// A listing row (the columns of [`LISTED`]) as a summary.
fn summary(row: Vec<Option<String>>) -> Option<RunSummary> {
    let mut cells = row.into_iter();
    let mut next = || cells.next();
    let text = |c: Option<Option<String>>| c.flatten();
    let float = |c: Option<Option<String>>| -> Option<Option<f64>> {
        match c? {
            None => Some(None),
            Some(t) => t.parse().ok().map(Some),
        }
    };
    Some(RunSummary {
        id: text(next())?,
        started_at: text(next())?,
        label: text(next())?,
        target: text(next())?,
        fingerprint: text(next())?,
        iterations: text(next())?.parse().ok()?,
        median_total_ms: float(next())?,
        p90_total_ms: float(next())?,
        sql: text(next())?,
    })
}
