//! PartitionQuery on the local instance: which queries can be read as partitions, the key ranges
//! of the table they scan, and the tokens that carry a range to the ExecuteStreamingSql of each
//! partition.
//!
//! A query is root-partitionable, as production defines it, when its plan is a Distributed Union
//! over one table's rows: here, when SQLite's plan scans exactly one demo table, directly, with
//! nothing above the scan that needs every row at once (no sort, grouping, aggregate, DISTINCT,
//! LIMIT or OFFSET, no subquery, join or compound). Its rows are then the union of the rows each
//! key range of that table yields, so the partitions together return exactly the plain query's rows.
//! A partition runs the same SQL on a connection where the table's name is a temporary view of
//! the range (`rowid >= lo AND rowid < hi`; Seed23's rowid is its Id), which SQLite resolves before
//! the table itself.
//!
//! Tokens are authenticated like resume tokens (`token.rs`): one fixed length, an HMAC tag under
//! the process's key, checked before any field is used.

use ring::hmac;

use super::columns::Param;
use super::db::Database;
use super::scan;
use super::token;
use crate::demo;
use std::collections::HashMap;

/// The most partitions a query is split into, whatever the client asks.
pub const MAX_PARTITIONS: usize = 64;
/// Rows per partition aimed at when the client gives no `max_partitions`.
const ROWS_PER_PARTITION: i64 = 10_000;

/// A key range of one demo table: the rows a partition reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRange {
    /// The table (a demo table's name).
    pub table: &'static str,
    /// The first rowid in the range.
    pub lo: i64,
    /// One past the last rowid.
    pub hi: i64,
}

impl KeyRange {
    /// The statement that makes the range the table's name on a partition's connection.
    pub fn view_sql(&self) -> String {
        format!(
            "CREATE TEMP VIEW \"{t}\" AS SELECT * FROM main.\"{t}\" WHERE rowid >= {lo} AND rowid < {hi}",
            t = self.table,
            lo = self.lo,
            hi = self.hi
        )
    }
}

/// The production wording for a query that is not root-partitionable.
pub fn not_partitionable(why: &str) -> tonic::Status {
    tonic::Status::invalid_argument(format!(
        "Query is not root partitionable since it does not have a DistributedUnion at the root \
         ({why}). Please run EXPLAIN for query plan details."
    ))
}

/// What a partition token says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionToken {
    /// The query's fingerprint (SQL, parameters and their types), so a token serves one query.
    pub fingerprint: u64,
    /// The read-only transaction the partitions read in.
    pub transaction: [u8; 8],
    /// The range it reads.
    pub range: KeyRange,
}

const MAGIC: &[u8; 4] = b"SPP1";
/// magic, fingerprint, transaction, table index, lo, hi.
const BODY_BYTES: usize = 4 + 8 + 8 + 1 + 8 + 8;
const TAG_BYTES: usize = 16;
/// The length of every partition token.
pub const PARTITION_TOKEN_BYTES: usize = BODY_BYTES + TAG_BYTES;

/// Why a partition token was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PartitionTokenError {
    /// Not a token this process issued (length, tag or contents).
    #[error("the partition token is not one this instance issued")]
    Forged,
}

impl PartitionToken {
    /// The token's bytes: its fields, then their tag.
    pub fn encode(&self) -> Vec<u8> {
        let table = demo::tables()
            .iter()
            .position(|t| t.name == self.range.table)
            .unwrap_or(usize::MAX);
        let mut out = Vec::with_capacity(PARTITION_TOKEN_BYTES);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&self.fingerprint.to_be_bytes());
        out.extend_from_slice(&self.transaction);
        out.push(u8::try_from(table).unwrap_or(u8::MAX));
        out.extend_from_slice(&self.range.lo.to_be_bytes());
        out.extend_from_slice(&self.range.hi.to_be_bytes());
        let tag = hmac::sign(token::key(), &out);
        out.extend_from_slice(&tag.as_ref()[..TAG_BYTES]);
        out
    }

    /// Reads a token this process issued: length, then tag, then fields.
    pub fn decode(bytes: &[u8]) -> Result<Self, PartitionTokenError> {
        let forged = PartitionTokenError::Forged;
        let bytes: &[u8; PARTITION_TOKEN_BYTES] = bytes.try_into().map_err(|_| forged)?;
        let (body, tag) = bytes.split_at(BODY_BYTES);
        let want = hmac::sign(token::key(), body);
        if !token::same_bytes(&want.as_ref()[..TAG_BYTES], tag) {
            return Err(forged);
        }
        let rest = body.strip_prefix(MAGIC).ok_or(forged)?;
        let (fingerprint, rest) = rest.split_first_chunk::<8>().ok_or(forged)?;
        let (transaction, rest) = rest.split_first_chunk::<8>().ok_or(forged)?;
        let (table, rest) = rest.split_first().ok_or(forged)?;
        let (lo, rest) = rest.split_first_chunk::<8>().ok_or(forged)?;
        let hi: &[u8; 8] = rest.try_into().map_err(|_| forged)?;
        let table = demo::tables()
            .get(usize::from(*table))
            .map(|t| t.name)
            .ok_or(forged)?;
        let (lo, hi) = (i64::from_be_bytes(*lo), i64::from_be_bytes(*hi));
        if lo > hi {
            return Err(forged);
        }
        Ok(PartitionToken {
            fingerprint: u64::from_be_bytes(*fingerprint),
            transaction: *transaction,
            range: KeyRange { table, lo, hi },
        })
    }
}

