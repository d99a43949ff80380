//! The read capture against a real database: keys, ranges, joins, DML, a created table, the bound.

use std::sync::Arc;

use rusqlite::types::Value as SqlValue;

use super::*;
use crate::server::sqlite::columns::Param;
use crate::server::sqlite::db::Database;
use crate::server::sqlite::ddl;
use crate::server::sqlite::sandbox::SqlLimits;
use crate::server::txn::lock_key::KeyPart;
use crate::server::txn::row_key::MAX_KEYS_PER_STATEMENT;
use crate::server::txn::rows_written::{Cells, WriteCapture, WrittenRows};
use crate::server::txn::write::{WriteBounds, Writer, then_return};

const LIMITS: SqlLimits = SqlLimits {
    max_value_bytes: 1 << 20,
    max_sql_bytes: 1 << 16,
};

struct Bench {
    db: Arc<Database>,
    conn: Connection,
    sandbox: Arc<Sandbox>,
    max_keys: usize,
}

impl Bench {
    fn open(max_keys: usize, ddl: &[&str]) -> Bench {
        let db = Arc::new(Database::open(10).expect("opens"));
        let statements: Vec<_> = ddl.iter().map(|s| ddl::parse(s).expect("DDL")).collect();
        let bounds = WriteBounds {
            limits: LIMITS,
            max_result_bytes: 1 << 20,
            max_database_bytes: 1 << 30,
        };
        let (applied, failed) = Writer::new(Arc::clone(&db)).apply_ddl(&statements, bounds);
        assert_eq!((applied, failed.map(|s| s.to_string())), (ddl.len(), None));
        let (conn, sandbox) = db.connect_writer(LIMITS).expect("a writer");
        Bench {
            db,
            conn,
            sandbox,
            max_keys,
        }
    }

    fn read_with(&self, sql: &str, params: &[(&str, SqlValue)]) -> RowsRead {
        let params = params
            .iter()
            .map(|(name, value)| {
                let param = Param {
                    value: value.clone(),
                    ty: Type::Int64,
                    nan: false,
                };
                ((*name).to_owned(), param)
            })
            .collect();
        let sql = then_return(sql);
        let mut capture = ReadCapture::new(&self.conn, &self.sandbox, &self.db.schema())
            .expect("reads the roots");
        capture
            .rows_read(&self.conn, &sql, &params, self.max_keys)
            .expect(&sql)
    }

    fn read(&self, sql: &str) -> RowsRead {
        self.read_with(sql, &[])
    }
}

fn keys(ids: &[i64]) -> ReadRows {
    ReadRows::Some {
        keys: ids.iter().map(|&i| RowKey::ints(&[i])).collect(),
        ranges: Vec::new(),
    }
}

fn range(start: Option<RowKey>, end: Option<RowKey>) -> ReadRows {
    ReadRows::Some {
        keys: BTreeSet::new(),
        ranges: vec![KeyRange { start, end }],
    }
}

fn two_part(owner: &str, seq: Option<i64>) -> RowKey {
    let mut parts = vec![KeyPart::String(owner.into())];
    parts.extend(seq.map(KeyPart::Int64));
    RowKey(parts)
}

#[test]
fn a_lookup_by_key_reads_those_keys_and_a_scan_the_whole_table() {
    let bench = Bench::open(MAX_KEYS_PER_STATEMENT, &[]);
    let read = |sql: &str| bench.read(sql).table("accounts").cloned();
    assert_eq!(
        read("SELECT Balance FROM Accounts WHERE AccountId = 1"),
        Some(keys(&[1]))
    );
    assert_eq!(
        read("SELECT Balance FROM Accounts WHERE AccountId IN (1, 2)"),
        Some(keys(&[1, 2]))
    );
    assert_eq!(
        read("SELECT Balance FROM Accounts WHERE AccountId = 999999"),
        Some(keys(&[999999])),
        "a key looked up and not found is read all the same"
    );
    assert_eq!(
        read("SELECT Balance FROM Accounts WHERE Balance > 5"),
        Some(ReadRows::Whole)
    );
    assert_eq!(
        read("SELECT Balance FROM Accounts WHERE AccountId = 1 OR AccountId = 5"),
        Some(keys(&[1, 5]))
    );
    assert_eq!(
        read(
            "SELECT Balance FROM Accounts WHERE AccountId IN \
             (SELECT AlbumId FROM Albums WHERE SingerId = 1)"
        ),
        Some(ReadRows::Whole),
        "keys a subquery computes are not followed"
    );
    assert_eq!(
        read("SELECT count(*) FROM Accounts"),
        Some(ReadRows::Whole),
        "counting the rows reads them all"
    );
    assert_eq!(
        read("SELECT max(AccountId) FROM Accounts"),
        Some(ReadRows::Whole)
    );
    assert_eq!(
        read("SELECT (SELECT Balance FROM Accounts WHERE AccountId = 5) AS b"),
        Some(keys(&[5]))
    );
    let by_param = bench.read_with(
        "SELECT Balance FROM Accounts WHERE AccountId = @id",
        &[("id", SqlValue::Integer(7))],
    );
    assert_eq!(by_param.table("Accounts"), Some(&keys(&[7])));
    assert_eq!(
        by_param.lock_keys(),
        vec![LockKey::row("accounts", RowKey::ints(&[7]))]
    );
    assert_eq!(
        read("SELECT Balance FROM Accounts WHERE AccountId = '7'"),
        Some(ReadRows::Whole),
        "a value of another type than the key's is not taken for a key"
    );
}

