//! SPANNER_SYS's lock and transaction statistics as tables a query reads: `LOCK_STATS_TOP_*`,
//! `LOCK_STATS_TOTAL_*`, `TXN_STATS_TOP_*` and `TXN_STATS_TOTAL_*` for `MINUTE`, `10MINUTE` and
//! `HOUR`, with production's columns and Spanner types.
//!
//! A query whose SQL names `SPANNER_SYS` gets, on its own connection and before the connection is
//! confined, an in-memory database attached as `spanner_sys` holding the twelve tables, those the
//! SQL names filled with the rows the lock journal gives now (`txn/sys_stats/sql_rows.rs` builds
//! them; this file knows the tables' names and columns, and attaches them); SQLite then
//! runs the query as it is (filters, joins, ordering, aggregates). The sandbox lets a query read
//! these tables and nothing else of that database. A query that does not name SPANNER_SYS costs
//! one scan of its text for the word ([`mentioned`]). The rows are bounded by the journal's size,
//! the TOP tables' cut and the retention in intervals.

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params_from_iter};

use crate::wire::{Field, Type};

/// The schema's name, as SQL names it (any case).
pub const SCHEMA: &str = "spanner_sys";

/// The interval lengths' table-name endings, shortest first.
pub const SPANS: [&str; 3] = ["MINUTE", "10MINUTE", "HOUR"];

/// The four kinds of statistics table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// LOCK_STATS_TOP_*.
    LockTop,
    /// LOCK_STATS_TOTAL_*.
    LockTotal,
    /// TXN_STATS_TOP_*.
    TxnTop,
    /// TXN_STATS_TOTAL_*.
    TxnTotal,
}

/// A column's Spanner type, named once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Col {
    Timestamp,
    Bytes,
    String,
    Int64,
    Float64,
    Strings,
    Samples,
}

/// A table's columns: names and types, in production's order.
type Columns = &'static [(&'static str, Col)];

const LOCK_TOP: &[(&str, Col)] = &[
    ("INTERVAL_END", Col::Timestamp),
    ("ROW_RANGE_START_KEY", Col::Bytes),
    ("LOCK_WAIT_SECONDS", Col::Float64),
    ("SAMPLE_LOCK_REQUESTS", Col::Samples),
];
const LOCK_TOTAL: &[(&str, Col)] = &[
    ("INTERVAL_END", Col::Timestamp),
    ("TOTAL_LOCK_WAIT_SECONDS", Col::Float64),
];
/// The figures TXN_STATS_TOP and TXN_STATS_TOTAL share, in production's order.
const TXN_FIGURES: &[(&str, Col)] = &[
    ("ATTEMPT_COUNT", Col::Int64),
    ("COMMIT_ATTEMPT_COUNT", Col::Int64),
    ("COMMIT_ABORT_COUNT", Col::Int64),
    ("COMMIT_RETRY_COUNT", Col::Int64),
    ("COMMIT_FAILED_PRECONDITION_COUNT", Col::Int64),
    ("AVG_PARTICIPANTS", Col::Float64),
    ("AVG_TOTAL_LATENCY_SECONDS", Col::Float64),
    ("AVG_COMMIT_LATENCY_SECONDS", Col::Float64),
    ("AVG_BYTES", Col::Float64),
];
const TXN_TOP_KEYS: &[(&str, Col)] = &[
    ("INTERVAL_END", Col::Timestamp),
    ("TRANSACTION_TAG", Col::String),
    ("FPRINT", Col::Int64),
    ("READ_COLUMNS", Col::Strings),
    ("WRITE_CONSTRUCTIVE_COLUMNS", Col::Strings),
    ("WRITE_DELETE_TABLES", Col::Strings),
];
const TXN_TOTAL_KEYS: &[(&str, Col)] = &[("INTERVAL_END", Col::Timestamp)];

impl Kind {
    const ALL: [Kind; 4] = [Kind::LockTop, Kind::LockTotal, Kind::TxnTop, Kind::TxnTotal];

