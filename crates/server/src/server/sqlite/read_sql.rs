//! The SELECT a Read or StreamingRead runs: the columns asked, in their order, of one demo table,
//! the rows its key set names (whole keys, key ranges over key prefixes, or all), in primary-key
//! order, at most `limit` of them. Every value is a named parameter ([`key_param`],
//! [`bound_param`]); the names spliced into the text are the demo tables' own spellings, which the
//! caller took from the catalog, and are quoted all the same.

use std::fmt::Write as _;

/// One end of a key range, as its SQL needs it: how many key columns its prefix gives, and
/// whether keys equal to it on those columns are in the range. An open end of no columns excludes
/// every key; a closed one bounds nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoundShape {
    /// The length of the key prefix.
    pub len: usize,
    /// Whether the prefix itself is in the range.
    pub closed: bool,
}

/// A key range's two ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RangeShape {
    /// Where it starts.
    pub start: BoundShape,
    /// Where it ends.
    pub end: BoundShape,
}

/// A read, as its SQL needs it: names already checked, values left to parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadShape<'a> {
    /// The table, as the demo tables spell it.
    pub table: &'a str,
    /// The columns to return, in order, as the table spells them (one may come twice).
    pub columns: Vec<&'a str>,
    /// The table's primary key, in key order.
    pub key_columns: &'a [&'a str],
    /// How many whole keys the key set names (key `i`'s value `j` is [`key_param`]`(i, j)`).
    pub keys: usize,
    /// Its ranges (range `i`'s start value `j` is [`bound_param`]`(i, true, j)`).
    pub ranges: Vec<RangeShape>,
    /// Every row of the table.
    pub all: bool,
    /// At most this many rows (none when 0).
    pub limit: u64,
}

/// The parameter of whole key `key`'s value for key column `column`.
pub fn key_param(key: usize, column: usize) -> String {
    format!("k{key}_{column}")
}

/// The parameter of range `range`'s start (or end) value for key column `column`.
pub fn bound_param(range: usize, start: bool, column: usize) -> String {
    let end = if start { 's' } else { 'e' };
    format!("r{range}{end}{column}")
}

/// The read's statement.
pub fn read_sql(shape: &ReadShape<'_>) -> String {
    let mut sql = String::with_capacity(64 + 24 * (shape.keys + shape.ranges.len()));
    sql.push_str("SELECT ");
    let columns: Vec<String> = shape.columns.iter().map(|c| quoted(c)).collect();
    sql.push_str(&columns.join(", "));
    let _ = write!(sql, " FROM {}", quoted(shape.table));
    if !shape.all {
        sql.push_str(" WHERE ");
        let terms = where_terms(shape);
        if terms.is_empty() {
            // Nothing is named: no row.
            sql.push('0');
        } else {
            sql.push_str(&terms.join(" OR "));
        }
    }
    let keys: Vec<String> = shape.key_columns.iter().map(|c| quoted(c)).collect();
    let _ = write!(sql, " ORDER BY {}", keys.join(", "));
    if shape.limit > 0 {
        let _ = write!(sql, " LIMIT {}", shape.limit);
    }
    sql
}

/// One term per range that can hold a row, and one for the whole keys (an `IN` list: a long
/// chain of `OR`s would reach SQLite's bound on an expression's depth).
fn where_terms(shape: &ReadShape<'_>) -> Vec<String> {
    let mut terms = Vec::with_capacity(shape.ranges.len() + 1);
    if shape.keys > 0 {
        let width = shape.key_columns.len();
        let tuple = |i: usize| {
            let values: Vec<String> = (0..width)
                .map(|j| format!("@{}", key_param(i, j)))
                .collect();
            values.join(", ")
        };
        let lists: Vec<String> = (0..shape.keys).map(tuple).collect();
        terms.push(if width == 1 {
            format!("{} IN ({})", quoted(shape.key_columns[0]), lists.join(", "))
        } else {
            format!(
                "{} IN (VALUES ({}))",
                row_value(shape.key_columns, width),
                lists.join("), (")
            )
        });
    }
    for (i, range) in shape.ranges.iter().enumerate() {
        let ends = [(range.start, true), (range.end, false)];
        if ends.iter().any(|(b, _)| b.len == 0 && !b.closed) {
            continue;
        }
        let sides: Vec<String> = ends
            .iter()
            .filter(|(bound, _)| bound.len > 0)
            .map(|&(bound, start)| {
                let op = match (start, bound.closed) {
                    (true, true) => ">=",
                    (true, false) => ">",
                    (false, true) => "<=",
                    (false, false) => "<",
                };
                let values: Vec<String> = (0..bound.len)
                    .map(|j| format!("@{}", bound_param(i, start, j)))
                    .collect();
                let values = if bound.len == 1 {
                    values.join("")
                } else {
                    format!("({})", values.join(", "))
                };
                format!("{} {op} {values}", row_value(shape.key_columns, bound.len))
            })
            .collect();
        terms.push(if sides.is_empty() {
            "1".to_owned()
        } else {
            format!("({})", sides.join(" AND "))
        });
    }
    terms
}