/// Splits a root-partitionable query into at most `max` (or, with none, one per 10,000 rows)
/// key ranges of the table it scans, never more than [`MAX_PARTITIONS`]. Runs SQLite (EXPLAIN and
/// the table's key bounds): call it off the async runtime.
pub fn plan(
    db: &Database,
    sql: &str,
    params: &HashMap<String, Param>,
    max: Option<usize>,
    limits: super::sandbox::SqlLimits,
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
    limits: super::sandbox::SqlLimits,
) -> Result<&'static str, tonic::Status> {
    let internal =
        |e: rusqlite::Error| tonic::Status::internal(format!("cannot plan partitions: {e}"));
    let (conn, sandbox) = db
        .connect(Default::default(), Default::default(), limits, None)
        .map_err(internal)?;
    {
        // Prepared under the sandbox first, so a statement it refuses is refused with its reason.
        sandbox.reset();
        let mut stmt = conn
            .prepare(sql)
            .map_err(|e| super::query::refused(e, &sandbox))?;
        if !stmt.readonly() {
            return Err(not_partitionable("it is not a query"));
        }
        super::query::bind(&mut stmt, params)?;
    }
    let steps = super::query::explain(&conn, sql)?;
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
        .ok_or_else(|| not_partitionable(&format!("{name} is not a table")))?;
    let ops = scan::program(&conn, sql).map_err(internal)?;
    if let Some(op) = ops.iter().find(|op| {
        matches!(
            op.opcode.as_str(),
            "AggStep"
                | "AggStep1"
                | "AggFinal"
                | "AggValue"
                | "AggInverse"
                | "DecrJumpZero"
                | "OffsetLimit"
        )
    }) {
        let what = if op.opcode.starts_with("Agg") {
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
    probe
        .prepare(sql)
        .map_err(|e| super::query::refused(e, &sandbox_probe))?;
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

    fn token() -> PartitionToken {
        PartitionToken {
            fingerprint: 42,
            transaction: [1, 2, 3, 4, 5, 6, 7, 8],
            range: KeyRange {
                table: "Singers",
                lo: 10,
                hi: 20,
            },
        }
    }

    #[test]
    fn partition_tokens_round_trip_and_every_bit_flip_is_refused() {
        let bytes = token().encode();
        assert_eq!(bytes.len(), PARTITION_TOKEN_BYTES);
        assert_eq!(PartitionToken::decode(&bytes), Ok(token()));
        for bit in 0..bytes.len() * 8 {
            let mut bad = bytes.clone();
            bad[bit / 8] ^= 1 << (bit % 8);
            assert!(PartitionToken::decode(&bad).is_err(), "bit {bit}");
        }
        assert!(PartitionToken::decode(&bytes[1..]).is_err());
        assert!(PartitionToken::decode(&[]).is_err());
    }

    fn count(db: &Database, range: Option<&KeyRange>, sql: &str) -> i64 {
        let (conn, _) = db
            .connect(
                Default::default(),
                Default::default(),
                crate::server::db::test_limits(),
                range,
            )
            .expect("connects");
        conn.query_row(sql, [], |row| row.get(0)).expect("runs")
    }

    #[test]
    fn the_ranges_cover_the_table_once_and_a_partition_reads_only_its_own() {
        let db = Database::open(1000).expect("opens");
        let limits = crate::server::db::test_limits();
        let ranges = plan(
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
        let singers = plan(&db, "SELECT * FROM Singers", &HashMap::new(), None, limits)
            .expect("partitionable");
        assert_eq!(
            singers.len(),
            1,
            "a small table is one partition by default"
        );
        let many = plan(
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
