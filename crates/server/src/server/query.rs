//! Running one query on its own named thread: SQLite steps the rows, each is converted to wire values
//! by its Spanner column type, and batches go to the stream over a bounded channel, so the server holds
//! a few batches at most however large the answer.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::{Connection, Statement};
use tonic::Status;

use super::control::{Interrupt, PROGRESS_OPS, Slot, Stop};
use super::result_stats::{Measured, ProgramTraits, QueryTotals, ScanTarget};
use super::sqlite::columns::{self, Column, Param, Pending};
use super::sqlite::db::{Database, KeyRange};
use super::sqlite::memory;
use super::sqlite::sandbox::{Sandbox, SqlLimits};
use super::sqlite::scan::{self, Origin, ScanRows};
use super::sqlite::scanstatus;
use super::sqlite::statement::{bind, explain, read_only, refused, sql_error};
use super::sqlite::sys_tables::{self, SysTables};
use super::stream::sink::{Events, Gone, Output, QueryEvent, Sink, send};
use crate::wire::{Field, Type};

/// A query to run.
#[derive(Debug, Clone)]
pub struct QuerySpec {
    /// One SQL statement.
    pub sql: String,
    /// Named parameters (without the `@`), already converted to SQLite values, with their types.
    pub params: HashMap<String, Param>,
    /// The bounds its SQLite connection runs under.
    pub limits: SqlLimits,
    /// False in PLAN mode: prepare and explain, return no rows.
    pub execute: bool,
    /// Whether to explain the query plan.
    pub explain: bool,
    /// PROFILE mode: measure the execution (SQLite's per-loop counters, time inside SQLite) for
    /// the plan's operator statistics. Off, the statement runs without any of that counting.
    pub profile: bool,
    /// Whether a plain scan of Seed23 streams the row cache's wire form (`scan.rs`); false sends every
    /// value through SQLite, which tests compare it with.
    pub plain_scans: bool,
    /// How the rows are handed over.
    pub output: Output,
    /// The key range of its table it reads, when it is one partition of a partitioned query.
    pub partition: Option<KeyRange>,
    /// SPANNER_SYS's statistics tables, when the SQL names SPANNER_SYS (`sys_tables.rs`).
    pub sys: Option<Arc<SysTables>>,
}

/// Rows looked at to type result columns that are expressions.
const TYPE_LOOKAHEAD_ROWS: usize = 128;

/// Starts the query on a new thread; events arrive on `events`. The thread stops early when the
/// receiving side is dropped or `interrupt` says so (client gone, deadline, shutdown); it holds
/// `slot`, its place among the queries running, until it ends.
pub fn spawn(
    db: Arc<Database>,
    spec: QuerySpec,
    events: Events,
    interrupt: Arc<Interrupt>,
    slot: Option<Slot>,
) -> std::io::Result<()> {
    static QUERIES: AtomicU64 = AtomicU64::new(0);
    let n = QUERIES.fetch_add(1, Ordering::Relaxed);
    std::thread::Builder::new()
        .name(format!("spanprof-query-{n}"))
        .spawn(move || {
            // What SQLite builds on this thread is held to the value cap while it grows.
            memory::bound_this_thread(Some(spec.limits.max_value_bytes));
            // A stream's budget keeps the place, to give it back while the client does not read.
            let budget = spec.output.budget().cloned();
            let _slot = match &budget {
                Some(budget) => {
                    budget.hold(slot, Arc::clone(&interrupt));
                    None
                }
                None => slot,
            };
            if let Err(status) = run(&db, &spec, &events, &interrupt) {
                // The receiver may be gone; then nobody needs the error.
                let _ = events.blocking_send(Err(status));
            }
            if let Some(budget) = budget {
                budget.end();
            }
        })
        .map(drop)
}