/// The first `len` key columns as a row value (one column bare).
fn row_value(key_columns: &[&str], len: usize) -> String {
    let names: Vec<String> = key_columns.iter().take(len).map(|c| quoted(c)).collect();
    if len == 1 {
        names.join("")
    } else {
        format!("({})", names.join(", "))
    }
}

/// A name in double quotes, any double quote in it doubled.
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape<'a>(table: &'a str, key_columns: &'a [&'a str]) -> ReadShape<'a> {
        ReadShape {
            table,
            columns: vec!["Balance", "AccountId"],
            key_columns,
            keys: 0,
            ranges: Vec::new(),
            all: false,
            limit: 0,
        }
    }

    #[test]
    fn keys_ranges_and_all_make_their_statements() {
        let accounts = ["AccountId"];
        let mut read = shape("Accounts", &accounts);
        assert_eq!(
            read_sql(&read),
            "SELECT \"Balance\", \"AccountId\" FROM \"Accounts\" WHERE 0 ORDER BY \"AccountId\""
        );
        read.keys = 2;
        read.limit = 5;
        assert_eq!(
            read_sql(&read),
            "SELECT \"Balance\", \"AccountId\" FROM \"Accounts\" WHERE \"AccountId\" IN \
             (@k0_0, @k1_0) ORDER BY \"AccountId\" LIMIT 5"
        );
        read.all = true;
        assert_eq!(
            read_sql(&read),
            "SELECT \"Balance\", \"AccountId\" FROM \"Accounts\" ORDER BY \"AccountId\" LIMIT 5"
        );
        let albums = ["SingerId", "AlbumId"];
        let mut read = shape("Albums", &albums);
        read.columns = vec!["AlbumTitle"];
        read.keys = 2;
        let closed = |len| BoundShape { len, closed: true };
        let open = |len| BoundShape { len, closed: false };
        read.ranges = vec![
            RangeShape {
                start: closed(1),
                end: open(2),
            },
            // An open end of no columns holds nothing: no term.
            RangeShape {
                start: open(0),
                end: closed(2),
            },
            RangeShape {
                start: closed(0),
                end: closed(0),
            },
        ];
        assert_eq!(
            read_sql(&read),
            "SELECT \"AlbumTitle\" FROM \"Albums\" WHERE (\"SingerId\", \"AlbumId\") IN \
             (VALUES (@k0_0, @k0_1), (@k1_0, @k1_1)) OR (\"SingerId\" >= @r0s0 AND \
             (\"SingerId\", \"AlbumId\") < (@r0e0, @r0e1)) OR 1 ORDER BY \"SingerId\", \"AlbumId\""
        );
        assert_eq!(quoted("a\"b"), "\"a\"\"b\"");
    }

    /// Runs `shape`'s statement on Seed23 with each parameter bound to `value(name)`: its ids,
    /// and the rows its virtual table produced.
    fn seed23(shape: &ReadShape<'_>, value: impl Fn(&str) -> i64) -> (Vec<i64>, u64) {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicU64, Ordering};
        let db = super::super::db::Database::open(100_000).expect("opens");
        let scanned = Arc::new(AtomicU64::new(0));
        let limits = super::super::db::test_limits();
        let (conn, _) = db
            .connect(Arc::clone(&scanned), Arc::default(), limits, None)
            .expect("connects");
        let mut stmt = conn.prepare(&read_sql(shape)).expect("prepares");
        for i in 1..=stmt.parameter_count() {
            let name = stmt.parameter_name(i).expect("named").to_owned();
            stmt.raw_bind_parameter(i, value(&name[1..]))
                .expect("binds");
        }
        let mut rows = stmt.raw_query();
        let mut ids = Vec::new();
        while let Some(row) = rows.next().expect("steps") {
            ids.push(row.get(0).expect("an id"));
        }
        (ids, scanned.load(Ordering::Relaxed))
    }

    #[test]
    fn seed23_is_read_by_key_and_by_range_without_a_scan() {
        let key = ["Id"];
        let mut read = shape("Seed23", &key);
        read.columns = vec!["Id"];
        read.keys = 3;
        let keys = |name: &str| match name {
            "k0_0" => 90_000,
            "k1_0" => 7,
            _ => 41_000,
        };
        let (ids, scanned) = seed23(&read, keys);
        assert_eq!(ids, [7, 41_000, 90_000]);
        assert!(
            (3..=3).contains(&scanned),
            "{scanned} rows produced for 3 keys"
        );
        read.keys = 0;
        read.ranges = vec![RangeShape {
            start: BoundShape {
                len: 1,
                closed: false,
            },
            end: BoundShape {
                len: 1,
                closed: true,
            },
        }];
        let (ids, scanned) = seed23(&read, |name| if name == "r0s0" { 50_000 } else { 50_004 });
        assert_eq!(ids, [50_001, 50_002, 50_003, 50_004]);
        assert!(
            (4..=6).contains(&scanned),
            "{scanned} rows produced for a range of 4"
        );
    }
}
