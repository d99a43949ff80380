//! Running one query on its own named thread: SQLite steps the rows, each is converted to wire values
//! by its Spanner column type, and batches go to the stream over a bounded channel, so the server holds
//! a few batches at most however large the answer.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use prost::bytes::Bytes;
use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::{Connection, Statement};
use tokio::sync::mpsc;
use tonic::Status;

use super::db::Database;
use super::encoded::EncodedValues;
use super::scan::{self, Origin, ScanRows};
use super::sql_value::{encode_sql, type_of_sql};
use super::stream::{self, MessageBuilder, TokenStamp};
use crate::proto::google::spanner::v1 as pb;
use crate::wire::{Field, Type};

/// A query to run.
#[derive(Debug, Clone)]
pub struct QuerySpec {
    /// One SQL statement.
    pub sql: String,
    /// Named parameters (without the `@`), already converted to SQLite values.
    pub params: HashMap<String, SqlValue>,
    /// False in PLAN mode: prepare and explain, return no rows.
    pub execute: bool,
    /// Whether to explain the query plan.
    pub explain: bool,
    /// Whether a plain scan of Seed23 streams the row cache's wire form (`scan.rs`); false sends every
    /// value through SQLite, which tests compare it with.
    pub plain_scans: bool,
    /// How the rows are handed over.
    pub output: Output,
}

/// How the query thread hands its rows over.
#[derive(Debug, Clone, Default)]
pub enum Output {
    /// Batches of encoded values ([`QueryEvent::Rows`]), for a caller that builds a ResultSet.
    #[default]
    Values,
    /// Finished PartialResultSets ([`QueryEvent::Messages`]), cut on this thread by a builder made
    /// from the columns, this transaction and this token stamp, so that the stream task only sends
    /// them. The builder is handed back ([`QueryEvent::Built`]) before [`QueryEvent::Done`], for the
    /// stream to close with the statistics.
    Messages {
        /// The transaction the metadata names.
        transaction: Option<pb::Transaction>,
        /// What every resume token carries.
        stamp: TokenStamp,
    },
}

/// What the query thread reports, in this order: columns, rows in batches, totals.
#[derive(Debug)]
pub enum QueryEvent {
    /// The result's columns.
    Columns(Vec<Field>),
    /// The values of whole rows, row after row, each encoded as a `google.protobuf.Value`
    /// ([`Output::Values`]).
    Rows(EncodedValues),
    /// Finished PartialResultSets, in order ([`Output::Messages`]).
    Messages(Vec<Bytes>),
    /// The message builder, holding the last message, once every row is in ([`Output::Messages`]).
    Built(Box<MessageBuilder>),
    /// The query finished.
    Done(QueryTotals),
}

/// Figures about a finished query.
#[derive(Debug, Clone, Default)]
pub struct QueryTotals {
    /// Rows returned.
    pub rows: u64,
    /// Rows the scans read (Seed23 rows generated plus SQLite's full-scan steps).
    pub rows_scanned: u64,
    /// CPU time of the query thread.
    pub cpu_time: Duration,
    /// Time to prepare (parse and plan) the statement.
    pub plan_time: Duration,
    /// `EXPLAIN QUERY PLAN` steps, when asked for.
    pub plan: Option<Vec<PlanStep>>,
    /// Whether the rows came from a plain scan's cached wire form (`scan.rs`).
    pub plain_scan: bool,
}

/// One line of SQLite's `EXPLAIN QUERY PLAN`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanStep {
    /// Its id.
    pub id: i64,
    /// Its parent's id (0 at the top).
    pub parent: i64,
    /// SQLite's description ("SCAN Seed23 VIRTUAL TABLE INDEX 0:").
    pub detail: String,
}

type Events = mpsc::Sender<Result<QueryEvent, Status>>;

/// Rows per batch sent to the stream.
const BATCH_ROWS: usize = 128;
/// Rows looked at to type result columns that are expressions.
const TYPE_LOOKAHEAD_ROWS: usize = 128;

