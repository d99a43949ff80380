//! The team store: the same records in a table of a Spanner database the team already runs
//! (`--history spanner://projects/P/instances/I/databases/D`), created when missing, through
//! spanprof's own client (`client::admin`). It reaches the database through
//! `SPANNER_EMULATOR_HOST` (the emulator, or any plaintext endpoint). Ids are random, so writers
//! on many machines never collide nor write one hot key range. Old runs are dropped by the
//! table's row deletion policy (180 days after they were saved; pins, kept in a table of their
//! own, do not hold a run past it).

mod loads;
mod pieces;
mod table;

use std::time::Duration;

use tonic::transport::Channel;

use super::location::SpannerDatabase;
use super::stored::{Filter, MAX_STORED_REPORT_BYTES, RunSummary, StoredRun, check_sizes, now_ms};
use super::trend::{QuerySummary, TrendPoint};
use super::{HistoryError, HistoryStore, LoadSummary, StoredLoad};
use crate::client::Param;
use crate::client::{admin, rows};
use crate::load::LoadReport;
use crate::report::RunReport;
use crate::wire::{Timestamp, Value};

use table::summary;
pub use table::{LISTED, PIECES, PINS, TABLE};

/// How long a call may wait for its answer.
const CALL_LIMIT: Duration = Duration::from_secs(30);

/// The most bytes of runs' rows written in one commit (a report kept whole is at most
/// [`pieces::WHOLE_BYTES`]; a commit of several is cut below a request's size).
const COMMIT_BYTES: usize = 6 << 20;

