//! PartitionQuery's planner: which queries can be read as partitions, and the key ranges of the
//! table they scan (the tokens that carry a range to each partition's ExecuteStreamingSql are the
//! service's).
//!
//! A query is root-partitionable, as production defines it, when its plan is a Distributed Union
//! over one table's rows: here, when SQLite's plan scans exactly one demo table, directly, with
//! nothing above the scan that needs every row at once (no sort, grouping, aggregate, DISTINCT,
//! LIMIT or OFFSET, no subquery, join or compound). Its rows are then the union of the rows each
//! key range of that table yields, so the partitions together return exactly the plain query's rows.
//! A partition runs the same SQL on a connection where the table's name is a temporary view of
//! the range (`rowid >= lo AND rowid < hi`; Seed23's rowid is its Id), which SQLite resolves before
//! the table itself.

use std::collections::HashMap;

use super::columns::Param;
use super::db::{Database, KeyRange};
use super::opcodes;
use super::sandbox::SqlLimits;
use super::scan;
use super::statement::{bind, explain, refused};
use crate::demo;

/// The most partitions a query is split into, whatever the client asks.
pub const MAX_PARTITIONS: usize = 64;
/// Rows per partition aimed at when the client gives no `max_partitions`.
const ROWS_PER_PARTITION: i64 = 10_000;

/// The production wording for a query that is not root-partitionable.
pub fn not_partitionable(why: &str) -> tonic::Status {
    tonic::Status::invalid_argument(format!(
        "Query is not root partitionable since it does not have a DistributedUnion at the root \
         ({why}). Please run EXPLAIN for query plan details."
    ))
}

/// Splits a root-partitionable query into at most `max` (or, with none, one per 10,000 rows)
/// key ranges of the table it scans, never more than [`MAX_PARTITIONS`]. Runs SQLite (EXPLAIN and
/// the table's key bounds): call it off the async runtime.
pub fn key_ranges(
    db: &Database,
    sql: &str,
    params: &HashMap<String, Param>,
    max: Option<usize>,
    limits: SqlLimits,
) -> Result<Vec<KeyRange>, tonic::Status> {
    let internal =
        |e: rusqlite::Error| tonic::Status::internal(format!("cannot plan partitions: {e}"));
    let table = partitioned_table(db, sql, params, limits)?;
    let (first, last, rows) = if table == "Seed23" {
        let rows = db.seed23_rows();
        (1, rows, rows)
    } else {
        let (conn, _) = db
            .connect(Default::default(), Default::default(), limits, None)
            .map_err(internal)?;
        conn.query_row(
            &format!("SELECT min(rowid), max(rowid), count(*) FROM main.\"{table}\""),
            [],
            |row| {
                Ok((
                    row.get::<_, Option<i64>>(0)?.unwrap_or(1),
                    row.get::<_, Option<i64>>(1)?.unwrap_or(0),
                    row.get::<_, i64>(2)?,
                ))
            },
        )
        .map_err(internal)?
    };
    let wanted = max.unwrap_or_else(|| {
        usize::try_from((rows + ROWS_PER_PARTITION - 1) / ROWS_PER_PARTITION).unwrap_or(1)
    });
    let span = (last - first + 1).max(1);
    let count = wanted
        .clamp(1, MAX_PARTITIONS)
        .min(usize::try_from(span).unwrap_or(1));
    let count_i = i64::try_from(count).unwrap_or(1);
    Ok((0..count_i)
        .map(|k| KeyRange {
            table,
            lo: first + span * k / count_i,
            hi: first + span * (k + 1) / count_i,
        })
        .collect())
}