/// Starts the query on a new thread; events arrive on `events`. The thread stops early when the
/// receiving side is dropped (the client went away).
pub fn spawn(db: Arc<Database>, spec: QuerySpec, events: Events) -> std::io::Result<()> {
    static QUERIES: AtomicU64 = AtomicU64::new(0);
    let n = QUERIES.fetch_add(1, Ordering::Relaxed);
    std::thread::Builder::new()
        .name(format!("spanprof-query-{n}"))
        .spawn(move || {
            if let Err(status) = run(&db, &spec, &events) {
                // The receiver may be gone; then nobody needs the error.
                let _ = events.blocking_send(Err(status));
            }
        })
        .map(drop)
}

/// The receiver went away: stop quietly.
struct Gone;

fn run(db: &Database, spec: &QuerySpec, events: &Events) -> Result<(), Status> {
    let cpu_start = cpu_time::ThreadTime::try_now().ok();
    let scanned = Arc::new(AtomicU64::new(0));
    let plain_rows = Arc::new(ScanRows::default());
    let conn = db
        .connect(Arc::clone(&scanned), Arc::clone(&plain_rows))
        .map_err(|e| Status::internal(format!("cannot open the local database: {e}")))?;
    let prepare_start = Instant::now();
    let mut stmt = conn.prepare(&spec.sql).map_err(sql_error)?;
    let plan_time = prepare_start.elapsed();
    if !stmt.readonly() {
        return Err(Status::failed_precondition(
            "the built-in local instance serves read-only queries: DML and DDL are not supported",
        ));
    }
    bind(&mut stmt, &spec.params)?;
    let plan = if spec.explain {
        Some(explain(&conn, &spec.sql)?)
    } else {
        None
    };
    let mut totals = QueryTotals {
        plan_time,
        plan,
        ..QueryTotals::default()
    };
    let origins = origins(&stmt);
    let declared = declared_types(db, &origins);
    let names: Vec<String> = stmt.column_names().map(str::to_owned).collect();
    let fullscan_before = stmt.get_status(rusqlite::StatementStatus::FullscanStep);
    // A plain scan takes its types from Seed23's columns, so it never holds rows back to type them.
    let plain = if spec.execute && spec.plain_scans && declared.iter().all(Option::is_some) {
        scan::plain_scan(&conn, &spec.sql, &origins).map(|columns| (columns, &*plain_rows))
    } else {
        None
    };
    if spec.execute {
        match stream_rows(
            &mut stmt,
            names,
            declared,
            plain,
            &spec.output,
            events,
            &mut totals,
        ) {
            Ok(()) => {}
            Err(RowsError::Gone(Gone)) => return Ok(()),
            Err(RowsError::Status(status)) => return Err(status),
        }
    } else {
        let columns = columns(
            names,
            declared.into_iter().map(|t| t.unwrap_or(Type::String)),
        );
        let gone = |_| Status::cancelled("gone");
        let sink = Sink::new(events, &spec.output, &columns);
        send(events, QueryEvent::Columns(columns)).map_err(gone)?;
        sink.finish().map_err(gone)?;
    }
    let fullscan = stmt.get_status(rusqlite::StatementStatus::FullscanStep) - fullscan_before;
    totals.rows_scanned = scanned.load(Ordering::Relaxed) + fullscan.max(0) as u64;
    totals.cpu_time = cpu_start.map(|t| t.elapsed()).unwrap_or_default();
    // A failed send means the client is gone; there is no one left to tell.
    let _ = send(events, QueryEvent::Done(totals));
    Ok(())
}

enum RowsError {
    Gone(Gone),
    Status(Status),
}

impl From<Status> for RowsError {
    fn from(s: Status) -> Self {
        RowsError::Status(s)
    }
}

impl From<Gone> for RowsError {
    fn from(g: Gone) -> Self {
        RowsError::Gone(g)
    }
}

/// A plain scan's Seed23 column for each result column, and where its cursor publishes its rows.
type Plain<'a> = (Vec<usize>, &'a ScanRows);