/// A history in a Spanner table.
pub struct SpannerStore {
    database: SpannerDatabase,
    runtime: tokio::runtime::Runtime,
    channel: Channel,
    notices: Vec<String>,
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
                &table::ddl(),
            )
            .await
            .map_err(|e| fail(e.to_string()))?;
            Ok::<_, HistoryError>(channel)
        })?;
        Ok(SpannerStore {
            database: database.clone(),
            runtime,
            channel,
            notices: Vec::new(),
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
            .block_on(rows::text_rows(self.channel.clone(), &name, sql, params))
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
        check_sizes(runs)?;
        let saved_at = saved_at_now();
        let mut ids = Vec::with_capacity(runs.len());
        let mut rows = Vec::with_capacity(runs.len());
        for run in runs {
            let id = new_id()?;
            let report = if run.report_json.len() > pieces::WHOLE_BYTES {
                let n = self.save_pieces(&id, &run.report_json, &saved_at)?;
                pieces::marker(n)
            } else {
                run.report_json.clone()
            };
            rows.push(run_row(&id, run, &saved_at, report));
            ids.push(id);
        }
        self.write_runs(rows)?;
        Ok(ids)
    }

    fn list(&mut self, filter: &Filter) -> Result<Vec<RunSummary>, HistoryError> {
        let (conditions, params) = conditions(filter);
        let limit = filter
            .limit
            .map(|n| format!(" LIMIT {n}"))
            .unwrap_or_default();
        let sql = format!(
            "SELECT {LISTED} FROM {TABLE} WHERE {conditions} ORDER BY StartedMs DESC, Id DESC{limit}"
        );
        let rows = self.rows(&sql, &params)?;
        Ok(self.runs_of(rows))
    }

    fn get(&mut self, id: &str) -> Result<Option<RunReport>, HistoryError> {
        let Some(json) = self.report_json(TABLE, id)? else {
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
        Ok(self
            .rows(&sql, &params)?
            .into_iter()
            .map(|row| {
                let mut cells = row.into_iter().map(Option::unwrap_or_default);
                let mut next = || cells.next().unwrap_or_default();
                let (fingerprint, sql) = (next(), next());
                // A count Spanner made: a number, whatever the rows hold.
                let runs = next().parse().unwrap_or(0);
                QuerySummary {
                    fingerprint,
                    sql,
                    runs,
                    last_started_at: next(),
                }
            })
            .collect())
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
            let summary = match summary(row) {
                Ok(summary) => summary,
                Err(bad) => {
                    self.notices.push(bad.notice(TABLE));
                    continue;
                }
            };
            let json = match pieces::pieces_of(&json) {
                Some(n) => self.read_pieces(&summary.id, n).unwrap_or_default(),
                None => json,
            };
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
            .block_on(rows::update_rows(
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
        if super::is_load_id(id) {
            return self.delete_load(id);
        }
        if !self.exists(id)? {
            return Ok(false);
        }
        self.remove(TABLE, id)?;
        self.remove(PINS, id)?;
        self.remove_pieces(id)?;
        Ok(true)
    }

    fn save_load(&mut self, run: &StoredLoad) -> Result<String, HistoryError> {
        self.insert_load(run)
    }

    fn list_loads(&mut self, filter: &Filter) -> Result<Vec<LoadSummary>, HistoryError> {
        self.load_listing(filter)
    }

    fn get_load(&mut self, id: &str) -> Result<Option<LoadReport>, HistoryError> {
        self.load_report(id)
    }

    fn take_notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }

    fn notice(&mut self, notice: String) {
        self.notices.push(notice);
    }
}

/// The `WHERE` conditions of a listing `filter` asks for, joined by `AND`, and their parameters.
fn conditions(filter: &Filter) -> (String, Vec<Param>) {
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
    (conditions.join(" AND "), params)
}

/// Now, as the `SavedAt` a row is written with.
fn saved_at_now() -> Value {
    let saved = now_ms();
    Timestamp::new(
        saved.div_euclid(1000),
        (saved.rem_euclid(1000) * 1_000_000) as u32,
    )
    .map_or(Value::Null, Value::Timestamp)
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
    /// The report of row `id` of `table`, joined from its pieces when it was cut into them; `None`
    /// when there is no such row.
    fn report_json(&self, table: &str, id: &str) -> Result<Option<String>, HistoryError> {
        let rows = self.rows(
            &format!("SELECT Report FROM {table} WHERE Id = @id"),
            &[string_param("id", id)],
        )?;
        let Some(cell) = rows
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next().flatten())
        else {
            return Ok(None);
        };
        Ok(Some(match pieces::pieces_of(&cell) {
            Some(n) => self.read_pieces(id, n)?,
            None => cell,
        }))
    }

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
            .block_on(rows::insert_rows(
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
            .block_on(rows::delete_rows(
                self.channel.clone(),
                &name,
                table,
                &[id.to_owned()],
            ))
            .map_err(|e| self.fail(e))
    }

    /// Writes `rows` (of [`table::WRITTEN`]) into the runs' table, as few commits as keep each
    /// within [`COMMIT_BYTES`].
    fn write_runs(&self, rows: Vec<Vec<Value>>) -> Result<(), HistoryError> {
        let mut batch = Vec::new();
        let mut bytes = 0;
        for row in rows {
            let size = row_bytes(&row);
            if !batch.is_empty() && bytes + size > COMMIT_BYTES {
                self.write(TABLE, &table::WRITTEN, &std::mem::take(&mut batch))?;
                bytes = 0;
            }
            batch.push(row);
            bytes += size;
        }
        if batch.is_empty() {
            return Ok(());
        }
        self.write(TABLE, &table::WRITTEN, &batch)
    }

    /// Writes `json` in pieces for run `id`, before the run's own row (so a run is never listed
    /// without its report); how many. What was written is deleted again if a piece fails.
    fn save_pieces(&self, id: &str, json: &str, saved_at: &Value) -> Result<usize, HistoryError> {
        let pieces = pieces::split(json);
        let per_commit = (COMMIT_BYTES / pieces::PIECE_BYTES).max(1);
        let mut written = Ok(());
        for (n, piece) in pieces.chunks(per_commit).enumerate() {
            let rows: Vec<Vec<Value>> = piece
                .iter()
                .enumerate()
                .map(|(i, text)| {
                    vec![
                        Value::String(id.to_owned()),
                        Value::Int64((n * per_commit + i) as i64),
                        saved_at.clone(),
                        Value::String((*text).to_owned()),
                    ]
                })
                .collect();
            written = self.write(PIECES, &["Id", "Part", "SavedAt", "Text"], &rows);
            if written.is_err() {
                break;
            }
        }
        if let Err(e) = written {
            let _ = self.remove_pieces(id);
            return Err(HistoryError::Spanner {
                database: self.database.name(),
                reason: format!(
                    "the report ({:.1} MiB) is too long for one cell and could not be saved in {} \
                     pieces: {e}",
                    json.len() as f64 / f64::from(1 << 20),
                    pieces.len()
                ),
            });
        }
        Ok(pieces.len())
    }

    /// Run `id`'s report from its `expected` pieces.
    fn read_pieces(&self, id: &str, expected: usize) -> Result<String, HistoryError> {
        let bad = |reason: String| HistoryError::BadRecord {
            id: id.to_owned(),
            reason,
        };
        let most = MAX_STORED_REPORT_BYTES.div_ceil(pieces::PIECE_BYTES as u64);
        if expected as u64 > most {
            return Err(bad(format!(
                "stored in {expected} pieces, more than a report of at most {} MiB takes",
                MAX_STORED_REPORT_BYTES >> 20
            )));
        }
        let rows = self.rows(
            &format!("SELECT Part, Text FROM {PIECES} WHERE Id = @id ORDER BY Part"),
            &[string_param("id", id)],
        )?;
        let numbered = rows
            .into_iter()
            .map(|row| {
                let mut cells = row.into_iter().flatten();
                let piece = cells.next().and_then(|p| p.parse().ok()).unwrap_or(-1);
                (piece, cells.next().unwrap_or_default())
            })
            .collect();
        pieces::join(numbered, expected).map_err(bad)
    }

    /// Deletes the pieces of run `id`'s report, if it has any.
    fn remove_pieces(&self, id: &str) -> Result<(), HistoryError> {
        let name = self.database.name();
        self.runtime
            .block_on(rows::delete_prefixed(
                self.channel.clone(),
                &name,
                PIECES,
                id,
            ))
            .map_err(|e| self.fail(e))
    }

    /// The runs of listing `rows`; a row that is not one is named in a notice and skipped.
    fn runs_of(&mut self, rows: Vec<Vec<Option<String>>>) -> Vec<RunSummary> {
        let mut runs = Vec::with_capacity(rows.len());
        for row in rows {
            match summary(row) {
                Ok(run) => runs.push(run),
                Err(bad) => self.notices.push(bad.notice(TABLE)),
            }
        }
        runs
    }
}

/// A run's row of [`table::WRITTEN`], its report cell `report` (the JSON, or a pieces marker).
fn run_row(id: &str, run: &StoredRun, saved_at: &Value, report: String) -> Vec<Value> {
    let s = &run.summary;
    let float = |x: Option<f64>| x.map_or(Value::Null, Value::Float64);
    vec![
        Value::String(id.to_owned()),
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
        Value::String(report),
    ]
}

/// About how many bytes a row takes in a commit.
fn row_bytes(row: &[Value]) -> usize {
    row.iter()
        .map(|v| match v {
            Value::String(s) => s.len() + 8,
            _ => 16,
        })
        .sum()
}