#[test]
fn a_range_of_keys_reads_the_range_and_no_more() {
    let bench = Bench::open(MAX_KEYS_PER_STATEMENT, &[]);
    let int = |i: i64| Some(RowKey::ints(&[i]));
    let read = |sql: &str| bench.read(sql).table("accounts").cloned();
    assert_eq!(
        read("SELECT Balance FROM Accounts WHERE AccountId BETWEEN 10 AND 20"),
        Some(range(int(10), int(21)))
    );
    assert_eq!(
        read("SELECT Balance FROM Accounts WHERE AccountId < 4"),
        Some(range(None, int(4)))
    );
    assert_eq!(
        read("SELECT Balance FROM Accounts WHERE AccountId >= 990"),
        Some(range(int(990), None))
    );
    assert_eq!(
        read("SELECT Balance FROM Accounts WHERE AccountId > 5 ORDER BY AccountId DESC"),
        Some(ReadRows::Whole),
        "a scan down from the end is read whole"
    );
}

#[test]
fn dml_reads_the_rows_its_where_clause_looks_up() {
    let bench = Bench::open(MAX_KEYS_PER_STATEMENT, &[]);
    let int = |i: i64| Some(RowKey::ints(&[i]));
    let update = "UPDATE Accounts SET Balance = Balance + 1 WHERE AccountId = 2";
    assert_eq!(bench.read(update).table("accounts"), Some(&keys(&[2])));
    let capture = WriteCapture::install(&bench.conn, &bench.sandbox, &bench.db.schema(), 10)
        .expect("installs");
    bench.sandbox.reset();
    capture.start();
    bench.conn.execute(update, []).expect("updates");
    let written = capture.take(&bench.sandbox.touched().updated);
    assert_eq!(
        written.table("accounts"),
        Some(&WrittenRows::Keys(
            [(
                RowKey::ints(&[2]),
                Cells::Columns(["balance".to_owned()].into())
            )]
            .into()
        ))
    );
    assert_eq!(
        bench
            .read("DELETE FROM Accounts WHERE AccountId = 7")
            .table("accounts"),
        Some(&keys(&[7]))
    );
    assert_eq!(
        bench
            .read("DELETE FROM Accounts WHERE AccountId BETWEEN 10 AND 14")
            .table("accounts"),
        Some(&range(int(10), int(15)))
    );
    assert_eq!(
        bench
            .read("UPDATE Accounts SET Balance = 0 WHERE AccountId = 3 THEN RETURN Balance")
            .table("accounts"),
        Some(&keys(&[3]))
    );
    assert_eq!(
        bench.read("INSERT INTO Accounts (AccountId, Balance) VALUES (5000, 1)"),
        RowsRead::default(),
        "an insert's check that its key is free is its write, not a read"
    );
    assert_eq!(
        bench
            .read(
                "INSERT INTO Accounts (AccountId, Balance) \
                 SELECT AccountId + 10000, Balance FROM Accounts WHERE AccountId <= 3"
            )
            .table("accounts"),
        Some(&range(None, int(4))),
        "INSERT … SELECT reads what its SELECT scans"
    );
}