/// Steps the statement: types the expression columns from the first rows, announces the columns, then
/// sends the rows in batches (from the row cache's wire form, for a plain scan).
fn stream_rows(
    stmt: &mut Statement<'_>,
    names: Vec<String>,
    declared: Vec<Option<Type>>,
    plain: Option<Plain<'_>>,
    output: &Output,
    events: &Events,
    totals: &mut QueryTotals,
) -> Result<(), RowsError> {
    let width = names.len();
    let mut rows = stmt.raw_query();
    // Hold the first rows until every column has a type.
    let mut inferred = declared;
    let mut held: Vec<Vec<SqlValue>> = Vec::new();
    let mut exhausted = false;
    while inferred.iter().any(Option::is_none) && held.len() < TYPE_LOOKAHEAD_ROWS {
        let Some(row) = rows.next().map_err(sql_error)? else {
            exhausted = true;
            break;
        };
        let values: Vec<SqlValue> = (0..width)
            .map(|i| row.get::<_, SqlValue>(i))
            .collect::<Result<_, _>>()
            .map_err(sql_error)?;
        for (ty, v) in inferred.iter_mut().zip(&values) {
            if ty.is_none() {
                *ty = type_of_sql(ValueRef::from(v));
            }
        }
        held.push(values);
    }
    let columns = columns(
        names,
        inferred.into_iter().map(|t| t.unwrap_or(Type::Int64)),
    );
    let types: Vec<Type> = columns.iter().map(|c| c.ty.clone()).collect();
    let names: Vec<String> = columns.iter().map(|c| c.name.clone()).collect();
    let mut sink = Sink::new(events, output, &columns);
    send(events, QueryEvent::Columns(columns))?;

    if let Some((projection, scan_rows)) = plain {
        // A plain scan declares every column, so no row was held to type one.
        let _mode = scan_rows.start();
        totals.plain_scan = true;
        while let Some(_row) = rows.next().map_err(sql_error)? {
            let row = scan_rows
                .take()
                .ok_or_else(|| Status::internal("the plain scan lost track of its row"))?;
            for &column in &projection {
                let body = row
                    .encoded(column)
                    .map_err(|e| Status::internal(format!("Seed23 column {column}: {e}")))?;
                sink.push_encoded(body);
            }
            sink.end_row()?;
            totals.rows += 1;
        }
        return Ok(sink.finish()?);
    }
    for values in &held {
        let refs = values.iter().map(|v| Ok(ValueRef::from(v)));
        push_row(&types, &names, refs, &mut sink)?;
        sink.end_row()?;
        totals.rows += 1;
    }
    drop(held);
    while !exhausted {
        let Some(row) = rows.next().map_err(sql_error)? else {
            exhausted = true;
            continue;
        };
        push_row(
            &types,
            &names,
            (0..width).map(|i| row.get_ref(i)),
            &mut sink,
        )?;
        sink.end_row()?;
        totals.rows += 1;
    }
    Ok(sink.finish()?)
}

/// Where the rows go: batches of values sent `BATCH_ROWS` rows at a time, or messages sent as soon
/// as the builder has finished one.
enum Sink<'a> {
    Values {
        events: &'a Events,
        width: usize,
        batch: EncodedValues,
        rows: usize,
    },
    Messages {
        events: &'a Events,
        builder: MessageBuilder,
        /// Where a value is encoded before the builder copies it in.
        scratch: Vec<u8>,
    },
}

impl<'a> Sink<'a> {
    fn new(events: &'a Events, output: &Output, columns: &[Field]) -> Self {
        match output {
            Output::Values => Sink::Values {
                events,
                width: columns.len(),
                batch: Self::empty(columns.len()),
                rows: 0,
            },
            Output::Messages { transaction, stamp } => Sink::Messages {
                events,
                builder: builder(columns, transaction, *stamp),
                scratch: Vec::new(),
            },
        }
    }

    fn empty(width: usize) -> EncodedValues {
        EncodedValues::with_capacity(BATCH_ROWS * width, BATCH_ROWS * 1024)
    }