    fn prefix(self) -> &'static str {
        match self {
            Kind::LockTop => "LOCK_STATS_TOP_",
            Kind::LockTotal => "LOCK_STATS_TOTAL_",
            Kind::TxnTop => "TXN_STATS_TOP_",
            Kind::TxnTotal => "TXN_STATS_TOTAL_",
        }
    }

    fn columns(self) -> impl Iterator<Item = &'static (&'static str, Col)> {
        let (keys, figures): (Columns, Columns) = match self {
            Kind::LockTop => (LOCK_TOP, &[]),
            Kind::LockTotal => (LOCK_TOTAL, &[]),
            Kind::TxnTop => (TXN_TOP_KEYS, TXN_FIGURES),
            Kind::TxnTotal => (TXN_TOTAL_KEYS, TXN_FIGURES),
        };
        keys.iter().chain(figures)
    }
}

impl Col {
    fn ty(self) -> Type {
        let string = |name: &str| Field {
            name: name.into(),
            ty: Type::String,
        };
        match self {
            Col::Timestamp => Type::Timestamp,
            Col::Bytes => Type::Bytes,
            Col::String => Type::String,
            Col::Int64 => Type::Int64,
            Col::Float64 => Type::Float64,
            Col::Strings => Type::Array(Box::new(Type::String)),
            Col::Samples => Type::Array(Box::new(Type::Struct(vec![
                string("column"),
                string("lock_mode"),
                string("transaction_tag"),
            ]))),
        }
    }
}

/// Every table: its kind, its span's ending and its name.
pub fn tables() -> impl Iterator<Item = (Kind, &'static str, String)> {
    Kind::ALL.into_iter().flat_map(|kind| {
        SPANS
            .into_iter()
            .map(move |span| (kind, span, format!("{}{span}", kind.prefix())))
    })
}

/// The table called `name` (any case).
fn table(name: &str) -> Option<(Kind, &'static str)> {
    tables()
        .find(|(_, _, n)| n.eq_ignore_ascii_case(name))
        .map(|(kind, span, _)| (kind, span))
}

/// Whether `sql` names SPANNER_SYS (any case): the only text scan a query pays.
pub fn mentioned(sql: &str) -> bool {
    sql.as_bytes()
        .windows(SCHEMA.len())
        .any(|w| w.eq_ignore_ascii_case(SCHEMA.as_bytes()))
}

/// Whether `name` is one of the statistics tables (the sandbox lets queries read those).
pub fn is_table(name: &str) -> bool {
    table(name).is_some()
}

/// The Spanner type of a statistics table's column.
pub fn column_type(table_name: &str, column: &str) -> Option<Type> {
    let (kind, _) = table(table_name)?;
    kind.columns()
        .find(|(name, _)| name.eq_ignore_ascii_case(column))
        .map(|(_, col)| col.ty())
}

/// The twelve tables, those a query names filled: what a query's connection attaches.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SysTables {
    /// Each table's name and rows (empty for those the SQL does not name).
    tables: Vec<(String, Vec<Vec<SqlValue>>)>,
}

impl SysTables {
    /// The twelve tables, with `rows` for those it names (by name, any case).
    pub fn new(mut rows: Vec<(String, Vec<Vec<SqlValue>>)>) -> SysTables {
        let tables = tables()
            .map(|(_, _, name)| {
                let filled = rows
                    .iter_mut()
                    .find(|(n, _)| n.eq_ignore_ascii_case(&name))
                    .map(|(_, rows)| std::mem::take(rows))
                    .unwrap_or_default();
                (name, filled)
            })
            .collect();
        SysTables { tables }
    }

    /// The tables `sql` names (any case): their kind, span ending and name.
    pub fn named(sql: &str) -> Vec<(Kind, &'static str, String)> {
        let lower = sql.to_ascii_lowercase();
        tables()
            .filter(|(_, _, name)| lower.contains(&name.to_ascii_lowercase()))
            .collect()
    }