fn run(
    db: &Database,
    spec: &QuerySpec,
    events: &Events,
    interrupt: &Arc<Interrupt>,
) -> Result<(), Status> {
    let cpu_start = cpu_time::ThreadTime::try_now().ok();
    let scanned = Arc::new(AtomicU64::new(0));
    let plain_rows = Arc::new(ScanRows::default());
    let conn = open(db, spec, &scanned, &plain_rows, interrupt)?;
    let prepare_start = Instant::now();
    let (mut stmt, simple) = prepare(&conn, spec)?;
    // Only PROFILE steps with the counters on; the plan's element names were recorded while
    // preparing.
    let targets = if spec.explain {
        scan_targets(db, &conn.0, &spec.sql)
    } else {
        BTreeMap::new()
    };
    if spec.explain && !spec.profile {
        scanstatus::enable(&conn.0, false)
            .map_err(|e| Status::internal(format!("cannot set up the query's counters: {e}")))?;
    }
    let mut totals = QueryTotals {
        plan_time: prepare_start.elapsed(),
        plan: if spec.explain {
            Some(explain(&conn.0, &spec.sql)?)
        } else {
            None
        },
        program: if spec.explain {
            scan::program(&conn.0, &spec.sql)
                .map(|ops| ProgramTraits::of(&ops))
                .unwrap_or_default()
        } else {
            ProgramTraits::default()
        },
        targets,
        ..QueryTotals::default()
    };
    let origins = origins(&stmt);
    let declared = declared_types(db, &origins, spec.sys.is_some());
    let all_declared = declared.iter().all(Option::is_some);
    let names: Vec<String> = stmt.column_names().map(str::to_owned).collect();
    let parameters = parameter_columns(&conn.0, spec, &stmt, all_declared);
    let pending = columns::plan(names, declared, simple, &parameters);
    let fullscan_before = stmt.get_status(rusqlite::StatementStatus::FullscanStep);
    // A plain scan takes its types from Seed23's columns, so it never holds rows back to type them.
    let plain = if spec.execute && spec.plain_scans && all_declared {
        scan::plain_scan(&conn.0, &spec.sql, &origins).map(|columns| (columns, &*plain_rows))
    } else {
        None
    };
    if spec.execute {
        let failed = |e| step_failed(e, interrupt);
        let output = &spec.output;
        let started = Instant::now();
        let mut stepping = spec.profile.then_some(Duration::ZERO);
        match stream_rows(
            &mut stmt,
            pending,
            plain,
            (output, events),
            &mut totals,
            &mut stepping,
            failed,
        ) {
            Ok(()) => {}
            Err(RowsError::Gone(Gone)) => return Ok(()),
            Err(RowsError::Status(status)) => return Err(status),
        }
        if let Some(stepping) = stepping {
            totals.measured = Some(Measured {
                execution: started.elapsed(),
                stepping,
                scan: scanstatus::read(&conn.0, &spec.sql),
            });
        }
    } else if plan_only(pending, &spec.output, events).is_err() {
        return Ok(());
    }
    let fullscan = stmt.get_status(rusqlite::StatementStatus::FullscanStep) - fullscan_before;
    totals.rows_scanned = scanned.load(Ordering::Relaxed) + fullscan.max(0) as u64;
    totals.cpu_time = cpu_start.map(|t| t.elapsed()).unwrap_or_default();
    // A failed send means the client is gone; there is no one left to tell.
    let _ = send(events, QueryEvent::Done(totals));
    Ok(())
}

/// A query's connection, confined and watched (SQLite stops the statement when `interrupt` says),
/// with what its sandbox saw.
fn open(
    db: &Database,
    spec: &QuerySpec,
    scanned: &Arc<AtomicU64>,
    plain_rows: &Arc<ScanRows>,
    interrupt: &Arc<Interrupt>,
) -> Result<(Connection, Arc<Sandbox>), Status> {
    let (mut conn, sandbox) = db
        .connect_with(
            Arc::clone(scanned),
            Arc::clone(plain_rows),
            spec.limits,
            spec.partition.as_ref(),
            spec.sys.as_deref(),
        )
        .map_err(|e| Status::internal(format!("cannot open the local database: {e}")))?;
    // On while preparing when the plan is asked for (its elements then name their tables), and
    // while stepping in PROFILE mode only.
    scanstatus::enable(&conn, spec.explain || spec.profile)
        .map_err(|e| Status::internal(format!("cannot set up the query's counters: {e}")))?;
    let watch = Arc::clone(interrupt);
    conn.progress_handler(PROGRESS_OPS, Some(move || watch.check().is_some()))
        .map_err(|e| Status::internal(format!("cannot watch the query: {e}")))?;
    Ok((conn, sandbox))
}

/// The statement, prepared, checked read-only and bound; and whether it is one plain SELECT.
fn prepare<'c>(
    (conn, sandbox): &'c (Connection, Arc<Sandbox>),
    spec: &QuerySpec,
) -> Result<(Statement<'c>, bool), Status> {
    sandbox.reset();
    let mut stmt = conn.prepare(&spec.sql).map_err(|e| refused(e, sandbox))?;
    if !stmt.readonly() {
        return Err(read_only());
    }
    bind(&mut stmt, &spec.params)?;
    Ok((stmt, sandbox.selects() == 1))
}