    /// Appends a value already encoded (the body of a `google.protobuf.Value`).
    fn push_encoded(&mut self, body: &[u8]) {
        match self {
            Sink::Values { batch, .. } => batch.push_encoded(body),
            Sink::Messages { builder, .. } => builder.push_encoded(body),
        }
    }

    /// Appends a value `encode` writes.
    fn push_with<E>(
        &mut self,
        encode: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
    ) -> Result<(), E> {
        match self {
            Sink::Values { batch, .. } => batch.push_with(encode),
            Sink::Messages {
                builder, scratch, ..
            } => {
                scratch.clear();
                encode(scratch)?;
                builder.push_encoded(scratch);
                Ok(())
            }
        }
    }

    /// A row is complete: sends a full batch, or the messages it finished.
    fn end_row(&mut self) -> Result<(), Gone> {
        match self {
            Sink::Values {
                events,
                width,
                batch,
                rows,
            } => {
                *rows += 1;
                if *rows >= BATCH_ROWS {
                    let full = std::mem::replace(batch, Self::empty(*width));
                    send(events, QueryEvent::Rows(full))?;
                    *rows = 0;
                }
                Ok(())
            }
            Sink::Messages {
                events, builder, ..
            } => send_ready(events, builder),
        }
    }

    /// Sends what is left: the last values, or the finished messages and then the builder.
    fn finish(self) -> Result<(), Gone> {
        match self {
            Sink::Values { events, batch, .. } if !batch.is_empty() => {
                send(events, QueryEvent::Rows(batch))
            }
            Sink::Values { .. } => Ok(()),
            Sink::Messages {
                events,
                mut builder,
                ..
            } => {
                send_ready(events, &mut builder)?;
                send(events, QueryEvent::Built(Box::new(builder)))
            }
        }
    }
}

/// The builder of a stream of `columns` read in `transaction`.
fn builder(
    columns: &[Field],
    transaction: &Option<pb::Transaction>,
    stamp: TokenStamp,
) -> MessageBuilder {
    MessageBuilder::new(stream::metadata(columns, transaction.clone()), stamp)
}

/// Sends the messages `builder` has finished, if any.
fn send_ready(events: &Events, builder: &mut MessageBuilder) -> Result<(), Gone> {
    let ready: Vec<Bytes> = std::iter::from_fn(|| builder.pop()).collect();
    if ready.is_empty() {
        return Ok(());
    }
    send(events, QueryEvent::Messages(ready))
}

/// Encodes one row's values in wire form by their column types, appending them to `sink`.
fn push_row<'a>(
    types: &[Type],
    names: &[String],
    values: impl Iterator<Item = rusqlite::Result<ValueRef<'a>>>,
    sink: &mut Sink<'_>,
) -> Result<(), Status> {
    for ((ty, name), value) in types.iter().zip(names).zip(values) {
        let value = value.map_err(sql_error)?;
        sink.push_with(|out| encode_sql(ty, value, out))
            .map_err(|e| Status::internal(format!("column {name}: {e}")))?;
    }
    Ok(())
}

fn send(events: &Events, event: QueryEvent) -> Result<(), Gone> {
    events.blocking_send(Ok(event)).map_err(|_| Gone)
}

fn columns(names: Vec<String>, types: impl Iterator<Item = Type>) -> Vec<Field> {
    names
        .into_iter()
        .zip(types)
        .map(|(name, ty)| Field { name, ty })
        .collect()
}

/// The table and column each result column comes straight from, if it does.
fn origins(stmt: &Statement<'_>) -> Vec<Origin> {
    stmt.columns_with_metadata()
        .map(|c| Some((c.table_name()?.to_owned(), c.origin_name()?.to_owned())))
        .collect()
}

/// The Spanner type of each result column that comes straight from a demo table's column.
fn declared_types(db: &Database, origins: &[Origin]) -> Vec<Option<Type>> {
    origins
        .iter()
        .map(|origin| {
            let (table, column) = origin.as_ref()?;
            db.column_type(table, column).cloned()
        })
        .collect()
}