/// The one demo table a root-partitionable query scans, or why the query is not one.
fn partitioned_table(
    db: &Database,
    sql: &str,
    params: &HashMap<String, Param>,
    limits: SqlLimits,
) -> Result<&'static str, tonic::Status> {
    let internal =
        |e: rusqlite::Error| tonic::Status::internal(format!("cannot plan partitions: {e}"));
    let (conn, sandbox) = db
        .connect(Default::default(), Default::default(), limits, None)
        .map_err(internal)?;
    {
        // Prepared under the sandbox first, so a statement it refuses is refused with its reason.
        sandbox.reset();
        let mut stmt = conn.prepare(sql).map_err(|e| refused(e, &sandbox))?;
        if !stmt.readonly() {
            return Err(not_partitionable("it is not a query"));
        }
        bind(&mut stmt, params)?;
    }
    let steps = explain(&conn, sql)?;
    let mut tables = Vec::new();
    for step in &steps {
        let detail = step.detail.as_str();
        for blocker in [
            "TEMP B-TREE",
            "SUBQUERY",
            "CO-ROUTINE",
            "MATERIALIZE",
            "COMPOUND",
            "MULTI-INDEX",
            "RIGHT-JOIN",
        ] {
            if detail.contains(blocker) {
                return Err(not_partitionable(&format!("its plan has {detail:?}")));
            }
        }
        if let Some(rest) = detail
            .strip_prefix("SCAN ")
            .or_else(|| detail.strip_prefix("SEARCH "))
        {
            tables.push(rest.split(' ').next().unwrap_or(rest).to_owned());
        }
    }
    let [name] = tables.as_slice() else {
        return Err(not_partitionable(&format!(
            "it reads {} tables, not one",
            tables.len()
        )));
    };
    let table = demo::tables()
        .iter()
        .map(|t| t.name)
        .find(|t| t.eq_ignore_ascii_case(name))
        .ok_or_else(|| {
            not_partitionable(&format!(
                "{name} is not a demo table (PartitionQuery splits the demo tables only, not the \
                 tables UpdateDatabaseDdl created)"
            ))
        })?;
    let ops = scan::program(&conn, sql).map_err(internal)?;
    if let Some(op) = ops.iter().find(|op| {
        let opcode = op.opcode.as_str();
        opcodes::is_aggregate(opcode) || opcode == opcodes::LIMIT || opcode == opcodes::OFFSET
    }) {
        let what = if opcodes::is_aggregate(&op.opcode) {
            "an aggregate"
        } else {
            "a LIMIT or OFFSET"
        };
        return Err(not_partitionable(&format!("it has {what} above the scan")));
    }
    // Partitions reach the table through its name: a schema-qualified name would read it whole.
    let range = KeyRange {
        table,
        lo: 0,
        hi: 0,
    };
    let (probe, sandbox_probe) = db
        .connect(Default::default(), Default::default(), limits, Some(&range))
        .map_err(internal)?;
    drop(sandbox);
    sandbox_probe.reset();
    probe.prepare(sql).map_err(|e| refused(e, &sandbox_probe))?;
    if sandbox_probe
        .direct_reads()
        .iter()
        .any(|t| t.eq_ignore_ascii_case(table))
    {
        return Err(not_partitionable(&format!(
            "it names {table} with its schema; write the table's name alone"
        )));
    }
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(db: &Database, range: Option<&KeyRange>, sql: &str) -> i64 {
        let (conn, _) = db
            .connect(
                Default::default(),
                Default::default(),
                crate::server::sqlite::db::test_limits(),
                range,
            )
            .expect("connects");
        conn.query_row(sql, [], |row| row.get(0)).expect("runs")
    }

    #[test]
    fn the_ranges_cover_the_table_once_and_a_partition_reads_only_its_own() {
        let db = Database::open(1000).expect("opens");
        let limits = crate::server::sqlite::db::test_limits();
        let ranges = key_ranges(
            &db,
            "SELECT Id, Name FROM Seed23 WHERE Id % 2 = 0",
            &HashMap::new(),
            Some(3),
            limits,
        )
        .expect("root-partitionable");
        assert_eq!(ranges.len(), 3);
        assert_eq!(ranges[0].lo, 1);
        assert_eq!(ranges[2].hi, 1001);
        assert!(ranges.windows(2).all(|w| w[0].hi == w[1].lo), "{ranges:?}");
        // A partition's connection sees only its range, through the table's own name.
        let counted: i64 = ranges
            .iter()
            .map(|r| count(&db, Some(r), "SELECT count(*) FROM (SELECT Id FROM Seed23)"))
            .sum();
        assert_eq!(counted, 1000);
        assert_eq!(
            count(
                &db,
                Some(&ranges[1]),
                "SELECT min(Id) FROM (SELECT Id FROM Seed23)"
            ),
            ranges[1].lo
        );
        let singers = key_ranges(&db, "SELECT * FROM Singers", &HashMap::new(), None, limits)
            .expect("partitionable");
        assert_eq!(
            singers.len(),
            1,
            "a small table is one partition by default"
        );
        let many = key_ranges(
            &db,
            "SELECT * FROM Seed23",
            &HashMap::new(),
            Some(10_000),
            limits,
        )
        .expect("partitionable");
        assert_eq!(
            many.len(),
            MAX_PARTITIONS,
            "bounded whatever the client asks"
        );
    }
}