/// PLAN mode: the columns (an expression column, which no row types, is reported as STRING) and the
/// last message, no rows.
fn plan_only(pending: Vec<Pending>, output: &Output, events: &Events) -> Result<(), Gone> {
    let columns: Vec<Field> = pending
        .into_iter()
        .map(|p| p.decide_or(Type::String).field)
        .collect();
    let sink = Sink::new(events, output, &columns);
    send(events, QueryEvent::Columns(columns))?;
    sink.finish()
}

/// The parameter each result column exactly is, read from the bytecode when some column is not a
/// table column and the statement has parameters (the only case where it can matter).
fn parameter_columns<'a>(
    conn: &Connection,
    spec: &'a QuerySpec,
    stmt: &Statement<'_>,
    all_declared: bool,
) -> Vec<Option<&'a Param>> {
    let width = stmt.column_count();
    let numbered = columns::by_number(stmt, &spec.params);
    if all_declared || numbered.is_empty() {
        return vec![None; width];
    }
    let Ok(ops) = scan::program(conn, &spec.sql) else {
        return vec![None; width];
    };
    columns::parameter_columns(&ops, width)
        .into_iter()
        .map(|n| n.and_then(|n| numbered.get(&n).copied()))
        .collect()
}

/// A failed step: the interrupt's reason when it stopped the statement, else SQLite's error.
fn step_failed(e: rusqlite::Error, interrupt: &Interrupt) -> RowsError {
    match interrupt.check() {
        Some(Stop::ClientGone) => RowsError::Gone(Gone),
        Some(stop) => RowsError::Status(stop.status()),
        None => RowsError::Status(sql_error(e)),
    }
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

/// The time spent inside SQLite's step, added up in PROFILE queries only: elsewhere it reads no
/// clock.
struct StepClock<'a>(&'a mut Option<Duration>);

impl StepClock<'_> {
    #[inline]
    fn start(&self) -> Option<Instant> {
        self.0.is_some().then(Instant::now)
    }

    #[inline]
    fn stop(&mut self, started: Option<Instant>) {
        if let (Some(spent), Some(started)) = (self.0.as_mut(), started) {
            *spent += started.elapsed();
        }
    }
}

/// Steps the statement: types the expression columns from the first rows, announces the columns, then
/// sends the rows in batches (from the row cache's wire form, for a plain scan). `failed` turns a
/// step's error into what to report; `stepping`, when present, adds up the time spent in SQLite.
fn stream_rows(
    stmt: &mut Statement<'_>,
    mut pending: Vec<Pending>,
    plain: Option<Plain<'_>>,
    (output, events): (&Output, &Events),
    totals: &mut QueryTotals,
    stepping: &mut Option<Duration>,
    failed: impl Fn(rusqlite::Error) -> RowsError,
) -> Result<(), RowsError> {
    let width = pending.len();
    let mut clock = StepClock(stepping);
    let mut rows = stmt.raw_query();
    // Hold the first rows until every column has a type.
    let mut held: Vec<Vec<SqlValue>> = Vec::new();
    let mut exhausted = false;
    while pending.iter().any(Pending::is_open) && held.len() < TYPE_LOOKAHEAD_ROWS {
        let t = clock.start();
        let next = rows.next();
        clock.stop(t);
        let Some(row) = next.map_err(&failed)? else {
            exhausted = true;
            break;
        };
        let values: Vec<SqlValue> = (0..width)
            .map(|i| row.get::<_, SqlValue>(i))
            .collect::<Result<_, _>>()
            .map_err(sql_error)?;
        for (column, v) in pending.iter_mut().zip(&values) {
            column.look_at(ValueRef::from(v));
        }
        held.push(values);
    }
    let columns: Vec<Column> = pending.into_iter().map(Pending::decide).collect();
    let fields: Vec<Field> = columns.iter().map(|c| c.field.clone()).collect();
    let mut sink = Sink::new(events, output, &fields);
    send(events, QueryEvent::Columns(fields))?;

    if let Some((projection, scan_rows)) = plain {
        // A plain scan declares every column, so no row was held to type one.
        let _mode = scan_rows.start();
        totals.plain_scan = true;
        loop {
            let t = clock.start();
            let next = rows.next();
            clock.stop(t);
            if next.map_err(&failed)?.is_none() {
                break;
            }
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
        totals.rows += 1;
        push_row(&columns, refs, totals.rows, &mut sink)?;
        sink.end_row()?;
    }
    drop(held);
    while !exhausted {
        let t = clock.start();
        let next = rows.next();
        clock.stop(t);
        let Some(row) = next.map_err(&failed)? else {
            exhausted = true;
            continue;
        };
        totals.rows += 1;
        push_row(
            &columns,
            (0..width).map(|i| row.get_ref(i)),
            totals.rows,
            &mut sink,
        )?;
        sink.end_row()?;
    }
    Ok(sink.finish()?)
}

/// Encodes row number `row`'s values in wire form by their columns, appending them to `sink`; a value
/// that does not fit its column fails the query.
fn push_row<'a>(
    columns: &[Column],
    values: impl Iterator<Item = rusqlite::Result<ValueRef<'a>>>,
    row: u64,
    sink: &mut Sink<'_>,
) -> Result<(), Status> {
    for (column, value) in columns.iter().zip(values) {
        let value = value.map_err(sql_error)?;
        sink.push_with(|out| column.encode(value, row, out))
            .map_err(Status::invalid_argument)?;
    }
    Ok(())
}