#[test]
fn a_join_by_key_reads_the_keys_sqlite_can_name_and_whole_tables_otherwise() {
    let bench = Bench::open(MAX_KEYS_PER_STATEMENT, &[]);
    let joined = bench.read(
        "SELECT s.FirstName, a.AlbumTitle FROM Singers s JOIN Albums a \
         ON a.SingerId = s.SingerId WHERE s.SingerId = 1",
    );
    assert_eq!(joined.table("singers"), Some(&keys(&[1])));
    assert_eq!(
        joined.table("albums"),
        Some(&range(Some(RowKey::ints(&[1])), Some(RowKey::ints(&[2])))),
        "the albums of singer 1: a prefix of Albums' key"
    );
    let by_title = bench.read(
        "SELECT s.FirstName FROM Albums a JOIN Singers s ON s.SingerId = a.SingerId \
         WHERE a.AlbumTitle = 'x'",
    );
    assert_eq!(by_title.table("albums"), Some(&ReadRows::Whole));
    assert_eq!(
        by_title.table("singers"),
        Some(&ReadRows::Whole),
        "keys taken from another table's rows are not followed: wider, never narrower"
    );
}

#[test]
fn a_created_table_with_a_string_in_a_two_part_key_is_read_by_key_and_prefix() {
    let bench = Bench::open(
        MAX_KEYS_PER_STATEMENT,
        &[
            "CREATE TABLE Notes (Owner STRING(MAX), Seq INT64, Body STRING(MAX)) \
           PRIMARY KEY (Owner, Seq)",
        ],
    );
    let read = |sql: &str| bench.read(sql).table("notes").cloned();
    assert_eq!(
        read("SELECT Body FROM Notes WHERE Owner = 'ann' AND Seq = 1"),
        Some(ReadRows::Some {
            keys: [two_part("ann", Some(1))].into(),
            ranges: Vec::new()
        })
    );
    assert_eq!(
        read("SELECT Body FROM Notes WHERE Owner = 'ann'"),
        Some(range(
            Some(two_part("ann", None)),
            Some(two_part("ann\0", None))
        ))
    );
    assert_eq!(
        read("SELECT Body FROM Notes WHERE Owner IN ('a', 'b') AND Seq = 2"),
        Some(ReadRows::Some {
            keys: [two_part("a", Some(2)), two_part("b", Some(2))].into(),
            ranges: Vec::new()
        })
    );
    assert_eq!(
        read("SELECT Body FROM Notes WHERE Body = 'x'"),
        Some(ReadRows::Whole)
    );
    assert_eq!(
        read("UPDATE Notes SET Body = 'y' WHERE Owner = 'ann' AND Seq = 1"),
        Some(ReadRows::Some {
            keys: [two_part("ann", Some(1))].into(),
            ranges: Vec::new()
        })
    );
    assert_eq!(
        read("INSERT INTO Notes (Owner, Seq, Body) VALUES ('zed', 1, 'z')"),
        None,
        "an insert's check of its key index is its write"
    );
}

#[test]
fn past_the_bound_a_table_is_read_whole() {
    let bench = Bench::open(3, &[]);
    let read = |sql: &str| bench.read(sql).table("accounts").cloned();
    assert_eq!(
        read("SELECT Balance FROM Accounts WHERE AccountId IN (1, 2, 3)"),
        Some(keys(&[1, 2, 3]))
    );
    assert_eq!(
        read("SELECT Balance FROM Accounts WHERE AccountId IN (1, 2, 3, 4)"),
        Some(ReadRows::Whole)
    );
    assert_eq!(
        bench
            .read("SELECT Balance FROM Accounts WHERE AccountId IN (1, 2, 3, 4)")
            .lock_keys(),
        vec![LockKey::table("accounts")]
    );
}

#[test]
fn a_kept_program_reads_the_keys_of_each_run_s_parameters() {
    let bench = Bench::open(MAX_KEYS_PER_STATEMENT, &[]);
    let mut capture =
        ReadCapture::new(&bench.conn, &bench.sandbox, &bench.db.schema()).expect("roots");
    let sql = "SELECT Balance FROM Accounts WHERE AccountId = @id";
    for id in [3, 9, 3] {
        let param = Param {
            value: SqlValue::Integer(id),
            ty: Type::Int64,
            nan: false,
        };
        let params = [("id".to_owned(), param)].into();
        let read = capture
            .rows_read(&bench.conn, sql, &params, MAX_KEYS_PER_STATEMENT)
            .expect("reads");
        assert_eq!(read.table("accounts"), Some(&keys(&[id])));
    }
}