/// Binds `@name` parameters; a parameter in the SQL without a value is an error, as in Spanner.
fn bind(stmt: &mut Statement<'_>, params: &HashMap<String, SqlValue>) -> Result<(), Status> {
    for i in 1..=stmt.parameter_count() {
        let name = stmt.parameter_name(i).map(str::to_owned);
        let Some(name) = name.as_deref().and_then(|n| n.strip_prefix('@')) else {
            return Err(Status::invalid_argument(format!(
                "query parameter {i} is not named: use @name parameters"
            )));
        };
        let value = params.get(name).ok_or_else(|| {
            Status::invalid_argument(format!("No parameter found for binding: {name}"))
        })?;
        stmt.raw_bind_parameter(i, value).map_err(sql_error)?;
    }
    Ok(())
}

fn explain(conn: &Connection, sql: &str) -> Result<Vec<PlanStep>, Status> {
    let mut stmt = conn
        .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
        .map_err(sql_error)?;
    let steps = stmt
        .query_map([], |row| {
            Ok(PlanStep {
                id: row.get(0)?,
                parent: row.get(1)?,
                detail: row.get(3)?,
            })
        })
        .and_then(|rows| rows.collect::<Result<Vec<_>, _>>());
    // Unbound parameters make EXPLAIN fail in a few cases; the plan is then simply missing a step list.
    Ok(steps.unwrap_or_default())
}