/// The table and column each result column comes straight from, if it does.
fn origins(stmt: &Statement<'_>) -> Vec<Origin> {
    stmt.columns_with_metadata()
        .map(|c| Some((c.table_name()?.to_owned(), c.origin_name()?.to_owned())))
        .collect()
}

/// The Spanner type of each result column that comes straight from a demo table's column (or,
/// when `sys`, from a SPANNER_SYS statistics table's).
fn declared_types(db: &Database, origins: &[Origin], sys: bool) -> Vec<Option<Type>> {
    origins
        .iter()
        .map(|origin| {
            let (table, column) = origin.as_ref()?;
            db.column_type(table, column).or_else(|| {
                sys.then(|| sys_tables::column_type(table, column))
                    .flatten()
            })
        })
        .collect()
}

/// What each loop of the just-prepared statement reads, by plan step id: SQLite names a table
/// (not its alias) or an index, and an index stands for its table unless it is a secondary one.
fn scan_targets(db: &Database, conn: &Connection, sql: &str) -> BTreeMap<i64, ScanTarget> {
    let Some(status) = scanstatus::read(conn, sql) else {
        return BTreeMap::new();
    };
    status
        .elements
        .into_iter()
        .filter_map(|e| {
            let name = e.name?;
            let target = match db.index_table(&name) {
                Some(table) if name.starts_with("sqlite_autoindex_") => {
                    ScanTarget { table, index: None }
                }
                Some(table) => ScanTarget {
                    table,
                    index: Some(name),
                },
                None => ScanTarget {
                    table: name,
                    index: None,
                },
            };
            Some((e.id, target))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::stream::TokenStamp;
    use crate::server::stream::budget::SendBudget;
    use tokio::sync::mpsc;

    /// A query's columns, every value's bytes, and its totals.
    type Answer = (Vec<Field>, Vec<Vec<u8>>, QueryTotals);

    /// Runs `sql` on the query thread, plain scans allowed or not.
    fn run_query(db: &Arc<Database>, sql: &str, plain_scans: bool) -> Result<Answer, Status> {
        let (tx, mut rx) = mpsc::channel(4);
        let spec = QuerySpec {
            sql: sql.into(),
            params: HashMap::from([(
                "n".to_owned(),
                Param {
                    value: SqlValue::Integer(7),
                    ty: Type::Int64,
                    nan: false,
                },
            )]),
            limits: crate::server::sqlite::db::test_limits(),
            execute: true,
            explain: false,
            profile: false,
            plain_scans,
            output: Output::Values,
            partition: None,
            sys: None,
        };
        spawn(Arc::clone(db), spec, tx, Interrupt::unbounded(), None).expect("spawns");
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
                request_key: 7,
                stream: 1,
                shape: Default::default(),
            };
            let spec = QuerySpec {
                sql: sql.into(),
                params: HashMap::new(),
                limits: crate::server::sqlite::db::test_limits(),
                execute: true,
                explain: false,
                profile: false,
                plain_scans: true,
                output: Output::Messages {
                    transaction: None,
                    stamp,
                    budget: Arc::new(SendBudget::new(usize::MAX)),
                },
                partition: None,
                sys: None,
            };
            spawn(Arc::clone(&db), spec, tx, Interrupt::unbounded(), None).expect("spawns");
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