    /// The rows of table `name` (any case), for tests.
    pub fn rows(&self, name: &str) -> Option<&[Vec<SqlValue>]> {
        self.tables
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, rows)| rows.as_slice())
    }

    /// Attaches them to `conn` as `spanner_sys` (before the connection is confined).
    pub fn attach(&self, conn: &Connection) -> rusqlite::Result<()> {
        conn.execute_batch(&format!("ATTACH DATABASE ':memory:' AS {SCHEMA}"))?;
        for (name, rows) in &self.tables {
            let Some((kind, _)) = table(name) else {
                continue;
            };
            let columns: Vec<&str> = kind.columns().map(|(c, _)| *c).collect();
            conn.execute_batch(&format!(
                "CREATE TABLE {SCHEMA}.{name} ({})",
                columns.join(", ")
            ))?;
            if rows.is_empty() {
                continue;
            }
            let marks = vec!["?"; columns.len()].join(", ");
            let mut insert =
                conn.prepare(&format!("INSERT INTO {SCHEMA}.{name} VALUES ({marks})"))?;
            for row in rows {
                insert.execute(params_from_iter(row.iter()))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_sql_naming_spanner_sys_is_noticed_in_any_case() {
        assert!(mentioned("select * from Spanner_Sys.lock_stats_top_minute"));
        assert!(!mentioned(
            "SELECT * FROM Singers WHERE Name = 'spanner-sys'"
        ));
        let named: Vec<String> = SysTables::named(
            "SELECT * FROM SPANNER_SYS.LOCK_STATS_TOP_10MINUTE JOIN spanner_sys.txn_stats_total_hour",
        )
        .into_iter()
        .map(|(_, _, name)| name)
        .collect();
        assert_eq!(named, ["LOCK_STATS_TOP_10MINUTE", "TXN_STATS_TOTAL_HOUR"]);
    }

    #[test]
    fn the_tables_have_productions_columns_and_types() {
        assert_eq!(tables().count(), 12);
        assert_eq!(
            column_type("lock_stats_top_hour", "interval_end"),
            Some(Type::Timestamp)
        );
        assert_eq!(
            column_type("LOCK_STATS_TOP_MINUTE", "ROW_RANGE_START_KEY"),
            Some(Type::Bytes)
        );
        let samples = column_type("LOCK_STATS_TOP_MINUTE", "SAMPLE_LOCK_REQUESTS");
        assert_eq!(
            samples.map(|t| t.to_string()).as_deref(),
            Some("ARRAY<STRUCT<column STRING, lock_mode STRING, transaction_tag STRING>>")
        );
        assert_eq!(
            column_type("TXN_STATS_TOTAL_10MINUTE", "AVG_COMMIT_LATENCY_SECONDS"),
            Some(Type::Float64)
        );
        assert_eq!(column_type("TXN_STATS_TOTAL_MINUTE", "FPRINT"), None);
        assert_eq!(column_type("QUERY_STATS_TOP_MINUTE", "FPRINT"), None);
    }

    #[test]
    fn attached_tables_hold_their_rows_and_the_others_are_empty() {
        let conn = Connection::open_in_memory().expect("opens");
        let row = vec![
            SqlValue::Text("2026-12-05T15:00:00Z".into()),
            SqlValue::Real(0.5),
        ];
        let tables = SysTables::new(vec![("lock_stats_total_minute".into(), vec![row])]);
        tables.attach(&conn).expect("attaches");
        let total: f64 = conn
            .query_row(
                "SELECT TOTAL_LOCK_WAIT_SECONDS FROM spanner_sys.LOCK_STATS_TOTAL_MINUTE",
                [],
                |r| r.get(0),
            )
            .expect("one row");
        assert_eq!(total, 0.5);
        let empty: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM spanner_sys.TXN_STATS_TOP_HOUR",
                [],
                |r| r.get(0),
            )
            .expect("counts");
        assert_eq!(empty, 0);
    }
}
