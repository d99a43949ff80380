//! The statistics as the rows SQLite stores (`sqlite/sys_tables.rs` attaches them): for the
//! SPANNER_SYS tables a query names, the rows of their spans from the journal now, each value as
//! `sql_value::to_sql` stores its Spanner type (a TIMESTAMP as its text, an ARRAY or STRUCT as its
//! encoded ListValue).

use rusqlite::types::Value as SqlValue;

use super::super::journal::{Journal, SampleLockRequest};
use super::{Span, SpanStats, TxnFigures, Window, collect, row_range_start_key};
use crate::server::sqlite::sql_value::to_sql;
use crate::server::sqlite::sys_tables::{Kind, SysTables};
use crate::wire::{Timestamp, Value};

/// The tables `sql` names as of `window`, from `journal`; `table_name` spells a lock table's name
/// (lower-cased there) as the schema does, for ROW_RANGE_START_KEY.
pub fn sys_tables(
    sql: &str,
    journal: &Journal,
    window: Window,
    table_name: &dyn Fn(&str) -> String,
) -> SysTables {
    let named = SysTables::named(sql);
    let spans: Vec<Span> = Span::ALL
        .into_iter()
        .filter(|span| named.iter().any(|(_, suffix, _)| *suffix == span.suffix()))
        .collect();
    let stats = collect(journal, window, &spans);
    let rows = named
        .into_iter()
        .filter_map(|(kind, suffix, name)| {
            let stats = stats.iter().find(|s| s.span.suffix() == suffix)?;
            Some((name, rows(kind, stats, table_name)))
        })
        .collect();
    SysTables::new(rows)
}

/// One table's rows, as SQLite stores their values (`sql_value::to_sql`).
fn rows(kind: Kind, stats: &SpanStats, table_name: &dyn Fn(&str) -> String) -> Vec<Vec<SqlValue>> {
    match kind {
        Kind::LockTop => stats
            .lock
            .top
            .iter()
            .map(|row| {
                let key = row_range_start_key(&table_name(&row.table), &row.start);
                vec![
                    timestamp(row.interval_end),
                    SqlValue::Blob(key.into_bytes()),
                    SqlValue::Real(row.lock_wait_seconds),
                    samples(&row.samples),
                ]
            })
            .collect(),
        Kind::LockTotal => stats
            .lock
            .total
            .iter()
            .map(|t| {
                vec![
                    timestamp(t.interval_end),
                    SqlValue::Real(t.total_lock_wait_seconds),
                ]
            })
            .collect(),
        Kind::TxnTop => stats
            .txn
            .top
            .iter()
            .map(|row| {
                let mut values = vec![
                    timestamp(row.interval_end),
                    SqlValue::Text(row.tag.to_string()),
                    SqlValue::Integer(row.fprint),
                    strings(&row.read_columns),
                    strings(&row.write_constructive_columns),
                    strings(&[]),
                ];
                values.extend(figures(&row.figures));
                values
            })
            .collect(),
        Kind::TxnTotal => stats
            .txn
            .total
            .iter()
            .map(|t| {
                let mut values = vec![timestamp(t.interval_end)];
                values.extend(figures(&t.figures));
                values
            })
            .collect(),
    }
}

fn figures(f: &TxnFigures) -> [SqlValue; 9] {
    [
        SqlValue::Integer(f.attempt_count),
        SqlValue::Integer(f.commit_attempt_count),
        SqlValue::Integer(f.commit_abort_count),
        SqlValue::Integer(f.commit_retry_count),
        SqlValue::Integer(f.commit_failed_precondition_count),
        SqlValue::Real(f.avg_participants),
        SqlValue::Real(f.avg_total_latency_seconds),
        // Commit latency and bytes are not in the journal.
        SqlValue::Null,
        SqlValue::Null,
    ]
}

fn timestamp(since_epoch: std::time::Duration) -> SqlValue {
    let seconds = i64::try_from(since_epoch.as_secs()).unwrap_or(i64::MAX);
    match Timestamp::new(seconds, since_epoch.subsec_nanos()) {
        Some(t) => SqlValue::Text(t.to_string()),
        None => SqlValue::Null,
    }
}

fn strings(items: &[String]) -> SqlValue {
    to_sql(Value::Array(
        items.iter().map(|s| Value::String(s.clone())).collect(),
    ))
}

fn samples(samples: &[SampleLockRequest]) -> SqlValue {
    to_sql(Value::Array(
        samples
            .iter()
            .map(|s| {
                Value::Struct(vec![
                    Value::String(s.column.clone()),
                    Value::String(s.lock_mode.name().into()),
                    Value::String(s.transaction_tag.to_string()),
                ])
            })
            .collect(),
    ))
}