/// An SQLite error as Spanner would report it: INVALID_ARGUMENT with the engine's message, and the
/// table named when it is unknown.
pub fn sql_error(e: rusqlite::Error) -> Status {
    let message = match &e {
        rusqlite::Error::SqliteFailure(_, Some(m)) => m.clone(),
        other => other.to_string(),
    };
    if let Some(table) = message.strip_prefix("no such table: ") {
        return Status::invalid_argument(format!("Table not found: {table} ({message})"));
    }
    if let Some(column) = message.strip_prefix("no such column: ") {
        return Status::invalid_argument(format!("Unrecognized name: {column} ({message})"));
    }
    if message.contains("syntax error") {
        return Status::invalid_argument(format!("Syntax error: {message}"));
    }
    if matches!(e, rusqlite::Error::MultipleStatement) {
        return Status::invalid_argument("only one SQL statement may be executed at a time");
    }
    Status::invalid_argument(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A query's columns, every value's bytes, and its totals.
    type Answer = (Vec<Field>, Vec<Vec<u8>>, QueryTotals);

    /// Runs `sql` on the query thread, plain scans allowed or not.
    fn run_query(db: &Arc<Database>, sql: &str, plain_scans: bool) -> Result<Answer, Status> {
        let (tx, mut rx) = mpsc::channel(4);
        let spec = QuerySpec {
            sql: sql.into(),
            params: HashMap::from([("n".to_owned(), SqlValue::Integer(7))]),
            execute: true,
            explain: false,
            plain_scans,
            output: Output::Values,
        };
        spawn(Arc::clone(db), spec, tx).expect("spawns");
        let (mut columns, mut values) = (Vec::new(), Vec::new());
        while let Some(event) = rx.blocking_recv() {
            match event? {
                QueryEvent::Columns(c) => columns = c,
                QueryEvent::Rows(batch) => values.extend(batch.iter().map(<[u8]>::to_vec)),
                QueryEvent::Done(totals) => return Ok((columns, values, totals)),
                QueryEvent::Messages(_) | QueryEvent::Built(_) => panic!("values were asked for"),
            }
        }
        panic!("the query thread stopped without Done");
    }

    #[test]
    fn plain_scans_stream_the_same_bytes_as_the_general_path() {
        // More rows than batches hold, with NULLs, empty arrays and every column type.
        let db = Arc::new(Database::open(700).expect("opens"));
        for sql in [
            "SELECT * FROM Seed23",
            "SELECT * FROM Seed23 LIMIT 300",
            "SELECT Notes, Id, Avatar, Tags, Attrs FROM Seed23 LIMIT @n OFFSET 650",
            "SELECT Balance, CreatedAt, BirthDate, Active, Score FROM Seed23 ORDER BY Id",
            "SELECT Id, Id AS Again FROM Seed23 LIMIT 0",
        ] {
            // Twice: the first plain scan encodes the cells, the second reads them back.
            for pass in 0..2 {
                let (columns, general, totals) = run_query(&db, sql, false).expect("runs");
                assert!(!totals.plain_scan);
                let (plain_columns, plain, plain_totals) = run_query(&db, sql, true).expect("runs");
                assert!(plain_totals.plain_scan, "{sql}: a plain scan");
                assert_eq!(plain_columns, columns, "{sql}");
                assert_eq!(plain.len(), general.len(), "{sql}, pass {pass}");
                assert!(plain == general, "{sql}, pass {pass}: the values differ");
                assert_eq!(plain_totals.rows, totals.rows, "{sql}");
                assert_eq!(plain_totals.rows_scanned, totals.rows_scanned, "{sql}");
            }
        }
        let (_, values, totals) =
            run_query(&db, "SELECT * FROM Seed23 LIMIT 300", true).expect("runs");
        assert_eq!((totals.rows, values.len()), (300, 300 * 23));
    }

    #[test]
    fn messages_cut_on_the_query_thread_hold_the_same_rows() {
        use crate::wire::{Row, StreamDecoder, decode_value};
        let db = Arc::new(Database::open(400).expect("opens"));
        for sql in [
            "SELECT * FROM Seed23 LIMIT 300",
            "SELECT Id, upper(Name) FROM Seed23",
        ] {
            let (columns, bodies, _) = run_query(&db, sql, true).expect("runs");
            let want: Vec<Row> = bodies
                .chunks(columns.len())
                .map(|row| {
                    let values = row.iter().zip(&columns).map(|(body, column)| {
                        let wire = <prost_types::Value as prost::Message>::decode(&body[..])
                            .expect("a value");
                        decode_value(&column.ty, wire).expect("typed")
                    });
                    Row(values.collect())
                })
                .collect();

            let (tx, mut rx) = mpsc::channel(4);
            let stamp = TokenStamp {
                max_bytes: 4096,
                fingerprint: 7,
                stream: 1,
            };
            let spec = QuerySpec {
                sql: sql.into(),
                params: HashMap::new(),
                execute: true,
                explain: false,
                plain_scans: true,
                output: Output::Messages {
                    transaction: None,
                    stamp,
                },
            };
            spawn(Arc::clone(&db), spec, tx).expect("spawns");
            let (mut messages, mut builder) = (Vec::new(), None);
            while let Some(event) = rx.blocking_recv() {
                match event.expect("no error") {
                    QueryEvent::Messages(m) => messages.extend(m),
                    QueryEvent::Built(b) => builder = Some(b),
                    QueryEvent::Done(_) => break,
                    QueryEvent::Columns(_) => {}
                    QueryEvent::Rows(_) => panic!("messages were asked for"),
                }
            }
            let builder = builder.expect("the builder comes back before Done");
            messages.extend(builder.finish(None));
            assert!(messages.len() >= 3, "{sql}: cut at 4 KiB");
            let mut decoder = StreamDecoder::new();
            let mut got = Vec::new();
            for message in &messages {
                assert!(
                    message.len() <= 4096,
                    "{sql}: a message of {}",
                    message.len()
                );
                decoder.feed_bytes(message, &mut got).expect("decodes");
            }
            decoder.finish().expect("ends cleanly");
            assert!(decoder.stream().saw_last());
            assert_eq!(got, want, "{sql}");
        }
    }

    #[test]
    fn a_query_that_computes_is_not_a_plain_scan_and_still_answers() {
        let db = Arc::new(Database::open(100).expect("opens"));
        let (_, values, totals) =
            run_query(&db, "SELECT Id FROM Seed23 WHERE Id > 90", true).expect("runs");
        assert!(!totals.plain_scan);
        assert_eq!(values.len(), 10);
        let error = run_query(&db, "SELECT * FROM Seed24", true).expect_err("no such table");
        assert!(error.message().contains("Table not found"), "{error:?}");
    }
}
