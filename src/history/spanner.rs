//! The team store: the same records in a table of a Spanner database the team already runs
//! (`--history spanner://projects/P/instances/I/databases/D`), created when missing, through
//! spanprof's own client (`client::admin`). It reaches the database through
//! `SPANNER_EMULATOR_HOST` (the emulator, or any plaintext endpoint). Ids are random, so writers
//! on many machines never collide nor write one hot key range. Old runs are dropped by the
//! table's row deletion policy (180 days after they were saved).

use std::time::Duration;

use tonic::transport::Channel;

use super::location::SpannerDatabase;
use super::record::{Filter, RunSummary, StoredRun, now_ms};
use super::{HistoryError, HistoryStore};
use crate::client::Param;
use crate::client::admin;
use crate::report::RunReport;
use crate::wire::{Timestamp, Value};

/// The table's name.
pub const TABLE: &str = "SpanprofRuns";

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
        let fail = |reason: String| HistoryError::Spanner {
            database: database.name(),
            reason,
        };
        let host = std::env::var("SPANNER_EMULATOR_HOST")
            .ok()
            .filter(|h| !h.is_empty())
            .ok_or_else(|| {
                fail("set SPANNER_EMULATOR_HOST to its endpoint (host:port); the store speaks plaintext gRPC".into())
            })?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("spanprof-history-spanner")
            .enable_all()
            .build()
            .map_err(|e| fail(e.to_string()))?;
        let channel = runtime.block_on(async {
            let channel = crate::client::connect_plaintext_answering_within(&host, CALL_LIMIT)
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
                &[ddl()],
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
        let id_param = Param {
            name: "id".into(),
            type_name: "STRING".into(),
            value: id.into(),
        };
        let rows = self.rows(
            &format!("SELECT Report FROM {TABLE} WHERE Id = @id"),
            &[id_param],
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
}

impl SpannerStore {
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
